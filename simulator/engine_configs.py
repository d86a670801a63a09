"""Engine configuration writers: the lines to paste into vLLM, SGLang, TensorRT-LLM and HF generate() for a k
schedule over batch ranges (the schedule itself comes from `advise`). Text only: no pricing here."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .registry import list_models, model_record

EMIT_ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "hf")

# specroof method -> the engine's own name (vLLM --speculative-config "method", SGLang --speculative-algorithm,
# TensorRT-LLM speculative_config.decoding_type, HF generate() keyword). engines.md §1.1, §2.1, §3.1, §4.
ENGINE_METHOD: dict[str, dict[str, str]] = {
    "vllm": {"eagle3": "eagle3", "eagle": "eagle", "mtp": "mtp", "ngram": "ngram", "draft": "draft_model",
             "dflash": "dflash", "suffix": "suffix", "medusa": "medusa"},
    "sglang": {"eagle3": "EAGLE3", "eagle": "EAGLE", "mtp": "NEXTN", "ngram": "NGRAM", "draft": "STANDALONE",
               "dflash": "DFLASH"},
    "trtllm": {"eagle3": "Eagle3", "eagle": "Eagle", "mtp": "MTP", "ngram": "NGram", "draft": "DraftTarget",
               "dflash": "DFlash", "suffix": "SA"},
    "hf": {"draft": "assistant_model", "ngram": "prompt_lookup_num_tokens"},
}
# Why an engine has no config for a method (shown instead of a config).
ENGINE_MISSING: dict[tuple[str, str], str] = {
    ("sglang", "suffix"): "SGLang has no suffix decoding in its stable releases (PR #13553 was closed); NGRAM is "
                          "its model-free drafter",
    ("sglang", "medusa"): "SGLang has no Medusa drafter",
    ("trtllm", "medusa"): "TensorRT-LLM runs Medusa only in the legacy TensorRT engine flow (trtllm-build with a "
                          "static medusa_choices tree, greedy only), not through speculative_config",
    ("hf", "*"): "HF assisted generation takes a separate draft model (assistant_model) or prompt lookup "
                 "(prompt_lookup_num_tokens) only",
    ("*", "self-sparse"): "no engine ships MagicDec-style self-speculation with a sparse draft KV window",
}
_NEEDS_DRAFT_PATH = {"draft", "eagle", "eagle3", "medusa", "dflash"}
# What vLLM's per-batch K table (num_speculative_tokens_per_batch_size, dynamic SD) costs by itself: it downgrades
# FULL_AND_PIECEWISE CUDA graphs to PIECEWISE on Model Runner V1, measured at -14 % single-stream (vLLM #49548; TPOT
# +6.6 % at concurrency 2 and +21.6 % at 189 with K = 0 everywhere), and "the PIECEWISE fallback costs more than DSD
# gains" on 8x MI350X (#48494). The table is written only where it gains more than that over one k, or switches
# speculation off (`vllm_table_pays`).
DSD_GRAPH_COST = 0.14


def vllm_table_pays(schedule: Iterable[KRange], fixed_ratio: float) -> bool:
    """Whether a per-batch K table is worth vLLM's PIECEWISE graphs: more than one k, and either a range with
    speculation off (k = 0) or a batch where the one k falls more than DSD_GRAPH_COST below the per-batch best (found
    by review: advise wrote an eight-range table whose best gain was 7.5 %, beside its own warning of the -14 %)."""
    ks = {r.k for r in schedule}
    return len(ks) > 1 and (0 in ks or fixed_ratio < 1.0 - DSD_GRAPH_COST)


@dataclass(frozen=True, slots=True)
class KRange:
    """Batches start..end (inclusive) run draft depth k (0: speculation off) verifying tree_tokens per sequence
    (0 when off; k + 1 for a chain). speedup_min / speedup_max: the predicted speedup of the best k over the
    evaluated batches in the range (below 1 in an off range: what speculation would have cost)."""

    start: int
    end: int
    k: int
    tree_tokens: int
    speedup_min: float
    speedup_max: float
    fits: str = "yes"       # "yes" (with speculation), "without speculation" or "no" (not even without)

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "k": self.k, "tree_tokens": self.tree_tokens,
                "speedup_min": num_or_none(self.speedup_min), "speedup_max": num_or_none(self.speedup_max),
                "fits": self.fits}


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """What to paste into one engine. supported False: `notes` say why there is no config; text "" with
    supported True: speculation is predicted not to pay, run without it."""

    engine: str
    supported: bool
    kind: str          # "shell" | "yaml" | "python" | ""
    text: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "supported": self.supported, "kind": self.kind, "text": self.text,
                "notes": list(self.notes)}


def num_or_none(x: float) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def repo_of(name: str | None) -> str:
    """The HF repo of a bundled model id, else a placeholder to fill in."""
    if not name:
        return ""
    if name in list_models():
        repo = model_record(name).hf_repo
        if repo:
            return repo
    return f"<path to {name}>"


def _missing(engine: str, method: str) -> str | None:
    for key in ((engine, method), (engine, "*"), ("*", method)):
        if key in ENGINE_MISSING:
            if key == (engine, "*") and method in ENGINE_METHOD.get(engine, {}):
                continue
            return ENGINE_MISSING[key]
    if method not in ENGINE_METHOD.get(engine, {}):
        return f"{engine} has no {method} drafter"
    return None


@dataclass(frozen=True)
class ConfigPlan:
    """What the config writers need, all read from the advice arrays."""

    method: str
    target: str
    draft: str
    tp: int
    ep: int
    lo: int
    hi: int
    schedule: tuple[KRange, ...]
    off_above: int | None
    pays: bool
    fixed_k: int
    fixed_T: int
    fixed_ratio: float
    topk: int
    options: Mapping[str, Any]
    interior_off: tuple[int, ...] = ()
    fixed_topk: int = 1
    sglang_spec_v2: bool = False       # SGLang priced with SpecV2 (Scenario.spec_overlap): SGLANG_ENABLE_SPEC_V2
    cap: int = 0                       # the most sequences the configs admit: hi, or less where hi does not fit
    cap_base: int = 0                  # the most that fit without speculation (no drafter), up to hi
    off_fits: bool = False             # off above off_above because speculation stops fitting, not paying
    fixed_fits_to: int = 0             # the largest batch the fixed k's verify fits in memory at (0: not known)
    no_spec_reason: str = ""           # why no config is written (default: speculation loses at every batch)
    dp: int = 1                        # data-parallel ranks of tp GPUs (DP attention for an MoE, else replicas)
    pp: int = 1                        # pipeline stages
    memory_fraction: float | None = None   # the share of GPU memory priced (the profile's or Scenario's)
    moe: bool = False                  # the target routes to experts: dp > 1 is DP attention, not replicas
    graph_cap: int | None = None       # Scenario.cuda_graph_max_batch: one rank's micro-batch replays graphs to it

    @property
    def most(self) -> int:
        """The batch the configs admit at most: the range's top, or the largest batch that fits below it."""
        return self.cap or self.hi

    def cap_note(self, flag: str, v: int | None = None) -> str:
        """Why `flag` is `v` (default: most): the range's top, or the largest batch that fits in memory, or a DP
        rank's (pipeline micro-batch's) share of it."""
        v = self.most if v is None else v
        share = f" (a share of {self.most} over {self.dp} DP ranks x {self.pp} stages)" if v != self.most else ""
        if self.most < self.hi:
            return (f"{flag} {v}{share}: the largest batch that fits in memory with the drafter loaded (the range "
                    f"asks for up to {self.hi})")
        return f"{flag} {v}{share} keeps the batch inside the range the prediction covers"

    def per_rank(self, n: int, micro: bool = False) -> int:
        """Sequences the busiest of the dp ranks holds of n, ceil(n / dp); `micro`: one of its pp micro-batches,
        ceil(n / (dp pp)) (= ceil(ceil(n / dp) / pp) for whole n)."""
        return -(-n // (self.dp * (self.pp if micro else 1)))

    def rank_schedule(self, upto: int) -> list[tuple[int, int, int]]:
        """The k schedule up to instance batch `upto` as (start, end, k) ranges of one DP rank's batch (what an
        engine that schedules per rank looks k up by): rank batch b takes the k priced at instance batch dp x b."""
        k_at = lambda n: next((r.k for r in self.schedule if r.start <= n <= r.end), 0)  # noqa: E731
        out: list[list[int]] = []
        for b in range(1, self.per_rank(upto) + 1):
            k = k_at(min(b * self.dp, upto))
            if out and out[-1][2] == k:
                out[-1][1] = b
            else:
                out.append([b, b, k])
        return [(s, e, k) for s, e, k in out]

    def graph_bs(self, n: int) -> int:
        """The CUDA-graph cap to write: the scenario's, else one rank's micro-batch of n."""
        return self.graph_cap or self.per_rank(n, micro=True)

    @property
    def on_ranges(self) -> list[KRange]:
        return [r for r in self.schedule if r.k > 0]

    @property
    def kmax(self) -> int:
        return max((r.k for r in self.schedule), default=0)

    @property
    def tree(self) -> bool:
        return any(r.tree_tokens > r.k + 1 for r in self.on_ranges) or self.fixed_T > self.fixed_k + 1


def _no_spec(engine: str, p: ConfigPlan) -> EngineConfig:
    why = p.no_spec_reason or f"speculation is predicted not to pay at any batch in {p.lo}..{p.hi}: serve without it"
    return EngineConfig(engine, True, "", "", (why,))


def _vllm_k(cfg: dict[str, Any], p: ConfigPlan) -> list[str]:
    """Write the depth into vLLM's speculative config: a per-batch table where it pays (vllm_table_pays), else one k;
    returns the notes that say which and why."""
    notes = []
    table = [list(r) for r in p.rank_schedule(p.most)]      # per DP engine
    if vllm_table_pays(p.schedule, p.fixed_ratio):
        cfg["num_speculative_tokens"] = p.kmax
        cfg["num_speculative_tokens_per_batch_size"] = table
        notes.append("num_speculative_tokens_per_batch_size is vLLM's dynamic speculative decoding (PR #32374): "
                     "[start_bs, end_bs, K] inclusive, K = 0 switches speculation off; num_speculative_tokens is "
                     "the startup maximum")
        notes.append(f"without the table, num_speculative_tokens = {p.fixed_k} alone stays within "
                     f"{p.fixed_ratio:.0%} of the per-batch best where speculation is on{_fixed_caveat(p)} (but never "
                     "switches off)")
    elif len({r.k for r in p.schedule}) > 1:
        cfg["num_speculative_tokens"] = p.fixed_k
        notes.append(f"one k: num_speculative_tokens = {p.fixed_k} stays within {p.fixed_ratio:.0%} of the "
                     f"per-batch best{_fixed_caveat(p)}, and a per-batch table (num_speculative_tokens_per_batch_size "
                     f"= {json.dumps(table)}) would gain less than the {DSD_GRAPH_COST:.0%} it costs by itself "
                     "(PIECEWISE CUDA graphs on Model Runner V1: vLLM #49548, #48494)")
    else:
        cfg["num_speculative_tokens"] = p.kmax
    return notes


def _vllm(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return _no_spec("vllm", p)
    cfg: dict[str, Any] = {"method": ENGINE_METHOD["vllm"][p.method]}
    if p.method in _NEEDS_DRAFT_PATH:
        cfg["model"] = p.draft
    notes = _vllm_k(cfg, p)
    if p.tree:
        notes.append("the prediction verifies a tree; vLLM takes a tree through speculative_token_tree, which this "
                     "config does not write: the table above is the chain depth")
    if p.tp > 1 and p.method in _NEEDS_DRAFT_PATH:
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
    if p.memory_fraction is not None:
        args.append(f"--gpu-memory-utilization {p.memory_fraction:g}")
    notes.append(p.cap_note("--max-num-seqs", p.per_rank(p.most)))   # each DP engine core schedules its own
    return EngineConfig("vllm", True, "shell", " \\\n  ".join(args), tuple(notes))


def _fixed_fits_all(p: ConfigPlan) -> bool:
    """Whether the one k fits in memory at every batch where speculation is on."""
    on_hi = p.off_above if p.off_above is not None else p.hi
    return p.fixed_fits_to == 0 or p.fixed_fits_to >= on_hi


def _fixed_caveat(p: ConfigPlan) -> str:
    """How the one k's worst case treats the batches it does not fit at ('' when it fits at all of them)."""
    return "" if _fixed_fits_all(p) else " (a batch it does not fit at counted as served without speculation)"


def _fixed_note(p: ConfigPlan, engine: str) -> str:
    on_hi = p.off_above if p.off_above is not None else p.hi
    fits = (f"fits at every batch where speculation is on ({p.lo}..{on_hi})" if _fixed_fits_all(p) else
            f"fits at the batches where speculation is on up to {p.fixed_fits_to} (of {p.lo}..{on_hi}; above it "
            f"its verify does not fit in memory and {engine} holds fewer sequences)")
    return (f"{engine} takes one k for every batch: k = {p.fixed_k} {fits} and stays closest to the per-batch best "
            f"there (worst case {p.fixed_ratio:.0%} of the best speedup){_fixed_caveat(p)}")


def _sglang(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return _no_spec("sglang", p)
    alg = ENGINE_METHOD["sglang"][p.method]
    k, T = p.fixed_k, p.fixed_T
    args = [f"python -m sglang.launch_server --model-path {p.target}", f"--speculative-algorithm {alg}"]
    if p.method in _NEEDS_DRAFT_PATH:
        args.append(f"--speculative-draft-model-path {p.draft}")
    if p.method in ("ngram", "dflash"):
        args.append(f"--speculative-num-draft-tokens {k + 1}")
    else:
        topk = p.fixed_topk if T > k + 1 else 1
        args += [f"--speculative-num-steps {k}", f"--speculative-eagle-topk {topk}",
                 f"--speculative-num-draft-tokens {T}"]
    m = _sglang_most(p)
    lay, notes = _sglang_layout(p, m)
    args += lay
    prefix = ("SGLANG_ENABLE_SPEC_V2=True " if p.sglang_spec_v2 and T == k + 1 else "") + \
        ("SGLANG_ENABLE_PP_SPEC=1 " if p.pp > 1 else "")
    notes = [_fixed_note(p, "SGLang"),
             "SGLang's stable flags have no per-batch k; Auto-Spec (--auto-spec, per-batch-size step ranges, "
             "PR #22246) is unmerged", *notes]
    if p.sglang_spec_v2:
        notes.append("priced with the overlapped SpecV2 worker: SGLang's default from v0.5.11 (PR #21062), for a "
                     "chain opt-in through SGLANG_ENABLE_SPEC_V2=True from v0.5.4 (written above for a chain; the "
                     "variable is gone with the V1 worker, PR #27964); a tree runs it only after v0.5.14")
    else:
        notes.append("priced with the V1 worker (no speculative overlap): SGLang builds before v0.5.11, or "
                     "SGLANG_ENABLE_SPEC_V2=0 through v0.5.14; later builds run only the overlapped worker")
    if p.interior_off:
        notes.append(f"speculation is also predicted to lose at batch(es) {ranges_text(p.interior_off)}, where SGLang "
                     "keeps it on")
    notes += _sglang_off_note(p)
    if p.method == "dflash":
        notes.append("--speculative-num-draft-tokens is DFLASH's verify block size (draft block + 1)")
    if p.method == "ngram":
        notes.append("NGRAM's --speculative-num-draft-tokens is the verified tokens per request (k + 1 for a chain)")
    return EngineConfig("sglang", True, "shell", prefix + " \\\n  ".join(args), tuple(notes))


def _sglang_layout(p: ConfigPlan, m: int) -> tuple[list[str], list[str]]:
    """SGLang's parallelism, batch limits and memory share for at most m sequences, with their notes. Under DP
    attention (an MoE) --tp counts every GPU, --max-running-requests is the instance's (each rank takes a 1/dp floor
    of it, tp_worker) and --cuda-graph-max-bs one rank's batch (CudaGraphRunner.can_run checks the largest rank's);
    a dense model's --dp runs replicas, each with its own limits."""
    dpa = p.dp > 1 and p.moe
    args = [f"--tp {p.tp * p.dp}", f"--dp {p.dp}", "--enable-dp-attention"] if dpa else \
        ([f"--tp {p.tp}"] if p.tp > 1 else []) + ([f"--dp {p.dp}"] if p.dp > 1 else [])
    args += [f"--pp-size {p.pp}"] * (p.pp > 1) + [f"--ep-size {p.ep}"] * (p.ep > 1)
    g, run = p.graph_bs(m), p.per_rank(m) * (p.dp if dpa else 1)
    args += [f"--cuda-graph-max-bs {g}", f"--max-running-requests {run}"]
    if p.memory_fraction is not None:
        args.append(f"--mem-fraction-static {p.memory_fraction:g}")
    notes = [f"--cuda-graph-max-bs {g}: " + ("your cap; batches above it are priced eager" if p.graph_cap else
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
    lines += ["cuda_graph_config:", f"  max_batch_size: {p.graph_bs(p.most)}", "speculative_config:",
              f"  decoding_type: {ENGINE_METHOD['trtllm'][p.method]}"]
    if p.method == "mtp":
        lines.append(f"  num_nextn_predict_layers: {p.kmax}")
        if p.options.get("relaxed_acceptance"):
            lines.append("  use_relaxed_acceptance_for_thinking: true")
    else:
        lines.append(f"  max_draft_len: {p.kmax}")
    if p.method in _NEEDS_DRAFT_PATH:
        lines.append(f"  speculative_model_dir: {p.draft}")
    return lines


def _trtllm_schedule(p: ConfigPlan) -> tuple[list[str], list[str]]:
    """The k schedule's spec.yaml lines and notes: a draft_len_schedule when k changes with the batch up to the last
    on-range, else max_concurrency when speculation switches off above a batch."""
    lines: list[str] = []
    notes = []
    last_on = max(r.end for r in p.on_ranges)
    upto = [r for r in p.schedule if r.end <= last_on]
    if len({r.k for r in upto}) > 1:      # keyed by one rank's active requests (should_use_spec_decode)
        lines.append("  draft_len_schedule:")
        lines += [f"    {e}: {k}" for _, e, k in p.rank_schedule(last_on)]
        notes.append("draft_len_schedule {batch: k}: k applies up to that batch; batches above the last key run "
                     "k = 0 (PR #10860)")
        if any(r.k == 0 for r in upto):
            notes.append("the 0 entries switch speculation off below the crossover; if your TensorRT-LLM version "
                         "floors schedule values at 1 (PR #16888), those batches run k = 1")
        if p.off_above is None:
            top = "" if p.most == p.hi else " that fits"
            share = " (one DP rank's share)" if p.dp > 1 else ""
            notes.append(f"the last key is {p.per_rank(p.most)}, the top of the range{top}{share}: "
                         "larger batches would run without speculation, max_batch_size keeps them out")
    elif p.off_above is not None:
        lines.append(f"  max_concurrency: {p.per_rank(p.off_above)}")
        notes.append(f"max_concurrency {p.per_rank(p.off_above)}: speculation off above {p.per_rank(p.off_above)} "
                     "active requests (PR #6676)")
    return lines, notes


def _trtllm(p: ConfigPlan) -> EngineConfig:
    if not p.pays:
        return _no_spec("trtllm", p)
    sched, notes = _trtllm_schedule(p)
    lines = _trtllm_head(p) + sched
    if p.tree:
        notes.append("the prediction verifies a tree; TensorRT-LLM's EAGLE-3 dynamic tree (use_dynamic_tree, "
                     "max_total_draft_tokens) is not written here")
    if p.dp > 1 or p.pp > 1:
        notes.append(p.cap_note("max_batch_size", p.per_rank(p.most, micro=True)) + "; draft_len_schedule and "
                     "max_concurrency count one rank's active requests")
    if p.memory_fraction is not None:
        notes.append(f"kv_cache_config.free_gpu_memory_fraction is a share of the memory left after the weights, not "
                     f"of the GPU: {p.memory_fraction:g} is not written")
    if p.method == "eagle":
        notes.append("decoding_type Eagle in the PyTorch backend expects an EAGLE-3-style checkpoint in recent "
                     "releases; EAGLE-1 heads run in the legacy engine flow")
    return EngineConfig("trtllm", True, "yaml", "\n".join(lines), tuple(notes))


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


def _layout_missing(engine: str, p: ConfigPlan) -> str | None:
    """Why an engine cannot run the layout priced ('' / None when it can)."""
    if p.dp == 1:
        return None
    if engine == "sglang" and p.moe and p.method in ("ngram", "draft"):
        return (f"SGLang refuses {ENGINE_METHOD['sglang'][p.method]} speculation with --enable-dp-attention "
                "(its speculative argument checks)")
    if engine == "trtllm" and (p.tp > 1 or not p.moe):
        return ("TensorRT-LLM's attention DP runs one attention rank per GPU (enable_attention_dp: attention DP size "
                f"= tensor_parallel_size): {p.dp} {'groups of ' + str(p.tp) + ' GPUs' if p.tp > 1 else 'replicas'} "
                "are not one TensorRT-LLM server; run them as separate servers behind a router")
    return None


def engine_configs(p: ConfigPlan, engines: Iterable[str]) -> tuple[EngineConfig, ...]:
    out = []
    for e in engines:
        why = _missing(e, p.method) or _layout_missing(e, p)
        out.append(EngineConfig(e, False, "", "", (why,)) if why else _WRITERS[e](p))
    return tuple(out)


def ranges_text(xs: Iterable[int]) -> str:
    """'3-5, 9' from [3, 4, 5, 9]."""
    xs = sorted(xs)
    parts: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(f"{xs[i]}" if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(parts)
