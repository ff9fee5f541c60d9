"""The ``hloforge`` command line: ``hloforge demo`` and the inspection commands.

``main`` loads on first use (PEP 562), so ``python -m hloforge.runtime.cli.main`` does not find
its module imported by this package first (runpy's RuntimeWarning).
"""
import importlib as _importlib


def __getattr__(name):
    if name != "main":
        raise AttributeError(f"module 'hloforge.runtime.cli' has no attribute {name!r}")
    function = _importlib.import_module("hloforge.runtime.cli.main").main
    globals()["main"] = function  # (importing the submodule bound its name to the module)
    return function


__all__ = ["main"]
