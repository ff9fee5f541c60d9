"""hloforge.numpy's statistics against numpy: var/std, NaN-ignoring reductions, quantiles,
average, cov/corrcoef, histograms, searchsorted/digitize/interp, convolve/correlate."""
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from helpers import assert_close_tree, run


CASES = {
    "var": lambda n, x, w: (n.var(x), n.var(x, axis=1, ddof=1), n.var(x, axis=(0, 1), keepdims=True), n.var(x, axis=0, correction=1)),
    "std": lambda n, x, w: (n.std(x), n.std(x, axis=0), n.std(x, axis=1, ddof=2, keepdims=True)),
    "ptp_count": lambda n, x, w: (n.ptp(x, axis=0), n.ptp(x), n.count_nonzero(x > 0, axis=1), n.count_nonzero(x)),
    "median": lambda n, x, w: (n.median(x), n.median(x, axis=1), n.median(x, axis=0, keepdims=True)),
    "quantile": lambda n, x, w: (n.quantile(x, [0.1, 0.5, 0.9], axis=0), n.quantile(x, 0.25), n.quantile(x, 0.3, axis=1, keepdims=True)),
    "quantile_methods": lambda n, x, w: tuple(n.quantile(x, 0.37, axis=1, method=mth) for mth in
                                              ("linear", "lower", "higher", "midpoint", "nearest")),
    "percentile": lambda n, x, w: (n.percentile(x, 30), n.percentile(x, [10, 90], axis=1), n.percentile(x, 50, method="nearest")),
    "average": lambda n, x, w: (n.average(x), n.average(x, axis=1, weights=w[0]), n.average(x, axis=0, weights=w[:, 0], returned=True),
                                n.average(x, weights=w)),
    "cov": lambda n, x, w: (n.cov(x), n.cov(x, w, rowvar=False), n.cov(x, aweights=w[0]), n.cov(x, fweights=np.array([1, 2, 1, 3]), bias=True),
                            n.cov(x[0], x[1]), n.cov(x, ddof=0)),
    "corrcoef": lambda n, x, w: (n.corrcoef(x), n.corrcoef(x[0], w[0])),
    "searchsorted": lambda n, x, w: (n.searchsorted(np.array([-1.0, 0.0, 0.5, 2.0]), x), n.searchsorted(np.array([-1.0, 0.0, 0.0, 2.0]), 0.0, side="right")),
    "digitize": lambda n, x, w: (n.digitize(x, np.array([-1.0, 0.0, 1.0])), n.digitize(x, np.array([1.0, 0.0, -1.0]), right=True)),
    "interp": lambda n, x, w: (n.interp(x, np.array([-2.0, 0.0, 1.0, 2.5]), np.array([0.0, 1.0, -1.0, 3.0])),
                               n.interp(x, np.array([-2.0, 0.0, 1.0]), np.array([0.0, 1.0, -1.0]), left=-9.0, right=9.0),
                               n.interp(x, np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 0.0]), period=2.5)),
    "histogram": lambda n, x, w: n.histogram(x, 5) + n.histogram(x, np.array([-3.0, 0.0, 1.0, 3.0]), weights=w)
    + n.histogram(x, 4, range=(-1.0, 1.0), density=True),
    "histogram2d": lambda n, x, w: n.histogram2d(x.ravel(), w.ravel(), bins=3),
    "bincount": lambda n, x, w: n.bincount(np.array([0, 3, 3, 1, 7])) if n is np else n.bincount(np.array([0, 3, 3, 1, 7])),
    "convolve": lambda n, x, w: tuple(n.convolve(x[0, :a], w[1, :b], mode) for a, b in ((4, 3), (2, 4), (4, 4))
                                      for mode in ("full", "same", "valid")),
    "correlate": lambda n, x, w: tuple(n.correlate(x[0, :a], w[1, :b], mode) for a, b in ((4, 3), (2, 4))
                                       for mode in ("full", "same", "valid")),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_statistics_match_numpy(dtype):
    rng = np.random.default_rng(3)
    x = rng.uniform(-3, 3, (3, 4)).astype(dtype)
    w = rng.uniform(0.5, 2, (3, 4)).astype(dtype)
    got = run(lambda x, w: {k: f(hnp, x, w) for k, f in CASES.items()}, x, w)
    for k, f in CASES.items():
        want = f(np, x, w)
        assert_close_tree(got[k], want, rtol=1e-4 if dtype == np.float32 else 1e-10)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.uint16, np.float16, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_statistics_dtypes(dtype):
    x = (np.arange(12).reshape(3, 4) * 7 % 5).astype(dtype)
    fns = {"var": lambda n, x: n.var(x, axis=0), "std": lambda n, x: n.std(x), "average": lambda n, x: n.average(x, axis=1),
           "count_nonzero": lambda n, x: n.count_nonzero(x), "nansum": lambda n, x: n.nansum(x, axis=0),
           "nanmean": lambda n, x: n.nanmean(x)}
    if np.dtype(dtype).kind != "c":
        fns.update({"median": lambda n, x: n.median(x, axis=1)})
        if np.dtype(dtype) != np.bool_:
            fns.update({"ptp": lambda n, x: n.ptp(x, axis=0), "quantile_lower": lambda n, x: n.quantile(x, 0.5, method="lower"),
                        "nanmax": lambda n, x: n.nanmax(x, axis=1)})
    if np.dtype(dtype).kind in "iu":
        fns["bincount"] = lambda n, x: n.bincount(x.ravel(), minlength=6) if n is np else n.bincount(x.ravel(), length=6)
    got = run(lambda x: {k: f(hnp, x) for k, f in fns.items()}, x)
    for k, f in fns.items():
        want = np.asarray(f(np, x))
        assert_close_tree(got[k], want, rtol=2e-3 if want.dtype == np.float16 else None)


def test_nan_functions_match_numpy():
    x = np.array([[1.0, np.nan, 3.0, -2.0], [np.nan, np.nan, np.nan, np.nan], [0.5, 2.0, np.nan, 4.0]])
    fns = {"nansum": lambda n, x: n.nansum(x, axis=1), "nanprod": lambda n, x: n.nanprod(x, axis=0),
           "nanmean": lambda n, x: n.nanmean(x[[0, 2]] if n is np else x[0::2], axis=1), "nanvar": lambda n, x: n.nanvar(x[0::2], axis=1, ddof=1),
           "nanstd": lambda n, x: n.nanstd(x[0::2]), "nanmax": lambda n, x: n.nanmax(x[0::2], axis=0),
           "nanmin": lambda n, x: n.nanmin(x[0::2], axis=1), "nanmedian": lambda n, x: n.nanmedian(x[0::2], axis=1),
           "nanquantile": lambda n, x: n.nanquantile(x[0::2], [0.2, 0.7], axis=1), "nanpercentile": lambda n, x: n.nanpercentile(x[0::2], 40),
           "median_nan": lambda n, x: n.median(x, axis=1), "quantile_nan": lambda n, x: n.quantile(x, 0.5, axis=0)}
    got = run(lambda x: {k: f(hnp, x) for k, f in fns.items()}, x)
    with np.errstate(all="ignore"):
        for k, f in fns.items():
            assert_close_tree(got[k], f(np, x), rtol=1e-12)
    allnan = run(lambda x: (hnp.nanmax(x[1]), hnp.nanmean(x[1]), hnp.nanmedian(x[1])), x)
    assert all(np.isnan(a) for a in allnan)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda x: hnp.quantile(x, 1.5), ValueError, r"Quantiles must be in the range \[0, 1\]"),
    (lambda x: hnp.percentile(x, -1), ValueError, r"Percentiles must be in the range \[0, 100\]"),
    (lambda x: hnp.quantile(x, 0.5, method="bogus"), ValueError, "'bogus' is not a valid method"),
    (lambda x: hnp.quantile(x, 0.5, method="hazen"), NotImplementedError, "method 'hazen' is not supported"),
    (lambda x: hnp.median(x.astype(np.complex64)), TypeError, "a must be an array of real numbers"),
    (lambda x: hnp.var(x, out=x), NotImplementedError, "The 'out' argument is not supported"),
    (lambda x: hnp.var(x, ddof=1, correction=1), ValueError, "ddof and correction can't be provided simultaneously"),
    (lambda x: hnp.average(x, weights=x[0]), TypeError, "Axis must be specified when shapes of a and weights differ"),
    (lambda x: hnp.average(x, axis=0, weights=x[0]), ValueError, "Shape of weights must be consistent with shape of a"),
    (lambda x: hnp.cov(x[None]), ValueError, "m has more than 2 dimensions"),
    (lambda x: hnp.cov(x, fweights=x[0, :3]), RuntimeError, "incompatible numbers of samples and fweights"),
    (lambda x: hnp.searchsorted(x, 1.0), ValueError, "object too deep for desired array"),
    (lambda x: hnp.searchsorted(x[0], 1.0, side="middle"), ValueError, "side must be either 'left' or 'right'"),
    (lambda x: hnp.digitize(x, x), ValueError, "bins must be one-dimensional"),
    (lambda x: hnp.interp(x, x[0], x[0, :2]), ValueError, "fp and xp are not of the same length"),
    (lambda x: hnp.interp(x, x[0, :0], x[0, :0]), ValueError, "array of sample points is empty"),
    (lambda x: hnp.interp(x, x[0], x[0], period=0), ValueError, "period must be a non-zero value"),
    (lambda x: hnp.histogram(x, 0), ValueError, "`bins` must be positive, when an integer"),
    (lambda x: hnp.histogram(x, np.array([1.0, 0.0])), ValueError, "`bins` must increase monotonically"),
    (lambda x: hnp.histogram(x, 3, range=(2.0, 1.0)), ValueError, "max must be larger than min in range parameter"),
    (lambda x: hnp.histogram(x, "auto"), NotImplementedError, "bin estimator 'auto' is not supported"),
    (lambda x: hnp.bincount(x[0].astype(np.int32)), ValueError, "pass length="),
    (lambda x: hnp.bincount(x[0]), TypeError, "Cannot cast array data from dtype.'float32'. to dtype.'int64'."),
    (lambda x: hnp.convolve(x[0, :0], x[0]), ValueError, "a cannot be empty"),
    (lambda x: hnp.convolve(x[0], x[0, :0]), ValueError, "v cannot be empty"),
    (lambda x: hnp.convolve(x[0], x[0], mode="wide"), ValueError, "mode must be one of 'full', 'same', or 'valid'"),
    (lambda x: hnp.correlate(x, x[0]), ValueError, "object too deep for desired array"),
])
def test_statistics_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        hf.trace(fn, np.ones((3, 4), np.float32))
