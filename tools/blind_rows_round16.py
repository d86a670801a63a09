"""Round 16 (2026-12-06) of the blind test (tools/blind_test.py): round 14 continued with the search path its helper
found too late. The code index holds full-text dumps of SGLang's closed issues and PRs (front matter "source_id:
sglang-github-closed-issues-prs", captured 2026-06 to 2026-07) and other stored pages, and `find_string` on the exact
padded lines of a bench_serving result block reaches whole files where the issues corpus gives only excerpts. The
purpose is round 14's: MTP / EAGLE runs of one setup at two or more loads with the acceptance length printed at each
(best with plain twins at the same loads), to separate "the speculative step costs more under load than priced" from
"the acceptance length falls with load".

Inclusion rules, fixed before any prediction was run (round 14's, unchanged):
- A run is used when it is a speculative serving (or fixed-batch) run on one bundled device (hardware_specs/), model
  (models/, or a config of a bundled shape) and engine, with its concurrency or batch, lengths (or the totals they
  are read from), draft depth and acceptance length printed in the same result block, and when its block is readable
  in a stored copy with an address to cite and is absent from validation/ and from earlier blind rounds. Every number
  of a used source is a row, whatever the prediction; a plain run of the same layout and build makes a speedup row.
- The acceptance length printed for a run is used at that run's load (tau at tau_k = k).
- Nothing is tuned: the engine profile, the model shapes and the devices as shipped.

Outcome: no run qualified, so ROUND16 is empty and no prediction was run. CANDIDATES records every result block or
thread the search read that prints an acceptance length (or is a near miss of the goal), with the reason it was
refused; validation/BLIND_TEST.md (round 16) gives the search and the reading. `python tools/blind_rows_round16.py`
prints the list.
"""

from __future__ import annotations

from blind_rows_common import print_candidates

ROUND16: tuple[dict, ...] = ()

SG = "https://github.com/sgl-project/sglang"
IX = "https://github.com/SemiAnalysisAI/InferenceX"

# (what was read, where, what it prints, why it is not a row)
CANDIDATES = (
    ("SGLang issue #23896 (closed 2026-06-29)", f"{SG}/issues/23896",
     "DeepSeek-V4-Flash-FP8 on 4x H20-3e, 1000 random 1024/1024 prompts at --max-concurrency 100: TP4 MTP 3/1/4 accept "
     "2.86, mean TPOT 79.29 ms; TP4+DP4+DeepEP MTP 1/1/2 accept 1.97, 80.39 ms",
     "device (H20) and model (DeepSeek-V4-Flash) not bundled; one load per layout"),
    ("SGLang's Ascend NPU best-practice page (a stored copy; its repository path not named by the index)", "",
     "DeepSeek-R1 / Qwen3 on Atlas 800I A3 with NEXTN; bench_serving blocks with accept 2.84 at 25.78 in flight, "
     "2.59 at 27.19",
     "Ascend NPUs not bundled"),
    ("Kimi-K2.6 W4A8 EAGLE-3 notes (a stored copy, Chinese)", "",
     "16 Ascend NPUs, DP16 attention, 256 random 3500/1500 prompts at concurrency 64: accept 4.21 (TPOT 20.95 ms), "
     "4.56 for 'kimi2.7' (21.76 ms)",
     "device and models not bundled"),
    ("GCP G4 logs of GLM-5.1 and DeepSeek-V3.2-NVFP4 (stored copies)", "",
     "RTX PRO 6000 nodes at --max-concurrency 512: accept 2.87 (DeepSeek-V3.2-NVFP4, TPOT 106.03 ms), 3.25 (GLM-5.1 "
     "NVFP4, 73.82 ms); 3.21-3.70 in other logs with the same prompt totals",
     "RTX PRO 6000 not bundled; one load each"),
    ("Notes at SGLang commit 282c461 (a stored copy, Chinese)", "",
     "accept 2.07 at 148.8 in flight (1024/1024, TPOT 50.07 ms), 4.61 at 167.2 (3.5k/1.5k, 39.27 ms)",
     "model and GPU not stated"),
    ("SGLang docs, DeepSeek-V4 page (a stored copy)", "", "accept 2.73 and 2.96 at concurrency 1",
     "DeepSeek-V4 not bundled"),
    ("SpecForge issue #164", "https://github.com/sgl-project/SpecForge/issues/164",
     "Qwen3-235B-A22B BF16 on 8x H100 TP8 with EP, plain: HumanEval 1103.4 tokens/s, GSM8K (1000 questions, parallel "
     "48) 939.8 tokens/s; EAGLE-3 5/8/32 launched",
     "the speculative results are not in any stored copy (the excerpt ends at the launch command)"),
    ("SGLang issue #22986 (open)", f"{SG}/issues/22986",
     "gpt-oss-120b with and without EAGLE-3 (lmsys/EAGLE3-gpt-oss-120b-bf16, topk 1, 4 draft tokens)",
     "GPU and results not in the stored excerpt"),
    ("SGLang PR #16818 (DFlash)", f"{SG}/pull/16818",
     "average accept length by TP 1-8 and concurrency 1-32, 6.29-6.44 in every cell (the table before the H200 "
     "section)",
     "no throughput table in the stored copy (round 6's finding); evidence of flat acceptance only"),
    ("InferenceX PR #3289 (Klaud Cold image update)", f"{IX}/pull/3289",
     "DeepSeek-R1-0528 FP8, 8x H200 TP8, SGLang v0.5.19, MTP 2/1/3, 8k/1k: mean TPOT 7.1, 10.32, 15.52, 23.92, "
     "37.55 ms at 4, 8, 16, 32, 64",
     "no acceptance length printed (InferenceX's golden acceptance curves cover DeepSeek-V4, GLM-5.2, Kimi, MiniMax "
     "and Qwen3.5, not R1); its plain twin (PR #3010, same image) has no v0.5.19 numbers in the stored excerpt"),
    ("vLLM bench-serve 'Speculative Decoding' blocks in the code index", "",
     "acceptance length 1.3-3.8; where the file names its setup: Gemma-4-26B-A4B and Nemotron-3-Super on DGX Spark "
     "GB10, Ornith-1.5 on RTX 5090 / PRO 5000, Qwen3.8-27B on RTX PRO 4000",
     "devices and models not bundled where named, the rest name no model or GPU in the part read; request-rate or "
     "single loads"),
    ("sgl-project/sgl-cookbook history (snapshot 7b5bd9c, `git log -S 'Accept length'`)",
     "https://github.com/sgl-project/sgl-cookbook",
     "no page of a bundled model other than round 14's (GLM-5, DeepSeek-V3 / V3.1 / V3.2) ever printed an accept "
     "length; the GPT-OSS, Qwen3 and Llama-3.1 / 3.3 pages did not",
     "nothing new"),
)


def main() -> int:
    """Print the round's candidates and why each was refused; no run qualified, so nothing is priced."""
    return print_candidates(16, ROUND16, CANDIDATES, "run")


if __name__ == "__main__":
    raise SystemExit(main())
