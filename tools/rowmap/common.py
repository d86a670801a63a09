"""What every mapping rule shares: the rows.csv columns, paths, engine dates, helpers and the checks every
mapped row passes (tools/build_rows.py rules 1-7)."""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable
from pathlib import Path

from simulator.engine import list_engines
from simulator.errors import SpecroofError
from simulator.hardware import list_hardware
from simulator.model import load_model_and_record
from simulator.registry import list_models, record_for_repo
from simulator.rows import METRICS, STEP_METRICS

VAL = Path(__file__).resolve().parents[2] / "validation"   # the shipped data folder (tools/rowmap/ -> root)
SRC = VAL / "sources"
COLS = ["row_id", "source_id", "source", "source_url", "locator", "published_row", "hardware", "n_gpus", "tp", "dp",
        "ep", "engine", "engine_version", "model", "precision", "expert_precision", "attention_precision",
        "kv_precision", "method", "draft", "batch", "concurrency", "isl", "osl", "length_ratio", "context", "k",
        "tree_tokens", "tree_branching", "tau", "tau_k", "overlap_scheduler", "spec_max_running",
        "max_running_requests", "memory_fraction", "dp_balance", "num_prompts", "engine_date", "metric", "measured",
        "notes"]
INT_COLS = ("n_gpus", "tp", "dp", "ep", "batch", "concurrency", "isl", "osl", "context", "k", "tree_tokens",
            "tree_branching", "tau_k", "max_running_requests", "num_prompts")
METHODS = ("draft", "eagle", "eagle3", "medusa", "mtp", "ngram", "suffix", "dflash")
ENGINES = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm", "trtllm": "trtllm",
           "dynamo+sglang": "sglang", "dynamo+tensorrt-llm": "trtllm", "sglang (mori disagg)": "sglang",
           "tensorrt-llm (pytorch backend)": "trtllm"}
MT_BENCH_CONTEXT = "context 512 = MT-Bench prompt (~100) plus half of a ~800-token answer (estimate, as in S001-S018)"
FP4_RULE = ("experts {fmt}, other weights bf16 (the checkpoint's non-expert formats are not stated here: rule as in "
            "S021-S025)")
VLLM_SYNC = "no async scheduling (vLLM before PR #27614, where it became the default): overlap_scheduler false"
# InferenceX's benchmark harness draws each request's lengths uniformly from [0.8 x isl, isl] and [0.8 x osl, osl]:
# RANDOM_RANGE_RATIO 0.8 in .github/workflows/benchmark-tmpl.yml (srt-slurm recipes: random_range_ratio 0.8) and
# sample_uniform in utils/bench_serving/benchmark_serving.py (lower = int(L x ratio), upper = L).
IX_LENGTH_RATIO = "0.8"
IX_LENGTHS = ("lengths drawn uniformly from [0.8 x isl, isl] and [0.8 x osl, osl] (InferenceX RANDOM_RANGE_RATIO "
              "0.8, benchmark-tmpl.yml; sample_uniform in utils/bench_serving/benchmark_serving.py): length_ratio 0.8")

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
    "vllm-rocm-eagle3-mi355x": "2026-04",         # vLLM ROCm nightly-4eafc729 (InferenceX config of 2026-04-30)
    "trtllm-best-perf-dsr1": "2025-06",
    "specbundle-dashboard": "2025-12",            # SpecForge pinned sglang 0.5.5 (2025-11) then 0.5.6 (2025-12-12)
    "sgl-cookbook": "2025-12",                    # SGLang 0.5.6 / 0.5.6.post1 (2025-12)
}
VERSION_DATES = ((re.compile(r"^0\.16\.0$"), "2024-12"),)   # TRT-LLM 0.16.0 in the AMD best-practices tables


def engine_date(out: Row) -> str:
    """The row's engine_date (see SOURCE_DATES)."""
    for pat, date in VERSION_DATES:
        if pat.search(out["engine_version"]):
            return date
    return SOURCE_DATES[out["source_id"]]


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


@functools.cache
def _kv_formats() -> dict[tuple[str, str], tuple[str, str]]:
    """(source_id, locator) -> (KV-cache format, evidence), read from sources/inferencex_kv.csv: the KV format each
    InferenceX run (and the rows derived from its runs) used, from its script, config or recipe at the run's date."""
    with open(SRC / "inferencex_kv.csv", encoding="utf-8") as f:
        return {(r["source_id"], r["locator"]): (r["kv_precision"], r["evidence"]) for r in csv.DictReader(f)}


def kv_format(out: Row) -> None:
    """A row's KV-cache format where its run's launch flags state it (_kv_formats), with the evidence in its notes;
    elsewhere the field stays as mapped (empty: bf16 is priced)."""
    hit = _kv_formats().get((out["source_id"], out["locator"]))
    if hit is not None:
        out["kv_precision"] = hit[0]
        note(out, f"KV cache {hit[0]}: {hit[1]}")


@functools.cache
def _srt_slurm_shares() -> dict[tuple[str, str], str]:
    """(recipe, commit) -> the decode instance's mem-fraction-static, read from sources/srt_slurm_shares.csv (written
    by tools/srt_slurm_shares.py from a snapshot of NVIDIA/srt-slurm)."""
    with open(SRC / "srt_slurm_shares.csv", encoding="utf-8") as f:
        return {(r["recipe"], r["commit"]): r["decode_mem_fraction_static"] for r in csv.DictReader(f)}


_CITED = re.compile(r"srt-slurm (recipes/[A-Za-z0-9_./-]+\.yaml)@([0-9a-f]+)")
_TP = re.compile(r"-tp(?=[.-])")      # a TP-attention recipe ("bs256-1p6d-tp.yaml", "-tp-mtp"), not "max-tpt"


def srt_slurm_share(out: Row) -> None:
    """A disaggregated SGLang row without its server's memory share takes its decode instance's from the srt-slurm
    recipes its KV evidence cites (kv_format), where they agree: recipes of another kind dropped (aggregated ones for a
    disaggregated run; a DP-attention "dep" recipe for a decode instance without attention DP, and the reverse, where
    the names say)."""
    if out["engine"] != "sglang" or "disaggregated:" not in out["notes"] or out["memory_fraction"]:
        return
    cited = [(p, c) for p, c in _CITED.findall(out["notes"]) if "-agg" not in p and "/trtllm/" not in p]
    dep = int(out["dp"] or 1) > 1
    if any("dep" in p or _TP.search(p) for p, _ in cited):      # the names say the layout: keep the row's
        cited = [(p, c) for p, c in cited if ("dep" in p) == dep]
    shares = {_srt_slurm_shares().get((p, c), "") for p, c in cited}
    if len(shares) == 1 and "" not in shares:
        out["memory_fraction"] = shares.pop()
        note(out, f"decode mem-fraction-static {out['memory_fraction']} in "
                  + ", ".join(f"{p}@{c}" for p, c in cited) + " (sources/srt_slurm_shares.csv): memory_fraction")


_RECIPE_BATCH = re.compile(r"_(?:dep|tep|dp|tp)\d+_batch(\d+)_")
_STAGED_BATCH = re.compile(r"decode max_batch_size (\d+) per rank \(recipe\)")


def trt_decode_cap(out: Row) -> None:
    """A disaggregated TensorRT-LLM row's decode cap: its recipe's gen max_batch_size (per attention-DP rank, the
    whole instance without attention DP), which TensorRT-LLM's scheduler never exceeds (the rest wait at the decode
    instance, in TTFT), as max_running_requests. The staged per-rank batch (v_fixture's note) where the source gives
    it, else the batch the srt-slurm recipes the KV evidence cites (kv_format) all name
    (ctxP_genD_{dep,tep}N_batchB_...), where they agree (review, 2026-12-06: the cap was in the notes of 24 TTFT rows
    and priced on none, so their queue for a decode slot was missing: V481, 564 requests over 32 ranks of 16,
    measured 12.7 s, was priced 0.054 s)."""
    if out["engine"] != "trtllm" or "disaggregated:" not in out["notes"] or out["max_running_requests"]:
        return
    staged = _STAGED_BATCH.search(out["notes"])
    if staged is not None:
        out["max_running_requests"] = staged.group(1)
        note(out, "the decode max_batch_size per rank: max_running_requests")
        return
    cited = sorted({p for p, _ in _CITED.findall(out["notes"]) if "/trtllm/" in p})
    batches = {m.group(1) for p in cited if (m := _RECIPE_BATCH.search(p.rsplit("/", 1)[-1]))}
    if len(batches) == 1 and all(_RECIPE_BATCH.search(p.rsplit("/", 1)[-1]) for p in cited):
        out["max_running_requests"] = batches.pop()
        note(out, f"decode max_batch_size {out['max_running_requests']} (per attention-DP rank where dp > 1) in "
                  + ", ".join(cited) + ": max_running_requests")


def launch_facts(out: Row) -> None:
    """What the run's launch flags or recipe state beyond its rule: its KV-cache format (kv_format), then the memory
    share of a disaggregated SGLang decode instance (srt_slurm_share, which reads the recipes kv_format cites) and a
    disaggregated TensorRT-LLM decode instance's batch cap (trt_decode_cap)."""
    kv_format(out)
    srt_slurm_share(out)
    trt_decode_cap(out)


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


def ix_lengths(out: Row, assumed: str = "") -> None:
    """InferenceX's harness draws the lengths of each request (IX_LENGTHS); only where the row has isl and osl."""
    if out["isl"] and out["osl"]:
        out["length_ratio"] = IX_LENGTH_RATIO
        note(out, IX_LENGTHS + assumed)


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


def d_skip(reason: str) -> Callable[[Row, Row], None]:
    def rule(r: Row, out: Row) -> None:
        raise Skip(reason)
    return rule




# ----------------------------------------------------------------------------------------------------------------
# 6. Checks every mapped row passes (rule 1 and the schema), then the driver.
# ----------------------------------------------------------------------------------------------------------------

HARDWARE, MODELS, ENGINE_NAMES = set(list_hardware()), set(list_models()), set(list_engines())


def bundled_id(out: Row) -> None:
    """A staged row naming its model by Hugging Face repository takes the bundled id that repository resolves to (its
    hf_repo, or a same_shape_repos entry: registry.record_for_repo), with a note; a repository nothing resolves is
    left as it is (check skips it as not bundled)."""
    repo = out["model"].split(" (")[0].strip()
    if "/" not in repo:
        return
    try:
        rec = record_for_repo(repo)
    except SpecroofError:
        return
    out["model"] = rec.id
    why = rec.same_shape_why(repo)
    note(out, f"model {repo} priced as {rec.id}" + (f" (same shape: {why})" if why else " (its repository)"))


def check(out: Row) -> None:
    """Vocabulary and number checks; a failure is a Skip with the reason (or a bug in a rule: AssertionError)."""
    if out["expert_precision"] == out["precision"]:
        out["expert_precision"] = ""
    for c in ("precision", "expert_precision", "attention_precision", "kv_precision"):
        assert out[c] in ("", "bf16", "fp16", "fp8", "fp4", "mxfp4"), (c, out)
    if out["hardware"] not in HARDWARE:
        raise Skip(f"hardware not bundled or not stated ({out['hardware'] or 'empty'})")
    if out["model"] not in MODELS:
        bundled_id(out)
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
    assert out["length_ratio"] == "" or (0.0 <= float(out["length_ratio"]) <= 1.0 and out["isl"] and out["osl"]), out
    assert out["batch"] or out["concurrency"] or out["metric"] in ("throughput_ratio",), out
    if out["metric"] in STEP_METRICS and not out["context"] and not (out["isl"] and out["osl"]):
        assert "context" in out["notes"], out


