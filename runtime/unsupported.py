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
