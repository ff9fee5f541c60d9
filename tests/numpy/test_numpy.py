"""hloforge.numpy against numpy: promotion, broadcasting, floor semantics, indexing, reductions."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.frontend import dtypes
from helpers import ALL_DTYPES, assert_close, random, run

NUMERIC = [d for d in ALL_DTYPES if d != dtypes.bfloat16]


@pytest.mark.parametrize("dtype", NUMERIC, ids=str)
def test_operators_match_numpy(dtype):
    a = random((3, 4), dtype, seed=1)
    b = random((4,), dtype, seed=2)
    if dtype.kind in "iu":
        b = np.where(b == 0, 1, b).astype(dtype)
    if dtype.kind == "b":
        b = np.ones(4, bool)
    ops = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "eq": lambda a, b: a == b,
           "ne": lambda a, b: a != b}
    if dtype.kind != "b":
        ops.update({"sub": lambda a, b: a - b, "div": lambda a, b: a / b})
    if dtype.kind in "iuf":
        ops.update({"floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
                    "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b})
    if dtype.kind in "iub":
        ops.update({"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b})
    out = run(lambda a, b: {k: f(a, b) for k, f in ops.items()}, a, b)
    with np.errstate(all="ignore"):
        for k, f in ops.items():
            assert_close(out[k], f(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_floor_divide_and_mod_signs(dtype):
    a = np.array([7, -7, 7, -7, 0, -0.0, 5.5, -5.5, 1e-30, 3], dtype)
    b = np.array([2, 2, -2, -2, 3, -3, 2, -2.5, -1, 0], dtype)
    q, r = run(lambda a, b: (a // b, a % b), a, b)
    with np.errstate(all="ignore"):
        assert_close(q, a // b)
        assert_close(r, a % b)
        np.testing.assert_array_equal(np.signbit(q[:9]), np.signbit((a // b)[:9]))
        np.testing.assert_array_equal(np.signbit(r[:9]), np.signbit((a % b)[:9]))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32], ids=str)
def test_integer_floor_divide_and_mod(dtype):
    a = random((50,), dtype, seed=3, low=-100, high=100)
    b = random((50,), dtype, seed=4, low=-9, high=9)
    b = np.where(b == 0, 3, b).astype(dtype)
    q, r = run(lambda a, b: (hnp.floor_divide(a, b), hnp.remainder(a, b)), a, b)
    assert_close(q, a // b)
    assert_close(r, a % b)


@pytest.mark.parametrize("dtype,scalar", [
    (np.float32, 2.0), (np.float32, 3), (np.float32, 1j), (np.int8, 3), (np.int8, 2.5), (np.uint8, True),
    (np.bool_, 1), (np.float16, 2.0), (np.int32, 1j), (np.complex64, 2.0), (dtypes.bfloat16, 2.0),
    (dtypes.bfloat16, 3)])
def test_weak_python_scalars_follow_nep50(dtype, scalar):
    x = np.ones((3,), dtype)
    out = run(lambda x: (x * scalar, scalar + x), x)
    expected = dtypes.result_type(np.dtype(dtype), scalar)
    assert out[0].dtype == expected == out[1].dtype
    if dtype != dtypes.bfloat16:
        assert expected == (x * scalar).dtype  # numpy 2 agrees


def test_bool_add_and_multiply_are_logical_or_and():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    out = run(lambda a, b: (a + b, a * b, hf.numpy.add(a, True)), a, b)
    assert_close(out[0], a + b)
    assert_close(out[1], a * b)
    assert_close(out[2], a + True)
    counts = hf.trace(lambda a, b: a + b, a, b).op_counts()
    assert counts.get("stablehlo.or") == 1 and "stablehlo.add" not in counts


def test_scalar_overflow_is_an_error():
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for int8"):
        hf.trace(lambda x: x + 300, np.ones(2, np.int8))


@pytest.mark.parametrize("a,b", [(np.float32, np.float64), (np.int8, np.uint8), (np.int32, np.float32),
                                 (np.bool_, np.int16), (np.float32, np.complex128), (np.int64, np.uint64)])
def test_array_promotion_matches_numpy(a, b):
    x, y = np.ones(2, a), np.ones(2, b)
    assert run(lambda x, y: x + y, x, y).dtype == (x + y).dtype


def test_reflected_operators_with_numpy_arrays():
    x = random((3,), np.float32)
    c = np.array([1.0, 2.0, 3.0], np.float32)
    out = run(lambda x: (c * x, c - x, 2 ** x, 1.0 / x, -x, abs(-x), +x, ~(x > 0)), x)
    assert_close(out[0], c * x)
    assert_close(out[1], c - x)
    assert_close(out[2], 2 ** x)
    assert_close(out[3], 1.0 / x)
    assert_close(out[4], -x)
    assert_close(out[5], abs(x))
    assert_close(out[6], x)
    assert_close(out[7], ~(x > 0))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.bool_, np.float16, np.float32, np.complex64], ids=str)
def test_unary_math_dtypes_follow_numpy(dtype):
    x = np.abs(random((6,), dtype, seed=5)) + (0 if np.dtype(dtype).kind == "b" else 1)
    x = x.astype(dtype)
    fns = {"exp": hnp.exp, "sqrt": hnp.sqrt, "log1p": hnp.log1p, "sin": hnp.sin, "tanh": hnp.tanh}
    if np.dtype(dtype).kind != "c":
        fns.update({"floor": hnp.floor, "ceil": hnp.ceil, "rint": hnp.rint})
    if np.dtype(dtype).kind != "b":
        fns.update({"sign": hnp.sign, "negative": hnp.negative, "abs": hnp.abs, "square": hnp.square})
    out = run(lambda x: {k: f(x) for k, f in fns.items()}, x)
    for k in fns:
        assert_close(out[k], getattr(np, k)(x))


def test_round_decimals_and_complex_sign():
    x = np.array([1.25, -2.675, 0.5, 1.5, 2.5], np.float64)
    z = np.array([3 + 4j, 0j, -2j], np.complex128)
    r0, r2, s = run(lambda x, z: (hnp.round(x), hnp.round(x, 2), hnp.sign(z)), x, z)
    assert_close(r0, np.round(x))
    assert_close(r2, np.round(x, 2))
    assert_close(s, np.sign(z))


def test_complex_ordering_is_lexicographic():
    a = np.array([1 + 2j, 1 + 2j, 2 + 0j, 0 + 5j], np.complex64)
    b = np.array([1 + 3j, 1 + 2j, 1 + 9j, 0 + 5j], np.complex64)
    out = run(lambda a, b: (a < b, a <= b, a > b, a >= b), a, b)
    for o, ref in zip(out, (a < b, a <= b, a > b, a >= b)):
        assert_close(o, ref)


@pytest.mark.parametrize("key", [
    0, -1, slice(None), slice(1, 3), slice(None, None, 2), slice(None, None, -1), slice(3, 0, -2),
    (Ellipsis, 1), (None, 0), (1, None, slice(None, None, -1)), (slice(1, 2), Ellipsis, None),
    (slice(5, 1),), (-2, slice(-3, None)), (Ellipsis,), (0, 0, 0)])
def test_indexing_matches_numpy(key):
    x = random((4, 5, 3), np.float32, seed=6)
    assert_close(run(lambda x: x[key], x), x[key])


def test_dynamic_index_with_tensor():
    x = random((4, 5), np.float32, seed=7)
    for i in (0, 3, -1):
        assert_close(run(lambda x, i: x[i], x, np.int32(i)), x[i])
        assert_close(run(lambda x, i: x[1:3, i], x, np.int64(i)), x[1:3, i])


@pytest.mark.parametrize("key,exc,match", [
    (5, IndexError, "index 5 is out of bounds for axis 0 with size 4"),
    ((0, 0, 0, 0), IndexError, "too many indices for array"),
    ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis"),
    ([0, 9], IndexError, "index 9 is out of bounds for axis 0 with size 4"),  # (integer arrays: test_indexing.py)
    ("a", TypeError, "unsupported index 'a'"),
])
def test_indexing_errors(key, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(lambda x: x[key], np.ones((4, 5, 3), np.float32))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.float16, np.float32, np.float64,
                                   np.complex64], ids=str)
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 2), False), (-1, False)])
def test_reductions_match_numpy(dtype, axis, keepdims):
    x = random((3, 4, 5), dtype, seed=8, low=-2, high=3)
    fns = {"sum": np.sum, "mean": np.mean, "prod": np.prod}
    if np.dtype(dtype).kind != "c":
        fns.update({"max": np.max, "min": np.min})
    if np.dtype(dtype).kind == "b":
        fns.update({"any": np.any, "all": np.all})
    out = run(lambda x: {k: getattr(hnp, k)(x, axis=axis, keepdims=keepdims) for k in fns}, x)
    for k, f in fns.items():
        ref = f(x, axis=axis, keepdims=keepdims)
        rtol = 2e-2 if np.dtype(dtype) == np.float16 and k in ("sum", "prod", "mean") else None
        assert_close(out[k], ref, rtol=rtol)


def test_reductions_with_where_and_initial_match_numpy_and_jax():
    import jax
    import jax.numpy as jnp
    x = random((3, 4, 5), np.float32, seed=10)
    mask = random((4, 5), np.float32, seed=11) > 0  # (broadcasts against x)

    def calls(m, x, mask):
        return [m.sum(x, where=mask), m.sum(x, axis=1, where=mask, initial=2.0), m.prod(x, axis=(0, 2), where=mask),
                m.mean(x, where=mask), m.mean(x, axis=-1, keepdims=True, where=mask),
                m.max(x, axis=0, where=mask, initial=-5.0), m.min(x, initial=-0.5), m.any(x > 1, where=mask),
                m.all(x > -3, axis=2, where=mask)] + \
            ([] if m is np else [m.sum(x.astype(np.int8), promote_integers=False)])  # (jax's keyword)
    got = hf.jit(lambda x, mask: calls(hnp, x, mask))(x, mask)
    with jax.enable_x64(True):
        want = jax.jit(lambda x, mask: calls(jnp, x, mask))(x, mask)
    for k, (g, w, ref) in enumerate(zip(got, want, calls(np, x, mask) + [None])):
        g = np.asarray(g)
        np.testing.assert_array_equal(g, np.asarray(w), err_msg=f"call {k}")
        if ref is not None:
            assert_close(g, np.asarray(ref), rtol=1e-5)
    assert np.asarray(got[-1]).dtype == np.int8
    with pytest.raises(ValueError, match=r"hloforge.numpy.max: reduction operation maximum does not have an identity"):
        hnp.max(x, where=mask)
    with pytest.raises(NotImplementedError, match=r"hloforge.numpy.sum: out= is not supported"):
        hnp.sum(x, out=np.zeros(()))
    with pytest.raises(ValueError, match=r"where mask of shape \(2,\) does not broadcast to the operand's shape"):
        hnp.mean(x, where=np.ones(2, bool))


def test_reduction_errors_and_dtype_arg():
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        hf.trace(lambda x: hnp.sum(x, axis=(0, 0)), np.ones((2, 2)))
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds for array of dimension 2"):
        hf.trace(lambda x: hnp.sum(x, axis=2), np.ones((2, 2)))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        hf.trace(lambda x: hnp.max(x, axis=0), np.ones((0, 2)))
    x = random((3, 4), np.int8)
    assert_close(run(lambda x: hnp.sum(x, dtype=np.float32), x), np.sum(x, dtype=np.float32))
    assert_close(run(lambda x: hnp.mean(x, axis=0), x), np.mean(x, axis=0))


def test_shape_functions():
    x = random((2, 3, 4), np.float32, seed=9)

    def f(x):
        return {"reshape": hnp.reshape(x, (4, -1)), "method": x.reshape(6, 4), "T": x.T,
                "transpose": hnp.transpose(x, (1, 0, 2)), "swap": hnp.swapaxes(x, 0, 2),
                "moveaxis": hnp.moveaxis(x, 0, -1), "expand": hnp.expand_dims(x, (0, 2)),
                "squeeze": hnp.squeeze(hnp.expand_dims(x, 1)), "bcast": hnp.broadcast_to(x[0, 0], (2, 4)),
                "concat": hnp.concatenate([x, x.astype(np.float64)], axis=-1),
                "stack": hnp.stack([x, x], axis=1), "flip": hnp.flip(x, 1), "ravel": hnp.ravel(x)}
    out = run(f, x)
    xr = {"reshape": x.reshape(4, -1), "method": x.reshape(6, 4), "T": x.T,
          "transpose": np.transpose(x, (1, 0, 2)), "swap": np.swapaxes(x, 0, 2), "moveaxis": np.moveaxis(x, 0, -1),
          "expand": np.expand_dims(x, (0, 2)), "squeeze": x, "bcast": np.broadcast_to(x[0, 0], (2, 4)),
          "concat": np.concatenate([x, x.astype(np.float64)], axis=-1), "stack": np.stack([x, x], axis=1),
          "flip": np.flip(x, 1), "ravel": x.ravel()}
    for k, ref in xr.items():
        assert_close(out[k], ref)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: hnp.reshape(x, (5, -1)), ValueError, "cannot reshape array of size 6 into shape"),
    (lambda x: hnp.reshape(x, (-1, -1)), ValueError, "can only specify one unknown dimension"),
    (lambda x: hnp.transpose(x, (0, 0)), ValueError, r"transpose: axes \(0, 0\) don't match array of rank 2"),
    (lambda x: hnp.squeeze(x, 0), ValueError, "cannot select an axis to squeeze out"),
    (lambda x: hnp.broadcast_to(x, (3, 3)), ValueError, r"cannot broadcast shape \(2, 3\) to \(3, 3\)"),
    (lambda x: x + hnp.ones((4,)), ValueError, r"shapes \(2, 3\), \(4,\) cannot be broadcast together"),
    (lambda x: hnp.stack([x, x.T]), ValueError, "all input arrays must have the same shape"),
    (lambda x: hnp.concatenate([x, x[0]]), ValueError, "must have the same number of dimensions"),
    (lambda x: x @ x, ValueError, "matmul: Input operand 1 has a mismatch in its core dimension"),
    (lambda x: hnp.einsum("ij,jk", x, x), ValueError, "size of label 'j' differs"),
    (lambda x: hnp.einsum("ii", x), ValueError, "repeated subscript"),
    (lambda x: hnp.einsum("ij->k", x), ValueError, "output subscript 'k' does not appear"),
    (lambda x: -(x > 0), TypeError, "negative: not supported for dtype.s. bool .The numpy boolean negative"),
    (lambda x: hnp.exp(x).astype("U3"), TypeError, "unsupported dtype"),
    (lambda x: bool(x), TypeError, "truth value of a traced Tensor is unknown"),
])
def test_numpy_layer_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((2, 3), np.float32))


@pytest.mark.parametrize("sa,sb", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                   ((2, 1, 3, 4), (5, 4, 2)), ((7, 3, 4), (4, 2)), ((3, 4), (2, 6, 4, 5)),
                                   ((4,), (2, 4, 5)), ((2, 3, 4), (4,))])
def test_matmul_matches_numpy(sa, sb):
    a, b = random(sa, np.float32, seed=10), random(sb, np.float32, seed=11)
    assert_close(run(lambda a, b: a @ b, a, b), a @ b)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bix,iox->box", [(2, 3, 6), (3, 4, 6)]),
    ("bixy,ioxy->boxy", [(2, 3, 4, 5), (3, 2, 4, 5)]), ("ij,jk", [(3, 4), (4, 5)]),
    ("ij->ji", [(3, 4)]), ("ij->i", [(3, 4)]), ("i,i->", [(5,), (5,)]), ("ij,kl->ijkl", [(2, 3), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]), ("abc,c->ab", [(2, 3, 4), (4,)]), ("ij,j->", [(3, 4), (4,)])])
def test_einsum_matches_numpy(spec, shapes):
    xs = [random(s, np.complex64, seed=i) for i, s in enumerate(shapes)]
    assert_close(run(lambda *a: hnp.einsum(spec, *a), *xs), np.einsum(spec, *xs).astype(np.complex64),
                 rtol=1e-4)


def test_einsum_of_many_operands_contracts_in_jax_numpys_order():
    """Three or more operands: pairwise in opt_einsum's path for ``optimize``, as jax.numpy, so
    float32 results are jax's bit for bit (and numpy's to rounding)."""
    import jax
    import jax.numpy as jnp
    a, b, c, d = (random(s, np.float32, seed=i) for i, s in enumerate([(2, 3), (3, 40), (40, 5), (5, 6)]))
    x, y = random((7, 2, 3), np.float32, seed=5), random((7, 3, 4), np.float32, seed=6)

    def calls(m, a, b, c, d, x, y):
        return [m.einsum("ij,jk,kl,lm->im", a, b, c, d, optimize=opt) for opt in ("auto", True, False, "greedy")] + \
               [m.einsum("...ij,...jk,kl->...il", x, y, c[:4]), m.einsum("ij,jk,kl", a, b, c)]
    got = hf.jit(lambda *v: calls(hnp, *v))(a, b, c, d, x, y)
    want = jax.jit(lambda *v: calls(jnp, *v))(a, b, c, d, x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert_close(np.asarray(got[0]), np.einsum("ij,jk,kl,lm->im", a, b, c, d), rtol=1e-5)
    assert hnp.einsum("ij,jk", a, b, preferred_element_type=np.float64).dtype == np.float64
    with pytest.raises(NotImplementedError, match=r"hloforge.numpy.einsum: out=.* is not supported"):
        hnp.einsum("ij,jk", a, b, out=np.zeros((2, 40)))
    with pytest.raises(ValueError, match=r"hloforge.numpy.einsum: needs at least one operand"):
        hnp.einsum("ij")
    with pytest.raises(ValueError, match=r"hloforge.numpy.einsum: 'ij,jk,kl->il' for shapes \[\(2, 3\), \(4, 40\)"):
        hnp.einsum("ij,jk,kl->il", a, random((4, 40), np.float32), c)


def test_einsum_is_one_dot_general():
    a, b = np.ones((2, 3, 4, 5), np.complex64), np.ones((3, 6, 4, 5), np.complex64)
    counts = hf.trace(lambda a, b: hnp.einsum("bixy,ioxy->boxy", a, b), a, b).op_counts()
    assert counts["stablehlo.dot_general"] == 1


def test_creation_where_astype_parts():
    x = random((2, 3), np.complex64, seed=12)

    def f(x):
        return {"zeros": hnp.zeros((2, 2)), "ones": hnp.ones(3, np.int8), "full": hnp.full((2,), 7, np.int16),
                "zeros_like": hnp.zeros_like(x), "ones_like": hnp.ones_like(x, dtype=np.float32),
                "full_like": hnp.full_like(x, 2.5), "arange": hnp.arange(5), "arange2": hnp.arange(1.0, 2.0, 0.25),
                "arange3": hnp.arange(10, 2, -3, dtype=np.int32),
                "where": hnp.where(x.real > 0, x, 0), "astype_bool": x.real.astype(bool),
                "astype_int": (x.real * 10).astype(np.int32), "real": x.real, "imag": x.imag, "conj": x.conj(),
                "real_of_real": hnp.real(x.real), "imag_of_real": hnp.imag(x.real), "clip": hnp.clip(x.real, -1, 1)}
    out = run(f, x)
    ref = {"zeros": np.zeros((2, 2)), "ones": np.ones(3, np.int8), "full": np.full((2,), 7, np.int16),
           "zeros_like": np.zeros_like(x), "ones_like": np.ones_like(x, dtype=np.float32),
           "full_like": np.full_like(x, 2.5), "arange": np.arange(5), "arange2": np.arange(1.0, 2.0, 0.25),
           "arange3": np.arange(10, 2, -3, dtype=np.int32), "where": np.where(x.real > 0, x, 0),
           "astype_bool": x.real.astype(bool), "astype_int": (x.real * 10).astype(np.int32), "real": x.real,
           "imag": x.imag, "conj": x.conj(), "real_of_real": x.real, "imag_of_real": np.zeros_like(x.real),
           "clip": np.clip(x.real, -1, 1)}
    for k, r in ref.items():
        assert_close(out[k], r)


def test_einsum_for_spmd_batches_over_the_leading_dim():
    x, w = random((4, 3, 5, 6), np.float32, seed=20), random((3, 2), np.float32, seed=21)
    plain = hf.trace(lambda x, w: hnp.einsum("bihw,io->bohw", x, w), x, w)
    spmd = hf.trace(lambda x, w: hnp.einsum("bihw,io->bohw", x, w), x, w, spmd=True)
    assert "batching_dims" not in plain.text and "batching_dims = [0] x [0]" in spmd.text
    assert "stablehlo.transpose" not in spmd.text  # the result is already (b, o, h, w)
    for m in (plain, spmd):
        assert_close(m.compile()(x, w), np.einsum("bihw,io->bohw", x, w), rtol=1e-5)


def test_masked_arrays_are_refused():
    """Issue 49: hnp.sum of a masked array summed the masked element too (np.asarray drops the mask);
    masked arrays are refused wherever array-likes become constants or arguments, as jax refuses them."""
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    message = r"numpy masked arrays are not supported \(their mask would be ignored\); use x.filled\(value\)"
    with pytest.raises(ValueError, match=message):  # (hloforge.numpy.asarray's, or once the eager call has
        hnp.sum(masked)                               # compiled for float64[3], its argument's)
    with pytest.raises(ValueError, match="hloforge.numpy.asarray: " + message):
        hf.jit(lambda: hnp.asarray(masked, np.float32))()
    with pytest.raises(ValueError, match="add: " + message):
        hf.jit(lambda x: x + masked)(np.ones(3))
    twice = hf.jit(lambda x: x * 2)
    with pytest.raises(ValueError, match="trace: argument leaf 0: " + message):
        twice(masked)
    assert np.asarray(twice(np.ones(3))).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="main: argument 0: " + message):
        twice(masked)  # (a signature already compiled)
    assert float(hnp.sum(masked.filled(0.0))) == 4.0
