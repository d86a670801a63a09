"""Round 9 (2026-12-06) of the blind test (tools/blind_test.py): rows found by a research helper's search for
published measurements absent from the repository, after round 8. Each entry is a Row's keyword arguments; a `csv`
entry is a row in validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as validation
prices such a row (engine_date and overlap_scheduler as there). Kept apart from blind_test.py to keep that file short.

Search (2026-12-06, the search tool's docs, issues, pages and code corpora, then the sources' own repositories):
speculative speedups at several batch sizes (vLLM, SGLang, TensorRT-LLM EAGLE-3 / MTP), DeepSeek MTP on and off at
concurrency >= 16, and plain decode steps against batch for dense 8B / 70B and DeepSeek-class MoE models. What was
found but cannot be expressed or scored is listed in validation/BLIND_TEST.md ("Round 9").

Inclusion rules, fixed before any prediction was run:
- ML.ENERGY leaderboard v3: every configuration of the models in the search's scope (Llama-3.1-8B, Llama-3.1-70B,
  Llama-3.3-70B, DeepSeek-V3.1 and DeepSeek-R1-0528) whose median inter-token latency is a plain decode step: the
  runs keep max_num_seqs requests in flight, so a step admits a new prompt with probability about
  1 - exp(-batch / mean output length); where batch / output length < ln 2 fewer than half of the steps carry a
  prefill chunk and the median ITL is a decode step alone. Larger batches (their median is a mixed step) are left out.
- SGLang cookbook: the DeepSeek-V3.1 page (8x MI300X, TP8, no DP attention), all nine runs, mapped as validation maps
  the cookbook's DeepSeek-R1 page (tpot_s at the max concurrency, the runs' mean lengths).
- Every row the other two sources give.
"""

from __future__ import annotations

import math

# ML.ENERGY leaderboard v3.0 (2025-12-01 release; data file last updated 2026-02-16), read at the commit below.
MLE_COMMIT = "82e15a466f6a90594765ef7fc313cae5c18e8eeb"
MLE = f"https://github.com/ml-energy/leaderboard/blob/{MLE_COMMIT}/public/data/models/"
MLE_ASSUMED = ("vLLM v0.11.1 (the benchmark's server image vllm/vllm-openai:v0.11.1; ml-energy/benchmark configs: "
               "--async-scheduling, max-num-batched-tokens 8192, dtype bfloat16 / the checkpoint's FP8); the median "
               "ITL read as one plain decode step at the run's mean batch (max_num_seqs requests kept in flight, "
               "steady state); prompt length not published: 256 tokens assumed (LMArena conversations and GPQA "
               "questions), context = 256 + half the run's mean output length; KV cache BF16 (vLLM's default); "
               "H100 read as the 80 GB SXM part ('H100 80GB HBM3'); sampling top-p: the harness sends every request "
               "temperature 0.8 and top_p 0.95 (ml-energy/benchmark mlenergy/benchmark/llm/benchmark.py, the "
               "LLMBenchmark defaults; added 2026-12-07 with the sampling input, after these rows were first priced)")
MLE_DS = ("; 8 GPUs with --enable-expert-parallel and no data-parallel-size in the config, which the benchmark's "
          "driver launches as --tensor-parallel-size 8 (TP8 attention, EP8 experts; the leaderboard's own label reads "
          "tensor_parallel 1, expert_parallel 8, data_parallel 1: its scripts/build_data.py lines 686-693 read the "
          "TP size from the YAML only, where ml-energy/benchmark benchmark.py lines 1119-1130 pass it on the command "
          "line); FP8 block-quantised weights (the checkpoint's)")

# (file, model id, precision, name prefix, [(GPU, GPUs, configurations index, max_num_seqs, mean batch,
#  median ITL ms, mean output tokens)]): the configurations that pass the ln 2 rule, as the file gives them.
_MLE = (
    ("meta-llama__Llama-3.1-8B-Instruct__lm-arena-chat.json", "llama-3.1-8b", "bf16", "Llama-3.1-8B BF16", (
        ("B200", 1, 0, 8, 8.0, 4.574, 388), ("B200", 1, 1, 16, 15.9, 5.083, 409),
        ("B200", 1, 2, 32, 31.8, 6.345, 398), ("B200", 1, 3, 64, 63.8, 8.997, 390),
        ("B200", 1, 4, 128, 127.5, 26.66, 396), ("B200", 1, 5, 256, 255.2, 31.69, 399),
        ("H100", 1, 9, 8, 8.0, 7.316, 389), ("H100", 1, 10, 16, 16.0, 7.912, 404),
        ("H100", 1, 11, 32, 31.9, 8.907, 390), ("H100", 1, 12, 64, 63.9, 11.5, 396),
        ("H100", 1, 13, 96, 95.7, 14.08, 393), ("H100", 1, 14, 128, 127.6, 16.48, 405),
        ("H100", 1, 15, 192, 191.7, 20.91, 397), ("H100", 1, 16, 256, 255.2, 26.13, 404))),
    ("meta-llama__Llama-3.1-70B-Instruct__lm-arena-chat.json", "llama-3.1-70b", "bf16", "Llama-3.1-70B BF16", (
        ("B200", 2, 0, 8, 8.0, 16.36, 352), ("B200", 2, 1, 16, 15.9, 16.78, 360),
        ("B200", 2, 2, 32, 31.9, 18.68, 346), ("B200", 2, 3, 64, 63.8, 21.75, 346),
        ("B200", 2, 4, 128, 127.7, 27.3, 353), ("H100", 4, 10, 8, 8.0, 16.57, 350),
        ("H100", 4, 11, 16, 16.0, 17.7, 354), ("H100", 4, 12, 32, 31.9, 20.05, 351),
        ("H100", 4, 13, 64, 63.8, 22.43, 352), ("H100", 4, 14, 96, 95.7, 25.36, 357),
        ("H100", 4, 15, 128, 127.6, 27.87, 359), ("H100", 4, 16, 192, 191.6, 33.7, 357))),
    ("meta-llama__Llama-3.3-70B-Instruct__lm-arena-chat.json", "llama-3.3-70b", "bf16", "Llama-3.3-70B BF16", (
        ("B200", 2, 0, 8, 8.0, 16.62, 411), ("B200", 2, 1, 16, 16.0, 16.94, 406),
        ("B200", 2, 2, 32, 31.9, 18.65, 407), ("B200", 2, 3, 64, 63.8, 21.81, 415),
        ("B200", 2, 4, 128, 127.7, 27.56, 410), ("B200", 2, 5, 256, 255.5, 36.7, 410),
        ("H100", 4, 8, 8, 8.0, 16.87, 409), ("H100", 4, 9, 16, 16.0, 17.56, 410),
        ("H100", 4, 10, 32, 31.9, 19.86, 413), ("H100", 4, 11, 64, 63.9, 22.34, 409),
        ("H100", 4, 12, 96, 95.9, 25.38, 420), ("H100", 4, 13, 128, 127.7, 27.76, 411),
        ("H100", 4, 14, 192, 191.5, 33.61, 406), ("H100", 4, 15, 256, 255.5, 39.06, 413))),
    ("deepseek-ai__DeepSeek-V3.1__lm-arena-chat.json", "deepseek-v3", "fp8", "DeepSeek-V3.1 FP8 chat", (
        ("B200", 8, 0, 8, 8.0, 16.84, 846), ("B200", 8, 1, 16, 16.0, 20.34, 840),
        ("B200", 8, 2, 32, 32.0, 26.72, 850), ("B200", 8, 3, 64, 63.9, 32.59, 849),
        ("B200", 8, 4, 128, 127.9, 38.84, 850), ("B200", 8, 5, 256, 255.7, 48.59, 836),
        ("B200", 8, 6, 512, 511.5, 64.14, 849))),
    ("deepseek-ai__DeepSeek-V3.1__gpqa.json", "deepseek-v3", "fp8", "DeepSeek-V3.1 FP8 GPQA", (
        ("B200", 8, 0, 8, 8.0, 18.76, 9082), ("B200", 8, 1, 16, 16.0, 23.82, 8894),
        ("B200", 8, 2, 32, 32.0, 32.8, 9058), ("B200", 8, 3, 64, 64.0, 37.47, 8676),
        ("B200", 8, 4, 128, 128.0, 39.19, 9034), ("B200", 8, 5, 256, 256.0, 55.47, 8969))),
    ("deepseek-ai__DeepSeek-R1-0528__gpqa.json", "deepseek-r1", "fp8", "DeepSeek-R1-0528 FP8 GPQA", (
        ("B200", 8, 0, 8, 8.0, 18.36, 11861), ("B200", 8, 1, 16, 16.0, 23.07, 11445),
        ("B200", 8, 2, 32, 32.0, 31.79, 11099), ("B200", 8, 3, 64, 64.0, 40.92, 11559),
        ("B200", 8, 4, 128, 128.0, 44.8, 11287))),
)


def _mle_rows() -> list[dict]:
    rows = []
    for file, model, prec, label, confs in _MLE:
        ds = model.startswith("deepseek")
        for gpu, n, idx, mns, mean_b, itl_ms, osl in confs:
            assert mns / osl < math.log(2)          # the inclusion rule above
            batch = round(mean_b)
            csv = dict(hardware="h100-sxm" if gpu == "H100" else "b200", n_gpus=str(n), tp=str(n),
                       ep=str(n) if ds else "", engine="vllm", engine_version="0.11.1", engine_date="2025-11",
                       overlap_scheduler="true", model=model, precision=prec, batch=str(batch), sampling="top-p",
                       context=str(256 + osl // 2))
            rows.append(dict(
                name=f"{label}, {n}x {gpu}, vLLM v0.11.1, batch {batch} (ML.ENERGY)", url=MLE + file,
                locator=f"configurations[{idx}]: gpu_model {gpu}, num_gpus {n}, max_num_seqs {mns}, avg_batch_size "
                        f"{mean_b:g}, median_itl_ms {itl_ms:g} (avg_output_len {osl})",
                metric="base_step_s", measured=itl_ms / 1000.0, csv=csv,
                assumed=MLE_ASSUMED + (MLE_DS if ds else f"; TP{n} (num_gpus, --tensor-parallel-size)")))
    return rows


# SGLang cookbook, DeepSeek-V3.1 page (benchmark data added 2026-01-21, sgl-cookbook PR #108), read at the commit below.
CB_COMMIT = "0e5d0fee1fb07e9636b5c737fdce91061a0ce994"
CB_V31 = f"https://github.com/sgl-project/sgl-cookbook/blob/{CB_COMMIT}/docs/autoregressive/DeepSeek/DeepSeek-V3_1.md"
CB_ASSUMED = ("DeepSeek-V3.1-Terminus priced as DeepSeek-V3 (the same shapes); FP8 block weights (the checkpoint's), "
              "KV cache in the model's format (SGLang's default, not stated); SGLang 0.5.7 on 8x MI300X, TP8, no DP "
              "attention (the page's launch command); priced as a steady closed loop at the max concurrency with the "
              "runs' mean input and output lengths (total tokens over successful requests), as validation prices "
              "the cookbook's DeepSeek-R1 page (rows D170-D178); engine_date 2026-01")
# (scenario, concurrency, total input, total output, requests, mean TPOT ms, line of 'Mean TPOT')
_CB = (("Chat (1K/1K)", 1, 6101, 4220, 10, 23.84, 421), ("Chat (1K/1K)", 16, 39668, 40805, 80, 35.50, 474),
       ("Chat (1K/1K)", 100, 249831, 252662, 500, 73.33, 527), ("Reasoning (1K/8K)", 1, 6101, 44462, 10, 24.41, 582),
       ("Reasoning (1K/8K)", 16, 39668, 318306, 80, 33.72, 635),
       ("Reasoning (1K/8K)", 64, 158939, 1301025, 320, 53.30, 688),
       ("Summarization (8K/1K)", 1, 41941, 4220, 10, 24.93, 743),
       ("Summarization (8K/1K)", 16, 300020, 41669, 80, 53.65, 796),
       ("Summarization (8K/1K)", 64, 1273893, 170000, 320, 97.93, 849))


def _cookbook_rows() -> list[dict]:
    rows = []
    for scen, c, tin, tout, n, tpot, line in _CB:
        isl, osl = round(tin / n), round(tout / n)
        rows.append(dict(
            name=f"DeepSeek-V3.1 FP8, 8x MI300X TP8, SGLang 0.5.7, {scen.split()[0].lower()}, concurrency {c} "
                 "(cookbook)", url=CB_V31,
            locator=f"5.1.4 Scenario {scen}, max concurrency {c}: 'Mean TPOT (ms): {tpot:.2f}' (line {line}); "
                    f"{n} requests, {tin} input and {tout} generated tokens",
            metric="tpot_s", measured=tpot / 1000.0, assumed=CB_ASSUMED,
            csv=dict(hardware="mi300x", n_gpus="8", tp="8", engine="sglang", engine_version="0.5.7",
                     engine_date="2026-01", model="deepseek-v3", precision="fp8", concurrency=str(c),
                     isl=str(isl), osl=str(osl))))
    return rows


# TensorRT-LLM tech blog 2 (DeepSeek-R1 MTP, 2025-05), Evaluation section, read at the commit below.
TRT_BLOG2 = ("https://github.com/NVIDIA/TensorRT-LLM/blob/000a01de66f0eab4ab05640711f0253f50f5209c/docs/source/blogs/"
             "tech_blog/blog2_DeepSeek_R1_MTP_Implementation_and_Optimization.md")
_TRT = dict(
    name="DeepSeek-R1 FP4 MTP nextn 3, 8x B200, TensorRT-LLM, batch 1 (tech blog 2)", url=TRT_BLOG2,
    locator="Evaluation, 'Achieving speedup with MTP speculative decoding': 'MTP=3 can help get the best min-latency "
            "performance on 8 B200 GPUs, which can bring 2.16x speedup compared with the baseline nextn=0' (MLA TP8, "
            "MoE EP2, ten requests, ISL/OSL 1K/2K)",
    metric="speedup", measured=2.16,
    csv=dict(hardware="b200", n_gpus="8", tp="8", ep="2", engine="trtllm", engine_date="2025-05", model="deepseek-r1",
             precision="bf16", expert_precision="fp4", kv_precision="bf16", method="mtp", k="3", batch="1",
             context="2048"),
    assumed="nvidia/DeepSeek-R1-FP4: experts NVFP4, the rest priced BF16 as validation's rows of TensorRT-LLM tech "
            "blog 1 (S021-S025, the same team and node) price it; MoE EP2 as the blog states; strict acceptance "
            "(the 2.33x of relaxed acceptance not scored); acceptance not published in the text (Figure 7 only): the "
            "MTP default at k = 3; context 2048 = 1K + half of 2K; a May 2025 build (engine_date 2025-05)")

# jiangLLM's gist of results for vLLM PR #62258 (Qwen3-8B on one H100, vLLM 0.31.0, async scheduling off).
GIST = "https://gist.github.com/jiangLLM/e95756b974f385846e4277b7ee68d6c8"
GIST_ASSUMED = ("vLLM 0.31.0 with async scheduling off (overlap_scheduler false); BF16 (not stated); the cap is "
                "max_num_seqs with 24 (serial) or 224 prompts, priced as a steady batch at the cap; the EAGLE-3 head "
                "not named (a one-layer head of the target's width priced); prompts not stated in the stored copy: "
                "context 1024; acceptance not published in the stored copy (raw JSON linked only): the EAGLE-3 "
                "default at the row's k; the table gives the best of the tested proposal lengths at each cap")
_GIST = tuple(dict(
    name=f"Qwen3-8B EAGLE-3 k = {k}, 1x H100, vLLM 0.31.0, batch {b} (gist, vLLM PR #62258)", url=GIST,
    locator=f"Results table, concurrency cap {cap}: baseline {base:,} tok/s, EAGLE3 {spec:,} tok/s (k={k}), "
            f"speedup {sp:.2f}x",
    metric="speedup", measured=sp, assumed=GIST_ASSUMED,
    csv=dict(hardware="h100-sxm", n_gpus="1", tp="1", engine="vllm", engine_version="0.31.0", engine_date="2026-10",
             overlap_scheduler="false", model="qwen3-8b", precision="bf16", method="eagle3", k=str(k), batch=str(b),
             context="1024"))
    for cap, b, base, spec, k, sp in (("1 (serial)", 1, 125, 355, 5, 2.85), ("8", 8, 898, 2148, 3, 2.39),
                                      ("32", 32, 2726, 7317, 5, 2.68)))

ROUND9 = (*_mle_rows(), *_cookbook_rows(), _TRT, *_GIST)
