"""The package's import graph: no cycles, at module level or inside functions, and the core layer
imports neither passes nor runtime."""
from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE_DIRS = ("frontend", "passes", "runtime")
# the core: what every layer builds on, and which may reach up into none of them
CORE = ("hloforge.frontend.context", "hloforge.frontend.dtypes", "hloforge.frontend.module",
        "hloforge.frontend.attributes", "hloforge.frontend.tracing", "hloforge.frontend.registry",
        "hloforge.frontend.location", "hloforge.frontend.inspection")


def _modules() -> dict:
    """hloforge module name -> file path, for every module of the package."""
    out = {"hloforge": os.path.join(ROOT, "__init__.py")}
    for top in PACKAGE_DIRS:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith(".py"):
                    continue
                rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".")
                name = "hloforge." + (rel[:-len(".__init__")] if rel.endswith("__init__") else rel)
                out[name] = os.path.join(folder, f)
    return out


def _imports(path: str, modules: dict) -> set:
    """The hloforge modules ``path`` imports anywhere (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                     for a in node.names]
        else:
            continue
        found |= {n for n in names if n in modules}
    return found


def _graph() -> dict:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def _cycles(graph: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles(_graph()) == []


def test_core_does_not_reach_up_into_passes_or_runtime():
    graph = _graph()
    for name in CORE:
        up = {m for m in graph[name] if m.startswith(("hloforge.passes", "hloforge.runtime"))}
        assert not up, f"{name} imports {sorted(up)}"


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
