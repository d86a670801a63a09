"""Kernels an engine fuses (`fusion.Fusion`, engine profile [kernels]): TensorRT-LLM's RoPE + KV write inside
attention, FP8 quantisation in the producing kernel, all-reduce + residual + RMSNorm (+ quantisation) in one kernel."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.engine import load_engine, read_profile
from simulator.errors import SpecError
from simulator.fusion import FUSIONS, Fusion, FusionRule, without
from simulator.hardware import load_hardware
from simulator.pricing import base_step
from simulator.roofline import _coll_reference, rates, step_times
from simulator.scenario import Scenario
from simulator.validation import _row_engine
from simulator.workload import F_ONE, FAM, Parallelism, Precision, forward_pass

from .helpers import model

ALL = Fusion(True, True, True)
H200 = load_hardware("h200-sxm")


def _per_layer(ops, n_layers):
    """Kernels (counted and quantisation) per layer of the non-head ops, the collectives included."""
    heads = {"embedding", "embed_allreduce", "lm_head", "logits_gather", "sampler"}
    keep = [i for i, n in enumerate(ops.names) if n not in heads]
    return float(sum(ops.repeat[i] * (ops.kernels[i] + ops.quant[i]) for i in keep)) / n_layers


@pytest.mark.parametrize("tp, weights, kv, unfused, fused", [
    (1, "fp8", "fp8", 14, 10),     # 10 + 4 quantisations -> norm, quant, QKV, attention, o_proj, norm, quant,
    (8, "fp8", "fp8", 16, 8),      # gate_up, SiLU (+quant), down; at TP8 the norms and quants ride on the all-reduces
    (8, "bf16", "bf16", 12, 8)])
def test_llama_70b_kernel_counts_per_layer_match_the_trtllm_audit(tp, weights, kv, unfused, fused):
    # The counts of engine_profiles/trtllm.toml [kernels] fused (read in TensorRT-LLM's PyTorch backend).
    m = model("llama-3.3-70b")
    p, par = Precision(weights=weights, kv=kv), Parallelism(tp)
    eng = load_engine("trtllm")
    fu = FusionRule.of_engine(eng, "nvidia", "hopper").of(m, tp)
    assert _per_layer(forward_pass(m, p, par), m.n_layers) == unfused
    assert _per_layer(forward_pass(m, p, par, fusion=fu), m.n_layers) == fused


def test_no_fusion_is_the_old_op_table():
    m, p, par = model("llama-3.1-70b"), Precision(weights="fp8"), Parallelism(8)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=Fusion())
    for f in ("kernels", "quant", "cf", "cb", "cc"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


@settings(max_examples=25)
@given(mid=st.sampled_from(["llama-3.1-8b", "llama-3.3-70b", "qwen3-8b", "qwen3-30b-a3b", "deepseek-v3",
                            "llama-4-scout"]),
       tp=st.sampled_from([1, 2, 8]), w=st.sampled_from(["bf16", "fp8"]), kv=st.sampled_from(["bf16", "fp8"]),
       flags=st.tuples(*[st.booleans()] * 5), B=st.integers(1, 256), q=st.integers(1, 5))
def test_a_fusion_never_adds_a_kernel_nor_time(mid, tp, w, kv, flags, B, q):
    # Monotone: turning a fusion on removes kernels (never adds one) and never lengthens the step; off is the roofline
    # of vLLM's path (above). (mla_bf16_bmm, which also reads BF16 weights, has its own test below.)
    m = model(mid)
    if m.n_heads % tp or (m.is_moe and tp > 2):
        return
    p, par = Precision(weights=w, kv=kv), Parallelism(tp)
    base = forward_pass(m, p, par)
    fu = Fusion(*flags)
    ops = forward_pass(m, p, par, fusion=fu)
    assert np.all(ops.kernels <= base.kernels) and np.all(ops.quant <= base.quant)
    t = [step_times(o, rates(H200, o), np.asarray([B], float), float(q), 2048.0).total_s[0] for o in (base, ops)]
    assert t[1] <= t[0] * (1 + 1e-12)
    # the rule gives a GQA target only the GQA fusions and an MLA target only the MLA ones
    full = FusionRule(tuple(FUSIONS), 0).of(m, tp)
    assert not (full.shared_expert or full.mla_a_quant or full.mla_bf16_bmm) if not m.is_mla else \
        not (full.rope_kv or full.act_quant or full.norm_allreduce)


def test_fusion_of_applies_trtllm_s_conditions():
    names = tuple(FUSIONS)
    assert FusionRule(names, 4096).of(model("llama-3.1-8b"), 8) == Fusion(True, True, False)    # hidden 4096: no AR
    assert FusionRule(names, 4096).of(model("llama-3.3-70b"), 1) == Fusion(True, True, False)   # no TP: no AR
    assert FusionRule(names, 4096).of(model("llama-3.3-70b"), 8) == ALL
    assert FusionRule(names, 0).of(model("qwen3-30b-a3b"), 4) == Fusion(True, True, False)      # MoE: no AR fusion
    gqa = ("rope_kv_in_attention", "act_quant_in_producer", "allreduce_norm_llama")
    assert FusionRule(gqa, 0).of(model("deepseek-v3"), 8) == Fusion()                           # MLA: none of them
    assert FusionRule((), 0).of(model("llama-3.3-70b"), 8) == Fusion()
    # Review: TensorRT-LLM's Qwen3 decoder layer and its EAGLE-3 head run their norms apart (the Llama layer only
    # fuses them into the all-reduce).
    assert FusionRule(names, 4096).of(model("qwen3-32b"), 4) == Fusion(True, True, False)
    assert FusionRule(names, 4096).of(model("eagle3-kimi-k2"), 8) == Fusion(True, True, False)


@pytest.mark.parametrize("mid, rope_kept", [("qwen3-8b", True), ("qwen3-30b-a3b", True), ("llama-3.1-8b", False)])
def test_a_target_with_a_qk_norm_keeps_its_rope_kernel(mid, rope_kept):
    # TensorRT-LLM runs RoPE apart from attention where q and k are normed (Llama4Attention: rope_fusion=not
    # use_qk_norm; Qwen3 fuses the norm with RoPE): only the KV write moves into attention. (Llama-4's weightless L2
    # q/k norm is not read into the model shape: its RoPE is counted fused, a known gap.)
    m = model(mid)
    a, b = forward_pass(m, Precision(), Parallelism(1)), forward_pass(m, Precision(), Parallelism(1),
                                                                   fusion=Fusion(rope_kv=True))
    i, j = a.names.index("qkv_proj"), a.names.index("attention")
    assert a.kernels[i] - b.kernels[i] == (0 if rope_kept else 1) and a.kernels[j] - b.kernels[j] == 1


def test_trtllm_70b_fp8_step_against_nvidia_s_measurement():
    # NVIDIA's Llama-3.3-70B blog (TensorRT-LLM, FP8, one H200, batch 1): 51.14 tokens/s without speculation, a
    # 19.55 ms step (validation/BLIND_TEST.md; not fitted). Unfused the step is priced 22.28 ms (+14 %); with the
    # engine's fusions 21.33 ms (+9 %).
    s = Scenario(hardware="h200-sxm", model="llama-3.3-70b", precision="fp8", method=None, batch=(1,), context=1024)
    fused = s.replace(engine="trtllm").resolve()
    plain = s.replace(engine=replace(load_engine("trtllm"), fused=())).resolve()
    t_f, t_p = (base_step(d, np.asarray([1.0]), 1024.0)[0][0] for d in (fused, plain))
    assert t_f < t_p and abs(t_f / 0.01955 - 1) < abs(t_p / 0.01955 - 1) and abs(t_f / 0.01955 - 1) < 0.10


def test_a_profile_names_only_known_fusions(tmp_path):
    text = (Path(__file__).resolve().parents[1] / "engine_profiles" / "trtllm.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('"rope_kv_in_attention", ', '"rope_in_gemm", '))
    with pytest.raises(SpecError, match=re.escape("[kernels] fused: value = ['rope_in_gemm'")):
        read_profile(bad)
    month = tmp_path / "month.toml"
    month.write_text(text.replace('allreduce_norm_llama = "2025-07"', 'allreduce_norm_llama = "July"'))
    with pytest.raises(SpecError, match=r"\[kernels\] fused_from: allreduce_norm_llama = 'July'; expected a month"):
        read_profile(month)


@pytest.mark.parametrize("table, err", [
    ('fused_from = { value = { rope_in_gemm = "2025-07" }, source = "https://x.org" }',
     r"fused_from: rope_in_gemm = '2025-07'; 'rope_in_gemm' is not in \[kernels\] fused"),
    ('fused_on = { value = { act_quant_in_producer = ["Blackwell"] }, source = "https://x.org" }',
     r"fused_on: act_quant_in_producer = \['Blackwell'\]; expected a list of chip generations from ada, "),
    ('fused_on = { value = { act_quant_in_producer = [] }, source = "https://x.org" }',
     r"fused_on: act_quant_in_producer = \[\]; expected a list of chip generations"),
    ('fused_on = { value = {}, source = "https://x.org" }', r"fused_on: value = \{\}; expected \{ name = ... \}"),
    ('fused_on = { value = { act_quant_in_producer = ["hopper"] }, source = "see PR" }',
     r"fused_on: source = 'see PR', expected an http\(s\) URL"),
    ('fused_on = { value = { act_quant_in_producer = ["hopper"] }, source = "https://x.org", why = 1 }',
     r"fused_on: unknown field\(s\) \['why'\]")])
def test_a_fusion_table_that_names_a_fusion_the_profile_does_not_run_or_a_bad_value_is_refused(tmp_path, table, err):
    text = (Path(__file__).resolve().parents[1] / "engine_profiles" / "trtllm.toml").read_text()
    bad = tmp_path / "bad.toml"
    text = re.sub(r"^fused_(from|on) = .*\n", "", text, flags=re.M)    # the profile's own tables, replaced
    bad.write_text(text.replace("[kernels]\n", "[kernels]\n" + table + "\n"))
    with pytest.raises(SpecError, match=r"bad\.toml: \[kernels\] " + err):
        read_profile(bad)


def test_a_fusion_scoped_to_chip_generations_applies_on_those_only():
    eng = replace(load_engine("trtllm"), fused_on=(("act_quant_in_producer", ("blackwell",)),))
    on_b200, on_h200 = FusionRule.of_engine(eng, "nvidia", "blackwell"), FusionRule.of_engine(eng, "nvidia", "hopper")
    assert "act_quant_in_producer" in on_b200.names and "act_quant_in_producer" not in on_h200.names
    assert set(on_b200.names) - set(on_h200.names) == {"act_quant_in_producer"}
    assert FusionRule.of_engine(eng, "nvidia", "").names == on_h200.names     # no generation named: not scoped ones


def test_a_row_dated_before_the_all_reduce_fusion_is_priced_without_it():
    eng = load_engine("trtllm")
    old = _row_engine({"row_id": "X", "engine_date": "2025-05"}, eng)
    new = _row_engine({"row_id": "X", "engine_date": "2025-10"}, eng)
    assert "allreduce_norm_llama" not in old.fused and set(old.fused) == set(eng.fused) - {"allreduce_norm_llama"}
    assert new.fused == eng.fused
    assert load_engine("vllm").fused == ()
    assert set(load_engine("sglang").fused) == {"shared_expert_in_routed", "mla_one_a_quant", "mla_bf16_absorbed_bmm",
                                                "allreduce_norm_mla"}


def test_the_collectives_keep_their_bytes_when_the_norm_rides_on_them():
    m, p, par = model("llama-3.3-70b"), Precision(weights="fp8"), Parallelism(8)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=ALL)
    coll = a.family == FAM["collective"]
    np.testing.assert_array_equal(a.cc[coll], b.cc[coll])
    np.testing.assert_array_equal(a.kernels[coll], b.kernels[coll])


SGLANG_MLA = Fusion(shared_expert=True, mla_a_quant=True, mla_bf16_bmm=True)     # as on ROCm: no all-reduce fusion
SGLANG_MLA_CUDA = replace(SGLANG_MLA, ar_norm=True, ar_norm_next=True)


def test_sglang_s_mla_fusions_apply_to_deepseek_architecture_targets_only():
    rule = FusionRule.of_engine(load_engine("sglang"), "nvidia", "hopper")
    for mid in ("deepseek-v3", "deepseek-r1", "kimi-k2"):      # Kimi-K2 (384 experts): beside, on a second stream
        assert rule.of(model(mid), 8) == SGLANG_MLA_CUDA
    for mid in ("llama-3.1-8b", "qwen3-30b-a3b", "llama-4-scout", "gpt-oss-120b"):    # GQA, with or without experts
        assert rule.of(model(mid), 8) == Fusion()
    # Review: on ROCm (no second stream) only the fused case hides the shared expert (256 routed + 1 shared experts,
    # SGLang's determine_num_fused_shared_experts); Kimi-K2's runs serially there.
    amd = FusionRule.of_engine(load_engine("sglang"), "amd", "cdna3")
    assert amd.of(model("deepseek-v3"), 8) == SGLANG_MLA
    assert amd.of(model("kimi-k2"), 8) == replace(SGLANG_MLA, shared_expert=False)
    # The FlashInfer all-reduce + norm fusion: CUDA devices only (fused_on hopper, blackwell), under TP without DP
    for arch, on in (("hopper", True), ("blackwell", True), ("cdna3", False), ("cdna4", False)):
        vendor = "amd" if arch.startswith("cdna") else "nvidia"
        assert FusionRule.of_engine(load_engine("sglang"), vendor, arch).of(model("deepseek-v3"), 8).ar_norm == on
    # Review: without a q LoRA, q_proj and kv_a_proj are two GEMMs with two quantisations
    no_lora = replace(model("deepseek-v3"), q_lora_rank=0)
    assert rule.of(no_lora, 8) == replace(SGLANG_MLA_CUDA, mla_a_quant=False)


def test_deepseek_kernel_counts_per_moe_layer_match_the_sglang_audit():
    # engine_profiles/sglang.toml [kernels] fused (read in SGLang's wheels v0.5.0rc2-v0.5.10): per MoE layer the
    # shared expert runs inside (or beside) the routed kernels (3 kernels and 2 quantisations fewer), q_a / kv_a
    # share one input quantisation, W_UK / W_UV run in BF16 unquantised (two quantisations, one per bmm input, fewer):
    # 24 + 10 -> 21 + 5 per MoE layer.
    m, p, par = model("deepseek-v3"), Precision(weights="fp8"), Parallelism(8)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=SGLANG_MLA)
    nm = m.n_moe_layers
    assert float(a.repeat @ a.kernels - b.repeat @ b.kernels) == 3 * nm
    assert float(a.repeat @ a.quant - b.repeat @ b.quant) == 2 * nm + 3 * m.n_layers
    i = b.names.index("kv_b_absorbed")
    assert b.dtype[i] == "bf16" and a.dtype[i] == "fp8"


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_bf16_absorbed_bmm_trades_a_quantisation_for_its_weight_bytes(tp):
    # mla_bf16_bmm removes the two quantisation kernels of a layer's FP8 bmm inputs (q_nope for W_UK, the latent
    # attention output for W_UV) and reads W_UK / W_UV at 2 bytes a weight, not 1 (so it
    # can lengthen a step where the bytes outweigh the kernel): that op changes, no other op of the table does.
    m, p, par = model("deepseek-v3"), Precision(weights="fp8"), Parallelism(tp)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=Fusion(mla_bf16_bmm=True))
    i = a.names.index("kv_b_absorbed")
    assert a.quant[i] == 2 and b.quant[i] == 0 and b.kernels[i] == a.kernels[i]
    hr = m.n_heads / tp
    w = hr * (m.qk_nope_head_dim + m.v_head_dim) * m.kv_lora_rank            # W_UK and W_UV per rank, elements
    assert b.cb[i, F_ONE] - a.cb[i, F_ONE] == w                              # 2 bytes a weight where 1 was read
    others = [j for j in range(len(a)) if j != i]
    for f in ("kernels", "quant", "cf", "cb", "cc"):
        np.testing.assert_array_equal(getattr(a, f)[others], getattr(b, f)[others])


def test_the_mtp_drafter_takes_the_post_attention_norm_fusion_but_not_the_input_one():
    # Review: an MTP module's input norm follows its eh_proj, not an all-reduce (TensorRT-LLM's DeepseekV3MTP calls
    # input_layernorm apart; SGLang's NextN has no residual there): its drafter fuses the post-attention norm only.
    s = Scenario(hardware="h200-sxm", model="deepseek-v3", tp=8, precision="fp8", method="mtp", k=3, batch=(1,),
                 engine="trtllm")
    d = s.resolve().drafter.ops_all
    no_ar = s.replace(engine=without(load_engine("trtllm"), {"allreduce_norm_mla"})).resolve().drafter.ops_all
    assert float(no_ar.repeat @ no_ar.kernels - d.repeat @ d.kernels) == 1.0
    assert d.kernels[d.names.index("q_a_proj")] == 2 and d.kernels[d.names.index("router")] == 2


def test_the_mtp_drafter_takes_sglang_s_fusions():
    s = Scenario(hardware="h200-sxm", model="deepseek-v3", tp=8, precision="fp8", method="mtp", k=3, batch=(1,))
    fused, plain = s.resolve(), s.replace(engine=replace(load_engine("sglang"), fused=())).resolve()
    d_f, d_p = fused.drafter.ops_all, plain.drafter.ops_all
    assert d_f.repeat @ d_f.kernels < d_p.repeat @ d_p.kernels
    assert fused.tops.repeat @ fused.tops.quant < plain.tops.repeat @ plain.tops.quant


def test_sglang_deepseek_step_against_inferencex():
    # InferenceX, SGLang v0.5.8.post1 (lmsysorg image), DeepSeek-R1 FP8 on 8x H200 at TP8, one request of 1024 / 1024
    # tokens: 8.923 ms TPOT (validation row V700). Counted unfused the step is priced 10.36 ms (+16.1 %) at the shipped
    # per-kernel cost (5.45 us on Hopper since the refit of 2026-12-08 without the Qwen3-30B-A3B user reports; 9.80 ms,
    # +9.8 %, at the 5.02 us after 2026-12-07's routing locality; 10.30 ms, +15.4 %, at 5.15 us); with SGLang's fusions
    # 8.34 ms (-6.5 %; 7.91 ms, -11.4 %, at 5.02 us; 8.04 ms, -9.9 %, at 5.15 us), the fused count the closer one (at
    # 5.02 us the unfused count was closer by 1.6 points, which says the one fitted per-kernel mean, not the kernel
    # count read from SGLang's code, moved); 8.30 ms, -7.0 %, before the refit that followed the
    # attention-DP prompt straggler of 2026-12-06 lowered the Hopper per-kernel cost from 5.41 to 5.15 us, the
    # TensorRT-LLM max-throughput rows no longer pulling it up; 8.23 ms, -7.7 %, before the refit that followed
    # Hopper's all-to-all latency of 2026-12-06 raised the Hopper per-kernel cost from 5.34 to 5.41 us, the a2a's 66 us
    # having stood in for part of it on the EP rows). Pinned both ways where it stands: it was 8.80 ms (-1.4 %)
    # before the all-reduce + RMSNorm fusion was counted (2026-12-06; two kernels a layer, on in v0.5.7+ on H200 and
    # seen in InferenceX's H200 trace); the audit's one kernel a MoE layer still uncounted on this build (Triton's
    # second align kernel, count_and_sort_expert_tokens, 58 a step in that trace) is 0.31 ms of the 0.70 ms.
    s = Scenario(hardware="h200-sxm", model="deepseek-r1", tp=8, precision="fp8", method=None, batch=(1,),
                 context=1536)
    fused = s.resolve()
    plain = s.replace(engine=replace(load_engine("sglang"), fused=())).resolve()
    t_f, t_p = (base_step(d, np.asarray([1.0]), 1536.0)[0][0] for d in (fused, plain))
    assert t_f < t_p and abs(t_f / 0.008923 - 1) < abs(t_p / 0.008923 - 1)    # the order at 5.45 us, pinned
    assert -0.075 < t_f / 0.008923 - 1 < -0.055 and 0.15 < t_p / 0.008923 - 1 < 0.17


@pytest.mark.parametrize("arch, bf16_bmm", [("hopper", False), ("blackwell", True)])
def test_deepseek_kernel_counts_under_trtllm_match_its_audit(arch, bf16_bmm):
    # engine_profiles/trtllm.toml [kernels] (read in TensorRT-LLM's PyTorch backend, audits/): the shared experts on an
    # aux stream (3 kernels + 2 quantisations per MoE layer off the serial path), one q_a / kv_a quantisation, the
    # input and post-attention norms inside the two all-reduces (2 kernels per MoE layer; a dense layer keeps its post-
    # attention norm: TensorRT-LLM fuses a dense layer's only with NVFP4), and on Blackwell only the BF16
    # W_UK / W_UV bmm (two quantisations per layer): 24 + 10 -> 19 + 7 per MoE layer on Hopper (TensorRT-LLM's SM90
    # fp8_block_scaling_bmm_out quantises each bmm's input), 19 + 5 on Blackwell.
    m, p, par = model("deepseek-v3"), Precision(weights="fp8"), Parallelism(8)
    fu = FusionRule.of_engine(load_engine("trtllm"), "nvidia", arch).of(m, 8)
    assert fu == Fusion(shared_expert=True, mla_a_quant=True, mla_bf16_bmm=bf16_bmm, ar_norm=True, ar_norm_next=True)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=fu)
    nm, L = m.n_moe_layers, m.n_layers
    assert float(a.repeat @ a.kernels - b.repeat @ b.kernels) == 4 * nm + L    # dense layers keep their norm
    assert float(a.repeat @ a.quant - b.repeat @ b.quant) == 2 * nm + L + bf16_bmm * 2 * L


def test_the_mla_all_reduce_norm_fusion_needs_tp_within_a_node_without_attention_dp():
    rule, m = FusionRule(("allreduce_norm_mla",)), model("deepseek-v3")
    assert rule.of(m, 8).ar_norm and rule.of(m, 2).ar_norm and rule.of(m, 8, domain=8).ar_norm_next
    assert not rule.of(m, 1).ar_norm                        # no all-reduce to ride on
    assert not rule.of(m, 8, dp=2).ar_norm                  # attention DP: enable_fusion &= not enable_attention_dp
    assert not rule.of(m, 16, domain=8).ar_norm             # review: TP across nodes (SGLang: nnodes == 1 only)
    assert not rule.of(model("llama-3.3-70b"), 8).ar_norm   # MLA targets only (Llama has its own, with the quant)
    # every kernel it removes is a norm: the op table's bytes and FLOPs are unchanged
    p, par = Precision(weights="fp8"), Parallelism(8)
    a, b = forward_pass(m, p, par), forward_pass(m, p, par, fusion=Fusion(ar_norm=True, ar_norm_next=True))
    for f in ("quant", "cf", "cb", "cc"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    assert float(a.repeat @ a.kernels - b.repeat @ b.kernels) == m.n_moe_layers + m.n_layers


def test_a_pcie_only_device_runs_no_allreduce_fusion_and_prices_the_nccl_ring():
    """Review (2026-12-07): over PCIe, vLLM turns its custom all-reduce off beyond two GPUs and TensorRT-LLM's fused
    all-reduce + norm needs NVLink P2P, so a device with p2p_allreduce = 0 prices NCCL's ring, lat + 2 (n-1)/n S / bw,
    with the all-reduce fusions off; the same device with the flag on prices them as before."""
    pcie = load_hardware("l40s")
    p2p = replace(pcie, p2p_allreduce=True)
    eng, m = load_engine("trtllm"), model("llama-3.3-70b")
    assert FusionRule.of_engine(eng, "nvidia", "ada", True).of(m, 4).norm_allreduce
    assert not FusionRule.of_engine(eng, "nvidia", "ada", False).of(m, 4).norm_allreduce
    sglang = FusionRule.of_engine(load_engine("sglang"), "nvidia", "hopper", False)
    assert not sglang.of(model("deepseek-v3"), 8).ar_norm
    ops = forward_pass(m, Precision(weights="bf16"), Parallelism(4))
    assert rates(p2p, ops).one_shot and not rates(pcie, ops).one_shot
    i = next(j for j, name in enumerate(ops.names) if name == "allreduce_attn")
    n, lat, bw = 4.0, pcie.allreduce_latency_s, rates(pcie, ops).bw_op[i]
    for B in (1.0, 64.0):
        S = B * m.d_model * 2.0                                      # one token's bf16 hidden state per sequence
        ring = lat + 2.0 * (n - 1.0) / n * S / bw
        assert _coll_reference(1, n, np.array([S]), lat, bw, False)[0] == pytest.approx(ring)
        one_shot = min(lat + (n - 1.0) * S / bw, 2.0 * lat + 2.0 * (n - 1.0) / n * S / bw)
        assert _coll_reference(1, n, np.array([S]), lat, bw, True)[0] == pytest.approx(one_shot)


def test_the_p2p_flag_reaches_the_op_sets_a_deployment_prices():
    """Review (2026-12-07): the flag must reach target_ops (and same_ops, which decides whether a deployment is built
    again for another engine), not only FusionRule when passed by hand: TensorRT-LLM's Llama-3.3-70B at TP4 on an
    L40S runs more kernels than on the same device with peer-to-peer all-reduce (its all-reduce + norm fusion off)."""
    from simulator.target_ops import same_ops, target_ops

    pcie = load_hardware("l40s")
    p2p = replace(pcie, p2p_allreduce=True)
    eng, m, p, par = load_engine("trtllm"), model("llama-3.3-70b"), Precision(weights="fp8"), Parallelism(4)
    kernels = {h.p2p_allreduce: float(np.sum(target_ops(eng, h, m, p, par, "all").kernels
                                             * target_ops(eng, h, m, p, par, "all").repeat)) for h in (pcie, p2p)}
    assert kernels[False] > kernels[True]
    assert same_ops(eng, eng, pcie) and not same_ops(eng, without(eng, {"allreduce_norm_llama"}), p2p)
    assert same_ops(eng, without(eng, {"allreduce_norm_llama"}), pcie)       # off on PCIe anyway: the same op sets
