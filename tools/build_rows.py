"""Build validation/rows.csv: the published measurements mapped to specroof scenario rows.

Run by hand from the repository root, `python tools/build_rows.py`; its output (validation/rows.csv and
validation/not_mapped.csv) is committed. The output is deterministic: the same inputs give the same bytes.

Inputs (all shipped in validation/):
- published_measurements.csv: the project's first collection; 44 rows were mapped from it (and from vLLM issue
  #20780) before this script read anything else. Their mapping below is unchanged, and so are their ids S001-S044.
- sources/decode.csv, sources/speculative.csv, sources/serving.csv: later collections (SOURCES.md says where every
  number comes from). Each staged row is either mapped to one rows.csv row or listed in not_mapped.csv with the
  reason.

Row ids: S001-S044 the first 44 rows; then S045... the rows of speculative.csv, D001... those of decode.csv, V001...
those of serving.csv, each in (source_id, staged row) order. The first 44 rows stay at the top of the file (tests and
examples read its first rows).

Mapping rules (README "Mapping rules" explains them; every decision a source does not state is written into the row's
`notes`):
1. Bundled names only. hardware, engine and model must be bundled (`specroof models` lists the models); a drafter goes
   into `draft` only when the source's drafter is the bundled one, else `draft` is empty (the method's bundled or
   synthesized head) and the notes say so. Rows that fail are not mapped.
2. A load point. A row needs a fixed batch or a client max concurrency (with isl/osl when published). Rows measured at
   a request rate (QPS), with all prompts offered at once, or where the source shows the running batch below the
   concurrency (queueing, ITL plateau) are not mapped: their decode batch is unknown.
3. Known parallelism. tp = attention tensor-parallel size of one instance, dp = attention data-parallel ranks, ep =
   expert-parallel size, n_gpus = GPUs of the serving unit (prefill + decode for disaggregated serving, which is
   what InferenceX divides throughput by). Rows whose layout is not stated are not mapped.
4. Metrics keep their published meaning. An E2E latency (fixed batch or per request) stays e2e_s; a speedup that
   includes prefill is e2e_speedup; ratios at matched interactivity are throughput_ratio. Only unit conversions and
   the arithmetic written in the notes are applied.
5. Settings the scenario needs and the source does not state get a documented default, written in the notes:
   context (isl + osl / 2 when both are published, 512 for MT-Bench as in S001-S018, else specroof's 1024), weight
   formats (NVFP4/MXFP4 MoE checkpoints: experts 4-bit, other weights bf16, as in S021-S025), the engine's scheduler
   mode (vLLM before async scheduling became the default, PR #27614 (~v0.12): overlap_scheduler false).
6. Lossy acceptance (SGLang accept threshold < 1, TRT-LLM relaxed acceptance) is kept and marked "lossy" in notes.
7. The same measurement collected twice is mapped once (the copy with the most columns); the other is not mapped.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from simulator.engine import list_engines
from simulator.hardware import list_hardware
from simulator.model import list_models, load_model_and_record
from simulator.validation import METRICS, STEP_METRICS

VAL = Path(__file__).resolve().parents[1] / "validation"   # the shipped data folder (scripts live in tools/)
SRC = VAL / "sources"
COLS = ["row_id", "source_id", "source", "source_url", "locator", "published_row", "hardware", "n_gpus", "tp", "dp",
        "ep", "engine", "engine_version", "model", "precision", "expert_precision", "attention_precision",
        "kv_precision", "method", "draft", "batch", "concurrency", "isl", "osl", "context", "k", "tree_tokens",
        "tree_branching", "tau", "tau_k", "overlap_scheduler", "spec_max_running", "engine_date", "metric", "measured",
        "notes"]
INT_COLS = ("n_gpus", "tp", "dp", "ep", "batch", "concurrency", "isl", "osl", "context", "k", "tree_tokens",
            "tree_branching", "tau_k")
METHODS = ("draft", "eagle", "eagle3", "medusa", "mtp", "ngram", "suffix", "dflash")
ENGINES = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm", "trtllm": "trtllm",
           "dynamo+sglang": "sglang", "dynamo+tensorrt-llm": "trtllm", "sglang (mori disagg)": "sglang",
           "tensorrt-llm (pytorch backend)": "trtllm"}
MT_BENCH_CONTEXT = "context 512 = MT-Bench prompt (~100) plus half of a ~800-token answer (estimate, as in S001-S018)"
CTX_DEFAULT = "context not stated: specroof's default 1024"
FP4_RULE = ("experts {fmt}, other weights bf16 (the checkpoint's non-expert formats are not stated here: rule as in "
            "S021-S025)")
VLLM_SYNC = "no async scheduling (vLLM before PR #27614, where it became the default): overlap_scheduler false"

Row = dict[str, str]

# engine_date (YYYY-MM): the release month of the engine build a row was measured with, or, where the build is not
# stated, the month the measurement was published (an upper bound). `specroof validate` compares it with each
# profile's valid_from (the month the mechanisms the profile models shipped) and reports older rows apart.
SOURCE_DATES = {
    "eagle3-paper": "2025-03",            # arXiv 2503.01840 (March 2025), SGLang of that month
    "spec-bench": "2024-02",              # research implementations on HF Transformers (the hf profile has no date)
    "trtllm-tech-blog-1": "2025-05",      # blog 1 (PyTorch backend, DeepSeek-R1 min latency on B200)
    "vllm-issue-20780": "2025-07",        # V1, ~v0.9.x, July 2025
    "vllm-pr-16937": "2025-04",           # V1 main, April 2025
    "gpustack-qwen3-8b-h100": "2025-10",  # SGLang 0.5.3.post3, vLLM 0.11.0, TRT-LLM 1.2.0rc1
    "qwen3-30b-a3b-eagle3-user-reports": "2025-12",
    "sglang-pr-4716": "2025-03",          # ~v0.4.4
    "trtllm-tech-blog-7": "2025-08",
    "inferencex": "2025-10",              # oldest named builds: Dynamo 0.5.1, TRT-LLM 1.1.0rc2, SGLang 0.5.6
    "dstack-deepseek-r1-h200-mi300x": "2025-02",  # SGLang 0.4.2/0.4.3, vLLM 0.7.3/0.7.4, TRT-LLM 0.17
    "amd-rocm-blog-mi300x-best-practices": "2025-01",  # rocm/vllm-dev:20250112; TRT-LLM 0.16.0 (Dec 2024) below
    "rocm-vllm-dev-docker-v0.10.0": "2025-07",    # vLLM 0.10.0
    "oracle-oci-mi300x-llama-405b": "2024-10",    # blog of autumn 2024, vLLM version not stated (V0 era)
    "vllm-ci-perf-benchmark-2024": "2024-10",     # Buildkite builds 9513-9555 (2024, V0)
    "qwen2.5-speed-benchmark": "2024-10",         # vLLM 0.6.3
    "nvidia-nim-llama-3.3-70b": "2025-05",        # NIM 1.8.0
    "lmsys-blog-sglang-gptoss": "2025-08",        # SGLang v0.5.1.post3
    "amd-rocm-blog-dsv3-mtp-mi300x": "2025-08",   # SGLang v0.5.0rc0
    "lmsys-blog-large-scale-ep": "2025-05",
    "specdrift-gptoss-h100": "2026-03",           # card of 2026
    "trtllm-best-perf-dsr1": "2025-06",
}
VERSION_DATES = ((re.compile(r"^0\.16\.0$"), "2024-12"),)   # TRT-LLM 0.16.0 in the AMD best-practices tables


def engine_date(out: Row) -> str:
    """The row's engine_date (see SOURCE_DATES)."""
    for pat, date in VERSION_DATES:
        if pat.search(out["engine_version"]):
            return date
    return SOURCE_DATES[out["source_id"]]


# ----------------------------------------------------------------------------------------------------------------
# 1. The first 44 rows (published_measurements.csv and vLLM issue #20780): mapping and values unchanged.
# ----------------------------------------------------------------------------------------------------------------

def first_rows() -> list[Row]:
    with open(VAL / "published_measurements.csv", encoding="utf-8") as f:
        pub = {r["row_id"]: r for r in csv.DictReader(f)}
    out: list[Row] = []

    def add(rid, sid, src, **kw):
        r = pub[rid]
        row = dict(row_id=f"S{len(out) + 1:03d}", source_id=sid, source=src, source_url=r["source_url"],
                   locator=r["source_locator"], published_row=rid, tp=1, ep=1, precision="bf16",
                   expert_precision="", kv_precision="bf16", draft="", tree_tokens="", tree_branching="", tau="",
                   tau_k="", overlap_scheduler="", metric="speedup", measured=r["speedup"], notes="")
        row.update(kw)
        out.append(row)

    # 1. SGLang v0.4.4 on one H100, Llama-3.1-8B-Instruct, chain of 3, MT-Bench (EAGLE-3 paper Table 3).
    #    tau is not published: the method's default acceptance (simulator.speedup.default_acceptance) is used.
    for rid in [f"R0{n}" for n in range(163, 181)]:
        r = pub[rid]
        method = "eagle3" if r["method"] == "EAGLE-3" else "eagle"
        add(rid, "eagle3-paper", "EAGLE-3 paper Table 3 (SGLang, H100)", hardware="h100-sxm", engine="sglang",
            model="llama-3.1-8b", method=method, batch=r["batch_size"], context=512, k=3,
            notes="tau not published: method default acceptance; context 512 = MT-Bench prompt (~100) plus half "
                  "of a ~800-token answer (estimate); bf16 assumed (precision not stated)")
    # 2. SGLang batch 1 (EAGLE-3 paper Table 4), config not stated: SGLang's Llama defaults steps 5 / topk 4 /
    #    8 draft tokens (SGLang docs, speculative_decoding.md).
    for rid, method in (("R0182", "eagle"), ("R0183", "eagle3")):
        add(rid, "eagle3-paper", "EAGLE-3 paper Table 4 (SGLang, H100, bs 1)", hardware="h100-sxm", engine="sglang",
            model="llama-3.1-8b", method=method, batch=1, context=512, k=5, tree_tokens=8, tree_branching=4,
            notes="tree config not stated: SGLang Llama defaults (steps 5, topk 4, 8 draft tokens); tau not "
                  "published: method default acceptance; EAGLE-2 priced as an EAGLE-1 head with a tree")
    # 3. TensorRT-LLM, DeepSeek-R1 on 8x B200, min-latency, MTP nextn 1..5 with measured tau (tech blog 1).
    for rid in ("R0760", "R0761", "R0762", "R0763", "R0764"):
        r = pub[rid]
        k = int(r["spec_config"].split("=")[1].split()[0])
        add(rid, "trtllm-tech-blog-1", "TensorRT-LLM tech blog 1 (DeepSeek-R1, 8x B200)", hardware="b200", tp=8,
            engine="trtllm", model="deepseek-r1", precision="bf16", expert_precision="fp4", method="mtp", batch=1,
            context=2048, k=k, tau=r["tau_mean_accept_len"], tau_k=k,
            notes="attention bf16, MoE FFN NVFP4 (blog precision table; the 3 dense FFN layers priced bf16); "
                  "context 2048 = ISL 1k + half of OSL 2k; TP8, attention and experts TP-split")
    # 4. Spec-Bench leaderboard, one A100 80GB, HF Transformers baselines, FP16, batch 1: overall rows only
    #    (per-task tau is not published).
    cfg = {"EAGLE": dict(method="eagle", k=5, tree_tokens=26, tree_branching=5,
                         n="EAGLE-1 static tree of 26 tokens, depth 5 (EAGLE repo defaults, assumption)"),
           "Medusa": dict(method="medusa", k=5, tree_tokens=64, tree_branching=13,
                          n="Medusa-1 64-token tree over 5 heads (mc_sim_7b_63, assumption)"),
           "PLD": dict(method="ngram", k=10, n="prompt lookup, 10 tokens proposed (HF prompt_lookup_num_tokens=10)"),
           "SpS": dict(method="draft", k=5, draft="llama-68m",
                       n="Vicuna-68M draft priced as llama-68m (same shapes); 5 assistant tokens (HF default then)")}
    models = {"Vicuna-7B-v1.3": "vicuna-7b", "Vicuna-13B-v1.3": "vicuna-13b", "Vicuna-33B-v1.3": "vicuna-33b"}
    for rid, r in pub.items():
        if "Spec-Bench" not in r["source_title"] or "A100" not in r["hardware"] or "overall" not in r["dataset"]:
            continue
        c = cfg.get(r["method"])
        if c is None or r["target_model"] not in models:
            continue
        kw = {k: v for k, v in c.items() if k != "n"}
        add(rid, "spec-bench", "Spec-Bench leaderboard (A100, HF)", hardware="a100-sxm-80gb", engine="hf",
            model=models[r["target_model"]], precision="fp16", kv_precision="fp16", batch=1, context=512,
            tau=r["tau_mean_accept_len"].split()[0], tau_k=kw["k"], **kw,
            notes=c["n"] + "; A100 80GB form factor not stated (SXM assumed); context 512 (estimate)")
    # 5. vLLM V1 on one H100, Llama-3.1-8B, batch 1, EAGLE-3 chain K = 2..7 (vLLM issue #20780, as collected in the
    #    project's engine reference): vanilla TPOT 7.07 ms; acceptance length per K; step time per K = TPOT x AL
    #    (derived there). These rows are not in published_measurements.csv; their source is the issue itself.
    url = "https://github.com/vllm-project/vllm/issues/20780"
    base = dict(source_id="vllm-issue-20780", source="vLLM issue #20780 (H100, bs 1)", source_url=url,
                published_row="", tp=1, ep=1, precision="bf16", expert_precision="", kv_precision="bf16", draft="",
                tree_tokens="", tree_branching="", hardware="h100-sxm", engine="vllm", model="llama-3.1-8b",
                method="eagle3", batch=1, context=512, overlap_scheduler="false")
    out.append(dict(base, row_id=f"S{len(out) + 1:03d}", locator="issue body: vanilla TPOT", k=1, tau="", tau_k="",
                    metric="base_step_s", measured=7.07e-3,
                    notes="plain decode TPOT (no speculation); context 512 (estimate); k unused for this metric; "
                          "vLLM V1 of mid-2025 ran without async scheduling (default only since PR #27614)"))
    for K, al, step in ((2, 2.36, 10.2), (3, 2.79, 11.4), (4, 3.08, 12.5), (5, 3.32, 13.7), (6, 3.46, 14.5),
                        (7, 3.54, 15.2)):
        out.append(dict(base, row_id=f"S{len(out) + 1:03d}", locator=f"issue body: EAGLE-3 K={K}", k=K, tau=al,
                        tau_k=K, metric="spec_step_s", measured=step * 1e-3,
                        notes="speculative step time = TPOT x acceptance length (derived from the issue's figures); "
                              "no async scheduling (see the base row)"))
    return [{c: str(r.get(c, "")) for c in COLS} for r in out]


# ----------------------------------------------------------------------------------------------------------------
# 2. Helpers for the staged rows.
# ----------------------------------------------------------------------------------------------------------------

class Skip(Exception):
    """A staged row that is not mapped; the message is the reason (not_mapped.csv)."""


def lead_int(v: str) -> str:
    """'233 (mean; 23260/100)' -> '233'; '' -> ''. Only where a rule says the leading number is the value."""
    m = re.match(r"\s*(\d+)", v or "")
    return m.group(1) if m else ""


def note(out: Row, *texts: str) -> None:
    out["notes"] = "; ".join([t for t in [out["notes"], *texts] if t])


def drafters() -> dict[str, str]:
    """HF repo -> bundled drafter id (heads and small draft models)."""
    out = {}
    for m in list_models():
        _, rec = load_model_and_record(m)
        if rec is not None and rec.hf_repo and (rec.kind != "target" or m == "llama-68m"):
            out[rec.hf_repo] = m
    return out


DRAFTERS = drafters()


def base_row(r: Row, sid: str, label: str, where: str) -> Row:
    """The columns every staged file shares, copied as published (engine names mapped to the bundled profiles)."""
    out = {c: "" for c in COLS}
    out.update(source_id=sid, source=label, source_url=r["source_url"], locator=r["locator"], published_row=where,
               hardware=r.get("hardware", ""), engine=ENGINES.get(r.get("engine", "").strip().lower(), ""),
               engine_version=r.get("engine_version", ""), model=r.get("model", ""), metric=r["metric"],
               measured=r["measured"].strip(), kv_precision=r.get("kv_precision", ""),
               attention_precision=r.get("attention_precision", ""))
    for c in ("n_gpus", "tp", "dp", "ep", "batch", "concurrency", "isl", "osl", "context", "k", "tree_tokens",
              "tree_branching", "tau", "tau_k"):
        out[c] = (r.get(c) or "").strip()
    method = (r.get("method") or "").strip()
    out["method"] = "" if method in ("", "none") else method
    out["precision"], out["expert_precision"] = (r.get("precision") or "").strip(), \
        (r.get("expert_precision") or "").strip()
    if out["method"] in ("draft", "eagle", "eagle3", "medusa", "dflash"):   # drafters that are models
        hf = (r.get("draft") or r.get("drafter") or "").split(" (")[0].strip()
        if hf in DRAFTERS:
            out["draft"] = DRAFTERS[hf]
        elif hf:
            note(out, f"drafter {hf} not bundled: the method's bundled or synthesized head is priced")
    return out


def formats(out: Row, model_kind: str = "deepseek") -> None:
    """Weight formats: 'nvfp4'/'fp4'/'mxfp4' MoE checkpoints -> experts 4-bit, the rest bf16 (rule 5)."""
    p = out["precision"].split(" (")[0].strip().lower()
    e = out["expert_precision"].split(" (")[0].strip().lower()
    if p in ("nvfp4", "fp4", "mxfp4") or e in ("nvfp4", "fp4", "mxfp4"):
        fmt = "mxfp4" if "mx" in (p + e) else "fp4"
        out["precision"], out["expert_precision"] = "bf16", fmt
        if model_kind == "gpt-oss":
            note(out, "gpt-oss checkpoint: MoE experts MXFP4, attention and the rest bf16 (model card)")
        else:
            note(out, FP4_RULE.format(fmt="NVFP4 (fp4)" if fmt == "fp4" else "MXFP4"))
    else:
        out["precision"] = p
        out["expert_precision"] = "" if e in ("", p) else e


def sglang_tree(out: Row) -> None:
    """SGLang (steps, topk, draft tokens) = (k, tree_branching, tree_tokens); topk 1 is a chain of steps + 1 tokens
    (SGLang server_args sets num_draft_tokens = steps + 1 when topk is 1)."""
    if out["tree_branching"] in ("", "1"):
        if out["tree_tokens"] and out["k"] and int(out["tree_tokens"]) != int(out["k"]) + 1:
            note(out, f"topk 1 with {out['tree_tokens']} draft tokens: SGLang verifies a chain of steps + 1 = "
                      f"{int(out['k']) + 1} tokens (server_args resets num_draft_tokens for topk 1)")
        out["tree_tokens"], out["tree_branching"] = "", ""


def ctx_note(out: Row, mt_bench: bool = False) -> None:
    if out["context"] or (out["isl"] and out["osl"]):
        return
    if mt_bench:
        out["context"] = "512"
        note(out, MT_BENCH_CONTEXT)
    else:
        note(out, CTX_DEFAULT)


# ----------------------------------------------------------------------------------------------------------------
# 3. decode.csv (plain decode).
# ----------------------------------------------------------------------------------------------------------------

def d_amd_latency(r: Row, out: Row) -> None:
    """AMD MI300X static-batch latency tables (ROCm blog, ROCm/vllm dev-docker README)."""
    note(out, "E2E latency of one static batch (prefill of isl tokens + osl decode steps); not converted to a decode "
              "step: the tables vary the input length, not the output length, so prefill cannot be separated")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, VLLM_SYNC)
    else:
        note(out, "TRT-LLM 0.16 C++ runtime, emulated static batching (the trtllm profile is the 1.x PyTorch "
                  "backend); H100 SXM per the blog's spec table")
    if r["source_id"].startswith("rocm-vllm-dev"):
        note(out, "KV dtype not stated (latency command has no --kv-cache-dtype: auto)")


def d_dstack(r: Row, out: Row) -> None:
    note(out, "mean TPOT of a serving run (random 3200/800, 500 prompts, max concurrency as given): continuous "
              "batching mixes prefill chunks into decode steps; KV dtype engine default")
    if out["engine"] == "sglang" and "dp-attention" in r["notes"] and out["hardware"] == "h200-sxm":
        out["tp"], out["dp"] = "1", "8"
        note(out, "--tp 8 --enable-dp-attention: SGLang 0.4.x server_args sets dp_size = tp_size, so attention DP8 "
                  "(attention TP1) with MoE TP8")
    if out["engine"] == "trtllm":
        note(out, "trtllm-serve --tp_size 8 --ep_size 4: attention TP8, experts EP4 x TP2")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, VLLM_SYNC)


def d_nim(r: Row, out: Row) -> None:
    if int(out["concurrency"]) >= 100:
        raise Skip("ITL plateau at ~93 ms from concurrency 100: the running batch is below the concurrency")
    out["engine"] = "trtllm"
    note(out, "NIM backend not stated: an fp8 TP2 NIM profile on H100 is a TensorRT-LLM engine (assumption); "
              "H100 80G form factor not stated (SXM assumed); ITL = mean inter-token latency (AIPerf)")


def d_oracle(r: Row, out: Row) -> None:
    note(out, "average latency of one static batch (prefill 128 + 128 decode steps), vllm benchmark_latency; TP8 "
              "from 'all eight GPUs' (single instance); vLLM version and KV dtype not stated")


def d_ix_issue(r: Row, out: Row) -> None:
    out["source"] = "InferenceX issue #870 (CI sweeps)"
    if out["hardware"] == "b200" and int(out["concurrency"]) >= 64:
        raise Skip("queueing at concurrency 64 (mean TTFT 5.7 s): the running batch is below the concurrency")
    formats(out)
    note(out, "posted by the InferenceX CI agent in an issue, not on the dashboard; same harness as the dashboard "
              "(random 1k/1k)")
    if out["metric"] == "tokens_per_s_per_gpu":
        note(out, "output tokens/s per GPU, including the time spent in prefill")


def d_ix_pr(r: Row, out: Row) -> None:
    out["source"] = "InferenceX PR #1061 (MI300X gpt-oss TP1)"
    formats(out, "gpt-oss")
    note(out, "MEDIAN TPOT (not mean); posted by the PR contributor with the InferenceX harness; vLLM 0.17 "
              "(async scheduling on by default)")


def d_buildkite(r: Row, out: Row) -> None:
    out["overlap_scheduler"] = "false"
    note(out, "mean E2E latency of one static batch (8 x 32 prompt tokens + 128 decode steps, benchmark_latency); "
              "dtype not stated (bf16 default assumed); vLLM main of 2024 (V0): overlap_scheduler false")
    if out["hardware"] == "h100-sxm":
        note(out, "'8xH100' CI node: SXM assumed")


def d_gptoss(r: Row, out: Row) -> None:
    formats(out, "gpt-oss")
    note(out, "bench_one_batch_server --batch-size 1 --input-len 1024 --output-len 512; whether the figure excludes "
              "prefill is not stated (decode assumed); blog file carries a draft banner")
    if out["hardware"] == "h100-sxm":
        note(out, "H100 with triton attention; form factor not stated (SXM assumed)")


def d_pr16937(r: Row, out: Row) -> None:
    out["overlap_scheduler"] = "false"
    out["context"] = "512"
    note(out, "offline output tok/s with --max_num_seqs 1 over 80 MT-Bench prompts (includes the short prefills); "
              "bf16 and SXM assumed (not stated)", MT_BENCH_CONTEXT, VLLM_SYNC)


def d_qwen25(r: Row, out: Row) -> None:
    if out["isl"] != "1":
        raise Skip("speed definition (with or without the prefill of the long input) not stated; only the input-1 "
                   "row is free of prefill")
    out["context"] = ""
    out["overlap_scheduler"] = "false"
    note(out, "2048 tokens generated after a 1-token input: prefill negligible; A100 80GB form factor not stated "
              "(SXM assumed)", VLLM_SYNC)


def d_skip(reason: str) -> Callable[[Row, Row], None]:
    def rule(r: Row, out: Row) -> None:
        raise Skip(reason)
    return rule


DECODE = {
    "amd-rocm-blog-mi300x-best-practices-2025-01": ("amd-rocm-blog-mi300x-best-practices",
                                                    "AMD ROCm blog: MI300X best practices (static-batch latency)",
                                                    d_amd_latency),
    "rocm-vllm-dev-docker-readme-v0.10.0": ("rocm-vllm-dev-docker-v0.10.0", "ROCm/vllm dev-docker README v0.10.0 "
                                            "(MI300X static-batch latency)", d_amd_latency),
    "dstack-deepseek-r1-h200-mi300x-2025-03": ("dstack-deepseek-r1-h200-mi300x",
                                               "dstack: DeepSeek-R1 on 8x H200 vs 8x MI300X", d_dstack),
    "nvidia-nim-benchmarking-perf-llama33-70b": ("nvidia-nim-llama-3.3-70b", "NVIDIA NIM benchmarking: "
                                                 "Llama-3.3-70B on 2x H100", d_nim),
    "oracle-oci-blog-llama31-405b-mi300x": ("oracle-oci-mi300x-llama-405b", "Oracle OCI blog: Llama-3.1-405B "
                                            "on 8x MI300X", d_oracle),
    "inferencex-issue-870-sweeps": ("inferencex", "InferenceX issue #870 (CI sweeps)", d_ix_issue),
    "inferencex-pr-1061-gptoss-mi300x-tp1": ("inferencex", "InferenceX PR #1061", d_ix_pr),
    "lmsys-amd-dsv3-mtp-mi300x-2025-09": ("amd-rocm-blog-dsv3-mtp-mi300x", "", d_skip(
        "duplicate: the same 'Without MTP' E2E column of the AMD DeepSeek-V3 MTP blog is mapped from serving.csv")),
    "vllm-buildkite-perf-benchmark-2024": ("vllm-ci-perf-benchmark-2024", "vLLM CI performance benchmark (2024, "
                                           "static-batch latency)", d_buildkite),
    "lmsys-sglang-gptoss-blog-2025-08": ("lmsys-blog-sglang-gptoss", "LMSYS blog: SGLang for gpt-oss (bs 1)",
                                         d_gptoss),
    "vllm-pr-16937-eagle3-h100-bs1": ("vllm-pr-16937", "vLLM PR #16937 (EAGLE on H100, bs 1)", d_pr16937),
    "tenstorrent-ttis-356-dsr1-16xh100": ("tenstorrent-dsr1-16xh100", "", d_skip(
        "16 H100 over two nodes; parallel layout (TP16 or TP8 x PP2/DP2) not stated")),
    "qwen25-speed-benchmark-vllm-a100": ("qwen2.5-speed-benchmark", "Qwen2.5 speed benchmark (vLLM, A100, bs 1)",
                                         d_qwen25),
}


# ----------------------------------------------------------------------------------------------------------------
# 4. speculative.csv.
# ----------------------------------------------------------------------------------------------------------------

# GPUStack Qwen3-8B on H100 (docs/performance-lab/qwen3-8b/h100-latency.md), SGLang v0.5.3.post3 EAGLE-3 runs: the
# published (mean ITL, mean TPOT) in ms of each benchmark block, keyed by (block: Section 5's config sweep or the
# 'Other Benchmark Cases' concurrency sweep, drafter, steps, topk, draft tokens, concurrency). vLLM's bench serve
# times each streamed chunk (ITL) and each request's tokens after the first (TPOT); SGLang streams the tokens one
# speculative step accepts as one chunk, so mean ITL / mean TPOT is the tokens per step (tau), and mean ITL the step
# time, both from the same published run.
_TW, _AS = "Tengyunw/qwen3_8b_eagle3", "AngelSlim/Qwen3-8B_eagle3"
GPUSTACK_ITL_TPOT_MS = {
    ("sweep", _TW, 4, 4, 16, 4): (11.05, 3.75), ("sweep", _AS, 4, 4, 16, 4): (10.49, 4.45),
    ("sweep", _TW, 2, 4, 16, 4): (9.82, 3.98), ("sweep", _TW, 8, 4, 16, 4): (13.94, 4.27),
    ("sweep", _TW, 4, 8, 16, 4): (11.24, 3.62), ("sweep", _TW, 4, 4, 32, 4): (11.90, 3.54),
    ("sweep", _TW, 4, 4, 8, 4): (10.71, 3.71), ("sweep", _TW, 2, 1, 4, 4): (8.78, 4.37),
    ("other", _TW, 4, 4, 16, 1): (8.74, 2.67), ("other", _TW, 4, 4, 16, 2): (9.69, 3.04),
    ("other", _TW, 4, 4, 16, 4): (10.54, 3.34), ("other", _TW, 4, 4, 16, 8): (13.06, 4.82),
}


def gpustack_tau(r: Row, out: Row) -> str:
    """tau = mean ITL / mean TPOT of the row's published run (GPUSTACK_ITL_TPOT_MS), or "" when none is published."""
    block = "other" if "Other Benchmark" in r["locator"] else "sweep"
    key = (block, r["draft"], int(out["k"]), int(r["tree_branching"] or 1), int(r["tree_tokens"] or 0),
           int(out["concurrency"]))
    if key not in GPUSTACK_ITL_TPOT_MS:
        return ""
    itl, tpot = GPUSTACK_ITL_TPOT_MS[key]
    return f"{itl / tpot:.3f}"


def s_gpustack_qwen3(r: Row, out: Row) -> None:
    if out["method"] and not out["k"]:
        raise Skip("SGLang automatic speculative parameters: steps / topk / draft tokens not stated")
    if r["engine"] == "vllm" and out["concurrency"] == "4" and "Other Benchmark" in r["locator"]:
        raise Skip("duplicate: the vLLM bf16 concurrency-4 TPOT (7.38 ms) is also in Section 1 (mapped from there)")
    out["precision"] = out["precision"].split(" (")[0]
    out["isl"], out["osl"] = lead_int(out["isl"]), lead_int(out["osl"])
    tau = gpustack_tau(r, out) if out["method"] else ""
    sglang_tree(out)
    note(out, "ShareGPT, 100 prompts: isl / osl are the mean lengths (233 / 221); mean TPOT excludes the first token")
    if tau:
        out["tau"], out["tau_k"] = tau, out["k"]
        note(out, f"tau {tau} = the run's published mean ITL / mean TPOT (derived: vLLM bench serve times one "
                  "streamed chunk per SGLang speculative step)")
    elif out["method"]:
        note(out, "tau not reported (method default acceptance)")
    if out["metric"] == "speedup":
        note(out, "speedup = SGLang FP8 plain mean TPOT 5.65 ms / spec mean TPOT, same engine, precision and "
                  "concurrency (derived)")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, "vLLM v0.11.0: " + VLLM_SYNC)


def s_qwen3_moe_user(r: Row, out: Row) -> None:
    label = "AngelSlim #163" if r["source_id"].startswith("angelslim") else "SpecForge #339"
    out["source"] = f"{label}: Qwen3-30B-A3B EAGLE3 (SGLang, H100 TP{out['tp']})"
    out["concurrency"] = ""
    for c in ("tau_k", "k"):
        out[c] = lead_int(out[c])
    # SpecForge #339 runs bench_eagle3 with --benchmark-list mtbench:20: 20 MT-bench prompts per configuration (the
    # same author's AngelSlim #163 table is taken to use the same script). Its throughput is total output tokens/s
    # of those 20 requests, whose running batch shrinks as answers of unequal length finish.
    b = int(out["batch"])
    if b > 8:
        raise Skip("bench_eagle3 ran 20 MT-bench prompts: a nominal batch above 8 is at most 20 requests with a long "
                   "shrinking tail, not a batch of that size")
    if out["metric"] != "speedup" and b > 1:
        raise Skip("total throughput of 20 requests with a shrinking tail: not a per-user rate at the nominal batch "
                   "(only batch 1 is)")
    sglang_tree(out)
    ctx_note(out, mt_bench=True)
    note(out, "user-reported table (same author for AngelSlim #163 and SpecForge #339); bench_eagle3 over 20 MT-bench "
              "prompts (SpecForge #339 command line); bf16; at batch 1 the throughput is the per-user rate")
    if out["metric"] == "speedup":
        note(out, "speedup = spec / plain batch throughput at the same batch (derived)")


def s_20780(r: Row, out: Row) -> None:
    if not out["method"]:
        raise Skip("duplicate: the vanilla TPOT 7.07 ms is S038 (base_step_s)")
    out["source"] = "vLLM issue #20780 (H100, bs 1)"
    out["concurrency"], out["context"], out["overlap_scheduler"] = "", "512", "false"
    note(out, "EAGLE-1 spec TPOT at K draft tokens (chain); tau = the issue's acceptance length at the same K; "
              "context 512 as in S038-S044 (estimate); bf16 assumed", VLLM_SYNC)


def s_16937(r: Row, out: Row) -> None:
    if not out["method"]:
        raise Skip("duplicate: the vanilla 133 tok/s is mapped from decode.csv")
    out["concurrency"], out["context"], out["overlap_scheduler"] = "", "512", "false"
    note(out, "speedup = spec / vanilla output tok/s of offline runs with --max_num_seqs 1 (quoted; includes the "
              "short prefills); tau not reported; bf16 assumed", MT_BENCH_CONTEXT, VLLM_SYNC)


def s_4716(r: Row, out: Row) -> None:
    if out["tau"] == "2.42":
        raise Skip("speedup pairs a single-prompt (send_one) spec run with the MT-Bench baseline")
    out["concurrency"] = ""
    out["tau_k"] = lead_int(out["tau_k"])
    note(out, "bench_speculative-style MT-Bench run at bs 1 (cuda-graph-max-bs 1), fp16 as published; tree: steps 8, "
              "topk 8, 64 draft tokens", MT_BENCH_CONTEXT)
    if out["metric"] == "speedup":
        note(out, "speedup = 234.54 / 88.61 tok/s (derived)")


def s_ngram7(r: Row, out: Row) -> None:
    out["model"] = "llama-4-scout"
    out["concurrency"] = ""
    note(out, "Llama-4-Scout-17B-16E (bundled as llama-4-scout; the collector marked it not bundled); "
              "E2E runtime speedup of 20 x batch requests with max_batch_size = batch (measured = 1 + quoted %); "
              "k = max_draft_len (blog's v), match size 3/5; tau = second-turn AL; lossless; ISL/OSL not stated")


SPEC_SKIPS = {
    "amd-rocm-eagle3-mi355x": ("amd-rocm-blog-eagle3-mi355x", "models not bundled (Kimi-K2.5-MXFP4, MiniMax-M2.5)"),
    "amd-rocm-mtp-dsv3": ("amd-rocm-blog-dsv3-mtp-mi300x", "duplicate: the same E2E speedup table is mapped from "
                          "serving.csv (with its absolute E2E latencies)"),
    "arcticinference-docs-suffix": ("arcticinference-docs", "model and hardware not stated next to the table "
                                    "(Llama-3.1-70B on 8x H100 only probable)"),
    "gpustack-dsr1-h200": ("gpustack-dsr1-h200", "1000 prompts offered at once; the MTP server's running batch is "
                           "capped (SGLang default 32 with MTP): not a same-batch comparison"),
    "llmd-qwen3-32b-eagle3": ("llmd-qwen3-32b-eagle3", "load given as a request rate (QPS): decode batch unknown"),
    "vllm-pr12755-dsr1-mtp": ("vllm-pr-12755", "load given as a request rate (QPS); GPU not stated"),
    "inferencex-trtbench-dsv4pro": ("inferencex-trt-bench", "model not bundled (DeepSeek-V4-Pro)"),
    "lmsys-mtp-eigen": ("lmsys-blog-sglang-mtp", "decode layout (attention DP / EP) not stated"),
    "vllm-pr16035-eagle-llama3": ("vllm-pr-16035", "GPU not stated; model not bundled (Meta-Llama-3-8B-Instruct)"),
    "vllm-blog-2024-spec-decode": ("vllm-blog-2024-spec-decode", "model not bundled (Llama-3-70B); load given as "
                                   "QPS"),
    "vllm-pr48944-gemma4-ctx": ("vllm-pr-48944", "model and hardware not bundled (Gemma-4-31B, H100 NVL)"),
    "vllm-pr24243-minicpm3-eagle3": ("vllm-pr-24243", "model and hardware not bundled (MiniCPM3-4B, RTX 4090)"),
    "sglang-docs-deepseek-mtp": ("sglang-docs-deepseek-mtp", "MTP depth not tied to the claim (the docs show k=1 "
                                 "and k=3 in different versions)"),
    "sglang-pr10281-dsr1-mtp": ("sglang-pr-10281", "GPU not named (trtllm_mla implies a Blackwell part)"),
    "sglang-pr3582-dsv3-nextn": ("sglang-pr-3582", "GPU not stated; MTP config not tied to the 1.76x"),
    "sglang-pr12128-dsr1-mtp": ("sglang-pr-12128", "GPU not stated (a Hopper part with FA3 MLA: H200 or H20-96G "
                                "hold DeepSeek-R1 FP8 on 8 GPUs); checked against 8x H200 in the README instead"),
    "inferencex-isointeractivity": ("inferencex", "duplicate: the same compare-page sentences are mapped from "
                                    "serving.csv"),
}

SPEC = {
    "gpustack-qwen3-8b-h100": ("gpustack-qwen3-8b-h100", "GPUStack: Qwen3-8B on H100 (concurrency sweep)",
                               s_gpustack_qwen3),
    "angelslim-163-qwen3-30b-a3b": ("qwen3-30b-a3b-eagle3-user-reports", "", s_qwen3_moe_user),
    "specforge-339-qwen3-30b-a3b": ("qwen3-30b-a3b-eagle3-user-reports", "", s_qwen3_moe_user),
    "vllm-issue20780-eagle-k-sweep": ("vllm-issue-20780", "", s_20780),
    "vllm-pr16937-eagle3": ("vllm-pr-16937", "vLLM PR #16937 (EAGLE on H100, bs 1)", s_16937),
    "sglang-pr4716-llama33-70b-eagle3": ("sglang-pr-4716", "SGLang PR #4716 (Llama-3.3-70B EAGLE3, H100 TP8, bs 1)",
                                         s_4716),
    "trtllm-blog7-ngram": ("trtllm-tech-blog-7", "TRT-LLM tech blog 7 (n-gram, Llama-4-Scout, 8x B200)", s_ngram7),
    **{k: (sid, "", d_skip(why)) for k, (sid, why) in SPEC_SKIPS.items()},
}


# ----------------------------------------------------------------------------------------------------------------
# 5. serving.csv.
# ----------------------------------------------------------------------------------------------------------------

# Launch flags of InferenceX's single-node SGLang MTP scripts, as of the runs' dates (InferenceX repository,
# benchmarks/single_node/): script (as the 'MTP k source' note names it) -> (SpecV2 overlap on, requests run at once
# while speculating: by (isl, osl), 'conc' for the run's concurrency, None for SGLang's speculative default of 48;
# the note). SGLang's SpecV2 worker needs SGLANG_ENABLE_SPEC_V2 in the server's environment.
IX_SGLANG_MTP = {
    "dsr1_*_h200_mtp.sh": (True, {(1024, 1024): "512", None: "256"},
                           "dsr1_fp8_h200_mtp.sh (InferenceX PR #1523, 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                           "(SpecV2 overlap: overlap_scheduler true); --max-running-requests 512 at 1k/1k, else 256"),
    "dsr1_*_b200_mtp.sh": (False, {None: "512"},
                           "dsr1_fp8_b200_mtp.sh (InferenceX PR #626, 2026-02-05): SGLANG_ENABLE_SPEC_V2=1 is set "
                           "without export, so the server runs the V1 worker; --max-running-requests 512"),
    "dsr1_*_mi355x_mtp.sh fp8": (True, {None: "conc"},
                                 "dsr1_fp8_mi355x_mtp.sh (created 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                                 "(overlap_scheduler true); --max-running-requests = the concurrency"),
    "dsr1_*_mi355x_mtp.sh fp4": (True, {None: None},
                                 "dsr1_fp4_mi355x_mtp.sh (created 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                                 "(overlap_scheduler true); no --max-running-requests (SGLang's 48 for speculation)"),
}


def ix_sglang_mtp(out: Row, disagg: bool) -> None:
    """A single-node InferenceX SGLang DeepSeek-R1 MTP run's scheduler facts from its script (IX_SGLANG_MTP): every
    row of the run, its speedup included (whose notes do not name the script). The scripts were added on the dates
    they name, before the runs mapped here (runs from 2026-02 on B200, 2026-05 on H200 and MI355X)."""
    if disagg or (out["engine"], out["method"], out["model"]) != ("sglang", "mtp", "deepseek-r1"):
        return
    script = f"dsr1_*_{out['hardware'].removesuffix('-sxm')}_mtp.sh"
    if "mi355x" in script:
        script += " fp4" if out["expert_precision"] in ("mxfp4", "fp4") else " fp8"
    if script not in IX_SGLANG_MTP:
        return
    v2, cap, why = IX_SGLANG_MTP[script]
    n = cap.get((int(float(out["isl"] or 0)), int(float(out["osl"] or 0))), cap.get(None))
    out["spec_max_running"] = out["concurrency"] if n == "conc" else (n or "")
    if v2:
        out["overlap_scheduler"] = "true"
    note(out, why)


def v_fixture(r: Row, out: Row) -> None:
    eng = r["engine"].strip().lower()
    if eng == "atom":
        raise Skip("engine not bundled (AMD ATOM)")
    if r["metric"] == "throughput_ratio_same_concurrency":
        raise Skip("same pair as the mapped speedup (median tok/s/user ratio): one ratio per pair")
    disagg = r["pd_disaggregated"] == "yes"
    out["source"] = "InferenceX dashboard (" + ("disaggregated" if disagg else "single node") + ")"
    formats(out)
    if r["metric"] == "interactivity_ratio_same_concurrency":
        out["metric"] = "speedup"
        note(out, "speedup = MTP / plain median tok/s/user at the same concurrency and layout (derived by the "
                  "collector; runs of different dates)")
    if r["per_rank_batch"]:
        note(out, f"decode max_batch_size {r['per_rank_batch']} per rank (recipe)")
    if disagg:
        note(out, f"disaggregated: {r['prefill_gpus']} prefill + {r['decode_gpus']} decode GPUs; tp/dp/ep = one "
                  "decode instance; throughput per GPU divides by all n_gpus")
    if out["method"] == "mtp" and not out["k"]:
        note(out, "MTP depth not resolved from the run's config: specroof's default k is priced")
    if out["metric"] == "tokens_per_s_per_user":
        note(out, "median interactivity (tok/s/user)")
    ksrc = [s for s in r["notes"].split("; ") if s.startswith("MTP k source")]
    ix_sglang_mtp(out, disagg)
    pair = re.search(r"matched pair pair\d+ \(.*\)$", r["notes"])
    note(out, *ksrc, "InferenceX CI (random isl/osl, 10 x concurrency prompts)",
         pair.group(0) if pair else r["notes"].split("; ")[-1])


def v_compare(r: Row, out: Row) -> None:
    if out["model"] != "deepseek-r1":
        raise Skip("model not bundled (" + out["model"].split(" (")[0] + ")")
    if r["metric"] != "throughput_ratio":
        raise Skip("absolute tok/s/GPU of a compare page: unit (output or input+output) not defined on the page; "
                   "the page's MTP/Off ratio is mapped")
    out["source"] = "InferenceX compare pages (iso-interactivity)"
    formats(out)
    m = re.search(r"at (\d+) tok/s/user", r["locator"])
    note(out, f"WEAKEST ROWS: MTP / Off tok/s/GPU read from Pareto frontiers interpolated across engines, layouts "
              f"and concurrencies at matched interactivity {m.group(1) if m else '?'} tok/s/user; engine, layout, "
              "k unknown; frontier edges may be extrapolated")


def v_ix_blog(r: Row, out: Row) -> None:
    out["source"] = "InferenceX v2 blog"
    out["metric"] = "throughput_ratio"
    formats(out)
    note(out, "throughput_ratio = $2.35 / $0.11 per M tokens (no MTP / MTP) at 150 tok/s/user on the same GB300 "
              "frontier: equal $/GPU-hour, so the cost ratio is the tok/s/GPU ratio (derived; $0.11 has two digits, "
              "+-5%); Dynamo TRT-LLM, layouts not given")


def v_amd_mtp(r: Row, out: Row) -> None:
    out["isl"], out["osl"] = "", ""
    note(out, "lossy: --speculative-accept-threshold-single=0.001 (relaxed acceptance); k = 2 (steps 2, topk 1, "
              "3 draft tokens); tau not reported")
    if r["locator"].startswith("Table 1") or "Table 1" in r["locator"]:
        note(out, "random dataset: isl/osl not stated next to the table (the ROCm blog's client command shows "
                  "3200/800, the LMSYS copy 1024/1024, without range ratio and with --request-rate 1)")
    else:
        note(out, "ShareGPT dataset")
    note(out, "mean E2E latency per request at a max concurrency; the LMSYS copy of this blog names SGLang "
              "v0.4.10.post1, the ROCm blog v0.5.0rc0")


LARGE_EP_SKIPS = {"57674": "prefill throughput (input tok/s per node): no schema metric",
                  "54543": "prefill throughput (input tok/s per node): no schema metric",
                  "50302": "prefill throughput (input tok/s per node): no schema metric",
                  "52300": "prefill throughput headline: no schema metric",
                  "17373": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "17552": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "12929": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "22310": "TBO ablation point: per-node unit assumed, same decode configuration as the mapped 22,282",
                  "22300": "headline over 12 nodes: prefill/decode split not stated"}


def v_large_ep(r: Row, out: Row) -> None:
    if r["measured"] in LARGE_EP_SKIPS:
        raise Skip(LARGE_EP_SKIPS[r["measured"]])
    assert r["measured"] == "22282" and r["metric"] == "tokens_per_s_per_node", r
    out.update(metric="tokens_per_s_per_gpu", measured=repr(22282 / 8), batch=str(256 * 72), context="2000")
    note(out, "decode-only test on 9 nodes: 22,282 tok/s per node / 8 GPUs (derived); DP attention DP72 (attention "
              "TP1), dense FFN DP, experts EP72 (DeepEP, EPLB, TBO); 256 sequences per device x 72 = batch 18432 "
              "(derived); context = KV length 2000")


def v_bestperf(r: Row, out: Row) -> None:
    formats(out)
    note(out, f"'Expected Result Format' sample of the max-throughput command: --tp 8 --ep 8 with attention DP "
              f"(attention TP1, DP8), max_batch_size {r['per_rank_batch']} per rank, concurrency = 8 x "
              f"max_batch_size; no MTP; synthetic 1K/2K")


def v_specdrift(r: Row, out: Row) -> None:
    if r["metric"] != "throughput_ratio_same_concurrency":
        raise Skip("absolute tok/s of the table: GPU count not stated; the spec/plain ratio is mapped")
    out.update(metric="speedup", tp="1", method="eagle3", k="3", tau_k="3", concurrency="")
    out["precision"], out["expert_precision"] = "bf16", "mxfp4"
    note(out, "speedup = SpecDrift EAGLE-3 / plain tok/s at the same batch (derived); third-party mirror of the HF "
              "card; SpecDrift-trained head (standard EAGLE-3 shape); TP1, steps 3 / topk 1 / 4 draft tokens and "
              "SpecV2 overlap from the card's launch command (table setup not stated); MT-Bench, temperature 0.7",
         "gpt-oss checkpoint: MoE experts MXFP4, attention and the rest bf16 (model card)", MT_BENCH_CONTEXT)
    out["context"] = "512"
    out["overlap_scheduler"] = "true"


SERVING_SKIPS = {
    "lmsys_mtp_h200": ("lmsys-blog-sglang-mtp", "decode layout (attention DP / EP) not stated"),
    "lmsys_gb300_longctx": ("lmsys-blog-gb300-longctx", "per-point layouts and concurrency not stated (MTP and "
                            "non-MTP read in different interactivity bands)"),
    "vllm_specdecode_blog_2024": ("vllm-blog-2024-spec-decode", "model not bundled (Llama-3-70B); load given as QPS"),
    "baseten_gptoss_eagle3": ("baseten-gptoss", "production API measured by a third party: load and layout unknown, "
                              "approximate values"),
    "redhat_gptoss_eagle3_h200": ("redhat-gptoss-eagle3", "only summary ranges retrieved; TP and concurrency per "
                                  "value not stated"),
    "aqmedai_kimi_k2_eagle3": ("aqmedai-kimi-k2-eagle3", "hardware and TP not stated"),
    "inferencemax_v1_blog": ("inferencex", "a range ('2-3x'): a single value would be invented"),
    "deepseek_official_via_lmsys": ("deepseek-official", "H800 (not bundled; recorded as h100-sxm by the "
                                    "collector); secondary quote"),
    "lmsys_gb200_part1": ("lmsys-blog-gb200", "no batch or concurrency; decode layout assumed by the collector"),
    "lmsys_gb200_part2": ("lmsys-blog-gb200", "batch 1408 per rank or global not stated; layout assumed"),
    "lmsys_kimi_k2_h200": ("lmsys-blog-kimi-k2", "decode batch 480 per rank or global not stated; EP degree assumed"),
    "trtllm_dsr1_b200_throughput": ("trtllm-tech-blog-3", "no batch or concurrency given for the 4600 / 2000 TPS/GPU"),
    "vllm_wide_ep_h200": ("vllm-blog-wide-ep", "headline: GPU counts, isl/osl and load not stated"),
    "trtllm_blog5_disagg": ("trtllm-tech-blog-5", "disaggregated-over-aggregated speedup on rate-matched curves: no "
                            "schema metric"),
    "inferencex_blog_gb200_vs_b200": ("inferencex", "input+output tok/s/GPU of two MTP deployments: no schema "
                                      "metric"),
    "gpustack_gptoss_h100": ("gpustack-gptoss-h100", "1000 prompts offered at once: running batch set by the "
                             "engine's limits, not stated"),
    "gpustack_dsr1_h200": ("gpustack-dsr1-h200", "1000 prompts offered at once: running batch set by the engine's "
                           "limits, not stated"),
    "gpustack_qwen3_235b_h100": ("gpustack-qwen3-235b-h100", "1000 prompts offered at once: running batch set by "
                                 "the engine's limits, not stated"),
}


def v_gptoss(r: Row, out: Row) -> None:
    if out["hardware"] == "mi350x":
        raise Skip("hardware not bundled (MI350X)")
    if out["method"]:
        raise Skip("EAGLE3 speedups: batch and speedup definition not stated")
    raise Skip("duplicate: the bs-1 decode figures are mapped from decode.csv")


SERVING = {
    "inferencex_fixture_pairs": ("inferencex", "", v_fixture),
    "inferencex_fixture_disagg": ("inferencex", "", v_fixture),
    "inferencex_compare_pages": ("inferencex", "", v_compare),
    "inferencex_v2_blog": ("inferencex", "", v_ix_blog),
    "rocm_mtp_dsv3_mi300x": ("amd-rocm-blog-dsv3-mtp-mi300x", "AMD ROCm blog: DeepSeek-V3 MTP on 8x MI300X (SGLang)",
                             v_amd_mtp),
    "lmsys_large_scale_ep_h100": ("lmsys-blog-large-scale-ep", "LMSYS blog: large-scale EP on 96 H100 (decode)",
                                  v_large_ep),
    "trtllm_best_perf_dsr1": ("trtllm-best-perf-dsr1", "TRT-LLM DeepSeek-R1 best-perf doc (max throughput)",
                              v_bestperf),
    "specdrift_gptoss_h100": ("specdrift-gptoss-h100", "SpecDrift card: gpt-oss-120b EAGLE-3 (SGLang, H100)",
                              v_specdrift),
    "lmsys_gptoss": ("lmsys-blog-sglang-gptoss", "", v_gptoss),
    **{k: (sid, "", d_skip(why)) for k, (sid, why) in SERVING_SKIPS.items()},
}


# ----------------------------------------------------------------------------------------------------------------
# 6. Checks every mapped row passes (rule 1 and the schema), then the driver.
# ----------------------------------------------------------------------------------------------------------------

HARDWARE, MODELS, ENGINE_NAMES = set(list_hardware()), set(list_models()), set(list_engines())


def check(out: Row) -> None:
    """Vocabulary and number checks; a failure is a Skip with the reason (or a bug in a rule: AssertionError)."""
    if out["expert_precision"] == out["precision"]:
        out["expert_precision"] = ""
    for c in ("precision", "expert_precision", "attention_precision", "kv_precision"):
        assert out[c] in ("", "bf16", "fp16", "fp8", "fp4", "mxfp4"), (c, out)
    if out["hardware"] not in HARDWARE:
        raise Skip(f"hardware not bundled or not stated ({out['hardware'] or 'empty'})")
    if out["model"] not in MODELS:
        raise Skip(f"model not bundled ({out['model'].split(' (')[0] or 'empty'})")
    if out["engine"] not in ENGINE_NAMES and out["metric"] != "throughput_ratio":
        raise Skip(f"engine not bundled ({out['engine'] or 'empty'})")
    assert out["metric"] in METRICS, out
    assert out["method"] in ("", *METHODS), out
    assert out["draft"] in ("", *MODELS), out
    for c in INT_COLS:
        assert out[c] == "" or re.fullmatch(r"\d+", out[c]), (c, out)
    for c in ("tau", "measured"):
        assert out[c] == "" or float(out[c]) > 0, (c, out)
    assert out["batch"] or out["concurrency"] or out["metric"] in ("throughput_ratio",), out
    if out["metric"] in STEP_METRICS and not out["context"] and not (out["isl"] and out["osl"]):
        assert "context" in out["notes"], out


def staged(name: str, table: dict, prefix: str, dropped: list[Row]) -> list[Row]:
    with open(SRC / name, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    mapped = []
    for i, r in enumerate(rows, start=1):
        sid, label, rule = table[r["source_id"]]
        where = f"sources/{name}:{i}"
        out = base_row(r, sid, label or r["source"], where)
        try:
            rule(r, out)
            check(out)
        except Skip as e:
            dropped.append(dict(published_row=where, staged_source_id=r["source_id"], source_id=sid,
                                metric=r["metric"], measured=r["measured"], reason=str(e)))
            continue
        mapped.append(out)
    mapped.sort(key=lambda o: (o["source_id"], int(o["published_row"].rsplit(":", 1)[1])))
    for n, o in enumerate(mapped, start=1):
        o["row_id"] = f"{prefix}{n:03d}"
    return mapped


def build() -> tuple[list[Row], list[Row]]:
    """Every mapped row (in rows.csv order) and every staged row that is not mapped (with the reason)."""
    dropped: list[Row] = []
    first = first_rows()
    spec = staged("speculative.csv", SPEC, "S", dropped)
    for n, o in enumerate(spec, start=len(first) + 1):
        o["row_id"] = f"S{n:03d}"
    rows = first + spec + staged("decode.csv", DECODE, "D", dropped) + staged("serving.csv", SERVING, "V", dropped)
    assert len({r["row_id"] for r in rows}) == len(rows)
    for r in rows:
        r["engine_date"] = engine_date(r)
    return rows, dropped


def main() -> None:
    rows, dropped = build()
    with open(VAL / "rows.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(VAL / "not_mapped.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(dropped[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(dropped)
    n = Counter(r["row_id"][0] for r in rows)
    print(f"wrote {len(rows)} rows ({n['S']} S, the first 44 included; {n['D']} D, {n['V']} V); "
          f"{len(dropped)} staged rows not mapped")
    for (sid, why), n in sorted(Counter((d["source_id"], d["reason"]) for d in dropped).items()):
        print(f"  not mapped: {sid}: {n} x {why}")


if __name__ == "__main__":
    main()
