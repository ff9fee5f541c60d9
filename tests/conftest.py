import os
import sys

# tests import their shared helpers as `from helpers import ...`
sys.path.insert(0, os.path.dirname(__file__))
