"""Round 17 (2026-12-06) of the blind test (tools/blind_test.py): round 15's question, "is the PREFILL PASS
mispriced?", asked of a modern build. specroof prices the TTFT at one request in flight 1.1-8.7x under measured on
InferenceX's DeepSeek-R1 rows; round 15's Mixtral rows pointed at an early-2024 MoE prefill. Each entry is a Row's
keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row: the serving route (`serve`: a closed loop
of `concurrency` requests of isl / osl tokens; ttft_s, tpot_s, e2e_s and tokens_per_s_per_gpu; with num_prompts, the
mean TTFT and E2E of a run of that many prompts, the first wave queued together for prefill: simulator/burst.py). A
TTFT at one request in flight is one prefill pass of isl tokens plus the engine's host path, which is what the
serving route prices there. Kept apart from blind_test.py, as rounds 9-15 are.

Search (2026-12-06, about 30 minutes; the search tool's issues, code and pages corpora and find_string on exact
output lines: 'Prefill. latency:', 'Decode.  median latency:', 'Total. latency:', 'Decode 0. Batch size: 1,',
'Max request concurrency:                 1 ', 'Average time-to-first-token [TTFT] (ms):', 'bench_one_batch --model
...' for DeepSeek-V3/R1, Llama-3.1, Qwen3 and gpt-oss, and the model-load line 'Load weight end.
type=DeepseekV3ForCausalLM'). Targets: DeepSeek-V3/R1 at TP8 on a bundled device first, then Llama-3.1, Qwen3,
gpt-oss; the GPU stated. What was found but not scored is in validation/BLIND_TEST.md (round 17).

Inclusion rules, fixed before any prediction was run (no cell of the source below was priced before this file was
written):
- A source is used when it publishes a fixed-batch prefill or decode timing (bench_one_batch, benchmark_latency,
  trtllm-bench latency) or a serving run at a stated concurrency (one request in flight preferred) with its input and
  output lengths stated, on a bundled device, model and engine, with the GPU count and parallel layout stated, in a
  stored copy with an address to cite, and is absent from validation/sources/*.csv, validation/not_mapped.csv and
  BLIND_TEST.md.
- Every measurement of a used source's result blocks is a row, whatever the prediction: its mean TTFT (ttft_s), mean
  TPOT (tpot_s), mean request latency (e2e_s) and output throughput per GPU (tokens_per_s_per_gpu). The block's other
  lines restate these (total output and total token throughput = the per-GPU figure x the GPUs and x (isl + osl) /
  osl; request throughput = total output throughput / osl; total latency = the requests / request throughput;
  per-user figures = 1 / TPOT and osl / request latency, averaged per request) and are not scored twice.
- A run that speculates (here MTP) without its acceptance length published is priced at the method's default
  acceptance (specroof's MTP default for the target), as validation prices such rows; its TTFT holds no speculative
  step, so it is read on its own.
- A row specroof refuses (it does not fit in memory) is listed with its reason, not scored; the rule is on the
  refusal, not on any error.
- Nothing is tuned; the engine profiles, models and devices are the shipped ones.
"""

from __future__ import annotations

from blind_rows_common import split

# --- TensorRT-LLM tech blog 15: DeepSeek-V3.2 on B200 (NVFP4), trtllm-bench throughput --streaming ----------------
BLOG15 = ("https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/"
          "blog15_Optimizing_DeepSeek_V32_on_NVIDIA_Blackwell_GPUs.md")
_COMMON = (
    "TensorRT-LLM tech blog 15 (stored version: read_file id 4207552975; the find_files index holds the path at "
    "2f5c64f1 among 16 versions), section 'How to Reproduce' > 'Benchmark on B200'; NVIDIA's DeepSeek-V3.2 NVFP4 "
    "checkpoint (section 'Precision Strategy': MoE experts NVFP4, QKV projection BF16, the indexer's low-rank layers "
    "BF16; priced as weights bf16 with NVFP4 experts, as validation maps DeepSeek-R1 NVFP4, the output projection's "
    "NVFP4 not expressed), KV cache FP8 (the block's kv_cache_config dtype fp8); trtllm-bench throughput with "
    "--backend pytorch --streaming on a synthetic dataset: isl 8192 and osl 1024 exactly (the block's total token "
    "throughput is 9.000 x its output throughput, 8192 + 1024 over 1024; 'ISL = 8K, OSL = 1K'); speculative MTP of "
    "num_nextn_predict_layers draft tokens (k) at the MTP default acceptance (not published); engine_date 2025-12 "
    "(estimate: the blog cites PR #10126 and data 'collected on November 20th' for its GB200 figure; the B200 runs "
    "are not dated); B200 read as the bundled b200 (the heading names it)")
_MINLAT = (
    "'Min-latency' block: 'Batch = 1, ISL = 8K, OSL = 1K, num_requests = 10'; trtllm-bench --tp 4 (attention and "
    "experts TP4, no EP, no attention DP), --max_batch_size 1 --concurrency 1 --num_requests 10 --warmup 1 "
    "--max_num_tokens 8384 (the 8192-token prompt is one prefill chunk), MTP k = 3; one request in flight, so the "
    "TTFT is one prefill pass of 8192 tokens plus the host path and the E2E is it plus 1023 tokens of MTP decode")
_MAXTPUT = (
    "'Max-throughput' block: 'Batch = 256, ISL = 8K, OSL = 1K, num_requests = 768'; trtllm-bench --tp 8 --ep 8 with "
    "enable_attention_dp true (attention DP8: tp 1, dp 8, ep 8, as validation maps TensorRT-LLM's attention DP), "
    "--max_batch_size 256 (per attention-DP rank, max_running_requests 256) --concurrency 256 --num_requests 768 "
    "(num_prompts 768: the mean TTFT and E2E hold the first wave's prompts queued together for prefill), "
    "--max_num_tokens 8576, MTP k = 1; attention_dp_config balance not set (dp_balance empty: the profile's, off)")
# (block, gpus, tp, dp, ep, k, concurrency, num_prompts, max_running, metric, measured (SI), the block's line)
_BLOG15 = (
    ("Min-latency", 4, 4, 1, 1, 3, 1, "", "", "ttft_s", 0.4259885,
     "Average time-to-first-token [TTFT] (ms): 425.9885"),
    ("Min-latency", 4, 4, 1, 1, 3, 1, "", "", "tpot_s", 0.0032344,
     "Average time-per-output-token [TPOT] (ms): 3.2344"),
    ("Min-latency", 4, 4, 1, 1, 3, 1, "", "", "e2e_s", 3.7347334, "Average request latency (ms): 3734.7334"),
    ("Min-latency", 4, 4, 1, 1, 3, 1, "", "", "tokens_per_s_per_gpu", 68.5446,
     "Per GPU Output Throughput (tps/gpu): 68.5446"),
    ("Max-throughput", 8, 1, 8, 8, 1, 256, "768", "256", "ttft_s", 19.5377776,
     "Average time-to-first-token [TTFT] (ms): 19537.7776"),
    ("Max-throughput", 8, 1, 8, 8, 1, 256, "768", "256", "tpot_s", 0.0985219,
     "Average time-per-output-token [TPOT] (ms): 98.5219"),
    ("Max-throughput", 8, 1, 8, 8, 1, 256, "768", "256", "e2e_s", 120.3257013,
     "Average request latency (ms): 120325.7013"),
    ("Max-throughput", 8, 1, 8, 8, 1, 256, "768", "256", "tokens_per_s_per_gpu", 1077.2770,
     "Per GPU Output Throughput (tps/gpu): 1077.2770"),
)


def _rows() -> list[dict]:
    rows = []
    for block, gpus, tp, dp, ep, k, conc, n, cap, metric, value, line in _BLOG15:
        layout = f"TP{tp}" if dp == 1 else f"attention DP{dp} EP{ep}"
        rows.append(dict(
            name=f"DeepSeek-V3.2 NVFP4, {gpus}x B200 {layout}, TensorRT-LLM (blog 15, {block}), MTP k={k}, "
                 f"concurrency {conc}, 8192/1024",
            url=BLOG15, locator=f"'Benchmark on B200' > '{block}', expected results: '{line}'",
            metric=metric, measured=value, assumed=f"{_COMMON}; {_MINLAT if block == 'Min-latency' else _MAXTPUT}",
            csv=dict(hardware="b200", n_gpus=str(gpus), tp=str(tp), dp=str(dp), ep=str(ep), engine="trtllm",
                     engine_version="TensorRT-LLM main (blog 15; build not stated)", engine_date="2025-12",
                     model="deepseek-v3.2", precision="bf16", expert_precision="fp4", kv_precision="fp8",
                     method="mtp", k=str(k), concurrency=str(conc), isl="8192", osl="1024", num_prompts=n
                     if metric in ("ttft_s", "e2e_s") else "", max_running_requests=cap)))
    return rows


ROUND17, REFUSED = split(_rows())   # REFUSED: (name, reason), listed, not scored
