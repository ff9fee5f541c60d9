"""Module.vmap on modules lowered by jax (elementwise, dot, reduce, fft, pad, conv, while, gather...),
traced by hloforge, optimized and read from a file, against jax.vmap of the same function; its
errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from batching_helpers import assert_same, empty_batch_cases

rng = np.random.default_rng(2)
N = 3  # the batch size


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _outputs(r):
    return [np.asarray(o) for o in (r if isinstance(r, (list, tuple)) else [r])]


def _batched(x, axis):
    """N examples of ``x``'s shape stacked along ``axis`` (None: ``x`` itself)."""
    if axis is None:
        return x
    xs = np.stack([np.asarray(x) + np.asarray(i, x.dtype) if x.dtype != np.bool_ else x for i in range(N)])
    return np.moveaxis(xs, 0, axis % (x.ndim + 1))


def check_module_vmap(f, examples, in_axes=0, out_axes=0, exact=False, module=None):
    """Module.vmap of jax's lowering of ``f`` (or ``module``) at ``examples`` equals jax.vmap(f)."""
    m = module if module is not None else hf.Module.parse(jax.jit(f).lower(*examples).as_text())
    axes = in_axes if isinstance(in_axes, (list, tuple)) else [in_axes] * len(examples)
    args = [_batched(x, a) for x, a in zip(examples, axes)]
    mb = m.vmap(N, in_axes=in_axes, out_axes=out_axes)
    got = _outputs(mb.compile()(*args))
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(
        jax.jit(jax.vmap(f, in_axes=tuple(axes),
                         out_axes=out_axes if not isinstance(out_axes, list) else tuple(out_axes)))(
            *args))]
    assert_same(got, want, exact=exact)
    return mb


_SPD = (lambda a: a @ a.T + 3 * np.eye(3, dtype=np.float32))(_f32(3, 3))


def _bf16(*shape):
    return _f32(*shape).astype(jnp.bfloat16)


def _i8(*shape):
    return rng.integers(-60, 60, shape).astype(np.int8)


def _dot_into(dtype):
    return lambda a, b: jax.lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=dtype)


def _conv_into(dtype, groups=1):
    return lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", feature_group_count=groups,
                                                     preferred_element_type=dtype)

CASES = {  # name -> (jax function, per-example arguments, in_axes, out_axes)
    "elementwise": (lambda x, y: jnp.sin(x) * y + 1.0, (_f32(4), _f32(4)), (0, None), 0),
    "elementwise_axis_1": (lambda x, y: jnp.maximum(x, y) - jnp.exp(y), (_f32(2, 4), _f32(2, 4)), (1, -1), 1),
    "dot_shared_weights": (lambda x, w: x @ w, (_f32(4), _f32(4, 5)), (0, None), 0),
    "dot_both_batched": (lambda a, b: a @ b, (_f32(2, 4), _f32(4, 3)), (1, 0), -1),
    "reduce_sum_max": (lambda x: (x.sum(axis=1), x.max(), jnp.mean(x, axis=0)), (_f32(3, 4),), 2, 0),
    "argmax": (lambda x: jnp.argmax(x, axis=-1), (_f32(3, 4),), 0, 0),
    "fft": (lambda x: jnp.fft.rfft(x, axis=-1), (_f32(2, 8),), 1, 0),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 1))), (_f32(2, 3),), 0, 0),
    "lax_pad_interior": (lambda x: jax.lax.pad(x, 0.5, [(1, 0, 1)]), (_f32(4),), 0, 0),
    "conv": (lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "SAME"), (_f32(1, 2, 5, 5), _f32(3, 2, 3, 3)),
             (0, None), 0),
    "while": (lambda x: jax.lax.fori_loop(0, 4, lambda i, c: c * 0.5 + jnp.sin(c), x), (_f32(3),), 0, 0),
    "while_batched_predicate": (lambda x: jax.lax.while_loop(lambda c: c.sum() < 10.0, lambda c: c * 1.5 + 0.1,
                                                                jnp.abs(x)), (_f32(3),), 0, 0),
    "cond": (lambda x: jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), (_f32(3),), 0, 0),
    "gather": (lambda x, i: jnp.asarray(x)[i], (_f32(5, 2), np.array([4, 0, 2], np.int32)), (None, 0), 0),
    "gather_both": (lambda x, i: jnp.take(x, i, axis=0), (_f32(5, 2), np.array([1, 3], np.int32)), (0, 0), 0),
    "dynamic_slice": (lambda x, i: jax.lax.dynamic_slice(x, (i,), (2,)), (_f32(6), np.int32(1)), (0, 0), 0),
    "scatter_add": (lambda x, i, u: x.at[i].add(u), (_f32(5), np.array([0, 2], np.int32), _f32(2)), (0, None, 0), 0),
    "sort": (lambda x: jnp.sort(x), (_f32(5),), 0, 0),
    "cumsum": (lambda x: jnp.cumsum(x), (_f32(5),), 0, 0),
    "reduce_window": (lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2,), (1,), "VALID"), (_f32(5),),
                      0, 0),
    # (jaxlib's LAPACK calls, with jax's Shardy rules for the per-example ranks)
    "linalg_cholesky_solve": (lambda a, b: jnp.linalg.solve(a, b) + jnp.linalg.cholesky(a)[0], (_SPD, _f32(3)),
                              (0, 0), 0),
    "linalg_solve_shared_matrix": (lambda a, b: jnp.linalg.solve(a, b), (_SPD, _f32(3)), (None, 0), 0),
    "linalg_eigh_svd": (lambda a: (jnp.linalg.eigh(a)[0], jnp.linalg.svd(a, compute_uv=False)), (_SPD,), 1, 0),
    # mixed precision: the result element type (jax's preferred_element_type) survives re-emission
    "dot_bf16_into_f32": (_dot_into(jnp.float32), (_bf16(2, 4), _bf16(4, 3)), (0, None), 0),
    "dot_int8_into_int32_both_batched": (_dot_into(jnp.int32), (_i8(2, 4), _i8(4, 3)), (1, 0), 0),
    "conv_bf16_into_f32_both_batched": (_conv_into(jnp.float32, 2), (_bf16(1, 2, 5, 5), _bf16(4, 1, 3, 3)), (0, 0), 0),
    "conv_int8_into_int32_kernel_batched": (_conv_into(jnp.int32), (_i8(1, 2, 4, 4), _i8(3, 2, 3, 3)), (None, 0), 0),
    "transpose_reshape_concat": (lambda x: jnp.concatenate([x.T.reshape(-1), x[0]]), (_f32(2, 3),), 1, 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_vmap_of_jax_lowerings_matches_jax_vmap(name):
    f, examples, in_axes, out_axes = CASES[name]
    check_module_vmap(f, examples, in_axes, out_axes)


EMPTY = empty_batch_cases(hnp, hf.lax)
EMPTY_JAX = empty_batch_cases(jnp, jax.lax)


@pytest.mark.parametrize("source", ["traced", "jax"])
@pytest.mark.parametrize("name", sorted(EMPTY))
def test_module_vmap_of_a_batch_of_size_zero(name, source):
    """Module.vmap(0) of a module hloforge traced, or jax lowered, with regions, indexing and linalg
    gives jax.vmap's empty results (its rules took example 0 of the empty batch)."""
    fn, specs = EMPTY[name]
    examples = [hf.ShapeDtype(shape, dtype) for shape, dtype in specs]
    if source == "traced":
        m = hf.trace(fn, *examples)
    else:
        m = hf.Module.parse(jax.jit(EMPTY_JAX[name][0]).lower(*[np.zeros(shape, dtype) for shape, dtype in specs])
                            .as_text())
    mb = m.vmap(0)
    args = [np.zeros((0, *shape), dtype) for shape, dtype in specs]
    assert [tuple(s.shape) for s in mb.signature[0]] == [a.shape for a in args]
    want = jax.tree_util.tree_leaves(jax.vmap(EMPTY_JAX[name][0])(*args))
    assert_same(_outputs(mb.compile()(*args)), [np.asarray(w) for w in want])


def test_the_batched_signature():
    m = hf.Module.parse(jax.jit(lambda x, w: (x @ w, w.sum())).lower(_f32(4), _f32(4, 5)).as_text())
    ins, outs = m.vmap(7, in_axes=(-1, None), out_axes=(1, None)).signature
    assert [s.shape for s in ins] == [(4, 7), (4, 5)]
    assert [s.shape for s in outs] == [(5, 7), ()]


def test_hloforge_traced_optimized_and_file_modules(tmp_path):
    def f(x, w):
        return hnp.tanh(x @ w) * 2.0 + w.sum()
    x, w = _f32(4), _f32(4, 5)

    def jf(x, w):
        return jnp.tanh(x @ w) * 2.0 + w.sum()
    traced = hf.trace(f, x, w)
    check_module_vmap(jf, (x, w), (0, None), module=traced)
    optimized = hf.trace(f, x, w)
    optimized.optimize()
    check_module_vmap(jf, (x, w), (0, None), module=optimized)
    path = tmp_path / "f.mlir"
    jax_module = hf.Module.parse(jax.jit(jf).lower(x, w).as_text())
    jax_module.save(path)
    check_module_vmap(jf, (x, w), (0, 0), module=hf.Module.load(path))


def test_module_vmap_twice_is_a_nested_vmap():
    f = lambda x, y: jnp.sin(x) * y  # noqa: E731
    x, y = _f32(4), _f32(4)
    m = hf.Module.parse(jax.jit(f).lower(x, y).as_text()).vmap(2, in_axes=(0, None)).vmap(N, in_axes=(None, 0))
    xs, ys = _f32(2, 4), _f32(N, 4)
    got = _outputs(m.compile()(xs, ys))
    want = jax.jit(jax.vmap(jax.vmap(f, in_axes=(0, None)), in_axes=(None, 0)))(xs, ys)
    assert_same(got, [np.asarray(want)], exact=False)


def test_a_module_with_a_call_and_results_that_depend_on_no_batched_argument():
    inner = jax.jit(lambda a: jnp.cos(a) * 3.0)
    f = lambda x, c: (inner(x) + c, c * 2.0)  # noqa: E731 (jax keeps the jitted callee as a call)
    mb = check_module_vmap(f, (_f32(3), _f32(3)), (0, None), (0, 1))
    assert mb.signature[1][1].shape == (3, N)


def test_module_vmap_after_other_transformations():
    m = hf.Module.parse(jax.jit(lambda x: jnp.sin(x) * x).lower(_f32(4)).as_text())
    g = m.vjp().vmap(N)  # per-example gradients of a parsed module
    xs, cts = _f32(N, 4), np.ones((N, 4), np.float32)
    got = _outputs(g.compile()(xs, cts))
    y, pull = jax.jit(jax.vmap(lambda x: jax.vjp(lambda v: jnp.sin(v) * v, x)))(xs)
    pullback = jax.jit(jax.vmap(lambda x, c: jax.vjp(lambda v: jnp.sin(v) * v, x)[1](c)[0]))
    assert_same(got, [np.asarray(y), np.asarray(pullback(xs, cts))], exact=False)


# ---------------------------------------------------------------- errors

M2 = hf.Module.parse(jax.jit(lambda x, y: (x * y, y + 1.0)).lower(_f32(4), _f32(4)).as_text())


@pytest.mark.parametrize("call, error, message", [
    (lambda: M2.vmap(-1), TypeError, r"Module.vmap: axis_size must be a nonnegative int, got -1"),
    (lambda: M2.vmap(2.5), TypeError, r"axis_size must be a nonnegative int, got 2.5"),
    (lambda: M2.vmap(2, in_axes=(0,)), ValueError, r"Module.vmap: in_axes has 1 entries \(\[0\]\) for 2 arguments"),
    (lambda: M2.vmap(2, in_axes=(0, "a")), TypeError,
     r"in_axes must be an int, None, or a sequence of ints and Nones with one entry per argument, got \(0, 'a'\)"),
    (lambda: M2.vmap(2, in_axes=1.5), TypeError, r"in_axes must be .* got 1.5"),
    (lambda: M2.vmap(2, in_axes=(2, 0)), ValueError,
     r"Module.vmap: in_axes 2 of argument 0 is out of range for its batched rank 2 \(axes -2..1\)"),
    (lambda: M2.vmap(2, out_axes=(0, -3)), ValueError, r"out_axes -3 of result 1 is out of range"),
    (lambda: M2.vmap(2, out_axes=[0]), ValueError, r"out_axes has 1 entries \(\[0\]\) for 2 results"),
    (lambda: M2.vmap(2, in_axes=(0, None), out_axes=(None, None)), ValueError,
     r"Module.vmap: out_axes is None for result 0, but the result depends on a batched argument \(it is batched "
     r"on axis 0\)"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_dynamic_shapes_are_refused():
    text = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
      %0 = stablehlo.sine %x : tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    with pytest.raises(ValueError, match=r"Module.vmap: argument 0 of the entry function has the dynamic type"):
        hf.Module.parse(text).vmap(2)



def test_an_op_without_a_registry_entry_is_named():
    text = """func.func @main(%x: tensor<3xf32>) -> tensor<i32> {
      %0 = stablehlo.get_dimension_size %x, dim = 0 : (tensor<3xf32>) -> tensor<i32>
      return %0 : tensor<i32>
    }"""
    unknown = (r"^Module.vmap: cannot batch stablehlo.get_dimension_size: it has no registry entry \(known ops: "
               r"\d+; see hloforge.frontend.registry.OPS\)$")
    with pytest.raises(NotImplementedError, match=unknown):
        hf.Module.parse(text).vmap(2)


def test_token_arguments_are_refused():
    text = """func.func @main(%t: !stablehlo.token, %x: tensor<3xf32>) -> (!stablehlo.token, tensor<3xf32>) {
      %0 = stablehlo.sine %x : tensor<3xf32>
      return %t, %0 : !stablehlo.token, tensor<3xf32>
    }"""
    with pytest.raises(TypeError, match=r"@main argument 0: unsupported type !stablehlo.token: only ranked tensors"):
        hf.Module.parse(text).vmap(2, in_axes=(None, 0))


def test_module_vmap_loads_the_batching_package_on_first_use():
    import subprocess
    import sys
    code = ("import sys, numpy as np, hloforge as hf\n"
            "m = hf.trace(lambda x: x * 2.0, np.ones(3, np.float32))\n"
            "assert 'hloforge.frontend.batching' not in sys.modules\n"
            "print(m.vmap(2).signature[0][0].shape)\n"
            "assert hf.Module.vmap.__module__ == 'hloforge.frontend.batching.module_vmap'\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "(2, 3)", run.stderr
