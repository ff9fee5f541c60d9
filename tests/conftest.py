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
