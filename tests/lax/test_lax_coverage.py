"""How much of jax.lax's public API hloforge.lax offers (at least 90% of its callables) and that the
functions both have take the same parameters, in the same order; what is left out says why
(docs/lax.md)."""
import inspect

import jax

from hloforge import lax

# jax.lax callables hloforge.lax leaves out, and why (docs/lax.md)
LEFT_OUT = {
    "AccuracyMode": "result_accuracy: hloforge.ops emits no such attribute (accuracy= takes None only)",
    "Tolerance": "result_accuracy: hloforge.ops emits no such attribute (accuracy= takes None only)",
    "DotAlgorithm": "dot algorithms: ops.dot_general emits no algorithm attribute",
    "DotAlgorithmPreset": "dot algorithms: ops.dot_general emits no algorithm attribute",
    "rng_uniform": "stablehlo.rng (stateful) has no hloforge.ops builder",
    "scaled_dot": "block-scaled (microscaling) dots: no hloforge.ops lowering",
    "with_sharding_constraint": "sharding annotations inside a trace",
    "pcast": "shard_map's varying/invariant type annotation: hloforge has no shard_map (jax.vmap refuses it too)",
    **{name: "point-to-point and ragged collectives of shard_map: hloforge has no shard_map" for name in (
        "precv", "psend", "ragged_all_to_all")},
}


def _jax_callables():
    return sorted(n for n in dir(jax.lax) if not n.startswith("_") and callable(getattr(jax.lax, n)))


def test_left_out_names_are_jax_lax_callables_hloforge_lacks():
    names = set(_jax_callables())
    assert set(LEFT_OUT) <= names
    assert not [n for n in LEFT_OUT if hasattr(lax, n)]


def test_covers_at_least_90_percent_of_jax_lax():
    names = _jax_callables()
    missing = [n for n in names if not hasattr(lax, n)]
    assert len(names) - len(missing) >= 0.9 * len(names), f"{len(names) - len(missing)} of {len(names)}: {missing}"
    assert sorted(missing) == sorted(LEFT_OUT)  # (a gap is listed with its reason, or filled)


def test_shared_functions_take_jax_parameters():
    differ = []
    for name in _jax_callables():
        ours, theirs = getattr(lax, name, None), getattr(jax.lax, name)
        if ours is None or inspect.isclass(theirs) or not inspect.isfunction(ours):
            continue
        try:
            want = list(inspect.signature(theirs).parameters)
        except (TypeError, ValueError):
            continue
        if list(inspect.signature(ours).parameters) != want:
            differ.append((name, list(inspect.signature(ours).parameters), want))
    assert not [d for d in differ if d[0] != "all_gather"], differ  # (all_gather's `to`: the parallel family's)
