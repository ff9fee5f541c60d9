"""Call graphs: recursion, how deep calls and regions nest, and inlining in time linear in its output.

StableHLO has no recursion: a call cycle makes XLA (and hloforge's AD) recurse until the process
dies, so it is refused. Without cycles, XLA's converter still recurses once per call and region
level on a worker thread whose stack overflows near 200 levels, and hloforge's AD re-emits
functions recursively; both inline deep call chains first. Walks here are iterative, so any depth
of chain or nesting is measured without Python recursion.
"""
from __future__ import annotations

from hloforge.frontend.context import inline_call, ir, passmanager

CALL = "func.call"
MAX_INLINED_CALLS = 1_000_000  # per function inlined into: beyond, inlining would not end in minutes


class Site:
    """A reference from one function to another: a call, a composite's decomposition, a custom
    call's computations. ``depth``: how many regions enclose the op within its function.
    ``inline``: whether the inliner will inline it (set by ``inline_calls`` before it changes
    anything: once a function has been inlined into, its old sites' ops may be gone)."""
    __slots__ = ("op", "callee", "depth", "is_call", "inline")

    def __init__(self, op, callee: str, depth: int):
        self.op, self.callee, self.depth = op, callee, depth
        self.is_call = op.name == CALL
        self.inline = False


def callee_name(op) -> str:
    """The function a ``func.call`` op calls."""
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _references(op) -> list:
    """The functions ``op`` (an ir.Operation) refers to, as XLA would turn them into computations."""
    name = op.name
    if name == CALL:
        return [callee_name(op)]
    if name == "stablehlo.composite" and "decomposition" in op.attributes:
        return [ir.FlatSymbolRefAttr(op.attributes["decomposition"]).value]
    if name == "stablehlo.custom_call" and "called_computations" in op.attributes:
        return [ir.FlatSymbolRefAttr(a).value for a in ir.ArrayAttr(op.attributes["called_computations"])]
    return []


def scan(ops, depth: int = 0) -> tuple:
    """(sites, how deep regions nest) of ``ops`` (ir.Operations at region depth ``depth``) and
    everything nested in them."""
    sites, deepest = [], depth
    stack = [(op, depth) for op in ops]
    while stack:
        op, d = stack.pop()
        deepest = max(deepest, d)
        for callee in _references(op):
            sites.append(Site(op, callee, d))
        for region in op.regions:
            for block in region.blocks:
                stack.extend((inner.operation, d + 1) for inner in block.operations)
    return sites, deepest


def function_name(f) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def is_public(f) -> bool:
    return "sym_visibility" not in f.attributes or ir.StringAttr(f.attributes["sym_visibility"]).value == "public"


def single_block(f) -> bool:
    return len(f.regions) == 1 and len(f.regions[0].blocks) == 1


class CallGraph:
    """The functions of ``module`` (an ir.Module); each one's sites and nesting, read on first use."""

    def __init__(self, module: ir.Module):
        self.module = module  # (its ops are valid only while it lives)
        self.functions = {function_name(op): op.operation for op in module.body.operations
                          if op.operation.name == "func.func"}
        self._scanned: dict = {}

    def public(self) -> list:
        return [name for name, f in self.functions.items() if is_public(f)]

    def sites(self, name: str) -> list:
        return self._scan(name)[0]

    def nesting(self, name: str) -> int:
        return self._scan(name)[1]

    def _scan(self, name: str) -> tuple:
        found = self._scanned.get(name)
        if found is None:
            f = self.functions[name]
            ops = [op.operation for op in f.regions[0].blocks[0].operations] if single_block(f) else []
            found = self._scanned[name] = scan(ops)
        return found

    def edges(self, name: str, calls_only: bool = False) -> list:
        """The sites of ``name`` whose callee is a function of the module."""
        return [s for s in self.sites(name) if s.callee in self.functions and (s.is_call or not calls_only)]

    def find_cycle(self, roots, calls_only: bool = False):
        """A cycle reachable from ``roots``: the names from the root that reaches it, ending with
        the first one repeated (``main, f, g, f``); None if there is none."""
        state: dict = {}  # name -> 1 while on the path, 2 when done
        for root in roots:
            if root not in self.functions or state.get(root):
                continue
            path, iters = [root], [iter(self.edges(root, calls_only))]
            state[root] = 1
            while path:
                site = next(iters[-1], None)
                if site is None:
                    state[path.pop()] = 2
                    iters.pop()
                    continue
                seen = state.get(site.callee)
                if seen == 1:
                    return path + [site.callee]
                if seen is None:
                    state[site.callee] = 1
                    path.append(site.callee)
                    iters.append(iter(self.edges(site.callee, calls_only)))
        return None

    def cyclic(self, roots) -> set:
        """The functions reachable from ``roots`` that lie on a cycle of calls (Tarjan's algorithm)."""
        index, low, on_stack, stack, out = {}, {}, set(), [], set()
        for root in roots:
            if root not in self.functions or root in index:
                continue
            work = [(root, iter(self.edges(root, calls_only=True)))]
            index[root] = low[root] = len(index)
            stack.append(root)
            on_stack.add(root)
            while work:
                name, edges = work[-1]
                site = next(edges, None)
                if site is not None:
                    callee = site.callee
                    if callee == name:
                        out.add(name)
                    if callee not in index:
                        index[callee] = low[callee] = len(index)
                        stack.append(callee)
                        on_stack.add(callee)
                        work.append((callee, iter(self.edges(callee, calls_only=True))))
                    elif callee in on_stack:
                        low[name] = min(low[name], index[callee])
                    continue
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[name])
                if low[name] == index[name]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == name:
                            break
                    if len(component) > 1:
                        out.update(component)
        return out

    def depth(self, root: str, calls_only: bool = False, done=None) -> int:
        """How deep regions and calls nest from ``root`` down (a call to a function of depth d at
        region depth r counts r + 1 + d); the graph below ``root`` must have no cycle. ``done``:
        as in ``fold``."""
        return self.fold(root, lambda site: site.callee in self.functions and (site.is_call or not calls_only),
                         self.nesting, lambda value, site, below: max(value, site.depth + 1 + below), done)

    def deepest(self, roots, calls_only: bool = False) -> tuple:
        """(depth, root) of the deepest of ``roots``."""
        done: dict = {}
        return max((self.depth(root, calls_only, done), root) for root in roots if root in self.functions)

    def call_depth(self, root: str) -> int:
        """The longest chain of calls from ``root`` (0: it calls nothing); no cycle below it."""
        return self.fold(root, lambda site: site.is_call and site.callee in self.functions,
                         lambda name: 0, lambda value, site, below: max(value, 1 + below))

    def fold(self, root: str, follow, start, combine, done=None):
        """A value per function computed from its callees' (post-order, iterative): ``start(name)``
        combined with ``combine(value, site, callee's value)`` over the sites ``follow`` accepts.
        The graph those sites span below ``root`` must have no cycle. ``done``: the values known
        so far (name -> value), shared between calls with the same ``follow``, filled in."""
        done = {} if done is None else done
        if root in done:
            return done[root]
        value, waiting = {root: start(root)}, {}
        work = [(root, iter([s for s in self.sites(root) if follow(s)]))]
        while work:
            name, sites = work[-1]
            site = waiting.pop(name, None)
            if site is not None:  # back from its callee
                value[name] = combine(value[name], site, done[site.callee])
            for site in sites:
                if site.callee in done:
                    value[name] = combine(value[name], site, done[site.callee])
                    continue
                if site.callee in value:
                    raise ValueError(f"calls: @{site.callee} is reached again below itself (a call cycle)")
                waiting[name] = site
                value[site.callee] = start(site.callee)
                work.append((site.callee, iter([s for s in self.sites(site.callee) if follow(s)])))
                break
            else:
                work.pop()
                done[name] = value[name]
        return done[root]


def check_no_recursion(graph: CallGraph, roots, what: str) -> None:
    """ValueError naming a call cycle reachable from ``roots``, if there is one."""
    cycle = graph.find_cycle(roots)
    if cycle is not None:
        path = " -> ".join(f"@{name}" for name in cycle)
        raise ValueError(f"{what}: the calls {path} are recursive; StableHLO has no recursion (XLA cannot "
                         f"compile it and hloforge cannot differentiate it): use a loop (hloforge.lax.fori_loop, "
                         f"while_loop) instead")


class Inlined:
    """What ``inline_calls`` did: ``count`` calls inlined; ``too_large``: (function, calls its
    inlining would copy) for the functions left alone because that passed MAX_INLINED_CALLS."""
    __slots__ = ("count", "too_large")

    def __init__(self):
        self.count, self.too_large = 0, []


def inline_calls(module: ir.Module, roots, can_inline=None, guard=None) -> Inlined:
    """Inline the calls of the functions ``roots`` (names), top-down: each call becomes a copy of
    its callee's body, whose own calls are inlined in turn, so the work is the size of the result
    (a chain of n functions: n copies; a function called twice is copied twice).

    Calls to a function on a call cycle or without a body, and calls ``can_inline(call op, callee
    op)`` refuses, stay; their callees, and composites' decompositions, are inlined into as well.
    Functions that nothing inlines into are left as they are (symbol-dce drops the dead ones).
    ``guard(call op, values)``, if given, sees each call's operands before its callee is copied and
    the copy's results after, at an insertion point before the call, and returns the values to use
    instead (the optimizer keeps constants that cross a call opaque to XLA with it).
    """
    graph = CallGraph(module)
    cyclic = graph.cyclic(list(graph.functions))
    for name in graph.functions:  # (decided before anything changes: see Site.inline)
        for site in graph.sites(name):
            site.inline = _inlinable(site, graph, cyclic, can_inline)
    result, expanded = Inlined(), {}
    scratch = ir.Module.create(ir.Location.unknown(module.context))
    worklist, visited = list(roots), set()
    while worklist:
        name = worklist.pop()
        if name in visited or name not in graph.functions:
            continue
        visited.add(name)
        copies = graph.fold(name, lambda site: site.inline, lambda _: 0,
                            lambda value, site, below: value + 1 + below, expanded)
        if copies > MAX_INLINED_CALLS:
            result.too_large.append((name, copies))
            continue
        pending = list(graph.sites(name))
        while pending:
            site = pending.pop()
            if not site.inline:
                worklist.append(site.callee)
                continue
            new_sites = _inline_site(site, graph.functions[site.callee], scratch, guard)
            for new in new_sites:
                new.inline = _inlinable(new, graph, cyclic, can_inline)
            pending.extend(new_sites)
            result.count += 1
    return result


def _inlinable(site, graph, cyclic, can_inline) -> bool:
    callee = graph.functions.get(site.callee)
    return (site.is_call and callee is not None and site.callee not in cyclic and single_block(callee)
            and (can_inline is None or can_inline(site.op, callee)))


def _inline_site(site, callee, scratch, guard=None) -> list:
    """Replace the call ``site.op`` by a copy of ``callee``'s body; the sites in that copy."""
    call = site.op
    operands = list(call.operands)
    if guard is not None:
        with ir.InsertionPoint(call), call.location:
            operands = guard(call, operands)
    with ir.InsertionPoint(scratch.body), call.location:
        results = inline_call(callee, operands)
    copied = [op.operation for op in scratch.body.operations]  # (cloned apart, to know which ops are new)
    for op in copied:
        op.move_before(call)
    if guard is not None:
        with ir.InsertionPoint(call), call.location:
            results = guard(call, results)
    for old, new in zip(call.results, results):
        old.replace_all_uses_with(new)
    call.erase()
    return scan(copied, site.depth)[0]


def drop_dead_functions(module: ir.Module) -> None:
    """Erase the private functions nothing refers to any more (MLIR's symbol-dce)."""
    with module.context:
        passmanager.PassManager.parse("builtin.module(symbol-dce)").run(module.operation)
