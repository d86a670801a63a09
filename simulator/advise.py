"""Deployment advice: the best draft depth k per batch, where to switch speculation off, and the lines to paste into
vLLM, SGLang, TensorRT-LLM (and HF generate) to get that schedule.

Everything here reads `speedup_curve` results (public API); no FLOP or time model lives in this module.

- `advise` runs `speedup_curve(..., k="auto")` over every integer batch of the range the deployment will see
  (powers of two plus the ends when the range is wider than `max_points`), keeps the best k where speculation pays
  (speedup >= 1 and it fits) and k = 0 elsewhere, in particular above the crossover (the largest batch with
  speedup >= 1), and merges equal neighbours into ranges. Below the crossover speculation can lose too (an MoE
  target at small batch, where the verify pass touches many more experts): those batches get k = 0 as well.
- The per-batch table is the fewest ranges of one depth each in which every batch's speedup is within K_TOLERANCE
  (2 %) of its best (greedy interval covering, optimal for this: a range grows while some depth stays within the
  tolerance at all its batches; the smallest such depth runs it). Chains only; a tree keeps the best shape.
- Engines that take one k for every batch (SGLang, HF) get the fixed k whose speedup stays closest to the per-batch
  best over the batches where speculation is on: max over k of min over those batches of speedup_k(B) /
  speedup_best(B), taken over the batches where every depth tried fits in memory (ties: the larger mean ratio); its
  reported worst case counts a batch it does not fit at as served without speculation, 1 / speedup_best(B).
- Every result is a prediction from datasheet rooflines, an engine profile and the given acceptance; `assumptions`
  lists what it rests on, and `hazards` the known problems of the chosen engine, drafter and options.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .acceptance import priced_shape, tree_width
from .admission import shape_scenario
from .config_plan import EMIT_ENGINES, ConfigPlan, EngineConfig, KRange, num_or_none, ranges_text, repo_of
from .engine_configs import engine_configs, vllm_writes_table
from .engine_memory import sglang_aiter
from .errors import ScenarioError
from .hazards import DEPLOYMENT_OPTIONS, Hazard, check, load_hazards, resolve_options, with_model_facts
from .heldout import load_bands, range_text
from .scenario import Scenario, as_scenario
from .speedup import SpeedupResult, predict

MAX_POINTS = 1024
"""Widest batch range evaluated at every integer; wider ranges use powers of two plus both ends."""
# The per-batch table is the fewest ranges in which every batch runs a depth within this share of its best speedup
# (`_steady_k`). The model's own resolution is coarser than an argmax: GEMM tile rounding moves a step by a few per
# cent from one batch to the next and deeper positions' acceptance is extrapolated, so the argmax flips between
# neighbouring depths (Llama-3.1-8B EAGLE-3 on H100, SGLang: 19 ranges over batches 1..256, 21 before the refit of
# 2026-12-04 that prices runs of N prompts; 6 within 2 % with the 2026-12-04 calibrations, 5 with the one before; far
# below the cross-validated error of a speedup, 9.3 % median).
K_TOLERANCE = 0.02


@dataclass(frozen=True)
class Advice:
    """Result of `advise`.

    result : SpeedupResult          k="auto" over the evaluated batches
    batch_range : (lo, hi)          the batches the deployment will see
    scheduled_k : (P,) int          k to run at each evaluated batch (0: off), tree_tokens likewise: the best k, or a
                                    smaller one within K_TOLERANCE of its speedup where that spares a range
    scheduled_speedup : (P,)        the speedup of scheduled_k (that of the best k where it is the best)
    schedule : tuple[KRange]        scheduled_k merged into inclusive batch ranges covering lo..hi
    pays : bool                     speculation pays at some batch of the range
    off_above : int or None         switch speculation off above this batch (None: it pays up to hi, or never)
    off_fits : bool                 True when it is switched off above off_above because it no longer fits in memory
                                    there (it still pays at off_above), False when it loses
    fixed_k, fixed_tree_tokens : int   one k for engines without a per-batch table (0 when it never pays)
    fixed_worst_ratio : float       min over the on-range of speedup(fixed k) / speedup(best k), 1 / speedup(best k)
                                    where the fixed k does not fit in memory (the depth is chosen where all fit)
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
    off_fits: bool = False
    scheduled_speedup: np.ndarray | None = None

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
            ok, on = bool(r.feasible[i]), bool(self.scheduled_k[i] > 0 and self.scheduled_speedup is not None)
            pts.append({"batch": int(b), "best_k": int(r.k[i]) if ok else None,
                        "tree_tokens": int(r.tree_tokens[i]) if ok else None,
                        "speedup": num_or_none(r.speedup[i]) if ok else None, "scheduled_k": int(self.scheduled_k[i]),
                        "scheduled_speedup": num_or_none(self.scheduled_speedup[i]) if ok and on else None,
                        "fixed_k_speedup": num_or_none(self.fixed_speedup[i]), "feasible": ok})
        return {"prediction": True, "scenario": r.scenario, "batch_range": list(self.batch_range),
                "schedule": [x.to_dict() for x in self.schedule], "pays": self.pays, "off_above": self.off_above,
                "off_reason": None if self.off_above is None else ("does not fit" if self.off_fits else "loses"),
                "crossover_batch": r.crossover_batch, "fixed_k": self.fixed_k,
                "fixed_tree_tokens": self.fixed_tree_tokens, "fixed_worst_ratio": num_or_none(self.fixed_worst_ratio),
                "interior_off": list(self.interior_off), "points": pts, "configs": [c.to_dict() for c in self.configs],
                "hazards": [h.to_dict() for h in self.hazards], "assumptions": list(self.assumptions),
                "options": dict(self.options), "max_batch_base": r.max_batch_base, "max_batch_spec": r.max_batch_spec}


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


FITS = ("yes", "without speculation", "no")


def _schedule(B: np.ndarray, k: np.ndarray, T: np.ndarray, on: np.ndarray, s: np.ndarray, feas: np.ndarray,
              hi: int, fits: np.ndarray | None = None) -> tuple[KRange, ...]:
    """Merge per-point (k, T) into inclusive ranges covering B[0]..hi. A point's range runs to the next point - 1,
    except that the last on-point before an off-point ends at itself (the evaluated crossover). `fits` (index into
    FITS per point; default: all fit) keeps batches that do not fit apart from those where speculation loses."""
    fits = np.zeros(B.size, dtype=int) if fits is None else fits
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
        key = (int(k[i]), int(T[i]), int(fits[i]))
        if segs and tuple(segs[-1][2:5]) == key:
            segs[-1][1] = end
            segs[-1][5].append(sv)
        else:
            segs.append([start, end, *key, [sv]])
    return tuple(_krange(*seg) for seg in segs)


def _krange(st: int, en: int, kk: int, tt: int, ff: int, sv: list[float]) -> KRange:
    """One merged range, its speedup span over the points that fit (nan when none does)."""
    a = np.array(sv, dtype=float)
    fin = a[np.isfinite(a)]
    return KRange(st, en, kk, tt, float(fin.min()) if fin.size else np.nan, float(fin.max()) if fin.size else np.nan,
                  FITS[ff])


def _check_emit(emit: Iterable[str] | str | None) -> list[str] | None:
    if emit is None:
        return None
    targets = [emit] if isinstance(emit, str) else list(emit)
    bad = [e for e in targets if e not in EMIT_ENGINES]
    if bad or not targets:
        raise ScenarioError(f"emit = {targets!r}; expected some of {', '.join(EMIT_ENGINES)}")
    return targets


def _at_depth(s: Scenario, r: SpeedupResult, on: np.ndarray, kk: int, TT: int,
              memo: dict[tuple[int, int], SpeedupResult]) -> SpeedupResult:
    """The prediction at depth kk with TT verify tokens over the on-range batches, priced once per (kk, TT) for
    both _steady_k and _fixed_k (memo)."""
    if (kk, TT) not in memo:
        # the shape alone (admission.shape_scenario; found by review: Medusa chains priced as its default 64-token
        # tree, and a tree's branching kept on a chain, which a chain refuses)
        v = priced_shape(kk, TT, s.branching, s.auto)
        memo[(kk, TT)] = predict(shape_scenario(s, v).replace(batch=tuple(int(b) for b in r.batch[on])))
    return memo[(kk, TT)]


def _steady_k(s: Scenario, r: SpeedupResult, on: np.ndarray, sk: np.ndarray, sT: np.ndarray,
              memo: dict[tuple[int, int], SpeedupResult]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The depth per batch of the fewest ranges within K_TOLERANCE of the best (module docstring), with its speedup.
    Returns (k, T, speedup); trees, and a range with one depth, keep the best."""
    sp = r.speedup.astype(float).copy()
    if not on.any() or (sT[on] > sk[on] + 1).any() or sk[on].max() <= 1:
        return sk, sT, sp
    idx = np.flatnonzero(on)
    ks = list(range(1, int(sk[on].max()) + 1))
    runs = [_at_depth(s, r, on, kk, kk + 1, memo) for kk in ks]
    S = np.array([np.where(rr.feasible, rr.speedup, -np.inf) for rr in runs])         # (depths, on-batches)
    ok = S >= r.speedup[on] * (1.0 - K_TOLERANCE)
    ok[np.array(ks)[:, None] == sk[on][None, :]] = True                                # the best itself
    k, cur = sk.copy(), np.ones(len(ks), dtype=bool)
    start = 0
    for j in range(idx.size + 1):
        nxt = cur & ok[:, j] if j < idx.size and (j == 0 or idx[j] == idx[j - 1] + 1) else np.zeros_like(cur)
        if not nxt.any():                        # close the range [start, j) with its smallest admissible depth
            d = int(np.flatnonzero(cur)[0])
            k[idx[start:j]], sp[idx[start:j]] = ks[d], S[d, start:j]
            start, nxt = j, (ok[:, j] if j < idx.size else cur)
        cur = nxt
    return k, np.where(on, k + 1, 0).astype(int), sp


def _fixed_k(s: Scenario, r: SpeedupResult, on: np.ndarray, sk: np.ndarray, sT: np.ndarray,
             memo: dict[tuple[int, int], SpeedupResult]) -> tuple[float, int, int, np.ndarray]:
    """One k for engines without a per-batch table: among the depths between the smallest and largest best k on the
    on-range (or the best (k, tree) pairs), the one whose worst ratio to the per-batch best is largest, ties broken by
    the mean ratio. The depths are compared where every candidate fits in memory, so the few batches at the memory
    edge that only a shallow depth fits do not decide the depth for all the others (the engine's request cap is then
    the chosen depth's own edge); where no batch fits them all, every batch is scored. Returns (the chosen depth's
    worst ratio over the whole on-range, a batch it does not fit at counted as served without speculation (1 / the
    best speedup), k, T, its speedup on the on-range (nan where it does not fit))."""
    ks, Ts = sk[on], sT[on]
    if not (Ts > ks + 1).any():
        cands = {(kk, kk + 1) for kk in range(int(ks.min()), int(ks.max()) + 1)}
    else:
        cands = {(int(a), int(b)) for a, b in zip(ks, Ts)}
    runs = [(kk, TT, _at_depth(s, r, on, kk, TT, memo)) for kk, TT in sorted(cands)]
    common = np.logical_and.reduce([rr.feasible for *_, rr in runs])
    scored = common if common.any() else np.ones_like(common)
    best, key = None, (-np.inf, -np.inf)
    for kk, TT, rr in runs:
        rel = np.where(rr.feasible, rr.speedup, 1.0) / r.speedup[on]
        worst, mean = float(rel[scored].min()), float(rel[scored].mean())
        if worst > key[0] + 1e-12 or (worst > key[0] - 1e-12 and mean > key[1]):      # ties: the mean
            # reported: its worst over the whole on-range (1 / best where it does not fit), not only where scored
            best, key = (float(rel.min()), kk, TT, np.where(rr.feasible, rr.speedup, np.nan)), (worst, mean)
    assert best is not None
    return best


def _batch_bounds(scenario: Any, batch_range: Any) -> tuple[int, int]:
    """Check advise's scenario and batch_range arguments; return the range's (smallest, largest) batch."""
    as_scenario(scenario, "advise")
    if not isinstance(batch_range, (tuple, list)) or len(batch_range) != 2:
        raise ScenarioError(f"batch_range = {batch_range!r}; expected (smallest, largest)")
    return int(_check_int("smallest batch", batch_range[0])), int(_check_int("largest batch", batch_range[1]))


def _hazard_options(s: Scenario, hi: int, sk: np.ndarray, sT: np.ndarray, on: np.ndarray,
                    schedule: tuple[KRange, ...], sc: dict[str, Any], ratio: float,
                    one: tuple[int, int] | None = None) -> tuple[int, dict[str, Any]]:
    """The options for the hazard check: what the prediction decides (tp, ep, max_batch, max_k, verify_tokens,
    context, topk, dynamic_k, batch_off; from the result's scenario `sc`, overlap_scheduler: whether the priced
    speculative steps overlap host work, and moe: whether the target routes tokens to experts) with the scenario's
    own options over them; dynamic_k: the written vLLM config holds a per-batch K table (vllm_writes_table; the other
    engines take one k); `one`: the (k, T) an engine that runs one k runs (SGLang), whose width is the topk checked
    (found by review: a tree warning beside a chain config). Returns (topk of the schedule, options)."""
    pays = bool(on.any())
    # found by review: DP 2 and Medusa had warned of a table the written config did not hold
    dynamic = vllm_writes_table(schedule, ratio, s.dp, s.method, moe=bool(sc["moe"]))
    topk = max([tree_width(int(kk), int(TT), s.branching, s.auto) for kk, TT in zip(sk[on], sT[on])], default=1)
    auto_opts = {"tp": s.tp, "ep": s.ep, "dp": s.dp, "pp": s.pp, "max_batch": hi, "max_k": int(sk.max()) if pays else 0,
                 "verify_tokens": int(sT.max()) if pays else 0, "context": s.context,
                 "topk": topk if one is None or not one[0] else tree_width(one[0], one[1], s.branching, s.auto),
                 "dynamic_k": dynamic, "batch_off": pays and not on.all(),
                 "overlap_scheduler": bool(sc["spec_overlap"]), **{o: sc[o] for o in DEPLOYMENT_OPTIONS}}
    return topk, resolve_options(with_model_facts({**auto_opts, **dict(s.options)}, sc))


def _sized(s: Scenario, hi: int) -> Scenario:
    """The scenario with the request cap the configs write (vLLM's --max-num-seqs: the range's top per DP rank, or
    less where that does not fit) where the deployment sets none, for an engine whose start-up reserve follows it
    (vLLM's profiling sampler, engine_memory.reserve_bytes): the memory edges are those of the server the advice
    configures, at most that many rows, not of vLLM's default 1024 (found by review: Llama-3.1-70B on 2x H100 was
    advised off above batch 6 with --max-num-seqs 6 written, where that server fits 35 with the drafter)."""
    if s.max_running_requests is not None or s.resolve().eng.memory_reserve_rule != "vllm":
        return s
    return s.replace(max_running_requests=-(-hi // s.dp))


def _aiter(s: Scenario) -> bool:
    """Whether SGLang would scale the share its flag carries for this deployment (engine_memory.sglang_aiter)."""
    d = s.resolve()
    return sglang_aiter(d.hw, d.par, d.target)


def advise(scenario: Scenario | None = None, *, batch_range: tuple[int, int] = (1, 256),
           hazard_files: Iterable[Any] = (), emit: Iterable[str] | str | None = None, max_points: int = MAX_POINTS,
           **kw: Any) -> Advice:
    """Advise a deployment: best k per batch, the batch above which to switch speculation off, engine configs.

    scenario / kw : the Scenario (or its fields as keywords; k is always "auto", up to k_max); its `options` are the
              deployment options for the hazard check (see `simulator.hazards.OPTIONS`); tp, ep, max_batch, max_k,
              topk, verify_tokens, context, dynamic_k and batch_off are filled in from the prediction
    batch_range : (lo, hi)  the batches (concurrent sequences per step) the deployment will see
    hazard_files : extra hazard TOML files
    emit : engines to write configs for (subset of EMIT_ENGINES); default: the chosen engine when it is one of
           them, else vllm, sglang and trtllm
    Returns an Advice (see there). Raises a SpecroofError for bad input.
    """
    lo, hi = _batch_bounds(scenario, batch_range)
    B = advise_batches(lo, hi, max_points)
    s = _sized((scenario or Scenario()).replace(**kw, k="auto", batch=tuple(int(b) for b in B)), hi)
    targets = _check_emit(emit)
    hazards_all = load_hazards(hazard_files)       # bad hazard files fail before the long part
    B, s, r = _priced(s, B, lo, hi)
    eng_name = r.scenario["engine"]
    targets = targets or ([eng_name] if eng_name in EMIT_ENGINES else ["vllm", "sglang", "trtllm"])
    cb = r.crossover_batch
    on = r.feasible & (r.speedup >= 1.0)
    memo: dict[tuple[int, int], SpeedupResult] = {}          # depths priced over the on-range, shared by both
    sk, sT, sp = _steady_k(s, r, on, np.where(on, r.k, 0).astype(int), np.where(on, r.tree_tokens, 0).astype(int),
                           memo)
    fits = np.where(r.feasible, 0, np.where(r.base_feasible, 1, 2))
    schedule = _schedule(B, sk, sT, on, sp, r.feasible, hi, fits)
    pays = bool(on.any())
    off_above = cb if pays and cb is not None and cb < hi else None
    off_fits = _off_fits(r, off_above)
    interior = tuple(int(b) for b in B[~on & (B < cb)]) if pays and cb is not None else ()
    ratio, fixed_k, fixed_T, fixed_s, fixed_to = float("nan"), 0, 0, np.full(B.size, np.nan), 0
    if pays:
        ratio, fixed_k, fixed_T, fixed_s[on] = _fixed_k(s, r, on, sk, sT, memo)
        fixed_to = r.edge(fixed_k, fixed_T)                    # where the one k stops fitting in memory
    topk, opts = _hazard_options(s, hi, sk, sT, on, schedule, r.scenario, ratio,
                                 (fixed_k, fixed_T) if eng_name == "sglang" else None)
    hz = tuple(check(eng_name, s.method, opts, hazards_all))
    sc = r.scenario
    # The SGLang line asks for SpecV2 only when SGLang itself was priced with it (the hazards checked are the priced
    # engine's: another engine's overlap, vLLM's async scheduling, says nothing of SGLang's).
    plan = ConfigPlan(s.method, repo_of(sc["model"]), repo_of(sc["draft_model"]), s.tp, s.ep, lo, hi, schedule,
                      off_above, pays, fixed_k, fixed_T, ratio, topk, opts, interior,
                      tree_width(fixed_k, fixed_T, s.branching, s.auto),
                      sglang_spec_v2=bool(sc["spec_overlap"]) if eng_name == "sglang" else None,
                      cap=_cap(r, lo, hi), cap_base=min(hi, r.max_batch_base), off_fits=off_fits,
                      fixed_fits_to=fixed_to,
                      no_spec_reason=_no_spec_reason(r, lo, hi), dp=s.dp, pp=s.pp,
                      memory_fraction=sc["memory_fraction"], memory_origin=sc["memory_origin"],
                      memory_engine="" if s.memory_fraction is not None else eng_name,
                      memory_of_free=bool(sc["memory_share_of_free"]), moe=bool(sc["moe"]),
                      graph_cap=s.cuda_graph_max_batch, sglang_aiter=_aiter(s))
    assumptions = _assumptions(r, lo, hi, B, opts, off_above, pays, interior, eng_name) \
        + tuple(range_text(load_bands(), bool(sc["moe"]), s.acceptance is not None, B))
    return Advice(r, (lo, hi), sk, sT, schedule, pays, off_above, fixed_k, fixed_T, ratio, fixed_s, interior,
                  engine_configs(plan, targets), hz, assumptions, opts, off_fits, sp)


def _off_fits(r: SpeedupResult, off_above: int | None) -> bool:
    """True when speculation is off above `off_above` because the next evaluated batch does not fit with it (it
    still pays at off_above), False when it loses there or is never switched off."""
    return off_above is not None and not bool(r.feasible[np.flatnonzero(r.batch > off_above)[0]])


def _cap(r: SpeedupResult, lo: int, hi: int) -> int:
    """The most sequences the configs admit: the range's top, or less where that does not fit with the drafter
    loaded (an engine configured to speculate holds its weights and KV at every batch, the narrowest verify)."""
    most = r.narrowest[1]
    return most if lo <= most < hi else hi


def _no_spec_reason(r: SpeedupResult, lo: int, hi: int) -> str:
    """Why no engine config is written when no batch of the range is feasible with speculation ('' otherwise)."""
    if r.feasible.any():
        return ""
    if r.base_feasible.any():
        return f"no batch in {lo}..{hi} is feasible with speculation ({r.message[0]}): serve without it"
    return f"no batch in {lo}..{hi} is feasible, with or without speculation ({r.message[0]})"


def _priced(s: Scenario, B: np.ndarray, lo: int, hi: int) -> tuple[np.ndarray, Scenario, SpeedupResult]:
    """Predict at batches B, then again with the batches where memory runs out (`_memory_edges`) when they are new."""
    r = predict(s)
    edges = _memory_edges(B, r, lo, hi)
    if edges.size == B.size:
        return B, s, r
    s = s.replace(batch=tuple(int(b) for b in edges))
    return edges, s, predict(s)


def _memory_edges(B: np.ndarray, r: SpeedupResult, lo: int, hi: int) -> np.ndarray:
    """The evaluated batches plus, inside lo..hi, the largest batch that fits in memory without speculation and at
    every verify shape tried, and the ones after them, so that the schedule's ranges end where memory runs out."""
    edges = (r.max_batch_base, r.max_batch_spec, *(b for _, _, b in r.fit_edges))
    extra = {b for m in edges for b in (m, m + 1) if lo <= b <= hi}
    return np.array(sorted({*(int(b) for b in B), *extra}))


def _assumptions(r: SpeedupResult, lo: int, hi: int, B: np.ndarray, opts: Mapping[str, Any], off_above: int | None,
                 pays: bool, interior: tuple[int, ...], engine: str) -> tuple[str, ...]:
    s = r.scenario
    out = [
        f"a prediction, not a measurement: datasheet roofline of {s['hardware']} and the {engine} engine profile "
        "(its estimates are marked in engine_profiles/)",
        f"acceptance {s['acceptance']} (alpha {s['acceptance_alpha']:.3f}) at every batch and load; other depths k "
        f"extrapolate it by {s['acceptance_model']}",
        f"batch = sequences decoding together in one step, {lo}..{hi}"
        + ("" if B.size == hi - lo + 1 else f", evaluated at powers of two, both ends and the largest batches that "
           f"fit ({B.size} points): a range between two points takes the lower point's k"),
        f"every sequence holds {s['context']} tokens of context; decode steps only (prefill and TTFT not modelled)",
        f"{s['n_gpus']} GPU(s): tp={s['tp']}, ep={s['ep']}, weights {s['precision']}, KV {s['kv_precision']}",
        f"drafter: {s['drafter']}",
        "the schedule runs the best k wherever speculation is predicted to pay (speedup >= 1 and it fits in "
        f"memory) and k = 0 elsewhere, in the fewest ranges that keep every batch within {K_TOLERANCE:.0%} of its "
        "best speedup (differences below the model's resolution do not split the table)",
    ]
    if interior:
        out.append(f"speculation is predicted to lose below the crossover too, at batch(es) {ranges_text(interior)}: "
                   "k = 0 there")
    if not r.feasible.any():
        out.append("no batch of the range is feasible with speculation, so no engine config is written")
    elif not pays:
        out.append("speculation does not pay at any feasible batch of the range, so no engine config is written")
    elif off_above is None:
        out.append(f"speculation pays up to {hi}, the top of the range: larger batches were not evaluated")
    out.append(r.fits_text())
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
