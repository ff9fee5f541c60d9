"""Looking at modules: a short text summary and a Graphviz graph of the entry function."""
from __future__ import annotations

import html
import os
import shutil
import subprocess

from hloforge.frontend.context import ir, shape_dtype_of
from hloforge.frontend.registry import OPS


def _type_str(t) -> str:
    try:
        shape, dtype = shape_dtype_of(t)
        return f"{dtype.name}[{', '.join('?' if d is None else str(d) for d in shape)}]"
    except TypeError:
        return str(t)


def _details(op) -> str | None:
    """The op's parameters (``OpInfo.summary``), or None for an op without a registry entry (or
    one whose attributes hloforge cannot read: inspection shows what it can)."""
    info = OPS.get(op.name)
    if info is None:
        return None
    try:
        return info.summary(op) or None
    except (TypeError, ValueError, NotImplementedError):
        return None


def details(module) -> dict:
    """{"fft": [...], "pad": [...]}: each op's parameters and operand/result types."""
    out = {"fft": [], "pad": []}
    for op in module.walk():
        if op.name in ("stablehlo.fft", "stablehlo.pad"):
            out[op.name.split(".")[-1]].append({"params": _details(op), "operand": _type_str(op.operands[0].type),
                                                "result": _type_str(op.results[0].type)})
    return out


def summary(module) -> str:
    """Functions with their signatures, op counts, and every fft and pad with its parameters."""
    lines = []
    functions = module.functions()
    lines.append(f"module: {len(functions)} function(s), entry @{module.entry}")
    for f in functions:
        name = ir.StringAttr(f.attributes["sym_name"]).value
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        vis = ir.StringAttr(f.attributes["sym_visibility"]).value if "sym_visibility" in f.attributes else "public"
        ins = ", ".join(_type_str(t) for t in ftype.inputs)
        outs = ", ".join(_type_str(t) for t in ftype.results)
        lines.append(f"  @{name}({ins}) -> ({outs})  [{vis}]")
    counts = module.op_counts()
    lines.append(f"ops: {sum(counts.values())}")
    width = max((len(k) for k in counts), default=0)
    lines += [f"  {k:<{width}}  {v}" for k, v in counts.items()]
    for kind, found in details(module).items():
        if found:
            lines.append(f"{kind}:")
            lines += [f"  {d['params'] or '(parameters unread)'}  {d['operand']} -> {d['result']}" for d in found]
    return "\n".join(lines)


def graph(module) -> str:
    """Graphviz DOT of the entry function: arguments, ops (with result shapes) and data edges."""
    f = module.entry_function()
    block = f.regions[0].blocks[0]
    ids: dict = {}
    lines = [f'digraph "{module.entry}" {{', "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    for i, arg in enumerate(block.arguments):
        ids[arg] = f"arg{i}"
        lines.append(f'  arg{i} [shape=ellipse, label="%arg{i}\\n{_type_str(arg.type)}"];')
    for n, op in enumerate(block.operations):
        op = op.operation
        node = f"op{n}"
        label = op.name.replace("stablehlo.", "")
        extra = _details(op)
        if extra:
            label += "\\n" + extra
        if op.results:
            label += "\\n" + ", ".join(_type_str(r.type) for r in op.results)
        lines.append(f'  {node} [label="{html.escape(label, quote=True)}"];')
        for operand in op.operands:
            if operand in ids:
                lines.append(f"  {ids[operand]} -> {node};")
        for r in op.results:
            ids[r] = node
    lines.append("}")
    return "\n".join(lines)


def save_graph(module, path) -> None:
    """Write ``.dot``; ``.svg``/``.png`` need Graphviz's ``dot`` program."""
    path = str(path)
    ext = os.path.splitext(path)[1].lower()
    dot = graph(module)
    if ext == ".dot":
        with open(path, "w") as f:
            f.write(dot + "\n")
        return
    if ext not in (".svg", ".png"):
        raise ValueError(f"save_graph: unknown extension {ext!r} of {path}; use .dot, .svg or .png")
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError(f"save_graph: writing {ext} needs Graphviz's `dot` program, which is not on PATH "
                           "(install graphviz, e.g. `apt-get install graphviz`, or save as .dot)")
    result = subprocess.run([exe, f"-T{ext[1:]}", "-o", path], input=dot.encode(), capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"save_graph: dot failed: {result.stderr.decode().strip()}")
