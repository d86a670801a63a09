"""Round 20 (collected 2026-12-07) of the blind test (tools/blind_test.py): published measurements that the devices
and models being added on 2026-12-07 make expressible (devices a100-sxm-40gb, l40s, h20, rtx-3090, rtx-a6000,
rtx-4090, l4, a10g, h100-pcie, mi350x, mi250x; models llama-3-8b, llama-3-70b, llama-2-13b, qwen2.5-14b/32b/72b,
qwen3-4b/14b/1.7b,
mistral-7b, qwen3-coder-480b-a35b, glm-4.5, glm-4.5-air, glm-4.6, glm-4.7, and same-shape Hugging Face repositories of
bundled models; of these a100-sxm-40gb, l40s, h20, rtx-3090, rtx-a6000, rtx-4090, a10, h100-pcie and llama-3-8b,
llama-3-70b, llama-2-13b, qwen2.5-72b, qwen3-1.7b, qwen3-14b, mistral-7b, qwen3-coder-480b-a35b, glm-4.5, glm-4.5-air,
glm-4.7 landed). Collected before those files were in this tree, so nothing here was priced by the collector: the
rules below were fixed, and the rows written, before any prediction existed. Each entry is a Row's keyword arguments;
its `csv` entry is a row in validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as
validation prices such a row (the static-batch route, metric e2e_s: one batch of `batch` prompts of isl tokens
prefilled, then osl decode steps), as round 11's are. tools/blind_test.py skips, and lists with the reason, any row
whose device or model this tree cannot load, so the file works before and after the additions merge; a row that
loads but does not fit in memory is listed as refused, as round 11's are.

Search (2026-12-06, about 60 minutes), the leads in this order:
1. TensorRT-LLM's performance page at the commit round 11 cites (docs/source/performance.md @77d24b5f), read whole:
   its L40S tables.
2. Argonne's LLM-Inference-Bench at the commit round 11 cites (snapshot of argonne-lcf/LLM-Inference-Bench @4211f5d4):
   Plots/All_results.csv read whole; the A100 and MI250 scripts and READMEs (vLLM/A100, vLLM/MI250,
   TensorRT-LLM/A100) to place each device; ALCF's Polaris hardware page (argonne-lcf/user-guides) for the A100's
   memory. The paper (arXiv 2411.00136) is stored only as its first page (the search tool's pages corpus gives each
   page's beginning), so its hardware table was not read.
3. Speculative speedups on the new devices: hemingkx/Spec-Bench (snapshot @fd2c1cd, Leaderboard.md: its RTX 3090
   table), SafeAILab/EAGLE (snapshot; README only), the EAGLE and EAGLE-2 papers (arXiv 2401.15077, 2406.16858:
   only their first pages and third-party summaries are stored), the pages corpus for the papers' tables.
4. The issues corpus for H20 / L40S / RTX 4090 / L4 decode TPOT or speculative speedups (Qwen2.5-72B, DeepSeek-R1 on
   H20): two queries; what they returned is in CANDIDATES.

Inclusion rules, fixed before any prediction was run (round 11's, so the rounds compare, applied to the new devices
and models):
- TensorRT-LLM's performance page: every row of its "Peak Throughput" tables on a device being added (L40S, FP8) for
  a model specroof bundles or is adding (LLaMA 7B = Llama-2-7B, as round 11 read it): 4 rows. GPT-J (not bundled) and
  the batch-1 "1st Token Latency" tables (prefill only; round 11 left them out) are not rows. Each row's
  'Throughput (out tok/s/GPU)' is read back to the seconds of one static batch: batch x osl / (throughput x TP).
- LLM-Inference-Bench: every line of All_results.csv whose Framework is vLLM or TensorRT-LLM, whose Hardware maps to
  a device being added by what the repository says of where the runs were made, whose Model is bundled or being added
  (same config shape: Meta-Llama-3-8B -> llama-3-8b, Mistral-7B-v0.1 -> mistral-7b, Mixtral-8x7B-v0.1 ->
  mixtral-8x7b, Llama-2-7b/70b-hf -> llama-2-7b/70b), on the fewest GPUs the file gives for that model and device and
  framework (round 11: 7B on 1 GPU, 70B on 4), at 'Input Output Length' 128 or 1024, at every batch the file gives,
  duplicate lines included (round 11 scored both of its duplicates): 40 rows, all vLLM on 'Nvidia A100 GPU'.
  'Latency' is the seconds of one static batch after one warm-up batch (vLLM/A100/Throughput_measurement/
  benchmark_throughput.py: llm.generate of `batch` random prompts with ignore_eos, timed with perf_counter).
- A device is mapped only to a part in the list above as the source names it: 'AMD MI250 GPU' is an MI250 (the
  repository's own name and its JLSE queue gpu_amd_mi250), not an MI250X (a different part: 220 compute units
  against 208), so no MI250 line is a row.
- A row whose source is already a validation source (validation/rows.csv, validation/sources/*.csv, matched by file
  at any commit) is not blind and is listed, not taken (Spec-Bench's Leaderboard.md).
- Speculative rows need, in a stored copy with an address: the device, the model, the batch, the method's draft
  depth or tree, and a speedup or tokens/s; the acceptance length where published. None qualified (CANDIDATES).
- A row specroof refuses (does not fit in memory) is listed with its reason, not scored; a row whose device or model
  the tree cannot load is skipped and listed. Neither rule looks at a prediction.
- Nothing is tuned: the devices, models and engine profiles are those the merge brings, as shipped.
"""

from __future__ import annotations

from blind_rows_common import print_rows

# --- TensorRT-LLM performance page, L40S (v0.5 numbers) -------------------------------------------------------------
TRT_PERF_COMMIT = "77d24b5fa178f11ed7fafdd9833b7245e075f721"
TRT_PERF = f"https://github.com/NVIDIA/TensorRT-LLM/blob/{TRT_PERF_COMMIT}/docs/source/performance.md"
TRT_L40S_ASSUMED = (
    "TensorRT-LLM v0.5 (the L40S table's note: 'The following data is from TensorRT-LLM v0.5'; v0.5.0 of 2023-10, "
    "engine_date 2023-10), its TensorRT-engine C++ runtime with a static batch (gptSessionBenchmark --batch_size B "
    "--input_output_len isl,osl); 'LLaMA 7B' read as Llama-2-7B (the page's methodology: 'the GPT-J, Llama2-7b, and "
    "Llama2-70b benchmarks'); FP8 weights and FP8 KV cache (the table's heading 'L40S GPUs (FP8)' and the page's build "
    "commands --enable_fp8 --fp8_kv_cache); one L40S (TP 1); measured = batch x osl / (out tok/s/GPU x TP), the "
    "seconds of one static batch with its prefill")

# (batch, tp, isl, osl, out tok/s/GPU) as the 'L40S GPUs (FP8)' Peak Throughput table gives them for LLaMA 7B
_TRT_L40S = ((64, 1, 128, 128, 3240), (64, 1, 128, 2048, 1622), (32, 1, 2048, 128, 581), (16, 1, 2048, 2048, 531))


def _trt_rows() -> list[dict]:
    return [dict(
        name=f"llama-2-7b FP8, 1x L40S, TensorRT-LLM v0.5, static batch {b}, {isl}/{osl} (TRT-LLM perf page)",
        url=TRT_PERF,
        locator=f"Peak Throughput, 'L40S GPUs (FP8)' table (v0.5 data), row LLaMA 7B, batch {b}, TP {tp}, input {isl}, "
                f"output {osl}: {thr:,} out tok/s/GPU",
        metric="e2e_s", measured=b * osl / (thr * tp), assumed=TRT_L40S_ASSUMED,
        csv=dict(hardware="l40s", n_gpus=str(tp), tp=str(tp), engine="trtllm", engine_version="0.5.0",
                 engine_date="2023-10", model="llama-2-7b", precision="fp8", kv_precision="fp8", batch=str(b),
                 isl=str(isl), osl=str(osl)))
        for b, tp, isl, osl, thr in _TRT_L40S]


# --- Argonne LLM-Inference-Bench, vLLM on Polaris's A100 40 GB ------------------------------------------------------
ANL_COMMIT = "4211f5d4e9bc0145ed541b6d372d5d8223b44235"
ANL = f"https://github.com/argonne-lcf/LLM-Inference-Bench/blob/{ANL_COMMIT}/Plots/All_results.csv"
POLARIS = ("https://github.com/argonne-lcf/user-guides/blob/ff660ccf85811361ad78710ee9e1a7ef5900350b/"
           "docs/polaris/hardware-overview/machine-overview.md")
ANL_A100_ASSUMED = (
    "LLM-Inference-Bench (arXiv 2411.00136, Argonne); one static batch of `batch` random prompts of L tokens "
    "generating L tokens (input = output = the file's 'Input Output Length'), 'Latency' its seconds after one warm-"
    "up batch, prefill included; FP16 weights and KV cache (--dtype float16); TP = the file's 'Num of Hardware'. "
    "The A100 read as Polaris's A100 SXM4 40 GB: the vLLM A100 scripts "
    "(vLLM/A100/Throughput_measurement/benchmark_throughput.sh at the same commit) are PBS jobs with '-l "
    "filesystems=home:eagle:grand' and /lus/grand paths, ALCF's Polaris, whose nodes carry four A100s of 40 GiB "
    "HBM2 on NVLink (ALCF user guide, Polaris machine overview: 'A100 HGX (Polaris)': 160 GiB HBM2, NVLink 600 "
    f"GB/s; {POLARIS}); the paper's own hardware table was not read. vLLM version not stated: the scripts' "
    "requirements-cuda.txt pins vllm-flash-attn 2.6.1 and xformers 0.0.27.post2, vLLM 0.5.4-0.6.2's pins (estimate "
    "from those pins), so about 2024-09 (engine_date 2024-09, V0 engine, no async scheduling)")
# The file's model name -> (bundled or added model id, what the mapping assumed of the shape)
_ANL_MODELS = {
    "meta-llama/Llama-2-7b-hf": ("llama-2-7b", ""),
    "meta-llama/Meta-Llama-3-8B": ("llama-3-8b", "; Meta-Llama-3-8B (base) priced as llama-3-8b "
                                                 "(Meta-Llama-3-8B-Instruct: the same config shape)"),
    "mistralai/Mistral-7B-v0.1": ("mistral-7b", "; Mistral-7B-v0.1 priced as mistral-7b: if the bundled mistral-7b "
                                                "is a later version, it differs in vocabulary (32000 here) and "
                                                "rope_theta, and v0.1's 4096-token sliding window is wider than any "
                                                "context here"),
    "mistralai/Mixtral-8x7B-v0.1": ("mixtral-8x7b", "; Mixtral-8x7B-v0.1 (base) priced as mixtral-8x7b "
                                                    "(Mixtral-8x7B-Instruct-v0.1: the same config shape)"),
    "meta-llama/Llama-2-70b-hf": ("llama-2-70b", ""),
}

# (CSV line, file model, GPUs, L, batch, latency s) as the file gives them ('Nvidia A100 GPU', vLLM)
_ANL_A100 = (
    (705, "meta-llama/Llama-2-7b-hf", 1, 128, 1, 1.653030714020133),
    (708, "meta-llama/Llama-2-7b-hf", 1, 1024, 1, 13.976857989095151),
    (710, "meta-llama/Llama-2-7b-hf", 1, 128, 16, 2.012544585391879),
    (713, "meta-llama/Llama-2-7b-hf", 1, 1024, 16, 25.050500875338912),
    (715, "meta-llama/Llama-2-7b-hf", 1, 128, 32, 2.4537500143051147),
    (718, "meta-llama/Llama-2-7b-hf", 1, 1024, 32, 46.060668136924505),
    (720, "meta-llama/Llama-2-7b-hf", 1, 128, 64, 3.3304130705073476),
    (723, "meta-llama/Llama-2-7b-hf", 1, 1024, 64, 88.27552396524698),
    (785, "meta-llama/Meta-Llama-3-8B", 1, 128, 1, 1.8262675674632192),
    (788, "meta-llama/Meta-Llama-3-8B", 1, 1024, 1, 14.935714729130268),
    (790, "meta-llama/Meta-Llama-3-8B", 1, 128, 16, 2.1914984323084354),
    (793, "meta-llama/Meta-Llama-3-8B", 1, 1024, 16, 19.914405192248523),
    (795, "meta-llama/Meta-Llama-3-8B", 1, 128, 32, 2.611632961779833),
    (798, "meta-llama/Meta-Llama-3-8B", 1, 1024, 32, 26.35549126006663),
    (800, "meta-llama/Meta-Llama-3-8B", 1, 128, 64, 3.288689749315381),
    (803, "meta-llama/Meta-Llama-3-8B", 1, 1024, 64, 36.16201884392649),
    (825, "mistralai/Mistral-7B-v0.1", 1, 128, 1, 1.7235907139256597),
    (828, "mistralai/Mistral-7B-v0.1", 1, 1024, 1, 14.241763886995614),
    (830, "mistralai/Mistral-7B-v0.1", 1, 128, 16, 2.095530421473086),
    (833, "mistralai/Mistral-7B-v0.1", 1, 1024, 16, 20.104606724344194),
    (835, "mistralai/Mistral-7B-v0.1", 1, 128, 32, 2.5235794512555003),
    (838, "mistralai/Mistral-7B-v0.1", 1, 1024, 32, 27.656294180080295),
    (840, "mistralai/Mistral-7B-v0.1", 1, 128, 64, 3.2976775392889977),
    (843, "mistralai/Mistral-7B-v0.1", 1, 1024, 64, 39.67245783191174),
    (898, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 1, 1.3218348771333694),
    (901, "mistralai/Mixtral-8x7B-v0.1", 4, 1024, 1, 10.445169893093407),
    (903, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 16, 2.7030318370088935),
    (906, "mistralai/Mixtral-8x7B-v0.1", 4, 1024, 16, 24.475094039924443),
    (907, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 1, 1.3071838580071926),
    (911, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 32, 3.2677946714684367),
    (912, "mistralai/Mixtral-8x7B-v0.1", 4, 1024, 1, 10.344248563051224),
    (916, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 16, 2.6858885353431106),
    (918, "mistralai/Mixtral-8x7B-v0.1", 4, 1024, 32, 28.761001402512193),
    (920, "mistralai/Mixtral-8x7B-v0.1", 4, 128, 64, 3.8799251774325967),
    (923, "mistralai/Mixtral-8x7B-v0.1", 4, 1024, 64, 34.74562299437821),
    (925, "meta-llama/Llama-2-70b-hf", 4, 128, 1, 4.2852058708667755),
    (928, "meta-llama/Llama-2-70b-hf", 4, 1024, 1, 34.35250965692103),
    (930, "meta-llama/Llama-2-70b-hf", 4, 128, 16, 5.132634880952537),
    (933, "meta-llama/Llama-2-70b-hf", 4, 1024, 16, 115.86052067577839),
    (935, "meta-llama/Llama-2-70b-hf", 4, 128, 32, 5.787849617190659),
)


def _anl_rows() -> list[dict]:
    rows = []
    for line, hf, n, L, b, lat in _ANL_A100:
        model, shape_note = _ANL_MODELS[hf]
        rows.append(dict(
            name=f"{model} FP16, {n}x A100 40GB TP{n}, vLLM, static batch {b}, {L}/{L} (LLM-Inference-Bench)",
            url=ANL,
            locator=f"line {line}: 'Nvidia A100 GPU,{n},vLLM,{hf},{L},{b},{lat:.4f}...' (Latency, s)",
            metric="e2e_s", measured=lat, assumed=ANL_A100_ASSUMED + shape_note,
            csv=dict(hardware="a100-sxm-40gb", n_gpus=str(n), tp=str(n), engine="vllm",
                     engine_version="pip, about 0.5.4-0.6.2 (not stated)", engine_date="2024-09",
                     overlap_scheduler="false", model=model, precision="fp16", kv_precision="fp16", batch=str(b),
                     isl=str(L), osl=str(L))))
    return rows


ROUND20 = tuple(_trt_rows() + _anl_rows())

SPEC_BENCH = ("https://github.com/hemingkx/Spec-Bench/blob/fd2c1cd7d2201ef71db4c5f4e455008f017967bf/Leaderboard.md")
# (what was read, where, what it prints, why it is not a row)
CANDIDATES = (
    ("TensorRT-LLM performance page, 'Low Latency' L40S (FP8) table (v0.5)", TRT_PERF,
     "LLaMA 7B at batch 1, TP 1: 1st token latency 14 ms at input 128, 73 ms at input 2048",
     "a prefill alone at batch 1; round 11 left the first-token tables out and this round keeps its rule"),
    ("LLM-Inference-Bench, TensorRT-LLM on 'Nvidia A100 GPU' (Plots/All_results.csv)", ANL,
     "static-batch latency of Llama-2-7b, Meta-Llama-3-8B, Mistral-7B-v0.1 (1, 2, 4 GPUs), Llama-2-70b, "
     "Meta-Llama-3-70B, Mixtral-8x7B (4 GPUs) at 128/128 and 1024/1024, batch 1-64: 46 lines on the fewest GPUs "
     "(Qwen2-7B's left aside)",
     "the device's memory is nowhere stated for these runs: the TensorRT-LLM A100 scripts (TensorRT-LLM/A100/"
     "Benchmarking_Throughput/*.sh, tensorrt_llm==0.11.0) run from /vast/users/... paths of Argonne's JLSE testbed, "
     "not from Polaris (the vLLM A100 scripts' PBS job on the eagle and grand filesystems), so the 40 GB part cannot "
     "be assumed for them as it is for the vLLM lines"),
    ("LLM-Inference-Bench, vLLM on 'Nvidia A100 GPU' at 2 and 4 GPUs for the 7-8B models, and Qwen/Qwen2-7B", ANL,
     "the same static batches on more GPUs (Llama-2-7b, Meta-Llama-3-8B, Mistral-7B-v0.1 at TP 2 and 4; Qwen2-7B at "
     "TP 2 and 4)",
     "out by round 11's layout rule (the fewest GPUs the file gives: 7-8B on one); Qwen2-7B is neither bundled nor "
     "being added (its shape was not compared with qwen2.5-7b's from a stored config)"),
    ("LLM-Inference-Bench, vLLM on 'AMD MI250 GPU'", ANL,
     "static-batch latency of Llama-2-7b, Meta-Llama-3-8B, Mistral-7B-v0.1, Mixtral-8x7B (1 GPU), Llama-2-70b, "
     "Meta-Llama-3-70B (2 GPUs), Qwen2 at 128/128 and 1024/1024 (vLLM v0.6.1 ROCm build, vLLM/MI250/README.md)",
     "an MI250, not the MI250X being added: the repository names it 'AMD MI250' throughout and runs it on JLSE's "
     "gpu_amd_mi250 queue (vLLM/MI250/run-container.sh); the MI250 has 208 compute units to the MI250X's 220 (AMD's "
     "product pages, https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html and mi250x.html), so "
     "its peaks differ; a 'Num of Hardware' of 1 (Mixtral-8x7B FP16, 93 GB, on one) also reads as a whole two-die "
     "module"),
    ("Spec-Bench leaderboard on RTX 3090 (Vicuna-7B-v1.3, FP16, batch 1; EAGLE2 2.19x / 4.35, EAGLE 2.03x / 3.57, "
     "Medusa 1.44x / 2.32, SpS, PLD, Hydra ...)", SPEC_BENCH,
     "'## Leaderboard on 3090', 'a single NVIDIA GeForce RTX 3090 GPU (24GB)', PyTorch 2.5.1, overall speedup and "
     "#mean accepted tokens per method",
     "the same file is already a validation source (source spec-bench, its A100 table, in validation/rows.csv), so its "
     "rows are not blind (tests/test_validate.py refuses a blind row whose file is a validation source); after the "
     "merge they belong in validation, not here"),
    ("EAGLE (arXiv 2401.15077) and EAGLE-2 (arXiv 2406.16858) speedup tables (Vicuna, LLaMA2-Chat, LLaMA3-Instruct; "
     "RTX 3090 / A100)", "https://arxiv.org/abs/2401.15077",
     "the stored copies (the pages corpus: arXiv HTML and a text copy of the ICML paper) open only at their first "
     "page; the README of SafeAILab/EAGLE gives no table",
     "no table is readable in a stored copy with an address, so no device, tree, speedup or acceptance length could be "
     "read; third-party summaries quoting them are not primary"),
    ("tenstorrent/tt-inference-server issue #143 (Qwen2.5-72B-Instruct on 2x H100, vLLM reference run)",
     "https://github.com/tenstorrent/tt-inference-server/issues/143",
     "TPOT 30.9-31.3 ms at concurrency 1 for ISL 128-8192, OSL 128 / 1024",
     "the H100 form factor (80 GB SXM or 94 GB NVL: BF16 weights of 145 GB do not fit two 80 GB parts at vLLM's "
     "default memory fraction), the precision and the vLLM version are not stated in the stored excerpt"),
    ("H20 DeepSeek-R1 runs in the issues corpus (sgl-project/sglang PRs #7762 and #10027, antgroup/sglang PR #4)",
     "https://github.com/sgl-project/sglang/pull/10027",
     "bench_serving TPOT at concurrency 64 for DeepSeek-R1 in W4AFP8; an H20-96G best-practice thread",
     "W4AFP8 (4-bit expert weights with FP8 activations) is not a precision specroof prices; the GPU is not named in "
     "the #7762 / #10027 excerpts; the antgroup thread gives a blog's per-node totals with DeepEP and PD "
     "disaggregation, not a stated load"),
)


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced) and the candidates read but not taken."""
    head = (f"round 20: {len(ROUND20)} rows collected (priced by tools/blind_test.py once their devices and models "
            f"load); {len(CANDIDATES)} candidates not taken")
    return print_rows(head, ROUND20, CANDIDATES)


if __name__ == "__main__":
    raise SystemExit(main())
