"""Helpers of the rules that batch a body (control flow regions, map bodies, composite
decompositions): per-example placeholders the sweep maps to batched values, and the clean-up of
the per-example copy a rule traced to learn the body."""
from __future__ import annotations

from hloforge.frontend import ops
from hloforge.frontend.ad.core import tape_of_block
from hloforge.frontend.batching._util import zero_example
from hloforge.frontend.batching.core import WHAT, batch_tape, erase_dead
from hloforge.frontend.tracing import current_builder


def example(x, d):
    """The first example of ``x`` along ``d``: a per-example placeholder the sweep maps to ``x``;
    zeros of that shape when the batch is empty (there is no first example to slice)."""
    if x.shape[d] == 0:
        return zero_example(x, d)
    limits = list(x.shape)
    limits[d] = 1
    return ops.reshape(ops.slice(x, [0] * x.ndim, limits), x.shape[:d] + x.shape[d + 1:])


def placeholder(x, d, env):
    """``x`` itself when unbatched (``d`` None), else its first example, recorded in ``env``."""
    if d is None:
        return x
    e = example(x, d)
    env[e.value] = (x, d)
    return e


class Tidy:
    """Erases the per-example copy a rule left in the current block: the ops emitted since the
    Tidy was made that nothing uses, except those computing the ``keep`` values."""

    def __init__(self):
        self.block = current_builder(WHAT).ip.block
        self.start = len(self.block.operations)

    def __call__(self, keep) -> None:
        keep = {t.value for t in keep}
        erase_dead([op for op in list(self.block.operations)[self.start:]
                    if not any(r in keep for r in op.operation.results)])


def batch_traced(fn, args, dims, size) -> list:
    """``fn`` (a Python body over per-example Tensors, returning a Tensor or a sequence of them)
    traced here over placeholders of the batched ``args``, then batched:
    [(Tensor, batch dimension or None)] per result. The per-example copy is left for a ``Tidy``."""
    env = {}
    inner = [placeholder(x, d, env) for x, d in zip(args, dims)]
    block = current_builder(WHAT).ip.block
    traced = len(block.operations)
    out = fn(*inner)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    batch_tape(tape_of_block(list(block.operations)[traced:]), env, size)
    return [env.get(o.value, (o, None)) for o in outs]
