"""tools/probe_vs_roofline.py against the kernel timings of validation/device/h200_probe.csv (tools/gpu_probe.py on
one H200, 2026-12-04): specroof's price of one layer pass beside PyTorch's time of it, rows nobody fitted."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.hardware import load_hardware
from simulator.prompts import ops_where
from simulator.roofline import rates, step_times

from .helpers import load_tool, ops_for
from .strategies import BATCH, CONTEXT, QUERY, TARGETS, tp_choices

PROBE = Path(__file__).resolve().parents[1] / "validation" / "device" / "h200_probe.csv"
DSV3, LLAMA = "deepseek-ai__DeepSeek-V3", "meta-llama__Llama-3.1-8B-Instruct"


@pytest.fixture(scope="module")
def tool():
    return load_tool("probe_vs_roofline")


@pytest.fixture(scope="module")
def priced(tool):
    rows = tool.load(PROBE)
    return rows, tool.price(rows, "h200-sxm", False)


def _by(rows, t, model):
    return {(r.batch, r.q): t[i] for i, r in enumerate(rows) if r.model == model}


def test_deepseek_verify_over_decode_follows_the_measured_shape(tool, priced):
    # A verify of 3 tokens per sequence against a decode, per layer (one GPU's share at TP8, no all-reduce): measured
    # 1.39 at batch 1, rising to 1.79 at 16 as the 3 B tokens reach experts the B tokens leave idle, 1.19 at 64 once
    # a decode touches most of them. The priced ratio follows it within 0.2 up to batch 64, peaks in the same place,
    # and neither doubles at 64 (what InferenceX's MTP runs at 64 requests imply for the whole step).
    rows, t = priced
    meas = tool.ratios(rows, np.array([r.measured_s for r in rows]))
    mine = tool.ratios(rows, t)
    b3 = sorted(b for (m, b, q) in meas if m == DSV3 and q == 3)
    assert b3 == [1, 4, 16, 32, 64, 128, 192, 256]
    for b in b3:
        if b <= 64:
            assert abs(mine[(DSV3, b, 3)] - meas[(DSV3, b, 3)]) < 0.2, b
    peak = {name: max(b3, key=lambda b, r=r: r[(DSV3, b, 3)]) for name, r in (("meas", meas), ("priced", mine))}
    assert peak["meas"] == peak["priced"] == 16
    assert meas[(DSV3, 64, 3)] < 1.25 and mine[(DSV3, 64, 3)] < 1.25


def test_dense_decode_is_priced_within_five_percent_up_to_batch_64(priced):
    # Llama-3.1-8B, one layer at TP1, bf16, 1024 cached tokens: bandwidth (hbm_fraction, a sourced BabelStream figure)
    # plus the fitted per-kernel cost, against PyTorch's cuBLAS and matmul attention.
    rows, t = priced
    meas = _by(rows, np.array([r.measured_s for r in rows]), LLAMA)
    mine = _by(rows, t, LLAMA)
    for b in (1, 2, 4, 8, 16, 32, 64):
        assert mine[(b, 1)] == pytest.approx(meas[(b, 1)], rel=0.05), b


def test_round_trip_and_report(tool, tmp_path, capsys):
    # Rows timed exactly as the tool prices them read back with no error.
    rows = tool.load(PROBE)
    t = tool.price(rows, "h200-sxm", False)
    path = tmp_path / "probe.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=("probe", "case", "batch", "q", "context", "time_us"))
        w.writeheader()
        w.writerow(dict(probe="floor", case="graph", batch="", q="", context="", time_us=1.0))   # skipped
        w.writerow(dict(probe="gqa", case=f"{LLAMA} layer, sdpa", batch=1, q=1, context=1024, time_us=9.0))
        for r, s in zip(rows, t):
            case = "deepseek-v3-tp8 moe layer" if r.model == DSV3 else f"{r.model} layer, packed"
            w.writerow(dict(probe="layer" if r.model == DSV3 else "gqa", case=case, batch=r.batch, q=r.q,
                            context=r.context, time_us=s * 1e6))
    back = tool.load(path)
    assert len(back) == len(rows)            # the SDPA row and the floor row are left out
    assert np.allclose(tool.price(back, "h200-sxm", False), [r.measured_s for r in back], rtol=1e-9)
    assert tool.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "median +0.0%" in out and "q3/q1" in out and "q8/q1" in out


def test_bad_input_is_one_line_and_exit_2(tool, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("probe,case,batch,q,context,time_us\nlayer,deepseek-v3-tp8 moe layer,one,1,1536,5.0\n")
    assert tool.main([str(bad)]) == 2
    assert f"{bad}:2: a layer row needs integer batch" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("probe,case,batch,q,context,time_us\nfloor,graph,,,,3.0\n")
    assert tool.main([str(empty)]) == 2
    assert "no layer or packed gqa rows" in capsys.readouterr().err
    assert tool.main([str(PROBE), "--gpu", "no-such-gpu"]) == 2
    assert "no-such-gpu" in capsys.readouterr().err
    assert tool.main([str(tmp_path / "missing.csv")]) == 2


@given(mid=st.sampled_from(TARGETS), B=BATCH, q=QUERY, L=CONTEXT, data=st.data())
@settings(max_examples=40)
def test_a_cut_of_the_ops_and_its_rest_price_to_the_whole(mid, B, q, L, data):
    # prompts.ops_where (the tool prices one layer without its collectives and heads, the experts or the attention
    # alone): every op is priced on its own features, so the ops kept and the ops left add up to the whole pass.
    ops = ops_for(mid, tp=max(tp_choices(mid)))
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=len(ops), max_size=len(ops))))
    hw = load_hardware("h200-sxm")
    parts = [step_times(o, rates(hw, o), B, q, L).total_s for o in (ops_where(ops, keep), ops_where(ops, ~keep))
             if len(o)]
    assert sum(parts) == pytest.approx(step_times(ops, rates(hw, ops), B, q, L).total_s, rel=1e-12)
    assert ops_where(ops, keep).names == tuple(n for n, k in zip(ops.names, keep) if k)


MOE_KERNEL = PROBE.parent / "h200_moe_kernel.csv"
MOE_KERNEL_2 = PROBE.parent / "h200_moe_kernel_run2.csv"       # the same on another fresh machine, and fp8 rows


@pytest.mark.parametrize("run", [MOE_KERNEL, MOE_KERNEL_2])
def test_routed_experts_are_priced_as_vllm_fused_moe_runs_them(tool, run):
    # One GPU's routed experts in bf16 under uniform routing, against vLLM's own Triton fused_moe_kernel on the H200
    # (tools/moe_kernel_probe.py; vLLM 0.9.2's tuned H200 config for Qwen3-30B-A3B, its default rule for DeepSeek-V3
    # at TP8, which has no bf16 H200 file), two runs on two machines. Nothing was fitted to these rows.
    timed = tool.load_experts([PROBE, run])
    for case, ms, tol in (("deepseek-v3-tp8", (2, 4, 8, 16, 32, 64, 128, 192, 256), 0.16),
                          ("qwen3-30b-a3b-tp1", (8, 16, 32, 64, 128, 192, 256, 512), 0.18)):
        priced = tool.price_experts(case, np.array(ms, dtype=np.float64), "h200-sxm")
        for m, p in zip(ms, priced):
            assert p == pytest.approx(timed[(case, m, "vLLM fused_moe")], rel=tol), (case, m)
            assert p < 0.85 * timed[(case, m, "torch._grouped_mm")], (case, m)   # PyTorch's is no engine kernel
    # Where they part: one token (the fitted per-kernel cost against about 3 us per kernel measured: Qwen3 +20-30 %;
    # +19.6 % on run 1 after a refit of 2026-12-07 lowered Hopper's fitted cost from 5.14 to 5.11 us; +26.2 % and
    # +20.2 % on runs 1 and 2 at 5.15 us, the next refit's), and DeepSeek at 512 tokens, where vLLM's default rule
    # switches to 64-row blocks (-21 to -25 %).
    one = tool.price_experts("qwen3-30b-a3b-tp1", np.array([1.0]), "h200-sxm")[0]
    assert 1.15 < one / timed[("qwen3-30b-a3b-tp1", 1, "vLLM fused_moe")] < 1.4


ATTENTION = PROBE.parent / "h200_attention_kernel.csv"


def test_vllm_triton_attention_against_the_price_where_it_splits_the_cache_and_where_not(tool):
    # vLLM V1's Triton unified_attention (tools/attention_kernel_probe.py, H200, bf16). A decode batch small enough
    # (tiles x KV heads <= 128) runs its split-KV kernel: measured 19 % under to 61 % over the price at one
    # sequence (a few MB read at 0.2-0.9 TB/s, beside the floor of two kernels; 56 % over at the 5.15 us fitted
    # Hopper cost of before 2026-12-07's routing-locality refit, 5.02 us since: the bound follows the fitted floor,
    # the gap is measured, and a verify's 4.5-20x below is what this test tells apart). A verify (q > 1) runs the
    # unsplit kernel, one program per query tile (16 / (query heads per KV head) tokens) and KV head walking the
    # whole cache: at one sequence 5x its price at 1024 cached tokens, 15-17x at 4096. Not modelled: the price
    # assumes a kernel that spreads the cache over the GPU (FlashAttention-3's and FlashInfer's split-KV). A gap of
    # this backend (vLLM 0.9.2's V1 default on ROCm) measured here on an NVIDIA H200, pinned as measured.
    timed = tool.load_attention(ATTENTION)
    for model in ("meta-llama__Llama-3.1-8B-Instruct", "Qwen__Qwen3-30B-A3B"):
        for ctx in (1024, 4096):
            keys = [(model, 1, q, ctx) for q in (1, 2, 4, 8)]
            priced = tool.price_attention(model, 1.0, np.array([1.0, 2, 4, 8]), float(ctx), "h200-sxm")
            meas = np.array([timed[k] for k in keys])
            assert -0.25 < meas[0] / priced[0] - 1 < 0.65, (model, ctx)
            assert np.all(meas[1:] / priced[1:] > 4.5) and np.all(meas[1:] / priced[1:] < 20), (model, ctx)


FP8_LINEAR = PROBE.parent / "h200_fp8_linear.csv"


def _fp8_rows(probe: str) -> dict[tuple[str, int], float]:
    with open(FP8_LINEAR, newline="") as fh:
        return {(r["case"].split(" ")[1], int(r["m"])): float(r["time_us"]) for r in csv.DictReader(fh)
                if r["probe"] == probe}


def test_an_fp8_gemm_is_preceded_by_an_activation_quant_kernel_of_its_own():
    # vLLM's block-fp8 linear on the H200 (tools/fp8_linear_probe.py, its own Triton kernels, DeepSeek-V3 TP8
    # shapes): the quantisation is one kernel of 1.3-1.9 us at 1-16 tokens under graph replay, and the linear costs
    # the GEMM plus it (within 0.4 us): the kernel units.ACT_QUANT adds to every W8A8 / NVFP4 GEMM. Measured, not
    # fitted; the fitted per-kernel cost that prices it (about 5 us on Hopper) is an engine step's mean per kernel.
    quant, gemm, lin = _fp8_rows("fp8_quant"), _fp8_rows("fp8_gemm"), _fp8_rows("fp8_linear")
    assert len(quant) == 45
    for (name, m), t in quant.items():
        assert lin[(name, m)] == pytest.approx(gemm[(name, m)] + t, abs=0.4), (name, m)
        if m <= 16:
            assert 1.2 < t < 1.9, (name, m)
    # At decode, fp8 buys no time on these TP8 shards: at K <= 2048 the linears take 1.1-1.8x the bf16 GEMM, at
    # K = 7168 (no split-K: 4-17 programs on 132 SMs) 3.2-5.8x, the untuned q_a + kv_a over 4x.
    bf16 = _fp8_rows("bf16_gemm")
    for name in ("o_proj", "q_b", "shared_down"):
        assert all(1.0 < lin[(name, m)] / bf16[(name, m)] < 2.0 for m in (1, 4, 16, 64)), name
    assert all(lin[("q_a+kv_a", m)] / bf16[("q_a+kv_a", m)] > 4 for m in (1, 4, 16, 64))
    assert all(3 < lin[("shared_up", m)] / bf16[("shared_up", m)] < 4 for m in (1, 4, 16, 64))


MOE_TP = PROBE.parent / "h200_moe_kernel_qwen3_tp.csv"


def test_qwen3_moe_shards_of_the_user_reports_are_priced_high_at_one_token(tool):
    # vLLM's fused_moe on the H200 at one GPU's share of Qwen3-30B-A3B's experts at TP2 and TP4 (the layouts of the
    # Qwen3-30B-A3B EAGLE-3 user reports), vLLM's tuned H200 configs (E=128, N=384 / 192), bf16. From 4 tokens up the
    # price is within 21 % (the refit of 2026-12-06 moved the Hopper floor from 5.29 to 5.34 us, counting fewer kernels
    # in TensorRT-LLM's and SGLang's DeepSeek steps: TP2 16.0 % at 4 tokens, was 15.8 %; TP4 20.4 % at 16, was 19.6 %;
    # the bounds moved with it, 0.16 -> 0.17 and 0.20 -> 0.21; the refit of 2026-12-08 without those reports moved it
    # from 4.99 to 5.45 us: TP2 17.0 % at 4 tokens, TP4 21.2 % at 16, bound 0.21 -> 0.22); at one token, the plain
    # decode of those reports, it is 36 % (TP2) and 65 % (TP4) over (32 % and 59 % at 5.34 us): five kernels at the
    # fitted mean against a call of four kernels that costs 19.4 us with 19 MB of weights (about 3.7 us per kernel
    # beyond its bytes). Over 48 layers that is 0.4-0.5 ms of the 4.5 ms step the reports measure, most of their plain
    # steps' 13-22 % over-price. Not fitted; reported.
    timed = tool.load_experts([MOE_TP])
    for case, at_one, tol in (("qwen3-30b-a3b-tp2", (1.2, 1.45), 0.17), ("qwen3-30b-a3b-tp4", (1.45, 1.75), 0.22)):
        ms = (1, 4, 8, 16, 32, 64, 128, 192, 256, 512)
        priced = tool.price_experts(case, np.array(ms, dtype=np.float64), "h200-sxm")
        meas = np.array([timed[(case, m, "vLLM fused_moe")] for m in ms])
        assert at_one[0] < priced[0] / meas[0] < at_one[1], case
        np.testing.assert_allclose(priced[1:], meas[1:], rtol=tol, err_msg=case)


@pytest.mark.parametrize("more, shows, bad, says", [
    (MOE_KERNEL_2, ("routed experts alone", "torch._grouped_mm", "deepseek-v3-tp8 fp8", "vLLM fp8 GEMMs alone"),
     "probe,case,m,time_us\nfused_moe,qwen3-30b-a3b-tp1 E128 top8 2048x768,x,5.0\n", "an expert row needs integer m"),
    (ATTENTION, ("attention alone", "4096 cached", "1024 cached"),
     "probe,case,batch,q,context,time_us\nunified_attention,x h32,1,two,1024,5.0\n",
     "an attention row needs integer batch"),
    (FP8_LINEAR, ("DeepSeek-V3 TP8 projections", "o_proj: M", "shared_down: M"),
     "probe,case,m,time_us\nfp8_linear,deepseek-v3-tp8 o_proj 2048x7168,one,5.0\n", "a linear row needs integer m"),
])
def test_kernel_rows_report_and_bad_rows(tool, tmp_path, capsys, more, shows, bad, says):
    # Each kind of kernel row prints its section; a malformed row is one line naming the file and line, exit 2.
    assert tool.main([str(PROBE), str(more)]) == 0
    out = capsys.readouterr().out
    assert all(x in out for x in shows), shows
    path = tmp_path / "bad.csv"
    path.write_text(bad)
    assert tool.main([str(PROBE), str(path)]) == 2
    assert f"{path}:2: {says}" in capsys.readouterr().err
