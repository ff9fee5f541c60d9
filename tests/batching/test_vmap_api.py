"""hf.vmap's semantics against jax.vmap's on the same programs: axes pytrees, negative and None axes,
keyword arguments, axis_size, broadcast outputs, weak scalars, eager and traced use; every error
message against jax 0.10's."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
import hloforge.numpy as hnp
from batching_helpers import assert_same, empty_batch_cases

rng = np.random.default_rng(0)
X32 = rng.standard_normal((3, 2)).astype(np.float32)
X42 = rng.standard_normal((4, 2)).astype(np.float32)
V2 = rng.standard_normal(2).astype(np.float32)
T234 = rng.standard_normal((2, 3, 4)).astype(np.float32)


def both(make, *args, **kwargs):
    """make(lib, vmap) -> the vmapped function, for lib = hloforge.numpy / jax.numpy."""
    got = make(hnp, hf.vmap)(*args, **kwargs)
    want = make(jnp, jax.vmap)(*args, **kwargs)
    assert_same(jax.tree_util.tree_map(np.asarray, got), jax.tree_util.tree_map(np.asarray, want), exact=False)
    return got


# ---------------------------------------------------------------- semantics

def test_in_axes_pytrees_with_none_leaves_and_negative_axes():
    params = {"w": T234, "b": V2}  # w batched along its last axis, b shared
    both(lambda np_, vmap: vmap(lambda p, x: (p["w"].sum(1) * x[0], p["b"] + x[1]),
                                in_axes=({"w": -1, "b": None}, 1)),
         params, np.ones((2, 4), np.float32))


def test_in_axes_list_and_tuple_prefix():
    both(lambda np_, vmap: vmap(lambda ab, c: ab[0] * ab[1] - c, in_axes=[(0, 1), None]),
         (X32, X32.T.copy()), V2)


def test_out_axes_pytree_prefix_and_negative():
    both(lambda np_, vmap: vmap(lambda a: {"p": a, "q": (a * 2, np_.sin(a))}, out_axes={"p": -1, "q": 1}), X32)


def test_keyword_arguments_are_batched_along_axis_0():
    both(lambda np_, vmap: vmap(lambda a, b=None: a * b, in_axes=(1,)), X32.T.copy(), b=X32)


def test_axis_size_when_nothing_is_batched():
    both(lambda np_, vmap: vmap(lambda: np_.ones(2, np.float32), axis_size=3))
    both(lambda np_, vmap: vmap(lambda a: a * 2, in_axes=None, axis_size=3), X32)


def test_outputs_that_depend_on_no_batched_input_are_broadcast():
    got = both(lambda np_, vmap: vmap(lambda a, b: (a + 1, b * 2, b), in_axes=(0, None), out_axes=(0, 1, None)),
               X32, V2)
    assert got[1].shape == (2, 3) and got[2].shape == (2,)


def test_python_scalars_stay_weakly_typed():
    x = X32.astype(np.float16)
    got = both(lambda np_, vmap: vmap(lambda a, s: a * s, in_axes=(0, None)), x, 2.0)
    assert got.dtype == np.float16
    for s in (3.0, 2):  # (another scalar value: another compiled signature, the same weak type)
        assert hf.vmap(lambda a, s: a * s, in_axes=(0, None))(x, s).dtype == np.float16


def test_eager_with_jax_arrays_and_inside_a_trace():
    f = hf.vmap(lambda a, b: a * b + 1.0, in_axes=(0, None))
    want = X32 * V2 + 1.0
    assert_same(np.asarray(f(jnp.asarray(X32), jnp.asarray(V2))), want, exact=False)
    assert_same(np.asarray(hf.jit(lambda a, b: f(a, b) * 2.0)(X32, V2)), want * 2, exact=False)
    # inside a trace, arrays only (closed-over constants) still build IR
    assert_same(np.asarray(hf.jit(lambda: f(X32, V2))()), want, exact=False)


def test_unbatched_leaves_that_are_not_arrays_are_passed_through():
    class Scale:  # (unhashable: its program is compiled for the call, not kept)
        __hash__ = None

        def __init__(self, v):
            self.v = v

    def f(x, mode, s):
        return x * s.v if mode == "scale" else x - s.v
    for mode, v in (("scale", 2.0), ("shift", 3.0), ("scale", 4.0)):
        both(lambda np_, vmap: vmap(f, in_axes=(0, None, None)), X32, mode, Scale(v))
    traced = hf.jit(lambda x: hf.vmap(f, in_axes=(0, None, None))(x, "shift", Scale(1.0)))
    assert_same(np.asarray(traced(X32)), X32 - 1.0)


def test_batch_of_size_zero():
    both(lambda np_, vmap: vmap(lambda a: np_.sin(a) * 2), np.ones((0, 2), np.float32))


EMPTY = empty_batch_cases(hnp, hf.lax)
EMPTY_JAX = empty_batch_cases(jnp, jax.lax)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(EMPTY))
def test_batch_of_size_zero_through_regions_indexing_and_composites(name, jit):
    """Rules that trace a body over one example of the batch (cond, switch, while, scan, map,
    linalg composites) or index by batched values give jax.vmap's empty results for a batch of 0
    (slicing example 0 of an empty batch raised in the rule)."""
    fn, specs = EMPTY[name]
    args = [np.zeros((0, *shape), dtype) for shape, dtype in specs]
    batched = hf.vmap(fn)
    got = (hf.jit(batched) if jit else batched)(*args)
    assert_same(jax.tree_util.tree_map(np.asarray, got), jax.vmap(EMPTY_JAX[name][0])(*args))


def test_function_name_and_docstring_are_kept():
    def scale(x):
        """Doubles x."""
        return x * 2
    assert hf.vmap(scale).__name__ == "scale" and hf.vmap(scale).__doc__ == "Doubles x."


# ---------------------------------------------------------------- errors: jax 0.10's messages

def _error_of(call):
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    return info.type, str(info.value)


def f1(a):
    return a


def f2(a, b):
    return a + b


def f3(a, b, c):
    return a


ERRORS = {  # name -> (vmap, arrays) -> the failing call
    "sizes": lambda vmap: vmap(f2)(X32, X42),
    "sizes_most": lambda vmap: vmap(f3)(X32, X42, X32),
    "sizes_kwargs": lambda vmap: vmap(f2)(X32, b=X42),
    "sizes_tree": lambda vmap: vmap(f1)({"u": X32, "v": X42}),
    "sizes_list_leaf": lambda vmap: vmap(f1)([X32, X42]),
    "sizes_varargs": lambda vmap: vmap(lambda *a: a[0])(X32, X42),
    "sizes_axes": lambda vmap: vmap(f1, in_axes=({"u": 0, "v": 1},))({"u": X32, "v": X42}),
    "axis_size_mismatch": lambda vmap: vmap(f1, axis_size=5)(X32),
    "in_axes_range": lambda vmap: vmap(f1, in_axes=2)(X32),
    "in_axes_range_negative": lambda vmap: vmap(f1, in_axes=-3)(X32),
    "in_axes_scalar": lambda vmap: vmap(f1)(np.float32(1)),
    "in_axes_python_scalar": lambda vmap: vmap(f1)(1.0),
    "in_axes_length": lambda vmap: vmap(f2, in_axes=(0, 0, 0))(X32, X32),
    "in_axes_float": lambda vmap: vmap(f1, in_axes=1.5),
    "in_axes_str": lambda vmap: vmap(f1, in_axes="a"),
    "in_axes_bool": lambda vmap: vmap(f1, in_axes=True),
    "in_axes_dict_top": lambda vmap: vmap(f1, in_axes={"u": 0}),
    "in_axes_float_leaf": lambda vmap: vmap(f1, in_axes=(0.5,)),
    "out_axes_float": lambda vmap: vmap(f1, out_axes=1.5),
    "out_axes_none_batched": lambda vmap: vmap(f1, out_axes=None)(X32),
    "out_axes_none_key_path": lambda vmap: vmap(lambda a: (a, {"k": a}), out_axes=(0, None))(X32),
    "out_axes_range": lambda vmap: vmap(f1, out_axes=2)(X32),
    "out_axes_range_negative": lambda vmap: vmap(f1, out_axes=-3)(X32),
    "not_callable": lambda vmap: vmap(3),
    "nothing_batched": lambda vmap: vmap(f1, in_axes=None)(X32),
    "no_arguments": lambda vmap: vmap(lambda: 1.0)(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_jax_messages(name):
    want = _error_of(lambda: ERRORS[name](jax.vmap))
    got = _error_of(lambda: ERRORS[name](hf.vmap))
    assert got[0] is want[0], (got, want)
    assert got[1] == want[1]
    with pytest.raises(want[0], match="vmap|callable|axis"):
        ERRORS[name](hf.vmap)


TREE_ERRORS = {  # (jax's message goes on with a multi-line pytree diff; hloforge's names both trees)
    "in_axes_tree": (lambda vmap: vmap(f1, in_axes=({"u": 0},))({"v": X32}),
                     r"vmap in_axes specification must be a tree prefix of the corresponding value; got "
                     r"specification \(\(\{'u': 0\},\), 0\) for the value tree PyTreeDef\(\(\(\{'v': \*\},\), \{\}\)\)"),
    "out_axes_tree": (lambda vmap: vmap(lambda a: (a, a), out_axes=(0, 0, 0))(X32),
                      r"vmap out_axes specification must be a tree prefix of the corresponding value; got "
                      r"specification \(0, 0, 0\) for the value tree PyTreeDef\(\(\*, \*\)\)"),
    "out_axes_dict": (lambda vmap: vmap(lambda a: {"p": a, "q": a}, out_axes={"p": 0, "r": 1})(X32),
                      r"vmap out_axes specification must be a tree prefix of the corresponding value; got "
                      r"specification \{'p': 0, 'r': 1\}"),
}


@pytest.mark.parametrize("name", sorted(TREE_ERRORS))
def test_tree_prefix_errors(name):
    call, message = TREE_ERRORS[name]
    want = _error_of(lambda: call(jax.vmap))
    assert want[1].startswith(message.split(";")[0].replace("\\", ""))
    with pytest.raises(ValueError, match=message):
        call(hf.vmap)


def test_a_mapped_leaf_that_is_not_an_array():
    want = _error_of(lambda: jax.vmap(f2)(X32, "a"))
    assert want == (TypeError, "Argument 'a' of type <class 'str'> is not a valid JAX type")
    with pytest.raises(TypeError, match=r"^Argument 'a' of type <class 'str'> is not a valid JAX type$"):
        hf.vmap(f2)(X32, "a")
    with pytest.raises(TypeError, match=r"^Argument 'a' of type <class 'str'> is not a valid JAX type$"):
        hf.jit(lambda x: hf.vmap(f2)(x, "a"))(X32)


def test_spmd_axis_name_is_not_supported():
    with pytest.raises(NotImplementedError, match=r"spmd_axis_name='i': hloforge batches on one device"):
        hf.vmap(f1, spmd_axis_name="i")


def test_axis_size_must_be_a_nonnegative_int():
    with pytest.raises(TypeError, match=r"hf.vmap: axis_size must be a nonnegative int or None, got -1"):
        hf.vmap(f1, axis_size=-1)
    with pytest.raises(TypeError, match=r"got 2.0"):
        hf.vmap(f1, axis_size=2.0)


def test_an_op_without_a_batch_rule_and_a_rule_that_breaks_its_contract(monkeypatch):
    import hloforge.frontend.batching  # noqa: F401  (loads the batch rules, as a first vmap does)
    from hloforge import ops
    from hloforge.frontend.registry import OPS
    monkeypatch.delitem(OPS["stablehlo.sine"].rules, "batch")
    with pytest.raises(NotImplementedError, match=r"^hloforge.vmap: no batch rule for stablehlo.sine; add one with "
                                                  r"hloforge.frontend.registry.def_rule\('batch', 'stablehlo.sine'\)$"):
        hf.vmap(ops.sin)(X32)
    m = hf.trace(ops.sin, V2)
    with pytest.raises(NotImplementedError, match=r"^hloforge.vmap: no batch rule for stablehlo.sine"):
        m.vmap(3)
    monkeypatch.setitem(OPS["stablehlo.sine"].rules, "batch", lambda size, ins, dims: ([ops.sin(ins[0])], [1]))
    broken = (r"hloforge.vmap: the batch rule of stablehlo.sine returned Tensor\(shape=\(3, 2\), dtype=float32\) "
              r"\(batch dimension 1\) for result 0 of type .* and batch size 3")
    with pytest.raises(RuntimeError, match=broken):
        hf.vmap(ops.sin)(X32)
    monkeypatch.setitem(OPS["stablehlo.sine"].rules, "batch", lambda size, ins, dims: ([ops.sin(ins[0])], []))
    with pytest.raises(RuntimeError, match=r"the batch rule of stablehlo.sine returned 1 values and 0 dimensions "
                                           r"for 1 results"):
        hf.vmap(ops.sin)(X32)


def test_erasing_the_per_example_copy_forgets_its_reused_splats():
    """A constant AD reuses (tracing.splat(reuse=True)) that a vmap's tidy-up erased is not handed out
    again: that dangling value crashed MLIR (grad of vmap of a non-symmetric custom_linear_solve)."""
    from hloforge.frontend.batching._regions import Tidy
    from hloforge.frontend.tracing import splat

    def body(x):
        tidy = Tidy()
        first = splat(0, np.float32, (3,), reuse=True)
        tidy([])
        again = splat(0, np.float32, (3,), reuse=True)
        assert again is not first
        return x + again
    np.testing.assert_array_equal(hf.jit(body)(np.ones(3, np.float32)), np.ones(3, np.float32))
