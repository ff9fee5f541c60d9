"""jax.lax's special functions: erf_inv, lgamma, digamma (CHLO ops XLA expands), the regularized
incomplete gamma functions igamma / igammac (series and continued fraction), and erfc,
bessel_i0e/i1e, zeta, polygamma, betainc, igamma_grad_a and random_gamma_grad as jax and XLA
compute them."""
from __future__ import annotations

import numpy as np

from hloforge.frontend import dtypes, ops
from hloforge.frontend.lax import elementwise as ew
from hloforge.frontend.lax._common import lax_operand
from hloforge.frontend.lax.control_flow import while_loop
from hloforge.frontend.tracing import Tensor, as_tensor


def _float(what, x):
    x = lax_operand(x, f"hloforge.lax.{what} operand")
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"{what} does not accept dtype {x.dtype}. Accepted dtypes are subtypes of floating.")
    return x


def erf_inv(x):
    """jax.lax.erf_inv; emits ``chlo.erf_inv``."""
    return ops.erf_inv(_float("erf_inv", x))


def lgamma(x):
    """jax.lax.lgamma (log |Gamma(x)|); emits ``chlo.lgamma``."""
    return ops.lgamma(_float("lgamma", x))


def digamma(x):
    """jax.lax.digamma; emits ``chlo.digamma``."""
    return ops.digamma(_float("digamma", x))


_TERMS = 48  # unrolled iterations of each expansion (float32-accurate for a, x up to ~30)


def _where(condition, x, y):
    """``stablehlo.select`` of ``x`` and ``y``: Tensors of ``condition``'s shape, or one of them a Python number."""
    ref = x if isinstance(x, Tensor) else y
    return ops.select(condition, *(v if isinstance(v, Tensor) else _c(ref, v) for v in (x, y)))


def _prefix(a, x):
    """x**a e**-x / Gamma(a), in logs."""
    return ops.exp(a * ops.log(x) - x - lgamma(a))


def _series(a, x):
    """P(a, x) = prefix * sum_n x**n / (a (a+1) ... (a+n)): for x < a + 1."""
    term = 1.0 / a
    total = term
    for n in range(1, _TERMS):
        term = term * x / (a + n)
        total = total + term
    return _prefix(a, x) * total


def _continued_fraction(a, x):
    """Q(a, x) by Lentz's method on the Legendre continued fraction: for x >= a + 1."""
    tiny = 1e-30
    b = x + 1.0 - a
    c = 1.0 / tiny + 0.0 * x
    d = 1.0 / b
    h = d
    for i in range(1, _TERMS):
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = _where(ops.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = _where(ops.abs(c) < tiny, tiny, c)
        d = 1.0 / d
        h = h * d * c
    return _prefix(a, x) * h


def _igamma_pair(a, x):
    if dtypes.weak_type(x) is not None and dtypes.weak_type(a) is None:
        a = _float("igamma", a)
        x = as_tensor(x, a.dtype)  # (a Python scalar takes the array's dtype, as in jax.lax)
    elif dtypes.weak_type(a) is not None and dtypes.weak_type(x) is None:
        x = _float("igamma", x)
        a = as_tensor(a, x.dtype)
    a, x = (_float("igamma", v) for v in (a, x))
    if a.dtype != x.dtype:
        raise TypeError(f"igamma requires arguments to have the same dtypes, got {a.dtype}, {x.dtype}.")
    shape = np.broadcast_shapes(a.shape, x.shape)
    a, x = (ops.broadcast_in_dim(v, shape, tuple(range(len(shape) - v.ndim, len(shape)))) for v in (a, x))
    use_series = (x < a + 1.0)
    safe_x = _where(x > 0, x, 1.0)
    p = _series(a, safe_x)
    q = _continued_fraction(a, _where(use_series, a + 2.0, safe_x))
    return a, x, use_series, p, q


def igamma(a, x):
    """jax.lax.igamma: the regularized lower incomplete gamma function P(a, x); 0 at x = 0, NaN
    for a <= 0 or x < 0. Built from ops (48 unrolled terms of its series or continued fraction)."""
    a, x, use_series, p, q = _igamma_pair(a, x)
    out = _where(use_series, p, 1.0 - q)
    out = _where(x == 0, 0.0, out)
    return _where((a <= 0) | (x < 0), np.nan, out)


def igammac(a, x):
    """jax.lax.igammac: 1 - igamma(a, x), computed directly where that is accurate."""
    a, x, use_series, p, q = _igamma_pair(a, x)
    out = _where(use_series, 1.0 - p, q)
    out = _where(x == 0, 1.0, out)
    return _where((a <= 0) | (x < 0), np.nan, out)


# ---------------------------------------------------------------- jax's and XLA's special functions
# erfc, bessel_i1e, zeta and polygamma are CHLO ops XLA expands with Cephes' approximations;
# bessel_i0e, betainc, igamma_grad_a and random_gamma_grad are jax's own lowerings. hloforge.ops
# has no builder for those CHLO ops, so each is written out here the way the expansion computes it
# (the same constants, operations and selects), as jax lowers the others, with hloforge.lax's
# elementwise functions (no promotion) and its while_loop.

_HALF = (np.dtype(np.float16), dtypes.bfloat16)


def _c(x, value):
    return ew.full_of(x, value)


def _floats(name, *args):
    """jax.lax's operands of a special function: one floating dtype, jax.lax's broadcasting."""
    return ew.operands(name, args, ew.FLOAT)


def _upcast(fn, *xs):
    """``fn`` in float32 for float16 and bfloat16 operands (their constants have too few bits)."""
    if xs[0].dtype not in _HALF:
        return fn(*xs)
    return ops.convert(fn(*(ops.convert(x, np.float32) for x in xs)), xs[0].dtype)


def _horner(x, coefficients):
    """The polynomial with ``coefficients`` (highest power first) at x."""
    p = _c(x, coefficients[0])
    for c in coefficients[1:]:
        p = ops.add(ops.multiply(p, x), _c(x, c))
    return p


def _chebyshev(x, coefficients):
    """Cephes' chbevl: the Chebyshev series with ``coefficients`` at x (Clenshaw's recurrence)."""
    b0 = b1 = b2 = _c(x, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = ops.add(ops.subtract(ops.multiply(x, b1), b2), _c(x, c))
    return ops.multiply(ops.subtract(b0, b2), _c(x, 0.5))


_ERFC32_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1, -5.824733027278666e-1,
             6.210004621745983e-1, -4.944515323274145e-1, 3.404879937665872e-1, -2.741127028184656e-1,
             5.638259427386472e-1)
_ERFC32_R = (-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0, 2.921019019210786e+0,
             -1.015265279202700e+0, 4.218463358204948e-1, -2.820767439740514e-1, 5.641895067754075e-1)
_ERF32_T = (7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3, -2.685381193529856e-2,
            1.128358514861418e-1, -3.761262582423300e-1, 1.128379165726710e+0)
_ERFC64_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
             4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
             9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC64_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
             9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
             1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC64_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
             6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC64_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
             1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_ERF64_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
            7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF64_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
            2.26290000613890934246e4, 4.92673942608635921086e4)


def _erfc_tail(x, z, ratio, maxlog):
    """erfc for |x| >= 1 from ``ratio`` = erfc(|x|) before its clamp: 0 where e**z underflows,
    2 - erfc(-x) for negative x."""
    clamped = ops.select(ops.compare(z, _c(x, -maxlog), "LT"), _c(x, 0), ratio)
    return ops.select(ops.compare(x, _c(x, 0), "LT"), ops.subtract(_c(x, 2), clamped), clamped)


def _erfc32(x):
    xsq = ops.multiply(x, x)
    z, absx = ops.neg(xsq), ops.abs(x)
    inv_xsq = ops.divide(_c(x, 1), xsq)
    scale = ops.multiply(ops.exp(z), ops.divide(_c(x, 1), absx))
    poly = ops.select(ops.compare(absx, _c(x, 2), "LT"), _horner(inv_xsq, _ERFC32_P), _horner(inv_xsq, _ERFC32_R))
    large = _erfc_tail(x, z, ops.multiply(scale, poly), 88.72283905206835)
    small = ops.subtract(_c(x, 1), ops.multiply(x, _horner(xsq, _ERF32_T)))
    return ops.select(ops.compare(absx, _c(x, 1), "LT"), small, large)


def _erfc64(x):
    xsq = ops.multiply(x, x)
    z, absx = ops.neg(xsq), ops.abs(x)
    e = ops.exp(z)
    near = ops.divide(ops.multiply(e, _horner(absx, _ERFC64_P)), _horner(absx, _ERFC64_Q))
    far = ops.divide(ops.multiply(e, _horner(absx, _ERFC64_R)), _horner(absx, _ERFC64_S))
    large = _erfc_tail(x, z, ops.select(ops.compare(absx, _c(x, 8), "LT"), near, far), 7.09782712893383996843e2)
    erf_small = ops.divide(ops.multiply(x, _horner(xsq, _ERF64_T)), _horner(xsq, _ERF64_U))
    return ops.select(ops.compare(absx, _c(x, 1), "LT"), ops.subtract(_c(x, 1), erf_small), large)


def erfc(x):
    """jax.lax.erfc: 1 - erf(x), accurate for large x: ``chlo.erfc`` as XLA expands it (Cephes'
    rational approximations; float16/bfloat16 in float32), written out in StableHLO ops.

    Args:
      x: a floating array.
    Returns:
      erfc(x), of x's shape and dtype.
    Example:
      >>> y = hf.lax.erfc(x)
    """
    (t,) = _floats("erfc", x)
    return _erfc64(t) if t.dtype == np.float64 else _upcast(_erfc32, t)


_I0E32_A = (-1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
            1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
            -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
            1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
            -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
            1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
_I0E32_B = (3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
            2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
            8.04490411014108831608e-1)
_I0E64_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
            1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
            -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
            9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9) + _I0E32_A
_I0E64_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
            3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
            1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
            -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
            7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
            -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10) + _I0E32_B
_I1E32_A = (9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
            -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
            4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
            -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
            2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
            -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1E32_B = (-3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
            -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
            7.78576235018280120474e-1)
_I1E64_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
            -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
            3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
            -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9) + _I1E32_A
_I1E64_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
            -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
            -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
            4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
            -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
            3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10) + _I1E32_B


def _bessel(z, below, above):
    """Cephes' two Chebyshev series for a scaled Bessel function of z = |x| >= 0: ``below``
    on [0, 8], ``above`` over 1/sqrt(z) past 8."""
    small = _chebyshev(ops.subtract(ops.multiply(_c(z, 0.5), z), _c(z, 2)), below)
    large = ops.divide(_chebyshev(ops.subtract(ops.divide(_c(z, 32), z), _c(z, 2)), above), ops.sqrt(z))
    return small, large, ops.compare(z, _c(z, 8), "LE")


def bessel_i0e(x):
    """jax.lax.bessel_i0e: e**-|x| I0(x), as jax lowers it (Cephes' Chebyshev series in float32 or
    float64; float16/bfloat16 in float32), in StableHLO ops.

    Args:
      x: a floating array.
    Returns:
      i0e(x), of x's shape and dtype.
    Example:
      >>> y = hf.lax.bessel_i0e(x)
    """
    (t,) = _floats("bessel_i0e", x)

    def i0e(v):
        wide = v.dtype == np.float64
        small, large, below = _bessel(ops.abs(v), _I0E64_A if wide else _I0E32_A, _I0E64_B if wide else _I0E32_B)
        return ops.select(below, small, large)
    return _upcast(i0e, t)


def bessel_i1e(x):
    """jax.lax.bessel_i1e: e**-|x| I1(x): ``chlo.bessel_i1e`` as XLA expands it (Cephes' Chebyshev
    series; float16/bfloat16 in float32), in StableHLO ops.

    Args:
      x: a floating array.
    Returns:
      i1e(x), of x's shape and dtype.
    Example:
      >>> y = hf.lax.bessel_i1e(x)
    """
    (t,) = _floats("bessel_i1e", x)

    def i1e(v):
        wide = v.dtype == np.float64
        z = ops.abs(v)
        small, large, below = _bessel(z, _I1E64_A if wide else _I1E32_A, _I1E64_B if wide else _I1E32_B)
        return ops.multiply(ops.sign(v), ops.select(below, ops.multiply(z, small), large))
    return _upcast(i1e, t)


_ZETA = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15, 1.1646782814350067249e14,
         -2.950130727918164224e12, 7.47242496e10, -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0,
         -720.0, 12.0)


def _zeta(x, q):
    """The Hurwitz zeta function by Euler-Maclaurin summation (Johansson 2015, formula 5): ten
    terms of the sum, then a 12-term Bernoulli tail, as XLA computes chlo.zeta."""
    neg_x, one = ops.neg(x), _c(q, 1)
    acc, power_sum = q, ops.power(q, neg_x)
    for _ in range(9):
        acc = ops.add(acc, one)
        power_sum = ops.add(power_sum, ops.power(acc, neg_x))
    acc = ops.add(acc, one)
    q_power = ops.power(acc, neg_x)
    correction = ops.divide(ops.multiply(q_power, acc), ops.subtract(x, _c(x, 1)))
    inv_acc_sq = ops.divide(one, ops.multiply(acc, acc))
    horner = _c(q, 0)
    for i in range(len(_ZETA) - 1):
        factor = ops.multiply(ops.add(x, _c(x, 22 - 2 * i)), ops.add(x, _c(x, 21 - 2 * i)))
        horner = ops.multiply(factor, ops.multiply(inv_acc_sq, ops.add(horner, _c(acc, 1.0 / _ZETA[i]))))
    tail = ops.multiply(q_power, ops.add(_c(q_power, 0.5), ops.multiply(ops.divide(x, acc),
                                                                         ops.add(_c(acc, 1.0 / _ZETA[-1]), horner))))
    accurate = ops.add(ops.add(power_sum, correction), tail)
    tiny = _c(acc, np.finfo(acc.dtype).smallest_subnormal)
    out = ops.select(ops.compare(ops.abs(q_power), ops.multiply(ops.abs(power_sum), tiny), "LT"), power_sum, accurate)
    nan, inf = _c(x, np.nan), _c(x, np.inf)
    out = ops.select(ops.compare(x, _c(x, 1), "LT"), nan, out)  # (undefined for x < 1)
    q_nonpositive = ops.compare(q, _c(q, 0), "LE")
    x_integer = ops.compare(x, ops.floor(x), "EQ")
    out = ops.select(ops.and_(q_nonpositive, ops.not_(x_integer)), nan, out)
    # a pole at every integer q <= 0: +inf for even integer x
    pole = ops.and_(q_nonpositive, ops.compare(q, ops.floor(q), "EQ"))
    even = ops.and_(x_integer, ops.compare(ops.remainder(x, _c(x, 2)), _c(x, 0), "EQ"))
    out = ops.select(pole, ops.select(even, inf, nan), out)
    return ops.select(ops.compare(x, _c(x, 1), "EQ"), inf, out)  # (the harmonic series)


def zeta(x, q):
    """jax.lax.zeta: the Hurwitz zeta function sum over n >= 0 of (n + q)**-x: ``chlo.zeta`` as XLA
    expands it (float16/bfloat16 in float32), in StableHLO ops.

    Args:
      x, q: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      zeta(x, q), of the broadcast shape.
    Example:
      >>> y = hf.lax.zeta(np.float32(2), q)
    """
    return _upcast(_zeta, *_floats("zeta", x, q))


def polygamma(m, x):
    """jax.lax.polygamma: the m-th derivative of digamma, (-1)**(m+1) m! zeta(m + 1, x) (digamma
    for m = 0, NaN unless m is a natural number): ``chlo.polygamma`` as XLA expands it, in
    StableHLO ops.

    Args:
      m, x: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      The polygamma function, of the broadcast shape.
    Example:
      >>> y = hf.lax.polygamma(np.float32(1), x)   # trigamma
    """
    def poly(n, v):
        sign = ops.subtract(ops.multiply(_c(v, 2), ops.remainder(n, _c(n, 2))), _c(v, 1))
        n1 = ops.add(n, _c(v, 1))
        out = ops.multiply(ops.multiply(sign, ops.exp(ops.lgamma(n1))), _zeta(n1, v))
        out = ops.select(ops.compare(n, _c(v, 0), "EQ"), ops.digamma(v), out)
        natural = ops.and_(ops.compare(n, ops.floor(n), "EQ"), ops.compare(n, _c(v, 0), "GE"))
        return ops.select(natural, out, _c(v, np.nan))
    return _upcast(poly, *_floats("polygamma", m, x))


# ---------------------------------------------------------------- jax's loops: betainc, igamma derivatives

def _any(pred):
    return ops.reduce(pred, False, tuple(range(pred.ndim)), "or")


def _broadcast_up(name, fn, *args):
    """jax's _up_and_broadcast: one floating dtype and shape, float16/bfloat16 in float32."""
    return _upcast(fn, *_floats(name, *args))


def _lentz(num_iterations, small, threshold, numerator, denominator, inputs):
    """The Lentz-Thompson-Barnett evaluation of a continued fraction, as jax's (a while loop
    until every element has converged or ``num_iterations`` ran)."""
    def cond(values):
        return ew.bitwise_and(ew.lt(values[0], np.int32(num_iterations)), values[1])

    def body(values):
        i, _, c, d, h = values
        a, b = numerator(i, *inputs), denominator(i, *inputs)
        c = ops.add(b, ops.divide(a, c))
        tiny = _c(c, small)
        c = ops.select(ops.compare(ops.abs(c), tiny, "LT"), tiny, c)
        d = ops.add(b, ops.multiply(a, d))
        d = ops.select(ops.compare(ops.abs(d), tiny, "LT"), tiny, d)
        d = ops.divide(_c(d, 1), d)
        delta = ops.multiply(c, d)
        h = ops.multiply(h, delta)
        unconverged = _any(ops.compare(ops.abs(ops.subtract(delta, _c(delta, 1))), _c(delta, threshold), "GE"))
        return [ops.add(i, _c(i, 1)), unconverged, c, d, h]

    b0 = denominator(ops.constant(np.int32(0)), *inputs)
    h = ops.select(ops.compare(ops.abs(b0), _c(b0, small), "LT"), _c(b0, small), b0)
    return while_loop(cond, body, [np.int32(1), np.bool_(True), h, _c(h, 0), h])[4]


def _betainc(a, b, x):
    dtype = a.dtype
    shape = a.shape

    def iteration_of(i):
        return ops.broadcast_in_dim(i, shape, ())

    def numerator(i, a, b, x):
        # the partial numerators of dlmf.nist.gov/8.17.E23 (1 for the first)
        n = iteration_of(i)
        even = ops.compare(ops.remainder(n, _c(n, 2)), _c(n, 0), "EQ")
        first = ops.compare(n, _c(n, 1), "EQ")
        m_int = ops.divide(ops.subtract(n, _c(n, 1)), _c(n, 2))
        m_zero = ops.compare(m_int, _c(m_int, 0), "EQ")
        m = ops.convert(m_int, dtype)
        one, two = _c(a, 1), _c(a, 2)
        a_2m = ops.add(a, ops.multiply(two, m))
        zero_term = ops.divide(ops.multiply(ops.neg(ops.add(a, b)), x), ops.add(a, one))
        even_term = ops.select(m_zero, zero_term, ops.divide(
            ops.multiply(ops.multiply(ops.neg(ops.add(a, m)), ops.add(ops.add(a, b), m)), x),
            ops.multiply(a_2m, ops.add(a_2m, one))))
        odd_term = ops.divide(ops.multiply(ops.multiply(m, ops.subtract(b, m)), x),
                              ops.multiply(ops.subtract(a_2m, one), a_2m))
        return ops.select(first, _c(x, 1), ops.select(even, even_term, odd_term))

    def denominator(i, a, b, x):
        n = iteration_of(i)
        return ops.select(ops.compare(n, _c(n, 0), "EQ"), _c(x, 0), _c(x, 1))

    def eq(v, value):
        return ops.compare(v, _c(v, value), "EQ")

    def lt(v, value):
        return ops.compare(v, _c(v, value), "LT")

    a_zero = ops.or_(eq(a, 0), eq(b, np.inf))
    b_zero = ops.or_(eq(b, 0), eq(a, np.inf))
    x_zero, x_one = eq(x, 0), eq(x, 1)
    nan_in = ops.or_(ops.or_(ops.compare(a, a, "NE"), ops.compare(b, b, "NE")), ops.compare(x, x, "NE"))
    result_zero = ops.or_(ops.and_(b_zero, ops.not_(x_one)), ops.and_(a_zero, x_zero))
    result_one = ops.or_(ops.and_(a_zero, ops.not_(x_zero)), ops.and_(b_zero, x_one))
    result_nan = ops.or_(ops.or_(ops.or_(lt(a, 0), lt(b, 0)), lt(x, 0)), ops.compare(x, _c(x, 1), "GT"))
    result_nan = ops.or_(result_nan, ops.or_(ops.and_(a_zero, b_zero), nan_in))
    # the fraction converges fast for x < (a + 1) / (a + b + 2); else use I_x(a, b) = 1 - I_(1-x)(b, a)
    fast = ops.compare(x, ops.divide(ops.add(a, _c(a, 1)), ops.add(ops.add(a, b), _c(b, 2))), "LT")
    a, b = ops.select(fast, a, b), ops.select(fast, b, a)
    x = ops.select(fast, x, ops.subtract(_c(x, 1), x))
    eps = np.finfo(dtype).eps / 2
    fraction = _lentz(200 if dtype == np.float32 else 600, eps, eps, numerator, denominator, [a, b, x])
    very_small = np.finfo(dtype).tiny * 2
    lbeta_small_a = ops.subtract(ops.lgamma(b), ops.lgamma(ops.add(a, b)))
    lbeta = ops.add(ops.lgamma(a), lbeta_small_a)
    log1m_x = ops.log1p(ops.neg(x))
    factor = ops.select(ops.compare(a, _c(a, very_small), "LT"),
                        ops.exp(ops.subtract(ops.multiply(log1m_x, b), lbeta_small_a)),
                        ops.divide(ops.exp(ops.subtract(ops.add(ops.multiply(ops.log(x), a),
                                                                ops.multiply(log1m_x, b)), lbeta)), a))
    out = ops.multiply(fraction, factor)
    out = ops.select(fast, out, ops.subtract(_c(out, 1), out))
    out = ops.select(result_zero, _c(out, 0), out)
    out = ops.select(result_one, _c(out, 1), out)
    return ops.select(result_nan, _c(out, np.nan), out)


def betainc(a, b, x):
    """jax.lax.betainc: the regularized incomplete beta function I_x(a, b), as jax lowers it (a
    ``stablehlo.while`` evaluating its continued fraction; float16/bfloat16 in float32).

    Args:
      a, b, x: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      I_x(a, b), of the broadcast shape.
    Example:
      >>> y = hf.lax.betainc(a, b, x)
    """
    return _broadcast_up("betainc", _betainc, a, b, x)


_VALUE, _DERIVATIVE, _SAMPLE_DERIVATIVE = "value", "derivative", "sample derivative"


def _igamma_series(ax, x, a, enabled, mode):
    """jax's series for P(a, x) and its derivative in a (x < a or x <= 1), a while loop."""
    eps = np.finfo(a.dtype).eps

    def body(values):
        on, r, c, ans, x, dc_da, dans_da = values
        r = ops.add(r, _c(r, 1))
        dc_da = ops.subtract(ops.multiply(dc_da, ops.divide(x, r)), ops.divide(ops.multiply(c, x), ops.multiply(r, r)))
        dans_da = ops.add(dans_da, dc_da)
        c = ops.multiply(c, ops.divide(x, r))
        ans = ops.add(ans, c)
        if mode == _VALUE:
            more = ops.compare(ops.divide(c, ans), _c(c, eps), "GT")
        else:
            more = ops.compare(ops.abs(ops.divide(dc_da, dans_da)), _c(c, eps), "GT")
        new = (r, c, ans, x, dc_da, dans_da)
        return (ops.and_(on, more), *(ops.select(on, n, old) for n, old in zip(new, values[1:])))

    init = (enabled, a, _c(a, 1), _c(a, 1), x, _c(a, 0), _c(a, 0))
    _, _, _, ans, _, _, dans_da = while_loop(lambda v: _any(v[0]), body, init)
    if mode == _VALUE:
        return ops.divide(ops.multiply(ans, ax), a)
    dlogax_da = ops.subtract(ops.log(x), ops.digamma(ops.add(a, _c(a, 1))))
    if mode == _DERIVATIVE:
        return ops.divide(ops.multiply(ax, ops.add(ops.multiply(ans, dlogax_da), dans_da)), a)
    return ops.divide(ops.multiply(ops.neg(ops.add(dans_da, ops.multiply(ans, dlogax_da))), x), a)


def _igammac_continued_fraction(ax, x, a, enabled, mode):
    """jax's continued fraction for Q(a, x) and its derivative in a, a while loop (at most 2000
    steps), rescaled when the convergents grow past 1/eps."""
    eps = np.finfo(a.dtype).eps

    def cond(values):
        return ops.and_(ops.compare(values[5], _c(values[5], 2000), "LT"), _any(values[0]))

    def body(values):
        (on, ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans) = values
        c = ops.add(c, _c(c, 1))
        y = ops.add(y, _c(y, 1))
        z = ops.add(z, _c(z, 2))
        yc = ew.mul(y, c)  # (c, the step count, is 0-d)
        pk = ops.subtract(ops.multiply(pkm1, z), ops.multiply(pkm2, yc))
        qk = ops.subtract(ops.multiply(qkm1, z), ops.multiply(qkm2, yc))
        nonzero = ops.compare(qk, _c(qk, 0), "NE")
        r = ops.divide(pk, qk)
        t = ops.select(nonzero, ops.abs(ops.divide(ops.subtract(ans, r), r)), _c(r, 1))
        ans = ops.select(nonzero, r, ans)
        dpk = ops.add(ops.subtract(ops.subtract(ops.multiply(dpkm1, z), pkm1), ops.multiply(dpkm2, yc)),
                      ew.mul(pkm2, c))
        dqk = ops.add(ops.subtract(ops.subtract(ops.multiply(dqkm1, z), qkm1), ops.multiply(dqkm2, yc)),
                      ew.mul(qkm2, c))
        dans_new = ops.select(nonzero, ops.divide(ops.subtract(dpk, ops.multiply(ans, dqk)), qk), dans)
        grad_step = ops.select(nonzero, ops.abs(ops.subtract(dans_new, dans)), _c(dans, 1))
        pkm2, pkm1, qkm2, qkm1 = pkm1, pk, qkm1, qk
        dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1, dqkm1, dpk, dqk
        rescale = ops.compare(ops.abs(pk), ops.divide(_c(pk, 1), _c(pk, eps)), "GT")

        def scaled(v):
            return ops.select(rescale, ops.multiply(v, _c(v, eps)), v)
        pkm2, pkm1, qkm2, qkm1 = scaled(pkm2), scaled(pkm1), scaled(qkm2), scaled(qkm1)
        dpkm2, dqkm2, dpkm1, dqkm1 = scaled(dpkm2), scaled(dqkm2), scaled(dpkm1), scaled(dqkm1)
        more = (ops.compare(t, _c(t, eps), "GT") if mode == _VALUE
                else ops.compare(grad_step, _c(grad_step, eps), "GT"))
        new = (ans, t, y, z, c, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, dans_new)
        return (ops.and_(on, more), *(n if k == 4 else ops.select(on, n, old)
                                      for k, (n, old) in enumerate(zip(new, values[1:]))))

    y = ops.subtract(_c(a, 1), a)
    z = ops.add(ops.add(x, y), _c(x, 1))
    pkm1, qkm1 = ops.add(x, _c(x, 1)), ops.multiply(z, x)
    ans = ops.divide(pkm1, qkm1)
    dqkm1 = ops.neg(x)
    dans = ops.divide(ops.subtract(_c(x, 0), ops.multiply(ans, dqkm1)), qkm1)
    init = (enabled, ans, _c(x, 1), y, z, ops.constant(np.zeros((), x.dtype)), pkm1, qkm1, _c(x, 1), x, _c(x, 0),
            _c(x, 0), _c(x, 0), dqkm1, dans)
    out = while_loop(cond, body, init)
    ans, dans = out[1], out[14]
    if mode == _VALUE:
        return ops.multiply(ans, ax)
    dlogax_da = ops.subtract(ops.log(x), ops.digamma(a))
    if mode == _DERIVATIVE:
        return ops.multiply(ax, ops.add(ops.multiply(ans, dlogax_da), dans))
    return ops.neg(ops.multiply(ops.add(dans, ops.multiply(ans, dlogax_da)), x))


def _igamma_derivative(a, x, mode):
    """d/da of P(a, x) (``_DERIVATIVE``) or of a Gamma(a) sample (``_SAMPLE_DERIVATIVE``), as jax."""
    nan_in = ops.or_(ops.compare(a, a, "NE"), ops.compare(x, x, "NE"))
    x_zero = ops.compare(x, _c(x, 0), "EQ")
    domain_error = ops.or_(ops.compare(x, _c(x, 0), "LT"), ops.compare(a, _c(a, 0), "LE"))
    use_continued_fraction = ops.and_(ops.compare(x, _c(x, 1), "GT"), ops.compare(x, a, "GT"))
    log_ax = ops.subtract(ops.subtract(ops.multiply(a, ops.log(x)), x), ops.lgamma(a))
    underflow = ops.compare(log_ax, _c(log_ax, -np.log(np.finfo(a.dtype).max)), "LT")
    ax = ops.exp(log_ax)
    enabled = ops.not_(ops.or_(ops.or_(ops.or_(x_zero, domain_error), underflow), nan_in))
    out = ops.select(use_continued_fraction,
                     ops.neg(_igammac_continued_fraction(ax, x, a, ops.and_(enabled, use_continued_fraction), mode)),
                     _igamma_series(ax, x, a, ops.and_(enabled, ops.not_(use_continued_fraction)), mode))
    out = ops.select(x_zero, _c(out, 0), out)
    return ops.select(ops.or_(domain_error, nan_in), _c(out, np.nan), out)


def igamma_grad_a(a, x):
    """jax.lax.igamma_grad_a: the derivative of igamma(a, x) in a, as jax lowers it (a series or
    a continued fraction, each a ``stablehlo.while``; float16/bfloat16 in float32).

    Args:
      a, x: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      d igamma / da, of the broadcast shape.
    Example:
      >>> g = hf.lax.igamma_grad_a(a, x)
    """
    return _broadcast_up("igamma_grad_a", lambda a, x: _igamma_derivative(a, x, _DERIVATIVE), a, x)


def random_gamma_grad(*args):
    """jax.lax.random_gamma_grad(a, x): the derivative in a of a Gamma(a, 1) sample x (implicit
    reparameterization), as jax lowers it (while loops; float16/bfloat16 in float32).

    Args:
      a, x: arrays of one floating dtype (0-d or of one rank; size-1 dims broadcast).
    Returns:
      dx/da, of the broadcast shape.
    Example:
      >>> g = hf.lax.random_gamma_grad(a, samples)
    """
    if len(args) != 2:
        raise TypeError(f"hloforge.lax.random_gamma_grad takes two arguments (a, x), got {len(args)}")
    return _broadcast_up("random_gamma_grad", lambda a, x: _igamma_derivative(a, x, _SAMPLE_DERIVATIVE), *args)


__all__ = ["erf_inv", "lgamma", "digamma", "igamma", "igammac", "erfc", "bessel_i0e", "bessel_i1e", "zeta", "polygamma",
           "betainc", "igamma_grad_a", "random_gamma_grad"]
