"""hf.grad & co: JAX's signatures, pytrees, composition with jit and with themselves, custom
rules, Module.vjp/jvp of parsed modules, and the error messages."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ad_helpers import REFERENCE_DEVICE, close
import hloforge as hf
import hloforge.numpy as hnp

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
W = rng.standard_normal((4, 2))


def loss(xp):
    def f(params, x):
        h = xp.tanh(x @ params["w"]) * params["b"][0]
        return xp.sum(h ** 2) + xp.sum(xp.sin(params["b"]))
    return f


PARAMS = {"w": W, "b": np.array([0.5, -1.5])}


def test_grad_pytree_and_argnums():
    got = hf.grad(loss(hnp))(PARAMS, X)
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(loss(jnp)))(PARAMS, X)
        want2 = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(PARAMS, X)
    close(got, want)
    close(hf.grad(loss(hnp), argnums=(0, 1))(PARAMS, X), want2)
    v, g = hf.value_and_grad(loss(hnp), argnums=1)(PARAMS, X)
    close(v, np.asarray(loss(np)(PARAMS, X)))
    assert g.shape == X.shape


def test_has_aux_and_jax_arrays():
    def f(x):
        return hnp.sum(x ** 3), {"mean": hnp.mean(x)}
    g, aux = hf.grad(f, has_aux=True)(jnp.asarray(X, jnp.float32))
    close(g, (3 * X ** 2).astype(np.float32))
    close(aux["mean"], np.float32(X.mean()))
    (v, aux), g = hf.value_and_grad(f, has_aux=True)(X)
    close(v, np.sum(X ** 3))


def test_grad_composes_with_jit_and_itself():
    f = lambda x: hnp.sum(hnp.sin(x) * x)  # noqa: E731
    jf = lambda x: jnp.sum(jnp.sin(x) * x)  # noqa: E731
    with jax.enable_x64(True):
        want = jax.jit(jax.grad(lambda x: jnp.sum(jax.grad(jf)(x) ** 2)))(X)
        want_scalar = jax.jit(jax.grad(jax.grad(lambda s: jnp.sin(s) * s ** 3)))(0.7)
    close(hf.jit(hf.grad(f))(X), np.sin(X) + X * np.cos(X))
    close(hf.grad(lambda x: hnp.sum(hf.grad(f)(x) ** 2))(X), want)
    close(hf.grad(hf.grad(lambda s: hnp.sin(s) * s ** 3))(0.7), np.asarray(want_scalar))
    close(hf.jit(hf.grad(hf.grad(lambda s: hnp.sin(s) * s ** 3)))(np.float64(0.7)), np.asarray(want_scalar))


def _loss_with_sine(x):
    return hnp.sum(hnp.sin(x))  # the line the gradient's cosine points at


def test_gradient_ops_carry_the_forward_ops_location():
    import inspect
    line = inspect.getsourcelines(_loss_with_sine)[1] + 1
    text = hf.jit(hf.grad(_loss_with_sine)).lower(np.ones(3, np.float32)).to_text(debug_info=True)
    cosine = [ln for ln in text.splitlines() if "stablehlo.cosine" in ln]
    assert cosine, text
    locs = dict(ln.split(" = ", 1) for ln in text.splitlines() if ln.startswith("#loc") and " = " in ln)
    where = cosine[0].rsplit("loc(", 1)[1].rstrip(")")
    assert f"test_ad_api.py\":{line}:" in locs.get(where, where), (where, locs)


def test_vjp_jvp_signatures():
    out, f_vjp = hf.vjp(lambda a, b: (a @ b, hnp.exp(a)), X, W)
    ct = (np.ones((3, 2)), np.ones((3, 4)))
    da, db = f_vjp(ct)
    with jax.enable_x64(True):
        _, j_vjp = jax.vjp(lambda a, b: (a @ b, jnp.exp(a)), X, W)
        want = j_vjp(ct)
        want_jvp = jax.jvp(lambda a: jnp.cos(a) * a, (X,), (np.ones_like(X),))
    close((da, db), want)
    close(hf.jvp(lambda a: hnp.cos(a) * a, (X,), (np.ones_like(X),)), want_jvp)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "hessian"])
def test_jacobians(name):
    def f(xp):
        return lambda x: xp.sin(x[:3]) * xp.sum(x ** 2)
    x = rng.standard_normal(4)
    got = getattr(hf, name)(f(hnp))(x)
    with jax.enable_x64(True):
        want = getattr(jax, name)(f(jnp))(x)
    close(got, want)


def test_jacobian_pytrees():
    def f(xp):
        return lambda a, b: {"u": xp.sin(a) * b[0], "v": a[:2] * b[1]}
    a, b = rng.standard_normal(3), rng.standard_normal(2)
    with jax.enable_x64(True):
        want = jax.jit(jax.jacrev(f(jnp), argnums=(0, 1)))(a, b)
        want_f = jax.jit(jax.jacfwd(f(jnp), argnums=(0, 1)))(a, b)
    close(hf.jacrev(f(hnp), argnums=(0, 1))(a, b), want)
    close(hf.jacfwd(f(hnp), argnums=(0, 1))(a, b), want_f)


def test_custom_vjp():
    @hf.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (hnp.clip(g, -0.5, 0.5),))
    g = hf.grad(lambda x: hnp.sum(clip_gradient(x) * 3.0))(X)
    close(g, np.full_like(X, 0.5))
    close(clip_gradient(X), X)
    # inside jit, and through Module.vjp of the traced module
    close(hf.jit(hf.grad(lambda x: hnp.sum(clip_gradient(x) * 3.0)))(X), np.full_like(X, 0.5))
    m = hf.trace(lambda x: hnp.sum(clip_gradient(x) * -3.0), X)
    out = m.vjp().compile()(X, np.float64(1.0))
    close(out[1], np.full_like(X, -0.5))


def test_custom_jvp_forward_and_reverse():
    @hf.custom_jvp
    def softplus(x):
        return hnp.log1p(hnp.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * (1.0 / (1.0 + hnp.exp(-x)))

    want = 1 / (1 + np.exp(-X))
    close(hf.grad(lambda x: hnp.sum(softplus(x)))(X), want)
    close(hf.jvp(softplus, (X,), (np.ones_like(X),))[1], want)


def test_custom_vjp_bad_bwd_structure():
    @hf.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1],))
    with pytest.raises(TypeError, match=r"custom_vjp\(f\): bwd must return a tuple with one cotangent per argument \(2\)"):
        hf.grad(lambda x: hnp.sum(f(x, x)))(X)


def test_errors_name_the_function_and_values():
    def vector(x):
        return x * 2.0
    with pytest.raises(TypeError, match=r"grad\(vector\): the function must return a real 0-d float scalar, "
                                        r"got Tensor\(shape=\(3, 4\), dtype=float64\)"):
        hf.grad(vector)(X)
    with pytest.raises(TypeError, match=r"grad\(vector\): differentiated argument leaf 0 has dtype int32"):
        hf.grad(vector)(np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match=r"grad\(vector\): argnums 3 out of range for 1 positional argument"):
        hf.grad(vector, argnums=3)(X)
    with pytest.raises(ValueError, match=r"jvp\(vector\): tangent leaf 0 is Tensor\(shape=\(2,\)"):
        hf.jvp(vector, (X,), (np.ones(2),))


def test_module_vjp_of_jax_lowered_module():
    def f(x, w):
        return jnp.sum(jnp.fft.irfft(jnp.fft.rfft(jnp.tanh(x @ w), axis=0) * 2.0, n=3, axis=0) ** 2)
    with jax.enable_x64(True), jax.default_device(REFERENCE_DEVICE):  # (XLA:TPU has no float64 FFT)
        text = jax.jit(f).lower(X, W).as_text()
        want = jax.jit(jax.grad(f, argnums=(0, 1)))(X, W)
        exported = jax.export.export(jax.jit(f))(X, W)
    for m in (hf.Module.parse(text), hf.Module.parse(exported.mlir_module_serialized)):
        g = m.vjp()
        assert [len(s) for s in g.signature] == [3, 3]
        out = g.compile()(X, W, np.float64(1.0))
        close(out[1:], want)
        jm = m.jvp().compile()(X, W, np.ones_like(X), np.zeros_like(W))
        close(jm[1], np.sum(np.asarray(want[0])))


def test_module_vjp_of_a_file(tmp_path):
    m = hf.trace(lambda x: (hnp.exp(x), hnp.sum(x)), X)
    path = tmp_path / "f.mlir"
    m.save(path)
    g = hf.Module.load(path).vjp()
    out = g.compile()(X, np.ones_like(X), np.float64(2.0))
    close(out[2], np.exp(X) + 2.0)


def test_every_registered_op_has_rules():
    from hloforge.frontend.registry import OPS
    missing = [n for n, info in OPS.items() if info.jvp is None or info.vjp is None]
    assert not missing, missing


def test_unsupported_op_names_itself():
    text = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = stablehlo.cosine %x : tensor<3xf32>
      %1 = stablehlo.custom_call @my_opaque_kernel(%0) : (tensor<3xf32>) -> tensor<3xf32>
      return %1 : tensor<3xf32>
    }"""
    with pytest.raises(NotImplementedError, match="cannot differentiate stablehlo.custom_call @my_opaque_kernel"):
        hf.Module.parse(text).vjp()


def test_module_vjp_of_jax_programs_with_calls_sort_reduce_select():
    def f(x):
        return (jnp.sum(jnp.sort(x, axis=1) * jnp.arange(5.0)) + jnp.sum(jnp.max(x, axis=0) ** 2)
                + jnp.prod(x[0]) + jnp.sum(jnp.where(x > 0, jnp.clip(x, -0.5, 0.5), x * 3))
                + jnp.sum(x[jnp.argmax(x[:, 0])] ** 2) + jnp.sum(jax.nn.softmax(x) * x)
                + jax.nn.logsumexp(x) + jnp.sum(jax.nn.gelu(x))
                + jnp.sum(jnp.pad(jnp.concatenate([x, x[::-1]], 0), ((1, 2), (0, 3))) ** 2))
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    m = hf.Module.parse(jax.jit(f).lower(x).as_text())
    out = m.vjp().compile()(x, np.float32(1.0))
    close(out[1], np.asarray(jax.jit(jax.grad(f))(x)), rtol=1e-4)


def test_module_jvp_and_vjp_through_jax_argmax_and_max_with_index():
    def f(x):
        return jnp.sum(x[jnp.argmax(x[:, 0])] ** 2) + jnp.sum(jnp.max(x, 1) * jnp.argmin(x, 1))
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    t = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    m = hf.Module.parse(jax.jit(f).lower(x).as_text())
    _, want_t = jax.jvp(f, (x,), (t,))
    close(m.jvp().compile()(x, t)[1], np.asarray(want_t), rtol=1e-4)
    close(m.vjp().compile()(x, np.float32(1.0))[1], np.asarray(jax.jit(jax.grad(f))(x)), rtol=1e-4)


def test_custom_vjp_nondiff_argnums():
    def scale(s, x):
        return x * s

    f = hf.custom_vjp(scale, nondiff_argnums=(0,))
    f.defvjp(lambda s, x: (x * s, None), lambda s, _, g: (g * (10.0 * s),))
    close(hf.grad(lambda x: hnp.sum(f(2.0, x)))(X), np.full_like(X, 20.0))
