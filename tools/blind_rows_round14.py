"""Round 14 (2026-12-06) of the blind test (tools/blind_test.py): published serving runs of MoE targets with MTP whose
acceptance length is printed at each load, to separate "the speculative step costs more under load than priced" from
"the acceptance length falls with load" (README, `moe-speculation-under-load-overpredicted`). Each entry is a Row's
keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row (the serving route: a closed loop of
`concurrency` requests of isl / osl tokens, metric tpot_s, the printed acceptance length as tau at k). Kept apart
from blind_test.py, as rounds 9 to 13 are; `python tools/blind_rows_round14.py` prints the table and the change of
the TPOT between the loads of one setup, predicted against measured.

Search (2026-12-06, the search tool's issues, code and pages corpora, find_string, and a snapshot of
sgl-project/sgl-cookbook at 7b5bd9c, its history searched with `git log -S "Accept length"`): SGLang bench_serving
result blocks ("Accept length: x.xx"), vLLM spec-decode metrics and trtllm-bench acceptance details at several
concurrencies or batch sizes, MoE or dense targets with MTP / EAGLE / EAGLE-3, on bundled devices and models. What was
found but not scored is in validation/BLIND_TEST.md (round 14).

Inclusion rules, fixed before any prediction was run (round 10's, with round 13's TPOT rows):
- A run is used when it is a speculative serving run on one bundled device, model and engine with its concurrency,
  lengths (or the totals they are read from), draft depth and acceptance length printed in the same result block, and
  when its block is readable in a stored copy with an address to cite. Its mean TPOT is a row, whatever the
  prediction; a plain run of the same layout and build, where one exists, would make a speedup row (none here does:
  the cookbook's throughput runs of the DeepSeek pages use DP attention and EP, another layout).
- The acceptance length printed for the run is used at that run's concurrency (tau at tau_k = k).
- Nothing is tuned: the engine profile, the model shapes and the devices as shipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

CB = "https://github.com/sgl-project/sgl-cookbook/blob"
CB_COMMON = (
    "SGLang's bench_serving as the page prints it; --speculative-algorithm EAGLE with --speculative-num-steps 3 "
    "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 is the target's own MTP (NextN) layer, a chain of "
    "k = 3; the printed 'Accept length' (tokens per verify step) used as tau at k = 3; input and output lengths are "
    "the block's totals over its requests (bench_serving's default random-range-ratio 0 draws them below the "
    "requested lengths; read as means, as validation maps the cookbook's other pages); mean TPOT scored as the "
    "serving model's steady-state tpot_s; the SGLang builds predate SpecV2 as the default (v0.5.11), so the "
    "speculative steps are priced with the V1 worker (engine_date)")
GLM5_URL = f"{CB}/f0d5bb844be8f44847a2f9387ee02d0f84c8731f/docs/autoregressive/GLM/GLM-5.md"
GLM5_ASSUMED = (
    "8x H200, zai-org/GLM-5-FP8 at --tp 8 (5.1 Test Environment; SGLang commit 947927bdb, page of 2026-02-11: "
    "engine_date 2026-02); FP8 weights (the checkpoint's format), KV cache BF16 (the page's command has no "
    "--kv-cache-dtype; its note calls FP8 KV optional); --mem-fraction-static 0.85 (section 4's command, the one "
    "the page deploys); random prompts (--dataset-name random); " + CB_COMMON)
DSV31_URL = f"{CB}/9c0de67631ab0f6b14314c9cc88fde4773e1c741/docs/autoregressive/DeepSeek/DeepSeek-V3_1.md"
DSV31_ASSUMED = (
    "8x MI300X, DeepSeek-V3.1-Terminus at --tp 8 (no DP attention on this run), SGLang 0.5.7 (the page of "
    "2026-01-15; engine_date 2026-01), priced as DeepSeek-V3 (the same DeepseekV3ForCausalLM shapes); FP8 weights "
    "(the checkpoint's format), KV cache BF16 (not stated); ShareGPT prompts (bench_serving's default dataset: "
    "--random-input-len is ignored without --dataset-name random; 1972 input and 2784 output tokens over 10 "
    "requests); the run was removed from the page on 2026-01-20 (39b594c); " + CB_COMMON)
DSV32_URL = f"{CB}/9faebf111c72931c29483dcb97fadde7f1ec5cb3/docs/autoregressive/DeepSeek/DeepSeek-V3_2.md"
DSV32_ASSUMED = (
    "8x B200, deepseek-ai/DeepSeek-V3.2-Exp at --tp 8, SGLang 0.5.6 (5.1 Test Environment; engine_date 2025-12), "
    "priced as the bundled deepseek-v3.2 shape (V3.2-Exp and V3.2 share the architecture); FP8 weights (the "
    "checkpoint's format), KV cache BF16 (not stated); ShareGPT prompts (as for DeepSeek-V3.1: 1972 input and "
    "2784 output tokens over 10 requests); " + CB_COMMON)

# (name, url, locator, assumed, tpot_s, csv)
_RUNS = (
    ("GLM-5 FP8, 8x H200 TP8, SGLang (947927bdb), MTP k=3 at tau 3.48, concurrency 1, random 610/422 (cookbook)",
     GLM5_URL, "5.1.1 Latency Benchmark: 'Max request concurrency: 1', 'Accept length: 3.48', 'Mean TPOT (ms): 7.54'; "
     "10 requests, 6101 input and 4220 generated tokens", GLM5_ASSUMED, 0.00754,
     dict(hardware="h200-sxm", n_gpus="8", tp="8", engine="sglang", engine_version="947927bdb",
          engine_date="2026-02", model="glm-5", precision="fp8", kv_precision="bf16", method="mtp", k="3",
          tau="3.48", tau_k="3", concurrency="1", isl="610", osl="422", memory_fraction="0.85")),
    ("GLM-5 FP8, 8x H200 TP8, SGLang (947927bdb), MTP k=3 at tau 3.50, concurrency 100, random 502/500 (cookbook)",
     GLM5_URL, "5.1.2 Throughput Benchmark: 'Max request concurrency: 100', 'Concurrency: 96.30', 'Accept length: "
     "3.50', 'Mean TPOT (ms): 38.73'; 1000 requests, 502493 input and 500251 generated tokens", GLM5_ASSUMED,
     0.03873,
     dict(hardware="h200-sxm", n_gpus="8", tp="8", engine="sglang", engine_version="947927bdb",
          engine_date="2026-02", model="glm-5", precision="fp8", kv_precision="bf16", method="mtp", k="3",
          tau="3.50", tau_k="3", concurrency="100", isl="502", osl="500", memory_fraction="0.85")),
    ("DeepSeek-V3.1-Terminus FP8, 8x MI300X TP8, SGLang 0.5.7, MTP k=3 at tau 2.58, concurrency 1, ShareGPT "
     "(cookbook)", DSV31_URL, "5.1.1 Latency-Sensitive Benchmark: 'Max request concurrency: 1', 'Accept length: "
     "2.58', 'Mean TPOT (ms): 11.00'; 10 requests, 1972 input and 2784 generated tokens", DSV31_ASSUMED, 0.01100,
     dict(hardware="mi300x", n_gpus="8", tp="8", engine="sglang", engine_version="0.5.7", engine_date="2026-01",
          model="deepseek-v3", precision="fp8", kv_precision="bf16", method="mtp", k="3", tau="2.58", tau_k="3",
          concurrency="1", isl="197", osl="278")),
    ("DeepSeek-V3.2-Exp FP8, 8x B200 TP8, SGLang 0.5.6, MTP k=3 at tau 2.46, concurrency 1, ShareGPT (cookbook)",
     DSV32_URL, "5.1.1 Latency-Sensitive Benchmark: 'Max request concurrency: 1', 'Accept length: 2.46', 'Mean TPOT "
     "(ms): 9.09'; 10 requests, 1972 input and 2784 generated tokens", DSV32_ASSUMED, 0.00909,
     dict(hardware="b200", n_gpus="8", tp="8", engine="sglang", engine_version="0.5.6", engine_date="2025-12",
          model="deepseek-v3.2", precision="fp8", kv_precision="bf16", method="mtp", k="3", tau="2.46", tau_k="3",
          concurrency="1", isl="197", osl="278")),
)


def _rows() -> list[dict]:
    return [dict(name=n, url=u, locator=loc, metric="tpot_s", measured=m, assumed=a, csv=c)
            for n, u, loc, a, m, c in _RUNS]


ROUND14 = tuple(_rows())


def main() -> int:
    """Price every row as validation does; print the table, then, for the setup priced at two loads, the change of
    TPOT from the lower load to the higher one (shape error = predicted change / measured change - 1, as
    simulator/shape.py defines it for ratio rows) and the same at the lower load's acceptance length."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from simulator.validation import predict_row
    out = ["| row | metric | measured | predicted | error |", "|---|---|---|---|---|"]
    pred = []
    for r in ROUND14:
        p = predict_row({"row_id": "blind", **r["csv"], "metric": r["metric"], "measured": repr(r["measured"])})
        pred.append(p)
        out.append(f"| [{r['name']}]({r['url']}) | {r['metric']} | {r['measured']:.4g} | {p:.4g} | "
                   f"{p / r['measured'] - 1.0:+.1%} |")
    lo, hi = ROUND14[0], ROUND14[1]
    same_tau = predict_row({"row_id": "blind", **hi["csv"], "tau": lo["csv"]["tau"], "metric": "tpot_s",
                            "measured": "1"})
    m_change, p_change = hi["measured"] / lo["measured"], pred[1] / pred[0]
    out += ["", f"GLM-5, concurrency 1 -> 100: measured TPOT x{m_change:.2f} (acceptance {lo['csv']['tau']} -> "
                f"{hi['csv']['tau']}), predicted x{p_change:.2f}: shape error {p_change / m_change - 1.0:+.1%}; "
                f"at the concurrency-1 acceptance for both x{same_tau / pred[0]:.2f}"]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
