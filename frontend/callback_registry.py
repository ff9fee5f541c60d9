"""The Python functions of hloforge's host callbacks, by key (frontend/callbacks.py makes them,
runtime/callbacks.py hands them to PJRT): a module of its own, importing nothing of hloforge, so
that the runtime reads it without loading the AD and batching packages the callbacks' rules use."""
from __future__ import annotations

import itertools
import secrets
import threading

TARGET = "hloforge.python_callback"  # (runtime/callbacks.py retargets it for the device)
CALLBACK_ATTR = "hloforge.callback"  # the custom call's key in HOST_CALLBACKS
ORDER_ATTR = "hloforge.callback_order"  # an ordered call's place in program order

# key -> HostCallback: what the custom calls tagged with that key run (kept for the process's life:
# a module may be compiled any time after its trace)
HOST_CALLBACKS: dict = {}
_PROCESS = secrets.token_hex(4)  # (a module parsed from another process's output names no key of ours)
_keys = itertools.count()
_lock = threading.Lock()


class HostCallback:
    """The Python side of one callback custom call: ``run(*arrays)`` takes one numpy array per
    operand and returns a tuple with one array per result, checked against ``result_specs``."""
    __slots__ = ("run", "result_specs", "what")

    def __init__(self, run, result_specs, what):
        self.run, self.result_specs, self.what = run, tuple(result_specs), what

    def __call__(self, *arrays):
        return self.run(*arrays)


def register(host: HostCallback) -> str:
    """A new key for ``host``."""
    with _lock:
        key = f"cb_{_PROCESS}_{next(_keys)}"
        HOST_CALLBACKS[key] = host
    return key


__all__ = ["TARGET", "CALLBACK_ATTR", "ORDER_ATTR", "HOST_CALLBACKS", "HostCallback", "register"]
