"""pyproject.toml against the source tree: the hand-written package list names every package folder
(a folder missing there is missing from the wheel of ``pip install .``: ``hf.vmap`` broke so), every
folder of Python files is a package, no data file is left out of the wheel, and the version
``hloforge.__version__`` reports is pyproject's. (``.ci/run`` builds the wheel and runs
``.ci/smoke.py`` against it from outside the checkout.)"""
import fnmatch
import os
import tomllib

import hloforge

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_SHIPPED = ("tests", "benchmarks", "examples", "docs", "build", "dist", "__pycache__")


def _pyproject() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _folders():
    """(dotted package name, folder, its file names) of every folder that would ship."""
    for folder, subfolders, files in os.walk(ROOT):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and not d.endswith(".egg-info")
                               and not (folder == ROOT and d in NOT_SHIPPED) and d != "__pycache__")
        relative = os.path.relpath(folder, ROOT)
        name = "hloforge" if relative == "." else "hloforge." + relative.replace(os.sep, ".")
        yield name, folder, files


def test_the_package_list_names_every_folder_holding_an_init_file():
    listed = _pyproject()["tool"]["setuptools"]["packages"]
    found = sorted(name for name, _, files in _folders() if "__init__.py" in files)
    assert sorted(listed) == found, (f"pyproject.toml [tool.setuptools] packages: missing "
                                     f"{sorted(set(found) - set(listed))}, not packages {sorted(set(listed) - set(found))}")
    assert {"hloforge.frontend.batching", "hloforge.runtime.cli"} <= set(listed)
    assert _pyproject()["tool"]["setuptools"]["package-dir"] == {"hloforge": "."}


def test_every_folder_of_python_files_is_a_package():
    # (a folder of modules without __init__.py imports from a checkout, as a namespace package, but
    # setuptools leaves it out of the wheel)
    loose = [folder for name, folder, files in _folders()
             if name != "hloforge" and any(f.endswith(".py") for f in files) and "__init__.py" not in files]
    assert loose == []


def test_no_data_file_is_left_out_of_the_wheel():
    declared = _pyproject()["tool"]["setuptools"].get("package-data", {})
    left_out = []
    for name, folder, files in _folders():
        if name == "hloforge":  # (the checkout's README.md, pyproject.toml: nothing reads them at run time)
            continue
        for f in files:
            if f.endswith(".py"):
                continue
            patterns = declared.get(name, []) + declared.get("*", [])
            if not any(fnmatch.fnmatch(f, p) for p in patterns):
                left_out.append(os.path.relpath(os.path.join(folder, f), ROOT))
    assert left_out == [], "files the package may read at run time: add them to [tool.setuptools.package-data]"


def test_the_version_is_pyprojects():
    assert hloforge.__version__ == _pyproject()["project"]["version"]
