"""One-line explanations for module contents hloforge's runtime cannot take."""
from __future__ import annotations

import re

_QUANT_TYPE = re.compile(r"tensor<[^<>]*!quant\.uniform<[^<>]*>>|!quant\.uniform<[^<>]*>")
_OP = re.compile(r'"?\b((?:stablehlo|chlo|func)\.[a-z_]+)\b"?')


def quantized_use(text: str) -> str | None:
    """For module text using ``!quant.uniform`` types: one line naming the first op that uses one
    and its type; None for other text.

    jaxlib 0.10.2 registers StableHLO's stablehlo-legalize-quant-to-math pass (quantized ops to
    integer math) but its MLIR has no quant dialect, so such a module cannot even be parsed."""
    fallback = None
    for line in text.splitlines():
        found = _QUANT_TYPE.search(line)
        if not found:
            continue
        ops = [op for op in _OP.findall(line) if not op.startswith("func.")]
        if ops or fallback is None:
            op = ops[0] if ops else (_OP.findall(line) or ["the module"])[0]
            fallback = (f"{op} uses the quantized type {found.group(0)}: quantized modules are not supported "
                        f"(this jaxlib's MLIR has no quant dialect, so StableHLO's quantized-to-integer "
                        f"legalization cannot run)")
            if ops:
                return fallback
    return fallback


# jax 0.10.2's Python-callback custom calls: xla_ffi[_partitioned]_python_{cpu,gpu}_callback (debug.print,
# debug.callback, pure_callback, io_callback), xla_buffer_python_{cpu,gpu}_callback[_cmd_buffer]
# (buffer_callback), and the xla_python_{cpu,gpu}_callback of older jax
_PYTHON_CALLBACK = re.compile(r'(?:custom_call\s*@|call_target_name\s*=\s*")(xla_\w*python_\w*callback\w*)')


def python_callback(text: str) -> str | None:
    """For module text calling one of jax's Python callbacks: one line naming its custom-call target
    and why it cannot run; None for other text.

    The callback's backend_config only indexes a table of Python functions that jax hands to XLA
    with the executable it compiles in its own process; run without it, XLA calls through nothing
    (the process dies with SIGSEGV)."""
    found = _PYTHON_CALLBACK.search(text) if "python" in text else None
    if found is None:
        return None
    return (f"stablehlo.custom_call @{found.group(1)} is a jax Python callback (jax.debug.print, "
            f"jax.debug.callback, jax.pure_callback, jax.experimental.io_callback, buffer_callback): its "
            f"Python function lives in the jax process that lowered the module and cannot run from a parsed "
            f"module (hloforge.debug.print/callback and hloforge.pure_callback do the same in hloforge's own "
            f"traces)")
