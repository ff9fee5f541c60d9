"""hf.to_jax and hf.optimize: hloforge programs inside jax.jit, jax's AD and jax.vmap, against the same
function written in jax."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import tree_util

import hloforge as hf
from hloforge import numpy as hnp
from hloforge.frontend import jax_api, to_jax as bridge
from hloforge.runtime import pjrt

from helpers import assert_close, platform_rtol

RNG = np.random.default_rng(7)
X = RNG.standard_normal(5).astype(np.float32)
W = RNG.standard_normal(5).astype(np.float32)
XS = RNG.standard_normal((3, 5)).astype(np.float32)


def hf_loss(x, w):
    return hnp.sum(hnp.sin(x * w) ** 2 + hnp.exp(0.3 * x))


def jax_loss(x, w):
    return jnp.sum(jnp.sin(x * w) ** 2 + jnp.exp(0.3 * x))


BRIDGED = hf.to_jax(hf_loss)


def close_trees(actual, expected, rtol=2e-5, atol=2e-6):
    if platform_rtol(rtol) != rtol:  # (the platform's own atol, relative to the values' scale)
        rtol, atol = platform_rtol(rtol), None
    actual, expected = tree_util.tree_leaves(actual), tree_util.tree_leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_close(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- every transformation

TRANSFORMS = {
    "eager": lambda f: f(X, W),
    "jit": lambda f: jax.jit(f)(X, W),
    "grad": lambda f: jax.jit(jax.grad(f, (0, 1)))(X, W),
    "value_and_grad": lambda f: jax.value_and_grad(f)(X, W),
    "vjp": lambda f: jax.vjp(f, X, W)[1](np.float32(2.0)),
    "jvp": lambda f: jax.jvp(f, (X, W), (W, X)),
    "jacfwd": lambda f: jax.jacfwd(f, (0, 1))(X, W),
    "jacrev": lambda f: jax.jacrev(f)(X, W),
    "hessian": lambda f: jax.hessian(f)(X, W),
    "grad_of_grad": lambda f: jax.grad(lambda x: jnp.sum(jax.grad(f)(x, W) ** 2))(X),
    "jacfwd_of_jacfwd": lambda f: jax.jacfwd(jax.jacfwd(f))(X, W),
    "grad_of_jacfwd": lambda f: jax.grad(lambda x: jnp.sum(jax.jacfwd(f)(x, W)))(X),
    "vmap": lambda f: jax.vmap(f, (0, None))(XS, W),
    "vmap_of_grad": lambda f: jax.vmap(jax.grad(f), (0, None))(XS, W),
    "jit_of_vmap": lambda f: jax.jit(jax.vmap(f))(XS, XS * 2),
    "grad_of_vmap": lambda f: jax.grad(lambda w: jnp.sum(jax.vmap(f, (0, None))(XS, w)))(W),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_every_transformation_matches_jax(name):
    close_trees(TRANSFORMS[name](BRIDGED), TRANSFORMS[name](jax_loss))


def test_modules_from_files_and_from_jax_transform_too(tmp_path):
    text = jax.jit(jax_loss).lower(X, W).as_text()
    path = tmp_path / "loss.mlir"
    path.write_text(text)
    for module in (hf.Module.parse(text), hf.Module.load(path), hf.trace(hf_loss, X, W)):
        f = hf.to_jax(module)
        for name in ("jit", "grad", "hessian", "vmap_of_grad"):
            close_trees(TRANSFORMS[name](f), TRANSFORMS[name](jax_loss))


def test_a_shape_polymorphic_module_is_refined_per_call():
    spec = jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), jnp.float32)
    exported = jax.export.export(jax.jit(lambda x: jnp.sin(x) * 2))(spec)
    f = hf.to_jax(hf.Module.parse(exported.mlir_module_serialized))
    for n in (3, 5):
        x = RNG.standard_normal(n).astype(np.float32)
        close_trees(jax.jit(f)(x), np.sin(x) * 2)
        close_trees(jax.grad(lambda x: f(x).sum())(x), 2 * np.cos(x))
    close_trees(jax.vmap(f)(XS), np.sin(XS) * 2)  # (batches the n = 5 program)
    assert f.cache_size() == 2
    with pytest.raises(TypeError, match=r"argument 0 must be float32\[\?\], got float32\[2, 2\]"):
        f(np.ones((2, 2), np.float32))


def test_complex_weights_follow_jax_conventions():
    z = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex64)

    def hf_fn(z, x):
        return hnp.sum(hnp.abs(hnp.exp(z * 0.5) * x) ** 2)

    def jax_fn(z, x):
        return jnp.sum(jnp.abs(jnp.exp(z * 0.5) * x) ** 2)

    f = hf.to_jax(hf_fn)
    x = X[:4]
    close_trees(jax.grad(f, (0, 1))(z, x), jax.grad(jax_fn, (0, 1))(z, x))
    close_trees(jax.jvp(f, (z, x), (z, x)), jax.jvp(jax_fn, (z, x), (z, x)))
    holo = hf.to_jax(lambda z: hnp.sin(z) * z)
    close_trees(jax.jacfwd(holo, holomorphic=True)(z), jax.jacfwd(lambda z: jnp.sin(z) * z, holomorphic=True)(z))


def test_pytrees_kwargs_integers_and_jax_dtypes():
    def hf_fn(params, x, *, scale):
        return {"y": hnp.tanh(x @ params["w"]) * scale, "count": params["n"] + 1}

    def jax_fn(params, x, *, scale):
        return {"y": jnp.tanh(x @ params["w"]) * scale, "count": params["n"] + 1}

    params = {"w": RNG.standard_normal((5, 3)).astype(np.float32), "n": np.int32(4)}
    f = hf.to_jax(hf_fn)
    close_trees(jax.jit(f)(params, XS, scale=2.0), jax_fn(params, XS, scale=2.0))
    grads = jax.grad(lambda p: jnp.sum(f(p, XS, scale=2.0)["y"]), allow_int=True)(params)
    want = jax.grad(lambda p: jnp.sum(jax_fn(p, XS, scale=2.0)["y"]), allow_int=True)(params)
    close_trees(grads["w"], want["w"])
    assert grads["n"].dtype == jax.dtypes.float0
    out = hf.to_jax(lambda x: x * 2)(jnp.ones(3, jnp.bfloat16))
    assert out.dtype == jnp.bfloat16 and isinstance(out, jax.Array)


def test_float64_under_jax_enable_x64_round_trips():
    x = np.array([1 + 2 ** -40, 3.0], np.float64)
    with jax.enable_x64(True):
        f = hf.to_jax(lambda x: x * 3.0)
        got = jax.jit(f)(x)
        assert got.dtype == np.float64
        np.testing.assert_array_equal(np.asarray(got), x * 3.0)
        np.testing.assert_array_equal(np.asarray(jax.grad(lambda x: f(x).sum())(x)), np.full(2, 3.0))


def test_a_new_signature_traces_again_and_the_same_one_does_not():
    f = hf.to_jax(hf_loss)
    f(X, W)
    jax.jit(f)(X, W)
    assert f.cache_size() == 1
    f(XS[0], W)  # same shapes
    assert f.cache_size() == 1
    f(np.ones(7, np.float32), np.ones(7, np.float32))
    assert f.cache_size() == 2


def test_a_jax_module_lowered_with_shardings_is_called_as_one_devices_program():
    """jax.jit with shardings lowers to Shardy's sdy.mesh and sdy.sharding annotations (and
    sdy.sharding_constraint ops), which StableHLO's portable artifacts cannot hold: the bridge drops
    them (one device's program)."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    shard, whole = NamedSharding(mesh, PartitionSpec("x")), NamedSharding(mesh, PartitionSpec())
    lowered = jax.jit(lambda x: jnp.sin(x) * 2, in_shardings=shard, out_shardings=whole).lower(jnp.ones(4))
    constrained = jax.jit(lambda x: jax.lax.with_sharding_constraint(jnp.sin(x) * 2, shard)).lower(jnp.ones(4))
    assert "sdy.mesh" in lowered.as_text() and "sdy.sharding_constraint" in constrained.as_text()
    x = RNG.standard_normal(4).astype(np.float32)
    g, h = (hf.to_jax(hf.Module.parse(low.as_text())) for low in (lowered, constrained))
    close_trees([jax.jit(g)(x), h(x), jax.vmap(g)(np.stack([x, x]))], [2 * np.sin(x), 2 * np.sin(x), 2 * np.sin([x, x])])
    close_trees(jax.grad(lambda x: g(x).sum())(x), 2 * np.cos(x))
    assert hf.Module.parse(lowered.as_text()).without_shardings().text.count("sdy") == 0
    inside = hf.from_jax(lambda x: jax.lax.with_sharding_constraint(jnp.sin(x) * 2, shard))  # (hf.jit shards)
    close_trees([hf.jit(inside)(x), hf.grad(lambda x: hnp.sum(inside(x)))(x), hf.vmap(inside)(np.stack([x, x]))],
                [2 * np.sin(x), 2 * np.cos(x), 2 * np.sin([x, x])])
    manual = """module {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
        manual_axes={"x"} (%arg1: tensor<2xf32>) {
      %1 = stablehlo.sine %arg1 : tensor<2xf32>
      sdy.return %1 : tensor<2xf32>
    } : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""
    with pytest.raises(ValueError, match="Module.without_shardings: the module holds sdy.manual_computation"):
        hf.Module.parse(manual).without_shardings()


def test_inside_jit_the_module_is_inlined_and_optimized():
    f = hf.to_jax(lambda x: hnp.fft.irfft(hnp.fft.rfft(x), n=8) * 2.0)
    text = jax.jit(f).lower(np.ones(8, np.float32)).as_text()
    assert "stablehlo.fft" not in text and "custom_call" not in text
    kept = hf.to_jax(lambda x: hnp.fft.irfft(hnp.fft.rfft(x), n=8) * 2.0, optimize=False)
    assert "stablehlo.fft" in jax.jit(kept).lower(np.ones(8, np.float32)).as_text()
    x = RNG.standard_normal(8).astype(np.float32)
    close_trees(jax.jit(f)(x), 2 * x)


def test_programs_with_host_callbacks_run_from_a_jax_callback(capsys):
    """jax cannot inline hloforge's host callbacks (their Python functions are hloforge's): such a
    program runs compiled by hloforge from a jax.pure_callback, under jit, grad and vmap."""
    seen = []

    def f(x):
        hf.debug.print("sum {}", hnp.sum(x))
        y = hf.pure_callback(np.cos, hf.ShapeDtypeStruct(x.shape, x.dtype), x, vmap_method="sequential")
        hf.debug.callback(lambda v: seen.append(v.copy()), y)
        return hnp.sin(x) * y

    g = hf.to_jax(f)
    x = RNG.standard_normal(3).astype(np.float32)
    assert "xla_ffi_python_cpu_callback" in jax.jit(g).lower(x).as_text()
    capsys.readouterr()
    close_trees(jax.jit(g)(x), np.sin(x) * np.cos(x))
    assert capsys.readouterr().out == f"sum {np.sum(x)}\n" and len(seen) == 1
    close_trees(jax.vmap(g)(np.stack([x, 2 * x])), np.sin([x, 2 * x]) * np.cos([x, 2 * x]))
    assert capsys.readouterr().out.splitlines() == [f"sum {np.sum(x)}", f"sum {np.sum(2 * x)}"]
    with pytest.raises(ValueError, match="hloforge.pure_callback: pure callbacks do not support differentiation"):
        jax.grad(lambda x: g(x).sum())(x)
    h = hf.to_jax(lambda x: (hf.debug.print("x {}", x), hnp.sin(x) ** 2)[1])
    close_trees(jax.jit(jax.grad(lambda x: h(x).sum()))(x), np.sin(2 * x), rtol=1e-6)
    assert f"x {x}" in capsys.readouterr().out


def spectral_1d(x, w):
    return hnp.fft.irfft(hnp.pad(hnp.fft.rfft(x)[:, :12] * w, [(0, 0), (0, 21)]), n=64)


def test_eager_calls_compile_partial_dfts_with_hloforges_options():
    x = RNG.standard_normal((16, 64)).astype(np.float32)
    w = (RNG.standard_normal(12) + 1j * RNG.standard_normal(12)).astype(np.complex64)
    f = hf.to_jax(spectral_1d)
    program = jax.make_jaxpr(f)(x, w).eqns[0].params["program"]
    assert program.compiler_options == pjrt.backend_options(jax_api.default_platform(), partial_dfts=True)
    eager = f(x, w)
    (jitted,) = program.eager.values()
    compiled = jitted.lower(x, w).compile().as_text()
    assert "__ynn_fusion" not in compiled and "fft(" not in compiled
    h = hf.jit(spectral_1d)
    h(x, w)
    h.finish_compiling()
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(h(x, w)))
    assert jax.make_jaxpr(BRIDGED)(X, W).eqns[0].params["program"].compiler_options == pjrt.backend_options(
        jax_api.default_platform())  # (no DFTs: no YNNPACK option)


@pytest.mark.parametrize("ins, outs", [
    ([((3, 5), np.float32)], [((), np.float32)]),
    ([((2,), np.int32), ((4, 4), np.complex64), ((), np.float32)], [((4, 4), np.complex64), ((2,), np.int32)]),
    ([((2, 3), np.float64)], [((3,), np.float64), ((), np.uint32)]),
])
def test_the_exported_call_is_the_one_jax_export_makes_for_that_signature(ins, outs):
    """jax_api.exported builds the Exported without exporting a stand-in: every field but the module and
    its name (and the vjp jax attaches to its own) is what jax.export.export gives a jitted function of that
    signature, so a jax version that changes them fails here rather than inside a user's jit."""
    import dataclasses
    from jax import export
    with jax_api.x64_if(True):
        specs = [jax.ShapeDtypeStruct(s, d) for s, d in ins]
        jax_made = export.export(jax.jit(lambda *a: tuple(jnp.zeros(s, d) for s, d in outs)))(*specs)
        ours = jax_api.exported(b"", ins, outs, "hloforge_f")
    skip = {"fun_name", "mlir_module_serialized", "module_kept_var_idx", "_get_vjp"}
    for field in dataclasses.fields(export.Exported):
        if field.name not in skip:
            assert getattr(ours, field.name) == getattr(jax_made, field.name), field.name
    assert ours.module_kept_var_idx == tuple(range(len(ins))) and ours.fun_name == "hloforge_f"


def test_derivative_modules_are_optimized_too():
    f = hf.to_jax(lambda x: hnp.sum(hnp.fft.irfft(hnp.fft.rfft(x), n=8) ** 2))
    text = jax.jit(jax.grad(f)).lower(np.ones(8, np.float32)).as_text()
    assert "stablehlo.fft" not in text
    x = RNG.standard_normal(8).astype(np.float32)
    close_trees(jax.grad(f)(x), 2 * x)


def test_custom_vjp_rules_inside_are_kept():
    @hf.custom_vjp
    def clipped(x):
        return x

    clipped.defvjp(lambda x: (x, None), lambda _, g: (hnp.clip(g, -0.1, 0.1),))
    f = hf.to_jax(lambda x: hnp.sum(clipped(x) * 5.0))
    np.testing.assert_allclose(np.asarray(jax.grad(f)(X)), np.full(5, 0.1, np.float32))


def test_a_to_jax_function_inside_an_hloforge_trace_runs_inline():
    f = hf.to_jax(hf_loss)
    g = hf.jit(lambda x, w: f(x, w) * 2.0)
    close_trees(g(X, W), 2 * jax_loss(X, W))
    m = hf.to_jax(hf.trace(hf_loss, X, W))
    close_trees(hf.jit(lambda x, w: m(x, w) + 1.0)(X, W), jax_loss(X, W) + 1.0)


def test_optax_training_loop_through_to_jax():
    optax = pytest.importorskip("optax")
    model = hf.to_jax(lambda p, x: hnp.tanh(x @ p["w"] + p["b"]))
    jax_model = lambda p, x: jnp.tanh(x @ p["w"] + p["b"])  # noqa: E731
    y = RNG.standard_normal((3, 2)).astype(np.float32)
    params = {"w": RNG.standard_normal((5, 2)).astype(np.float32), "b": np.zeros(2, np.float32)}
    optimizer = optax.adam(0.05)
    losses = {}
    for name, m in (("hloforge", model), ("jax", jax_model)):
        @jax.jit
        def step(p, s):
            loss, g = jax.value_and_grad(lambda p: jnp.mean((m(p, XS) - y) ** 2))(p)
            updates, s = optimizer.update(g, s, p)
            return optax.apply_updates(p, updates), s, loss
        p, s, out = params, optimizer.init(params), []
        for _ in range(5):
            p, s, loss = step(p, s)
            out.append(float(loss))
        losses[name] = out
    assert_close(np.array(losses["hloforge"]), np.array(losses["jax"]), rtol=1e-5)
    assert losses["jax"][-1] < losses["jax"][0]


# ---------------------------------------------------------------- hf.optimize: pure jax functions

def _clip(a):
    return a


_clip_gradient = jax.custom_vjp(_clip)
_clip_gradient.defvjp(lambda a: (a, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))


@pytest.mark.parametrize("fn, forward_mode", [
    (lambda a: jnp.sum(jax.lax.stop_gradient(a) * a), True),
    (lambda a: jnp.sum(_clip_gradient(a) * 5), False),  # (jax has no jvp of a custom_vjp function)
    (lambda a: jnp.sum(jax.nn.relu(a)), True),
    (lambda a: jnp.sum(jnp.sin(a) * jnp.maximum(a, 0.0)), True),
], ids=["stop_gradient", "custom_vjp", "relu_at_0", "plain"])
def test_optimize_keeps_jax_derivatives(fn, forward_mode):
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    f = hf.optimize(fn)
    close_trees(jax.grad(f)(x), jax.grad(fn)(x))
    if forward_mode:
        close_trees(jax.jvp(f, (x,), (x,)), jax.jvp(fn, (x,), (x,)))
    else:
        with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
            jax.jvp(f, (x,), (x,))
    close_trees(jax.vmap(jax.grad(f))(np.stack([x, -x])), jax.vmap(jax.grad(fn))(np.stack([x, -x])))


def test_second_derivatives_keep_stop_gradient_and_custom_jvp():
    """A source with derivatives of its own is split before the passes, not after (Program.split): parts
    cut from the optimized vjp would differentiate through stop_gradient at second order (issue 51)."""
    fn = lambda a: jnp.sum(jax.lax.stop_gradient(a) * a * a) + jnp.sum(jax.nn.relu(a) * a)  # noqa: E731
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    close_trees(jax.hessian(hf.optimize(fn))(x), jax.hessian(fn)(x))
    close_trees(jax.grad(lambda x: jnp.sum(jax.grad(hf.optimize(fn))(x) ** 2))(x),
                jax.grad(lambda x: jnp.sum(jax.grad(fn)(x) ** 2))(x))


def test_forward_mode_of_a_loop_without_reverse_mode():
    """A while loop without a static trip count has no reverse mode, so no split (Program.split is
    None): jax.jvp and jacfwd transpose nothing and run the tangent program, as before issue 51."""
    fn = lambda x: jax.lax.while_loop(lambda c: jnp.sum(c) < 10.0, lambda c: c * 1.5 + 0.1, x)  # noqa: E731
    x = np.array([0.5, 1.0], np.float32)
    close_trees(jax.jvp(hf.optimize(fn), (x,), (np.ones_like(x),)), jax.jvp(fn, (x,), (np.ones_like(x),)))
    close_trees(jax.jacfwd(hf.optimize(fn))(x), jax.jacfwd(fn)(x))


def test_optimize_removes_what_jax_keeps():
    def round_trip(x, w):
        return jnp.tanh(jnp.fft.irfft(jnp.fft.rfft(x), n=x.shape[-1]) * w)

    f = hf.optimize(round_trip, finite_math=True)
    x = RNG.standard_normal((2, 16)).astype(np.float32)
    assert "stablehlo.fft" in jax.jit(round_trip).lower(x, W[0]).as_text()
    assert "stablehlo.fft" not in jax.jit(f).lower(x, W[0]).as_text()
    close_trees(jax.jit(f)(x, W[0]), round_trip(x, W[0]), rtol=1e-5, atol=1e-6)
    close_trees(jax.grad(lambda w: f(x, w).sum())(W[0]), jax.grad(lambda w: round_trip(x, w).sum())(W[0]),
                rtol=1e-4, atol=1e-5)
    assert f.__name__ == "round_trip"

    @hf.optimize(pipeline="canonicalize")
    def decorated(x):
        return x * 2.0
    close_trees(decorated(X), 2 * X)


# ---------------------------------------------------------------- errors

def test_wrong_calls_are_type_errors_with_the_values():
    m = hf.to_jax(hf.trace(hf_loss, X, W))
    with pytest.raises(TypeError, match=r"takes 2 arguments .*got 1"):
        m(X)
    with pytest.raises(TypeError, match=r"argument 1 must be float32\[5\], got float32\[7\]"):
        m(X, np.ones(7, np.float32))
    with pytest.raises(TypeError, match=r"argument leaf 1 \(set\) is neither an array nor hashable"):
        hf.to_jax(hf_loss)(X, {"w"})  # (a hashable one, a string say, is static: eqx.filter_jit's rule)
    with pytest.raises(TypeError, match=r"missing 1 required positional argument"):
        hf.to_jax(hf_loss)(X)
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['level'\]"):
        hf.to_jax(hf_loss, level=3)
    with pytest.raises(TypeError, match=r"expected a function or an hf.Module, got 3"):
        hf.to_jax(3)
    with pytest.raises(TypeError, match=r"hf.optimize: expected a jax function, got 'f'"):
        hf.optimize("f")


def test_a_64_bit_module_without_x64_says_how_to_enable_it():
    with jax.enable_x64(True):
        m = hf.trace(lambda x: x * 2.0, np.ones(2, np.float64))
    with pytest.raises(TypeError, match=r"argument 0 must be .*float64.*jax_enable_x64"):
        hf.to_jax(m)(np.ones(2, np.float64))


def test_a_program_is_one_primitive_with_hloforge_rules():
    jaxpr = jax.make_jaxpr(jax.grad(BRIDGED))(X, W)
    names = {e.primitive.name for e in jaxpr.jaxpr.eqns}
    assert "hloforge_call" in names
    assert bridge.call_p.name == "hloforge_call" and bridge.linear_call_p.name == "hloforge_linear_call"


# CHLO ops (jax's lowering of these functions, and hloforge.numpy's) cross the bridge: the portable
# artifact carries them as stablehlo.composite ops, as jax.export writes them (issue 47)
CHLO_FUNCTIONS = [(jnp.sinh, hnp.sinh), (jnp.cosh, hnp.cosh), (jnp.arcsin, hnp.arcsin), (jnp.arccos, hnp.arccos),
                  (jnp.arctan, hnp.arctan), (jnp.square, hnp.square), (jax.lax.erf, hf.lax.erf),
                  (jax.scipy.special.gammaln, None), (lambda v: jax.lax.top_k(v, 2)[0], None)]


@pytest.mark.parametrize("jax_fn, hf_fn", CHLO_FUNCTIONS, ids=lambda f: getattr(f, "__name__", "fn"))
def test_chlo_ops_cross_the_bridge_with_jax_bits(jax_fn, hf_fn):
    x = np.linspace(-0.9, 0.9, 6).astype(np.float32) if jax_fn is not jax.scipy.special.gammaln else \
        np.linspace(0.5, 4.0, 6).astype(np.float32)
    want = np.asarray(jax.jit(jax_fn)(x))
    through = [hf.optimize(jax_fn)] + ([hf.to_jax(hf_fn)] if hf_fn is not None else [])
    for f in through:
        np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)).view(np.uint32), want.view(np.uint32))
    if hf_fn is not None:
        assert_close(jax.grad(lambda v: jnp.sum(through[-1](v)))(x), jax.grad(lambda v: jnp.sum(jax_fn(v)))(x))


def test_a_chlo_module_round_trips_through_a_portable_artifact(tmp_path):
    m = hf.trace(hnp.sinh, hf.ShapeDtype((3,), np.float32))
    assert "chlo.sinh" in m.op_counts()
    back = hf.Module.parse(m.to_portable())
    assert back.op_counts().get("stablehlo.composite") == 1
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    np.testing.assert_array_equal(np.asarray(back.compile()(x)), np.asarray(m.compile()(x)))


def test_the_cost_model_is_the_platform_jax_compiles_for(monkeypatch):
    from hloforge import target
    monkeypatch.setattr(hf.config, "cost_model", None)
    monkeypatch.setattr(jax_api, "default_platform", lambda: "tpu")
    assert bridge._options(True, {})["cost_model"] is target.TPU
    monkeypatch.setattr(jax_api, "default_platform", lambda: "cuda")
    assert bridge._options(True, {})["cost_model"] is target.GPU
    monkeypatch.setattr(hf.config, "cost_model", "keep-ffts")  # (hf.config's wins)
    assert bridge._options(True, {})["cost_model"] is target.KEEP_FFTS


def test_the_dtype_mode_is_part_of_the_program_key(monkeypatch):
    f = hf.to_jax(lambda v: v + 1)
    x = np.arange(3, dtype=np.int32)
    assert np.asarray(f(x)).dtype == np.int32 and f.cache_size() == 1
    monkeypatch.setattr(hf.config, "dtypes", "jax")
    assert np.asarray(f(x)).dtype == np.int32 and f.cache_size() == 2  # (traced again in jax mode)


def test_the_program_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(hf.config, "cache_size", 3)
    f = hf.to_jax(lambda v: v * 2.0)
    for n in range(1, 8):
        np.testing.assert_array_equal(np.asarray(f(np.ones(n, np.float32))), np.full(n, 2.0, np.float32))
    assert f.cache_size() == 3


def _in_two_processes(body: str, cache_dir) -> list:
    """The stdout of ``body`` run in two fresh processes, one after the other, that share hloforge's cache
    directory ``cache_dir`` (the body sees np, jax, jnp, hf and runtime.cache)."""
    import subprocess
    import sys
    script = ("import sys, numpy as np, jax, jax.numpy as jnp, hloforge as hf\n"
              "from hloforge.runtime import cache\n"
              "hf.config.cache_dir = sys.argv[1]\n" + body)
    return [subprocess.run([sys.executable, "-c", script, str(cache_dir)], capture_output=True, text=True,
                           timeout=300).stdout for _ in range(2)]


@pytest.mark.child_processes
def test_a_second_process_runs_no_pass(tmp_path):
    """@hf.optimize's pipeline result and its serialization are cached on disk (issue 51): a second process
    traces, finds them, and neither optimizes nor serializes."""
    runs = _in_two_processes(
        "f = hf.optimize(lambda x: jnp.fft.irfft(jnp.fft.rfft(x) * 2.0, n=16))\n"
        "y = jax.jit(f)(np.arange(16, dtype=np.float32))\n"
        "s = cache.stats()\n"
        "print(float(y[3]), *(s[k] for k in ('pipeline_hits', 'pipeline_writes', 'portable_hits', "
        "'portable_writes')))\n", tmp_path)
    (first, *counts1), (second, *counts2) = [out.split() for out in runs]
    assert first == second == "6.0"
    assert counts1 == ["0", "1", "0", "1"] and counts2 == ["1", "0", "1", "0"]  # (nor serializes it again)


@pytest.mark.child_processes
def test_a_second_process_neither_differentiates_nor_optimizes_a_gradient(tmp_path):
    """The forward and backward programs of @hf.optimize's gradient are cached on disk too (issue 51): a second
    process reads them, and the vjp is neither traced nor optimized; the gradient is the same."""
    runs = _in_two_processes(
        "import hloforge.frontend.to_jax as to_jax\n"
        "calls, split = [], to_jax.split_vjp\n"
        "to_jax.split_vjp = lambda *a: calls.append(1) or split(*a)\n"
        "f = hf.optimize(lambda x: jnp.fft.irfft(jnp.sin(jnp.fft.rfft(x)[:4]), n=16))\n"
        "g = jax.jit(jax.grad(lambda x: jnp.sum(f(x) ** 2)))(np.linspace(0, 1, 16, dtype=np.float32))\n"
        "s = cache.stats()\n"
        "print(repr(np.asarray(g).tolist()), len(calls), s['split_hits'], s['split_writes'])\n", tmp_path)
    (g1, calls1, hits1, writes1), (g2, calls2, hits2, writes2) = [out.rsplit(maxsplit=3) for out in runs]
    assert g1 == g2
    assert (calls1, hits1, writes1) == ("1", "0", "1") and (calls2, hits2, writes2) == ("0", "1", "0")


@pytest.mark.child_processes
def test_the_bridge_loads_lapack_only_for_a_module_that_calls_it():
    """jax.export's call lowering would import scipy to initialize LAPACK for every module (150-200 ms of a
    process's first call, issue 51): a fresh process's hf.optimize of a plain function imports none, and a
    parsed module with LAPACK calls (nothing in that process lowered one) still gets its LAPACK routines."""
    import subprocess
    import sys
    a = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
    text = jax.jit(jnp.linalg.cholesky).lower(a).as_text()
    assert "lapack_" in text
    script = ("import sys, numpy as np, jax, jax.numpy as jnp, hloforge as hf\n"
              "y = jax.jit(hf.optimize(lambda x: jnp.sin(x) * 2.0))(np.ones(3, np.float32))\n"
              "print('scipy.linalg' in sys.modules)\n"
              "f = hf.to_jax(hf.Module.parse(sys.stdin.read()), optimize=False)\n"
              "print(repr(np.asarray(jax.jit(f)(np.array([[4.0, 2.0], [2.0, 3.0]], np.float32))).tolist()))\n")
    out = subprocess.run([sys.executable, "-c", script], input=text, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    imported, chol = out.stdout.splitlines()[-2:]
    assert imported == "False"
    np.testing.assert_allclose(np.array(eval(chol)), np.linalg.cholesky(a.astype(np.float64)), rtol=1e-6)


def test_a_to_jax_function_in_a_custom_jvp_rule_transposes():
    """jax.grad transposes the tangent rule's to_jax call in the tangents it is linear in (issue 47)."""
    scale = hf.to_jax(lambda a, t: a * t * 3.0)

    @jax.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), scale(jnp.cos(x), t)

    x = np.array([0.1, 0.5, 1.0], np.float32)
    for grad in (jax.grad(lambda v: jnp.sum(f(v))), jax.jit(jax.grad(lambda v: jnp.sum(f(v))))):
        assert_close(grad(x), (3 * np.cos(x)).astype(np.float32))


def test_a_64_bit_result_with_x64_off_is_one_clear_error():
    """numpy's promotion makes hnp.mean of int32 float64, which jax cannot hold with x64 off (issue 47: jax.hessian
    then failed with 'Dtype mismatch')."""
    f = hf.to_jax(lambda v: hnp.mean(v))
    with pytest.raises(TypeError, match=r"hf.to_jax\(<lambda>\): result 0 is float64\[\] \(numpy's promotion\), and "
                                        r"jax has 64-bit types disabled"):
        f(np.arange(4, dtype=np.int32))
    with jax.enable_x64(True):
        assert np.asarray(f(np.arange(4, dtype=np.int32))).dtype == np.float64


@tree_util.register_pytree_node_class
class _Dense:
    """A callable pytree with an array and a function leaf, as an eqx.Module holds its activation."""

    def __init__(self, w, b, activation):
        self.w, self.b, self.activation = w, b, activation

    def __call__(self, x):
        return self.activation(x @ self.w + self.b)

    def tree_flatten(self):
        return (self.w, self.b, self.activation), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def test_library_modules_go_through_as_they_are():
    """Leaves that are not arrays (functions, strings) are static, as in eqx.filter_jit; a callable pytree is
    optimized with its arrays as arguments (issue 47)."""
    w, b = jnp.asarray(RNG.standard_normal((3, 2)), jnp.float32), jnp.zeros(2, jnp.float32)
    x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    model = _Dense(w, b, jax.nn.gelu)
    want = model(x)
    assert_close(hf.optimize(lambda m, v: m(v))(model, x), want)
    assert_close(hf.optimize(model)(x), want)
    assert_close(jax.jit(lambda w, v: hf.optimize(_Dense(w, b, jax.nn.gelu))(v))(w, x), want)
    assert_close(jax.grad(lambda w: jnp.sum(hf.optimize(_Dense(w, b, jax.nn.gelu))(x)))(w),
                 jax.grad(lambda w: jnp.sum(_Dense(w, b, jax.nn.gelu)(x)))(w))
    assert_close(hf.optimize(lambda m, v: m(v))(_Dense(w, b, jax.nn.relu), x), _Dense(w, b, jax.nn.relu)(x))
    with pytest.raises(TypeError, match=r"argument leaf 2 \(set\) is neither an array nor hashable"):
        hf.optimize(lambda m, v: m.w)(_Dense(w, b, {1}), x)


def test_an_eager_call_on_two_devices_names_the_function(tmp_path):
    """jax's error names the jitted eager call: the to_jax program, not define_primitive's inner lambda."""
    from helpers import run_on_eight_devices
    script = tmp_path / "two_devices.py"
    script.write_text(
        "import json, numpy as np, jax, hloforge as hf\n"
        "f = hf.to_jax(lambda a, b: a + b)\n"
        "a, b = (jax.device_put(np.ones(3, np.float32), d) for d in jax.devices()[:2])\n"
        "try:\n"
        "    f(a, b)\n"
        "    message = ''\n"
        "except ValueError as e:\n"
        "    message = str(e)\n"
        "print(json.dumps({'message': message}))\n")
    message = run_on_eight_devices(str(script))["message"]
    assert "incompatible devices" in message and "hf.to_jax(<lambda>)" in message and "locals" not in message


def test_optimize_hands_back_jax_program_where_the_rewrite_does_not_pay(monkeypatch):
    """hf.optimize compares passes/cost.py's estimate of its rewrite with jax's program and keeps jax's
    when the rewrite is estimated slower (here: an estimate that charges dots far above FFTs)."""
    def spectral(x, w):
        spectrum = jnp.fft.rfft(x)
        mixed = jnp.einsum("bim,iom->bom", spectrum[..., :4], w)
        return jnp.fft.irfft(jnp.zeros_like(spectrum).at[..., :4].set(mixed), n=x.shape[-1])

    x = RNG.standard_normal((2, 3, 64)).astype(np.float32)
    w = (RNG.standard_normal((3, 3, 4)) + 1j * RNG.standard_normal((3, 3, 4))).astype(np.complex64)
    assert "stablehlo.fft" not in jax.jit(hf.optimize(spectral, cost_model="cpu")).lower(x, w).as_text()
    dots_dear = hf.target.CostModel("dots-dear", {"FFT": 1e-3, "IFFT": 1e-3, "RFFT": 1e-3, "IRFFT": 1e-3},
                                    flop_ns=1.0, byte_ns=0.0)
    estimate = bridge.estimate
    monkeypatch.setattr(bridge, "estimate", lambda module, model: estimate(module, dots_dear))
    hf.runtime.cache.reset_stats()
    kept = hf.optimize(spectral, cost_model="cpu")
    assert jax.jit(kept).lower(x, w).as_text().count("stablehlo.fft") == 2
    assert hf.runtime.cache.stats()["pipeline_reverts"] == 1
    close_trees(jax.jit(kept)(x, w), jax.jit(spectral)(x, w), rtol=1e-6, atol=1e-6)


def test_optimize_passes_dft_precision_to_the_partial_dfts():
    """hf.optimize(f, dft_precision="high"): the partial DFTs' contractions carry it into jax's program
    (three bfloat16 passes on a TPU; XLA:CPU computes f32 dots in f32 either way)."""
    def spectral(x):
        return jnp.fft.irfft(jnp.fft.rfft(x)[..., :4] * 2.0, n=x.shape[-1])

    x = RNG.standard_normal((2, 3, 64)).astype(np.float32)
    for precision, other in [("high", "HIGHEST"), ("highest", "HIGH,")]:
        f = hf.optimize(spectral, cost_model="cpu", dft_precision=precision)
        text = jax.jit(f).lower(x).as_text()
        assert "stablehlo.fft" not in text and f"precision = [{precision.upper()}, " in text and other not in text
        close_trees(jax.jit(f)(x), jax.jit(spectral)(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="hf.to_jax / hf.optimize: dft_precision must be one of "
                                         "\\['highest', 'high', 'default'\\], got 'bf16'"):
        hf.optimize(spectral, dft_precision="bf16")


def test_hloforges_unit_marks_do_not_reach_jaxs_serializer():
    """jax's serializer refuses an op with a unit attribute not its own: the grad of jax.scipy.linalg.expm failed
    with "failed to legalize operation 'stablehlo.divide'" on the division guard's mark (issue 47)."""
    module = hf.Module.parse("""func.func @main(%a: tensor<3xui32>, %b: tensor<3xui32>) -> tensor<3xui32> {
      %0 = stablehlo.divide %a, %b {hloforge.division_guard} : tensor<3xui32>
      return %0 : tensor<3xui32>
    }""")
    a, b = np.array([7, 8, 9], np.uint32), np.array([2, 3, 4], np.uint32)
    np.testing.assert_array_equal(np.asarray(jax.jit(hf.to_jax(module, optimize=False))(a, b)), a // b)
    assert "hloforge.division_guard" in module.text  # (the source keeps its mark; the exported copy drops it)
