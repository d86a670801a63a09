"""Each priced mechanism (issue 11): monotone in its input, reduces to the bare roofline when switched off, and one
case against a cited measurement.

    per-kernel graph floor      hardware kernel_floor_s; engine graph_kernel_floor
    GEMM overlap                hardware gemm_overlap: published cuBLAS GEMM timings on H100 and B200 (below)
    GEMM tile padding           hardware gemm_tile_m (F_TPAD)
    one-shot / two-shot         all-reduce under CUDA graphs (custom all-reduce)
    hierarchical collectives    groups spanning several NVLink domains
    fully connected boards      AMD Infinity Fabric: a group of n GPUs reaches n - 1 peer links (stas00, vLLM #39080)
    QK-norm all-reduce          MiniMax-M2's norm over the TP-split q and k projections (vLLM MiniMaxText01RMSNormTP)
    verify KV re-reads          trtllm-gen MLA verify on Blackwell: vLLM PR #41778 kernel times (below)
    sampler                     two fp32 passes over the vocabulary per token
    active experts per step     vLLM PR #24700 benchmark_moe kernel times on H100; TensorRT-LLM's DeepSeek MoE on B200
    busiest EP rank             tests/test_layouts.py (Monte Carlo)
    DP prompt straggler         tests/test_dp_straggler.py (TensorRT-LLM's DeepSeek-R1 max-throughput guide)
    acceptance decay            tests/test_acceptance.py (vLLM #20780 per-k table)
"""

from __future__ import annotations

import csv
import re
from dataclasses import fields, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.calibration import row_group
from simulator.cross_validation import fit_headline, fit_pool
from simulator.engine import load_engine
from simulator.errors import ScenarioError
from simulator.features import features
from simulator.fusion import FusionRule
from simulator.hardware import load_hardware
from simulator.prompts import ops_where
from simulator.roofline import hierarchical_bandwidth, rates, step_times
from simulator.validation import predict_prepared
from simulator.workload import (
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_ALLTOALL,
    F_TL,
    FAM,
    Parallelism,
    Precision,
    forward_pass,
    gemm,
)

from .helpers import load_tool, model, ops_for, refuse_profile_value

H100 = load_hardware("h100-sxm")
B200 = load_hardware("b200")


def _t(ops, hw, B, q=1.0, L=1024.0, mechanisms=True, graphed=True):
    return step_times(ops, rates(hw, ops, mechanisms=mechanisms), np.asarray(B, float), q, L,
                      graphed=graphed).total_s


# ---- per-kernel graph floor ---------------------------------------------------------------------------------------

@settings(max_examples=20)
@given(f1=st.floats(0.0, 2e-5), f2=st.floats(0.0, 2e-5), B=st.integers(1, 256))
def test_floor_monotone_and_affine(f1, f2, B):
    ops = ops_for("llama-3.1-8b")
    lo, hi = sorted((f1, f2))
    a, b = (_t(ops, replace(H100, kernel_floor_s=f), [B]) for f in (lo, hi))
    assert b[0] >= a[0]
    kernels = float((ops.kernels * ops.repeat)[ops.coll == 0].sum())
    assert b[0] - a[0] == pytest.approx((hi - lo) * kernels, rel=1e-9, abs=1e-15)


def test_floor_off_is_the_bare_roofline():
    ops = ops_for("llama-3.1-8b")
    np.testing.assert_allclose(_t(ops, replace(H100, kernel_floor_s=0.0), [1, 64], graphed=True),
                               _t(ops, H100, [1, 64], graphed=False))
    assert load_engine("ideal").graph_kernel_floor is False


@pytest.mark.slow
def test_floor_against_vllm_20780_base_step_held_out(shipped_prepared):
    # vLLM issue #20780: Llama-3.1-8B, one H100, batch 1, no async scheduling: 7.07 ms per token (row S038). The
    # priced step (graph floor + roofline + the host work the row's scheduler mode exposes), with every calibrated
    # value refitted without this source, lands within 10 % (+4.9 % when written). In sample it is +10.7 %: the
    # source's own EAGLE-3 rows, whose mid-2025 proposer spent about 1 ms per draft pass against the profile's 0.1 ms
    # (a value one source cannot set), pull vLLM's fitted host step up; held out is the accuracy claimed.
    prepared, _ = shipped_prepared
    pool = fit_pool(prepared)
    fold = fit_headline([p for p in pool if p.row["source_id"] != "vllm-issue-20780"])
    p = next(p for p in prepared if p.row["row_id"] == "S038")
    assert p.row["metric"] == "base_step_s" and p.row["batch"] == "1"
    g = row_group(p)
    t = predict_prepared(p, fold.engines.get(g.engine, p.dep.eng.uncalibrated()), fold.floors[g.arch])
    assert t == pytest.approx(7.07e-3, rel=0.10)


# ---- GEMM tile padding ---------------------------------------------------------------------------------------------

@settings(max_examples=20)
@given(T=st.integers(1, 1024))
def test_tile_padding_rounds_gemm_rows_up_and_is_off_without_mechanisms(T):
    # Hopper wgmma computes 64 rows at a time (CUTLASS #1483; DeepGEMM #60 pads m < 64): the math of T tokens is that
    # of ceil(T / 64) x 64 rows, flat for T = 1..64, monotone in T, and exactly T with the mechanism off.
    ops = ops_for("llama-3.1-70b", 8, weights="fp8")
    i = ops.names.index("qkv_proj")
    assert rates(H100, ops).tile == 64 and rates(H100, ops, mechanisms=False).tile == 0
    f = lambda t, tile: features(np.array([float(t)]), np.array([1.0]), np.array([0.0]), ops.window[i], 0.0, 0.0,  # noqa: E731
                                 None, 1.0, tile)
    flops = lambda t, tile: float(f(t, tile)[0] @ ops.cf[i])  # noqa: E731
    assert flops(T, 64) == pytest.approx(flops(64 * -(-T // 64), 0.0))
    assert flops(T, 64) >= flops(T, 0.0) and flops(T + 1, 64) >= flops(T, 64)
    assert flops(1, 64) == flops(64, 64)


# ---- GEMM overlap: math and memory of a GEMM overlap in part -----------------------------------------------------

def _gemm_flags_off(ops):
    return replace(ops, gemm=np.zeros_like(ops.gemm))


@settings(max_examples=20)
@given(e1=st.floats(0.0, 1.0), e2=st.floats(0.0, 1.0), B=st.integers(1, 512), q=st.integers(1, 8))
def test_gemm_overlap_monotone_and_between_the_max_and_the_max_plus_the_math(e1, e2, B, q):
    # Less overlap costs more, from the roofline max (gemm_overlap = 1) to the max plus every GEMM's real-token math
    # (0), which is at most the sum; for a dense and an MoE model, decode and verify shapes alike.
    for ops in (ops_for("llama-3.1-8b"), ops_for("qwen3-30b-a3b")):
        lo, hi = sorted((e1, e2))
        a, b = (_t(ops, replace(H100, gemm_overlap=e), [B], q=float(q)) for e in (hi, lo))
        assert b[0] >= a[0] * (1 - 1e-12)
        top, bottom = (_t(ops, replace(H100, gemm_overlap=e), [B], q=float(q)) for e in (1.0, 0.0))
        assert top[0] * (1 - 1e-12) <= a[0] <= bottom[0] * (1 + 1e-12)
        r = rates(H100, ops)
        total = step_times(ops, r, np.array([float(B)]), float(q), 1024.0, overlap="sum").total_s
        assert bottom[0] <= total[0] * (1 + 1e-12)


def test_gemm_overlap_is_the_measured_mode_only_and_touches_only_gemms():
    # The default mode "measured" with gemm_overlap = 1 is the roofline max; an explicit mode ("max", "sum", a number)
    # prices every op alike, as before the mechanism: the GEMM flags and the device's overlap do not enter. In the
    # measured mode attention, collectives and the sampler never depend on it; mechanisms off price GEMMs at the max.
    ops = ops_for("qwen3-30b-a3b", 2)
    B, q, L = np.array([1.0, 8.0, 64.0, 256.0]), 4.0, 2048.0
    r1 = rates(replace(H100, gemm_overlap=1.0), ops)
    np.testing.assert_allclose(step_times(ops, r1, B, q, L).total_s,
                               step_times(ops, rates(H100, ops), B, q, L, overlap="max").total_s, rtol=1e-12)
    r3 = rates(replace(H100, gemm_overlap=0.3), ops)
    for mode in ("max", "sum", 0.5):
        np.testing.assert_allclose(step_times(ops, r3, B, q, L, overlap=mode).total_s,
                                   step_times(_gemm_flags_off(ops), r1, B, q, L, overlap=mode).total_s, rtol=1e-12)
    assert rates(H100, ops, mechanisms=False).gemm_eta == 1.0 and rates(H100, ops).gemm_eta == H100.gemm_overlap
    fam = [step_times(ops, rates(replace(H100, gemm_overlap=e), ops), B, q, L).by_family_s for e in (1.0, 0.0)]
    for name in ("attention", "collective"):
        np.testing.assert_allclose(fam[0][:, FAM[name]], fam[1][:, FAM[name]], rtol=1e-12)
    gemm_names = {n for n, g in zip(ops.names, ops.gemm) if g}
    assert gemm_names == {"qkv_proj", "o_proj", "router", "experts", "lm_head"}


@settings(max_examples=20)
@given(T=st.integers(1, 64))
def test_gemm_overlap_counts_real_tokens_not_tile_padded_rows(T):
    # cuBLAS at M = 16 costs what it costs at M = 1 (vLLM PR #23280, H100: 9.8 and 9.9 us for N x K = 2112 x 7168):
    # the rows padded up to the tile cost nothing beyond the max, so a GEMM's unhidden math grows with the real tokens.
    ops = gemm(2112, 7168)
    r = rates(replace(H100, gemm_overlap=0.0, kernel_floor_s=0.0), ops)
    t = step_times(ops, r, np.array([float(T)]), 1.0, 0.0).total_s[0]
    tm = (2112 * 7168 * 2 + T * (2112 + 7168) * 2) / r.bw
    assert t == pytest.approx(tm + 2.0 * T * 2112 * 7168 / r.peak[0], rel=1e-12)


@pytest.mark.parametrize("args, message", [((0, 7168), "gemm n = 0, k = 7168; expected positive integers"),
                                           ((2112.5, 7168), "gemm n = 2112.5, k = 7168; expected positive integers"),
                                           ((2112, 7168, "int3"), "gemm weights = 'int3'; expected one of")])
def test_gemm_op_rejects_what_is_not_a_gemm(args, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        gemm(*args)


def test_gemm_overlap_against_published_cublas_timings():
    # validation/sources/gemm_kernels.csv: cuBLAS bf16 GEMMs of LLM weight shapes under CUDA graphs on H100 (vLLM PRs
    # #23280, #49363) and B200 (#19566, #20071). Priced by the op and roofline a projection is priced by, with the
    # device's GEMM overlap (0.60) and the fixed time per kernel the tool fits beside it (0.88 us: one GEMM replayed
    # back to back, not the mean per-kernel cost of a step's kernels, which is fitted on steps): every row at M =
    # 16..4096 within 20 % (worst 19 %), where the roofline max (gemm_overlap = 1) misses by up to 34 % (N x K =
    # 2112 x 7168 at M = 256 and 28672 x 4096 on B200 at M = 256), and the RMS log error falls from 0.16 to 0.11.
    tool = load_tool("fit_gemm_overlap")
    tables = tool.load(tool.CSV)
    (eta, t0), se, rms, n, _ = tool.fit(tables, tool.M_MIN)
    assert H100.gemm_overlap == load_hardware("b200").gemm_overlap == pytest.approx(eta, abs=0.005)
    assert se[0] < eta and n == 38
    worst_max = 0.0
    for (gpu, nn, kk), rows in tables.items():
        M = np.array([m for m, _ in rows if m >= tool.M_MIN])
        t = np.array([x for m, x in rows if m >= tool.M_MIN])
        np.testing.assert_allclose(tool.priced(gpu, nn, kk, M, H100.gemm_overlap, t0), t, rtol=0.20)
        worst_max = max(worst_max, float(np.max(np.abs(tool.priced(gpu, nn, kk, M, 1.0, t0) / t - 1))))
    assert worst_max > 0.30 and rms < 0.12


def test_gemm_overlap_fit_recovers_a_probed_device_and_names_bad_input(tmp_path, capsys):
    # Round trip: GEMM rows in tools/gpu_probe.py's format, timed as specroof prices them at a known overlap (0.35) and
    # fixed time (2 us) on an H200, come back from the tool's fit; a row it cannot read is named with its line.
    tool = load_tool("fit_gemm_overlap")
    probe = tmp_path / "probe.csv"
    M = np.array([1, 16, 64, 128, 256, 512])
    with open(probe, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=("probe", "case", "m", "time_us"))
        w.writeheader()
        w.writerow(dict(probe="floor", case="graph", m=0, time_us=3.0))        # other probes are skipped
        for name, k, n in (("q_a+kv_a", 7168, 2112), ("o_proj", 2048, 7168), ("gate_up", 4096, 28672)):
            for m, t in zip(M, tool.priced("h200-sxm", n, k, M, 0.35, 2e-6)):
                w.writerow(dict(probe="gemm", case=f"deepseek-v3-tp8 {name} {k}x{n}", m=int(m), time_us=t * 1e6))
    tables = tool.load_probe(probe, "h200-sxm")
    assert sorted(tables) == [("h200-sxm", 2112, 7168), ("h200-sxm", 7168, 2048), ("h200-sxm", 28672, 4096)]
    (eta, t0), se, rms, n, _ = tool.fit(tables, tool.M_MIN)
    assert eta == pytest.approx(0.35, abs=1e-3) and t0 == pytest.approx(2e-6, rel=1e-2) and rms < 1e-6 and n == 15
    assert tool.main(["--probe", str(probe), "--gpu", "h200-sxm"]) == 0
    assert "h200-sxm" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    bad.write_text("probe,case,m,time_us\ngemm,deepseek-v3-tp8 o_proj 2048x7168,one,5.0\n")
    assert tool.main(["--probe", str(bad), "--gpu", "h200-sxm"]) == 2
    assert f"{bad}:2: a gemm row needs" in capsys.readouterr().err
    assert tool.main(["--probe", str(probe), "--gpu", "no-such-gpu"]) == 2
    assert "unknown hardware 'no-such-gpu'" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("probe,case,m,time_us\nfloor,graph,0,3.0\n")
    assert tool.main(["--probe", str(empty), "--gpu", "h200-sxm"]) == 2
    assert "no gemm rows" in capsys.readouterr().err


# ---- all-reduce: one-shot / two-shot -------------------------------------------------------------------------------

def _allreduce_s(hw, tp, tokens, mechanisms=True):
    ops = forward_pass(model("llama-3.1-70b"), Precision(), Parallelism(tp=tp), scaleup_domain=hw.scaleup_domain)
    i = ops.names.index("allreduce_attn")
    st_ = step_times(ops, rates(hw, ops, mechanisms=mechanisms), np.array([float(tokens)]), 1.0, 0.0)
    one = replace(ops, repeat=np.where(np.arange(len(ops)) == i, 1.0, 0.0))
    return step_times(one, rates(hw, one, mechanisms=mechanisms), np.array([float(tokens)]), 1.0, 0.0).total_s[0], st_


@settings(max_examples=15)
@given(t1=st.integers(1, 4096), t2=st.integers(1, 4096))
def test_allreduce_monotone_one_shot_small_two_shot_large(t1, t2):
    lo, hi = sorted((t1, t2))
    a, _ = _allreduce_s(H100, 8, lo)
    b, _ = _allreduce_s(H100, 8, hi)
    assert b >= a
    lat, bw, n = H100.allreduce_latency_s, H100.scaleup_bytes_per_s * H100.link_fraction, 8
    for T, t in ((lo, a), (hi, b)):
        S = T * 8192 * 2.0
        assert t == pytest.approx(min(lat + (n - 1) * S / bw, 2 * lat + 2 * (n - 1) / n * S / bw), rel=1e-9)


def test_allreduce_off_is_the_ring():
    lat, bw, n, S = H100.allreduce_latency_s, H100.scaleup_bytes_per_s * H100.link_fraction, 8, 4096 * 8192 * 2.0
    ring, _ = _allreduce_s(H100, 8, 4096, mechanisms=False)
    assert ring == pytest.approx(lat + 2 * (n - 1) / n * S / bw, rel=1e-9)


def test_allreduce_against_sglang_custom_allreduce():
    # SGLang PR #2904: custom all-reduce on 8x H100 takes 5.7-7.8 us up to 64 KB at TP8 (bf16: 32 tokens of 1 KB).
    t, _ = _allreduce_s(H100, 8, 8)          # Llama-3.1-70B: 8192 x 2 B = 16 KB per token; 8 tokens = 128 KB
    small, _ = _allreduce_s(H100, 8, 2)      # 32 KB
    assert 5.7e-6 <= small <= 9e-6 and t >= small


def _dispatch_s(hw, tokens_per_rank):
    """One expert-parallel dispatch of DeepSeek-V3 at DP8 / EP8 (attention data-parallel, 8 ranks) priced alone."""
    ops = forward_pass(model("deepseek-v3"), Precision(weights="fp8"), Parallelism(tp=1, ep=8, dp=8),
                       scaleup_domain=hw.scaleup_domain)
    one = replace(ops, repeat=np.where(np.array(ops.names) == "dispatch", 1.0, 0.0))
    return float(_t(one, hw, 8.0 * tokens_per_rank))


def test_alltoall_against_deepep_low_latency_on_h100():
    # nixl PR #1749 (TensorRT-LLM bench_moe_comm.py, one node, 8x H100 over NVLink, DeepSeek-V3 shapes): DeepEP's
    # low-latency dispatch takes 32.06, 37.61 and 49.38 us at 16, 32 and 64 tokens per rank, 75.21 at 128; the spec's
    # 26 us is that line at zero tokens. Priced: within 15 % up to 64 tokens, low by about a fifth at 128 (the payload
    # is priced at the link's bandwidth, which the kernel does not reach there).
    for tokens, measured in ((16, 32.06e-6), (32, 37.61e-6), (64, 49.38e-6)):
        assert _dispatch_s(H100, tokens) == pytest.approx(measured, rel=0.15)
    assert 0.75 < _dispatch_s(H100, 128) / 75.21e-6 < 0.85
    assert _dispatch_s(H100, 1) < _dispatch_s(H100, 16) < _dispatch_s(H100, 128)


def test_a_pipeline_send_is_one_hop_not_an_expert_all_to_all():
    # Found by review (2026-12-06): pp_send took the expert all-to-all's latency (66 us then). A stage's send of one
    # hidden vector per token is one hop of the small-message path (the device's all-reduce latency, an estimate),
    # plus the scale-out latency where the stages are on two nodes.
    for hw in (H100, load_hardware("mi300x")):
        for domain, extra in ((8, 0.0), (4, hw.scaleout_latency_s)):
            ops = forward_pass(model("llama-3.1-70b"), Precision(), Parallelism(tp=4, pp=2), scaleup_domain=domain)
            one = replace(ops, repeat=np.where(np.array(ops.names) == "pp_send", 1.0, 0.0))
            t = float(_t(one, replace(hw, scaleup_domain=domain), 1.0))
            lat = hw.allreduce_latency_s + extra
            assert lat < t < lat + 1e-6                    # the 16 KB vector itself: under 1 us on any link
            assert t < hw.alltoall_latency_s + extra


# ---- QK-norm all-reduce -------------------------------------------------------------------------------------------

@settings(max_examples=15)
@given(B=st.integers(1, 256), q=st.integers(1, 8), tp=st.sampled_from([1, 2, 4, 8]))
def test_qk_norm_allreduce_adds_one_latency_bound_collective_per_layer_and_is_off_at_tp1(B, q, tp):
    """vLLM MiniMaxText01RMSNormTP.forward_qk all-reduces 2 fp32 sums of squares per token once per layer: it costs
    at least nothing (monotone), exactly one small all-reduce per layer under TP, and nothing at TP 1 or with the
    mechanism off (qk_norm_tp_reduce False: the per-head norm of Qwen3, which needs no collective)."""
    m = model("minimax-m2.5")
    assert m.qk_norm_tp_reduce
    on, off = (forward_pass(x, Precision(weights="fp8"), Parallelism(tp, tp)) for x in
               (m, replace(m, qk_norm_tp_reduce=False)))
    mi355 = load_hardware("mi355x")
    a, b = (_t(o, mi355, [B], q=float(q)) for o in (off, on))
    if tp == 1:
        assert "allreduce_qk_norm" not in on.names and b[0] == a[0]
        return
    j = on.names.index("allreduce_qk_norm")
    assert on.repeat[j] == m.n_layers and on.group[j] == tp and on.cc[j, 0] == 0.0
    every = _t(_only(on, "allreduce_qk_norm"), mi355, [B], q=float(q))[0]        # all n_layers of them
    assert b[0] - a[0] == pytest.approx(every, rel=1e-6)
    assert every / m.n_layers == pytest.approx(mi355.allreduce_latency_s, rel=0.05)   # 8 B a token: the latency
    assert b[0] > a[0]


def test_per_head_qk_norm_has_no_collective():
    qwen3 = forward_pass(model("qwen3-30b-a3b"), Precision(), Parallelism(4, 1))
    assert model("qwen3-30b-a3b").qk_norm and "allreduce_qk_norm" not in qwen3.names


# ---- verify KV re-reads (trtllm-gen MLA on Blackwell) ------------------------------------------------------------

# vLLM PR #41778, q_len 4, 16 heads, kv_len 80k, FP8 KV (SM100), us by batch: the trtllm-gen MLA kernel (one query
# token per CTA) and tokenspeed_mla (the queries folded into the heads: the cache read once).
_TRTLLM_MLA_Q4_US = {8: 181, 16: 336, 32: 655, 64: 1420, 96: 2009, 128: 2623, 192: 3925, 256: 4855}
_TOKENSPEED_MLA_Q4_US = {8: 112, 16: 176, 32: 318, 64: 610, 96: 1137, 128: 1218, 192: 1833, 256: 2693}


def _attention_us(r, B, q, L=80_000.0, hw="b200"):
    ops = _only(forward_pass(model("deepseek-v3"), Precision(weights="fp8", kv="fp8"), Parallelism(8), kv_reread=r),
                "attention")
    return step_times(ops, rates(load_hardware(hw), ops), np.array([float(B)]), float(q), L).total_s[0] * 1e6


@settings(max_examples=20)
@given(r1=st.floats(0.0, 1.0), r2=st.floats(0.0, 1.0), B=st.integers(1, 256), q=st.integers(1, 8))
def test_verify_kv_reread_monotone_off_at_zero_and_at_one_query(r1, r2, B, q):
    lo, hi = sorted((r1, r2))
    a, b, off = (_attention_us(r, B, q, L=8192.0) for r in (lo, hi, 0.0))
    assert b >= a * (1 - 1e-12)
    base = _only(forward_pass(model("deepseek-v3"), Precision(weights="fp8", kv="fp8"), Parallelism(8)), "attention")
    bare = step_times(base, rates(load_hardware("b200"), base), np.array([float(B)]), float(q), 8192.0).total_s[0]
    assert off == pytest.approx(bare * 1e6, rel=1e-12)                  # r = 0: the op table without the mechanism
    assert _attention_us(hi, B, 1, L=8192.0) == pytest.approx(_attention_us(0.0, B, 1, L=8192.0), rel=1e-12)


def test_verify_kv_reread_against_vllm_41778_kernel_times():
    """The profiles' r prices the trtllm-gen verify attention over a read-once price at the ratio vLLM PR #41778
    measures between the trtllm-gen kernel and a read-once kernel on one device: within 5 % on the mean over batch
    8-256, within 20 % at each batch (the measured ratio scatters 1.62-2.33)."""
    r = load_engine("sglang").mla_verify_kv_reread_blackwell
    assert r == load_engine("trtllm").mla_verify_kv_reread_blackwell == 0.32
    priced = {B: _attention_us(r, B, 4) / _attention_us(0.0, B, 4) for B in _TRTLLM_MLA_Q4_US}
    measured = {B: _TRTLLM_MLA_Q4_US[B] / _TOKENSPEED_MLA_Q4_US[B] for B in _TRTLLM_MLA_Q4_US}
    assert np.mean(list(priced.values())) == pytest.approx(np.mean(list(measured.values())), rel=0.05)
    for B in priced:
        assert priced[B] == pytest.approx(measured[B], rel=0.20), B


def test_verify_kv_reread_only_for_mla_verify_on_blackwell():
    from simulator.acceptance import Acceptance
    from simulator.scenario import Scenario
    acc = Acceptance.from_rate(0.7)
    on = Scenario(hardware="b200", model="deepseek-v3", method="mtp", precision="fp8", tp=8, acceptance=acc).resolve()
    assert on.verify_ops is on.vops and on.vops.cb[on.vops.names.index("attention"), F_TL] > 0
    for kw in ({"hardware": "h200-sxm"}, {"engine": "vllm"}, {"model": "llama-3.1-70b", "method": "eagle3"}):
        dep = Scenario(**{"hardware": "b200", "model": "deepseek-v3", "method": "mtp", "precision": "fp8", "tp": 8,
                          "acceptance": acc, **kw}).resolve()
        assert dep.vops is None and dep.verify_ops is dep.tops, kw


def test_step_prices_a_verify_shape_as_the_speculative_step_does():
    # Found in review: `specroof step --query-tokens 4` priced B200 DeepSeek's verify with the decode op table (26.3
    # against 31.6 ms at 8k context and batch 64). Both now price the pass `curve` prices.
    from simulator.acceptance import Acceptance
    from simulator.pricing import price_pass
    from simulator.scenario import Scenario
    from simulator.step import simulate_step
    kw = dict(hardware="b200", model="deepseek-v3", precision="fp8", kv_precision="fp8", tp=8, batch=(64,),
              context=8192)
    got = simulate_step(scenario=Scenario(**kw), query_tokens=4).breakdown_s["attention"][0]
    dep = Scenario(**kw, method="mtp", k=3, acceptance=Acceptance.from_rate(0.7)).resolve()
    want = price_pass(dep, dep.verify_ops, np.array([64.0]), 4.0, 8192.0, "verify").by_family_s[0, FAM["attention"]]
    decode_table = price_pass(dep, dep.tops, np.array([64.0]), 4.0, 8192.0, "verify").by_family_s[0, FAM["attention"]]
    assert got == pytest.approx(want, rel=1e-9) and want > 1.2 * decode_table


def test_forward_pass_refuses_a_reread_that_cannot_be_and_with_engine_rebuilds_the_verify_ops():
    from simulator.acceptance import Acceptance
    from simulator.scenario import Scenario, with_engine
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ScenarioError, match="kv_reread = .*; expected a share from 0 to 1"):
            forward_pass(model("deepseek-v3"), Precision(), Parallelism(8), kv_reread=bad)
    dep = Scenario(hardware="b200", model="deepseek-v3", method="mtp", precision="fp8", tp=8,
                   acceptance=Acceptance.from_rate(0.7)).resolve()
    # Found in review: a profile without the key (a copy made before it existed) made validate skip every row of the
    # engine; the verify ops now follow the profile.
    off = with_engine(dep, replace(dep.eng, mla_verify_kv_reread_blackwell=0.0))
    assert off.vops is None and off.verify_ops is off.tops
    assert with_engine(off, dep.eng).vops is not None
    # Calibration calls with_engine per row and evaluation: the same share keeps the same op set (no rebuild, and the
    # price memo, keyed by the op set, still hits).
    assert with_engine(dep, replace(dep.eng, host_step_s=2e-3)).vops is dep.vops
    with pytest.raises(ScenarioError, match="changes the all-reduce latency; resolve the scenario again"):
        with_engine(dep, replace(dep.eng, allreduce_latency_s=1e-5))
    # Found in review: a profile fusing other kernels (validate --engine-override with a copy of trtllm.toml without
    # its [kernels]) priced no row; the deployment is resolved again with the profile's op sets.
    llama = Scenario(hardware="h200-sxm", model="llama-3.3-70b", method="eagle3", precision="fp8", tp=8,
                     engine="trtllm").resolve()
    plain = with_engine(llama, replace(llama.eng, fused=()))
    assert plain.eng.fused == () and plain.tops.kernels.sum() > llama.tops.kernels.sum()
    assert plain.drafter.ops_all.kernels.sum() >= llama.drafter.ops_all.kernels.sum()


@pytest.mark.parametrize("value, needle", [("1.5", "1.5"), ("-0.1", "-0.1"), ('"high"', "high"), ("nan", "nan")])
def test_a_profile_whose_reread_share_is_not_a_share_is_refused(value, needle, tmp_path, capsys):
    refuse_profile_value(capsys, tmp_path, "sglang", "mla_verify_kv_reread_blackwell", value, needle, "curve",
                         "--hardware", "b200", "--model", "deepseek-v3", "--method", "mtp", "--precision", "fp8",
                         "--tp", "8")


# ---- hierarchical collectives --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [COLL_ALLREDUCE, COLL_ALLTOALL, COLL_ALLGATHER])
def test_hierarchical_between_nvlink_and_a_flat_network(kind):
    bw_in, bw_out = 376e9, 42e9
    for n in (16, 32, 64):
        bw = hierarchical_bandwidth(kind, float(n), 8.0, bw_in, bw_out)
        assert bw_out <= bw <= bw_in * n        # never slower than all bytes on the NIC
    # one domain (g = n): the NVLink figure for the all-to-all and all-gather
    assert hierarchical_bandwidth(COLL_ALLTOALL, 8.0, 8.0, bw_in, bw_out) == pytest.approx(bw_in)
    assert hierarchical_bandwidth(COLL_ALLGATHER, 8.0, 8.0, bw_in, bw_out) == pytest.approx(bw_in)


def test_tp16_across_two_nodes_costs_less_than_a_flat_infiniband_ring():
    # issue 12: TP beyond one node was a flat ring over InfiniBand (~6x too much bandwidth time at TP16)
    ops = forward_pass(model("llama-3.1-405b"), Precision(weights="fp8"), Parallelism(tp=16), scaleup_domain=8)
    r = rates(H100, ops)
    flat = H100.scaleout_bytes_per_s * H100.link_fraction
    assert np.all(r.bw_op[ops.coll > 0] > flat)
    assert np.all(r.bw_op[ops.coll == COLL_ALLREDUCE] > 4 * flat)   # 2(n-1)/n over ~2(g-1)/g/NVLink + 1/g of IB


# ---- fully connected (switchless) boards ---------------------------------------------------------------------------

MI300X, MI355X = load_hardware("mi300x"), load_hardware("mi355x")


@settings(max_examples=20)
@given(n1=st.integers(2, 8), n2=st.integers(2, 8))
def test_mesh_bandwidth_monotone_in_the_group_and_the_switch_value_without_peer_links(n1, n2):
    lo, hi = sorted((n1, n2))
    for hw in (MI300X, MI355X):
        assert hw.scaleup_group_bytes_per_s(lo) <= hw.scaleup_group_bytes_per_s(hi) <= hw.scaleup_bytes_per_s
        off = replace(hw, scaleup_peer_bytes_per_s=None)      # behind a switch: every group reaches it all
        assert off.scaleup_group_bytes_per_s(lo) == off.scaleup_bytes_per_s
    assert H100.scaleup_peer_bytes_per_s is None and H100.scaleup_group_bytes_per_s(2) == H100.scaleup_bytes_per_s


def test_mesh_bandwidth_against_amd_all_reduce_measurements():
    # vLLM PR #39080 (MI355X): 'Peak busbw = (N-1) x 76.8 GB/s: TP2=76.8, TP4=230.4, TP8=537.6 GB/s'
    for n, gb in ((2, 76.8), (4, 230.4), (8, 537.6)):
        assert MI355X.scaleup_group_bytes_per_s(n) == pytest.approx(gb * 1e9)
    # stas00 (MI300X): all-reduce busbw 47.7 GB/s on 2 GPUs against 312.9 on 8, a ratio of 0.152; priced 1/7
    assert MI300X.scaleup_group_bytes_per_s(2) / MI300X.scaleup_group_bytes_per_s(8) == pytest.approx(
        47.7 / 312.9, rel=0.07)
    # the all-reduces of a TP2 70B step on MI300X get one link (64 GB/s x link_fraction), TP8's all seven
    for tp, links in ((2, 1), (4, 3), (8, 7)):
        ops = forward_pass(model("llama-3.1-70b"), Precision(), Parallelism(tp=tp), scaleup_domain=8)
        bw = rates(MI300X, ops).bw_op[ops.coll == COLL_ALLREDUCE]
        np.testing.assert_allclose(bw, links * 64e9 * MI300X.link_fraction, rtol=1e-12)
    # every scale-up collective takes the rule (review): EP all-to-all over 4 GPUs gets 3 links, a stage send one
    ops = forward_pass(model("deepseek-v3"), Precision(weights="fp8"), Parallelism(tp=1, ep=4, dp=4),
                       scaleup_domain=8)
    a2a = rates(MI300X, ops).bw_op[ops.coll == COLL_ALLTOALL]
    assert a2a.size and np.allclose(a2a, 3 * 64e9 * MI300X.link_fraction)
    ops = forward_pass(model("llama-3.1-70b"), Precision(), Parallelism(tp=4, pp=2), scaleup_domain=8)
    r = rates(MI300X, ops)
    assert np.allclose(r.bw_op[ops.group == 2.0], 64e9 * MI300X.link_fraction)       # the pipeline send


def test_a_disaggregated_kv_transfer_without_a_nic_takes_one_peer_link():
    """Review: MI325X (no published NIC) moved a prompt's KV over all seven links; one GPU reaches its counterpart
    over one, after a collective's latency, and instances that need two boards are refused (no link between them is
    published)."""
    from simulator.prompts import kv_transfer_s
    from simulator.scenario import Scenario
    from simulator.traffic import Workload
    w = Workload(isl=8192, osl=64, pd=True)
    got = {}
    for hw in ("mi325x", "mi300x"):
        dep = Scenario(hardware=hw, model="llama-3.1-70b", precision="fp8", method=None).resolve()
        lat = dep.hw.scaleout_latency_s if dep.hw.scaleout_bytes_per_s else dep.hw.allreduce_latency_s
        got[hw] = kv_transfer_s(dep, w) - lat
    m325 = load_hardware("mi325x")
    assert m325.scaleout_bytes_per_s is None
    dep = Scenario(hardware="mi325x", model="llama-3.1-70b", precision="fp8", method=None).resolve()
    kv = got["mi325x"] * 64e9 * m325.link_fraction          # bytes moved over one 64 GB/s peer link
    assert kv == pytest.approx(got["mi300x"] * load_hardware("mi300x").scaleout_bytes_per_s
                               * load_hardware("mi300x").link_fraction, rel=1e-9)      # the same KV on either device
    assert dep.hw.scaleup_group_bytes_per_s(2.0) == pytest.approx(64e9)
    two_boards = Scenario(hardware="mi325x", model="llama-3.1-70b", precision="fp8", tp=8, method=None).resolve()
    with pytest.raises(ScenarioError, match=r"over 16 GPUs spans more than one 8-GPU scale-up domain of mi325x, "
                                            r"whose scale-out bandwidth is not published.*a decode instance of fewer "
                                            r"GPUs \(it fills the domain alone\)"):
        kv_transfer_s(two_boards, w)
    four = Scenario(hardware="mi325x", model="llama-3.1-70b", precision="fp8", tp=4, method=None).resolve()
    with pytest.raises(ScenarioError, match=r"over 9 GPUs .* a smaller prefill instance \(--prefill-gpus\)"):
        kv_transfer_s(four, Workload(isl=8192, osl=64, pd=True, prefill_gpus=5))


# ---- sampler -------------------------------------------------------------------------------------------------------

@settings(max_examples=10)
@given(B=st.integers(1, 512), q=st.integers(1, 8))
def test_sampler_bytes_grow_with_tokens_and_vocabulary(B, q):
    ops = ops_for("llama-3.1-8b")
    i = ops.names.index("sampler")
    small = replace(model("llama-3.1-8b"), vocab_size=32000)
    j = forward_pass(small).names.index("sampler")
    f = lambda o, k: step_times(o, rates(H100, o), np.array([float(B)]), float(q), 0.0)  # noqa: E731
    assert ops.cb[i].sum() > forward_pass(small).cb[j].sum()
    assert f(ops, i).total_s[0] > 0


# ---- routed experts: the distinct experts a step reads ----------------------------------------------------------

def _only(ops, name):
    """The one op `name` of an OpSet, as an OpSet."""
    i = ops.names.index(name)
    return replace(ops, **{f.name: getattr(ops, f.name)[i:i + 1] for f in fields(ops)
                           if isinstance(getattr(ops, f.name), (np.ndarray, tuple))})


# vLLM PR #24700 (https://github.com/vllm-project/vllm/pull/24700), "Benchmarks on H100", benchmarks/kernels/
# benchmark_moe.py, kernel time of one fused MoE layer (us) against the number of tokens M, random routing:
# Mixtral-8x7B BF16 at TP2 with the tuned config (E=8, N=7168), Qwen3-30B-A3B fp8_w8a8 at TP1 (the PR's configs).
_MOE_M = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256)
_MOE_US = {
    ("mixtral-8x7b", 2, "bf16"): (144.03, 229.28, 351.10, 434.98, 471.49, 478.27, 487.35, 487.85, 483.14, 494.42,
                                  491.39, 536.77),
    ("qwen3-30b-a3b", 1, "fp8"): (40.44, 56.15, 78.10, 118.64, 164.64, 193.48, 210.07, 230.59, 237.26, 244.33,
                                  247.67, 262.38),
}


@pytest.mark.parametrize("key", sorted(_MOE_US))
def test_routed_experts_against_vllm_24700_kernel_times(key):
    # The experts op reads the expected number of distinct experts, E (1 - (1 - k/E)^M), each at the HBM roofline,
    # with the GEMM overlap's unhidden math, plus its five kernels' graph floor: within 10 % of the measured kernel at
    # every M from 1 to 256 (worst 9.3 %: Qwen3 at M = 2, 7.4 % at the roofline max with the floor fitted then),
    # so the rise with M and the saturation (Mixtral from M = 16, Qwen3's 128 experts from M = 64) are the kernel's.
    mid, tp, w = key
    e = _only(ops_for(mid, tp=tp, weights=w), "experts")
    us = step_times(e, rates(H100, e), np.asarray(_MOE_M, float), 1.0, 512.0).total_s / e.repeat[0] * 1e6
    np.testing.assert_allclose(us, _MOE_US[key], rtol=0.10)


# TensorRT-LLM tech blog 24, "MoE as Dense GEMM", section "Per-Rank MoE Module Latency" (https://github.com/NVIDIA/
# TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/blog24_MoE_as_Dense_GEMM.md): one B200, DeepSeek-V3-shaped routed
# MoE (hidden 7168, 256 experts, top-8), NVFP4, one TP8 rank; the TRTLLM-Gen per-expert grouped GEMM column (us),
# router GEMM, top-k, quantisation, FC1 and FC2 included, the flanking all-reduces not.
_DSV3_B200_M = (1, 8, 16, 32, 48, 64, 128, 192, 208, 224, 256, 272, 336, 384)
_DSV3_B200_US = (26.78, 57.68, 86.55, 117.20, 133.54, 141.68, 161.87, 168.23, 169.34, 169.24, 172.17, 176.10, 184.32,
                 186.92)


def test_router_and_experts_against_trtllm_deepseek_moe_on_b200():
    # The target the DeepSeek MTP curve is about, on Blackwell: the router and the routed experts of one TP8 rank,
    # priced with the shipped Blackwell kernel floor and TensorRT-LLM's fusions (its router op then runs the gate GEMM
    # and top-k: the post-attention RMSNorm rides on the all-reduce, outside the measured module), are within 10 % of
    # TensorRT-LLM's measured MoE module at every M from 16 to 384 (-10 % at 336-384), so the growth from a plain
    # step's tokens to a verify's is the kernel's: from M = 64 to 256 (batch 64, verifying 3 drafts, tokens routed at
    # random here; with the routing locality of 2026-12-07 specroof prices such a verify's experts at 200 routed
    # tokens) the module grows 1.215x measured, 1.176x priced. At M = 8 it is priced 5 % slow and at M = 1 40 % slow
    # (pinned where they stand; +12 % and +56 % priced unfused, the norm in the router op): TRTLLM-Gen's module runs
    # fewer kernels than the nine priced (router 2, experts 5, two activation quantisations), each at the fitted ~4.3
    # us floor (flashinfer's
    # trtllm_fused_moe_runner: the router GEMM, two routing kernels, FC1, the activation, FC2 and a finalize, one
    # quantisation). Since the SGLang cookbook's rows joined the fit (2026-12-06, third session) the floor is 5.18 us:
    # from M = 16 up within 7 % (336-384 closer: -7 % where it was -10 %), at M = 8 15 % slow, at M = 1 62 % slow: a
    # per-kernel mean of serving steps, which carry kernels the counts miss (DeepSeek on SGLang's B200 path), priced
    # on a module timed alone, which has none of them. Since the refit after the attention-DP prompt straggler
    # (2026-12-06, fourth session) the floor is 4.86 us: at M = 8 11 % slow, at M = 1 54 % slow, 64 -> 256 1.171x.
    m = model("deepseek-v3")
    fu = FusionRule.of_engine(load_engine("trtllm"), "nvidia", "blackwell").of(m, 8)
    ops = forward_pass(m, Precision(weights="fp4"), Parallelism(8), fusion=fu)
    moe = ops_where(ops, np.isin(np.asarray(ops.names), ("router", "experts")))
    M = np.asarray(_DSV3_B200_M, float)
    us = step_times(moe, rates(B200, moe), M, 1.0, 512.0).total_s / moe.repeat[0] * 1e6
    np.testing.assert_allclose(us[2:], _DSV3_B200_US[2:], rtol=0.10)
    assert 1.10 < us[1] / _DSV3_B200_US[1] < 1.13
    assert 1.45 < us[0] / _DSV3_B200_US[0] < 1.60
    grow = us[M == 256] / us[M == 64]
    assert 1.12 < grow[0] < 1.215


@settings(max_examples=20)
@given(M1=st.integers(1, 512), M2=st.integers(1, 512))
def test_routed_experts_monotone_in_tokens_and_capped_by_all_experts(M1, M2):
    e = _only(ops_for("qwen3-30b-a3b"), "experts")
    lo, hi = sorted((M1, M2))
    M = np.asarray([lo, hi], float)
    a, b = step_times(e, rates(H100, e, mechanisms=False), M, 1.0, 512.0).total_s
    assert b >= a
    dense = replace(e, moe_k=e.moe_e)          # every token through every expert: the dense upper bound
    assert np.all(step_times(dense, rates(H100, dense, mechanisms=False), M, 1.0, 512.0).total_s
                  >= np.array([a, b]) * (1 - 1e-12))
