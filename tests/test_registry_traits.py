"""The registry's trait vocabulary: every trait an entry has is declared, registration refuses an
undeclared or incomplete one, and the op sets passes and AD ask for are the ones they listed by name."""
from __future__ import annotations

import pytest

from hloforge.frontend import registry
from hloforge.frontend.registry import OPS, TRAITS


def test_every_trait_used_is_declared():
    used = {t for info in OPS.values() for t in info.traits}
    assert used <= TRAITS.keys(), sorted(used - TRAITS.keys())
    assert all(registry._IMPLIES[t] in info.traits for info in OPS.values() for t in info.traits
               if t in registry._IMPLIES)


def _register(name, traits):
    return registry.register(name, rule=lambda x: (x.shape, x.dtype), traits=traits)(lambda x: x)


def test_an_undeclared_trait_is_an_error_naming_it_and_the_op():
    with pytest.raises(ValueError, match=r"register\('test\.op'\): unknown traits \['comutative'\]"):
        _register("test.op", {"elementwise", "comutative"})
    with pytest.raises(ValueError, match=r"register\('test\.op'\): .*zero_identity needs binary"):
        _register("test.op", {"elementwise", "zero_identity"})
    with pytest.raises(TypeError, match=r"register\('test\.op'\): traits must be a collection .*'binary'"):
        _register("test.op", "binary")
    with pytest.raises(ValueError, match=r"names: unknown traits \['binry'\]"):
        registry.names("binry")
    assert "test.op" not in OPS


def test_the_queries_give_the_sets_once_listed_by_name():
    from hloforge.frontend.ad import core, custom
    from hloforge.passes import fold, pad_arith, pad_push
    from hloforge.runtime import callbacks
    assert set(pad_push.SUM_OPS) == {"stablehlo.add", "stablehlo.or", "stablehlo.xor"}
    assert set(pad_push.PRODUCT_OPS) == {"stablehlo.multiply", "stablehlo.and"}
    elementwise_binary = {n for n, info in OPS.items() if {"elementwise", "binary"} <= info.traits}
    assert "stablehlo.compare" in elementwise_binary and "stablehlo.select" not in elementwise_binary
    assert set(pad_push.BINARY_OPS) == set(pad_arith.BINARY_OPS) == elementwise_binary
    assert custom._LINEAR == {"stablehlo.add", "stablehlo.subtract", "stablehlo.negate", "stablehlo.convert",
                              "stablehlo.real", "stablehlo.imag", "stablehlo.complex", "stablehlo.select",
                              "stablehlo.reduce_precision", "sdy.sharding_constraint"}
    assert custom._BILINEAR == {"stablehlo.multiply", "stablehlo.dot_general", "stablehlo.convolution"}
    assert set(core.CONTROL_FLOW) == set(callbacks._CONTROL) == {"stablehlo.while", "stablehlo.if", "stablehlo.case"}
    assert {"stablehlo.while", "stablehlo.if", "stablehlo.case"} <= fold.RUNTIME_OPS
    assert fold._NOT_BESIDE_VALUES == {"stablehlo.custom_call", "stablehlo.while", "stablehlo.if", "stablehlo.case"}
