"""The package's import graph: no cycles, at module level or inside functions, and no import from a
lower layer into a higher one (``LAYERS``); a plain `import hloforge` loads only the settings, and
every public name still resolves."""
from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIRS = ("frontend", "passes", "runtime")
TOP_MODULES = ("target.py",)
# The layers, lowest first: a module imports only modules of its own layer or of lower ones. A name
# is a module or a package (all of its modules; "hloforge" is only the package file, the public
# names); a module belongs to the layer of its longest name.
LAYERS = (
    ("leaves", ("hloforge.target", "hloforge.frontend.jax_api", "hloforge.frontend.dtypes", "hloforge.frontend.naming",
                "hloforge.frontend.callback_registry")),
    ("core", ("hloforge.frontend", "hloforge.frontend.context", "hloforge.frontend.location",
              "hloforge.frontend.attributes", "hloforge.frontend.calls", "hloforge.frontend.parsing",
              "hloforge.frontend.inspection", "hloforge.frontend.shape_assertions", "hloforge.frontend.tracing",
              "hloforge.frontend.registry", "hloforge.frontend.module", "hloforge.frontend.eager")),
    ("ops", ("hloforge.frontend.ops",)),
    ("passes", ("hloforge.passes",)),
    ("runtime", ("hloforge.runtime",)),
    ("jit", ("hloforge.frontend.jit", "hloforge.frontend.first_call", "hloforge.frontend.trace_function")),
    # (lax, ad and batching still import each other: lax's control flow and collectives carry their
    # AD and batching rules, and those rules build lax's loops)
    ("transformations", ("hloforge.frontend.ad", "hloforge.frontend.batching", "hloforge.frontend.lax",
                         "hloforge.frontend.callbacks")),
    ("numpy", ("hloforge.frontend.numpy",)),  # (written with lax and ops; lax uses jax's scalar dtypes)
    ("libraries", ("hloforge.frontend.nn", "hloforge.frontend.random", "hloforge.frontend.debug",
                   "hloforge.frontend.api_extras", "hloforge.frontend.from_jax", "hloforge.frontend.to_jax")),
    ("public", ("hloforge",)),
    ("cli", ("hloforge.runtime.cli",)),  # (the command, written against the public names)
)


def _modules() -> dict:
    """hloforge module name -> file path, for every module of the package."""
    out = {"hloforge": os.path.join(ROOT, "__init__.py")}
    out.update({"hloforge." + f[:-3]: os.path.join(ROOT, f) for f in TOP_MODULES})
    for top in PACKAGE_DIRS:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".")
                name = "hloforge." + (rel[:-len(".__init__")] if rel.endswith("__init__") else rel)
                out[name] = os.path.join(folder, f)
    return out


def _imports(path: str, modules: dict) -> set:
    """The hloforge modules ``path`` imports anywhere (functions included), ``importlib.import_module``
    of a constant name too (the lazy package files' loads)."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
                and node.args and isinstance(node.args[0], ast.Constant)):
            names = [node.args[0].value]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                     for a in node.names]
        else:
            continue
        found |= {n for n in names if n in modules}
    return found


def _packages_of(name: str, modules: dict) -> set:
    """The package modules (``__init__`` files) Python runs before ``name``: its parents."""
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(2, len(parts))} & set(modules)


def _graph() -> dict:
    """Module -> the modules it imports, counting the package ``__init__`` files each import runs
    (``from hloforge.frontend.batching.api import vmap`` runs ``frontend/batching/__init__.py``,
    which imports the whole package); a module's own packages are not edges (Python runs them
    first, whatever the module imports)."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        direct = _imports(path, modules)
        implied = {p for m in direct for p in _packages_of(m, modules)}
        graph[name] = (direct | implied) - {name} - _packages_of(name, modules)
    return graph


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def _layer_of(name: str) -> int | None:
    best, rank = -1, None
    for i, (_, names) in enumerate(LAYERS):
        for n in names:
            if (name == n or (name.startswith(n + ".") and n != "hloforge")) and len(n) > best:
                best, rank = len(n), i
    return rank


def _upward(graph: dict) -> list:
    """(module, its layer, the imported module, its layer) for each import into a higher layer."""
    out = []
    for name, imported in graph.items():
        for m in imported:
            if None not in (_layer_of(m), _layer_of(name)) and _layer_of(m) > _layer_of(name):
                out.append((name, LAYERS[_layer_of(name)][0], m, LAYERS[_layer_of(m)][0]))
    return sorted(out)


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in _modules() if _layer_of(m) is None)
    assert not unplaced, f"add these modules to tests/test_imports.py's LAYERS: {unplaced}"


def test_no_import_reaches_up_a_layer():
    assert _upward(_graph()) == []


def test_the_layer_check_finds_upward_imports():
    graph = {"hloforge.passes.pipeline": {"hloforge.runtime.settings", "hloforge.target"},
             "hloforge.target": set(), "hloforge.runtime.settings": {"hloforge.target"}}
    assert _upward(graph) == [("hloforge.passes.pipeline", "passes", "hloforge.runtime.settings", "runtime")]
    assert _layer_of("hloforge.runtime.cli.main") > _layer_of("hloforge.runtime.compiler") > _layer_of("hloforge.passes")


def test_imports_count_the_package_files_they_run():
    graph = _graph()
    assert "hloforge.frontend.ad" in graph["hloforge.frontend.batching.core"]  # (via ad.core)
    assert "hloforge.frontend.batching" not in graph["hloforge.frontend.batching.core"]  # (its own package)
    assert "hloforge.runtime.compiler" in graph["hloforge.runtime"]  # (its lazy import_module)
    assert "hloforge.target" in graph["hloforge.runtime.settings"]  # (from hloforge import target)


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# ---------------------------------------------------------------- laziness (issue 29)

_PLAIN_IMPORT = """
    import json, sys
    import hloforge
    print(json.dumps(sorted(m for m in sys.modules if m.startswith("hloforge"))))
"""

# what a plain `import hloforge` must not load: they come with the first use of a name that needs them
_LAZY = ("hloforge.passes", "hloforge.runtime.cli", "hloforge.runtime.compiler", "hloforge.frontend.ad",
         "hloforge.frontend.lax.linalg", "hloforge.frontend.numpy", "hloforge.frontend.nn", "hloforge.frontend.random",
         "hloforge.frontend.ops")


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_a_plain_import_loads_only_the_settings():
    loaded = json.loads(_python(_PLAIN_IMPORT))
    assert "hloforge.runtime.settings" in loaded
    eager = [m for m in loaded if m.startswith(_LAZY)]
    assert eager == [], f"import hloforge loaded {eager}"


_EVERY_NAME = """
    import json, sys
    import hloforge as hf
    import hloforge.numpy, hloforge.numpy.fft, hloforge.numpy.linalg, hloforge.ops, hloforge.nn, hloforge.lax
    import hloforge.lax.linalg, hloforge.random
    from hloforge.frontend.jit import jit
    from hloforge.frontend import ad, lax, nn, numpy, ops, random
    from hloforge.runtime import pjrt
    assert hf.jit is jit and hf.grad is ad.grad and hf.P is pjrt.PartitionSpec and hf.config is hf.runtime.config
    for public, real in (("numpy", numpy), ("numpy.fft", numpy.fft), ("numpy.linalg", numpy.linalg), ("ops", ops),
                         ("nn", nn), ("lax", lax), ("lax.linalg", lax.linalg), ("random", random)):
        assert sys.modules["hloforge." + public] is real, public  # (one copy of each module)
        assert real.__spec__.name == real.__name__, public
    assert hloforge.numpy is hf.numpy and hloforge.lax.linalg is lax.linalg
    missing = [n for n in hf.__all__ if not hasattr(hf, n)]
    for namespace in (hf.lax, hf.numpy.fft, hf.numpy.linalg, hf.nn, hf.ops, hf.random, hf.runtime):
        missing += [f"{namespace.__name__}.{n}" for n in namespace.__all__ if not hasattr(namespace, n)]
    assert set(hf.__all__) <= set(dir(hf)) and set(hf.lax.__all__) <= set(dir(hf.lax))
    files = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.startswith("hloforge") and path:
            files.setdefault(path, set()).add(id(module))
    copies = sorted(p for p, ids in files.items() if len(ids) > 1)
    print(json.dumps({"missing": missing, "copies": copies}))
"""


def test_every_public_name_resolves_and_no_module_loads_twice():
    assert json.loads(_python(_EVERY_NAME)) == {"missing": [], "copies": []}


_FIRST_USE = """
    import json, sys
    import numpy as np
    import hloforge as hf
    m = hf.trace(lambda x: x * x + 1.0, hf.ShapeDtype((3,), np.float32))  # (Tensor operators: hloforge.numpy)
    m.optimize()
    before = "hloforge.frontend.ad" in sys.modules
    grads = m.vjp()  # (loads the AD package on the first call)
    y = np.asarray(m.compile()(np.arange(3, dtype=np.float32))).tolist()
    print(json.dumps({"ad_before": before, "ad_after": "hloforge.frontend.ad" in sys.modules,
                      "real_vjp": hf.Module.vjp.__module__, "vjp": type(grads).__name__, "y": y}))
"""


def test_the_first_use_of_a_name_brings_what_programs_need():
    result = json.loads(_python(_FIRST_USE))
    assert result == {"ad_before": False, "ad_after": True, "real_vjp": "hloforge.frontend.ad.module_ad",
                      "vjp": "Module", "y": [1.0, 2.0, 5.0]}


def test_unknown_names_raise_attribute_errors():
    import hloforge as hf
    with pytest.raises(AttributeError, match="module 'hloforge' has no attribute 'nonesuch'"):
        hf.nonesuch
    with pytest.raises(AttributeError, match="module 'hloforge.lax' has no attribute 'nonesuch'"):
        hf.lax.nonesuch
    with pytest.raises(AttributeError, match="module 'hloforge.numpy' has no attribute 'nonesuch'"):
        hf.numpy.nonesuch
    for public in ("ops", "nn", "nn.initializers", "numpy.fft", "numpy.linalg", "lax.linalg", "random"):
        module = importlib.import_module(f"hloforge.{public}")
        with pytest.raises(AttributeError, match=f"module 'hloforge.{public}' has no attribute 'nonesuch'"):
            module.nonesuch
    with pytest.raises(ModuleNotFoundError, match="No module named 'hloforge.nonesuch'"):
        import hloforge.nonesuch  # noqa: F401


_SECOND_COPY = """
    import importlib, importlib.util, sys
    import hloforge as hf
    # pytest imports the repository root's __init__.py once more as a package named after its folder
    spec = importlib.util.spec_from_file_location("copy_of_hloforge", hf.__file__,
                                                  submodule_search_locations=[])
    copy = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = copy
    spec.loader.exec_module(copy)
    print(importlib.import_module("hloforge.ops") is hf.ops, importlib.import_module("hloforge.numpy") is hf.numpy)
"""


def test_a_second_copy_of_the_package_file_keeps_the_public_submodule_imports():
    assert _python(_SECOND_COPY).split() == ["True", "True"]
