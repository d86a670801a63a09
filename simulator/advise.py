"""Deployment advice: the best draft depth k per batch, where to switch speculation off, and the lines to paste into
vLLM, SGLang, TensorRT-LLM (and HF generate) to get that schedule.

Everything here reads `speedup_curve` results (public API); no FLOP or time model lives in this module.

- `advise` runs `speedup_curve(..., k="auto")` over every integer batch of the range the deployment will see
  (powers of two plus the ends when the range is wider than `max_points`), keeps the best k where speculation pays
  (speedup >= 1 and it fits) and k = 0 elsewhere, in particular above the crossover (the largest batch with
  speedup >= 1), and merges equal neighbours into ranges. Below the crossover speculation can lose too (an MoE
  target at small batch, where the verify pass touches many more experts): those batches get k = 0 as well.
- Engines that take one k for every batch (SGLang, HF) get the fixed k whose speedup stays closest to the per-batch
  best over the batches where speculation is on: max over k of min over those batches of speedup_k(B) /
  speedup_best(B), a k that does not fit at one of them scoring 0 there.
- Every result is a prediction from datasheet rooflines, an engine profile and the given acceptance; `assumptions`
  lists what it rests on, and `hazards` the known problems of the chosen engine, drafter and options.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np

from .errors import ScenarioError
from .hazards import Hazard, check, load_hazards, resolve_options
from .methods import default_tree_branching
from .speedup import SpeedupResult, speedup_curve

EMIT_ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "hf")
MAX_POINTS = 1024
"""Widest batch range evaluated at every integer; wider ranges use powers of two plus both ends."""

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

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "k": self.k, "tree_tokens": self.tree_tokens,
                "speedup_min": _num(self.speedup_min), "speedup_max": _num(self.speedup_max)}


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


@dataclass(frozen=True)
class Advice:
    """Result of `advise`.

    result : SpeedupResult          k="auto" over the evaluated batches
    batch_range : (lo, hi)          the batches the deployment will see
    scheduled_k : (P,) int          k to run at each evaluated batch (0: off), tree_tokens likewise
    schedule : tuple[KRange]        scheduled_k merged into inclusive batch ranges covering lo..hi
    pays : bool                     speculation pays at some batch of the range
    off_above : int or None         switch speculation off above this batch (None: it pays up to hi, or never)
    fixed_k, fixed_tree_tokens : int   one k for engines without a per-batch table (0 when it never pays)
    fixed_worst_ratio : float       min over the on-range of speedup(fixed k) / speedup(best k)
    fixed_speedup : (P,)            speedup of the fixed k at each evaluated batch (nan where not evaluated)
    interior_off : tuple[int]       evaluated batches below the crossover where speculation does not pay (k = 0)
    configs : tuple[EngineConfig]   per engine, in the order asked for
    hazards : tuple[Hazard]         known hazards for the engine, method and options
    assumptions : tuple[str]        what the prediction rests on
    options : dict                  the deployment options used for the hazard check
    """

    result: SpeedupResult
    batch_range: tuple[int, int]
    scheduled_k: np.ndarray
    scheduled_tree_tokens: np.ndarray
    schedule: tuple[KRange, ...]
    pays: bool
    off_above: int | None
    fixed_k: int
    fixed_tree_tokens: int
    fixed_worst_ratio: float
    fixed_speedup: np.ndarray
    interior_off: tuple[int, ...]
    configs: tuple[EngineConfig, ...]
    hazards: tuple[Hazard, ...]
    assumptions: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def dynamic(self) -> bool:
        """True when the schedule has more than one k (counting off)."""
        return len({r.k for r in self.schedule}) > 1

    def config(self, engine: str) -> EngineConfig:
        for c in self.configs:
            if c.engine == engine:
                return c
        raise ScenarioError(f"no config for engine {engine!r} in this advice; it has "
                            f"{', '.join(c.engine for c in self.configs)}")

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        pts = []
        for i, b in enumerate(r.batch):
            ok = bool(r.feasible[i])
            pts.append({"batch": int(b), "best_k": int(r.k[i]) if ok else None,
                        "tree_tokens": int(r.tree_tokens[i]) if ok else None,
                        "speedup": _num(r.speedup[i]) if ok else None, "scheduled_k": int(self.scheduled_k[i]),
                        "fixed_k_speedup": _num(self.fixed_speedup[i]), "feasible": ok})
        return {"prediction": True, "scenario": r.scenario, "batch_range": list(self.batch_range),
                "schedule": [x.to_dict() for x in self.schedule], "pays": self.pays, "off_above": self.off_above,
                "crossover_batch": r.crossover_batch, "fixed_k": self.fixed_k,
                "fixed_tree_tokens": self.fixed_tree_tokens, "fixed_worst_ratio": _num(self.fixed_worst_ratio),
                "interior_off": list(self.interior_off), "points": pts, "configs": [c.to_dict() for c in self.configs],
                "hazards": [h.to_dict() for h in self.hazards], "assumptions": list(self.assumptions),
                "options": dict(self.options), "max_batch_base": r.max_batch_base, "max_batch_spec": r.max_batch_spec}


def _num(x: float) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def _check_int(name: str, v: Any, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ScenarioError(f"{name} = {v!r}; expected an integer >= {lo}")
    return int(v)


def advise_batches(lo: int, hi: int, max_points: int = MAX_POINTS) -> np.ndarray:
    """Batches to evaluate for the range lo..hi: every integer, or powers of two plus lo and hi when the range has
    more than `max_points` integers."""
    lo, hi = _check_int("smallest batch", lo), _check_int("largest batch", hi)
    max_points = _check_int("max_points", max_points, 2)
    if hi < lo:
        raise ScenarioError(f"batch range {lo}..{hi} is empty; expected smallest <= largest")
    if hi - lo + 1 <= max_points:
        return np.arange(lo, hi + 1)
    pw = [1 << j for j in range(hi.bit_length() + 1) if lo <= (1 << j) <= hi]
    return np.array(sorted({lo, hi, *pw}))


def _schedule(B: np.ndarray, k: np.ndarray, T: np.ndarray, on: np.ndarray, s: np.ndarray, feas: np.ndarray,
              hi: int) -> tuple[KRange, ...]:
    """Merge per-point (k, T) into inclusive ranges covering B[0]..hi. A point's range runs to the next point - 1,
    except that the last on-point before an off-point ends at itself (the evaluated crossover)."""
    segs: list[list[Any]] = []
    n = B.size
    for i in range(n):
        start = int(B[i])
        end = int(B[i + 1]) - 1 if i + 1 < n else hi
        if on[i] and i + 1 < n and not on[i + 1]:
            end = int(B[i])
        if not on[i] and i > 0 and on[i - 1]:
            start = int(B[i - 1]) + 1
        sv = float(s[i]) if feas[i] else np.nan
        key = (int(k[i]), int(T[i]))
        if segs and (segs[-1][2], segs[-1][3]) == key:
            segs[-1][1] = end
            segs[-1][4].append(sv)
        else:
            segs.append([start, end, key[0], key[1], [sv]])
    out = []
    for st, en, kk, tt, sv in segs:
        a = np.array(sv, dtype=float)
        fin = a[np.isfinite(a)]
        out.append(KRange(st, en, kk, tt, float(fin.min()) if fin.size else np.nan,
                          float(fin.max()) if fin.size else np.nan))
    return tuple(out)


def _repo(name: str | None) -> str:
    """The HF repo of a bundled model id, else a placeholder to fill in."""
    if not name:
        return ""
    from .model import list_models, model_record
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
class _Plan:
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

    @property
    def on_ranges(self) -> list[KRange]:
        return [r for r in self.schedule if r.k > 0]

    @property
    def kmax(self) -> int:
        return max((r.k for r in self.schedule), default=0)

    @property
    def tree(self) -> bool:
        return any(r.tree_tokens > r.k + 1 for r in self.on_ranges) or self.fixed_T > self.fixed_k + 1


def _no_spec(engine: str, p: _Plan) -> EngineConfig:
    return EngineConfig(engine, True, "", "", (f"speculation is predicted not to pay at any batch in "
                                               f"{p.lo}..{p.hi}: serve without it",))


def _vllm(p: _Plan) -> EngineConfig:
    if not p.pays:
        return _no_spec("vllm", p)
    cfg: dict[str, Any] = {"method": ENGINE_METHOD["vllm"][p.method]}
    if p.method in _NEEDS_DRAFT_PATH:
        cfg["model"] = p.draft
    cfg["num_speculative_tokens"] = p.kmax
    notes = []
    if len({r.k for r in p.schedule}) > 1:
        cfg["num_speculative_tokens_per_batch_size"] = [[r.start, r.end, r.k] for r in p.schedule]
        notes.append("num_speculative_tokens_per_batch_size is vLLM's dynamic speculative decoding (PR #32374): "
                     "[start_bs, end_bs, K] inclusive, K = 0 switches speculation off; num_speculative_tokens is "
                     "the startup maximum")
        notes.append(f"without the table, num_speculative_tokens = {p.fixed_k} alone stays within "
                     f"{p.fixed_ratio:.0%} of the per-batch best where speculation is on (but never switches off)")
    if p.tree:
        notes.append("the prediction verifies a tree; vLLM takes a tree through speculative_token_tree, which this "
                     "config does not write: the table above is the chain depth")
    if p.tp > 1 and p.method in _NEEDS_DRAFT_PATH:
        notes.append("draft_tensor_parallel_size defaults to the target's TP (1 is also allowed for small drafters)")
    args = [f"vllm serve {p.target}", f"--speculative-config '{json.dumps(cfg)}'"]
    if p.tp > 1:
        args.append(f"--tensor-parallel-size {p.tp}")
    if p.ep > 1:
        args.append("--enable-expert-parallel")
    args.append(f"--max-num-seqs {p.hi}")
    notes.append(f"--max-num-seqs {p.hi} keeps the batch inside the range the prediction covers")
    return EngineConfig("vllm", True, "shell", " \\\n  ".join(args), tuple(notes))


def _fixed_note(p: _Plan, engine: str) -> str:
    on_hi = p.off_above if p.off_above is not None else p.hi
    return (f"{engine} takes one k for every batch: k = {p.fixed_k} fits at every batch where speculation is on "
            f"({p.lo}..{on_hi}) and stays closest to the per-batch best there (worst case {p.fixed_ratio:.0%} of "
            "the best speedup)")


def _sglang(p: _Plan) -> EngineConfig:
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
    if p.tp > 1:
        args.append(f"--tp {p.tp}")
    if p.ep > 1:
        args.append(f"--ep-size {p.ep}")
    args += [f"--cuda-graph-max-bs {p.hi}", f"--max-running-requests {p.hi}"]
    prefix = "SGLANG_ENABLE_SPEC_V2=True " if p.options.get("overlap_scheduler") else ""
    notes = [_fixed_note(p, "SGLang"),
             "SGLang's stable flags have no per-batch k; Auto-Spec (--auto-spec, per-batch-size step ranges, "
             "PR #22246) is unmerged",
             f"--cuda-graph-max-bs {p.hi} keeps every batch of the range CUDA-graphed (above it decode runs eager, "
             "PR #33900)"]
    if p.interior_off:
        notes.append(f"speculation is also predicted to lose at batch(es) {_ranges(p.interior_off)}, where SGLang "
                     "keeps it on")
    if p.off_above is not None:
        notes.append(f"speculation is predicted to lose above batch {p.off_above} and SGLang cannot switch it off "
                     f"by batch: cap --max-running-requests {p.off_above} for latency-bound serving, or serve "
                     f"without speculation when the load stays above {p.off_above}")
    if p.method == "dflash":
        notes.append("--speculative-num-draft-tokens is DFLASH's verify block size (draft block + 1)")
    if p.method == "ngram":
        notes.append("NGRAM's --speculative-num-draft-tokens is the verified tokens per request (k + 1 for a chain)")
    return EngineConfig("sglang", True, "shell", prefix + " \\\n  ".join(args), tuple(notes))


def _trtllm(p: _Plan) -> EngineConfig:
    if not p.pays:
        return _no_spec("trtllm", p)
    lines = [f"# trtllm-serve {p.target} --extra_llm_api_options spec.yaml", f"max_batch_size: {p.hi}"]
    if p.tp > 1:
        lines.append(f"tensor_parallel_size: {p.tp}")
    if p.ep > 1:
        lines.append(f"moe_expert_parallel_size: {p.ep}")
    lines += ["cuda_graph_config:", f"  max_batch_size: {p.hi}", "speculative_config:",
              f"  decoding_type: {ENGINE_METHOD['trtllm'][p.method]}"]
    if p.method == "mtp":
        lines.append(f"  num_nextn_predict_layers: {p.kmax}")
        if p.options.get("relaxed_acceptance"):
            lines.append("  use_relaxed_acceptance_for_thinking: true")
    else:
        lines.append(f"  max_draft_len: {p.kmax}")
    if p.method in _NEEDS_DRAFT_PATH:
        lines.append(f"  speculative_model_dir: {p.draft}")
    notes = []
    last_on = max(r.end for r in p.on_ranges)
    upto = [r for r in p.schedule if r.end <= last_on]
    if len({r.k for r in upto}) > 1:
        lines.append("  draft_len_schedule:")
        lines += [f"    {r.end}: {r.k}" for r in upto]
        notes.append("draft_len_schedule {batch: k}: k applies up to that batch; batches above the last key run "
                     "k = 0 (PR #10860)")
        if any(r.k == 0 for r in upto):
            notes.append("the 0 entries switch speculation off below the crossover; if your TensorRT-LLM version "
                         "floors schedule values at 1 (PR #16888), those batches run k = 1")
        if p.off_above is None:
            notes.append(f"the last key is {p.hi}, the top of the range: larger batches would run without "
                         "speculation, max_batch_size keeps them out")
    elif p.off_above is not None:
        lines.append(f"  max_concurrency: {p.off_above}")
        notes.append(f"max_concurrency {p.off_above}: speculation off above {p.off_above} active requests "
                     "(PR #6676)")
    if p.tree:
        notes.append("the prediction verifies a tree; TensorRT-LLM's EAGLE-3 dynamic tree (use_dynamic_tree, "
                     "max_total_draft_tokens) is not written here")
    if p.method == "eagle":
        notes.append("decoding_type Eagle in the PyTorch backend expects an EAGLE-3-style checkpoint in recent "
                     "releases; EAGLE-1 heads run in the legacy engine flow")
    return EngineConfig("trtllm", True, "yaml", "\n".join(lines), tuple(notes))


def _hf(p: _Plan) -> EngineConfig:
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


def engine_configs(p: _Plan, engines: Iterable[str]) -> tuple[EngineConfig, ...]:
    out = []
    for e in engines:
        why = _missing(e, p.method)
        out.append(EngineConfig(e, False, "", "", (why,)) if why else _WRITERS[e](p))
    return tuple(out)


def advise(hardware: Any = "h100-sxm", model: Any = "llama-3.1-8b", method: str = "eagle3", *,
           engine: Any = "sglang", acceptance: Any = None, draft: Any = None, batch_range: tuple[int, int] = (1, 256),
           context: int = 1024, tp: int = 1, ep: int = 1, precision: str = "bf16", draft_precision: str | None = None,
           kv_precision: str | None = None, k_max: int = 8, tree_tokens: int | None = None,
           tree_branching: int | None = None, draft_kv_window: int | None = None, overlap: str | float | None = None,
           options: Mapping[str, Any] | None = None, hazard_files: Iterable[Any] = (),
           emit: Iterable[str] | None = None, max_points: int = MAX_POINTS) -> Advice:
    """Advise a deployment: best k per batch, the batch above which to switch speculation off, engine configs.

    Parameters are those of `speedup_curve` (k is always "auto", up to `k_max`), plus
    batch_range : (lo, hi)  the batches (concurrent sequences per step) the deployment will see
    options : deployment options for the hazard check (see `simulator.hazards.OPTIONS`); tp, ep, max_batch,
              max_k, topk, verify_tokens, context, dynamic_k and batch_off are filled in from the prediction
    hazard_files : extra hazard TOML files
    emit : engines to write configs for (subset of EMIT_ENGINES); default: the chosen engine when it is one of
           them, else vllm, sglang and trtllm
    Returns an Advice (see there). Raises ScenarioError / SpecError for bad input.
    """
    if not isinstance(batch_range, (tuple, list)) or len(batch_range) != 2:
        raise ScenarioError(f"batch_range = {batch_range!r}; expected (smallest, largest)")
    lo, hi = int(_check_int("smallest batch", batch_range[0])), int(_check_int("largest batch", batch_range[1]))
    B = advise_batches(lo, hi, max_points)
    if emit is not None:
        targets = [emit] if isinstance(emit, str) else list(emit)
        bad = [e for e in targets if e not in EMIT_ENGINES]
        if bad or not targets:
            raise ScenarioError(f"emit = {targets!r}; expected some of {', '.join(EMIT_ENGINES)}")
    opts_in = dict(options or {})
    resolve_options(opts_in)                      # reject unknown / mistyped options before the long part
    hazards_all = load_hazards(hazard_files)
    kw = dict(hardware=hardware, model=model, method=method, draft=draft, acceptance=acceptance,
              tree_tokens=tree_tokens, tree_branching=tree_branching, context=context, tp=tp, ep=ep,
              precision=precision, draft_precision=draft_precision, kv_precision=kv_precision, engine=engine,
              draft_kv_window=draft_kv_window, k_max=k_max, overlap=overlap)
    r = speedup_curve(**kw, k="auto", batch=B)
    eng_name = r.scenario["engine"]
    if emit is None:
        targets = [eng_name] if eng_name in EMIT_ENGINES else ["vllm", "sglang", "trtllm"]

    cb = r.crossover_batch
    on = r.feasible & (r.speedup >= 1.0)
    sk = np.where(on, r.k, 0).astype(int)
    sT = np.where(on, r.tree_tokens, 0).astype(int)
    schedule = _schedule(B, sk, sT, on, r.speedup, r.feasible, hi)
    pays = bool(on.any())
    off_above = cb if pays and cb is not None and cb < hi else None
    interior = tuple(int(b) for b in B[~on & (B < cb)]) if pays and cb is not None else ()

    # One k for engines without a per-batch table: candidates between the smallest and largest best k on the range.
    fixed_k, fixed_T, ratio = 0, 0, float("nan")
    fixed_s = np.full(B.size, np.nan)
    if pays:
        cands: set[tuple[int, int]] = set()
        ks, Ts = sk[on], sT[on]
        if not (Ts > ks + 1).any():
            cands = {(kk, kk + 1) for kk in range(int(ks.min()), int(ks.max()) + 1)}
        else:
            cands = {(int(a), int(b)) for a, b in zip(ks, Ts)}
        Bon = B[on]
        best = None
        for kk, TT in sorted(cands):
            rr = speedup_curve(**{**kw, "tree_tokens": None if TT == kk + 1 else TT}, k=kk, batch=Bon)
            ok = rr.feasible
            rel = np.divide(rr.speedup, r.speedup[on], out=np.zeros(Bon.size), where=ok)
            worst = float(rel.min())
            if best is None or worst > best[0] + 1e-12:
                best = (worst, kk, TT, rr.speedup)
        assert best is not None
        ratio, fixed_k, fixed_T = best[0], best[1], best[2]
        fixed_s[on] = best[3]

    def width(kk: int, TT: int) -> int:
        return (tree_branching or default_tree_branching(TT, kk)) if TT > kk + 1 else 1

    topk = max([width(int(kk), int(TT)) for kk, TT in zip(sk[on], sT[on])], default=1)
    dyn = len({x.k for x in schedule}) > 1
    auto_opts = {"tp": tp, "ep": ep, "max_batch": hi, "max_k": int(sk.max()) if pays else 0,
                 "verify_tokens": int(sT.max()) if pays else 0, "context": context, "topk": topk, "dynamic_k": dyn,
                 "batch_off": pays and not on.all()}
    opts = resolve_options({**auto_opts, **opts_in})
    hz = tuple(check(eng_name, method, opts, hazards_all))

    sc = r.scenario
    plan = _Plan(method, _repo(sc["model"]), _repo(sc["draft_model"]), tp, ep, lo, hi, schedule, off_above, pays,
                 fixed_k, fixed_T, ratio, topk, opts, interior, width(fixed_k, fixed_T))
    configs = engine_configs(plan, targets)
    assumptions = _assumptions(r, lo, hi, B, opts, off_above, pays, interior, eng_name)
    return Advice(r, (lo, hi), sk, sT, schedule, pays, off_above, fixed_k, fixed_T, ratio, fixed_s, interior, configs,
                  hz, assumptions, opts)


def _assumptions(r: SpeedupResult, lo: int, hi: int, B: np.ndarray, opts: Mapping[str, Any], off_above: int | None,
                 pays: bool, interior: tuple[int, ...], engine: str) -> tuple[str, ...]:
    s = r.scenario
    out = [
        f"a prediction, not a measurement: datasheet roofline of {s['hardware']} and the {engine} engine profile "
        "(its estimates are marked in engine_profiles/)",
        f"acceptance {s['acceptance']} (alpha {s['acceptance_alpha']:.3f}) at every batch and load; other depths k "
        "extrapolate it (Leviathan et al. 2023 eq. 1 for an i.i.d. rate)",
        f"batch = sequences decoding together in one step, {lo}..{hi}"
        + ("" if B.size == hi - lo + 1 else f", evaluated at powers of two and both ends ({B.size} points): a range "
           "between two points takes the lower point's k"),
        f"every sequence holds {s['context']} tokens of context; decode steps only (prefill and TTFT not modelled)",
        f"{s['n_gpus']} GPU(s): tp={s['tp']}, ep={s['ep']}, weights {s['precision']}, KV {s['kv_precision']}",
        f"drafter: {s['drafter']}",
        "the schedule runs the best k wherever speculation is predicted to pay (speedup >= 1 and it fits in "
        "memory) and k = 0 elsewhere",
    ]
    if interior:
        out.append(f"speculation is predicted to lose below the crossover too, at batch(es) {_ranges(interior)}: "
                   "k = 0 there")
    if not pays:
        out.append("speculation does not pay at any batch of the range, so no engine config is written")
    elif off_above is None:
        out.append(f"speculation pays up to {hi}, the top of the range: larger batches were not evaluated")
    out.append(f"largest batch that fits: {r.max_batch_base} without speculation, {r.max_batch_spec} with")
    bad = np.flatnonzero(~r.feasible)
    if bad.size:
        out.append(f"from batch {int(r.batch[bad[0]])}: {r.message[bad[0]]}")
    if r.max_batch_base < hi:
        out.append(f"batches above {r.max_batch_base} do not fit even without speculation: the engine will hold "
                   "fewer sequences than the range asks for")
    flags = ", ".join(f"{k} {'on' if v else 'off'}" for k, v in opts.items()
                      if isinstance(v, bool) and k not in ("dynamic_k", "batch_off"))
    out.append(f"deployment options: {flags}; temperature {opts.get('temperature')!s}, accept threshold "
               f"{opts.get('accept_threshold')!s} (None: not given). vLLM V1 and SGLang cache prefixes by default: "
               "pass the prefix-caching option to check the hazards that depend on it")
    out += list(r.notes)
    return tuple(out)


def _ranges(xs: Iterable[int]) -> str:
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
