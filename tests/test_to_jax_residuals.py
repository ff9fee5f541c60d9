"""The bridge's reverse mode saves the forward's residuals (issue 51): a training step through hf.optimize
holds no more FFTs, dots and loops than jax's own step, with the same values and gradients."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.frontend.ad.module_ad import cotangent_module, split_vjp
from hloforge.passes.pipeline import run as run_passes

from helpers import assert_close

GRID, WIDTH, LAYERS, BATCH, IN_CH = 8, 4, 2, 2, 2
COUNTED = {"fft": ("stablehlo.fft",), "dot": ("stablehlo.dot", "stablehlo.dot_general"), "while": ("stablehlo.while",)}


def op_counts(fn, *args) -> dict:
    """FFTs, dots and loops of jax.jit(fn)'s StableHLO, private functions inlined (jax calls its FFTs
    through them: each call counts)."""
    module = hf.Module.parse(jax.jit(fn).lower(*args).as_text())
    run_passes(module, "inline,symbol-dce")
    counts = module.op_counts()
    return {kind: sum(counts.get(name, 0) for name in names) for kind, names in COUNTED.items()}


def spectral_layer(h, layer, activation):
    """A Fourier layer whose weights cover every mode, so no truncation applies and the FFTs stay."""
    spectrum = jnp.einsum("bihw,iohw->bohw", jnp.fft.rfft2(h), layer["spectral"])
    mixed = jnp.fft.irfft2(spectrum, s=h.shape[-2:]) + jnp.einsum("bihw,io->bohw", h, layer["skip"])
    return activation(mixed)


def fno(params, x, activation=jnp.tanh):
    h = jnp.einsum("bihw,io->bohw", x, params["lift"])
    for layer in params["layers"]:
        h = spectral_layer(h, layer, activation)
    return jnp.einsum("bihw,io->bohw", h, params["project"])


def fno_relu(params, x):  # (jax.nn.relu is a custom_jvp: hf.optimize differentiates it with jax's rules)
    return fno(params, x, jax.nn.relu)


def fno_scanned(params, x):
    h = jnp.einsum("bihw,io->bohw", x, params["lift"])
    h, _ = jax.lax.scan(lambda h, layer: (spectral_layer(h, layer, jnp.tanh), None), h, params["layers"])
    return jnp.einsum("bihw,io->bohw", h, params["project"])


def fno_params(stacked=False, seed=0):
    rng = np.random.default_rng(seed)

    def layer():
        spectral = rng.standard_normal((2, WIDTH, WIDTH, GRID, GRID // 2 + 1)) / WIDTH
        return {"spectral": (spectral[0] + 1j * spectral[1]).astype(np.complex64),
                "skip": (rng.standard_normal((WIDTH, WIDTH)) / WIDTH).astype(np.float32)}

    layers = [layer() for _ in range(LAYERS)]
    if stacked:
        layers = tree_util.tree_map(lambda *leaves: np.stack(leaves), *layers)
    return {"lift": (rng.standard_normal((IN_CH, WIDTH)) / IN_CH).astype(np.float32), "layers": layers,
            "project": (rng.standard_normal((WIDTH, 1)) / WIDTH).astype(np.float32)}


def data(seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((BATCH, IN_CH, GRID, GRID)).astype(np.float32),
            rng.standard_normal((BATCH, 1, GRID, GRID)).astype(np.float32))


def training_step(model):
    return jax.value_and_grad(lambda params, x, y: jnp.mean((model(params, x) - y) ** 2))


def close_trees(actual, expected, rtol=1e-4, atol=1e-5):
    actual, expected = tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_close(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


@pytest.mark.parametrize("model, stacked", [(fno, False), (fno_relu, False), (fno_scanned, True)],
                         ids=["plain", "jax_rules", "scan"])
def test_a_bridged_step_holds_no_more_ffts_dots_and_loops_than_jax(model, stacked):
    params, (x, y) = fno_params(stacked), data()
    step_jax, step_hf = training_step(model), training_step(hf.optimize(model))
    jax_counts, hf_counts = op_counts(step_jax, params, x, y), op_counts(step_hf, params, x, y)
    # (forward and backward, in a loop body once when scanned: the FFTs were not truncated away)
    assert jax_counts["fft"] == 4 * (1 if stacked else LAYERS)
    for kind in COUNTED:
        assert hf_counts[kind] <= jax_counts[kind], (kind, hf_counts, jax_counts)
    close_trees(jax.jit(step_hf)(params, x, y), jax.jit(step_jax)(params, x, y))


def test_forward_mode_and_vmap_of_the_bridged_model_still_match_jax():
    params, (x, _) = fno_params(), data()
    bridged = hf.optimize(fno)
    tangent = tree_util.tree_map(lambda p: p * 0.5, params)
    close_trees(jax.jvp(lambda p: bridged(p, x), (params,), (tangent,)),
                jax.jvp(lambda p: fno(p, x), (params,), (tangent,)))
    grad_of = lambda m: jax.vmap(lambda xi: jax.grad(lambda p: jnp.sum(m(p, xi[None]) ** 2))(params))  # noqa: E731
    close_trees(grad_of(bridged)(x), grad_of(fno)(x))


def test_split_vjp_saves_what_the_backward_reads():
    x, w = np.ones(8, np.float32), np.ones(5, np.complex64)
    module = hf.trace(lambda x, w: hnp.tanh(hnp.fft.irfft(hnp.fft.rfft(x) * w, n=8)), x, w)
    forward, backward, n_residuals = split_vjp(module, (0, 1))
    assert forward.op_counts()["stablehlo.fft"] == 2 and backward.op_counts()["stablehlo.fft"] == 2
    assert "stablehlo.tanh" not in backward.op_counts()  # (tanh' reads the saved output)
    assert len(forward.signature[1]) == 1 + n_residuals
    assert len(backward.signature[0]) == 2 + n_residuals + 1 and len(backward.signature[1]) == 2
    ct = np.float32(1.0) * np.ones(8, np.float32)
    outs = forward.compile()(x, w)
    got = backward.compile()(x, w, *outs[1:], ct)
    expected = module.vjp().compile()(x, w, ct)
    close_trees(got, expected[1:])


def test_the_transpose_of_a_module_linear_in_two_like_inputs_keeps_them_apart():
    a = np.arange(1, 5, dtype=np.float32)
    module = hf.trace(lambda a, t1, t2: a * t1 + 2.0 * t2, a, a, a)
    transposed = cotangent_module(module, linear_from=1)
    ct = np.ones(4, np.float32)
    got_t1, got_t2 = transposed.compile()(a, ct)
    close_trees([got_t1, got_t2], [a, 2 * ct])


def test_a_checkpointed_body_is_recomputed_in_the_backward_not_saved():
    x = np.linspace(0.0, 1.0, 8).astype(np.float32)
    body = hf.checkpoint(lambda x: hnp.sin(hnp.sin(x) * 2.0))
    forward, backward, n_residuals = split_vjp(hf.trace(lambda x: hnp.sum(body(x)), x), (0,))
    assert n_residuals == 0  # (the backward reads x alone, as jax.checkpoint's does)
    assert backward.op_counts().get("stablehlo.sine", 0) >= 1
    f = hf.to_jax(lambda x: hnp.sum(body(x)))
    close_trees(jax.jit(jax.grad(f))(x), jax.grad(lambda x: jnp.sum(jnp.sin(jnp.sin(x) * 2.0)))(x))
