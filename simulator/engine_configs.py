"""Engine configuration writers: the lines to paste into vLLM, SGLang, TensorRT-LLM and HF generate() for a k
schedule over batch ranges (the schedule itself comes from `advise`). Text only: no pricing here."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .config_plan import (
    ENGINE_METHOD,
    NEEDS_DRAFT_PATH,
    ConfigPlan,
    EngineConfig,
    KRange,
    fixed_caveat,
    fixed_note,
    layout_missing,
    no_spec,
    ranges_text,
)
from .engine_memory import AITER_CONTEXT, AITER_SHARE

# Why an engine has no config for a method (shown instead of a config).
ENGINE_MISSING: dict[tuple[str, str], str] = {
    ("sglang", "suffix"): "SGLang has no suffix decoding in its stable releases (PR #13553 was closed); NGRAM is "
                          "its model-free drafter",
    ("sglang", "medusa"): "SGLang has no Medusa drafter",
    ("trtllm", "medusa"): "TensorRT-LLM runs Medusa only in the legacy TensorRT engine flow (trtllm-build with a "
                          "static medusa_choices tree, greedy only), not through speculative_config",
    ("trtllm", "eagle"): "TensorRT-LLM's PyTorch backend (trtllm-serve) runs decoding_type Eagle as Eagle3 and warns "
                         "that 'EAGLE (v1/v2) draft checkpoints are incompatible with Eagle3' (TorchLlmArgs."
                         "validate_speculative_config): an EAGLE-1 head runs only in the legacy TensorRT engine flow; "
                         "price an EAGLE-3 head (--method eagle3) for trtllm-serve",
    ("hf", "*"): "HF assisted generation takes a separate draft model (assistant_model) or prompt lookup "
                 "(prompt_lookup_num_tokens) only",
    ("*", "self-sparse"): "no engine ships MagicDec-style self-speculation with a sparse draft KV window",
}
# What vLLM's per-batch K table (num_speculative_tokens_per_batch_size, dynamic SD) costs by itself: it downgrades
# FULL_AND_PIECEWISE CUDA graphs to PIECEWISE on Model Runner V1, measured at -14 % single-stream (vLLM #49548; TPOT
# +6.6 % at concurrency 2 and +21.6 % at 189 with K = 0 everywhere), and "the PIECEWISE fallback costs more than DSD
# gains" on 8x MI350X (#48494). Model Runner V2 keeps full graphs with the table ("[MRV2][SD] Make Dynamic SD
# compatible with Full Cuda Graphs", PR #45953) and runs dense models by default since PR #44443 (merged 2026-07-02,
# "Enable by default for all dense models"); MoE models still run V1. So the cost is priced for MoE targets, 0 for
# dense ones (review, 2026-12-05: the 14 % had withheld tables on dense models where current vLLM pays nothing). The
# table is written only where it gains more than that over one k, or switches speculation off (`vllm_table_pays`).
DSD_GRAPH_COST = 0.14


def dsd_graph_cost(moe: bool) -> float:
    """DSD_GRAPH_COST on Model Runner V1 (MoE targets), 0 on V2 (dense targets, vLLM from July 2026)."""
    return DSD_GRAPH_COST if moe else 0.0


# Methods vLLM's per-batch K table is written for: those its dynamic SD is tested with (docs/features/
# speculative_decoding/dynamic_speculative_decoding.md: "Tested with Eagle, Eagle-3, and DFlash. Other SD methods may
# or may not work"), and MTP and draft_model, whose proposers share that proposer's base (SpecDecodeBaseProposer,
# v1/spec_decode/draft_model.py): a note says they are untested. The CPU n-gram and suffix proposers and Medusa heads
# get one k (found by review, 2026-12-05).
VLLM_DSD_METHODS = ("eagle", "eagle3", "dflash", "mtp", "draft")
VLLM_DSD_TESTED = ("eagle", "eagle3", "dflash")


def vllm_table_pays(schedule: Iterable[KRange], fixed_ratio: float, *, moe: bool) -> bool:
    """Whether a per-batch K table is worth what it costs (dsd_graph_cost: V1's PIECEWISE graphs for an MoE target,
    nothing on V2 for a dense one): more than one k, and either a range with speculation off (k = 0) or a batch where
    the one k falls more than that below the per-batch best (found by review: advise wrote an eight-range table whose
    best gain was 7.5 %, beside its own warning of the -14 %). `moe` has no default: whether the target routes to
    experts decides the cost, so every caller says which."""
    ks = {r.k for r in schedule}
    return len(ks) > 1 and (0 in ks or fixed_ratio < 1.0 - dsd_graph_cost(moe))


def vllm_writes_table(schedule: Iterable[KRange], fixed_ratio: float, dp: int, method: str, *, moe: bool) -> bool:
    """Whether the vLLM config holds a per-batch K table: where it pays (vllm_table_pays) and vLLM keeps it, one DP
    rank (VllmConfig._maybe_disable_dynamic_sd_for_data_parallel) and a drafter of its dynamic-SD base."""
    return vllm_table_pays(schedule, fixed_ratio, moe=moe) and dp == 1 and method in VLLM_DSD_METHODS


def _missing(engine: str, method: str) -> str | None:
    for key in ((engine, method), (engine, "*"), ("*", method)):
        if key in ENGINE_MISSING:
            if key == (engine, "*") and method in ENGINE_METHOD.get(engine, {}):
                continue
            return ENGINE_MISSING[key]
    if method not in ENGINE_METHOD.get(engine, {}):
        return f"{engine} has no {method} drafter"
    return None


def _vllm_k(cfg: dict[str, Any], p: ConfigPlan) -> list[str]:
    """Write the depth into vLLM's speculative config: a per-batch table where it pays (vllm_table_pays), else one k;
    returns the notes that say which and why."""
    notes = []
    table = [list(r) for r in p.rank_schedule(p.most)]      # per DP engine
    pays = vllm_table_pays(p.schedule, p.fixed_ratio, moe=p.moe)
    if pays and not vllm_writes_table(p.schedule, p.fixed_ratio, p.dp, p.method, moe=p.moe):
        cfg["num_speculative_tokens"] = p.fixed_k
        why = ("vLLM drops a per-batch table under data parallelism (VllmConfig._maybe_disable_dynamic_sd_for_data_"
               "parallel: ranks choosing different K would diverge) and runs num_speculative_tokens" if p.dp > 1 else
               f"vLLM's dynamic speculative decoding is tested with EAGLE, EAGLE-3 and DFlash (its docs), and the "
               f"{ENGINE_METHOD['vllm'][p.method]} proposer does not share their base")
        notes.append(f"one k: {why}; num_speculative_tokens = {p.fixed_k} stays within {p.fixed_ratio:.0%} of the "
                     f"per-batch best{fixed_caveat(p)} and never switches speculation off: the per-batch table "
                     f"would be {json.dumps(table)}")
        return notes + p.off_note("--max-num-seqs")      # found by review: the table's switch-off went unsaid
    if pays:
        cfg["num_speculative_tokens"] = p.kmax
        cfg["num_speculative_tokens_per_batch_size"] = table
        notes.append("num_speculative_tokens_per_batch_size is vLLM's dynamic speculative decoding (PR #32374): "
                     "[start_bs, end_bs, K] inclusive, K = 0 switches speculation off; num_speculative_tokens is "
                     "the startup maximum")
        notes += p.below_note()
        if p.method not in VLLM_DSD_TESTED:
            notes.append(f"vLLM's docs list dynamic speculative decoding as tested with EAGLE, EAGLE-3 and DFlash; "
                         f"{ENGINE_METHOD['vllm'][p.method]} runs the same proposer base, untested there: check the "
                         "table switches K at your batches")
        if any(k == 0 for _, _, k in table):
            notes.append("vLLM issue #49548 (open): with K = 0 in the table, aggregate throughput collapsed under "
                         "concurrency near the threshold (MTP, Model Runner V1): K is looked up by every scheduled "
                         "request, prefills included, so it flips as requests join, and the KV lookahead of the "
                         "largest K stays reserved at K = 0; check it under your load, or serve throughput traffic "
                         "from a server without speculation")
        notes.append(f"without the table, num_speculative_tokens = {p.fixed_k} alone stays within "
                     f"{p.fixed_ratio:.0%} of the per-batch best where speculation is on{fixed_caveat(p)} (but never "
                     "switches off)")
        if not p.moe:
            notes.append("the table keeps full CUDA graphs on Model Runner V2, vLLM's default for dense models from "
                         "July 2026 (PRs #44443, #45953); on older builds or with VLLM_USE_V2_MODEL_RUNNER=0 it drops "
                         f"to PIECEWISE graphs, about {DSD_GRAPH_COST:.0%} slower by itself (vLLM #49548)")
    elif len({r.k for r in p.schedule}) > 1:
        cfg["num_speculative_tokens"] = p.fixed_k
        notes.append(f"one k: num_speculative_tokens = {p.fixed_k} stays within {p.fixed_ratio:.0%} of the "
                     f"per-batch best{fixed_caveat(p)}, and a per-batch table (num_speculative_tokens_per_batch_size "
                     f"= {json.dumps(table)}) would gain less than the {DSD_GRAPH_COST:.0%} it costs by itself "
                     "(PIECEWISE CUDA graphs on Model Runner V1, which MoE models still run: vLLM #49548, #48494)")
    else:
        cfg["num_speculative_tokens"] = p.kmax
    return notes


def _vllm(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return no_spec("vllm", p)
    cfg: dict[str, Any] = {"method": ENGINE_METHOD["vllm"][p.method]}
    if p.method in NEEDS_DRAFT_PATH:
        cfg["model"] = p.draft
    notes = _vllm_k(cfg, p)
    if p.method == "suffix":      # review, 2026-12-05: the server refuses to start without it
        notes.append("suffix decoding needs Arctic Inference beside vLLM (pip install arctic-inference): "
                     "SpeculativeConfig._validate_suffix_decoding raises ImportError without it")
    if p.tree:
        notes.append("the prediction verifies a tree; vLLM takes a tree through speculative_token_tree, which this "
                     "config does not write: the table above is the chain depth")
    if p.tp > 1 and p.method in NEEDS_DRAFT_PATH:
        notes.append("draft_tensor_parallel_size defaults to the target's TP (1 is also allowed for small drafters)")
    if p.pp > 1:
        notes.append("speculation with pipeline stages depends on the vLLM version: issue #57755 (0.28-0.29) reports "
                     "it failing to start, #52069 (an 0.26 nightly) and #49355 MTP under PP failing; PR #46994 added "
                     "MTP under PP to the V2 model runner")
    args = [f"vllm serve {p.target}", f"--speculative-config '{json.dumps(cfg)}'"]
    if p.tp > 1:
        args.append(f"--tensor-parallel-size {p.tp}")
    if p.dp > 1:                # each DP rank is its own engine core with its own scheduler (vLLM DP deployment docs)
        args.append(f"--data-parallel-size {p.dp}")
    if p.pp > 1:
        args.append(f"--pipeline-parallel-size {p.pp}")
    if p.ep > 1:
        args.append("--enable-expert-parallel")
    args.append(f"--max-num-seqs {p.per_rank(p.most)}")
    if p.share_for("vllm") is not None:
        args.append(f"--gpu-memory-utilization {p.memory_fraction:g}")
        notes.append(p.memory_note("--gpu-memory-utilization"))
    elif p.memory_fraction is not None:
        notes.append(p.foreign_note("--gpu-memory-utilization"))
    notes.append(p.cap_note("--max-num-seqs", p.per_rank(p.most)))   # each DP engine core schedules its own
    return EngineConfig("vllm", True, "shell", " \\\n  ".join(args), tuple(notes))


# What SGLang's flags mean for a method, said beside its config.
SGLANG_METHOD_NOTES = {
    # review, 2026-12-05: model_config.py renames a draft's LlamaForCausalLM to the EAGLE-3 class
    "eagle": ["SGLang loads a draft whose config names LlamaForCausalLM as an EAGLE-3 head (model_config.py: "
              "architectures[0] = 'LlamaForCausalLMEagle3'): an EAGLE-1 head needs a config naming "
              "LlamaForCausalLMEagle, as the lmsys/sglang-EAGLE-* re-uploads do"],
    "dflash": ["--speculative-num-draft-tokens is DFLASH's verify block size (draft block + 1)"],
}


def _sglang(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return no_spec("sglang", p)
    alg = ENGINE_METHOD["sglang"][p.method]
    k, T = p.fixed_k, p.fixed_T
    args = [f"python -m sglang.launch_server --model-path {p.target}", f"--speculative-algorithm {alg}"]
    if p.method in NEEDS_DRAFT_PATH:
        args.append(f"--speculative-draft-model-path {p.draft}")
    if p.method in ("ngram", "dflash"):
        args.append(f"--speculative-num-draft-tokens {k + 1}")
        args += ["--speculative-ngram-max-bfs-breadth 1"] * (p.method == "ngram")
    else:
        args += [f"--speculative-num-steps {k}", f"--speculative-eagle-topk {p.fixed_topk}",
                 f"--speculative-num-draft-tokens {T}"]
    m = _sglang_most(p)
    lay, notes = _sglang_layout(p, m)
    args += lay
    chain = p.fixed_topk == 1 and T == k + 1
    v2 = p.sglang_spec_v2 and chain and p.pp == 1 and p.method != "dflash"   # EAGLE family only
    prefix = ("SGLANG_ENABLE_SPEC_V2=True " if v2 else "") + ("SGLANG_ENABLE_PP_SPEC=1 " if p.pp > 1 else "")
    notes = [fixed_note(p, "SGLang"),
             "SGLang's stable flags have no per-batch k; Auto-Spec (--auto-spec, per-batch-size step ranges, "
             "PR #22246) is unmerged", *notes]
    notes.append(_sglang_worker_note(p))
    if p.interior_off:
        notes.append(f"speculation is also predicted to lose at batch(es) {ranges_text(p.interior_off)}, where SGLang "
                     "keeps it on")
    notes += _sglang_off_note(p)
    notes += SGLANG_METHOD_NOTES.get(p.method, [])
    if p.method == "ngram":
        notes.append("NGRAM's --speculative-num-draft-tokens is the verified tokens per request (k + 1 for a chain); "
                     "--speculative-ngram-max-bfs-breadth 1 keeps it a chain (the default breadth, 10, drafts a "
                     "tree of that many tokens, shallower than the chain priced)")
    return EngineConfig("sglang", True, "shell", prefix + " \\\n  ".join(args), tuple(notes))


def _sglang_worker_note(p: ConfigPlan) -> str:
    """Which SGLang worker the prediction priced: another engine's profile, PP's non-overlapped steps, SpecV2, or
    none. NGRAM and DFLASH are said apart (review): SGLang v0.5.11 turns the overlap scheduler off for both
    (server_args.py _handle_speculative_decoding: NGRAM 'The overlap scheduler ... disabled because of using ngram
    speculative decoding', DFLASH '... (spec v2 is not supported yet)'); later builds (arg_groups/speculative_hook.py
    _handle_ngram, _handle_dflash) keep it on CUDA. Neither reads SGLANG_ENABLE_SPEC_V2."""
    if p.sglang_spec_v2 is None:      # review: the V1 and PP notes were printed of a prediction priced with vLLM's
        return ("priced with another engine's profile, not SGLang's: neither SGLang's overlapped SpecV2 worker "
                "(its default from v0.5.11) nor the V1 worker before it is in this prediction (specroof advise "
                "--engine sglang prices SGLang itself)" + ("; pipeline stages need --disable-overlap-schedule "
                                                           "with speculation (SGLang's PP checks)" * (p.pp > 1)))
    if p.pp > 1:
        return ("pipeline stages need --disable-overlap-schedule with speculation (SGLang's PP checks): the "
                "speculative steps run without overlap, as priced (host.overlap_with_spec_under_pp)")
    alg = ENGINE_METHOD["sglang"][p.method]
    if p.method in ("ngram", "dflash"):
        other = ("this profile prices NGRAM without it (host.no_overlap_methods), slower than those builds run"
                 if p.method == "ngram" else f"--{'no-' * bool(p.sglang_spec_v2)}spec-overlap prices the other kind")
        return (f"priced {'with' if p.sglang_spec_v2 else 'without'} the overlap scheduler: SGLang v0.5.11 turns it "
                f"off for {alg} (server_args.py _handle_speculative_decoding), later builds keep it on CUDA "
                f"(speculative_hook.py _handle_{p.method}); {other}")
    if p.sglang_spec_v2:
        return ("priced with the overlapped SpecV2 worker: SGLang's default from v0.5.11 (PR #21062), for a "
                "chain opt-in through SGLANG_ENABLE_SPEC_V2=True from v0.5.4 (written above for a chain; the "
                "variable is gone with the V1 worker, PR #27964); a tree runs it only after v0.5.14")
    return ("priced with the V1 worker (no speculative overlap): SGLang builds before v0.5.11, or "
            "SGLANG_ENABLE_SPEC_V2=0 through v0.5.14; later builds run only the overlapped worker")


def _sglang_memory(p: ConfigPlan, args: list[str]) -> list[str]:
    """SGLang's --mem-fraction-static (appended to args) and its note: the share priced, written before the factor
    SGLang applies to what it is given on ROCm's aiter backend (engine_memory.sglang_aiter)."""
    if p.memory_fraction is None:
        return []
    if p.share_for("sglang") is None:
        return [p.foreign_note("--mem-fraction-static")]
    flag = round(p.memory_fraction / AITER_SHARE, 4) if p.sglang_aiter else p.memory_fraction
    args.append(f"--mem-fraction-static {flag:g}")
    aiter = (f"; SGLang multiplies the {flag:g} written by {AITER_SHARE:g} on ROCm's aiter attention backend for a "
             f"model of more than {AITER_CONTEXT} positions, to the {p.memory_fraction:g} priced")
    return [p.memory_note("--mem-fraction-static") + (aiter if p.sglang_aiter else "")]


def _sglang_layout(p: ConfigPlan, m: int) -> tuple[list[str], list[str]]:
    """SGLang's parallelism, batch limits and memory share for at most m sequences, with their notes. Under DP
    attention (an MoE) --tp counts every GPU, --max-running-requests is the instance's (each rank takes a 1/dp floor
    of it, tp_worker) and --cuda-graph-max-bs one rank's batch (CudaGraphRunner.can_run checks the largest rank's);
    a dense model's --dp runs replicas, each with its own limits."""
    dpa = p.dp > 1 and p.moe
    args = [f"--tp {p.tp * p.dp}", f"--dp {p.dp}", "--enable-dp-attention"] if dpa else \
        ([f"--tp {p.tp}"] if p.tp > 1 else []) + ([f"--dp {p.dp}"] if p.dp > 1 else [])
    args += [f"--pp-size {p.pp}", "--disable-overlap-schedule"] * (p.pp > 1) + [f"--ep-size {p.ep}"] * (p.ep > 1)
    g, run = p.graph_bs(m), p.per_rank(m) * (p.dp if dpa else 1)
    args += [f"--cuda-graph-max-bs {g}", f"--max-running-requests {run}"]
    notes = _sglang_memory(p, args)
    notes += [f"--cuda-graph-max-bs {g}: " + ("your cap; batches above it are priced eager" if p.graph_cap else
             f"keeps every batch {'of the range' if m == p.hi else 'that fits'} CUDA-graphed (above it decode runs "
             "eager, PR #33900)")]
    if p.pp > 1:
        notes.append("SGLang refused speculation with pipeline stages until PR #30775 (merged 2026-07), which allows "
                     "it behind SGLANG_ENABLE_PP_SPEC=1; older releases refuse this line")
    if p.dp > 1 or p.pp > 1:
        notes.append(f"--cuda-graph-max-bs is one {'DP rank' if p.dp > 1 else 'stage'}'s micro-batch and "
                     f"--max-running-requests {'the instance' if dpa else 'one replica'}'s "
                     f"({p.per_rank(m)} sequences a {'rank' if dpa else 'replica'})")
    return args, notes


def _sglang_most(p: ConfigPlan) -> int:
    """The most sequences SGLang holds with its one k: where that k's verify stops fitting, or the configs' cap."""
    return min(p.most, p.fixed_fits_to) if p.fixed_fits_to else p.most


def _sglang_off_note(p: ConfigPlan) -> list[str]:
    """Why SGLang, which cannot switch speculation off by batch, needs a word: its one k stops fitting in memory,
    or speculation loses, above some batch of the range (the lower of the two)."""
    m = _sglang_most(p)
    if m < p.hi and (p.off_above is None or p.off_fits or m < p.off_above):
        return [f"above batch {m} the verify of k = {p.fixed_k} does not fit in memory (the drafter and the verify "
                f"tokens' KV beside the target's) and SGLang cannot switch speculation off by batch: with it on, "
                f"SGLang holds at most {m} sequences; serve without speculation to hold up to {p.cap_base or p.hi}"]
    if p.off_above is None:
        return []
    return [f"speculation is predicted to lose above batch {p.off_above} and SGLang cannot switch it off by batch: "
            f"cap --max-running-requests {p.off_above} for latency-bound serving, or serve without speculation when "
            f"the load stays above {p.off_above}"]


# TensorRT-LLM methods whose one-model path resolves a draft length per step (SpeculativeDecodingMode.
# support_dynamic_draft_len in _torch/speculative/interface.py: EAGLE-3 one-model, MTP-Eagle one-model, the default for
# DeepSeek's single MTP layer, DFlash, SA, and DraftTarget, whose config runs one-model by default,
# DraftTargetDecodingConfig._draft_target_one_model); NGram and the two-model Eagle run max_draft_len at every batch.
# Early builds listed EAGLE-3 one-model alone ('TODO: expand to all one-model algorithms'): there the others ignore
# the schedule (review, 2026-12-05), which the config's note says.
TRT_DYNAMIC = ("eagle3", "mtp", "dflash", "suffix", "draft")


def trtllm_schedule_ok(p: ConfigPlan) -> bool:
    """Whether TensorRT-LLM accepts the k schedule as a draft_len_schedule: a method with a dynamic draft length,
    and the smallest batch key carrying the largest k (DecodingBaseConfig.validate_draft_len_schedule_and_sort raises
    'draft_len_schedule[b] must equal max_draft_len because it is the smallest batch-size key'; found by review: a
    schedule {5: 3, 128: 7} under max_draft_len 7 was written)."""
    if p.method not in TRT_DYNAMIC or not p.on_ranges:
        return False
    rs = p.rank_schedule(max(r.end for r in p.on_ranges))
    return rs[0][2] == max(k for _, _, k in rs)


def _trtllm_depth(p: ConfigPlan) -> int:
    """max_draft_len: the written schedule's largest k (its smallest key's: one rank's batches, found by review: under
    attention DP the instance's largest k need not reach a rank's table), else the one k."""
    last_on = max((x.end for x in p.on_ranges), default=0)
    if trtllm_schedule_ok(p):
        return max(k for _, _, k in p.rank_schedule(last_on))
    return p.kmax if len({r.k for r in p.schedule if r.end <= last_on}) <= 1 else p.fixed_k


def _trtllm_head(p: ConfigPlan) -> list[str]:
    """spec.yaml up to the speculative_config's drafter: batch limits, parallelism, decoding type and depth."""
    # max_batch_size is one attention-DP rank's micro-batch: the pyexecutor admits pp_size x max_batch_size per rank
    per = p.per_rank(p.most, micro=True)
    lines = [f"# trtllm-serve {p.target} --extra_llm_api_options spec.yaml", f"max_batch_size: {per}"]
    if p.tp * p.dp > 1:
        lines.append(f"tensor_parallel_size: {p.tp * p.dp}")
    if p.dp > 1:
        lines.append("enable_attention_dp: true")
    if p.pp > 1:
        lines.append(f"pipeline_parallel_size: {p.pp}")
    if p.ep > 1:
        lines.append(f"moe_expert_parallel_size: {p.ep}")
    lines += ["cuda_graph_config:", f"  max_batch_size: {p.graph_bs(p.most)}", "  enable_padding: true",
              "speculative_config:",
              f"  decoding_type: {ENGINE_METHOD['trtllm'][p.method]}"]
    if p.method == "mtp":
        lines.append(f"  num_nextn_predict_layers: {_trtllm_depth(p)}")
        if p.options.get("relaxed_acceptance"):   # review: with relaxed_topk 1, delta 0 (the defaults) it is exact
            lines += ["  use_relaxed_acceptance_for_thinking: true", "  relaxed_topk: 10", "  relaxed_delta: 0.6"]
    else:
        lines.append(f"  max_draft_len: {_trtllm_depth(p)}")
    if p.method in NEEDS_DRAFT_PATH:
        lines.append(f"  speculative_model_dir: {p.draft}")
    return lines


def _trtllm_schedule(p: ConfigPlan) -> tuple[list[str], list[str]]:
    """The k schedule's spec.yaml lines and notes: a draft_len_schedule when k changes with the batch up to the last
    on-range (and TensorRT-LLM takes it), else max_concurrency when speculation switches off above a batch."""
    last_on = max(r.end for r in p.on_ranges)
    upto = [r for r in p.schedule if r.end <= last_on]
    if len({r.k for r in upto}) > 1 and trtllm_schedule_ok(p):
        return _trtllm_table(p, last_on, upto)
    notes = [_trtllm_one_k_note(p)] if len({r.k for r in upto}) > 1 else []
    if p.off_above is None:
        return [], notes
    n = p.per_rank(p.off_above)
    return [f"  max_concurrency: {n}"], notes + [f"max_concurrency {n}: speculation off above {n} active requests "
                                                 "(PR #6676)"]


def _trtllm_table(p: ConfigPlan, last_on: int, upto: list[KRange]) -> tuple[list[str], list[str]]:
    """The draft_len_schedule lines (keyed by one rank's active requests: should_use_spec_decode) and their notes."""
    rs = p.rank_schedule(last_on)
    one = [(1, 1, rs[0][2])] if rs[0][1] > 1 else []   # builds whose validator requires key 1 (review, 2026-12-05)
    lines = ["  draft_len_schedule:", *(f"    {e}: {k}" for _, e, k in one + list(rs))]
    notes = ["draft_len_schedule {batch: k}: k applies up to that batch; batches above the last key run k = 0 "
             "(PR #10860, 2026-02); the stage-1 builds before it (PR #8194) read each key as the batch its k starts "
             "at, the largest key at or below the batch, so there every range shifts up one key", *p.below_note()]
    if one:
        notes.append("key 1 repeats the first range's k: the first builds with draft_len_schedule refuse a schedule "
                     "without it ('draft_len_schedule must include batch_size=1'); later ones need only the smallest "
                     "key to carry max_draft_len")
    if p.method != "eagle3":
        notes.append(f"{ENGINE_METHOD['trtllm'][p.method]} takes a per-step draft length only in builds whose "
                     "support_dynamic_draft_len lists it (early ones listed EAGLE-3 one-model alone): an older build "
                     "runs max_draft_len at every batch")
    if any(r.k == 0 for r in upto):
        notes.append("the 0 entries switch speculation off where it is predicted to lose; if your TensorRT-LLM "
                     "version floors schedule values at 1 (PR #16888), those batches run k = 1")
    if p.off_above is None:
        top = "" if p.most == p.hi else " that fits"
        share = " (one DP rank's share)" if p.dp > 1 else ""
        notes.append(f"the last key is {p.per_rank(p.most)}, the top of the range{top}{share}: "
                     "larger batches would run without speculation, max_batch_size keeps them out")
    return lines, notes


def _trtllm_one_k_note(p: ConfigPlan) -> str:
    """Why the per-batch k schedule is not written for TensorRT-LLM, and what the one k costs."""
    why = (f"TensorRT-LLM's {ENGINE_METHOD['trtllm'][p.method]} drafter has no per-step draft length (only the "
           "one-model EAGLE-3, MTP-Eagle, DFlash, SA and DraftTarget paths: support_dynamic_draft_len)"
           if p.method not in TRT_DYNAMIC else
           "TensorRT-LLM requires the smallest batch key of draft_len_schedule to carry max_draft_len, the largest "
           "k (llm_args.py validate_draft_len_schedule_and_sort), and here " +
           ("speculation is predicted to lose at the smallest batches" if p.schedule[0].k == 0 else
            "the best k grows with the batch"))
    return (f"{why}: one k, max_draft_len {p.fixed_k}, which stays within {p.fixed_ratio:.0%} of the per-batch best"
            f"{fixed_caveat(p)}" + (f"; speculation is also predicted to lose at batch(es) "
                                     f"{ranges_text(p.interior_off)}, where it stays on" if p.interior_off else ""))


def _trtllm(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return no_spec("trtllm", p)
    sched, notes = _trtllm_schedule(p)
    lines = _trtllm_head(p) + sched
    if p.method == "mtp" and p.options.get("relaxed_acceptance"):
        # tech blog 2, "How to run the DeepSeek-R1 model with Relaxed Acceptance": https://github.com/NVIDIA/
        # TensorRT-LLM/blob/main/docs/source/blogs/tech_blog/blog2_DeepSeek_R1_MTP_Implementation_and_Optimization.md
        notes.append("relaxed_topk 10 and relaxed_delta 0.6 are NVIDIA's DeepSeek-R1 recipe (TensorRT-LLM tech blog 2, "
                     "DeepSeek R1 MTP Implementation and Optimization); with MTPDecodingConfig's defaults, 1 and 0.0, "
                     "relaxed acceptance accepts only the top-1 token, as strict acceptance does")
    if p.tree:
        notes.append("the prediction verifies a tree; TensorRT-LLM's EAGLE-3 dynamic tree (use_dynamic_tree, "
                     "max_total_draft_tokens) is not written here")
    if p.dp > 1 or p.pp > 1:
        notes.append(p.cap_note("max_batch_size", p.per_rank(p.most, micro=True)) + "; draft_len_schedule and "
                     "max_concurrency count one rank's active requests")
    mem, why = _trtllm_memory(p)
    return EngineConfig("trtllm", True, "yaml", "\n".join(lines + mem), tuple(notes + why))


def _trtllm_memory(p: ConfigPlan) -> tuple[list[str], list[str]]:
    """kv_cache_config.free_gpu_memory_fraction and its note: the share priced where it is TensorRT-LLM's kind, a
    share of the memory free after the weights and the start-up dry run (engine_profiles/trtllm.toml [memory]
    share_of_free; KvCacheCreator._cal_max_memory, _torch/pyexecutor/_util.py: (total - peak + the dry run's own KV)
    x fraction). A kv_cache_config in the --extra_llm_api_options YAML overrides trtllm-serve's
    --kv_cache_free_gpu_memory_fraction (default 0.9; llmapi/llm_args.py update_llm_args_with_extra_dict)."""
    flag = "kv_cache_config.free_gpu_memory_fraction"
    if p.memory_fraction is None:
        return [], []
    if p.share_for("trtllm") is None:
        return [], [p.foreign_note(flag)]
    return (["kv_cache_config:", f"  free_gpu_memory_fraction: {p.memory_fraction:g}"],
            [p.memory_note(flag) + "; TensorRT-LLM gives the KV cache that share of the memory left free once the "
             "weights are loaded and its start-up dry run has peaked (a kv_cache_config.max_tokens, where you set one, "
             "caps it further: the smaller wins)"])


def _hf(p: ConfigPlan) -> EngineConfig:
    if p.lo > 1:
        return EngineConfig("hf", True, "", "", ("HF assisted generation runs at batch 1 only, outside this range",))
    k1 = p.schedule[0].k
    if k1 == 0:
        return EngineConfig("hf", True, "", "", ("speculation is not predicted to pay at batch 1: call generate() "
                                                 "without an assistant",))
    if p.method == "draft":
        text = (f"model.generate(**inputs, assistant_model=AutoModelForCausalLM.from_pretrained(\"{p.draft}\"),\n"
                f"               num_assistant_tokens={k1}, num_assistant_tokens_schedule=\"constant\",\n"
                f"               assistant_confidence_threshold=0.0)")
    else:
        text = f"model.generate(**inputs, prompt_lookup_num_tokens={k1})"
    return EngineConfig("hf", True, "python", text, ("batch size 1 only (assisted generation rejects batches); "
                                                     f"k = {k1} is the best depth at batch 1",))


_WRITERS = {"vllm": _vllm, "sglang": _sglang, "trtllm": _trtllm, "hf": _hf}


def engine_configs(p: ConfigPlan, engines: Iterable[str]) -> tuple[EngineConfig, ...]:
    out = []
    for e in engines:
        why = _missing(e, p.method) or layout_missing(e, p)
        out.append(EngineConfig(e, False, "", "", (why,)) if why else _WRITERS[e](p))
    return tuple(out)


