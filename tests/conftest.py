import datetime
import hashlib
import math
import os
import sys

import pytest

# tests import their shared helpers as `from helpers import ...`
sys.path.insert(0, os.path.dirname(__file__))

# Hermetic runs: no persistent executable cache (it is on by default, in ~/.cache/hloforge), here and
# in every subprocess a test starts (they inherit the environment), so timings and compile counts do
# not depend on an earlier run and nothing is written to the user's cache. Cache tests opt in with a
# temporary hf.config.cache_dir (or HLOFORGE_CACHE_DIR for their subprocesses).
os.environ["HLOFORGE_CACHE_DIR"] = ""
if "hloforge" in sys.modules:  # (imported before this file: a plugin)
    sys.modules["hloforge"].config.cache_dir = None

# Files whose module- or session-scoped fixtures compile large programs or start child processes:
# under pytest-xdist (the README's `-n auto`) each runs whole on one worker, so the fixture is built
# once instead of once per worker that draws one of its tests; every other test goes to whichever
# worker is free. (A scheduler rather than xdist's `xdist_group` marks: with pytest 9.2,
# `--dist loadgroup` no longer sees the marks and spread these files over both workers.)
WHOLE_FILES = ("test_random_distributions.py", "test_random.py", "test_numpy_fft.py", "test_eager.py",
               "test_pad_corpus.py", "test_ported_grads.py", "test_checkpoint.py",
               "test_collective.py", "test_sharding.py", "test_vmap_collective.py",
               "test_reliability_calls.py", "test_fuzz_artifacts.py", "test_nn_initializers.py")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WholeFilesScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            path = nodeid.split("::", 1)[0]
            return path if os.path.basename(path) in WHOLE_FILES else nodeid

    return WholeFilesScheduling(config, log)


# The quick first check (README): `pytest tests -n auto -m "not slow"` runs these files (paths under tests/),
# a sample of every layer, in under 2 minutes on 2 cores; every other test is marked `slow` here, so a new
# test file joins the full suite (CI's command) and leaves the quick check's time alone. A slow test inside
# one of these files carries `@pytest.mark.slow` itself.
QUICK_FILES = ("test_docs.py", "test_tracing.py", "test_top_level_api.py", "test_target.py", "test_interop.py",
               "test_jit_arguments.py", "test_callbacks.py", "test_packaging.py",
               "ops/test_common.py", "ops/test_compare.py", "ops/test_control_flow.py", "ops/test_convert.py",
               "ops/test_convolution.py", "ops/test_elementwise.py", "ops/test_factorization.py", "ops/test_fft.py",
               "ops/test_linalg.py", "ops/test_pad.py", "ops/test_shape.py", "ops/test_slicing.py",
               "ops/test_sort.py", "ops/test_tuples.py", "numpy/test_indexing.py", "nn/test_nn.py",
               "passes/test_ir.py", "passes/test_explain.py", "runtime/test_runtime.py", "runtime/test_dispatch.py",
               "ad/test_closure_convert.py", "batching/test_vmap_api.py")


_HERE = os.path.dirname(os.path.abspath(__file__))
_QUICK = {os.path.join(_HERE, path) for path in QUICK_FILES}


def pytest_ignore_collect(collection_path, config):
    """With `-m "not slow"` exactly, the files outside QUICK_FILES (all slow) are not even imported: their
    collection alone would take a good part of the quick check's time in each worker."""
    if (config.getoption("markexpr", "") or "").strip() == "not slow" and collection_path.suffix == ".py" \
            and collection_path.name.startswith("test_") and str(collection_path) not in _QUICK:
        return True
    return None


# Parametrized grids are sampled, as jax's own suite samples its test-case products (JAX_NUM_GENERATED_CASES):
# a grid of more than GRID_MIN cases runs a third of them (at least GRID_MIN), drawn by a hash of the seed and
# the case's id. The seed is the day (UTC) unless HLOFORGE_TEST_SEED is set, so the cases left out today run on
# other days, and a failing run is repeated by its seed (printed at the end of every run). Every case runs with
# HLOFORGE_TEST_CASES=all, when tests are named by id or picked with -k, under --lf and --ff, and in grids marked
# `every_case`.
GRID_MIN = 3
GRID_SHARE = 3
_GRID_SAMPLE = pytest.StashKey[int]()  # (how many cases the sample left out, for the summary line)


def pytest_configure(config):
    cases = os.environ.get("HLOFORGE_TEST_CASES", "sample").strip().lower()
    if cases not in ("sample", "all"):
        raise pytest.UsageError(f"HLOFORGE_TEST_CASES must be 'sample' or 'all', got "
                                f"{os.environ['HLOFORGE_TEST_CASES']!r} (tests/conftest.py)")
    # (set here, before pytest-xdist starts its workers: they inherit it and draw the same cases)
    os.environ.setdefault("HLOFORGE_TEST_SEED", datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d"))


def _samples_grids(config) -> bool:
    if os.environ.get("HLOFORGE_TEST_CASES", "sample").strip().lower() == "all" or config.getoption("keyword", ""):
        return False
    if config.getoption("lf", False) or config.getoption("failedfirst", False):  # (earlier draws' failures too)
        return False
    return not any("::" in str(arg) for arg in config.args)


def _sample_grids(config, items):
    """Deselects all but a seeded share of each parametrized test function's cases (see GRID_SHARE)."""
    seed = os.environ["HLOFORGE_TEST_SEED"]
    grids = {}
    for item in items:
        if hasattr(item, "callspec") and not item.get_closest_marker("every_case"):
            grids.setdefault(item.nodeid.split("[", 1)[0], []).append(item)
    left_out = set()
    for cases in grids.values():
        keep = max(GRID_MIN, math.ceil(len(cases) / GRID_SHARE))
        if len(cases) > keep:
            cases = sorted(cases, key=lambda item: hashlib.blake2b(f"{seed}:{item.nodeid}".encode()).digest())
            left_out.update(id(item) for item in cases[keep:])
    if left_out:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in left_out])
        items[:] = [item for item in items if id(item) not in left_out]
    config.stash[_GRID_SAMPLE] = len(left_out)


def pytest_terminal_summary(terminalreporter, config):
    if _samples_grids(config):  # (under pytest-xdist the workers collect, and the count stays with them)
        left_out = config.stash.get(_GRID_SAMPLE, None)
        terminalreporter.write_line(
            f"hloforge: parametrized grids sampled with HLOFORGE_TEST_SEED={os.environ['HLOFORGE_TEST_SEED']}"
            + (f" ({left_out} cases left out)" if left_out else "")
            + "; HLOFORGE_TEST_CASES=all runs every case (tests/conftest.py)")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marks
def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.path) not in _QUICK:
            item.add_marker(pytest.mark.slow)
    if _samples_grids(config):
        _sample_grids(config, items)
    _skip_what_a_tpu_cannot_run(items)
    # under xdist (the README's -n auto), the whole files first, in WHOLE_FILES's order (the longest
    # first), so that neither worker draws a long one last and leaves the other idle; in one process
    # (benchmarks/device_check.py) the order given
    if not getattr(config.option, "numprocesses", None):
        return
    rank = {name: i for i, name in enumerate(WHOLE_FILES)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))


@pytest.fixture
def python_calls(monkeypatch):
    """Counts the calls that reach Executable.call_flat: the Python path, not jax's C++ loop (the
    dispatch tests of tests/runtime/test_dispatch.py and tests/test_dtype_modes.py)."""
    from hloforge.runtime.executable import Executable
    calls = []
    original = Executable.call_flat

    def counting(self, args):
        calls.append(len(args))
        return original(self, args)

    monkeypatch.setattr(Executable, "call_flat", counting)
    return calls


@pytest.fixture
def fresh(monkeypatch):
    """An empty executable cache in memory, no cache directory and zeroed counters; hf.config's cache
    size, byte bound and directory come back after (the cache tests of tests/runtime/)."""
    import hloforge as hf
    from hloforge.runtime import cache
    monkeypatch.setattr(hf.config, "cache_size", hf.config.cache_size)
    monkeypatch.setattr(hf.config, "cache_dir", None)
    monkeypatch.setattr(hf.config, "cache_max_bytes", hf.config.cache_max_bytes)
    cache.clear()
    cache.reset_stats()
    yield
    cache.clear()


def _skip_what_a_tpu_cannot_run(items):
    """On a TPU (benchmarks/device_check.py): complex128 cases (XLA:TPU aborts the process on them, and
    hloforge refuses them there; docs/limits.md, "On a TPU"), and tests whose child processes would need
    the chip this process holds. CI runs on the CPU: nothing is skipped."""
    if not _on_tpu():
        return
    skip = pytest.mark.skip(reason="complex128 on a TPU: XLA:TPU has no complex128 (docs/limits.md)")
    children = pytest.mark.skip(reason="starts child processes that need the TPU this process holds "
                                       "(device_check runs the examples itself)")
    for item in items:
        if "complex128" in item.nodeid or item.get_closest_marker("complex128"):
            item.add_marker(skip)
        elif item.get_closest_marker("child_processes"):
            item.add_marker(children)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a TPU, a test that reaches one of hloforge's device refusals (hf.UnsupportedOnDevice: complex128,
    host callbacks, LAPACK factorizations; docs/limits.md) is reported as skipped with the refusal's line:
    the refusal is what a user gets there, and the test's subject is not run."""
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or not _on_tpu() or report.when != "call":
        return
    from hloforge.target import UnsupportedOnDevice
    if call.excinfo.errisinstance(UnsupportedOnDevice):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0,
                           f"Skipped: refused on a TPU: {str(call.excinfo.value).splitlines()[0][:300]}")


def _on_tpu() -> bool:
    return os.environ.get("HLOFORGE_DEVICE", "").strip().lower() == "tpu"
