"""Round 15 (2026-12-06) of the blind test (tools/blind_test.py): published fixed-batch latencies with no serving queue,
against batch, at a prompt long enough that the prefill pass is a large share of the run. vLLM's
benchmarks/benchmark_latency.py times one llm.generate() of `batch` prompts of isl tokens with max_tokens = osl and
ignore_eos: one prefill pass over batch x isl tokens, then osl - 1 decode steps, no arrivals and no queue. Each entry is
a Row's keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row (the static-batch route, `static_batch`:
metric e2e_s = the prefill pass plus the decode steps integrated over the context). Kept apart from blind_test.py, as
rounds 9-13 are.

Search (2026-12-06, the search tool's issues and pages corpora and find_string): SGLang bench_one_batch outputs
('Prefill. latency', 'Decode.  median latency'), vLLM benchmark_latency 'Avg latency' tables and trtllm-bench latency
reports for bundled models on bundled devices, several batch sizes preferred, absent from validation/sources/*.csv,
validation/not_mapped.csv and BLIND_TEST.md. What was found but not scored is in BLIND_TEST.md's round-15 section.

Inclusion rules, fixed before the table was run (six cells of the two sources, batch 1, 8 and 64, were priced once
beforehand only to check that the static-batch route takes a Mixtral row; the rules below take every number of both
sources, so no row was chosen or dropped on its error):
- vLLM PR #2542 ("Fused MOE for Mixtral", pcmoritz, 2024-01-22): every batch of both of its tables, "This PR" (the
  fused MoE kernel that was merged) and "Compare to master" (the build before it): Mixtral-8x7B-Instruct-v0.1, TP8 on
  H100, `benchmark_latency.py --input-len 1000 --output-len 50 -tp 8 --num-iters 100 --batch-size <bs>`, bs 1-64:
  14 rows.
- vLLM PR #3240 ("adding fused moe kernel config for A100 TP2", sahilsuneja1, 2024-03-06): every batch of both of its
  tables, "This PR" (a tuned fused-MoE config for TP2 on A100) and "Compared to master" (the default config):
  Mixtral-8x7B-Instruct-v0.1, TP2, the same command with -tp 2, bs 1-64: 14 rows.
- A row specroof refuses (a static batch that does not fit in memory) is listed with its reason, not scored; the rule
  is on the refusal, not on any error.
- Nothing is tuned; the engine profiles, models and devices are the shipped ones. Both builds predate the vLLM
  profile's valid_from (legacy scope): vLLM's V0 engine of early 2024 (Python scheduler and sampler between steps, no
  async scheduling: overlap_scheduler false).
No SGLang bench_one_batch 'Prefill. latency' line or trtllm-bench latency report for a bundled model on a bundled
device with its GPU stated was found in the stored corpora (BLIND_TEST.md lists what was seen); so the prefill pass
is read here through the share of it in these runs (about half of the priced run at batch 64), not as its own metric.
The static-batch route also prices ttft_s (the prefill pass of batch x isl tokens alone, `static_batch`'s ttft_s), so
a published bench_one_batch prefill latency needs no new metric: a row with metric ttft_s, batch, isl and osl.
"""

from __future__ import annotations

from blind_rows_common import split

# --- vLLM PR #2542: Mixtral-8x7B, TP8, H100 ------------------------------------------------------------------------
PR2542 = "https://github.com/vllm-project/vllm/pull/2542"
PR2542_ASSUMED = (
    "vLLM main of 2024-01-22 (engine_date 2024-01, V0 engine); "
    "Mixtral-8x7B-Instruct-v0.1 in BF16 with a BF16 KV cache (the checkpoint's torch_dtype, dtype auto: not stated); "
    "H100 read as the 80 GB SXM part (h100-sxm; form factor not stated), TP8 as the command gives; measured = the "
    "'bs=N: X s' line, benchmark_latency's average seconds of one static batch of N prompts of 1000 tokens generating "
    "50 tokens each (prefill included)")
# (table, batch, seconds) as the description gives them
_PR2542 = (
    ("This PR", 1, 0.459), ("This PR", 2, 0.515), ("This PR", 4, 0.610), ("This PR", 8, 0.813),
    ("This PR", 16, 1.044), ("This PR", 32, 1.489), ("This PR", 64, 2.419),
    ("Compare to master", 1, 0.590), ("Compare to master", 2, 0.631), ("Compare to master", 4, 0.709),
    ("Compare to master", 8, 0.838), ("Compare to master", 16, 1.086), ("Compare to master", 32, 1.615),
    ("Compare to master", 64, 2.727),
)

# --- vLLM PR #3240: Mixtral-8x7B, TP2, A100 ------------------------------------------------------------------------
PR3240 = "https://github.com/vllm-project/vllm/pull/3240"
PR3240_ASSUMED = (
    "vLLM main of 2024-03-06 (engine_date 2024-03, V0 engine); Mixtral-8x7B-Instruct-v0.1 in BF16 with a BF16 KV "
    "cache (dtype auto: not stated); 'A100' read as the 80 GB SXM part (a100-sxm-80gb: the BF16 weights, 93 GB, do "
    "not fit two 40 GB parts; SXM not stated), TP2 as the command gives; measured = the 'BS: N, Avg latency: X "
    "seconds' line, one static batch of N prompts of 1000 tokens generating 50 each (prefill included)")
_PR3240 = (
    ("This PR", 1, 0.7621450612053741), ("This PR", 2, 1.0328856136795366), ("This PR", 4, 1.4489717756788014),
    ("This PR", 8, 2.0341408042260447), ("This PR", 16, 2.893355064672651), ("This PR", 32, 4.530912061399431),
    ("This PR", 64, 7.537396909691161),
    ("Compared to master", 1, 0.8453641083685216), ("Compared to master", 2, 1.1280082573764958),
    ("Compared to master", 4, 1.6140852882619947), ("Compared to master", 8, 2.348028304380132),
    ("Compared to master", 16, 3.5489811494306194), ("Compared to master", 32, 5.627054951939499),
    ("Compared to master", 64, 9.691197272467543),
)

_SOURCES = (
    (PR2542, PR2542_ASSUMED, _PR2542, "h100-sxm", "H100", 8, "2024-01", "main 2024-01-22 (PR #2542)", "bs={b}: {s}s"),
    (PR3240, PR3240_ASSUMED, _PR3240, "a100-sxm-80gb", "A100", 2, "2024-03", "main 2024-03-06 (PR #3240)",
     "BS: {b}, Avg latency: {s} seconds"),
)


def _rows() -> list[dict]:
    rows = []
    for url, assumed, table, hw, dev, tp, date, version, line in _SOURCES:
        for which, b, s in table:
            build = "fused MoE" if which == "This PR" else "master"
            rows.append(dict(
                name=f"Mixtral-8x7B BF16, {tp}x {dev} TP{tp}, vLLM {date} ({build}, PR #{url.rsplit('/', 1)[1]}), "
                     f"static batch {b}, 1000/50",
                url=url, locator=f"description, '{which}': '{line.format(b=b, s=s)}' (benchmark_latency, input 1000, "
                                 f"output 50, -tp {tp})",
                metric="e2e_s", measured=s, assumed=assumed,
                csv=dict(hardware=hw, n_gpus=str(tp), tp=str(tp), engine="vllm", engine_version=version,
                         engine_date=date, overlap_scheduler="false", model="mixtral-8x7b", precision="bf16",
                         kv_precision="bf16", batch=str(b), isl="1000", osl="50")))
    return rows


ROUND15, REFUSED = split(_rows())   # REFUSED: (name, reason), listed, not scored
