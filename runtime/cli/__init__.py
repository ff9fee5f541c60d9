"""The ``hloforge`` command line: ``hloforge demo`` and the inspection commands."""
from hloforge.runtime.cli.main import main

__all__ = ["main"]
