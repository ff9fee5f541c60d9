"""FFT derivatives: type x even/odd length x 1-3 axes x norm against jax, >3 axes through
hloforge.numpy.fft's decompositions, central differences, and the round trips peers get wrong."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_helpers import check_against_jax, check_finite_differences, close
import hloforge as hf
from hloforge.passes.spectral import KEEP_FFTS  # (counting FFT pairs: fft-truncate would turn them into dots)
import hloforge.numpy as hnp

NORMS = (None, "ortho", "forward")
LENGTHS = {"even": (4, 6, 8), "odd": (5, 3, 7)}
FUNCS = {"FFT": ("fftn", jnp.fft.fftn), "IFFT": ("ifftn", jnp.fft.ifftn), "RFFT": ("rfftn", jnp.fft.rfftn),
         "IRFFT": ("irfftn", jnp.fft.irfftn)}


def _input(kind, lengths, dtype_real=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    shape = (2,) + tuple(lengths)
    if kind == "IRFFT":
        shape = shape[:-1] + (lengths[-1] // 2 + 1,)
    x = rng.standard_normal(shape)
    if kind != "RFFT":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype_real if kind == "RFFT" else np.result_type(dtype_real, np.complex64))


def _pair(kind, lengths):
    """hloforge and jax functions applying the transform over the last len(lengths) axes, every norm."""
    name, jfn = FUNCS[kind]
    axes = tuple(range(-len(lengths), 0))
    s = tuple(lengths)

    def h(x):
        return tuple(getattr(hnp.fft, name)(x, s=s, axes=axes, norm=n) for n in NORMS)

    def j(x):
        return tuple(jfn(x, s=s, axes=axes, norm=n) for n in NORMS)
    return h, j


@pytest.mark.parametrize("naxes", [1, 2, 3])
@pytest.mark.parametrize("parity", ["even", "odd"])
@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft_against_jax(kind, parity, naxes):
    lengths = LENGTHS[parity][:naxes]
    h, j = _pair(kind, lengths)
    check_against_jax(h, j, _input(kind, lengths))


@pytest.mark.parametrize("kind", ["FFT", "IFFT", "RFFT", "IRFFT"])
def test_fft_more_than_three_axes(kind):
    lengths = (3, 4, 2, 5)
    h, j = _pair(kind, lengths)
    check_against_jax(h, j, _input(kind, lengths))


@pytest.mark.parametrize("parity", ["even", "odd"])
@pytest.mark.parametrize("kind", ["RFFT", "IRFFT", "FFT"])
def test_fft_finite_differences(kind, parity):
    lengths = LENGTHS[parity][:2]
    h, _ = _pair(kind, lengths)
    check_finite_differences(h, _input(kind, lengths, seed=4))


def test_single_precision():
    for kind in ("RFFT", "IRFFT"):
        h, j = _pair(kind, (6,))
        check_against_jax(h, j, _input(kind, (6,), np.float32))


def test_gradient_of_ifft_of_fft_is_identity():
    """Reactant.jl #2693: d/dx sum(real(ifft(fft(x))) * w) must be w."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8,)) + 1j * rng.standard_normal((8,))
    w = rng.standard_normal(8)
    g = hf.grad(lambda x: hnp.sum(hnp.real(hnp.fft.ifft(hnp.fft.fft(x))) * w))(x)
    close(g, w.astype(np.complex128))
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(lambda x: jnp.sum(jnp.real(jnp.fft.ifft(jnp.fft.fft(x))) * w)))(x)
    close(g, np.asarray(want))


def test_complex_loss_gradients_are_conjugated_like_jax():
    rng = np.random.default_rng(1)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)

    def loss(xp, fft):
        def f(z):
            y = fft.rfft(xp.real(fft.fft(z * z)), norm="ortho")
            return xp.sum(xp.abs(y) ** 2) + xp.sum(xp.imag(z) * xp.real(z))
        return f
    got = hf.grad(loss(hnp, hnp.fft))(z)
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(loss(jnp, jnp.fft)))(z)
    close(got, np.asarray(want))


def _fft_count(m):
    return m.op_counts().get("stablehlo.fft", 0)


@pytest.mark.parametrize("n", [8, 7])
def test_optimized_gradient_of_rfft_irfft_round_trip_has_no_fft(n):
    w = np.random.default_rng(0).standard_normal((3, n))

    def loss(x):
        return hnp.sum(hnp.fft.irfft(hnp.fft.rfft(x), n=n) * w)
    m = hf.jit(hf.grad(loss)).lower(np.ones((3, n)))
    assert _fft_count(m) == 4
    m.optimize()
    assert _fft_count(m) == 0
    close(hf.jit(hf.grad(loss))(np.ones((3, n))), w)


def test_optimized_value_and_grad_of_fft_ifft_round_trip_has_no_fft():
    def loss(x):
        return hnp.sum(hnp.abs(hnp.fft.fft(hnp.fft.ifft(x), norm="ortho") * 2.0) ** 2)
    x = np.ones(6, np.complex128)
    m = hf.jit(hf.value_and_grad(loss)).lower(x)
    m.optimize()
    assert _fft_count(m) == 0


def test_fno_gradient_keeps_only_the_fft_pairs_the_forward_needs():
    layer = hf.nn.SpectralConv(2, (3, 3), 2, 2)
    w = layer.init(0, np.complex128)
    x = np.random.default_rng(0).standard_normal((1, 2, 8, 8))

    def loss(w, x):
        return hnp.sum(layer(x, w) ** 2)
    fwd = hf.jit(loss).lower(w, x)
    fwd.optimize(cost_model=KEEP_FFTS)
    g = hf.jit(hf.value_and_grad(loss)).lower(w, x)
    g.optimize(cost_model=KEEP_FFTS)
    # the forward's rfft + irfft, and the backward's: the irfft's transpose (an rfft) and nothing for
    # the rfft of x (x is not differentiated)
    assert _fft_count(fwd) == 2
    assert _fft_count(g) == 3
    gx = hf.jit(hf.grad(loss, argnums=(0, 1))).lower(w, x)
    gx.optimize(cost_model=KEEP_FFTS)
    assert _fft_count(gx) == 4


def test_fno2d_gradient_matches_jax():
    import fno2d
    params = fno2d.init(in_ch=2, width=4, modes=3, layers=2)
    x = np.random.default_rng(2).standard_normal((2, 2, 8, 8)).astype(np.float32)

    def loss(xp, forward):
        return lambda p, x: xp.sum(forward(p, x) ** 2)
    got = hf.grad(loss(hnp, fno2d.forward))(params, x)
    want = jax.jit(jax.grad(loss(jnp, lambda p, x: fno2d._forward(jnp, p, x))))(params, x)
    close(got, want, rtol=2e-4)


def test_nn_fno_training_gradient_fft_pairs():
    model = hf.nn.FNO(n_dims=2, modes=3, width=4, n_layers=2, in_channels=1, out_channels=1, hidden=8,
                      padding=2)
    params = model.init(0)
    x = np.random.default_rng(0).standard_normal((2, 1, 8, 8)).astype(np.float32)

    def loss(params, x):
        return hnp.mean(model(x, params) ** 2)
    fwd = hf.jit(loss).lower(params, x)
    fwd.optimize(cost_model=KEEP_FFTS)
    step = hf.jit(hf.value_and_grad(loss)).lower(params, x)
    step.optimize(cost_model=KEEP_FFTS)
    assert _fft_count(fwd) == 4          # rfft + irfft per layer
    assert _fft_count(step) == 8         # and their two transposes per layer, nothing more
