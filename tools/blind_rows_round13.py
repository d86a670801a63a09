"""Round 13 (2026-12-06) of the blind test (tools/blind_test.py): the first rows of a DeepSeek-Sparse-Attention model,
GLM-5-FP8 served by vLLM with MTP on 8x H200, after specroof began to read glm_moe_dsa / deepseek_v32 configs and
price the DSA indexer (simulator/sparse_attention.py). Each entry is a Row's keyword arguments; its `csv` entry is a
row in validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as validation prices such a
row (the serving route: a closed loop of `concurrency` requests of isl / osl tokens, metric tpot_s). Kept apart from
blind_test.py, as rounds 9 to 11 are; `python tools/blind_rows_round13.py` prints the table and its error summary.

Search (2026-12-06, the SemiAnalysisAI/InferenceX mirror and InferenceX-app, the search tool's issues corpus): rows
of DeepSeek-V3.2 / V3.2-Exp, GLM-5 / 5.1 on bundled devices with the lengths, concurrency, layout and engine stated.
Found: InferenceX's experimental token-position study of GLM-5 (PR #709, its results JSON in the repository). Not
found: plain-decode (no MTP) runs of the same study, and any DeepSeek-V3.2 or GLM-5.1 results file; the main
InferenceX recipes (benchmarks/*/glm5*, dsv4*) carry launch scripts, not results, and InferenceX-app's stored
snapshot holds no benchmarks.json fixture.

Inclusion rules, fixed before any prediction was run:
- Every results file of experimental/token_position_decode_slo/glm-5/results at the commit below is a row (52: input
  lengths 1024 to 16384, concurrency 4 to 64; the 10240 sweep has no 48 / 64 files), whatever its prediction; its
  median_tpot is the measured value.
- Nothing is tuned: the engine profile, the glm-5 shape (CONSTRUCTED, models/index.toml) and h200-sxm as shipped.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

IX_COMMIT = "843c6254ff69b567f772f6a5fd97675af3d04431"
IX_DIR = f"https://github.com/SemiAnalysisAI/InferenceX/blob/{IX_COMMIT}/experimental/token_position_decode_slo/glm-5"
IX_PR = "https://github.com/SemiAnalysisAI/InferenceX/pull/709"
ASSUMED = (
    "8x H200 (PR #709: 'Ran on 8xH200 with vLLM nightly'), read as h200-sxm; vllm/vllm-openai:nightly of 2026-02-13 "
    "(the files' dates; engine_date 2026-02); zai-org/GLM-5-FP8 at --tensor-parallel-size 8 (serve_glm5_sbatch.sh), "
    "FP8 weights (the checkpoint's format) and a BF16 KV cache (no --kv-cache-dtype: 'auto'); MTP with "
    "--speculative-config.num_speculative_tokens 1 (k = 1), acceptance not published (the method's default); the "
    "client (bmk_glm5_sbatch.sh, benchmark_serving_random.py): random prompts of isl tokens, 128 output tokens with "
    "--ignore-eos, --request-rate inf at --max-concurrency c, 10 c prompts after 2 c warm-ups, read as a closed loop "
    "of c requests; the published median TPOT is scored as specroof's tpot_s (the serving model's mean over the "
    "steady state)")

# (isl, concurrency, median_tpot s), from the results files (json key median_tpot), rounded to 6 digits
_GLM5 = (
    (1024, 4, 0.021372), (1024, 8, 0.024733), (1024, 16, 0.033615), (1024, 32, 0.042854), (1024, 48, 0.07293),
    (1024, 64, 0.087862),
    (2048, 4, 0.023298), (2048, 8, 0.026277), (2048, 16, 0.038231), (2048, 32, 0.077068), (2048, 48, 0.105965),
    (2048, 64, 0.129909),
    (4096, 4, 0.02822), (4096, 8, 0.031568), (4096, 16, 0.069294), (4096, 32, 0.123753), (4096, 48, 0.18144),
    (4096, 64, 0.208493),
    (6144, 4, 0.033322), (6144, 8, 0.051598), (6144, 16, 0.095598), (6144, 32, 0.174878), (6144, 48, 0.210949),
    (6144, 64, 0.213959),
    (8192, 4, 0.039712), (8192, 8, 0.062005), (8192, 16, 0.11806), (8192, 32, 0.205225), (8192, 48, 0.212484),
    (8192, 64, 0.210915),
    (10240, 4, 0.04509), (10240, 8, 0.071895), (10240, 16, 0.141052), (10240, 32, 0.204209),
    (12288, 4, 0.049639), (12288, 8, 0.086762), (12288, 16, 0.169959), (12288, 32, 0.201367), (12288, 48, 0.206447),
    (12288, 64, 0.206517),
    (14336, 4, 0.05721), (14336, 8, 0.097535), (14336, 16, 0.191375), (14336, 32, 0.205518), (14336, 48, 0.214533),
    (14336, 64, 0.212387),
    (16384, 4, 0.057871), (16384, 8, 0.103911), (16384, 16, 0.199603), (16384, 32, 0.203544), (16384, 48, 0.20987),
    (16384, 64, 0.21122),
)


def _rows() -> list[dict]:
    rows = []
    for isl, c, tpot in _GLM5:
        f = f"glm5_fp8_vllm_tp8_isl{isl}_osl128_conc{c}.json"
        rows.append(dict(
            name=f"GLM-5 FP8, 8x H200 TP8, vLLM nightly, MTP k=1, concurrency {c}, {isl}/128 (InferenceX)",
            url=f"{IX_DIR}/results/{f}", locator=f"results/{f}: median_tpot {tpot}", metric="tpot_s", measured=tpot,
            assumed=ASSUMED,
            csv=dict(hardware="h200-sxm", n_gpus="8", tp="8", engine="vllm", engine_version="nightly (2026-02-13)",
                     engine_date="2026-02", model="glm-5", precision="fp8", kv_precision="bf16", method="mtp", k="1",
                     concurrency=str(c), isl=str(isl), osl="128")))
    return rows


ROUND13 = tuple(_rows())


def _summary(errs: list[float]) -> str:
    med = statistics.median(abs(e) for e in errs)
    return (f"median |error| {med:.1%}, median signed {statistics.median(errs):+.1%}, "
            f"{sum(abs(e) <= 0.2 for e in errs)} of {len(errs)} within 20 %")


def main() -> int:
    """Price every row as validation does; print the table, then the errors by concurrency and by input length."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from simulator.validation import predict_row
    out = ["| row | metric | measured | predicted | error |", "|---|---|---|---|---|"]
    errs, by_c, by_isl = [], {}, {}
    for r in ROUND13:
        p = predict_row({"row_id": "blind", **r["csv"], "metric": r["metric"], "measured": repr(r["measured"])})
        e = p / r["measured"] - 1.0
        errs.append(e)
        by_c.setdefault(int(r["csv"]["concurrency"]), []).append(e)
        by_isl.setdefault(int(r["csv"]["isl"]), []).append(e)
        out.append(f"| [{r['name']}]({r['url']}) | {r['metric']} | {r['measured']:.4g} | {p:.4g} | {e:+.1%} |")
    out += ["", f"All {len(errs)} rows: {_summary(errs)}."]
    out += [f"- concurrency {c}: {_summary(v)}" for c, v in sorted(by_c.items())]
    out += [f"- isl {i}: {_summary(v)}" for i, v in sorted(by_isl.items())]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
