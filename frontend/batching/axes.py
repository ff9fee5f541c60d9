"""Named batch axes: ``hf.vmap(..., axis_name=n)`` binds ``n`` while its function is traced and
its tape swept, for hloforge.lax's named-axis collectives (``frontend/lax/parallel.py``).

The frames live in the trace's ``Builder.transform_state["vmap"]`` (innermost last). A frame holds
the axis size and the per-example placeholder of the axis index (a hidden batched input:
``iota`` over the batch), and the sweep marks the frame it is batching, so a collective's batch
rule knows whether the batch dimension in front of it is its own axis or an outer one.
"""
from __future__ import annotations

import contextlib

from hloforge.frontend.tracing import current_builder


class AxisFrame:
    __slots__ = ("name", "size", "index", "sweeping")

    def __init__(self, name, size: int, index):
        self.name, self.size, self.index, self.sweeping = name, size, index, False


def _frames(what) -> list:
    return current_builder(what).transform_state.setdefault("vmap", [])


@contextlib.contextmanager
def bound(name, size: int, index):
    """Bind ``name`` to a batch axis of ``size`` examples while the body runs."""
    frames = _frames("hf.vmap")
    frame = AxisFrame(name, size, index)
    frames.append(frame)
    try:
        yield frame
    finally:
        frames.remove(frame)


def frame_of(name, what) -> AxisFrame:
    """The innermost frame binding ``name``; NameError (jax's message) when none does."""
    frames = _frames(what)
    for frame in reversed(frames):
        if frame.name is not None and frame.name == name:
            return frame
    names = [f.name for f in frames if f.name is not None]
    raise NameError(f"unbound axis name: {name}. The following axis names (e.g. defined by pmap) are available "
                    f"to collective operations: {names}")


def is_bound(name, what) -> bool:
    return any(f.name == name for f in _frames(what))


def sweeping(name, what) -> bool:
    """Whether the sweep running now batches the axis ``name`` (else an inner, other axis)."""
    frames = [f for f in _frames(what) if f.sweeping]
    return bool(frames) and frames[-1].name == name
