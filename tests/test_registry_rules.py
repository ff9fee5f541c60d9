"""Every registered op has a rule of each kind (registry.RULE_KINDS: jvp and vjp from
frontend/ad/, batch from frontend/batching/), and the AD helpers that define rules keep their
contracts: deflinear/defbilinear register both kinds, and AD's per-trace state lives in
Builder.transform_state."""
import numpy as np
import pytest

import hloforge as hf
import hloforge.frontend.ad  # noqa: F401  (fills the jvp and vjp rules)
import hloforge.frontend.batching  # noqa: F401  (fills the batch rules)
from hloforge import ops
from hloforge.frontend.ad import _util
from hloforge.frontend.registry import OPS, RULE_KINDS
from hloforge.frontend.tracing import current_builder

@pytest.mark.parametrize("kind", RULE_KINDS)
def test_every_registered_op_has_a_rule_of_each_kind(kind):
    assert len(OPS) >= 107
    missing = sorted(name for name, info in OPS.items() if info.rules.get(kind) is None)
    assert not missing, f"no {kind} rule for {len(missing)} op(s): {missing}"


def test_linear_and_bilinear_ops_get_both_ad_rules_from_the_helpers():
    linear = ["stablehlo.negate", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.broadcast_in_dim",
              "stablehlo.slice", "stablehlo.pad", "stablehlo.reverse", "stablehlo.concatenate", "stablehlo.convert",
              "stablehlo.real", "stablehlo.imag", "stablehlo.complex", "stablehlo.fft"]
    bilinear = ["stablehlo.multiply", "stablehlo.dot_general", "stablehlo.convolution"]
    for name in linear + bilinear:
        rules = OPS[name].rules
        assert rules["jvp"].__qualname__.startswith(("deflinear", "defbilinear")), (name, rules["jvp"])
        assert rules["vjp"].__name__.endswith("_transpose"), (name, rules["vjp"])


def test_deflinear_jvp_is_the_op_on_the_tangents():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    _, t = hf.jvp(lambda v: ops.pad(ops.transpose(v, (1, 0)), 0.5, (1, 0), (0, 1), (0, 0)), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), np.pad(x.T, ((1, 0), (0, 1))))
    _, t = hf.jvp(lambda v: ops.convert(v, np.int32), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), np.zeros((2, 3), np.int32))  # (no tangent: an int result)


def test_defbilinear_vjp_gives_each_operand_its_transpose():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)
    out, pull = hf.vjp(lambda a, b: ops.dot_general(a, b, (), (), (1,), (0,)), a, b)
    ct = np.ones((2, 4))
    ga, gb = pull(ct)
    np.testing.assert_allclose(np.asarray(ga), ct @ b.T)
    np.testing.assert_allclose(np.asarray(gb), a.T @ ct)


def test_ad_state_lives_in_the_builders_transform_state():
    seen = {}

    def f(x):
        y = hf.grad(lambda v: ops.reduce(ops.multiply(v, v), 0, (0,), "add"))(x)
        b = current_builder()
        seen["state"] = b.transform_state.get("ad")
        seen["splats"] = b.transform_state.get("splat")
        seen["ad_attributes"] = [k for k in vars(b) if k.startswith(("_ad_", "_irfft"))]
        return y

    hf.trace(f, np.zeros(3, np.float32))
    assert isinstance(seen["state"], _util.ADState)
    assert seen["splats"] and seen["state"].needed is None  # (AD's reused splats: tracing.splat(reuse=True))
    assert seen["ad_attributes"] == []
