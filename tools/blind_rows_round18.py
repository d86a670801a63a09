"""Round 18 (2026-12-06) of the blind test (tools/blind_test.py): published speculative-decoding speedups (and the
plain and speculative rates they come from) against batch size or concurrency, from vendor and engine publications,
absent from validation/ and from rounds 1-17.

Search (2026-12-06, about 45 minutes): the search tool's pages, issues and docs corpora (NVIDIA developer blog and
forum, TensorRT-LLM tech blogs, AMD ROCm blogs, vLLM / Red Hat / LMSYS / SGLang posts, hpc-ai.com, GPUStack's
performance lab, vLLM and SGLang PRs and issues); find_string on table headers ("| Concurrency | Baseline",
"| Batch Size | Baseline", "tok/s | EAGLE-3 tok/s | Speedup", "| Baseline | EAGLE3 | Speedup"); read_file on
NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog (blog7, blog11); and snapshots of vllm-project/vllm-project.github.io
(_posts through 2026-08-21), sgl-project/sgl-cookbook (2026-05-01) and ROCm/rocm-blogs (the stored snapshot stops in
October 2024). lm-sys/lm-sys.github.io is too large to fetch (567 MB).

Inclusion rules, fixed before any prediction was run (round 12's, unchanged):
- A source is used when it gives, on one bundled device, model and engine, a speculative speedup (or a plain and a
  speculative rate of the same run) at a stated batch or concurrency, and when its numbers are readable in a stored
  copy with an address to cite. Every such number of the source is a row, whatever the prediction.
- The acceptance length is used where the source publishes it for the same configuration.
- A speedup is the ratio of the two published rates (not the rounded printed ratio) where both are published.
- Nothing is tuned: drafter shapes are the method's default where the source gives no config the repository bundles.

Outcome: no source qualified, so ROUND18 is empty and no prediction was run. CANDIDATES records every source read
that publishes (or was expected to publish) a speculative speedup at a load, with the reason it was refused;
validation/BLIND_TEST.md (round 18) gives the reading. `python tools/blind_rows_round18.py` prints the list.
"""

from __future__ import annotations

from blind_rows_common import print_candidates

ROUND18: tuple[dict, ...] = ()

VL = "https://github.com/vllm-project/vllm"

# (what was read, where, what it prints, why it is not a row)
CANDIDATES = (
    ("E2E Networks' EAGLE-3 write-up, quoted by a stored explainer (the index does not name its repository)", "",
     "Llama-3.1-8B-Instruct with an EAGLE-3 head under SGLang on one A100, 5 steps / top-k 8 / 32 verify tokens; "
     "four-task averages (GSM8K, HumanEval, MATH500, MT-Bench) 569 -> 1,312 tok/s at batch 4 (2.30x), 1,069 -> 2,102 "
     "at 8 (1.97x), 3,252 -> 3,186 at 32 (0.98x); MT-Bench 562 -> 1,292 at batch 4, 1.12x at 32",
     "no address to cite: E2E Networks' own post is in no stored copy and the explainer gives no link (round 12 read "
     "PR #12130 through a note but cited the PR, whose stored description confirmed the setup); nor can its build, "
     "its A100 variant (40 GB is not bundled) or whether 'batch' is a running cap be checked. The one curve of the "
     "round that reaches below 1.0x on a dense 8B target"),
    ("GPUStack performance lab, 'Optimizing Qwen3-8B Latency on NVIDIA H100 GPUs'",
     "https://docs.gpustack.ai/latest/performance-lab/qwen3-8b/h100-latency",
     "ShareGPT mean latency at BS 1, 2, 4, 8: 1.66, 1.68, 1.68, 1.78 s baseline against 0.62, 0.71, 0.77, 1.10 s "
     "optimized (2.7x, 2.4x, 2.2x, 1.6x)",
     "the baseline is vLLM with BF16 weights, the optimized run SGLang with Qwen3-8B-FP8 and EAGLE-3 (4/4/16): the "
     "ratio mixes engine, precision and speculation, so it is no speculative speedup"),
    ("vLLM PR #20591 ([Meta] Llama4 EAGLE Support) and PR #20788 (EAGLE multimodal on Llama 4)", f"{VL}/pull/20591",
     "Llama-4-Scout with a dense EAGLE head, TP4, vllm serve at max-num-seqs 128 and a benchmark run",
     "an unreleased internal drafter, the GPU not stated, and the result blocks cut off in the stored excerpt"),
    ("vLLM issue #17812 (tracking benchmark for V1 EAGLE) and the PRs it links", f"{VL}/issues/17812",
     "links to PR #16937 (offline MT-Bench, H100 BS1), PR #17202 (online serving), PR #25916 (chat endpoint), "
     "PR #24344 (ngram-eagle)",
     "#16937 and #17202 are validation sources already; #25916 and #24344 have no results in any stored copy"),
    ("hpc-ai.com, 'SGLang Speculative Decoding Tutorial: ... 1.4x Throughput - With Benchmarks'",
     "https://hpc-ai.com/blog/SGLang_speculative_decoding",
     "DeepSeek-R1/V3 MTP under SGLang, a benchmark section promised in the title",
     "the stored copy ends before its benchmark section (pages corpus: opening excerpt only)"),
    ("TensorRT-LLM tech blog 11 (GPT-OSS-120B with Eagle3 on GB200/B200)",
     "https://github.com/NVIDIA/TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/blog11_GPT_OSS_Eagle3.md",
     "a deployment guide (max_draft_len 3, TP8 EP4, max_batch_size 10)",
     "no measurement: it 'intentionally omits ... benchmarking content'"),
    ("vLLM blog, speculators posts (v0.3.0 2025-12-13, v0.5.0 2026-05-28, parallel drafting 2026-07-28) and the "
     "Laguna-XS2 DFlash post", "https://github.com/vllm-project/vllm-project.github.io/tree/main/_posts",
     "speedups over concurrency in figures; the parallel-drafting post's one table lists drafters and A100 hardware",
     "figures only; targets on A100 (Qwen3-8B P-EAGLE, Qwen3-30B-A3B DFlash, gemma-4-31B DSpark) with no numbers"),
    ("AMD ROCm blog, 'Enabling Speculative Speculative Decoding on MI300X' (2026-05-29)",
     "https://rocm.blogs.amd.com/artificial-intelligence/ssd_mi300x/README.html",
     "Llama-3.1-70B target (TP4) with a Llama-3.2-1B draft on a fifth MI300X: 225.86 tok/s with SSD, 4.32x over "
     "autoregressive and 1.64x over standard speculative decoding",
     "speculative speculative decoding (a draft on separate hardware, pre-computed branches) is no bundled method, "
     "the five-GPU split no layout specroof prices, and the stored excerpts give one configuration, not a curve"),
    ("Research note 'N-gram / prompt-lookup speculative drafting: evidence outside the GitHub trackers' "
     "(2026-09-27; round 12's route to TensorRT-LLM PR #12130)", "",
     "PR #12130's table again; TensorRT-LLM PR #11434 / Baseten's MTP + suffix-automaton post (DeepSeek-V3.1-NVFP4 "
     "on 8x B200, one request); consumer-GPU llama.cpp runs",
     "PR #12130 is round 12's; #11434 was refused in round 12 (which primary holds the table is unconfirmed); "
     "consumer devices not bundled"),
)


def main() -> int:
    """Print the round's candidates and why each was refused; no source qualified, so nothing is priced."""
    return print_candidates(18, ROUND18, CANDIDATES, "source")


if __name__ == "__main__":
    raise SystemExit(main())
