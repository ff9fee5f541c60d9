"""hloforge.ops, shape family (frontend/ops/shape.py): constant, iota and splats, reshape,
transpose, broadcast_in_dim, slice, dynamic_slice, concatenate and reverse against numpy, and
their validation messages."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import ops
from helpers import assert_close, random, run
from ops_helpers import F32


def test_constant_iota_and_splats():
    c = np.arange(12, dtype=np.int16).reshape(3, 4)

    def f():
        return (ops.constant(c), ops.constant(np.full((50, 50), 2.5, np.float32)),
                ops.iota((3, 4), np.float32, 1), ops.iota((2, 3), np.int64, 0), ops.constant(True),
                ops.constant(np.array([1 + 2j], np.complex128)), ops.constant(2.0))
    m = hf.trace(f)
    assert "dense<2.500000e+00> : tensor<50x50xf32>" in m.text  # splats stay compact
    out = [np.asarray(o) for o in m.compile()()]
    assert_close(out[0], c)
    assert_close(out[1], np.full((50, 50), 2.5, np.float32))
    assert_close(out[2], np.broadcast_to(np.arange(4, dtype=np.float32), (3, 4)))
    assert_close(out[3], np.broadcast_to(np.arange(2)[:, None], (2, 3)).astype(np.int64))
    assert_close(out[4], np.array(True))
    assert_close(out[5], np.array([1 + 2j]))
    assert_close(out[6], np.array(2.0))


def test_shape_ops():
    x = random((2, 3, 4), np.float32, seed=9)

    def f(x):
        return {"reshape": ops.reshape(x, (6, 4)), "transpose": ops.transpose(x, (2, 0, 1)),
                "bcast": ops.broadcast_in_dim(ops.slice(x, (0, 0, 0), (1, 3, 4)), (5, 2, 3, 4), (1, 2, 3)),
                "slice": ops.slice(x, (0, 1, 0), (2, 3, 4), (1, 1, 3)),
                "dslice": ops.dynamic_slice(x, (1, ops.constant(np.int32(1)).astype(np.int64), 2), (1, 2, 2)),
                "dslice_clamped": ops.dynamic_slice(x, (5, 5, 5), (1, 2, 2)),
                "concat": ops.concatenate([x, x[:, :1]], 1), "reverse": ops.reverse(x, (0, 2))}
    out = run(f, x)
    assert_close(out["reshape"], x.reshape(6, 4))
    assert_close(out["transpose"], x.transpose(2, 0, 1))
    assert_close(out["bcast"], np.broadcast_to(x[:1], (5, 2, 3, 4)))
    assert_close(out["slice"], x[0:2, 1:3, 0:4:3])
    assert_close(out["dslice"], x[1:2, 1:3, 2:4])
    assert_close(out["dslice_clamped"], x[1:2, 1:3, 2:4])  # starts clamp to size - slice size
    assert_close(out["concat"], np.concatenate([x, x[:, :1]], 1))
    assert_close(out["reverse"], x[::-1, :, ::-1])


# ---------------------------------------------------------------- validation messages

@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: ops.reshape(x, (4, 2)), ValueError, r"reshape: cannot reshape \(2, 3\) \(6 elements\) into \(4, 2\)"),
    (lambda x: ops.transpose(x, (0, 0)), ValueError, r"transpose: permutation \[0, 0\] repeat a dimension"),
    (lambda x: ops.transpose(x, (0, 2)), ValueError, r"transpose: permutation \[0, 2\] out of range for rank 2"),
    (lambda x: ops.broadcast_in_dim(x, (2, 4), (0, 1)), ValueError, "broadcast_in_dim: operand dim 1 of size 3 cannot broadcast"),
    (lambda x: ops.broadcast_in_dim(x, (2, 3), (0,)), ValueError, r"broadcast_in_dim: broadcast_dimensions \[0\] must have one entry"),
    (lambda x: ops.slice(x, (0, 0), (3, 3)), ValueError, "slice: dim 0: need 0 <= start <= limit <= size, got start 0, limit 3, size 2"),
    (lambda x: ops.slice(x, (0, 0), (2, 3), (1, 0)), ValueError, r"slice: strides \[1, 0\] must be >= 1"),
    (lambda x: ops.slice(x, (0,), (2,)), ValueError, r"slice: start_indices \[0\] must have 2 entries"),
    (lambda x: ops.dynamic_slice(x, (0, 0), (3, 1)), ValueError, r"dynamic_slice: slice_sizes \[3, 1\] exceed shape"),
    (lambda x: ops.concatenate([x, ops.convert(x, np.float64)], 0), TypeError, "concatenate: operand 1 dtype float64 differs"),
    (lambda x: ops.concatenate([x, ops.reshape(x, (3, 2))], 0), ValueError, "concatenate: operand 1 shape"),
    (lambda x: ops.concatenate([], 0), ValueError, "concatenate: needs at least one operand"),
    (lambda x: ops.reverse(x, (5,)), ValueError, r"reverse: dimensions \[5\] out of range for rank 2"),
    (lambda x: ops.iota((2, 3), np.float32, 2), ValueError, r"iota: dimension 2 out of range for shape \(2, 3\)"),
    (lambda x: ops.iota((2,), np.bool_), TypeError, "iota: dtype bool is not supported"),
    (lambda x: ops.constant(x), TypeError, "constant: value is already a traced Tensor"),
    (lambda x: ops.slice(x, (0, "a"), (2, 3)), TypeError, "slice: start_indices must be a sequence of ints"),
])
def test_validation_messages(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, F32)


def test_a_broadcast_constant_becomes_a_splat_without_being_copied_out():
    """A splat constant decodes as np.broadcast_to (re-emitted by AD, inlining, to_jax's derived modules):
    encoding it again reads one element, not a copy of the whole shape (4 MB here)."""
    import tracemalloc
    big = np.broadcast_to(np.float32(-0.0), (1024, 1024))

    def f():
        return ops.constant(big)
    tracemalloc.start()
    m = hf.trace(f)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert "dense<-0.000000e+00> : tensor<1024x1024xf32>" in m.text
    out = run(f)
    assert out.shape == (1024, 1024) and np.signbit(out).all()


def test_constant_of_python_ints_beyond_int64_and_of_masked_arrays():
    """Issue 49: ops.constant(2**63) is uint64 (as np.asarray), never a wrapped int64; beyond uint64 and
    outside an asked dtype an OverflowError; a masked array (whose mask np.asarray drops) a ValueError."""
    got = np.asarray(hf.jit(lambda: ops.constant(2**63))())
    assert got.dtype == np.uint64 and got == np.uint64(2**63)
    with pytest.raises(OverflowError, match=r"hloforge.ops.constant: Python int 18446744073709551616 too large "
                                            r"to convert to int64 or uint64"):
        hf.trace(lambda: ops.constant(2**64))
    with pytest.raises(OverflowError, match=r"hloforge.ops.constant: Python integer 300 out of bounds for int8"):
        hf.trace(lambda: ops.constant(300, np.int8))
    with pytest.raises(ValueError, match=r"hloforge.ops.constant: numpy masked arrays are not supported \(their "
                                         r"mask would be ignored\); use x.filled\(value\)"):
        hf.trace(lambda: ops.constant(np.ma.masked_array([1.0, 2.0], mask=[0, 1])))
