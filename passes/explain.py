"""Why patterns did not fire, for ``Module.optimize(debug=True)`` and ``hloforge opt --explain``.

A pattern that declines returns a reason string or ``NO_MATCH``. For ``NO_MATCH`` the reason is the
precondition that failed: while the pattern runs, a trace function notes the lines of the
``return NO_MATCH`` statements that run (in the pattern or in a helper whose result it returns), and
the source of the ``if`` around the last one is the reason (``fft_type(inner) != "RFFT"``, with its
file and line). Tracing costs time, so only debug runs do it.
"""
from __future__ import annotations

import ast
import collections
import functools
import inspect
import os
import sys
import textwrap


class Declines:
    """For each pattern of a run: its root ops, how often each reason made it decline (per op visit),
    and how often another pattern of the same root rewrote the op before it was tried."""

    def __init__(self):
        self.reasons: dict = collections.defaultdict(collections.Counter)
        self.roots: dict = {}
        self.preempted: dict = collections.defaultdict(collections.Counter)

    def expect(self, name: str, roots) -> None:
        """``name`` is one of the run's patterns, rooted at ``roots``."""
        roots = roots if isinstance(roots, tuple) else (roots,)
        self.roots[name] = tuple(getattr(r, "OPERATION_NAME", r) for r in roots)
        self.reasons[name]  # (listed even if no root op is ever visited)

    def skip(self, name: str, needs) -> None:
        self.reasons[name][f"no operand is made by {' or '.join(sorted(needs))}"] += 1

    def preempt(self, name: str, by: str) -> None:
        """``by``, tried before ``name`` on an op, rewrote it: ``name`` was not tried there."""
        self.preempted[name][by] += 1

    def unsupported(self, name: str, error: Exception) -> None:
        self.reasons[name][f"unsupported IR: {error}"] += 1

    def call(self, name: str, fn, op, rewriter):
        """``fn(op, rewriter)``, noting why it declined."""
        returns = []  # (code, line) of each truthy return in a passes/ function meanwhile

        def local(frame, event, arg):
            if event == "return" and _truthy(arg):
                returns.append((frame.f_code, frame.f_lineno))
            return local

        def tracer(frame, event, arg):
            if not frame.f_code.co_filename.startswith(_PASSES):
                return None
            frame.f_trace_lines = False  # (only call and return events)
            return local

        saved = sys.gettrace()
        sys.settrace(tracer)
        try:
            result = fn(op, rewriter)
        finally:
            sys.settrace(saved)
        if result:
            self.reasons[name][result if isinstance(result, str) else _reason(returns)] += 1
        return result


_PASSES = os.path.dirname(os.path.abspath(__file__))


def _truthy(value) -> bool:
    """Whether a returned value is truthy; an array's truth has none (a helper's DFT matrix, not a
    pattern's no-match)."""
    try:
        return bool(value)
    except (ValueError, TypeError):
        return False


def _reason(returns) -> str:
    """The last ``return NO_MATCH`` that ran (a pattern that returns a helper's result declined in the
    helper), as the precondition around it."""
    for code, line in reversed(returns):
        found = _failed_condition(code, line)
        if found is not None:
            return found
    return "declined"


@functools.lru_cache(maxsize=None)
def _failed_condition(code, line):
    """The precondition whose ``return NO_MATCH`` at ``line`` of ``code`` ran, as source text with its
    place; None when that line returns something else (a helper's result, a predicate's True)."""
    try:
        lines, first = inspect.getsourcelines(code)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return None
    target = line - (first or 1) + 1
    returns = [n for n in ast.walk(tree) if isinstance(n, ast.Return) and n.lineno == target]
    if not returns or not (isinstance(returns[0].value, ast.Name) and returns[0].value.id == "NO_MATCH"):
        return None
    where = f"({os.path.basename(code.co_filename)}:{line})"
    tests = [n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno <= target <= n.end_lineno]
    if not tests:
        return f"reached the end {where}"
    inner = max(tests, key=lambda n: n.lineno)
    text = ast.unparse(inner.test)
    in_body = any(s.lineno <= target <= s.end_lineno for s in inner.body)
    return f"{text if in_body else f'not ({text})'} {where}"


def explain(declines: Declines, fired, ops_before=None) -> str:
    """The patterns of a run that never fired, each with why: its most frequent reasons, the patterns
    that rewrote its root ops before it was tried, or that no root op of its was there when its pass
    ran (``ops_before``, the module's op counts before the run, tells an absent op from a removed one)."""
    lines, absent, gone = [], [], []
    for name in sorted(declines.reasons):
        if fired.get(name):
            continue
        reasons, preempted = declines.reasons[name], declines.preempted.get(name)
        parts = []
        if reasons:
            total = sum(reasons.values())
            top = "; ".join(f"{reason} [{n}]" for reason, n in reasons.most_common(3))
            more = f"; and {len(reasons) - 3} other reasons" if len(reasons) > 3 else ""
            parts.append(f"declined {total} time{'s' if total != 1 else ''}: {top}{more}")
        if preempted:
            total = sum(preempted.values())
            by = ", ".join(f"{other} [{n}]" for other, n in preempted.most_common())
            parts.append(f"not tried on {total} op{'s' if total != 1 else ''}: patterns tried before it "
                         f"rewrote {'them' if total != 1 else 'it'} first: {by}")
        if parts:
            lines.append(f"  {name}: {'; and '.join(parts)}")
        elif ops_before and any(ops_before.get(root) for root in declines.roots.get(name, ())):
            gone.append(name)
        else:
            absent.append(name)
    if gone:
        lines.append(f"  never tried (the module had their root ops, but earlier passes removed them, or MLIR "
                     f"folded them, before their pass ran): {', '.join(gone)}")
    if absent:
        lines.append(f"  never tried (the module has none of their root ops): {', '.join(absent)}")
    if not lines:
        return "every pattern of the run fired"
    return "patterns that did not fire ([n]: op visits declined for that reason):\n" + "\n".join(lines)
