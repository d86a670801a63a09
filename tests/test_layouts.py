"""Deployments as they run (issue 12): DP attention with wide EP, the NVL72 rack against InfiniBand, redundant expert
slots, weight-only formats, attention precision, and the busiest EP rank against a Monte Carlo of top-k routing."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.cli import main
from simulator.engine import load_engine
from simulator.errors import ScenarioError
from simulator.experts import (
    busiest_rank_fraction,
    busiest_rank_table,
    dealt,
    experts_touched_fraction,
    grouped_busiest_rank_table,
    head_runs,
)
from simulator.hardware import load_hardware
from simulator.pricing import max_batch, memory
from simulator.roofline import rates
from simulator.scenario import Scenario
from simulator.step import simulate_step
from simulator.units import DTYPE_BYTES
from simulator.workload import Parallelism, forward_pass

from .helpers import model


def _mc_busiest(E: int, R: int, k: int, T: int, rng: np.random.Generator, trials: int) -> float:
    """Monte Carlo of exact top-k routing: each token picks k distinct experts uniformly; the busiest of R ranks
    (E/R experts each) holds how many distinct touched experts, over E/R."""
    keys = rng.random((trials, T, E))
    top = np.argpartition(keys, k, axis=2)[:, :, :k]
    touched = np.zeros((trials, E), dtype=bool)
    touched[np.arange(trials)[:, None, None], top] = True
    return float(touched.reshape(trials, R, E // R).sum(2).max(1).mean() / (E // R))


@settings(max_examples=12, deadline=None)
@given(E=st.sampled_from([32, 64, 128, 256]), R=st.sampled_from([2, 4, 8, 16, 32]), k=st.sampled_from([2, 4, 8]),
       T=st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
def test_busiest_rank_matches_monte_carlo_within_2_percent(E, R, k, T):
    if R >= E or k >= E // 2:
        return
    u = experts_touched_fraction(np.array([float(T)]), E, k)
    priced = float(busiest_rank_fraction(u, busiest_rank_table(E, R))[0])
    mc = _mc_busiest(E, R, k, T, np.random.default_rng(E * 1000 + R * 10 + T), max(300, int(3e6 // (T * E))))
    assert priced == pytest.approx(mc, rel=0.02)


def test_busiest_rank_table_limits():
    t = busiest_rank_table(256, 8)
    assert t[0] == 0.0 and t[-1] == pytest.approx(1.0) and np.all(np.diff(t) >= -1e-12)
    assert t[1] == pytest.approx(1 / 32)                           # one touched expert: one slot of 32 on its rank
    np.testing.assert_allclose(busiest_rank_table(64, 1), np.arange(65) / 64)


def _mc_grouped(E: int, R: int, k: int, g: int, tg: int, T: int, rng: np.random.Generator, trials: int) -> float:
    """Reference for grouped_busiest_rank_table, drawn another way: all T tokens at once, each scoring every expert,
    keeping the tg groups whose two best scores sum highest (DeepseekV3TopkRouter) by a full sort, then its k best."""
    s = E // g
    sc = rng.random((trials, T, E))
    top2 = np.sort(sc.reshape(trials, T, g, s), axis=3)[..., -2:].sum(-1)
    allowed = np.zeros((trials, T, g), dtype=bool)
    np.put_along_axis(allowed, np.argsort(-top2, axis=2)[..., :tg], True, axis=2)
    top = np.argsort(-np.where(np.repeat(allowed, s, axis=2), sc, -np.inf), axis=2)[..., :k]
    touched = np.zeros((trials, E), dtype=bool)
    touched[np.arange(trials)[:, None, None], top] = True
    return float(touched.reshape(trials, R, E // R).sum(2).max(1).mean() / (E // R))


@settings(max_examples=6, deadline=None)
@given(R=st.sampled_from([2, 4, 8, 16, 32]), T=st.sampled_from([1, 2, 4, 8, 16, 32]))
def test_grouped_busiest_rank_matches_its_own_monte_carlo(R, T):
    # DeepSeek-V3's routing (256 experts, 8 a token, 4 of 8 groups), priced at D = E u as the pricing reads it,
    # against an independent draw of T tokens at once (the table holds means over its own 1000 routings).
    E, k, g, tg = 256, 8, 8, 4
    u = experts_touched_fraction(np.array([float(T)]), E, k)
    priced = float(busiest_rank_fraction(u, grouped_busiest_rank_table(E, R, k, g, tg))[0])
    mc = _mc_grouped(E, R, k, g, tg, T, np.random.default_rng(R * 100 + T), max(200, 40_000 // T))
    assert priced == pytest.approx(mc, rel=0.03)
    assert priced >= float(busiest_rank_fraction(u, busiest_rank_table(E, R))[0]) - 1e-3   # groups concentrate


def test_grouped_busiest_rank_table_limits_and_reductions():
    t = grouped_busiest_rank_table(256, 8, 8, 8, 4)
    assert t[0] == 0.0 and t[-1] == 1.0 and np.all(np.diff(t) >= -1e-9)
    assert t[8] == pytest.approx(0.094, abs=0.004)     # one token: its 8 experts on at most 4 of the 8 ranks
    # groups that do not constrain, or one rank: the uniform (exact hypergeometric) table
    for args in ((256, 8, 8, 1, 1), (256, 8, 8, 8, 8), (256, 1, 8, 8, 4), (256, 8, 8, 3, 2), (256, 8, 8, 64, 1)):
        np.testing.assert_array_equal(grouped_busiest_rank_table(*args), busiest_rank_table(args[0], args[1]))


def test_group_limited_routing_prices_an_ep_step_above_uniform_routing_and_not_under_eplb():
    # DeepSeek-V3 at DP8 / EP8: one sequence per rank reads more experts on the busiest rank with its groups;
    # Kimi-K2 (n_group 1) and a layout with redundant slots (EPLB's placement) keep uniform routing.
    m = model("deepseek-v3")
    assert (m.n_group, m.topk_group) == (8, 4) and (model("kimi-k2").n_group, model("kimi-k2").topk_group) == (1, 1)
    par = Parallelism(tp=1, ep=8, dp=8)
    grouped = forward_pass(m, par=par)
    flat = forward_pass(replace(m, n_group=1, topk_group=1), par=par)
    i = grouped.names.index("experts")
    # from one token's 8 experts up (below, D < 8 is a fraction of a token: the Monte Carlo's line from none to one)
    assert np.all(grouped.moe_table[i][8:] >= flat.moe_table[i][8:] - 1e-3)
    assert grouped.moe_table[i][8] > 1.15 * flat.moe_table[i][8]
    # redundant slots (EPLB's placement: 258 slots on 6 ranks) are priced with uniform routing over them
    eplb = forward_pass(m, par=Parallelism(tp=1, ep=6, dp=6))
    j = eplb.names.index("experts")
    np.testing.assert_array_equal(eplb.moe_table[j][:259], busiest_rank_table(258, 6))


def test_dp_attention_with_ep8_has_no_tensor_parallel_all_reduce():
    ops = forward_pass(model("deepseek-r1"), par=Parallelism(tp=1, ep=8, dp=8))
    names = [n for n, c in zip(ops.names, ops.coll) if c]
    assert not any(n.startswith("allreduce") for n in names), names
    assert {"dispatch", "combine"} <= set(names)


def test_nvl72_rack_against_four_hgx_nodes():
    # DP attention 32 + EP 32 for DeepSeek-R1 NVFP4: on one GB200 NVL72 every collective stays on NVLink; on 4 nodes
    # of 8x B200 the dispatch/combine cross InfiniBand: the collective time grows, the other families do not.
    kw = dict(model="deepseek-r1", precision="bf16", expert_precision="fp4", tp=1, dp=32, ep=32, method=None,
              engine="trtllm", batch=(64, 512))
    rack = simulate_step(scenario=Scenario(hardware="gb200-nvl72", **kw))
    hgx = simulate_step(scenario=Scenario(hardware="b200", **kw))
    assert rack.feasible.all() and hgx.feasible.all()
    assert np.all(hgx.breakdown_s["collective"] > 1.5 * rack.breakdown_s["collective"])
    for fam in ("dense", "attention", "moe", "lm_head"):
        np.testing.assert_allclose(hgx.breakdown_s[fam], rack.breakdown_s[fam], rtol=0.05, err_msg=fam)
    ops = Scenario(hardware="gb200-nvl72", **kw).resolve().tops
    assert np.all(ops.link[ops.coll > 0] == 0)                      # scale-up (NVLink) only


@pytest.mark.parametrize("ep", [8, 16, 32, 72])
def test_deepseek_nvfp4_mtp_on_the_rack_fits_at_every_ep(ep):
    s = Scenario(hardware="gb200-nvl72", model="deepseek-r1", precision="bf16", expert_precision="fp4", tp=1, dp=ep,
                 ep=ep, method="mtp", engine="trtllm", batch=(ep, 8 * ep))
    dep = s.resolve()
    mem = memory(dep, np.array([float(ep)]), 4.0, 2048.0, drafter=True)
    assert mem.fits.all() and mem.weights_bytes < 0.75 * dep.hw.hbm_capacity_bytes
    from simulator.speedup import predict
    assert predict(s).feasible.all()


def test_ep72_uses_redundant_expert_slots():
    par = Parallelism(tp=1, ep=72, dp=72)
    m = model("deepseek-r1")
    assert par.expert_slots(m) == 288                                 # 4 slots per rank for 256 experts
    ops = forward_pass(m, par=par)
    i = ops.names.index("experts")
    assert ops.moe_e[i] == 288 and ops.moe_k[i] == pytest.approx(8 * 288 / 256)


def test_mxfp4_on_h100_reads_four_bit_weights_and_computes_in_bf16():
    s = Scenario(hardware="h100-sxm", model="gpt-oss-120b", precision="bf16", expert_precision="mxfp4",
                 method="eagle3", batch=(1, 64))
    dep = s.resolve()
    h = load_hardware("h100-sxm")
    assert not h.supports("mxfp4") and h.compute_format("mxfp4") == "bf16"
    r = rates(dep.hw, dep.tops)
    i = dep.tops.names.index("experts")
    assert r.peak[i] == pytest.approx(h.peak_bf16_flops_per_s * h.gemm_bf16_fraction)
    m = model("gpt-oss-120b")
    assert dep.tops.cb[i].max() == pytest.approx(m.n_experts * 3 * m.d_model * m.d_ff_expert *
                                                 DTYPE_BYTES["mxfp4"], rel=1e-6)
    mem = memory(dep, np.array([1.0]), 1.0, 4096.0, drafter=True)
    assert mem.fits.all() and mem.weights_bytes < 70e9             # MXFP4 experts: ~65 GB on one 80 GB H100
    from simulator.speedup import predict
    assert predict(s).feasible.all()


def test_attention_precision_is_one_field_everywhere(capsys):
    a = Scenario(hardware="b200", model="deepseek-r1", tp=8, precision="fp4", method=None)
    b = a.replace(attention_precision="bf16")
    wa, wb = (memory(x.resolve(), np.array([1.0]), 1.0, 0.0).weights_bytes for x in (a, b))
    assert wb > wa                                                  # bf16 attention weighs more than fp4
    assert main(["curve", "--hardware", "b200", "--model", "deepseek-r1", "--tp", "8", "--precision", "fp4",
                 "--attention-precision", "bf16", "--method", "mtp", "--batch", "1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["scenario"]["attention_precision"] == "bf16"
    from simulator.sweep import PARAMS
    assert "attention_precision" in PARAMS


def test_cli_curve_on_the_rack(capsys):
    for ep in ("8", "16", "32", "72"):
        rc = main(["curve", "--hardware", "gb200-nvl72", "--model", "deepseek-r1", "--precision", "bf16",
                   "--expert-precision", "fp4", "--tp", "1", "--dp", ep, "--ep", ep, "--method", "mtp",
                   "--engine", "trtllm", "--batch", f"{ep},{int(ep) * 16}", "--format", "json"])
        d = json.loads(capsys.readouterr().out)
        assert rc == 0 and all(p["feasible"] for p in d["points"]) and d["scenario"]["n_gpus"] == int(ep)


def test_pipeline_parallel_saves_memory_not_latency():
    # Llama-3.1-405B FP8 on H100s: TP8 x PP2 (two nodes) holds half the layers per GPU; a decode token still crosses
    # every layer, so the memory-bound step is the TP8 one plus the stage-to-stage sends (GPipe; vLLM/SGLang PP).
    one = Scenario(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, method=None, batch=(1, 16))
    two = one.replace(pp=2)
    d1, d2 = one.resolve(), two.resolve()
    w1 = memory(d1, np.array([1.0]), 1.0, 0.0).weights_bytes
    w2 = memory(d2, np.array([1.0]), 1.0, 0.0).weights_bytes
    assert 0.45 < w2 / w1 < 0.56 and d2.n_gpus == 16
    s1, s2 = simulate_step(scenario=one), simulate_step(scenario=two)
    np.testing.assert_allclose(s2.step_s, s1.step_s, rtol=0.10)
    names = list(d2.tops.names)
    i = names.index("pp_send")
    assert d2.tops.link[i] == 1 and "pp_send" not in d1.tops.names     # across the two nodes' NICs
    with pytest.raises(ScenarioError, match="pp = 200 exceeds the 126 layers"):
        one.replace(pp=200).resolve()


def test_cli_pp_flag(capsys):
    rc = main(["step", "--hardware", "h100-sxm", "--model", "llama-3.1-405b", "--precision", "fp8", "--tp", "8",
               "--pp", "2", "--batch", "1", "--format", "json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["scenario"]["n_gpus"] == 16


@pytest.mark.parametrize("pp", [2, 4])
def test_fewer_sequences_than_stages_cross_every_stage(pp):
    """Audit: with B < pp each stage priced B/pp of a sequence, as if the stages ran one token in parallel: one
    sequence at 131k context decoded 12 % faster at pp = 2 than at pp = 1 (and an 8k prefill 2x faster)."""
    s = Scenario(hardware="h200-sxm", model="llama-3.1-70b", tp=2, method=None, engine="ideal", batch=(1,),
                 context=131000)
    one, more = simulate_step(scenario=s), simulate_step(scenario=s.replace(pp=pp))
    assert more.step_s[0] >= one.step_s[0]                    # the stage-to-stage sends on top of every layer
    pre = [simulate_step(scenario=s.replace(pp=p, context=0), query_tokens=8192, logits="last").step_s[0]
           for p in (1, pp)]
    assert pre[1] >= pre[0]


def test_the_busiest_dp_rank_holds_a_whole_sequence():
    """Audit: one sequence on 8 attention-DP ranks was priced as an eighth of a sequence per rank (its 131k-token
    latent cache read in 0.35 ms where one H200 needs about 2.3 ms) and held an eighth of its KV cache."""
    s = Scenario(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method=None,
                 engine="ideal", context=131000)
    r = simulate_step(scenario=s.replace(batch=(1, 8)))
    att = [p["breakdown_s"]["attention"] for p in r.to_dict()["points"]]
    assert att[0] == pytest.approx(att[1], rel=1e-12) and att[0] > 2.0e-3
    d = s.resolve()
    kv = memory(d, np.array([1.0, 8.0]), 1.0, 131000.0).kv_bytes
    assert kv[0] == pytest.approx(kv[1], rel=1e-12)           # the busiest rank holds one sequence either way
    half = memory(d, np.array([0.5]), 1.0, 131000.0).kv_bytes[0]
    assert half == pytest.approx(kv[0] / 2)                   # a mean batch below one (serving) stays a fraction


@settings(max_examples=200, deadline=None)
@given(B=st.floats(0.0, 4096.0), dB=st.floats(0.0, 64.0), n=st.integers(1, 72))
def test_dealing_whole_sequences_to_ranks(B, dB, n):
    """experts.dealt: ceil(B / n) at whole B, between the mean and one sequence more, non-decreasing, B below one."""
    d = float(dealt(B, n))
    assert B / n - 1e-9 <= d <= B / n + 1.0 and float(dealt(B + dB, n)) >= d - 1e-12
    assert float(dealt(float(int(B)), n)) == -(-int(B) // n)
    if B < 1.0:
        assert d == B


@settings(max_examples=100, deadline=None)
@given(B=st.floats(0.0, 512.0), dp=st.integers(1, 8), pp=st.integers(1, 16))
def test_pipeline_head_runs_between_once_and_once_per_stage(B, dp, pp):
    """experts.head_runs: once while the pipeline waits on a token (fewer micro-batches than stages), pp times once
    it is full."""
    h, d = float(head_runs(B, dp, pp)), float(dealt(B, dp))
    assert 1.0 <= h <= pp
    assert h == 1.0 if d <= pp - 1 else (h == pp if d >= pp else True)


def test_an_uneven_dp_split_is_priced_at_its_busiest_rank():
    """Audit: B = 12 on 8 attention-DP ranks was priced at the mean, 1.5 sequences per rank; round robin gives four
    ranks two, and the step waits on them (as at B = 16)."""
    s = Scenario(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method=None,
                 engine="ideal", context=8000)
    pts = simulate_step(scenario=s.replace(batch=(8, 12, 16, 17))).to_dict()["points"]
    att = [p["breakdown_s"]["attention"] for p in pts]
    assert att[1] == pytest.approx(att[2], rel=1e-12) and att[1] == pytest.approx(2 * att[0], rel=1e-12)
    assert att[3] == pytest.approx(3 * att[0], rel=1e-12)
    kv = memory(s.resolve(), np.array([12.0, 16.0]), 1.0, 8000.0).kv_bytes
    assert kv[0] == pytest.approx(kv[1], rel=1e-12)


def test_the_pipeline_head_runs_once_per_token_until_the_pipeline_fills():
    """Audit: under pp stages the LM head and sampler were priced pp times whatever the batch; with fewer sequences
    than stages a token waits on one micro-batch's path, whose head runs once (about 4 % of Llama-3.1-70B's step at
    B = 1 on 4 stages)."""
    s = Scenario(hardware="h200-sxm", model="llama-3.1-70b", tp=2, method=None, engine="ideal", context=1000,
                 batch=(1, 2, 3, 4))
    one = simulate_step(scenario=s).to_dict()["points"][0]["breakdown_s"]["lm_head"]
    head = [p["breakdown_s"]["lm_head"] for p in simulate_step(scenario=s.replace(pp=4)).to_dict()["points"]]
    np.testing.assert_allclose(head, [one, one, one, 4 * one], rtol=1e-12)


def test_one_sequence_per_dp_rank_is_one_micro_batch_for_the_experts():
    """Review: with one sequence on each of 8 DP ranks and 2 stages the routed experts were priced at B / pp = 4
    tokens, so a step got faster with more stages; the ranks' micro-batches reach the experts together (8 tokens)."""
    s = Scenario(hardware="h200-sxm", model="deepseek-v3", precision="fp8", tp=1, dp=8, ep=8, method=None,
                 engine="ideal", context=2000, batch=(8,))
    moe = [simulate_step(scenario=s.replace(pp=pp)).to_dict()["points"][0]["breakdown_s"]["moe"] for pp in (1, 2, 4)]
    np.testing.assert_allclose(moe, moe[0], rtol=1e-12)


LAYOUTS = [dict(tp=8), dict(tp=1, dp=8, ep=8), dict(tp=2, dp=4, ep=8), dict(tp=1, dp=8, ep=8, pp=2),
           dict(tp=4, pp=2), dict(tp=1, dp=3, ep=3)]


@settings(max_examples=12, deadline=None)
@given(lay=st.sampled_from(LAYOUTS), L=st.integers(0, 100_000), q=st.integers(1, 8), drafter=st.booleans())
def test_the_largest_batch_that_fits_fits_and_one_more_does_not(lay, L, q, drafter):
    """Review: under DP attention B = 1 and 2 both put one sequence on the busiest rank, so the slope max_batch read
    there was 0 and it reported that no batch fits (specroof advise: 'largest batch that fits in memory: 0'). And an
    MoE MTP drafter under pp = 2 was refused ('pp = 2 exceeds the 1 layers of deepseek-r1-mtp'): it runs on one
    stage."""
    s = Scenario(hardware="h200-sxm", model="deepseek-r1", precision="fp8", method="mtp", engine="sglang",
                 context=L, **lay)
    d = s.resolve()
    n = max_batch(d, float(q), float(L), drafter)
    used = lambda b: bool(memory(d, np.array([float(b)]), float(q), float(L), drafter=drafter).fits[0])  # noqa: E731
    assert (n == 0 and not used(1)) or (used(n) and not used(n + 1))
    assert n > 0 or lay.get("dp") == 3                  # DeepSeek-R1 FP8 on 3 H200s does not fit at all


def test_the_cuda_graph_cap_applies_to_the_busiest_dp_rank():
    """Review: the cap on graph-replayed batches was compared with the instance's batch; under DP attention each rank
    replays its own graph and SGLang's CudaGraphRunner.can_run checks the largest rank's batch against
    cuda_graph_max_bs, so 1024 sequences on 8 ranks (128 each) replay graphs under a cap of 256."""
    # An eager pass at these batches is bound by the GPU (its launches hidden: roofline's module doc); a launch cost
    # of 1 ms a kernel makes the launches show where the pass is eager.
    slow = replace(load_engine("sglang"), kernel_launch_s=1e-3)
    s = Scenario(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method=None,
                 engine=slow, context=500, batch=(1024, 4096), cuda_graph_max_batch=256)
    eager = [p["breakdown_s"]["overhead"] for p in simulate_step(scenario=s).to_dict()["points"]]
    assert eager[0] == 0.0 and eager[1] > 0.0


def test_the_drafter_is_checked_against_the_graph_cap_at_its_own_batch():
    """Review: the drafter runs unpipelined on one stage, so its pass at 24 sequences is above a cap of 16 even
    when the target's pipeline micro-batch (12) is not; it was priced as graph-replayed."""
    from simulator import speedup_curve
    s = Scenario(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle3",
                 engine=replace(load_engine("sglang"), kernel_launch_s=1e-3), k=3, batch=(24,))   # launch-bound eager
    free, capped = (speedup_curve(scenario=s.replace(cuda_graph_max_batch=c)) for c in (None, 16))
    assert capped.overhead_s[0] > free.overhead_s[0] and capped.spec_step_s[0] > free.spec_step_s[0]   # eager launches
    assert capped.base_step_s[0] == pytest.approx(free.base_step_s[0], rel=1e-12)   # 12 per micro-batch: graphed
