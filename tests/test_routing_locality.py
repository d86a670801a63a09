"""Routing locality (experts.routed_tokens, SEQ_ROUTING_RHO): the q tokens of one sequence in one pass touch the
experts of b (1 + rho (q - 1)) independent tokens. Properties, the kernel against its numpy reference at any rho, the
uniform model at rho = 1, and the measurement rho is derived from."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simulator.errors import ScenarioError
from simulator.experts import SEQ_ROUTING_RHO, experts_touched_fraction, routed_tokens
from simulator.features import features, op_totals
from simulator.hardware import load_hardware
from simulator.model import load_model
from simulator.roofline import rates, step_times, step_times_reference
from simulator.scenario import Scenario
from simulator.speedup import speedup_curve
from simulator.workload import F_U

from .helpers import ops_for, run
from .strategies import ROUTING_LOCALITY

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MOE = ["qwen3-235b-a22b", "deepseek-v3", "mixtral-8x7b", "qwen3-30b-a3b"]
rhos = ROUTING_LOCALITY


def with_rho(ops, rho: float):
    """The op table with every routed-expert op's locality set to rho (dense ops keep 1)."""
    return replace(ops, moe_rho=np.where(ops.moe_e > 0, rho, 1.0))


@given(b=st.floats(0.0, 1e4), q=st.floats(0.0, 1e3), rho=rhos)
@example(b=3.0, q=4.0, rho=1.0).via("the uniform model")
def test_routed_tokens_bounds(b, q, rho):
    """Between one token per sequence and all of them (q >= 1); b q below one token per sequence."""
    t = float(routed_tokens(b, q, rho))
    if q <= 1.0:
        assert t == b * q
    else:
        assert b * (1 - 1e-12) <= t <= b * q * (1 + 1e-12)
    assert float(routed_tokens(b, q, 1.0)) == pytest.approx(b * q, rel=1e-12, abs=1e-300)


@given(b=st.floats(0.01, 1e4), q=st.floats(1.0, 1e3), rho=rhos, drho=st.floats(0.0, 1.0), dq=st.floats(0.0, 100.0))
def test_routed_tokens_monotone(b, q, rho, drho, dq):
    """More tokens per sequence, or less locality (larger rho), never touch fewer experts."""
    t = float(routed_tokens(b, q, rho))
    assert float(routed_tokens(b, q, min(1.0, rho + drho))) >= t
    assert float(routed_tokens(b, q + dq, rho)) >= t * (1 - 1e-12)


def test_rho_from_the_cited_measurement():
    """Cohere (128 experts, top-8): a 4-token verify of one sequence touches 20.36 experts against 25.4 for 4 tokens
    drawn independently, 0.80 of them; the lag-1 overlap is 38.1 % against 11.8 % independent. Priced on the
    uniform model, both ratios come back within 1 %."""
    E, k = 128, 8
    D = lambda n: float(experts_touched_fraction(n, E, k)) * E  # noqa: E731
    assert D(float(routed_tokens(1, 4))) / D(4) == pytest.approx(20.36 / 25.4, rel=0.01)
    two = 2 * k - k * (k / E + 0.381 - 0.118)      # experts of two consecutive tokens, the excess overlap priced
    assert D(float(routed_tokens(1, 2))) == pytest.approx(two, rel=0.01)
    assert 0.5 < SEQ_ROUTING_RHO < 0.79     # GLM-4.7-Flash's 25.7 % overlap against chance gives 0.79 with skew, so
    #                                         at least 0.79 for the correlation alone: Cohere's is the stronger


@pytest.mark.parametrize("mid", MOE)
def test_op_table_prices_the_locality(mid):
    """The routed experts carry SEQ_ROUTING_RHO (every other op 1) and features reads it: 3 sequences of 4 tokens
    touch what 3 (1 + rho 3) independent tokens do; at rho = 1 what 12 do (the uniform model)."""
    ops = ops_for(mid)
    i = ops.names.index("experts")
    assert ops.moe_rho[i] == SEQ_ROUTING_RHO and np.all(ops.moe_rho[ops.moe_e == 0] == 1.0)
    B, q, L = np.array([3.0]), np.array([4.0]), np.array([100.0])
    for rho, n in ((ops.moe_rho[i], 3 * (1 + SEQ_ROUTING_RHO * 3)), (1.0, 12.0)):
        f = features(B, q, L, ops.window[i], ops.moe_e[i], ops.moe_k[i], moe_rho=rho)
        assert f[0, F_U] == pytest.approx(float(experts_touched_fraction(n, ops.moe_e[i], ops.moe_k[i])), rel=1e-12)


@FAST
@given(mid=st.sampled_from(MOE), tp=st.sampled_from([1, 8]), rho=rhos,
       B=st.lists(st.integers(1, 512), min_size=1, max_size=4), q=st.lists(st.integers(1, 16), min_size=1, max_size=3))
def test_kernel_equals_reference_at_any_rho(mid, tp, rho, B, q):
    ops = with_rho(ops_for(mid, tp), rho)
    r = rates(load_hardware("h200-sxm"), ops)
    Bg, qg = np.array(B, float)[:, None], np.array(q, float)[None, :]
    got, ref = step_times(ops, r, Bg, qg, 2048.0), step_times_reference(ops, r, Bg, qg, 2048.0)
    np.testing.assert_allclose(got.total_s, ref.total_s, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.by_family_s, ref.by_family_s, rtol=1e-12, atol=0)


@FAST
@given(mid=st.sampled_from(MOE), tp=st.sampled_from([1, 8]), rho=rhos, drho=st.floats(0.0, 1.0),
       B=st.integers(1, 256), q=st.integers(1, 16))
def test_pass_price_monotone_in_rho_and_blind_at_one_token(mid, tp, rho, drho, B, q):
    """Less locality never prices a pass cheaper; a decode pass (q = 1) is the same at any rho; rho = 1 is the
    uniform model's price, which bounds every other from above."""
    base = ops_for(mid, tp)
    r = rates(load_hardware("h200-sxm"), base)
    t = lambda x, qq=q: float(step_times(with_rho(base, x), r, B, qq, 2048.0).total_s)  # noqa: E731
    assert t(min(1.0, rho + drho)) >= t(rho) * (1 - 1e-12)
    assert t(rho, 1) == pytest.approx(t(1.0, 1), rel=1e-12)
    assert t(1.0) >= t(rho) * (1 - 1e-12)


def test_verify_of_a_128_expert_target_reads_fewer_experts():
    """Qwen3-235B-A22B at TP8 on an H200, 8 sequences verifying 4 tokens: the experts op reads the weights of what
    8 (1 + 0.71 x 3) = 25.0 independent tokens touch, 80 % of 128 experts, against 32 tokens' 87 % at rho = 1 (its
    activation bytes follow the 32 tokens either way); decode is unchanged."""
    ops = ops_for("qwen3-235b-a22b", 8)
    i = ops.names.index("experts")
    E, k = ops.moe_e[i], ops.moe_k[i]
    u, u1 = (float(experts_touched_fraction(n, E, k)) for n in (8 * (1 + SEQ_ROUTING_RHO * 3), 32.0))
    assert u == pytest.approx(1 - (1 - 8 / 128) ** 25.04, rel=1e-3) and u < u1
    by = {x: op_totals(with_rho(ops, x), 8.0, 4.0, 1024.0)["bytes"][i] for x in (SEQ_ROUTING_RHO, 1.0)}
    weights = ops.cb[i, F_U] * ops.repeat[i]
    assert by[1.0] - by[SEQ_ROUTING_RHO] == pytest.approx(weights * (u1 - u), rel=1e-9)
    r = rates(load_hardware("h200-sxm"), ops)
    fam = lambda x, q: step_times(with_rho(ops, x), r, 8.0, q, 1024.0).total_s  # noqa: E731
    assert float(fam(SEQ_ROUTING_RHO, 4.0)) < float(fam(1.0, 4.0))
    assert float(fam(SEQ_ROUTING_RHO, 1.0)) == pytest.approx(float(fam(1.0, 1.0)), rel=1e-12)
    assert math.isfinite(float(fam(0.0, 4.0)))


# ---- the deployment's own locality: Scenario.routing_locality, --routing-locality ----------------------------------

def _dsv3(**kw):
    return dict(hardware="h200-sxm", model="deepseek-v3", tp=8, precision="fp8", method="mtp", k=3, context=2048,
                batch=(1, 8, 64), **kw)


def test_the_default_is_the_measured_value_and_one_is_the_uniform_model():
    """No routing_locality prices SEQ_ROUTING_RHO; 1 prices what the op table at rho = 1 prices (the uniform model)."""
    base, same = (speedup_curve(**_dsv3(routing_locality=x)) for x in (None, SEQ_ROUTING_RHO))
    assert list(base.speedup) == list(same.speedup) and base.scenario["routing_locality"] == SEQ_ROUTING_RHO
    dep = Scenario(**_dsv3(routing_locality=1.0)).resolve()
    assert dep.target.routing_locality == 1.0
    i = dep.tops.names.index("experts")
    assert dep.tops.moe_rho[i] == 1.0 and np.all(dep.tops.moe_rho[dep.tops.moe_e == 0] == 1.0)
    assert Scenario(**_dsv3()).resolve().tops.moe_rho[i] == SEQ_ROUTING_RHO


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rho=rhos, drho=st.floats(0.0, 1.0), mid=st.sampled_from(["deepseek-v3", "qwen3-30b-a3b"]))
@example(rho=0.0, drho=1.0, mid="deepseek-v3").via("the bounds")
def test_speedup_never_rises_with_less_locality(rho, drho, mid):
    """A larger rho (tokens of a sequence less alike) makes the verify read more experts: the speculative step never
    shortens, the plain step is the same, so the predicted speedup never rises."""
    kw = dict(hardware="h200-sxm", model=mid, tp=8, method="mtp" if mid == "deepseek-v3" else "eagle3", k=3,
              batch=(1, 8, 64), precision="fp8")
    a, b = (speedup_curve(**kw, routing_locality=x) for x in (rho, min(1.0, rho + drho)))
    np.testing.assert_array_equal(a.base_step_s, b.base_step_s)
    assert np.all(b.spec_step_s >= a.spec_step_s * (1 - 1e-12)) and np.all(b.speedup <= a.speedup * (1 + 1e-12))


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "0.5", True])
def test_a_locality_outside_0_1_is_refused(bad):
    with pytest.raises(ScenarioError, match=r"routing_locality = .*; expected a number in \[0, 1\]"):
        Scenario(model="qwen3-30b-a3b", routing_locality=bad)


def test_a_dense_target_has_no_locality_to_set():
    with pytest.raises(ScenarioError, match="routing_locality .* = 0.5 but model llama-3.1-8b has no experts"):
        Scenario(model="llama-3.1-8b", routing_locality=0.5).resolve()
    with pytest.raises(ValueError, match="routing_locality = 2; expected a number from 0 to 1"):
        replace(load_model("qwen3-30b-a3b"), routing_locality=2)


def test_the_flag_on_the_command_line(capsys):
    rc, out, _ = run(capsys, "curve", "--model", "qwen3-30b-a3b", "--routing-locality", "1", "--batch", "8",
                     "--format", "json")
    assert rc == 0 and '"routing_locality": 1.0' in out
    for argv, needle in ((("--model", "llama-3.1-8b", "--routing-locality", "0.5"), "has no experts to route to"),
                         (("--model", "qwen3-30b-a3b", "--routing-locality", "1.5"), "must be in [0, 1]")):
        rc, _, err = run(capsys, "curve", *argv)
        assert rc == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command, extra", [("curve", ("--batch", "8")), ("step", ("--batch", "8")),
                                            ("serve", ("--concurrency", "4")), ("frontier", ()),
                                            ("advise", ("--batch", "1,8"))])
def test_every_command_echoes_the_locality_it_priced(capsys, command, extra):
    """The JSON scenario of each command carries the rho priced: the one given, the default when none is, null for a
    dense target (review: only curve's echo was tested); the text header names a rho given other than the default."""
    for model, flag, want in (("qwen3-30b-a3b", ("--routing-locality", "0.4"), 0.4),
                               ("qwen3-30b-a3b", (), SEQ_ROUTING_RHO), ("llama-3.1-8b", (), None)):
        rc, out, err = run(capsys, command, "--model", model, *flag, *extra, "--format", "json")
        assert rc == 0, err
        doc = json.loads(out)
        sc = doc["scenario"]
        assert sc["routing_locality"] == want, (command, model, sc.get("routing_locality"))
    rc, out, _ = run(capsys, command, "--model", "qwen3-30b-a3b", "--routing-locality", "0.4", *extra)
    assert rc == 0 and "routing locality 0.4" in out


def test_an_mtp_module_inherits_the_locality_and_a_separate_draft_model_keeps_its_own():
    """The MTP module is built from the target's shape, so it routes as the target does; a draft model named apart
    (here an MoE one) is another model, priced at the default (the flag's help says so; review)."""
    mtp = Scenario(**_dsv3(routing_locality=0.2)).resolve()
    assert mtp.drafter.shape.routing_locality == 0.2
    sep = Scenario(model="qwen3-235b-a22b", tp=8, method="draft", draft="qwen3-30b-a3b", routing_locality=0.2,
                   hardware="h200-sxm").resolve()
    assert sep.target.routing_locality == 0.2 and sep.drafter.shape.routing_locality == SEQ_ROUTING_RHO


def test_minus_zero_reads_as_zero_and_a_shape_refuses_a_non_number():
    assert math.copysign(1.0, Scenario(model="qwen3-30b-a3b", routing_locality=-0.0).routing_locality) == 1.0
    for bad in (True, "0.5"):
        with pytest.raises(ValueError, match="routing_locality = .*; expected a number from 0 to 1"):
            replace(load_model("qwen3-30b-a3b"), routing_locality=bad)
