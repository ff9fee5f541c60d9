"""hloforge.numpy's manipulation, creation, comparison, product, polynomial, set and extra
functions against numpy: one traced module per dtype, zero-size and 0-d inputs, error messages."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close_tree, run


# name -> fn(np_or_hnp, x, y): each runs under numpy and under hloforge.numpy
CASES = {
    "array_split": lambda n, x, y: n.array_split(x, 3, axis=1),
    "split": lambda n, x, y: n.split(x, [1, 3], axis=1),
    "hsplit": lambda n, x, y: n.hsplit(x, 2),
    "vsplit": lambda n, x, y: n.vsplit(x, [1]),
    "dsplit": lambda n, x, y: n.dsplit(x[:, :, None] * n.ones((1, 1, 4), x.dtype), 2),
    "unstack": lambda n, x, y: n.unstack(x, axis=1),
    "hstack": lambda n, x, y: n.hstack([x, y]),
    "vstack": lambda n, x, y: n.vstack([x, y[0]]),
    "dstack": lambda n, x, y: n.dstack([x, y]),
    "column_stack": lambda n, x, y: n.column_stack([x[0], y[0]]),
    "block": lambda n, x, y: n.block([[x, y], [y, x]]),
    "concat": lambda n, x, y: n.concat([x, y], axis=1),
    "tile": lambda n, x, y: n.tile(x, (2, 1, 2)),
    "tile0": lambda n, x, y: n.tile(x, 0),
    "repeat": lambda n, x, y: n.repeat(x, 2, axis=1),
    "repeat_list": lambda n, x, y: n.repeat(x, [1, 0, 2], axis=0),
    "repeat_flat": lambda n, x, y: n.repeat(x, 3),
    "roll": lambda n, x, y: n.roll(x, (1, -5), axis=(0, 1)),
    "roll_flat": lambda n, x, y: n.roll(x, 5),
    "rot90": lambda n, x, y: (n.rot90(x), n.rot90(x, 2), n.rot90(x, 3), n.rot90(x, -1, axes=(1, 0))),
    "rollaxis": lambda n, x, y: n.rollaxis(x[None], 2),
    "fliplr_ud": lambda n, x, y: (n.fliplr(x), n.flipud(x)),
    "atleast": lambda n, x, y: (n.atleast_1d(x[0, 0]), n.atleast_2d(x[0]), n.atleast_3d(x), n.atleast_3d(x[0])),
    "broadcast_arrays": lambda n, x, y: n.broadcast_arrays(x, y[0], 2),
    "append": lambda n, x, y: (n.append(x, y, axis=0), n.append(x, y)),
    "delete": lambda n, x, y: (n.delete(x, [0, 2], axis=1), n.delete(x, 1), n.delete(x, slice(0, 3, 2), 1)),
    "insert": lambda n, x, y: (n.insert(x, 1, 5, axis=1), n.insert(x, [1, 3], y[0, :2], axis=1), n.insert(x, 2, y[0], 0)),
    "resize": lambda n, x, y: n.resize(x, (5, 3)),
    "diff": lambda n, x, y: (n.diff(x, 2, axis=1), n.diff(x, axis=0, prepend=0), n.diff(x > 1)),
    "ediff1d": lambda n, x, y: n.ediff1d(x, to_begin=[1], to_end=[2, 3]),
    "kron": lambda n, x, y: n.kron(x, y[:2, :2]),
    "outer": lambda n, x, y: n.outer(x[0], y[1]),
    "permute_dims": lambda n, x, y: (n.permute_dims(x, (1, 0)), n.matrix_transpose(x[None])),
    "eye_tri": lambda n, x, y: (n.eye(3, 4, 1, dtype=x.dtype), n.tri(3, 4, -1, dtype=x.dtype), n.identity(2, int)),
    "tril_triu": lambda n, x, y: (n.tril(x, 1), n.triu(x), n.triu(x[None], -1), n.tril(x[0])),
    "diag": lambda n, x, y: (n.diag(x[0], -1), n.diag(x[0], 2), n.diag(x, 1), n.diagflat(x[:2, :2])),
    "diagonal_trace": lambda n, x, y: (n.diagonal(x, -1), n.diagonal(x[None], 0, 1, 2), n.trace(x)),
    "vander": lambda n, x, y: (n.vander(x[0], 3), n.vander(x[0], increasing=True)),
    "meshgrid": lambda n, x, y: n.meshgrid(x[0], y[0, :3]) + n.meshgrid(x[0], y[1], indexing="ij", sparse=True),
    "indices": lambda n, x, y: (n.indices((2, 3)), n.indices((2, 3), sparse=True)),
    "ix_": lambda n, x, y: n.ix_(x[0], y[1]),
    "linspace": lambda n, x, y: (n.linspace(0, 1, 7), n.linspace(2, 3, 4, endpoint=False), n.linspace(0, 10, 4, dtype=int),
                                 n.linspace(x[0], y[0], 5, axis=1), n.linspace(1, 2, 1), n.linspace(0, 1, 0)),
    "logspace_geomspace": lambda n, x, y: (n.logspace(0, 2, 5), n.logspace(0, 3, 4, base=2.0), n.geomspace(1, 1000, 4),
                                           n.geomspace(-1, -16, 5)),
    "windows": lambda n, x, y: (n.hamming(5), n.hanning(4), n.bartlett(6), n.blackman(3), n.kaiser(5, 2.0)),
    "index_helpers": lambda n, x, y: n.tril_indices(3, 1) + n.triu_indices_from(x) + n.diag_indices(3),
    "isclose": lambda n, x, y: (n.isclose(x, x + 1e-9), n.allclose(x, y), n.array_equal(x, x), n.array_equal(x, x[:1]),
                                n.array_equiv(x, x[0]), n.isclose(n.inf, x)),
    "isin": lambda n, x, y: (n.isin(x, [1.0, 2.0, x[0, 0]]), n.isin(x, [1.0], invert=True)),
    "select_choose": lambda n, x, y: (n.select([x > 1, x < -1], [x, y], 7), n.choose((x > 0).astype(int), [x, y])),
    "piecewise": lambda n, x, y: n.piecewise(x, [x < 0, x > 1], [lambda t: -t, lambda t: t * 2, 0.5]),
    "products": lambda n, x, y: (n.tensordot(x, y, ([1], [1])), n.tensordot(x, y.T, 1), n.inner(x, y), n.vdot(x, y),
                                 n.cross(x[:, :3], y[:, :3]), n.cross(x[:, :2], y[:, :2]), n.cross(x[:, :2], y[:, :3])),
    "vecdot": lambda n, x, y: (n.vecdot(x, y), n.matvec(x, y[0]), n.vecmat(x[:, 0], y)),
    "gradient": lambda n, x, y: n.gradient(x) + (n.gradient(x[0], np.array([0.0, 1.0, 1.5, 3.5])), n.gradient(x, 2.0, axis=1)),
    "trapezoid": lambda n, x, y: (n.trapezoid(x, axis=0), n.trapezoid(x, dx=0.5), n.trapezoid(y[0], x[0])),
    "unwrap": lambda n, x, y: n.unwrap(x * 3),
    "ravel_unravel": lambda n, x, y: (n.ravel_multi_index((np.array([0, 2, 1]), np.array([3, 1, 0])), (3, 4)),
                                      n.unravel_index(np.array([0, 5, 11]), (3, 4))),
    "bits": lambda n, x, y: (n.packbits(x > 0, axis=1), n.packbits(x > 0, bitorder="little"),
                             n.unpackbits(np.array([[3, 250]], np.uint8), axis=1), n.unpackbits(np.array([7], np.uint8), count=5)),
    "polynomials": lambda n, x, y: (n.polyval(np.array([1.0, -2.0, 3.0]), x), n.polyadd(x[0], y[0, :2]),
                                    n.polysub(x[0, :2], y[0]), n.polymul(x[0], y[0, :2]), n.polyder(x[0], 2),
                                    n.polyint(x[0], 1, 3.0), n.poly(x[0])) + n.polydiv(x[0], y[0, :2]),
    "fill_put": lambda n, x, y: (
        n.fill_diagonal(x, 7.0, inplace=False) if n is hnp else _np_inplace(np.fill_diagonal, x, 7.0),
        n.put(x, [0, 5, -1], [1.0, 2.0], inplace=False) if n is hnp else _np_inplace(np.put, x, [0, 5, -1], [1.0, 2.0]),
        n.place(x, x > 1, [9.0, 8.0], inplace=False) if n is hnp else _np_inplace(np.place, x, x > 1, [9.0, 8.0])),
    "i0": lambda n, x, y: n.i0(x * 10),
}


def _np_inplace(fn, x, *args):
    y = np.array(x, copy=True)
    fn(y, *args)
    return y


def test_manipulation_creation_products_match_numpy():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (3, 4))
    y = rng.uniform(0.5, 3, (3, 4))
    got = run(lambda x, y: {k: f(hnp, x, y) for k, f in CASES.items()}, x, y)
    for k, f in CASES.items():
        with np.errstate(all="ignore"):
            want = f(np, x, y)
        assert_close_tree(got[k], want, rtol=1e-9 if k in ("i0", "polynomials") else None)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int64, np.float16, np.float32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_dtype_preserving_functions(dtype):
    x = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    fns = {"split": lambda n, x: n.array_split(x, 2, axis=1), "hstack": lambda n, x: n.hstack([x, x]),
           "tile": lambda n, x: n.tile(x, 2), "repeat": lambda n, x: n.repeat(x, 2, 0), "roll": lambda n, x: n.roll(x, 1),
           "rot90": lambda n, x: n.rot90(x), "tril": lambda n, x: n.tril(x), "diag": lambda n, x: n.diag(x),
           "diagonal": lambda n, x: n.diagonal(x, 1), "delete": lambda n, x: n.delete(x, 1, 0),
           "insert": lambda n, x: n.insert(x, 0, x[0], 0), "atleast_3d": lambda n, x: n.atleast_3d(x),
           "append": lambda n, x: n.append(x, x[0]), "broadcast": lambda n, x: n.broadcast_arrays(x, x[0])[1],
           "array_equal": lambda n, x: n.array_equal(x, x), "isin": lambda n, x: n.isin(x, x[0]),
           "outer": lambda n, x: n.outer(x[0], x[1]), "kron": lambda n, x: n.kron(x[:2, :2], x[:2, :2]),
           "diff": lambda n, x: n.diff(x)}
    got = run(lambda x: {k: f(hnp, x) for k, f in fns.items()}, x)
    for k, f in fns.items():
        assert_close_tree(got[k], f(np, x))


def test_zero_size_and_0d_inputs():
    z = np.zeros((0, 3), np.float32)
    s = np.float32(2.5)
    fns = {"split": lambda n, z, s: n.array_split(z, 2), "tile": lambda n, z, s: n.tile(z, (2, 2)),
           "repeat": lambda n, z, s: n.repeat(z, 2, axis=1), "roll": lambda n, z, s: n.roll(z, 2, axis=0),
           "diff": lambda n, z, s: n.diff(z, axis=0), "tril": lambda n, z, s: n.tril(z),
           "diagonal": lambda n, z, s: n.diagonal(z), "eye0": lambda n, z, s: n.eye(0), "linspace0": lambda n, z, s: n.linspace(0, 1, 0),
           "atleast_2d": lambda n, z, s: n.atleast_2d(s), "tile0d": lambda n, z, s: n.tile(s, 3),
           "repeat0d": lambda n, z, s: n.repeat(s, 2), "outer": lambda n, z, s: n.outer(z, s),
           "hstack": lambda n, z, s: n.hstack([z, z]), "isin": lambda n, z, s: n.isin(z, [1.0]),
           "vander": lambda n, z, s: n.vander(z[:, 0], 2), "trace": lambda n, z, s: n.trace(z),
           "delete": lambda n, z, s: n.delete(z, [], axis=1)}
    got = run(lambda z, s: {k: f(hnp, z, s) for k, f in fns.items()}, z, s)
    for k, f in fns.items():
        assert_close_tree(got[k], f(np, z, s))


def test_set_functions_with_size():
    i = np.array([[3, -1, 0, 3], [2, 0, 0, -1], [5, 3, 2, 2]], np.int32)
    u = np.unique(i)
    nz = int(np.count_nonzero(i))

    def f(i):
        return {"nonzero": hnp.nonzero(i, size=nz), "flat": hnp.flatnonzero(i, size=nz + 2, fill_value=-1),
                "argwhere": hnp.argwhere(i, size=nz), "extract": hnp.extract(i > 0, i, size=int((i_np > 0).sum())),
                "compress": hnp.compress(i[0] > 0, i, axis=1, size=2),
                "unique": hnp.unique(i, return_index=True, return_inverse=True, return_counts=True, size=len(u)),
                "unique_pad": hnp.unique(i, size=len(u) + 2, fill_value=99),
                "union": hnp.union1d(i[0], i[1] + 2, size=len(np.union1d(i_np[0], i_np[1] + 2))),
                "intersect": hnp.intersect1d(i[0], i[2], size=len(np.intersect1d(i_np[0], i_np[2]))),
                "setdiff": hnp.setdiff1d(i.ravel(), i[1], size=len(np.setdiff1d(i_np, i_np[1]))),
                "setxor": hnp.setxor1d(i[0], i[2], size=len(np.setxor1d(i_np[0], i_np[2])))}
    i_np = i
    got = run(f, i)
    as64 = lambda t: tuple(np.asarray(a).astype(np.int64) for a in t)
    assert_close_tree(got["nonzero"], as64(np.nonzero(i)))
    assert_close_tree(got["flat"], np.concatenate([np.flatnonzero(i), [-1, -1]]))
    assert_close_tree(got["argwhere"], np.argwhere(i))
    assert_close_tree(got["extract"], np.extract(i > 0, i))
    assert_close_tree(got["compress"], np.compress(i[0] > 0, i, axis=1))
    want = np.unique(i, return_index=True, return_inverse=True, return_counts=True)
    assert_close_tree(got["unique"], (want[0],) + as64(want[1:]))
    assert_close_tree(got["unique_pad"], np.concatenate([u, [99, 99]]).astype(np.int32))
    assert_close_tree(got["union"], np.union1d(i[0], i[1] + 2))
    assert_close_tree(got["intersect"], np.intersect1d(i[0], i[2]))
    assert_close_tree(got["setdiff"], np.setdiff1d(i, i[1]))
    assert_close_tree(got["setxor"], np.setxor1d(i[0], i[2]))


def test_nan_sorting_in_unique():
    x = np.array([2.0, np.nan, 1.0, 2.0, np.nan, -0.5])
    got = run(lambda x: hnp.unique(x, size=4), x)
    assert_close_tree(got, np.unique(x))


def test_static_inputs_need_no_size_and_utilities():
    assert hnp.result_type(np.float32, 1.0) == np.float32
    assert hnp.promote_types(np.int8, np.uint8) == np.int16
    assert hnp.can_cast(np.int8, np.int16) and not hnp.can_cast(np.float64, np.float32)
    assert hnp.issubdtype(hf.bfloat16, np.floating) and hnp.issubdtype(np.int8, np.integer)
    assert hnp.isdtype(np.float32, "real floating") and hnp.isdtype(hf.bfloat16, "real floating")
    assert hnp.ndim([[1, 2]]) == 2 and hnp.shape(np.ones((2, 3))) == (2, 3) and hnp.size(np.ones((2, 3))) == 6
    assert hnp.isscalar(1.0) and not hnp.isscalar(np.ones(2)) and hnp.iterable([1])
    assert hnp.iscomplexobj(np.ones(2, np.complex64)) and hnp.isrealobj(np.ones(2))
    assert hnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert hnp.einsum_path("ij,jk", np.ones((2, 3)), np.ones((3, 4)))[0] == np.einsum_path(
        "ij,jk", np.ones((2, 3)), np.ones((3, 4)))[0]

    def f(x):
        t = hnp.ndim(x), hnp.shape(x), hnp.isscalar(x), hnp.iscomplexobj(x)
        assert t == (2, (2, 3), False, False)
        return (hnp.nonzero(np.array([0, 1, 2])), hnp.unique(np.array([3, 1, 3])), hnp.trim_zeros(np.array([0, 1, 0, 2, 0])),
                hnp.frombuffer(np.arange(3, dtype=np.int16).tobytes(), np.int16), hnp.fromiter(range(3), np.int32),
                hnp.array([x[0, 0], 2.0]), hnp.copy(x), hnp.empty_like(x).shape, hnp.fromfunction(lambda i, j: i + j, (2, 2)),
                hnp.vectorize(lambda a, b: a * b + 1)(x, 2.0), hnp.apply_along_axis(hnp.sum, 1, x),
                hnp.apply_over_axes(hnp.sum, x, [0, 1]), hnp.histogram_bin_edges(x, 3, (0.0, 3.0)))
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    got = run(f, x)
    want = (np.nonzero(np.array([0, 1, 2])), np.unique(np.array([3, 1, 3])), np.trim_zeros(np.array([0, 1, 0, 2, 0])),
            np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int32), np.array([0.0, 2.0]), x, (2, 3),
            np.fromfunction(lambda i, j: i + j, (2, 2)), x * 2.0 + 1, x.sum(1), np.apply_over_axes(np.sum, x, [0, 1]),
            np.histogram_bin_edges(x, 3, (0.0, 3.0)))
    assert_close_tree(got[0], tuple(a.astype(np.int64) for a in want[0]))
    for g, w in zip(got[1:], want[1:]):
        if isinstance(w, tuple) and all(isinstance(v, int) for v in w):
            assert tuple(g) == w
        else:
            assert_close_tree(g, w)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: hnp.split(x, 3, axis=1), ValueError, "array split does not result in an equal division"),
    (lambda x: hnp.array_split(x, 0), ValueError, "number sections must be larger than 0"),
    (lambda x: hnp.vsplit(x[0], 1), ValueError, "vsplit only works on arrays of 2 or more dimensions"),
    (lambda x: hnp.dsplit(x, 1), ValueError, "dsplit only works on arrays of 3 or more dimensions"),
    (lambda x: hnp.hsplit(x[0, 0], 1), ValueError, "hsplit only works on arrays of 1 or more dimensions"),
    (lambda x: hnp.rot90(x, axes=(0, 0)), ValueError, "Axes must be different"),
    (lambda x: hnp.rot90(x, axes=(0, 3)), ValueError, r"Axes=\(0, 3\) out of range for array of ndim=2"),
    (lambda x: hnp.fliplr(x[0]), ValueError, "Input must be >= 2-d"),
    (lambda x: hnp.tile(x, -1), ValueError, "negative dimensions are not allowed"),
    (lambda x: hnp.repeat(x, [1, 2], axis=0), ValueError, "operands could not be broadcast together"),
    (lambda x: hnp.repeat(x, -1), ValueError, "repeats may not contain negative values"),
    (lambda x: hnp.repeat(x, x[0, 0]), TypeError, "repeats must be static"),
    (lambda x: hnp.roll(x, (1, 2), axis=0), ValueError, "'shift' and 'axis' should be scalars or 1D sequences"),
    (lambda x: hnp.delete(x, 7, axis=1), IndexError, "index 7 is out of bounds for axis 1 with size 4"),
    (lambda x: hnp.insert(x, 9, 1.0, axis=1), IndexError, "index 9 is out of bounds for axis 1 with size 4"),
    (lambda x: hnp.diff(x, -1), ValueError, "order must be non-negative but got -1"),
    (lambda x: hnp.diff(x[0, 0]), ValueError, "diff requires input that is at least one dimensional"),
    (lambda x: hnp.linspace(0, 1, -2), ValueError, "Number of samples, -2, must be non-negative"),
    (lambda x: hnp.geomspace(0, 1), ValueError, "Geometric sequence cannot include zero"),
    (lambda x: hnp.eye(-1), ValueError, "negative dimensions are not allowed"),
    (lambda x: hnp.diag(x[None]), ValueError, "Input must be 1- or 2-d"),
    (lambda x: hnp.diagonal(x, 0, 1, 1), ValueError, "axis1 and axis2 cannot be the same"),
    (lambda x: hnp.meshgrid(x, indexing="xx"), ValueError, "Valid values for `indexing` are 'xy' and 'ij'"),
    (lambda x: hnp.block((x, x)), TypeError, "arrays is a tuple"),
    (lambda x: hnp.select([x > 0], [x, x]), ValueError, "list of cases must be same length as list of conditions"),
    (lambda x: hnp.select([x], [x]), TypeError, "invalid entry 0 in condlist: should be boolean ndarray"),
    (lambda x: hnp.choose(np.array([0, 3]), [x[0, :2], x[1, :2]]), ValueError, "invalid entry in choice array"),
    (lambda x: hnp.tensordot(x, x, ([0], [1])), ValueError, "shape-mismatch for sum"),
    (lambda x: hnp.inner(x, x[:, :3]), ValueError, r"shapes \(3, 4\) and \(3, 3\) not aligned"),
    (lambda x: hnp.cross(x, x), ValueError, "incompatible dimensions for cross product"),
    (lambda x: hnp.gradient(x[:, :1], axis=1), ValueError, "Shape of array too small to calculate a numerical gradient"),
    (lambda x: hnp.unravel_index(np.array([20]), (3, 4)), ValueError, "index 20 is out of bounds for array with size 12"),
    (lambda x: hnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4)), ValueError, "invalid entry in coordinates array"),
    (lambda x: hnp.packbits(x), TypeError, "Expected an input array of integer or boolean data type"),
    (lambda x: hnp.unpackbits(x), TypeError, "Expected an input array of unsigned byte data type"),
    (lambda x: hnp.polyder(x[0], -1), ValueError, "Order of derivative must be positive"),
    (lambda x: hnp.polyint(x[0], -1), ValueError, "Order of integral must be positive"),
    (lambda x: hnp.nonzero(x), ValueError, "nonzero: the result's shape depends on the values of a traced array; pass size="),
    (lambda x: hnp.unique(x), ValueError, "unique: the result's shape depends on the values"),
    (lambda x: hnp.nonzero(x[0, 0], size=1), ValueError, "Calling nonzero on 0d arrays is not allowed"),
    (lambda x: hnp.put(x, [20], 1.0, inplace=False), IndexError, "index 20 is out of bounds for axis 0 with size 12"),
    (lambda x: hnp.put(x, [0], 1.0), ValueError, "put: Tensors are immutable"),
    (lambda x: hnp.fill_diagonal(x[0], 1.0, inplace=False), ValueError, "array must be at least 2-d"),
    (lambda x: hnp.trim_zeros(x[0]), TypeError, "trim_zeros: the result's shape depends on the values"),
])
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((3, 4), np.float32))
