import os
import sys

# tests import their shared helpers as `from helpers import ...`
sys.path.insert(0, os.path.dirname(__file__))

# Hermetic runs: no persistent executable cache (it is on by default, in ~/.cache/hloforge), here and
# in every subprocess a test starts (they inherit the environment), so timings and compile counts do
# not depend on an earlier run and nothing is written to the user's cache. Cache tests opt in with a
# temporary hf.config.cache_dir (or HLOFORGE_CACHE_DIR for their subprocesses).
os.environ["HLOFORGE_CACHE_DIR"] = ""
if "hloforge" in sys.modules:  # (imported before this file: a plugin)
    sys.modules["hloforge"].config.cache_dir = None

# Files whose module- or session-scoped fixtures compile large programs: under pytest-xdist (the
# README's `-n auto`, with `--dist loadgroup` from pyproject.toml) each runs whole on one worker, so
# the fixture is built once instead of once per worker that draws one of its tests.
WHOLE_FILES = ("test_random_distributions.py", "test_random.py", "test_fft.py", "test_eager.py",
               "test_pad_corpus.py", "test_ported_grads.py", "test_checkpoint.py")


def pytest_collection_modifyitems(config, items):
    import pytest
    for item in items:
        name = os.path.basename(str(item.fspath))
        if name in WHOLE_FILES:
            item.add_marker(pytest.mark.xdist_group(name))
