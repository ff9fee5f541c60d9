"""Modules' public names in messages: ``hloforge.frontend.nn`` is ``hloforge.nn`` to a user."""
from __future__ import annotations


def public_name(module_name: str) -> str:
    """The name users import: ``hloforge.frontend.X`` is ``hloforge.X`` (hloforge/__init__.py)."""
    return module_name.replace("hloforge.frontend.", "hloforge.", 1)


def name_missing_attributes(namespace: dict) -> None:
    """Give the module whose globals are ``namespace`` a ``__getattr__`` whose AttributeError names
    its public module (``module 'hloforge.nn' has no attribute 'foo'``); one it has stays."""
    public = public_name(namespace["__name__"])

    def __getattr__(name):
        raise AttributeError(f"module {public!r} has no attribute {name!r}")
    namespace.setdefault("__getattr__", __getattr__)
