"""Speedup of speculative decoding over plain decoding, per batch size: `predict(Scenario)` and its keyword
convenience `speedup_curve(...)`. The formulas live in `pricing` (see its docstring); this module picks the best
verify shape per batch, checks feasibility and assembles the documented result.

At a fixed B the speedup is both the per-token latency ratio and the throughput ratio (both runs serve the same B
sequences). Tokens/s per GPU = B * E / T_spec / GPUs; per user = E / T_spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .acceptance import Acceptance, extrapolation_note
from .admission import running_cap
from .checkpoint import checkpoint_note
from .config_plan import ranges_text
from .engine_memory import memory_origin
from .errors import ScenarioError
from .hazards import deployment_options
from .pricing import (
    base_step,
    best_spec_step,
    break_even_alpha,
    candidates,
    check_context,
    context_message,
    max_batch,
    memory,
    overlap_note,
    sampling_note,
)
from .roofline import BOUNDS
from .scenario import Deployment, Scenario, as_scenario
from .traffic import pos_int
from .workload import INF_WINDOW


@dataclass(frozen=True)
class SpeedupResult:
    """Result of `predict` / `speedup_curve`. Arrays have one entry per batch size; times in s, memory in bytes.

    Attributes
    ----------
    scenario : dict               resolved inputs (hardware, model, method, drafter, engine, acceptance, ...)
    batch : (P,)                  sequences per step
    k : (P,) int                  draft depth used at that batch (the best one with k="auto")
    tree_tokens : (P,) int        tokens verified per sequence (k + 1 for a chain)
    speedup : (P,)                tokens_per_step * base_step_s / spec_step_s
    tokens_per_step : (P,)        expected tokens per sequence per speculative step (bonus included)
    base_step_s, spec_step_s : (P,)  plain decode step and speculative step
    draft_s, verify_s, overhead_s : (P,)  split of spec_step_s (overhead: host, bookkeeping, eager launches)
    tokens_per_s_per_gpu, tokens_per_s_per_user : (P,)   with speculation
    base_tokens_per_s_per_gpu, base_tokens_per_s_per_user : (P,)  without
    verify_bound : tuple[str]     memory / compute / communication / launch: what bounds the verify pass
    memory_bytes : (P,)           per-GPU memory with speculation (target + draft weights, KV incl. lookahead)
    feasible : (P,) bool          with speculation (fits in the engine's share of HBM); `message` says why not
    base_feasible : (P,) bool
    break_even_acceptance : (P,)  acceptance rate at which speedup = 1 for that batch's k (nan: never pays, or k = 0)
    crossover_batch : int or None largest batch with speedup >= 1 (None: speculation never pays)
    max_batch_base, max_batch_spec : int   largest batch that fits without / with speculation (the widest verify
                                  evaluated)
    fit_edges : ((k, T, B), ...)  every verify shape tried (depth k, T tokens per sequence) and the largest batch it
                                  fits in memory at; `narrowest` is the (T, B) of the narrowest one
    Values are meaningful only where `feasible`; `to_dict` writes null elsewhere.
    """

    scenario: dict[str, Any]
    batch: np.ndarray
    k: np.ndarray
    tree_tokens: np.ndarray
    speedup: np.ndarray
    tokens_per_step: np.ndarray
    base_step_s: np.ndarray
    spec_step_s: np.ndarray
    draft_s: np.ndarray
    verify_s: np.ndarray
    overhead_s: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    tokens_per_s_per_user: np.ndarray
    base_tokens_per_s_per_gpu: np.ndarray
    base_tokens_per_s_per_user: np.ndarray
    verify_bound: tuple[str, ...]
    memory_bytes: np.ndarray
    feasible: np.ndarray
    base_feasible: np.ndarray
    message: tuple[str, ...]
    break_even_acceptance: np.ndarray
    crossover_batch: int | None
    max_batch_base: int
    max_batch_spec: int
    notes: tuple[str, ...] = field(default=())
    fit_edges: tuple[tuple[int, int, int], ...] = ()

    @property
    def narrowest(self) -> tuple[int, int]:
        """(T, B): the narrowest verify tried and the largest batch it fits at ((0, 0) when none was tried)."""
        return min(((T, b) for _, T, b in self.fit_edges), key=lambda e: (e[0], -e[1]), default=(0, 0))

    def edge(self, k: int, T: int) -> int:
        """The largest batch the verify shape (k, T) fits in memory at (0 when it was not tried)."""
        return max((b for kk, TT, b in self.fit_edges if (kk, TT) == (k, T)), default=0)

    def fits_text(self) -> str:
        """Where memory runs out, with and without speculation: one sentence for every command that says it."""
        if not self.k.any():
            return f"largest batch that fits in memory: {self.max_batch_base} (k = 0 is plain decoding)"
        tm, (tn, bn) = int(self.tree_tokens.max()), self.narrowest
        out = (f"largest batch that fits in memory: {self.max_batch_base} without speculation; with it, "
               f"{self.max_batch_spec} at the widest verify evaluated ({tm} tokens per sequence)")
        return out + (f" and {bn} at the narrowest tried ({tn})" if tn and bn != self.max_batch_spec else "")

    _POINT_FIELDS = ("k", "tree_tokens", "speedup", "tokens_per_step", "base_step_s", "spec_step_s", "draft_s",
                     "verify_s", "overhead_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user")

    def to_dict(self) -> dict[str, Any]:
        pts = []
        for i, b in enumerate(self.batch):
            ok = bool(self.feasible[i])
            pt: dict[str, Any] = {"batch": int(b)}
            for f in self._POINT_FIELDS:
                v = getattr(self, f)[i]
                pt[f] = (int(v) if f in ("k", "tree_tokens") else float(v)) if ok else None
            if not ok and b <= self.max_batch_base and np.isfinite(self.base_step_s[i]):
                pt["base_step_s"] = float(self.base_step_s[i])   # plain decoding still fits (found by review)
            pt["verify_bound"] = self.verify_bound[i] if ok else None
            pt["memory_bytes"] = float(self.memory_bytes[i])
            pt["feasible"] = ok
            pt["message"] = self.message[i]
            pts.append(pt)
        be = [None if not np.isfinite(x) else float(x) for x in self.break_even_acceptance]
        return {"scenario": self.scenario, "points": pts, "crossover_batch": self.crossover_batch,
                "break_even_acceptance": be, "max_batch_base": self.max_batch_base,
                "max_batch_spec": self.max_batch_spec, "fit_edges": [list(e) for e in self.fit_edges],
                "notes": list(self.notes)}

    def to_dataframe(self):
        """pandas DataFrame, one row per batch (needs pandas)."""
        import pandas as pd  # lazy: pandas is an optional extra
        return pd.DataFrame(self.to_dict()["points"])


def _scenario_dict(dep: Deployment, acc: Acceptance) -> dict[str, Any]:
    s, d = dep.scenario, dep.drafter
    return {"hardware": dep.hw.name, "model": dep.target.name, "method": s.method, "drafter": d.description,
            "draft_model": d.shape.name if d.shape is not None else None, "engine": dep.eng.name,
            "tp": s.tp, "ep": s.ep, "n_gpus": dep.n_gpus, "precision": dep.p.weights,
            "expert_precision": dep.p.expert_dtype, "attention_precision": dep.p.attention_dtype,
            "draft_precision": dep.dp.weights, "kv_precision": dep.p.kv,
            "checkpoint": checkpoint_note(dep.target, dep.p), "routing_locality": dep.target.priced_routing_locality,
            "context": int(s.context), "k": s.k, "k_max": int(dep.kmax), "tree_tokens": s.tree,
            "tree_fixed": s.fixed_tree,
            "tree_branching": s.branching, "acceptance": acc.source, "acceptance_alpha": acc.alpha,
            "acceptance_kind": acc.kind, "acceptance_model": acc.model,
            "draft_kv_window": None if d.kv_window == INF_WINDOW else int(d.kv_window), "overlap": dep.overlap,
            "dp": s.dp, "pp": s.pp, "cuda_graph_max_batch": s.cuda_graph_max_batch,
            "memory_fraction": dep.eng.gpu_memory_fraction, "memory_fraction_plain": dep.eng.memory_share(False),
            "memory_share_of_free": dep.eng.share_of_free, "memory_origin": f"{dep.eng.name}: {memory_origin(dep.eng)}",
            "spec_overlap": dep.eng.overlaps(s.method),
            **deployment_options(dep), "hardware_file": dep.hw.path or None,
            "engine_file": dep.eng.path or None}


def predict(s: Scenario, dep: Deployment | None = None) -> SpeedupResult:
    """Predict the speedup of speculative decoding at each batch size of the scenario (see the module docstring).
    `dep`: the scenario already resolved (calibration reuses it while it varies the engine)."""
    _check_predictable(s)
    dep = dep if dep is not None else s.resolve()
    check_context(dep)          # a context past the model's positions is refused before any pricing
    acc = dep.acceptance
    B = np.asarray(s.batch, dtype=np.float64)
    L = float(s.context)
    base, _ = base_step(dep, B, L)
    best = best_spec_step(dep, acc, B, L, base)
    ok = best.ok
    base_ok = memory(dep, B, 1, L).fits & (context_message(dep, s.context, 1) == "")   # plain decoding: 1 new token
    msgs = [_auto_context(dep, s) or context_message(dep, s.context, v.T) or best.mem.message(i, dep.hw.name, dep.eng)
            for i, v in enumerate(best.v)]    # a point past the position limit says so first
    be = np.array([break_even_alpha(acc, v, sp / b) if v.k else np.nan    # k = 0: speculation off, no break-even
                   for v, sp, b in zip(best.v, best.step.step_s, base)])
    on = ok & np.array([v.k > 0 for v in best.v])          # feasible and speculating (k = 0 is plain decoding)
    pays = np.where(on & (best.s >= 1.0))[0]
    edges, widest = _fit_edges(dep, L, max(v.T for v in best.v))
    gpus = dep.n_gpus
    tokens, sp = best.tokens, best.step.step_s
    return SpeedupResult(
        scenario=_scenario_dict(dep, acc), batch=B, k=np.array([v.k for v in best.v]),
        tree_tokens=np.array([v.T for v in best.v]), speedup=best.s, tokens_per_step=tokens, base_step_s=base,
        spec_step_s=sp, draft_s=best.step.draft_s, verify_s=best.step.verify_s, overhead_s=best.step.overhead_s,
        tokens_per_s_per_gpu=B * tokens / sp / gpus, tokens_per_s_per_user=tokens / sp,
        base_tokens_per_s_per_gpu=B / base / gpus, base_tokens_per_s_per_user=1.0 / base,
        verify_bound=tuple(BOUNDS[int(i)] for i in best.step.bound), memory_bytes=best.mem.total_bytes,
        feasible=ok, base_feasible=base_ok, message=tuple(msgs), break_even_acceptance=be,
        crossover_batch=int(B[pays].max()) if pays.size else None,
        max_batch_base=max_batch(dep, 1, L, drafter=False),
        max_batch_spec=widest,
        notes=("speedup at a fixed batch is both the per-token latency ratio and the throughput ratio",
               *extrapolation_note(acc, "batch", B, [v.k for v in best.v], ok),
               *_running_cap_note(dep, B[on]), *overlap_note(dep), *sampling_note(dep)),
        fit_edges=edges)


def waves(n_prompts: int, batch: int) -> tuple[tuple[int, int], ...]:
    """(batch, count) of the waves a closed-loop benchmark runs when n_prompts requests of one length are sent at a
    concurrency of `batch` (SpecForge's bench_eagle3: run_batch(num_threads=batch) over a prompt list; SGLang's
    bench_serving --num-prompts with --max-concurrency): n_prompts // batch waves of `batch`, then one of the
    remainder. Equal requests started together finish together, so each wave decodes at its own batch throughout;
    requests of unequal length drain more gradually (an estimate either way: the benchmarks publish no lengths)."""
    b = pos_int("batch", batch)
    full, rest = divmod(pos_int("num_prompts", n_prompts), b)
    return tuple((x, c) for x, c in ((b, full), (rest, 1)) if x > 0 and c > 0)


def run_points(s: Scenario, n_prompts: int, dep: Deployment | None = None
               ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """`run_speedup` at every batch of the scenario in one pricing: (speedup, feasible, message). Where a wave the
    run reaches is infeasible, feasible is False, message names the wave and why, and the speedup is 0 (meaningful
    only where feasible, as in SpeedupResult)."""
    runs = [waves(n_prompts, int(b)) for b in s.batch]          # waves refuses a count that is not an integer >= 1
    need = sorted({b for w in runs for b, _ in w})
    res = predict(s.replace(batch=tuple(need)), dep)
    at = {int(b): i for i, b in enumerate(res.batch)}
    base, spec = res.base_step_s, res.spec_step_s / res.tokens_per_step
    out, ok, msgs = np.zeros(len(runs)), np.zeros(len(runs), dtype=bool), []
    for i, w in enumerate(runs):
        bad = [b for b, _ in w if not res.feasible[at[b]]]
        if bad:
            msgs.append(f"run of {n_prompts} prompts: batch {bad[0]} is infeasible: {res.message[at[bad[0]]]}")
            continue
        out[i] = sum(c * base[at[b]] for b, c in w) / sum(c * spec[at[b]] for b, c in w)
        ok[i] = True
        msgs.append("")
    return out, ok, tuple(msgs)


def run_speedup(s: Scenario, n_prompts: int, dep: Deployment | None = None) -> np.ndarray:
    """Speedup of a benchmark run of n_prompts equal requests at each batch of the scenario (the concurrency; see
    `waves`), as such a run measures it (total output tokens over the run's time, spec over plain): the ratio of
    sum over waves of count x time per output token, plain (base step) over speculative (spec step / tokens per
    step), each at the wave's batch and the scenario's k (k auto: each wave's best, which an engine running one k
    does not quite reach); the decode phase only, as `predict`. Equals `predict`'s speedup (to rounding) where the
    batch divides n_prompts; a batch larger than n_prompts is never reached (one wave of them all). Raises
    ScenarioError where a wave's point is infeasible (its message)."""
    sp, ok, msgs = run_points(s, n_prompts, dep)
    if not ok.all():
        raise ScenarioError(next(m for m in msgs if m))
    return sp


def _check_predictable(s: Any) -> None:
    """A Scenario with a speculative method, else one line saying what predict needs."""
    if not isinstance(s, Scenario):
        raise ScenarioError(f"predict: scenario = {s!r}; expected a Scenario (or call speedup_curve with its fields)")
    if s.method is None:      # API review: an AttributeError deep in pricing
        raise ScenarioError("predict: method = None; a speedup needs a speculative method (k = 0 of one prices "
                            "speculation off; simulate_step and serve price plain decoding alone)")


def _auto_context(dep: Deployment, s: Scenario) -> str:
    """With k = "auto", where even the smallest verify (2 tokens) passes the position limit no depth fits: say so and
    that only k = 0 remains ('' otherwise). The best infeasible depth's own message named an arbitrary k (API
    review: 'context 131071 + 7 tokens' at k = 6 where every depth 1-8 is past the limit)."""
    why = context_message(dep, s.context, 2) if s.auto else ""
    return f"no speculative depth fits: {why} (k = 1, the smallest verify); only k = 0, speculation off" if why else ""


def _running_cap_note(dep: Deployment, spec_batches: np.ndarray) -> tuple[str, ...]:
    """A note where speculating batches exceed the requests the engine runs at once while speculating (SGLang's 48
    unless --max-running-requests is set, engine profile spec.max_running_requests): such a fixed batch is what a
    deployment that raises the cap runs, not the default; () when none does."""
    user = dep.scenario.max_running_requests
    cap = running_cap(dep, True) if dep.eng.running_cap is not None else None   # over the deployment's dp ranks
    over = sorted({int(b) for b in spec_batches if b > cap}) if cap is not None else []
    if not over:
        return ()
    why = f"--max-running-requests {user}" if user is not None else \
        "its default while speculating, unless --max-running-requests is set"
    return (f"{dep.eng.name} runs at most {cap:g} requests at once ({why}): the speculative point(s) at batch "
            f"{ranges_text(over)} price a deployment that raises the cap to that many; with the cap, the requests "
            f"above {cap:g} wait for a slot (`specroof serve` prices the queue)",)


def _fit_edges(dep: Deployment, L: float, Tm: int) -> tuple[tuple[tuple[int, int, int], ...], int]:
    """(k, T, largest batch that fits) of every verify shape tried, and the edge of the widest evaluated, Tm tokens
    per sequence (memory depends on T and whether a drafter is loaded: the same for every shape of that width)."""
    edges = tuple((v.k, v.T, max_batch(dep, v.T, L, drafter=v.k > 0)) for v in candidates(dep))
    return edges, next(b for _, T, b in edges if T == Tm)


def speedup_curve(*names: Any, scenario: Scenario | None = None, **kw: Any) -> SpeedupResult:
    """`predict(Scenario(**kw))`: the Scenario's fields as keywords (hardware, model, method, draft, engine,
    precision, expert_precision, draft_precision, kv_precision, tp, ep, acceptance, k, k_max, tree_tokens,
    tree_branching, context, batch, overlap, draft_kv_window), over `scenario` when one is given. The first three
    may be positional: speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k=3)."""
    if len(names) > 3:
        raise ScenarioError(f"speedup_curve takes at most 3 positional arguments (hardware, model, method); got "
                            f"{len(names)}")
    twice = [n for n in ("hardware", "model", "method")[:len(names)] if n in kw]
    if twice:
        raise ScenarioError(f"speedup_curve: {twice[0]} given twice, by position and by keyword")
    kw.update(zip(("hardware", "model", "method"), names))
    s = as_scenario(scenario, "speedup_curve").replace(**kw)     # replace refuses an unknown field by name
    return predict(s)
