"""Round 21 (2026-12-07) of the blind test (tools/blind_test.py): published measurements on the devices and models added
on 2026-12-07 (devices h20, l40s, l4, a10, rtx-a6000, rtx-3090, rtx-4090, h100-pcie, a100-sxm-40gb, mi350x; models
llama-3-8b, llama-3-70b, llama-2-13b, qwen2.5-72b, qwen3-1.7b, qwen3-14b, mistral-7b, qwen3-coder-480b-a35b,
glm-4.5, glm-4.5-air, glm-4.7 and their same-shape repositories), searched after round 20 found none on the H20 and no
speculative speedup on the PCIe parts. The rules below were fixed, and the rows written, before any prediction was run;
no cell of either source was priced before this file was committed. Each entry is a Row's keyword arguments; its
`csv` entry is a row in validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as
validation prices such a row: the serving route for a bench_serving block (round 17's), the speculative-step route for
a decode instance's throughput at a stated batch (tokens_per_s_per_gpu = batch x tokens per step / step / GPUs).

Search (2026-12-07, about 45 minutes), the brief's leads in this order:
1. H20: the LMSYS blog 'Together with SGLang: Best Practices for Serving DeepSeek-R1 on H20-96G' (2025-09-26), read
   whole from the code index (lm-sys/lm-sys.github.io blog/2025-09-26-sglang-ant-group.md @8cc5b763; round 20 had
   only the antgroup/sglang PR #4 excerpt); the issues corpus for H20 serving runs of DeepSeek-V3/R1 and Qwen3-235B
   (SGLang PRs #5196, #5846, #6885, #7631, #9660, vLLM PRs #19205, #19315, #19401); find_string on the blog's
   sentences; the SGLang cookbook mirror (sgl-project/sgl-cookbook @7b5bd9c, `git grep` over every page for 'H20'
   and for result blocks).
2. PCIe / workstation parts: the issues and pages corpora for EAGLE / n-gram / draft-model speedups and plain decode at
   a stated batch on L40S, L4, A10, RTX 4090, RTX 3090, RTX A6000 (vLLM, SGLang, llama.cpp threads, blog posts).
3. The new models elsewhere: the cookbook's GLM-4.5, GLM-4.7 and Qwen3-Coder pages (and their history), the issues
   corpus for GLM-4.5 / 4.6 MTP TPOT with a layout, and Qwen2.5-72B / Llama-3-70B speculative speedups.
What was read and not taken is in CANDIDATES (`python tools/blind_rows_round21.py` prints it).

Inclusion rules, fixed before any prediction was run (rounds 14 / 17 / 19 / 20's, applied to the new devices and
models):
- A source is used when it gives, on a bundled device and a bundled or same-shape model, the GPU type and count, the
  layout (TP / attention DP / EP), the engine and its version or date, the prompt and output lengths, and a batch
  (per GPU or per instance) or a max concurrency, with a TPOT, latency or throughput at it, readable in a stored copy
  with an address, and is absent from validation/rows.csv, validation/sources/*.csv, validation/not_mapped.csv and
  the earlier rounds.
- Every measurement of a used source is a row, whatever the prediction. A number that restates another of the same
  layout, batch and configuration is scored once (the blog's 675 tok/s/GPU at batch 32, EP16, MTP 1-1-2 is printed
  in its table and twice in its text; its '5.7k output tokens per second' per node is 714 x 8). A number specroof
  has no metric for is listed, not scored: ablation gains of named kernels (FP8 MLA, SwapAB, SBO, affinity EPLB), a
  prefill-only burst's input throughput at no stated concurrency, a GSM8K run's throughput at no stated concurrency.
- bench_serving blocks: round 17's four metrics per block, mean TTFT (ttft_s), mean TPOT (tpot_s), mean E2E latency
  (e2e_s) and output throughput per GPU (tokens_per_s_per_gpu = the block's output throughput / GPUs), at the max
  concurrency, with the run's mean lengths as isl and osl (round 9's mapping of the cookbook: totals over requests)
  and num_prompts for TTFT and E2E; the block's other lines restate these and are not scored twice.
- A prefill/decode-disaggregated decode instance's throughput per GPU at a stated batch per GPU (the blog's median of
  100 'Decode batch' log lines at one batch size) is the speculative step's tokens_per_s_per_gpu at the instance's
  batch (batch per GPU x attention-DP ranks), context = isl + osl / 2.
- SGLang's (steps s, topk 1, draft tokens s + 1) with the model's NextN layer is MTP with k = s. Where a source gives
  the acceptance length of a configuration as a range, its midpoint is tau for every row of that configuration, the
  range stated; where none is given, the method's default (as validation prices such rows).
- A row specroof refuses (it does not fit in memory, or a layout it cannot price on the device) is listed with its
  reason, not scored; the rule keys on the refusal, not on any error. A row whose device or model this tree cannot
  load is skipped and listed (round 20's triage).
- Nothing is tuned: devices, models and engine profiles as shipped.
"""

from __future__ import annotations

from blind_rows_common import print_rows, unloadable
from blind_rows_common import refusal as common_refusal

# --- LMSYS blog: DeepSeek-R1 on H20-96G (Ant Group), decode instances of attention DP + EP with MTP ---------------
LMSYS_COMMIT = "8cc5b763fe8316ec5221d0cb65078c9ee89ed4e5"
LMSYS_URL = f"https://github.com/lm-sys/lm-sys.github.io/blob/{LMSYS_COMMIT}/blog/2025-09-26-sglang-ant-group.md"
_LMSYS_COMMON = (
    "DeepSeek-R1 (DeepseekV3ForCausalLM, the bundled deepseek-r1) on HGX H20-96G (the blog's spec table: 96 GB, "
    "4000 GB/s, NVLink 900 GB/s; the bundled h20), SGLang v0.5.2 ('SGLang version: v0.5.2') with the Ant Group "
    "patches the blog names (FP8 FlashMLA, DeepGEMM swapAB, single-batch overlap, expert-affinity EPLB; none priced "
    "apart); engine_date 2025-09 (SpecV1 worker, no SpecV2); FP8 block weights (the checkpoint's), KV cache FP8 "
    "(the blog's 'end-to-end FP8 attention' with 'FP8 Q/KV'; read as the decode instances' setting, an assumption "
    "for the EP-size and MTP studies, whose build is not restated: their 675 tok/s at batch 32 equals the "
    "deployment table's); prefill/decode disaggregated (prefill on separate TP8 nodes), the decode instance "
    "'--tp-size 16 --dp-size 16 --enable-dp-attention --enable-deepep-moe --deepep-mode low_latency' = tp 1, "
    "attention DP 16, EP 16 on two 8-GPU nodes (EP32: four nodes, DP 32); random prompts of 4096 tokens generating "
    "1536 ('--random-input 4096 --random-output 1536 --random-range-ratio 1'), context 4096 + 1536 / 2 = 4864; the "
    "throughput is the median of 100 'Decode batch' log lines at the batch size (the blog's Metrics paragraph), read "
    "as one rank's generation throughput, i.e. per GPU, at that many requests per GPU; MTP = '--speculative-"
    "algorithm NEXTN' with (steps, topk 1, draft tokens steps + 1), k = steps; tau = the midpoint of the blog's "
    "accept-length range for the configuration ('(steps=1, topK=1, draft-tokens=2) -> Accept length ~ 1.8-1.9', "
    "2-1-3 ~ 2.4-2.7, 3-1-4 ~ 2.9-3.3): 1.85, 2.55, 3.1")
_TAU = {1: "1.85", 2: "2.55", 3: "3.1"}
# (what, the blog's words, batch per GPU, EP = DP, MTP steps, tok/s per GPU)
_LMSYS = (
    ("'Decode Deployment' table, InferX Base",
     "| **InferX Base** | 48 | 1 | 1 | 2 | 714 |", 48, 16, 1, 714.0),
    ("'Decode Deployment' table, InferX Pro",
     "| **InferX Pro** | 32 | 1 | 1 | 2 | 675 |", 32, 16, 1, 675.0),
    ("'Decode Deployment' table, InferX Max",
     "| **InferX Max** | 12 | 2 | 1 | 3 | 423 |", 12, 16, 2, 423.0),
    ("'Investigation for EP size', EP16 at batch 8 (MTP 1-1-2, the decode Base config: assumed)",
     "'at BS=8, EP32 delivers 293 tokens/s vs. 278 tokens/s for EP16'", 8, 16, 1, 278.0),
    ("'Investigation for EP size', EP32 at batch 8 (MTP 1-1-2, the decode Base config: assumed)",
     "'at BS=8, EP32 delivers 293 tokens/s vs. 278 tokens/s for EP16'", 8, 32, 1, 293.0),
    ("'Investigation for EP size', EP32 at batch 32 (MTP 1-1-2, the decode Base config: assumed)",
     "'at BS=32, EP16 achieves 675 tokens/s vs. 585 tokens/s for EP32'", 32, 32, 1, 585.0),
    ("'Config for MTP', batch 1, steps 1 (EP16: the deployment's layout, assumed)",
     "'at BS=1, throughput increases from 43 tokens/s (steps=1, topK=1, draft-tokens=2)'", 1, 16, 1, 43.0),
    ("'Config for MTP', batch 1, steps 3 (EP16: the deployment's layout, assumed)",
     "'to 52 tokens/s (steps=3, topK=1, draft-tokens=4), a ~21% gain'", 1, 16, 3, 52.0),
    ("'Config for MTP', batch 32, steps 3 (EP16, assumed; the text labels it 'steps=1, topK=1, draft-tokens=2', "
     "which is the 675 it is compared with: read as the higher draft setting the sentence is about, 3-1-4)",
     "'At BS=32, throughput drops from 675 tokens/s ... to 554 tokens/s ... a ~18% loss'", 32, 16, 3, 554.0),
)


def _lmsys_rows() -> list[dict]:
    rows = []
    for what, quote, b, ep, k, tps in _LMSYS:
        rows.append(dict(
            name=f"DeepSeek-R1 FP8, {ep}x H20 attention DP{ep} EP{ep} (PD decode), SGLang 0.5.2+, MTP k={k} at tau "
                 f"{_TAU[k]}, batch {b}/GPU, 4096/1536 (LMSYS H20 blog)",
            url=LMSYS_URL, locator=f"{what}: {quote} (throughput per GPU, tokens/s)",
            metric="tokens_per_s_per_gpu", measured=tps, assumed=_LMSYS_COMMON,
            csv=dict(hardware="h20", n_gpus=str(ep), tp="1", dp=str(ep), ep=str(ep), engine="sglang",
                     engine_version="0.5.2 + Ant Group patches (blog)", engine_date="2025-09", model="deepseek-r1",
                     precision="fp8", kv_precision="fp8", method="mtp", k=str(k), tau=_TAU[k], batch=str(b * ep),
                     context=str(4096 + 1536 // 2))))
    return rows


# --- SGLang cookbook, Qwen3-Coder-480B-A35B on 8x MI300X (TP8, EP2), bench_serving ---------------------------------
CB_COMMIT = "bc138141af7e9adcc6855142ba7328d2142c188c"
CB_URL = f"https://github.com/sgl-project/sgl-cookbook/blob/{CB_COMMIT}/docs/autoregressive/Qwen/Qwen3-Coder.md"
_CB_COMMON = (
    "8x MI300X, Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8 at '--tp 8 --ep 2' (5.1 Test Environment: 'Tensor "
    "Parallelism: 8', 'Expert Parallelism: 2', 'sglang version: 0.5.7'; the benchmark section came with the page "
    "on 2026-01-30, sgl-cookbook e887fa9, so engine_date 2026-01), priced as the bundled qwen3-coder-480b-a35b (the "
    "Instruct repository; the FP8 one is its block-FP8 quantisation, same shapes) with FP8 weights, attention TP8 and "
    "the experts in 2 EP groups of 4-way MoE TP; KV cache BF16 (not stated); the server runs SGLANG_USE_AITER=0 "
    "(the AMD AITER kernels off), --context-length 8192, --page-size 32; bench_serving --dataset-name random "
    "--random-input-len 1000 --random-output-len 1000 with the default range ratio (lengths drawn below the "
    "requested ones): isl and osl are the block's totals over its requests (round 9's mapping of the cookbook's "
    "DeepSeek-V3.1 page, whose random runs print the same 6101 / 39668 / 158939 input totals); plain decoding; "
    "output throughput per GPU = the block's 'Output token throughput' / 8")
# (section, concurrency, prompts, input total, output total, mean TTFT ms, mean TPOT ms, mean E2E ms, out tok/s,
#  line of the TPOT)
_CB = (("5.1.1.1 Low Concurrency", 1, 10, 6101, 4220, 191.93, 17.06, 7376.26, 57.19, 356),
       ("5.1.1.2 Medium Concurrency", 16, 80, 39668, 40805, 388.94, 29.41, 14966.88, 468.83, 413),
       ("5.1.1.3 High Concurrency", 64, 320, 158939, 170134, 372.97, 62.98, 32716.53, 956.80, 470))


def _cookbook_rows() -> list[dict]:
    rows = []
    for sec, c, n, tin, tout, ttft, tpot, e2e, otps, line in _CB:
        isl, osl = round(tin / n), round(tout / n)
        for metric, value, printed in (("ttft_s", ttft / 1000.0, f"Mean TTFT (ms): {ttft:.2f}"),
                                       ("tpot_s", tpot / 1000.0, f"Mean TPOT (ms): {tpot:.2f}"),
                                       ("e2e_s", e2e / 1000.0, f"Mean E2E Latency (ms): {e2e:.2f}"),
                                       ("tokens_per_s_per_gpu", otps / 8.0,
                                        f"Output token throughput (tok/s): {otps:.2f}")):
            rows.append(dict(
                name=f"Qwen3-Coder-480B-A35B FP8, 8x MI300X TP8 EP2, SGLang 0.5.7, random {isl}/{osl}, "
                     f"concurrency {c} (cookbook)",
                url=CB_URL,
                locator=f"{sec}: 'Max request concurrency: {c}', '{printed}' (the block's TPOT at line {line}); "
                        f"{n} requests, {tin} input and {tout} generated tokens",
                metric=metric, measured=value, assumed=_CB_COMMON,
                csv=dict(hardware="mi300x", n_gpus="8", tp="8", ep="2", engine="sglang", engine_version="0.5.7",
                         engine_date="2026-01", model="qwen3-coder-480b-a35b", precision="fp8",
                         concurrency=str(c), isl=str(isl), osl=str(osl),
                         num_prompts=str(n) if metric in ("ttft_s", "e2e_s") else "")))
    return rows


ROUND21 = tuple(_lmsys_rows() + _cookbook_rows())


# The layout refusal round 21's rules name (a collective across scale-up domains of a device without a scale-out
# figure); memory refusals ("infeasible") are blind_rows_common.refusal's own; any other error is raised (review).
LAYOUT_REFUSAL = ("scale-out bandwidth is not published",)


def refusal(r: dict) -> str:
    """specroof's reason for refusing row `r` under this round's rules, or '' when it is priced."""
    return common_refusal(r, LAYOUT_REFUSAL)


def triage(rows: tuple[dict, ...]) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(the rows scored, (name, reason) of each row skipped (device or model not loadable) or refused)."""
    why = [unloadable(r) or refusal(r) for r in rows]
    return (tuple(r for r, w in zip(rows, why) if not w),
            tuple((r["name"], w) for r, w in zip(rows, why) if w))


SG = "https://github.com/sgl-project/sglang"
# (what was read, where, what it prints, why it is not a row)
CANDIDATES = (
    ("LMSYS H20 blog, numbers not of a priced kind", LMSYS_URL,
     "prefill: '16.5k input tokens per second' per node at 4096-token inputs (TP8, 512 prompts, output 1, no max "
     "concurrency); decode ablations: FP8 MLA '+16.9% at BS=56', SwapAB '+8.1% at BS=2 and +7.7% at BS=4', SBO "
     "'+8%-10%' at BS 20-56, affinity EPLB '~5%'; '5.7k output tokens per second' per node; the prefill, decode, EP "
     "and MTP charts (images)",
     "the prefill figure is a burst of 512 prompts at an unbounded rate (no concurrency or batch to price); the "
     "ablations compare kernels specroof does not price apart; 5.7k = 714 x 8 restates the InferX Base row; the "
     "charts are images"),
    ("SGLang PRs adding H20 fused-MoE configs with bench_serving before/after blocks (#7631 DeepSeek-V3-0324 TP8 and "
     "Qwen3-235B-A22B-FP8 TP4, #6885 DeepSeek-V3-0324 TP8, #5196 DeepSeek-R1 TP16, #5846 Qwen3-235B-FP8 TP4)",
     f"{SG}/pull/7631",
     "random 1024/512 at max concurrency 8, 200 prompts (#7631, #6885): durations 171.49 / 202.64 s without the "
     "tuned config; a with-config block (duration 163.34 s, mean TTFT 256.53 ms, mean ITL 22.99 ms) whose section "
     "the excerpt does not name; #5846: output tok/s before/after at 1000-2000, 5000-1000, 10000-500; #5196: request "
     "and output throughput only",
     "the issues corpus's ~2,000-character excerpts cut every block before its TPOT lines or before naming which "
     "model's section it is, and no stored copy holds the whole description (find_string finds none of its lines), "
     "so not every number of the source can be read; #5846 states no concurrency; #5196 runs --disable-cuda-graph-"
     "padding on two nodes at an unstated load"),
    ("H20-3e runs (vLLM PRs #19205, #19315, #19401; SGLang PRs #6835, #8344)", "https://github.com/vllm-project/vllm/"
     "pull/19205", "DeepSeek-R1-0528, Qwen3-235B-A22B(-FP8), Qwen3-Coder-480B on 'H20-3e' at concurrency 8-10",
     "'H20-3e is H20 GPU with 141G memory': not the bundled 96 GB h20 (its memory and bandwidth differ)"),
    ("SGLang PR #9660 (single-batch overlap)", f"{SG}/pull/9660",
     "a bench_serving block at max concurrency 512, 10240 prompts of 4096 / 1536 tokens (the H20 blog's lengths), "
     "mean ITL 73.11 ms, output 6667.06 tok/s",
     "the GPU, its count and the layout (PD disaggregation, DP, EP) are not in the stored excerpt"),
    ("AutoSpec, SGLang PR #22246", f"{SG}/pull/22246",
     "throughput per static speculative config and batch (round 19's reading)",
     "no stored excerpt states the device (round 19); unchanged"),
    ("SGLang PR #14457 (GLM-4.6 MTP defaults)", f"{SG}/pull/14457",
     "GLM-4.6 BF16 / FP8 at TP8, MTP (5 4 8) vs (1 3 4): acceptance 2.02-2.08, 83-106 tok/s at one request",
     "GLM-4.6 is not bundled (no same_shape_repos entry) and the GPU is not stated in the excerpt"),
    ("SGLang cookbook GLM-4.5 and GLM-4.7 pages (sgl-cookbook @7b5bd9c and their history)",
     "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/docs/autoregressive/"
     "GLM/GLM-4.7.md", "deployment and bench_serving commands for MI300X / MI325X / MI355X at concurrency 1 / 16 / "
     "64-100, no result block at any commit ('git log -S' on the pages)", "no measurement"),
    ("SGLang cookbook Qwen3-Coder page, GSM8K runs", CB_URL,
     "'Output throughput: 1148.425 token/s' (MI300X), '2065.515 token/s' (B200, tp 8, ep 2), NVFP4 on B200",
     "few_shot_gsm8k at its default parallelism: no concurrency, lengths or layout per run stated for the AMD one"),
    ("PCIe / workstation speculative and plain decode (issues and pages corpora)",
     "https://github.com/vllm-project/vllm/issues/16258",
     "vLLM n-gram at batch 10 (GPU not stated); llama.cpp speculative runs on RTX 3090 / 4090 / 4060 (GGUF Q4-Q8); "
     "EAGLE fr-spec on an A100 40 GB (vLLM #24343, Llama-3.1-8B, batch 1, the EAGLE baseline priced elsewhere)",
     "no GPU stated (vLLM #16258); llama.cpp and GGUF quantisations are not an engine or precision specroof prices; "
     "vLLM #24343 compares a draft-vocabulary trim (fr-spec) specroof does not model and gives no plain run of the "
     "same build; nothing on L40S, L4, A10, RTX A6000 or RTX 4090 with a stated vLLM / SGLang / TensorRT-LLM build"),
    ("Not blind: the cookbook's other pages for bundled models (Qwen3-235B-A22B-Instruct-2507 on 8x B200, 9 runs; "
     "MiniMax-M2.5 and GPT-OSS on 8x B200; Llama-4-Scout on MI300X)",
     "https://github.com/sgl-project/sgl-cookbook/blob/7b5bd9c05e3d86da5161ac2be9b91c19a34bf49d/docs/autoregressive/"
     "Qwen/Qwen3.md", "plain bench_serving blocks at concurrency 1 / 16 / 64-100",
     "blind and unscored, but outside this round's scope (round 9 left them for scope; not new devices or models): a "
     "lead for validation or a later round"),
)


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced) and the candidates read but not taken."""
    head = f"round 21: {len(ROUND21)} rows collected; {len(CANDIDATES)} candidates not taken"
    return print_rows(head, ROUND21, CANDIDATES)


if __name__ == "__main__":
    raise SystemExit(main())
