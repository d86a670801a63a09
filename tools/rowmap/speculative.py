"""Rule set 4: validation/sources/speculative.csv."""

from __future__ import annotations

import re

from .common import (
    IX_LENGTH_RATIO,
    IX_LENGTHS,
    MT_BENCH_CONTEXT,
    VLLM_SYNC,
    Row,
    Skip,
    d_skip,
    lead_int,
    note,
    sglang_tree,
)

# ----------------------------------------------------------------------------------------------------------------
# 4. speculative.csv.
# ----------------------------------------------------------------------------------------------------------------

# GPUStack Qwen3-8B on H100 (docs/performance-lab/qwen3-8b/h100-latency.md), SGLang v0.5.3.post3 EAGLE-3 runs: the
# published (mean ITL, mean TPOT) in ms of each benchmark block, keyed by (block: Section 5's config sweep or the
# 'Other Benchmark Cases' concurrency sweep, drafter, steps, topk, draft tokens, concurrency). vLLM's bench serve
# times each streamed chunk (ITL) and each request's tokens after the first (TPOT); SGLang streams the tokens one
# speculative step accepts as one chunk, so mean ITL / mean TPOT is the tokens per step (tau), and mean ITL the step
# time, both from the same published run.
_TW, _AS = "Tengyunw/qwen3_8b_eagle3", "AngelSlim/Qwen3-8B_eagle3"
GPUSTACK_ITL_TPOT_MS = {
    ("sweep", _TW, 4, 4, 16, 4): (11.05, 3.75), ("sweep", _AS, 4, 4, 16, 4): (10.49, 4.45),
    ("sweep", _TW, 2, 4, 16, 4): (9.82, 3.98), ("sweep", _TW, 8, 4, 16, 4): (13.94, 4.27),
    ("sweep", _TW, 4, 8, 16, 4): (11.24, 3.62), ("sweep", _TW, 4, 4, 32, 4): (11.90, 3.54),
    ("sweep", _TW, 4, 4, 8, 4): (10.71, 3.71), ("sweep", _TW, 2, 1, 4, 4): (8.78, 4.37),
    ("other", _TW, 4, 4, 16, 1): (8.74, 2.67), ("other", _TW, 4, 4, 16, 2): (9.69, 3.04),
    ("other", _TW, 4, 4, 16, 4): (10.54, 3.34), ("other", _TW, 4, 4, 16, 8): (13.06, 4.82),
}


def gpustack_tau(r: Row, out: Row) -> str:
    """tau = mean ITL / mean TPOT of the row's published run (GPUSTACK_ITL_TPOT_MS), or "" when none is published."""
    block = "other" if "Other Benchmark" in r["locator"] else "sweep"
    key = (block, r["draft"], int(out["k"]), int(r["tree_branching"] or 1), int(r["tree_tokens"] or 0),
           int(out["concurrency"]))
    if key not in GPUSTACK_ITL_TPOT_MS:
        return ""
    itl, tpot = GPUSTACK_ITL_TPOT_MS[key]
    return f"{itl / tpot:.3f}"


def s_gpustack_qwen3(r: Row, out: Row) -> None:
    if out["method"] and not out["k"]:
        raise Skip("SGLang automatic speculative parameters: steps / topk / draft tokens not stated")
    if r["engine"] == "vllm" and out["concurrency"] == "4" and "Other Benchmark" in r["locator"]:
        raise Skip("duplicate: the vLLM bf16 concurrency-4 TPOT (7.38 ms) is also in Section 1 (mapped from there)")
    out["precision"] = out["precision"].split(" (")[0]
    out["isl"], out["osl"] = lead_int(out["isl"]), lead_int(out["osl"])
    tau = gpustack_tau(r, out) if out["method"] else ""
    sglang_tree(out)
    note(out, "ShareGPT, 100 prompts: isl / osl are the mean lengths (233 / 221); mean TPOT excludes the first token")
    if tau:
        out["tau"], out["tau_k"] = tau, out["k"]
        note(out, f"tau {tau} = the run's published mean ITL / mean TPOT (derived: vLLM bench serve times one "
                  "streamed chunk per SGLang speculative step)")
    elif out["method"]:
        note(out, "tau not reported (method default acceptance)")
    if out["metric"] == "speedup":
        note(out, "speedup = SGLang FP8 plain mean TPOT 5.65 ms / spec mean TPOT, same engine, precision and "
                  "concurrency (derived)")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, "vLLM v0.11.0: " + VLLM_SYNC)


def s_qwen3_moe_user(r: Row, out: Row) -> None:
    angel = r["source_id"].startswith("angelslim")
    label = "AngelSlim #163" if angel else "SpecForge #339"
    out["source"] = f"{label}: Qwen3-30B-A3B EAGLE3 (SGLang, H100 TP{out['tp']})"
    out["concurrency"] = ""
    for c in ("tau_k", "k"):
        out[c] = lead_int(out[c])
    # SpecForge's bench_eagle3 (commit 3e0cda08, 2025-12-01) runs MT-Bench's two-turn conversations through
    # run_batch(num_threads=batch) with at most 2048 new tokens a turn and reports total output tokens over the run's
    # wall time. SpecForge #339 names --benchmark-list mtbench:20 (20 conversations). AngelSlim #163's table gives the
    # run's latency beside its throughput, and their product is 174-178k output tokens in every configuration: more
    # than 20 conversations can produce (20 x 2 x 2048 = 81,920), so that run used more; the script's default and
    # MT-Bench's whole set is 80 (a mean answer of about 1,090 tokens).
    n = 80 if angel else 20
    b = int(out["batch"])
    if b > 8:
        raise Skip("bench_eagle3 ran 20 MT-bench prompts: a nominal batch above 8 is at most 20 requests with a long "
                   "shrinking tail, not a batch of that size" if not angel else
                   "plain throughput plateaus above batch 8 (1128 and 1238 tok/s at 32 and 64; the same harness on "
                   "TP2 1013, 1078 and 1074 at 16, 32 and 64): the running decode batch is not the nominal one "
                   "(rule 2)")
    if out["metric"] != "speedup" and b > 1:
        raise Skip(f"total throughput of {n} requests with a shrinking tail: not a per-user rate at the nominal batch "
                   "(only batch 1 is)")
    sglang_tree(out)
    out["context"] = "1300"
    note(out, "context 1300 = the mean over decode of two MT-Bench turns with ~1,090-token answers (AngelSlim #163's "
              "latency x throughput, 174-178k output tokens per run over 80 conversations; system prompt and question "
              "~180 tokens, the second turn's prompt holding the first answer; estimate)")
    src = ("bench_eagle3 over 80 MT-bench conversations (the table's latency x throughput, 174-178k output tokens, "
           "exceeds what 20 conversations of 2 x 2048 tokens can produce)" if angel else
           "bench_eagle3 over 20 MT-bench conversations (the issue's command line, mtbench:20)")
    note(out, f"user-reported table (same author for AngelSlim #163 and SpecForge #339); {src}; bf16; at batch 1 the "
              "throughput is the per-user rate")
    if out["metric"] == "speedup":
        out["num_prompts"] = str(n)
        note(out, f"speedup = spec / plain batch throughput at the same batch (derived); priced as a run of {n} equal "
                  "requests at the batch as concurrency: n // batch waves at the batch and one of the rest "
                  "(speedup.waves)")


# SpecBundle dashboard (SpecForge PR #382): the HF target of each model key, the bundled model priced for it, and why
# the rest are not mapped. Qwen3-Coder-30B-A3B has Qwen3-30B-A3B's layer shapes (48 layers, hidden 2048, 32 / 4
# heads of 128, 128 experts top-8 of width 768, vocab 151936; its config.json as copied in derivative repositories,
# e.g. RTP-LLM/Qwen3-Coder-30B-A3B-Instruct-RTPurbo); only its rope and context length differ.
SPECBUNDLE_MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b", "meta-llama/Llama-3.3-70B-Instruct": "llama-3.3-70b",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "qwen3-30b-a3b", "Qwen/Qwen3-Coder-30B-A3B-Instruct": "qwen3-30b-a3b",
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "qwen3-235b-a22b", "moonshotai/Kimi-K2-Instruct": "kimi-k2",
    "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8": "qwen3-next-80b-a3b", "inclusionAI/Ling-flash-2.0": "ling-flash-2.0",
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": "qwen3-coder-480b-a35b",
}
# What the dashboard does not state for a target, inferred from the checkpoint: (field, value, why).
SPECBUNDLE_INFERRED = {
    "inclusionAI/Ling-flash-2.0": [("precision", "bf16", "precision bf16 inferred: the named repository's only "
                                    "weights are BF16 (HF safetensors metadata BF16 102,889,697,280 + F32 7,936)")],
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": [
        ("tp", "8", "TP8 inferred (not stated): the BF16 weights (480B parameters, 960 GB) need 7 or more 141-GB "
         "H200s, so one 8-GPU node at TP8 (SGLang's default MoE layout: experts tensor-parallel, no EP) is the "
         "layout; the SGLang cookbook's Qwen3-Coder-480B commands use tp 8 on every GPU it lists")],
}
SPECBUNDLE_SKIPS = {
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "the plain baselines are not comparable: 25 of its 70 speculative "
    "runs measure a speedup above their own acceptance length (up to 1.97x it: FinanceQA 3.54x at 1.80, all ten "
    "FinanceQA runs, whose plain rate of 289 tokens/s is half the other benchmarks' 456-632), which a speculative "
    "step at a fixed batch cannot give (it costs at least a plain step; a run's shrinking tail allows a few percent), "
    "so the target's rows are left out",
}
SPECBUNDLE_STAND_INS = {"Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-Coder-30B-A3B-Instruct",
                        "Qwen/Qwen3-235B-A22B-Instruct-2507"}


def s_specbundle(r: Row, out: Row) -> None:
    if r["model"] in SPECBUNDLE_SKIPS:
        raise Skip(SPECBUNDLE_SKIPS[r["model"]])
    out["model"] = SPECBUNDLE_MODELS[r["model"]]
    out["source"] = "SpecBundle dashboard (SGLang EAGLE3, H200)"
    inferred = SPECBUNDLE_INFERRED.get(r["model"], [])
    for field, value, _ in inferred:
        out[field] = value
        if field == "tp":
            out["n_gpus"] = value
    out["precision"], why = (out["precision"].split(" (", 1) + [""])[:2]
    b = int(out["batch"])
    if out["metric"] != "speedup" and b > 1:
        raise Skip("total throughput of a benchmark's prompts with a shrinking tail: not a per-user rate at the "
                   "nominal batch (only batch 1 is; the speedup rows at the same batch are mapped)")
    tp = re.search(r"TP\d+ inferred \([^)]*\)", r["notes"])
    tp_inferred = any(field == "tp" for field, _, _ in inferred)
    note(out, *(why for _, _, why in inferred))
    note(out, tp.group(0) if tp else "" if tp_inferred else
         f"TP{out['tp']} from the '#GPUs' column of arXiv 2603.18567 Tables 2-3",
         "speedup = EAGLE3 / plain output_throughput at the same batch (derived; output tokens over the run's wall "
         "time, prefill included)" if out["metric"] == "speedup" else
         "per-user rate = output_throughput / batch_size 1 (derived; wall time, prefill included)")
    mt = r["dataset"] == "mtbench"
    out["context"] = "1300" if mt else "1024"
    note(out, "context 1300: MT-Bench's two turns of ~1,090-token answers, as the same harness's user reports "
              "(estimate)" if mt else "context 1024: prompt and answer lengths not published (estimate)",
         f"precision {out['precision']} ({why.rstrip(')')})" if why else "",
         f"{r['model']} priced as the bundled {out['model']} (the same layer shapes)"
         if r["model"] in SPECBUNDLE_STAND_INS else "")
    if out["method"]:
        sglang_tree(out)
        note(out, "priced as a speculative step at the fixed batch (the benchmark's prompt count is not published, "
                  "so not as a run of N prompts)")


def s_20780(r: Row, out: Row) -> None:
    if not out["method"]:
        raise Skip("duplicate: the vanilla TPOT 7.07 ms is S038 (base_step_s)")
    out["source"] = "vLLM issue #20780 (H100, bs 1)"
    out["concurrency"], out["context"], out["overlap_scheduler"] = "", "512", "false"
    note(out, "EAGLE-1 spec TPOT at K draft tokens (chain); tau = the issue's acceptance length at the same K; "
              "context 512 as in S038-S044 (estimate); bf16 assumed", VLLM_SYNC)


def s_16937(r: Row, out: Row) -> None:
    if not out["method"]:
        raise Skip("duplicate: the vanilla 133 tok/s is mapped from decode.csv")
    out["concurrency"], out["context"], out["overlap_scheduler"] = "", "512", "false"
    note(out, "speedup = spec / vanilla output tok/s of offline runs with --max_num_seqs 1 (quoted; includes the "
              "short prefills); tau not reported; bf16 assumed", MT_BENCH_CONTEXT, VLLM_SYNC)


def s_4716(r: Row, out: Row) -> None:
    if out["tau"] == "2.42":
        raise Skip("speedup pairs a single-prompt (send_one) spec run with the MT-Bench baseline")
    out["concurrency"] = ""
    out["tau_k"] = lead_int(out["tau_k"])
    note(out, "bench_speculative-style MT-Bench run at bs 1 (cuda-graph-max-bs 1), fp16 as published; tree: steps 8, "
              "topk 8, 64 draft tokens", MT_BENCH_CONTEXT)
    if out["metric"] == "speedup":
        note(out, "speedup = 234.54 / 88.61 tok/s (derived)")


def s_ngram7(r: Row, out: Row) -> None:
    out["model"] = "llama-4-scout"
    out["concurrency"] = ""
    note(out, "Llama-4-Scout-17B-16E (bundled as llama-4-scout; the collector marked it not bundled); "
              "E2E runtime speedup of 20 x batch requests with max_batch_size = batch (measured = 1 + quoted %); "
              "k = max_draft_len (blog's v), match size 3/5; tau = second-turn AL; lossless; ISL/OSL not stated")


def s_amd_eagle3(r: Row, out: Row) -> None:
    # AMD ROCm blog "Accelerating Large-Scale LLM Inference on AMD Instinct MI350X/MI355X with Eagle3 and AMD Quark":
    # its MiniMax-M2.5 rows are InferenceX's minimaxm2.5-fp8-mi355x-vllm-eagle3 config (SemiAnalysisAI/InferenceX
    # .github/configs/amd-master.yaml and benchmarks/single_node/minimaxm2.5_fp8_mi355x_eagle3.sh @63cd9a387: image
    # nightly-4eafc729, the FP8 checkpoint, TP4 with EP4, --kv-cache-dtype fp8, thoughtworks/MiniMax-M2.5-Eagle3 with
    # num_speculative_tokens 3, random 1k/1k at RANDOM_RANGE_RATIO 0.8, 10 x concurrency prompts, chat template).
    if "Kimi" in r["model"]:
        raise Skip("Kimi-K2.5 not bundled (its language model has Kimi-K2's shape, but the MXFP4 checkpoint's "
                   "non-expert formats and the EAGLE3 runs' draft depth are not stated)")
    out.update(model="minimax-m2.5", precision="fp8", expert_precision="", attention_precision="", kv_precision="fp8",
               ep="4", length_ratio=IX_LENGTH_RATIO)
    note(out, "MiniMax-M2.5 FP8 (block 128) checkpoint: the blog's 'BF16' names the EAGLE3 draft (thoughtworks/"
              "MiniMax-M2.5-Eagle3, not bundled: the method's synthesized head is priced); InferenceX config "
              "minimaxm2.5-fp8-mi355x-vllm-eagle3 @63cd9a387 (TP4, EP4, KV fp8, 10 x concurrency prompts)", IX_LENGTHS)
    if out["metric"] == "speedup":
        out["metric"] = "throughput_ratio"
        note(out, "throughput_ratio = EAGLE3 / no-spec output tok/s per GPU at the same concurrency (the blog's "
                  "speedup); acceptance length not reported (method default)")


SPEC_SKIPS = {
    "amd-rocm-mtp-dsv3": ("amd-rocm-blog-dsv3-mtp-mi300x", "duplicate: the same E2E speedup table is mapped from "
                          "serving.csv (with its absolute E2E latencies)"),
    "arcticinference-docs-suffix": ("arcticinference-docs", "model and hardware not stated next to the table "
                                    "(Llama-3.1-70B on 8x H100 only probable)"),
    "gpustack-dsr1-h200": ("gpustack-dsr1-h200", "1000 prompts offered at once; the MTP server's running batch is "
                           "capped (SGLang default 32 with MTP): not a same-batch comparison"),
    "llmd-qwen3-32b-eagle3": ("llmd-qwen3-32b-eagle3", "load given as a request rate (QPS): decode batch unknown"),
    "vllm-pr12755-dsr1-mtp": ("vllm-pr-12755", "load given as a request rate (QPS); GPU not stated"),
    "inferencex-trtbench-dsv4pro": ("inferencex-trt-bench", "model not bundled (DeepSeek-V4-Pro)"),
    "lmsys-mtp-eigen": ("lmsys-blog-sglang-mtp", "decode layout (attention DP / EP) not stated"),
    "vllm-pr16035-eagle-llama3": ("vllm-pr-16035", "GPU not stated (Meta-Llama-3-8B-Instruct is bundled as "
                                  "llama-3-8b)"),
    "vllm-blog-2024-spec-decode": ("vllm-blog-2024-spec-decode", "load given as QPS (Llama-3-70B is bundled as "
                                   "llama-3-70b)"),
    "vllm-pr48944-gemma4-ctx": ("vllm-pr-48944", "model not bundled (Gemma-4-31B; the H100 NVL is, as h100-nvl)"),
    "vllm-pr24243-minicpm3-eagle3": ("vllm-pr-24243", "model not bundled (MiniCPM3-4B; the RTX 4090 is, as rtx-4090)"),
    "sglang-docs-deepseek-mtp": ("sglang-docs-deepseek-mtp", "MTP depth not tied to the claim (the docs show k=1 "
                                 "and k=3 in different versions)"),
    "sglang-pr10281-dsr1-mtp": ("sglang-pr-10281", "GPU not named (trtllm_mla implies a Blackwell part)"),
    "sglang-pr3582-dsv3-nextn": ("sglang-pr-3582", "GPU not stated; MTP config not tied to the 1.76x"),
    "sglang-pr12128-dsr1-mtp": ("sglang-pr-12128", "GPU not stated (a Hopper part with FA3 MLA: H200 or H20-96G "
                                "hold DeepSeek-R1 FP8 on 8 GPUs); checked against 8x H200 in the README instead"),
    "inferencex-isointeractivity": ("inferencex", "duplicate: the same compare-page sentences are mapped from "
                                    "serving.csv"),
}

SPEC = {
    "amd-rocm-eagle3-mi355x": ("vllm-rocm-eagle3-mi355x", "AMD ROCm blog: EAGLE3 on MI355X under vLLM ROCm (Kimi-K2.5, "
                               "MiniMax-M2.5)", s_amd_eagle3),
    "gpustack-qwen3-8b-h100": ("gpustack-qwen3-8b-h100", "GPUStack: Qwen3-8B on H100 (concurrency sweep)",
                               s_gpustack_qwen3),
    "angelslim-163-qwen3-30b-a3b": ("qwen3-30b-a3b-eagle3-user-reports", "", s_qwen3_moe_user),
    "specforge-339-qwen3-30b-a3b": ("qwen3-30b-a3b-eagle3-user-reports", "", s_qwen3_moe_user),
    "vllm-issue20780-eagle-k-sweep": ("vllm-issue-20780", "", s_20780),
    "vllm-pr16937-eagle3": ("vllm-pr-16937", "vLLM PR #16937 (EAGLE on H100, bs 1)", s_16937),
    "sglang-pr4716-llama33-70b-eagle3": ("sglang-pr-4716", "SGLang PR #4716 (Llama-3.3-70B EAGLE3, H100 TP8, bs 1)",
                                         s_4716),
    "specbundle-dashboard": ("specbundle-dashboard", "", s_specbundle),
    "trtllm-blog7-ngram": ("trtllm-tech-blog-7", "TRT-LLM tech blog 7 (n-gram, Llama-4-Scout, 8x B200)", s_ngram7),
    **{k: (sid, "", d_skip(why)) for k, (sid, why) in SPEC_SKIPS.items()},
}


