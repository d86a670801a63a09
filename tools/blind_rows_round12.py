"""Round 12 (2026-12-06) of the blind test (tools/blind_test.py): rows found by a research helper's search for
published speculative-decoding speedups against batch or concurrency absent from the repository, after round 11.
Each entry is a Row's keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row (engine_date as there). Kept apart from
blind_test.py, as rounds 9-11 are.

Search (2026-12-06, the search tool's issues, pages, code and docs corpora, find_string over stored repository
files, and the snapshots of vllm-project/vllm-project.github.io, sgl-project/SpecForge, gpustack/gpustack,
sgl-project/sglang (ChangLiu0709+sglang), z-lab/dflash, vllm-project/speculators, vllm-project/recipes and
ROCm/rocm-blogs): EAGLE-3, MTP, n-gram, draft-model, suffix and DFlash speedups at several batch sizes or
concurrencies under vLLM, SGLang and TensorRT-LLM on bundled devices and models, 2025-2026, with the baseline run
of the same setup. What was found but not scored is in validation/BLIND_TEST.md (round 12) and the helper's report.

Inclusion rules, fixed before any prediction was run (round 10's):
- A source is used when it gives, on one bundled device, model and engine, a speculative speedup (or a plain and a
  speculative rate of the same run) at a stated batch or concurrency, and when its numbers are readable in a stored
  copy with an address to cite. Every such number of the source is a row, whatever the prediction.
- The acceptance length is used where the source publishes it for the same configuration; none here does.
- A speedup is the ratio of the two published rates (not the rounded printed ratio) where both are published.
- Nothing is tuned: drafter shapes are the method's default where the source gives no config the repository
  bundles.

Source: NVIDIA/TensorRT-LLM PR #12130 (merged 2026-03-12), 'Suffix Automaton Global Pool Performance Analysis --
EAGLE3 with gpt-oss-120b': gpt-oss-120b with the gpt-oss-120b-Eagle3 drafter, TP8 on 8x H200, MT-Bench (80
samples), 2048-token outputs; baseline and EAGLE-3 output tokens/s at batch 1, 4, 8, 16, 32, 64 and 128 (the
table's other columns add the suffix automaton, which no bundled method prices). The PR's stored description (the
issues corpus) gives the section's model, drafter, TP, GPU and dataset but its excerpt ends before the table; the
table's numbers were read from a stored research note that quotes it cell for cell ('N-gram / prompt-lookup
speculative drafting: evidence outside the GitHub trackers', 2026-09-27, section 1.2, in the code index; its
repository is not named by the index, so the PR is the cited source).
"""

from __future__ import annotations

TRT_12130 = "https://github.com/NVIDIA/TensorRT-LLM/pull/12130"
TRT_12130_ASSUMED = (
    "TensorRT-LLM main of March 2026 (the PR merged 2026-03-12; engine_date 2026-03), its PyTorch backend with the "
    "profile's defaults (overlap scheduler, CUDA graphs, fusions); gpt-oss-120b as the checkpoint ships it (experts "
    "MXFP4, the rest BF16), KV cache BF16 (not stated); TP8 attention and MoE (no expert parallelism stated); the "
    "nvidia/gpt-oss-120b-Eagle3 drafter priced as the eagle3 method's default one-layer head; max_draft_len not "
    "stated in the stored copy: 3 assumed (TensorRT-LLM's own gpt-oss Eagle3 guide, docs/source/blogs/tech_blog/"
    "blog11_GPT_OSS_Eagle3.md, sets max_draft_len: 3); acceptance not published in the stored copy: the EAGLE-3 "
    "default at k = 3; 80 MT-Bench prompts at the batch as max concurrency, priced as a run of 80 equal requests "
    "(speedup.waves: the batch-64 run is a wave of 64 and one of 16, the batch-128 run one wave of 80); context "
    "1124 = an MT-Bench prompt of about 100 tokens plus half of the 2048-token output (estimate); the speedup is "
    "EAGLE3 over baseline output tokens/s at the batch, the decode phase's ratio as validation prices such a run")

# (batch, baseline tok/s, EAGLE3 tok/s, printed speedup) as the table gives them
_CELLS = ((1, 370.45, 731.33, "1.97"), (4, 1244.39, 2195.98, "1.76"), (8, 2175.31, 3601.65, "1.66"),
          (16, 3761.68, 5523.94, "1.47"), (32, 5594.57, 7303.50, "1.31"), (64, 7585.72, 11305.00, "1.49"),
          (128, 11806.55, 11820.91, "1.00"))


def _trt_rows() -> list[dict]:
    return [dict(
        name=f"gpt-oss-120b EAGLE-3, 8x H200 TP8, TensorRT-LLM (Mar 2026), MT-Bench, batch {b} (PR #12130)",
        url=TRT_12130,
        locator=f"'Suffix Automaton Global Pool Performance Analysis -- EAGLE3 with gpt-oss-120b', batch size {b}: "
                f"baseline {base:,.2f} tok/s, EAGLE3 {spec:,.2f} ({printed}x); read through a stored note quoting "
                "the table",
        metric="speedup", measured=spec / base, assumed=TRT_12130_ASSUMED,
        csv=dict(hardware="h200-sxm", n_gpus="8", tp="8", engine="trtllm", engine_version="main (PR #12130)",
                 engine_date="2026-03", model="gpt-oss-120b", precision="bf16", expert_precision="mxfp4",
                 kv_precision="bf16", method="eagle3", k="3", batch=str(b), num_prompts="80", context="1124"))
        for b, base, spec, printed in _CELLS]


ROUND12 = tuple(_trt_rows())
