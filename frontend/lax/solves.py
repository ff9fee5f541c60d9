"""jax.lax.custom_root and jax.lax.custom_linear_solve: solves differentiated implicitly.

As in jax (``jax/_src/lax/control_flow/solves.py``), each user function is traced once with the
values it closes over made explicit arguments (``hf.closure_convert``), and the solve is an
``hf.custom_jvp`` function of those values and the guess or right-hand side, so derivatives
reach what ``f`` or ``matvec`` closes over:

- custom_root: ``d sol = -(∂f/∂x)⁻¹ (∂f/∂params · d params)``, the inverse applied by
  ``tangent_solve`` on ``f`` linearized at the solution (implicit function theorem);
- custom_linear_solve: ``dx = A⁻¹ (db - dA x)``, with ``A⁻¹`` applied by ``solve``. Reverse mode
  transposes that ``A⁻¹`` with ``transpose_solve`` on ``matvec``'s transpose (an ``hf.custom_vjp``
  function), so the solver itself is never differentiated.

The rules are Python rules of this process, as every ``hf.custom_jvp``'s: a module saved to text
and parsed again is differentiated through the solver's ops.
"""
from __future__ import annotations

from jax import tree_util

from hloforge.frontend.ad import api
from hloforge.frontend.ad._util import zeros_like
from hloforge.frontend.ad.custom import closure_convert, custom_jvp, custom_vjp
from hloforge.frontend.lax._common import lax_operand


def _flatten(tree, what):
    leaves, treedef = tree_util.tree_flatten(tree)
    return [lax_operand(x, f"{what} leaf {i}") for i, x in enumerate(leaves)], treedef


def _leaves_like(out, tree, shapes, what, name, expected):
    """``out``'s leaves, which must have ``tree``'s structure and ``shapes`` (jax's checks)."""
    leaves, got = tree_util.tree_flatten(out)
    if got != tree:
        raise TypeError(f"{what}: {name}() output pytree structure must match {expected}, got {got} and {tree}")
    leaves = [lax_operand(x, f"{what}: {name}() output leaf {i}") for i, x in enumerate(leaves)]
    if [x.shape for x in leaves] != shapes:
        raise ValueError(f"{what}: {name}() output shapes must match {expected}, got "
                         f"{[x.shape for x in leaves]} and {shapes}")
    return leaves


def _split(args, lengths):
    out, start = [], 0
    for n in lengths:
        out.append(list(args[start:start + n]))
        start += n
    return out


def _solver(fun, tree, shapes, has_aux, what, name, expected, aux_tree):
    """``fun`` (pytree -> pytree, or (pytree, aux) with ``has_aux``) as flat leaves -> flat leaves;
    the aux's structure goes to ``aux_tree[0]``."""
    def flat(*xs):
        out = fun(tree_util.tree_unflatten(tree, list(xs)))
        aux = []
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(f"{what}: with has_aux=True, {name}() must return a pair (solution, aux), got {out!r}")
            out, aux = out
            aux, aux_tree[0] = tree_util.tree_flatten(aux)
        return _leaves_like(out, tree, shapes, what, name, expected) + [
            lax_operand(a, f"{what}: {name}() aux leaf {i}") for i, a in enumerate(aux)]
    return flat


def _results(flat, tree, n, has_aux, aux_tree):
    solution = tree_util.tree_unflatten(tree, list(flat[:n]))
    return (solution, tree_util.tree_unflatten(aux_tree[0], list(flat[n:]))) if has_aux else solution


def _implicitly_differentiated(S, lengths, tangent, name):
    """An hf.custom_jvp of (three functions' closed-over values..., x) whose primal is ``S(*x, *solve's
    values)`` and whose tangent is ``tangent(primals, tangents, primal out)``, both split by ``lengths``."""
    @custom_jvp
    def solve(*args):
        _, sp, _, x = _split(args, lengths)
        return S(*x, *sp)

    @solve.defjvp
    def solve_jvp(primals, tangents):
        primals = _split(primals, lengths)
        out = S(*primals[3], *primals[1])
        return out, tangent(primals, _split(tangents, lengths), out)

    solve.__name__ = name
    return solve


def _check_callables(what, **functions):
    for name, fn in functions.items():
        if not callable(fn):
            raise TypeError(f"{what}: {name} must be callable, got {fn!r}")


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """jax.lax.custom_root: ``solve(f, initial_guess)``, differentiated implicitly with respect to
    the values ``f`` closes over (the implicit function theorem), never through ``solve``.

    Emits the solver's ops in a call of a private function (``func.call``, the ``hf.custom_jvp``
    rule attached).

    Args:
      f: the function whose root is sought; takes and returns pytrees of ``initial_guess``'s structure.
      initial_guess: the starting point (a pytree of arrays).
      solve: ``solve(f, initial_guess) -> solution`` (with ``has_aux``: ``(solution, aux)``).
      tangent_solve: ``tangent_solve(g, y) -> x`` with ``g(x) == y`` for the linear ``g`` (``f``
        linearized at the root); e.g. ``lambda g, y: y / g(1.0)`` for a scalar.
      has_aux: whether ``solve`` returns auxiliary data as a second output (not differentiated).
    Returns:
      The solution (and the aux with ``has_aux``).
    Example:
      >>> sqrt_a = lax.custom_root(lambda x: x * x - a, 1.0, newton, lambda g, y: y / g(1.0))
    """
    what = "hloforge.lax.custom_root"
    _check_callables(what, f=f, solve=solve, tangent_solve=tangent_solve)
    guess, tree = _flatten(initial_guess, f"{what}: initial_guess")
    shapes, n, aux_tree = [x.shape for x in guess], len(guess), [None]
    f_tree = lambda x: tree_util.tree_unflatten(  # noqa: E731  (f, its output checked)
        tree, _leaves_like(f(x), tree, shapes, what, "f", "initial_guess"))
    F, f_params = closure_convert(lambda *xs: _leaves_like(f(tree_util.tree_unflatten(tree, list(xs))), tree,
                                                           shapes, what, "f", "initial_guess"), *guess)
    S, s_params = closure_convert(_solver(lambda x: solve(f_tree, x), tree, shapes, has_aux, what, "solve",
                                          "initial_guess", aux_tree), *guess)

    def linearize_and_solve(*xs_and_ys):
        x = tree_util.tree_unflatten(tree, list(xs_and_ys[:n]))
        y = tree_util.tree_unflatten(tree, list(xs_and_ys[n:]))
        g = lambda v: api.jvp(f_tree, (x,), (v,))[1]  # noqa: E731
        return _leaves_like(tangent_solve(g, y), tree, shapes, what, "tangent_solve", "initial_guess")

    L, l_params = closure_convert(linearize_and_solve, *guess, *guess)
    lengths = (len(f_params), len(s_params), len(l_params), n)

    def tangent(primals, tangents, out):
        (fp, _, lp, _), fp_dot = primals, tangents[0]
        solution = out[:n]
        if fp:
            _, rhs = api.jvp(lambda *p: F(*solution, *p), tuple(fp), tuple(fp_dot))
        else:
            rhs = [zeros_like(s) for s in solution]
        return [-t for t in L(*solution, *rhs, *lp)] + [zeros_like(a) for a in out[n:]]

    root = _implicitly_differentiated(S, lengths, tangent, "custom_root")
    return _results(root(*f_params, *s_params, *l_params, *guess), tree, n, has_aux, aux_tree)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """jax.lax.custom_linear_solve: ``solve(matvec, b)``, differentiated implicitly at the solution
    ``x`` of ``matvec(x) == b`` (with respect to ``b`` and to what ``matvec`` closes over), never
    through ``solve``.

    Emits the solver's ops in a call of a private function (``func.call``, the ``hf.custom_jvp``
    rule attached).

    Args:
      matvec: the linear map ``A`` (a function of pytrees of ``b``'s structure); differentiable.
      b: the right-hand side (a pytree of arrays).
      solve: ``solve(matvec, b) -> x`` with ``matvec(x) == b`` (with ``has_aux``: ``(x, aux)``).
      transpose_solve: ``transpose_solve(vecmat, b) -> x`` for ``A``'s transpose, needed by reverse
        mode (default: ``solve`` when ``symmetric``).
      symmetric: whether ``A`` is symmetric (then ``vecmat`` is ``matvec``).
      has_aux: whether the solves return auxiliary data as a second output (not differentiated).
    Returns:
      ``x`` (and the aux with ``has_aux``).
    Example:
      >>> x = lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, b: hnp.linalg.solve(a, b), symmetric=True)
    """
    what = "hloforge.lax.custom_linear_solve"
    _check_callables(what, matvec=matvec, solve=solve)
    if transpose_solve is not None:
        _check_callables(what, transpose_solve=transpose_solve)
    elif symmetric:
        transpose_solve = solve
    bs, tree = _flatten(b, f"{what}: b")
    shapes, n, aux_tree = [x.shape for x in bs], len(bs), [None]
    matvec_tree = lambda x: tree_util.tree_unflatten(  # noqa: E731  (matvec, its output checked)
        tree, _leaves_like(matvec(x), tree, shapes, what, "matvec", "b"))
    M, m_params = closure_convert(lambda *xs: tree_util.tree_leaves(matvec_tree(tree_util.tree_unflatten(
        tree, list(xs)))), *bs)
    S, s_params = closure_convert(_solver(lambda v: solve(matvec_tree, v), tree, shapes, has_aux, what, "solve",
                                          "b", aux_tree), *bs)
    T, t_params = None, []
    if transpose_solve is not None:
        if symmetric:
            vecmat = matvec_tree
        else:
            zero = tree_util.tree_unflatten(tree, [zeros_like(x) for x in bs])
            vecmat = lambda y: api.vjp(matvec_tree, zero)[1](y)[0]  # noqa: E731  (A's transpose)
        T, t_params = closure_convert(_solver(lambda v: transpose_solve(vecmat, v), tree, shapes, has_aux, what,
                                              "transpose_solve", "b", [None]), *bs)
    lengths = (len(m_params), len(s_params), len(t_params), n)

    @custom_vjp
    def inverse(rhs, sp, tp):  # A⁻¹ rhs, linear in rhs; transposed by transpose_solve
        return S(*rhs, *sp)[:n]

    def inverse_fwd(rhs, sp, tp):
        return S(*rhs, *sp)[:n], tp

    def inverse_bwd(tp, ct):
        if T is None:
            raise TypeError(f"{what}: transpose_solve required for backwards mode automatic differentiation of "
                            "custom_linear_solve")
        return list(T(*ct, *tp)[:n]), None, None

    inverse.defvjp(inverse_fwd, inverse_bwd)
    inverse.__name__ = "custom_linear_solve_inverse"

    def tangent(primals, tangents, out):
        (mp, sp, tp, _), (mp_dot, _, _, rhs) = primals, tangents
        if mp:  # (- dA x: matvec's tangent with respect to what it closes over, at the solution)
            _, a_dot_x = api.jvp(lambda *p: M(*out[:n], *p), tuple(mp), tuple(mp_dot))
            rhs = [t - d for t, d in zip(rhs, a_dot_x)]
        return list(inverse(rhs, sp, tp)) + [zeros_like(a) for a in out[n:]]

    linear_solve = _implicitly_differentiated(S, lengths, tangent, "custom_linear_solve")
    return _results(linear_solve(*m_params, *s_params, *t_params, *bs), tree, n, has_aux, aux_tree)


__all__ = ["custom_root", "custom_linear_solve"]
