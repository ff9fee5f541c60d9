"""The suite's sampling of parametrized grids (tests/conftest.py, run here on a small file of grids): a third
of each grid of more than three cases, the same draw for the same seed, another for another seed, whole grids
when asked, when marked `every_case`, and for tests named by id or picked with -k or --lf; a
value of HLOFORGE_TEST_CASES other than 'sample' or 'all' is one usage error."""
import os
import shutil
import subprocess
import sys

GRIDS = '''
import pytest

@pytest.mark.parametrize("i", range(12))
def test_twelve(i): pass

@pytest.mark.parametrize("a", range(4))
@pytest.mark.parametrize("b", "xy")
def test_eight(a, b): pass

@pytest.mark.parametrize("i", range(3))
def test_three(i): pass

@pytest.mark.every_case
@pytest.mark.parametrize("i", range(9))
def test_nine_whole(i): pass

def test_plain(): pass
'''


def collection(tmp_path, *args, **env) -> subprocess.CompletedProcess:
    quiet = ["-p", "no:jaxtyping", "-p", "no:hypothesispytest", "-p", "no:xdist"]
    return subprocess.run([sys.executable, "-m", "pytest", *(args or ["test_grids.py"]), "--co", "-q", *quiet,
                           "-o", "markers=every_case"], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "HLOFORGE_TEST_CASES": "sample", **env})


def collected(tmp_path, *args, **env) -> list:
    out = collection(tmp_path, *args, **env)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line]


def test_grids_are_sampled_by_seed_and_run_whole_on_request(tmp_path):
    shutil.copy(os.path.join(os.path.dirname(__file__), "conftest.py"), tmp_path)
    (tmp_path / "test_grids.py").write_text(GRIDS)
    every = collected(tmp_path, HLOFORGE_TEST_CASES="all")
    assert len(every) == 12 + 8 + 3 + 9 + 1
    first, again, other = (collected(tmp_path, HLOFORGE_TEST_SEED=seed) for seed in ("1", "1", "2"))
    count = {name: sum(f"::{name}" in test for test in first) for name in
             ("test_twelve[", "test_eight[", "test_three[", "test_nine_whole[", "test_plain")}
    assert count == {"test_twelve[": 4, "test_eight[": 3, "test_three[": 3, "test_nine_whole[": 9, "test_plain": 1}
    assert first == again and set(first) != set(other) and len(other) == len(first)
    assert len(collected(tmp_path, "test_grids.py", "-k", "twelve", HLOFORGE_TEST_SEED="1")) == 12
    assert len(collected(tmp_path, "test_grids.py::test_twelve", HLOFORGE_TEST_SEED="1")) == 12
    assert len(collected(tmp_path, "test_grids.py", "--lf", HLOFORGE_TEST_SEED="1")) == len(every)
    refused = collection(tmp_path, HLOFORGE_TEST_CASES="every")
    assert refused.returncode == 4 and "HLOFORGE_TEST_CASES must be 'sample' or 'all', got 'every'" in refused.stderr
