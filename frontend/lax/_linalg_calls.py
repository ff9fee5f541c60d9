"""What hloforge.lax.linalg's functions share: the LAPACK/cuSOLVER custom call as jax emits it, the
target tables (per factorization, platform -> target name and backend_config), and helpers on
hloforge.ops (checks, adjoints, NaN for failed solves, triangles, the composite wrapper).

A platform missing from a table has no lowering of that factorization (``eig`` on GPU); a
``None`` entry lowers without a custom call (stablehlo.triangular_solve, the pivots' while loop).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from hloforge.target import UnsupportedOnDevice, default_kind
from hloforge.frontend import dtypes, ops
from hloforge.frontend.context import ir, stablehlo
from hloforge.frontend.tracing import as_tensor, current_builder
from hloforge.runtime import pjrt

_LAPACK_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
                  np.dtype(np.complex128): "z"}
SUPPORTED = tuple(_LAPACK_PREFIX)
PLATFORMS = ("cpu", "gpu")  # (the device kinds with LAPACK/cuSOLVER lowerings: a TPU has none here)


# ---------------------------------------------------------------- the custom call

def _platform(platform):
    """The platform the factorization's custom call is for: ``platform`` ("cpu"/"gpu"; None: the
    device kind programs are built for, ``target.default_kind()``)."""
    if platform is None:
        platform = default_kind()
    platform = {"cuda": "gpu", "rocm": "gpu"}.get(platform, platform)
    if platform == "tpu":
        raise UnsupportedOnDevice(
            "hloforge.lax.linalg: the factorizations (lu, qr, cholesky, eigh, svd, solve, det, ...) have no TPU "
            "lowering in hloforge yet (jax's are XLA expansions it does not emit); build this program for the CPU "
            "(platform='cpu', or hf.config.device = 'cpu')")
    if platform not in PLATFORMS:
        raise ValueError(f"platform must be {' or '.join(map(repr, PLATFORMS))}, got {platform!r}")
    return platform


def _lapack_target(fn: str, dtype) -> str:
    """jaxlib's LAPACK target name for ``fn`` (e.g. "potrf_ffi") and ``dtype``; loads LAPACK
    into jaxlib's kernels (through the PJRT adapter)."""
    pjrt.load_lapack()
    return f"lapack_{_LAPACK_PREFIX[np.dtype(dtype)]}{fn}"


def _layout(rank: int, column_major: bool) -> tuple:
    if column_major and rank >= 2:
        return (rank - 2, rank - 1) + tuple(range(rank - 3, -1, -1))
    return tuple(range(rank - 1, -1, -1))


def _config_attr(value) -> ir.Attribute:
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, np.uint8):
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value))
    if isinstance(value, str):  # a LAPACK flag character ('L', 'N', ...)
        return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), ord(value))
    raise TypeError(f"custom_call: unsupported backend_config value {value!r}")


def custom_call(target: str, operands, results, *, backend_config=None, operand_output_aliases=None,
                batch_dims: int = 0, column_major: bool = True, loc=None):
    """Emit ``stablehlo.custom_call @target`` the way jax's ``_linalg_ffi_lowering`` does:
    api_version 1 with an ``mhlo.backend_config`` dictionary, column-major layouts for the
    highest-rank arrays (row-major for the others), ``mhlo.frontend_attributes.num_batch_dims``
    and the operand/output aliases, emitted through the registry (``ops.custom_call``'s
    ``extra_attributes``). Returns one Tensor per result.

    (The sdy.sharding_rule jax adds for Shardy is not emitted.)
    """
    b = current_builder("custom_call")
    operands = [as_tensor(o, what=f"custom_call {target}") for o in operands]
    results = [(tuple(s), np.dtype(d)) for s, d in results]
    top = max(o.ndim for o in operands)
    with b.ctx:
        index = ir.IndexType.get()

        def layouts(shapes):
            return ir.ArrayAttr.get([
                ir.DenseIntElementsAttr.get(np.asarray(_layout(len(s), column_major and len(s) == top), np.int64)
                                            .reshape(-1) if len(s) else np.zeros((0,), np.int64), type=index)
                for s in shapes])

        extra = {
            "operand_layouts": layouts([o.shape for o in operands]),
            "result_layouts": layouts([s for s, _ in results]),
            "mhlo.backend_config": ir.DictAttr.get({k: _config_attr(v) for k, v in (backend_config or {}).items()}),
            "mhlo.frontend_attributes": ir.DictAttr.get({"num_batch_dims": ir.StringAttr.get(str(batch_dims))}),
        }
        if operand_output_aliases:
            extra["output_operand_aliases"] = ir.ArrayAttr.get([
                stablehlo.OutputOperandAlias.get(output_tuple_indices=[out] if len(results) > 1 else [],
                                                 operand_index=inp, operand_tuple_indices=[])
                for inp, out in operand_output_aliases.items()])
    return ops.custom_call(operands, target, results, extra_attributes=extra, loc=loc)




# ---------------------------------------------------------------- the targets, per platform

@dataclasses.dataclass(frozen=True)
class Target:
    """A custom call of one factorization on one platform: its target ``name`` (a string, or a
    function of the dtype for LAPACK's lapack_spotrf_ffi, lapack_zpotrf_ffi, ...) and ``config``,
    which builds its backend_config from the function's static options."""
    name: str | Callable
    config: Callable = lambda **options: {}

    def target(self, dtype) -> str:
        return self.name(dtype) if callable(self.name) else self.name


def _lapack(fn: str, complex_fn: str | None = None) -> Callable:
    """LAPACK's ``fn`` for a dtype; ``complex_fn`` for complex dtypes where LAPACK names it apart."""
    return lambda dtype: _lapack_target(complex_fn if complex_fn and dtypes.is_complex(dtype) else fn, dtype)


def _flag(on: bool, yes: str, no: str) -> str:
    return yes if on else no


CHOLESKY = {"cpu": Target(_lapack("potrf_ffi"), lambda: {"uplo": "L"}),
            "gpu": Target("cusolver_potrf_ffi", lambda: {"lower": True})}
# None: XLA's stablehlo.triangular_solve, no composite (jax's GPU lowering)
TRIANGULAR_SOLVE = {
    "cpu": Target(_lapack("trsm_ffi"), lambda left_side, lower, transpose_a, conjugate_a, unit_diagonal: {
        "side": _flag(left_side, "L", "R"), "uplo": _flag(lower, "L", "U"),
        "trans_x": _flag(conjugate_a, "C", "T") if transpose_a else "N", "diag": _flag(unit_diagonal, "U", "N")}),
    "gpu": None}
GEQRF = {"cpu": Target(_lapack("geqrf_ffi")), "gpu": Target("cusolver_geqrf_ffi")}
HOUSEHOLDER_PRODUCT = {"cpu": Target(_lapack("orgqr_ffi", "ungqr_ffi")), "gpu": Target("cusolver_orgqr_ffi")}
EIGH = {"cpu": Target(_lapack("syevd_ffi", "heevd_ffi"), lambda lower: {"mode": "V", "uplo": _flag(lower, "L", "U")}),
        "gpu": Target("cusolver_syevd_ffi", lambda lower: {"algorithm": np.uint8(0), "lower": bool(lower)})}
LU = {"cpu": Target(_lapack("getrf_ffi")), "gpu": Target("cusolver_getrf_ffi")}
# None: hloforge's while loop (linalg.lu_pivots_to_permutation), as jax's CPU lowering
LU_PIVOTS_TO_PERMUTATION = {"cpu": None, "gpu": Target("cu_lu_pivots_to_permutation")}
EIG = {"cpu": Target(_lapack("geev_ffi"), lambda left, right: {"compute_left": _flag(left, "V", "N"),
                                                                "compute_right": _flag(right, "V", "N")})}
# The platforms' SVDs differ in their results too (linalg.SVD_LOWERINGS): LAPACK's divide and
# conquer; on GPU cuSOLVER's Jacobi SVD for m, n <= 1024 and QR iteration above, as jax's default.
GESDD = Target(_lapack("gesdd_ffi"), lambda full_matrices, compute_uv: {
    "mode": ("A" if full_matrices else "S") if compute_uv else "N"})
GESVDJ = Target("cusolver_gesvdj_ffi", lambda full_matrices, compute_uv: {"full_matrices": bool(full_matrices),
                                                                           "compute_uv": bool(compute_uv)})
GESVD = Target("cusolver_gesvd_ffi", lambda full_matrices, compute_uv, transposed: {
    "full_matrices": bool(full_matrices), "compute_uv": bool(compute_uv), "transposed": transposed})


# ---------------------------------------------------------------- helpers (hloforge.ops only)

def _c(value, dtype, shape=()):
    return ops.broadcast_in_dim(ops.constant(np.asarray(value).astype(dtype)), tuple(shape), ())


def _check(name, x, square=True):
    x = as_tensor(x, what=f"linalg.{name}")
    if x.ndim < 2:
        raise ValueError(f"{name}: operand must have rank >= 2 (a batch of matrices), got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: operand must be a batch of square matrices, got shape {x.shape}")
    if x.dtype not in SUPPORTED:
        raise TypeError(f"{name}: dtype {x.dtype} is not supported (LAPACK/cuSOLVER take float32, float64, "
                        "complex64 or complex128)")
    return x


def _adjoint(x):
    nd = x.ndim
    t = ops.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    return ops.complex(ops.real(t), ops.neg(ops.imag(t))) if dtypes.is_complex(x.dtype) else t


def _symmetrize(x):
    return ops.divide(ops.add(x, _adjoint(x)), _c(2, x.dtype, x.shape))


def _nan_where_not(ok, x):
    """x, with every matrix of a batch whose ``ok`` flag is false set to NaN (jax's
    _replace_not_ok_with_nan)."""
    nb = ok.ndim
    mask = ops.broadcast_in_dim(ok, x.shape, tuple(range(nb)))
    return ops.select(mask, x, _c(np.nan, x.dtype, x.shape))


def _info_ok(info, direction="EQ"):
    return ops.compare(info, _c(0, np.int32, info.shape), direction)


def _triangle(x, lower, k=0):
    shape = x.shape
    r = len(shape)
    d = ops.subtract(ops.iota(shape, np.int32, r - 2), ops.iota(shape, np.int32, r - 1))  # i - j
    keep = ops.compare(d, _c(-k, np.int32, shape), "GE" if lower else "LE")
    return ops.select(keep, x, _c(0, x.dtype, shape))


def _eye(dtype, batch, m, n):
    shape = tuple(batch) + (m, n)
    r = len(shape)
    eq = ops.compare(ops.iota(shape, np.int32, r - 2), ops.iota(shape, np.int32, r - 1), "EQ")
    return ops.select(eq, _c(1, dtype, shape), _c(0, dtype, shape))


def _composite(name, operands, impl, **attributes):
    """``impl(*operands)`` as ``stablehlo.composite "hloforge.linalg.<name>"`` with ``attributes``
    (the static options the derivative rules read); a list of Tensors."""
    return ops.composite(list(operands), f"hloforge.linalg.{name}", impl, attributes=attributes)


def _slice_last2(x, rows, cols):
    nd = x.ndim
    return ops.slice(x, [0] * nd, list(x.shape[:-2]) + [rows, cols])

