"""No import cycles through runtime/ or frontend/jit.py, counting imports inside functions too."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _modules():
    found = {}
    for folder, _, files in os.walk(ROOT):
        if os.sep + "tests" in folder[len(ROOT):] or os.sep + "benchmarks" in folder[len(ROOT):]:
            continue
        for f in files:
            if f.endswith(".py"):
                rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].split(os.sep)
                if rel[-1] == "__init__":
                    rel = rel[:-1]
                found[".".join(["hloforge"] + rel)] = os.path.join(folder, f)
    return found


def _imports(path, modules):
    """Every hloforge module ``path`` imports, at any depth (``from a import b`` counts ``a.b`` when
    that is a module, else ``a``)."""
    out = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                name = f"{node.module}.{a.name}"
                out.add(name if name in modules else node.module)
    return {m for m in out if m in modules}


def test_no_import_cycle_through_runtime_or_jit():
    modules = _modules()
    graph = {m: _imports(p, modules) for m, p in modules.items()}
    watched = [m for m in modules if m.startswith("hloforge.runtime") or m == "hloforge.frontend.jit"]
    assert "hloforge.runtime.compiler" in watched
    for start in watched:
        # a path from start back to start, through any modules (the package itself excluded:
        # importing hloforge from a submodule that hloforge's __init__ never imports is no cycle)
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    raise AssertionError("import cycle: " + " -> ".join(path + [start]))
                if nxt not in seen and nxt != "hloforge":
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
