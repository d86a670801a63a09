"""Round 19 (2026-12-06) of the blind test (tools/blind_test.py): speculative decoding on MoE targets against batch size
with the acceptance known (published per draft depth, or pinned by the engine), the shape specroof is least sure of
(hazard `moe-speculation-under-load-overpredicted`: priced MoE speedups dip near batch 8 and rise toward 64, published
curves fall).

Search (2026-12-06, about 40 minutes), three leads in this order:
1. SGLang PR #22246 (AutoSpec with SpecV2), its predecessor PR #17749 and RFC issue #15319: the search tool's issues
   corpus, queried with a dozen different table fragments and setup words; find_string on the tables' rows and the
   description's sentences (the thread is not in the code index, so only the issues corpus's ~2,000-character
   excerpts are readable).
2. The SGLang cookbook's GLM-5.2 benchmark cells (sgl-project/sglang
   docs/src/snippets/configs/zai-org/glm-5.2-benchmarks.jsx, read whole with read_file), whose speculative cells pin
   the acceptance length with SGLANG_SIMULATE_ACC_LEN; GLM-5.2's config.json fields (find_string "index_topk_freq").
3. InferenceX's forced-acceptance runs: golden_al_distribution/ and every file naming SGLANG_SIMULATE_ACC_LEN,
   synthetic_acceptance_length or TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS in the mirror at 843c6254
   (2026-08-21), and its experimental/ result folders.

Inclusion rules, fixed before any prediction was run (round 14's, with the acceptance pinned as a published
acceptance):
- A source is used when it gives, on one bundled device, model and engine, with the GPU type and count and the layout
  (TP / EP / DP) stated, a throughput, TPOT or speedup at a stated batch size or concurrency, and the acceptance
  length of that configuration either published next to it or pinned by the engine (SGLANG_SIMULATE_ACC_LEN, vLLM's
  synthetic_acceptance_length, TensorRT-LLM's TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS + 1), and when its numbers
  are readable in a stored copy with an address to cite. Every number of a used source is a row (no picking),
  whatever the prediction; a plain run of the same layout and build at the same load makes a speedup row.
- The model must be bundled, or its config.json must have the same fields and values as a bundled model's (the shape
  specroof prices); otherwise the source is refused with the reason.
- Nothing is tuned: the engine profiles, model shapes and devices as shipped.

Outcome: no source qualified, so ROUND19 is empty and no prediction was run. CANDIDATES records every source read,
with what it prints and why it was refused; validation/BLIND_TEST.md (round 19) gives the reading.
`python tools/blind_rows_round19.py` prints the list.
"""

from __future__ import annotations

from blind_rows_common import print_candidates

ROUND19: tuple[dict, ...] = ()

SG = "https://github.com/sgl-project/sglang"
GLM52_JSX = (f"{SG}/blob/0130812083f55cc6a342b64b8feda0b189fcd452/"
             "docs/src/snippets/configs/zai-org/glm-5.2-benchmarks.jsx")
IX = "https://github.com/SemiAnalysisAI/InferenceX/blob/843c6254ff69b567f772f6a5fd97675af3d04431"

# (what was read, where, what it prints, why it is not a row)
CANDIDATES = (
    ("SGLang PR #22246, 'Add AutoSpec ... (Support SpecV2)' (description of 2026-04-07)", f"{SG}/pull/22246",
     "'Raw Throughput (tok/s) - 3-run average' at BS = 1, 2, 4, 8, 16, 32, 64 for static configs 1_1_2 .. 6_1_7 "
     "(speculative_num_steps, topk, num_draft_tokens) and AutoSpec. Qwen3-235B-A22B + EAGLE: 1_1_2 162 .. 3353, "
     "2_1_3 188 .. 3693, 3_1_4 195 .. 3555, 4_1_5 199 .. 3400, 5_1_6 199 .. 3222, 6_1_7 188 .. 3054 (BS 1 .. 64); "
     "measured best steps 4-5 at BS 1 (199, a tie), 4 at BS 2, 8 and 16 (333 against 332 at BS 2), 3-4 at BS 4 "
     "(572, a tie), 3 at BS 32, 2 at BS 64. GLM-4.7-FP8 + EAGLE: 1_1_2 130 .. 3391, 3_1_4 195 .. 4106, "
     "5_1_6 210 at BS 1 (its BS 64 cell and the 6_1_7 row are cut off in the stored excerpt); the description: "
     "'GLM-4.7-FP8 performs best with step=7 at BS=1 but step=3 at BS=64'",
     "in every stored excerpt (about a dozen issues-corpus queries; the thread is not in the code index) no GPU type "
     "or count, no TP / EP, no SGLang commit, no drafter checkpoint and no dataset is stated; no acceptance length "
     "per config is published (the description names only 'the throughput-vs-accept-length trade-off') and there is "
     "no plain-decoding baseline; GLM-4.7 (Glm4MoeForCausalLM) is not bundled"),
    ("SGLang PR #17749 (AutoSpec for spec v1, 2026-01-26) and RFC issue #15319 (2025-12-17)",
     f"{SG}/pull/17749",
     "#17749: the modifications (--auto-spec, --speculative-config-file, per-step CUDA graphs); #15319: the motivation "
     "and one figure of throughput against speculative_num_steps and batch size",
     "no numbers in the stored excerpts (the RFC's curve is an image); no acceptance per step"),
    ("SGLang cookbook, GLM-5.2 benchmark cells (glm-5.2-benchmarks.jsx; PR #31609)", GLM52_JSX,
     "H200 FP8 (8 GPUs, one node), low-latency (EAGLE MTP 5-1-6, SGLANG_SIMULATE_ACC_LEN=3.5, v0.5.14 @ "
     "49e384ce): TPOT 5.05 ms at concurrency 1, 16.11 ms at 16 (random 8192/1024); balanced (DP8 + DeepEP, the "
     "comment says '1-1-2 EAGLE' at ACC_LEN 2, the NVFP4 block's comment 'balanced MTP 2-1-3'): 23.49 ms "
     "at 64, 28.08 ms at 256; high-throughput (DP8, no speculation): 61.71 ms at 1024; B200 and GB300 cells alike",
     "GLM-5.2 is not bundled and glm-5 is not its shape: GLM-5.2's config.json has index_topk_freq 4 with "
     "indexer_types 'shared' (layers reusing another layer's top-k), head_dim 192, max_position_embeddings 1048576 "
     "and rope_theta 8e6 (quoted from huggingface.co/zai-org/GLM-5.2/blob/main/config.json by a stored release "
     "note), and specroof refuses shared indexers (simulator/sparse_attention.py; models/index.toml's glm-5 entry). "
     "Even with the shape, no speculative cell has a plain twin at its concurrency and layout (speculation at 1 / 16 "
     "in the low-latency recipe and 64 / 256 under DP8 + DeepEP, the plain cell at 1024 under DP8)"),
    ("InferenceX golden acceptance curves and forced-acceptance recipes",
     f"{IX}/golden_al_distribution/README.md",
     "golden AL per draft length for DeepSeek-V4, GLM-5.2, Kimi-K2.5, Kimi-K3, MiniMax-M3 and Qwen3.5 (e.g. "
     "glm5.2_mtp.yaml, B300 vLLM MTP, thinking on: 1.84 at 1 token .. 4.06 at 8); srt-slurm recipes with "
     "SGLANG_SIMULATE_ACC_LEN for deepseek-v4, glm5.2 and qwen3.5 (agentic workloads)",
     "no curve or recipe is for a bundled model, and the mirror holds no result of a forced-acceptance run (results "
     "are ingested into InferenceX-app's database, docs/results-and-ingestion.md; experimental/ has none)"),
    ("SpecForge issue #339 and AngelSlim issue #163 (Qwen3-30B-A3B EAGLE-3 on H100, plain and speculative "
     "throughput at batch 1-64 with the accept length per config)",
     "https://github.com/sgl-project/SpecForge/issues/339",
     "the closest shape to the round's question found by the searches",
     "already validation sources (qwen3-30b-a3b-eagle3-user-reports in validation/rows.csv)"),
)


def main() -> int:
    """Print the round's candidates and why each was refused; no source qualified, so nothing is priced."""
    return print_candidates(19, ROUND19, CANDIDATES, "source")


if __name__ == "__main__":
    raise SystemExit(main())
