"""The op registry: every entry's decode re-emits the op it read, every evaluate agrees with
PJRT, the region helper's errors, and the op sets passes read."""
from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import hloforge as hf
from hloforge import numpy as hnp
from hloforge import ops
from hloforge.frontend import registry
from hloforge.frontend.registry import OPS, Spec
from hloforge.frontend.ops import chlo_math, factorization
from hloforge.frontend.tracing import TOKEN, Builder, TupleSpec, Value, is_opaque, spec_of_type

from test_registry_dtypes import Case, _mismatch, check

F32 = np.dtype(np.float32)


# ---------------------------------------------------------------- decode and re-emit

def _jax_modules():
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    fns = [
        lambda a: jnp.sort(a, axis=1) + jnp.cumsum(a, axis=0),
        lambda a: jnp.fft.irfft(jnp.fft.rfft(a), n=6) @ a.T,
        lambda a: jnp.pad(a, ((1, 2), (0, 1)), constant_values=1.5)[::2, 1:],
        lambda a: (jnp.where(a > 0, a, -a) ** 2).max(axis=1) + jnp.argmax(a, axis=0).astype(a.dtype)[:4],
        lambda a: jnp.clip(jnp.round(a * 3), -1, 1).astype(jnp.int32) >> 1,
        lambda a: jnp.concatenate([a, jnp.flip(a, 0)], 1).reshape(8, 6).transpose()[::-1],
        lambda a: jax.lax.dynamic_slice(a, (1, 2), (2, 2)) * jax.lax.erf(a[:2, :2]),
        lambda a: jnp.einsum("ij,kj->ik", a, a, precision="highest") + jnp.iinfo(jnp.int32).max,
        lambda a: (a.astype(jnp.complex64) * 1j).imag + jnp.isfinite(a) + jnp.sign(a),
        # a contraction's result element type (jax's preferred_element_type) is the op's, not its operands'
        lambda a: jax.lax.dot_general(a.astype(jnp.bfloat16), a.T.astype(jnp.bfloat16), (((1,), (0,)), ((), ())),
                                      preferred_element_type=jnp.float32),
        lambda a: jax.lax.conv_general_dilated(a.astype(jnp.int8)[None, None], a.astype(jnp.int8)[None, None, :2, :3],
                                               (1, 1), "VALID", preferred_element_type=jnp.int32),
        lambda a: jax.lax.with_sharding_constraint(jnp.sin(a), jax.sharding.NamedSharding(
            jax.sharding.Mesh(np.array(jax.devices()[:1]), ("x",)), jax.sharding.PartitionSpec("x", None))),
    ]
    return [hf.Module.parse(jax.jit(f).lower(x).as_text()) for f in fns]


def _hloforge_modules():
    spec = hf.ShapeDtype((4, 6), np.float32)

    def every_op(x):
        c = ops.convert(x, np.complex64)
        i = ops.convert(x, np.int32)
        outs = [ops.fft(c, "FFT", (6,)), ops.pad(x, 0.0, (1, -1), (0, 2), (1, 0)),
                ops.reduce(x, np.float32(0), (1,), "max"), ops.reduce([x, x], [0.0, 1.0], (0,),
                                                                      lambda a, b, p, q: (ops.add(a, p), ops.multiply(b, q))),
                ops.sort([x, i], 1, "GT", is_stable=True), ops.dot_general(x, x, (0,), (0,), (1,), (1,), precision=("HIGH", "DEFAULT")),
                ops.clamp(0.0, x, 1.0), ops.complex(x, x), ops.iota((3, 2), np.uint8, 1),
                ops.shift_right_logical(i, i), ops.compare(x, x, "GE", "TOTALORDER"), ops.compare(i, i, "LT"),
                ops.compare(x, x, "EQ", compare_type=None), ops.broadcast_in_dim(x[0], (3, 6), (1,)),
                ops.constant(np.arange(4, dtype=np.int8)), ops.constant(np.array([1 + 2j, 3], np.complex64)),
                ops.constant(np.array([1.5, 2], hf.bfloat16)), ops.reverse(x, (0, 1)),
                ops.dynamic_slice(x, (ops.constant(np.int32(1)), 2), (2, 2))]
        outs += _control_flow_and_indexing(x, i)
        for build, args in [(u, (x,)) for u in (ops.exp, ops.log, ops.sin, ops.tanh, ops.ceil, ops.rsqrt, ops.cbrt, ops.logistic, ops.floor,
                                                  ops.round_nearest_afz, ops.tan, ops.log1p, ops.expm1)] + \
                [(b, (x, x)) for b in (ops.atan2, ops.power, ops.remainder, ops.minimum, ops.subtract)] + \
                [(b, (i, i)) for b in (ops.xor, ops.or_, ops.and_, ops.shift_left, ops.shift_right_arithmetic,
                                       ops.divide)] + [(ops.not_, (i,)), (ops.abs, (c,)), (ops.real, (c,)),
                                                        (ops.cos, (x,)), (ops.sqrt, (x,))] + \
                [(u, (x,)) for u in (chlo_math.asin, chlo_math.acos, chlo_math.atan, chlo_math.sinh, chlo_math.cosh,
                                     chlo_math.asinh, chlo_math.acosh, chlo_math.atanh, chlo_math.is_inf,
                                     chlo_math.is_pos_inf, chlo_math.is_neg_inf, chlo_math.square, chlo_math.erfc,
                                     chlo_math.bessel_i1e)] + \
                [(b, (x, x)) for b in (chlo_math.next_after, chlo_math.polygamma, chlo_math.zeta)] + \
                [(lambda a: ops.top_k(a, 2)[1], (x,))]:
            outs.append(build(*args))
        return outs
    def factorizations(a, b):
        return [factorization.cholesky(a, lower=False), factorization.cholesky(a),
                factorization.triangular_solve(a, b, left_side=True, lower=False, unit_diagonal=True,
                                               transpose_a="ADJOINT")]

    return [hf.trace(every_op, spec), hf.trace(lambda x: hnp.fft.irfft2(hnp.fft.rfft2(x)), spec),
            hf.trace(_model_ops, hf.ShapeDtype((2, 4, 6, 6), np.float32), hf.ShapeDtype((6, 2, 3, 3), np.float32)),
            hf.trace(_collectives, hf.ShapeDtype((8, 4), np.float32)),
            hf.trace(factorizations, hf.ShapeDtype((2, 3, 3), np.float32), hf.ShapeDtype((2, 3, 4), np.float32)),
            hf.trace(_tuples, spec)]


def _tuples(x):
    t = ops.tuple(x, ops.tuple(ops.exp(x), ops.convert(x, np.int32), ops.after_all()),
                  ops.after_all(ops.after_all(), ops.after_all()))
    ops.tuple()
    return ops.add(ops.get_tuple_element(t, 0), ops.get_tuple_element(ops.get_tuple_element(t, 1), 0))


def _model_ops(x, w):
    v = x[0, 0, 0, :4]
    i = ops.convert(x, np.int32)
    k = ops.convert(x[0, 0, 0, :2], np.uint64)
    outs = [ops.convolution(x, w, window_strides=(2, 1), padding=((1, 1), (0, -1)), lhs_dilation=(1, 2),
                            rhs_dilation=(2, 1), window_reversal=(True, False), feature_group_count=2,
                            precision=("HIGHEST", "DEFAULT")),
            ops.convolution(x, ops.reshape(w, (2, 6, 3, 3)), ops.ConvDimensions(1, 0, (3, 2), 0, 1, (2, 3), 3, 0, (1, 2))),
            ops.convolution(ops.reshape(x, (4, 4, 6, 3)), ops.reshape(ops.slice(ops.reshape(w, (108,)), (0,), (64,)),
                                                                      (4, 4, 2, 2)),
                            batch_group_count=2, padding=((0, 0), (1, 1))),
            ops.reduce_window(x, -np.inf, (1, 1, 3, 3), window_strides=(1, 1, 2, 2), base_dilations=(1, 1, 2, 1),
                              window_dilations=(1, 1, 1, 2), padding=((0, 0), (0, 0), (1, 1), (0, 2)), body="max"),
            ops.reduce_window([x, i], [0.0, 0], (1, 2, 2, 1),
                              body=lambda a, b, p, q: (ops.add(a, p), ops.maximum(b, q))),
            ops.select_and_scatter(x, ops.reduce_window(x, 0.0, (1, 1, 2, 2), window_strides=(1, 1, 2, 2)), 0.0,
                                   (1, 1, 2, 2), window_strides=(1, 1, 2, 2), padding=((0, 0),) * 4),
            ops.select_and_scatter(x, x, 0.0, (1, 1, 1, 1), select=lambda a, b: ops.compare(a, b, "LT"),
                                   scatter=lambda a, b: ops.maximum(a, b)),
            ops.batch_norm_inference(x, v, v, v, v, 1e-3, 1), *ops.batch_norm_training(x, v, v, 1e-5, 1),
            *ops.batch_norm_grad(x, v, v, v, x, 0.5, 1), ops.bitcast_convert(x, np.uint8),
            ops.bitcast_convert(ops.bitcast_convert(x, np.uint16), np.int32), ops.reduce_precision(x, 5, 10),
            *ops.rng_bit_generator(k, (3, 2), np.uint8, "THREE_FRY"), *ops.rng_bit_generator(k, (2,)),
            ops.popcnt(i), ops.count_leading_zeros(i), ops.erf_inv(x), ops.lgamma(x), ops.digamma(x),
            *ops.custom_call([x, i], "my_target", [((3,), np.float32), ((), np.int32)], has_side_effect=True,
                             backend_config="cfg", api_version=2),
            *ops.custom_call([x], "my_lapack", [(x.shape, x.dtype)], extra_attributes={
                "operand_layouts": "[dense<[2, 3, 1, 0]> : tensor<4xindex>]",
                "result_layouts": "[dense<[2, 3, 1, 0]> : tensor<4xindex>]", "mhlo.backend_config": "{uplo = 76 : ui8}",
                "output_operand_aliases": "[#stablehlo.output_operand_alias<output_tuple_indices = [], "
                                          "operand_index = 0, operand_tuple_indices = []>]"}),
            *ops.optimization_barrier([x, i]),
            ops.map([x, x], lambda a, b: ops.convert(ops.add(a, b), np.int32), dtype=np.int32),
            *ops.composite([x, v], "my.op", lambda a, b: ops.add(a, a), attributes={"n": 3, "s": "t", "b": False,
                                                                                  "f": 0.5}, version=2)]
    return outs


def _collectives(x):
    groups = [[0, 1, 2, 3], [4, 5, 6, 7]]
    return [ops.all_reduce(x, groups), ops.all_reduce([x, x], [list(range(8))], computation="max", channel_handle=(1, 1),
                                                      use_global_device_ids=True),
            ops.all_reduce(x, groups, computation=lambda a, b: ops.add(ops.multiply(a, b), b)),
            ops.all_gather(x, 1, groups, channel_handle=(2, 1), use_global_device_ids=True),
            ops.reduce_scatter(x, 0, groups, computation="min", channel_handle=(3, 1)),
            ops.all_to_all(x, 0, 1, 4, groups, channel_handle=(4, 1)), ops.all_to_all([x, x], 1, 0, 4, groups),
            ops.collective_permute(x, [(0, 1), (1, 0)], channel_handle=(5, 1)),
            ops.collective_broadcast(x, groups, channel_handle=(6, 1)), ops.partition_id(), ops.replica_id()]


def _control_flow_and_indexing(x, i):
    """while/if/case (bodies without outside values, and a lax loop whose capture became an
    operand), gather, scatter (named and callable bodies), dynamic_update_slice."""
    i0, three = ops.constant(np.int32(0)), ops.constant(np.int32(3))
    idx = ops.constant(np.array([[2, 1], [0, 5]], np.int32))
    outs = ops.while_([i0, x], lambda k, v: ops.compare(k, ops.constant(np.int32(3)), "LT"),
                      lambda k, v: (ops.add(k, ops.constant(np.int32(1))), ops.multiply(v, v)))
    outs.append(hf.lax.fori_loop(0, 3, lambda k, v: v * x, x))
    pred = ops.compare(outs[0], three, "EQ")
    outs += ops.if_(pred, lambda: (ops.constant(np.float32(1)), ops.iota((2,), np.int32)),
                    lambda: (ops.constant(np.float32(2)), ops.constant(np.array([5, 6], np.int32))),
                    [((), F32), ((2,), np.int32)])
    outs += ops.case(outs[0], [lambda: ops.constant(np.float32(b)) for b in range(3)], [((), F32)])
    outs += [ops.gather(x, idx, (1,), (0,), (0, 1), 1, (1, 2), indices_are_sorted=True),
             ops.gather(x, idx[:, :1], (0, 1), (), (0,), 1, (2, 6)),
             ops.scatter(x, idx, ops.constant(np.ones((2, 3), np.float32)), (1,), (0,), (0, 1), 1, "add"),
             ops.scatter(x, idx[:, :1], x[:2], (1,), (0,), (0,), 1, unique_indices=True),
             ops.scatter(i, idx, ops.constant(np.ones((2,), np.int32)), (), (0, 1), (0, 1), 1,
                         lambda a, b: ops.maximum(a, ops.multiply(b, b))),
             ops.dynamic_update_slice(x, x[:1, :2], (ops.constant(np.int32(3)), ops.constant(np.int32(-1))))]
    return outs


def _generic(op) -> str:
    text = op.get_asm(print_generic_op_form=True, enable_debug_info=False)
    return re.sub(r"%[\w#]+", "%", text)


def _reemitted(op) -> str:
    """Re-emit ``op`` from its decode into a fresh trace over its operand types; the new op's text."""
    info = OPS[op.name]
    specs = [spec_of_type(v.type) for v in op.operands]
    tensors = [hf.ShapeDtype(*s) for s in specs if not is_opaque(s)]

    def reemit(*args):
        args = iter(args)  # (tokens and tuples cannot be @main arguments: they are made here)
        out = info.reemit([_made(s) if is_opaque(s) else next(args) for s in specs], op)
        return [] if isinstance(out, Value) else out

    module = hf.trace(reemit, *tensors)
    main = module.entry_function()
    # (.operation: the OpView of a composite has a .name of its own, the composite's name)
    return _generic([o for o in main.regions[0].blocks[0].operations if o.operation.name == op.name][-1])


def _made(spec):
    """A token or tuple of ``spec`` built in the current trace (zeros for its tensors)."""
    if spec is TOKEN:
        return ops.after_all()
    if isinstance(spec, TupleSpec):
        return ops.tuple(*[_made(e) for e in spec.elements])
    return ops.constant(np.zeros(spec[0], spec[1]))


def test_decode_reemits_every_op_found_in_real_modules():
    seen = set()
    for module in _jax_modules() + _hloforge_modules():
        for op in module.walk():
            if op.name not in OPS:
                continue
            seen.add(op.name)
            assert _reemitted(op) == _generic(op), op.name
    missing = set(OPS) - seen
    assert not missing, f"registry entries no test module exercises: {sorted(missing)}"


# ---------------------------------------------------------------- evaluate against PJRT
# (every op and dtype on random and edge values: tests/test_registry_dtypes.py; here, structured ops
# with their less common attributes)

STRUCTURED = [
    ("stablehlo.pad", lambda: (np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(-1)),
     dict(low=(1, -1), high=(-1, 2), interior=(1, 0))),
    ("stablehlo.slice", lambda: (np.arange(12, dtype=np.int32).reshape(3, 4),),
     dict(start_indices=(0, 1), limit_indices=(3, 4), strides=(2, 2))),
    ("stablehlo.dynamic_slice", lambda: (np.arange(12, dtype=np.int32).reshape(3, 4), np.int32(2), np.int32(-1)),
     dict(slice_sizes=(2, 2))),
    ("stablehlo.concatenate", lambda: (np.ones((2, 1), np.float64), np.zeros((2, 3), np.float64)), dict(dimension=1)),
    ("stablehlo.reverse", lambda: (np.arange(6, dtype=np.uint8).reshape(2, 3),), dict(dimensions=(1,))),
    ("stablehlo.transpose", lambda: (np.arange(6, dtype=np.int64).reshape(1, 2, 3),), dict(permutation=(2, 0, 1))),
    ("stablehlo.reshape", lambda: (np.arange(6, dtype=np.float32),), dict(shape=(3, 2))),
    ("stablehlo.broadcast_in_dim", lambda: (np.arange(3, dtype=np.float32),),
     dict(shape=(2, 3, 4), broadcast_dimensions=(1,))),
    ("stablehlo.iota", lambda: (), dict(shape=(2, 3), dtype=np.dtype(np.float32), dimension=1)),
    ("stablehlo.dot_general", lambda: (np.arange(24, dtype=np.float64).reshape(2, 3, 4),
                                       np.arange(8, dtype=np.float64).reshape(2, 4)),
     dict(lhs_batching_dimensions=(0,), rhs_batching_dimensions=(0,), lhs_contracting_dimensions=(2,),
          rhs_contracting_dimensions=(1,), precision=None)),
    ("stablehlo.dot_general", lambda: (np.arange(6, dtype=np.int8).reshape(2, 3), np.arange(3, dtype=np.int8) * 50),
     dict(lhs_batching_dimensions=(), rhs_batching_dimensions=(), lhs_contracting_dimensions=(1,),
          rhs_contracting_dimensions=(0,), precision=None)),
    ("stablehlo.reduce", lambda: (np.arange(6, dtype=np.int32).reshape(2, 3), np.int32(1)),
     dict(dimensions=(1,), body="mul")),
    ("stablehlo.reduce", lambda: (np.array([[1.5, -np.inf, 3]], np.float32), np.float32(-np.inf)),
     dict(dimensions=(0, 1), body="max")),
    ("stablehlo.sort", lambda: (np.array([[3, np.nan, -1, 2]], np.float32), np.arange(4, dtype=np.int32)[None]),
     dict(dimension=1, comparator="GT", is_stable=True)),
    ("stablehlo.sort", lambda: (np.array([5, 1, 4, 1], np.int16),), dict(dimension=0, comparator="LT", is_stable=False)),
    ("stablehlo.gather", lambda: (np.arange(24, dtype=np.float32).reshape(4, 6), np.array([[3, 5], [0, -2]], np.int32)),
     dict(offset_dims=(1,), collapsed_slice_dims=(0,), operand_batching_dims=(), start_indices_batching_dims=(),
          start_index_map=(0, 1), index_vector_dim=1, slice_sizes=(1, 3), indices_are_sorted=False)),
    ("stablehlo.gather", lambda: (np.arange(24, dtype=np.int32).reshape(2, 3, 4), np.array([[1], [3]], np.int64)),
     dict(offset_dims=(1,), collapsed_slice_dims=(2,), operand_batching_dims=(0,), start_indices_batching_dims=(0,),
          start_index_map=(2,), index_vector_dim=1, slice_sizes=(1, 3, 1), indices_are_sorted=False)),
    ("stablehlo.scatter", lambda: (np.zeros(5, np.int32), np.array([[1], [1], [4], [9]], np.int32),
                                   np.array([3, 4, 5, 6], np.int32)),
     dict(update_window_dims=(), inserted_window_dims=(0,), input_batching_dims=(), scatter_indices_batching_dims=(),
          scatter_dims_to_operand_dims=(0,), index_vector_dim=1, computation="add", indices_are_sorted=False,
          unique_indices=False)),
    ("stablehlo.scatter", lambda: (np.arange(12, dtype=np.float32).reshape(3, 4), np.array([2, 0], np.int32),
                                   -np.ones((2, 2), np.float32)),
     dict(update_window_dims=(1,), inserted_window_dims=(0,), input_batching_dims=(), scatter_indices_batching_dims=(),
          scatter_dims_to_operand_dims=(0,), index_vector_dim=1, computation="set", indices_are_sorted=False,
          unique_indices=True)),
    ("stablehlo.dynamic_update_slice", lambda: (np.arange(12, dtype=np.float64).reshape(3, 4), -np.ones((2, 2)),
                                                np.int32(2), np.int32(-5)), {}),
    ("stablehlo.cholesky", lambda: (np.array([[[4.0, 2, 0.5], [2, 5, 1], [0.5, 1, 3]]] * 2, np.float64),),
     dict(lower=True)),
    ("stablehlo.cholesky", lambda: (np.array([[4.0, 1 - 1j], [1 + 1j, 3]], np.complex64),), dict(lower=False)),
    ("stablehlo.triangular_solve", lambda: (np.array([[2.0, 0, 0], [1, 3, 0], [-1, 2, 4]], np.float32),
                                            np.arange(6, dtype=np.float32).reshape(3, 2)),
     dict(left_side=True, lower=True, unit_diagonal=False, transpose_a="NO_TRANSPOSE")),
    ("stablehlo.triangular_solve", lambda: (np.array([[2.0, 1j, 3], [0, 3, 1], [0, 0, 1 + 1j]], np.complex128),
                                            np.arange(6, dtype=np.complex128).reshape(2, 3)),
     dict(left_side=False, lower=False, unit_diagonal=True, transpose_a="ADJOINT")),
    ("stablehlo.fft", lambda: (np.linspace(-1, 1, 10).reshape(2, 5).astype(np.float32),),
     dict(fft_type="RFFT", fft_length=(5,))),
    ("stablehlo.convolution", lambda: (np.arange(2 * 4 * 5 * 4, dtype=np.int32).reshape(2, 4, 5, 4) % 7 - 3,
                                       np.arange(6 * 2 * 3 * 2, dtype=np.int32).reshape(6, 2, 3, 2) % 5 - 2),
     dict(dimension_numbers=ops.ConvDimensions.default(4), window_strides=(2, 1), padding=((1, 2), (-1, 1)),
          lhs_dilation=(1, 2), rhs_dilation=(2, 1), window_reversal=(True, False), feature_group_count=2,
          batch_group_count=1, precision=None)),
    ("stablehlo.convolution", lambda: (np.linspace(-1, 1, 4 * 3 * 5).reshape(4, 5, 3), np.linspace(0, 2, 3 * 4 * 2).reshape(2, 3, 4)),
     dict(dimension_numbers=ops.ConvDimensions(0, 2, (1,), 1, 2, (0,), 0, 2, (1,)), window_strides=None, padding=None,
          lhs_dilation=None, rhs_dilation=None, window_reversal=None, feature_group_count=1, batch_group_count=2,
          precision="HIGHEST")),
    ("stablehlo.reduce_window", lambda: (np.arange(30, dtype=np.int32).reshape(5, 6), np.int32(0)),
     dict(window_dimensions=(2, 3), window_strides=(1, 2), base_dilations=(2, 1), window_dilations=(1, 2),
          padding=((1, 1), (0, 1)), body="add")),
    ("stablehlo.reduce_window", lambda: (np.array([[1.5, -2, 3, 7], [0.5, 9, -1, 2]], np.float32), np.float32(-np.inf)),
     dict(window_dimensions=(1, 2), window_strides=(1, 2), base_dilations=None, window_dilations=None, padding=None,
          body="max")),
    ("stablehlo.select_and_scatter", lambda: (np.array([[3, 1, 4, 1, 5, 9], [2, 6, 5, 3, 5, 8], [9, 7, 9, 3, 2, 3],
                                                         [8, 4, 6, 2, 6, 4]], np.int32),
                                              np.array([[1, 2, 3], [4, 5, 6]], np.int32), np.int32(0)),
     dict(window_dimensions=(2, 3), window_strides=(2, 2), padding=((0, 0), (1, 0)), select="GE", scatter="add")),
    ("stablehlo.bitcast_convert", lambda: (np.array([1.5, -2, np.inf], np.float32),), dict(dtype=np.dtype(np.uint8))),
    ("stablehlo.bitcast_convert", lambda: (np.arange(8, dtype=np.uint8).reshape(2, 4),), dict(dtype=np.dtype(np.int32))),
    ("stablehlo.reduce_precision", lambda: (np.array([1.0001, 70000, -3.14159, 1e-30, np.nan], np.float32),),
     dict(exponent_bits=5, mantissa_bits=10)),
    ("stablehlo.fft", lambda: (np.linspace(-1, 1, 6).astype(np.complex128).reshape(2, 3) * (1 + 1j),),
     dict(fft_type="IRFFT", fft_length=(2, 4))),
]


# the ops of STRUCTURED that evaluate leaves to the backend in every case: library algorithms
STRUCTURED_DECLINED = {"stablehlo.cholesky", "stablehlo.triangular_solve", "stablehlo.fft"}


def test_structured_evaluate_matches_xla_bit_for_bit():
    cases = [Case(name, arrays(), params) for name, arrays, params in STRUCTURED]
    problems = check(cases)
    assert not problems, "\n".join(problems)
    evaluated = {c.name for c in cases if c.evaluations()[0][1] is not None}
    assert {c.name for c in cases} - evaluated == STRUCTURED_DECLINED


def test_tuple_evaluate_matches_pjrt():
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, -2], np.int64)
    tup, gte = OPS["stablehlo.tuple"].evaluate, OPS["stablehlo.get_tuple_element"].evaluate
    t = tup(x, tup(y, None))
    assert isinstance(t, tuple) and len(t) == 2 and OPS["stablehlo.after_all"].evaluate() is None
    got = hf.jit(lambda a, b: [ops.get_tuple_element(ops.tuple(a, ops.tuple(b, ops.after_all())), 0),
                               ops.get_tuple_element(ops.get_tuple_element(ops.tuple(a, ops.tuple(b)), 1), 0)],
                 optimize=False)(x, y)
    for g, w in zip(got, [gte(t, 0), gte(gte(t, 1), 0)]):
        assert _mismatch(w, np.asarray(g)) is None


def _evaluate(name, *arrays, **params):
    info = OPS[name]
    return info.evaluate(*arrays, **info.params(**params))


F16, C64 = np.dtype(np.float16), np.dtype(np.complex64)


@pytest.mark.parametrize("name,arrays,params,why", [
    ("stablehlo.floor", (np.float32([-1e-40]),), {}, "XLA:CPU flushes subnormals"),
    ("stablehlo.add", (np.float32([1e-38]), np.float32([-9e-39])), {}, "a subnormal result"),
    ("stablehlo.divide", (np.float32([0.0]), np.float32([0.0])), {}, "a NaN result: its bits are the backend's"),
    ("stablehlo.maximum", (np.float32([1.0]), np.float32([np.nan])), {}, "which NaN max keeps"),
    ("stablehlo.maximum", (np.float32([0.0]), np.float32([-0.0])), {}, "which zero max keeps"),
    ("stablehlo.sqrt", (np.array([complex(4, 1)], C64),), {}, "complex sqrt: a library function"),
    ("stablehlo.multiply", (np.array([1 + 2j], C64), np.array([3 - 1j], C64)), {}, "XLA's kernels fuse a*b-c*d"),
    ("stablehlo.abs", (np.array([3 + 4j], C64),), {}, "complex abs: a hypot"),
    ("stablehlo.divide", (np.int32([5]), np.int32([0])), {}, "integer division by 0"),
    ("stablehlo.divide", (np.int8([-128]), np.int8([-1])), {}, "MIN / -1"),
    ("stablehlo.add", (np.array([True]), np.array([True])), {}, "xor in XLA:CPU's kernels, or in its folder"),
    ("stablehlo.count_leading_zeros", (np.int8([-1]),), {}, "XLA's folder counts 64 bits"),
    ("stablehlo.reduce_precision", (np.float32([np.nan]),), dict(exponent_bits=5, mantissa_bits=0),
     "XLA:CPU's kernel keeps the NaN, its folder makes it inf"),
    ("stablehlo.reduce_precision", (np.float32([1e-40]),), dict(exponent_bits=8, mantissa_bits=7), "a subnormal"),
    ("stablehlo.convert", (np.float32([np.nan]),), dict(dtype=F16), "a NaN's payload"),
    ("stablehlo.reduce", (np.float32([0.1, 0.2, 0.3]), np.float32(0)), dict(dimensions=(0,), body="add"),
     "the order of an inexact float sum"),
    ("stablehlo.reduce", (np.float32([2.0 ** 24, 1.0, 1.0]), np.float32(0)), dict(dimensions=(0,), body="add"),
     "a partial sum that rounds"),
    ("stablehlo.reduce", (np.float32([1.0, -1.0]), np.float32(0)), dict(dimensions=(0,), body="add"),
     "a zero sum: which zero depends on the order"),
    ("stablehlo.dot_general", (np.float32([0.1, 0.2]), np.float32([3.0, 7.0])),
     dict(lhs_contracting_dimensions=(0,), rhs_contracting_dimensions=(0,)), "an inexact float sum"),
    ("stablehlo.reduce", (np.float32([-0.0]), np.float32(0)), dict(dimensions=(0,), body="add"),
     "0 + -0 is +0; XLA drops the init of a one-element reduce"),
    ("stablehlo.reduce", (np.int32([[5]]), np.int32(2)), dict(dimensions=(1,), body="add"),
     "an init that is no identity (XLA may leave it out)"),
    ("stablehlo.reduce_window", (np.ones(3, np.int32), np.int32(1)),
     dict(window_dimensions=(2,), padding=((1, 0),), body="add"), "an init that is no identity"),
    ("stablehlo.convolution", (np.full((1, 1, 4), 100, np.int8), np.full((1, 1, 2), 100, np.int8)),
     dict(dimension_numbers=ops.ConvDimensions.default(3)), "XLA's folder saturates an int8 overflow"),
    ("stablehlo.fft", (np.ones(4, np.complex64),), dict(fft_type="FFT", fft_length=(4,)),
     "XLA never folds an FFT; its FFT library rounds its own way"),
    ("stablehlo.sort", (np.float32([2.0, np.nan, 1.0]),), dict(dimension=0, comparator="LT", is_stable=True),
     "LT is no strict weak order with NaN"),
    ("stablehlo.exponential", (np.float32([1.0]),), None, "library functions are not evaluated"),
])
def test_evaluate_declines_what_the_backend_computes_differently(name, arrays, params, why):
    if params is None:
        assert OPS[name].evaluate is None, why
    else:
        assert _evaluate(name, *arrays, **params) is None, why


# ---------------------------------------------------------------- rules and params

def test_rules_take_shape_dtype_pairs():
    assert OPS["stablehlo.add"].rule(((2, 3), np.float32), ((2, 3), np.float32)) == [((2, 3), F32)]
    assert OPS["stablehlo.fft"].rule(((4, 8), np.float32), fft_type="rfft", fft_length=[8]) == \
        [((4, 5), np.dtype(np.complex64))]
    assert OPS["stablehlo.reduce"].rule(((2, 3), F32), ((), F32), dimensions=[1], body="add") == [((2,), F32)]
    with pytest.raises(ValueError, match=r"pad: edge_padding_low \[1\] must have 2 entries"):
        OPS["stablehlo.pad"].rule(((2, 3), F32), ((), F32), low=(1,), high=(0, 0))
    assert Spec.of(((2,), np.int32)).ndim == 1


def test_pattern_op_sets_come_from_the_registry():
    from hloforge.passes import fold, pad
    assert "stablehlo.exponential" in pad.UNARY_OPS and "stablehlo.convert" in pad.UNARY_OPS
    assert "stablehlo.add" in fold.ELEMENTWISE_ROOTS and "stablehlo.select" in fold.OTHER_ROOTS
    assert set(registry.names("elementwise", "binary")) >= {"stablehlo.add", "stablehlo.atan2"}


def test_huge_pad_is_a_clear_error():
    with pytest.raises(ValueError, match=r"pad: result shape .* larger than int64 holds"):
        hf.trace(lambda x: ops.pad(x, 0.0, (2 ** 62,), (2 ** 62,)), hf.ShapeDtype((4,), np.float32))
    with pytest.raises(ValueError, match=r"pad: edge_padding_low \[36893488147419103232\] does not fit in int64"):
        hf.trace(lambda x: ops.pad(x, 0.0, (2 ** 65,), (0,)), hf.ShapeDtype((4,), np.float32))


# ---------------------------------------------------------------- the region helper

SPEC = hf.ShapeDtype((2, 3), np.float32)


@pytest.mark.parametrize("fn,error,match", [
    (lambda x: ops.reduce(x, 0.0, (0,), lambda a, b: ops.convert(a, np.float64)), TypeError,
     r"reduce: body must return 1 value\(s\) of types \(float32\[\]\), got .*output 0 has type float64\[\], "
     r"expected float32\[\]"),
    (lambda x: ops.reduce(x, 0.0, (0,), lambda a, b: (a, b)), TypeError,
     r"reduce: body must return 1 value\(s\) of types \(float32\[\]\), got 2 value\(s\)"),
    (lambda x: ops.reduce(x, 0.0, (0,), lambda a, b: ops.add(a, x[0, 0])), ValueError,
     r"Tensor\(shape=\(2, 3\), dtype=float32\) was made in the trace, which is not visible here"),
    (lambda x: ops.sort(x, 0, lambda p, q: ops.add(p, q)), TypeError,
     r"sort: comparator must return a 0-d bool Tensor, got Tensor\(shape=\(\), dtype=float32\); output 0 has "
     r"type float32\[\], expected bool\[\]"),
])
def test_region_errors(fn, error, match):
    with pytest.raises(error, match=match):
        hf.trace(fn, SPEC)


def test_failed_body_leaves_no_half_built_op():
    def fn(x):
        try:
            ops.reduce(x, 0.0, (0,), lambda a, b: 1 / 0)
        except ZeroDivisionError:
            pass
        return ops.exp(x)
    assert "stablehlo.reduce" not in hf.trace(fn, SPEC).op_counts()


def test_a_tensor_leaked_out_of_a_body_is_refused():
    leaked = []

    def body(a, b):
        leaked.append(a)
        return ops.add(a, b)

    def fn(x):
        ops.reduce(x, 0.0, (0,), body)
        return ops.add(leaked[0], leaked[0])

    with pytest.raises(ValueError, match=r"was made in reduce: body, which has ended; pass it in as an operand"):
        hf.trace(fn, SPEC)


def test_builder_emits_into_an_existing_module():
    m = hf.trace(lambda x: ops.exp(x), SPEC)
    main = m.entry_function()
    block = main.regions[0].blocks[0]
    ret = list(block.operations)[-1]
    from hloforge.frontend.context import ir
    from hloforge.frontend.tracing import active
    b = Builder(module=m.mlir, ip=ir.InsertionPoint(ret))
    with b.ctx, ir.Location.unknown(), active(b):
        y = ops.neg(b.tensor(ret.operands[0]))
        ret.operands[0] = y.value
    m.verify()
    assert m.op_counts()["stablehlo.negate"] == 1
    np.testing.assert_allclose(np.asarray(m.compile()(np.ones((2, 3), np.float32))), -np.e * np.ones((2, 3)), rtol=1e-6)


def test_custom_call_extra_attributes_are_validated():
    with pytest.raises(TypeError, match="extra_attributes must map names other than call_target_name.*'api_version': 3"):
        hf.trace(lambda x: ops.custom_call([x], "t", [((2,), np.float32)], extra_attributes={"api_version": 3}),
                 hf.ShapeDtype((2,), np.float32))


def test_summary_prints_every_op_of_a_module_from_its_decoded_parameters():
    def f(x):
        y = hf.ops.fft(hf.ops.pad(x, 0.0, (0, 1), (0, 1)), "RFFT", (10,))
        return y, hf.lax.reduce_window(x, -np.inf, hf.lax.max, (1, 2), (1, 1), "VALID"), hf.numpy.sort(x)

    m = hf.trace(f, hf.ShapeDtype((2, 8), np.float32))
    lines = {op.name: OPS[op.name].summary(op) for op in m.walk() if op.name in OPS}
    assert lines["stablehlo.pad"] == "low=[0, 1] high=[0, 1] interior=[0, 0]"
    assert lines["stablehlo.fft"] == "fft_type=RFFT fft_length=[10]"
    assert lines["stablehlo.constant"] in ("value=0.0 dtype=float32", "value=-inf dtype=float32")
    assert lines["stablehlo.reduce_window"].startswith("window_dimensions=[1, 2] padding=[[0, 0], [0, 0]]")
    assert lines["stablehlo.sort"] == "dimension=1 comparator=body is_stable=True"
    assert lines["stablehlo.maximum"] == ""  # (reduce_window's body: an op without parameters)
    dot = m.graph()
    assert "pad\\nlow=[0, 1] high=[0, 1] interior=[0, 0]" in dot and "sort\\ndimension=1" in dot
