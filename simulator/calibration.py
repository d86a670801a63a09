"""Fit engine overheads to measurements: bounded least squares (scipy.optimize.least_squares) on log(predicted /
measured), with each parameter's uncertainty and a verdict on whether the data determine it.

Every parameter is a named mechanism with physical bounds (`PARAMS`), per engine (a row constrains only its engine's,
so engines are fitted jointly with a block-sparse Jacobian) or per architecture. Rows are weighted so that each source
counts about equally (1/sqrt(rows of the source)): one source with hundreds of rows must not set a profile alone.
Uncertainty: the Gauss-Newton covariance s^2 (J^T J)^-1 at the optimum, s^2 the weighted residual variance (Bates &
Watts 1988, sec. 2.3). A parameter that ends on a bound, or whose 1-sigma exceeds its value, is not determined: with
`prune` it is fixed at its profile's sourced value and the rest refitted, and the verdict is reported (a finding to
explain, never a value to ship).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .convergence import describe
from .engine import EngineProfile, load_engine
from .errors import ScenarioError, SpecroofError
from .toml_out import dump_toml
from .validation import PreparedRow, load_refusal, load_rows, predict_prepared, prepare_row


@dataclass(frozen=True)
class Param:
    """A fittable field: its TOML place, physical bounds, a start when the profile has none, the mechanism it prices,
    and its scope: 'engine' (an EngineProfile field, one value per engine) or 'device' (a Hardware field, one value
    per chip architecture, shared by every engine and source)."""

    section: str
    key: str
    lo: float
    hi: float
    start: float
    mechanism: str
    scope: str = "engine"


PARAMS: dict[str, Param] = {
    "host_step_s": Param("host", "step_overhead_s", 0.0, 5e-3, 5e-4,
                         "host work per step (scheduling, batch building, output processing); at most the 5-6 ms "
                         "per-step gap of vLLM V0 at batch 256 (vLLM PR #11133)"),
    "host_per_seq_s": Param("host", "per_seq_s", 0.0, 5e-5, 2e-6,
                            "scheduler host work per running sequence per step (slot allocation, input preparation, "
                            "output processing), counted on the busiest DP rank's scheduler; at most 50 us, beyond "
                            "which batch 256 would spend 13 ms on the CPU"),
    "spec_bookkeeping_s": Param("spec", "bookkeeping_s", 0.0, 5e-3, 5e-4,
                                "per speculative step: draft-input preparation, tree build, acceptance sync; at "
                                "most 5 ms"),
    "flashinfer_spec_step_s": Param("spec", "flashinfer_step_s", 0.0, 5e-3, 5e-4,
                                    "per speculative step on SGLang's FlashInfer attention path: its plan() calls "
                                    "and blocking host syncs (a tree, or a chain of a model type not FA3-default); "
                                    "shipped as measured (SpecBundle's chain / tree pairs), not fitted"),
    "draft_step_overhead_s": Param("spec", "draft_step_overhead_s", 0.0, 2e-3, 2e-4,
                                   "host work per draft pass (the drafter's Python loop); at most 2 ms"),
    "kernel_launch_s": Param("launch", "kernel_launch_s", 0.0, 1e-4, 1e-5,
                             "per kernel of an eager pass, which takes the longer of its GPU work and its "
                             "launches: 26 us derived for vLLM on an H100 host, 51-80 us on others (engine "
                             "profiles); bound 100 us"),
    "hbm_fraction": Param("efficiency", "hbm_fraction", 0.3, 1.0, 0.85,
                          "achieved share of HBM bandwidth at decode shapes"),
    "gemm_fraction": Param("efficiency", "gemm_fraction", 0.5, 1.0, 0.75,
                           "achieved share of dense tensor peak for compute-bound GEMMs (best shapes 0.72-0.80, "
                           "stas00 MAMF table)"),
    "overlap_efficiency": Param("efficiency", "overlap_efficiency", 0.0, 1.0, 0.5,
                                "share of min(math, memory) time hidden, one value for every op (fitted, it replaces "
                                "the measured mode: the device's GEMM overlap and the GEMMs' real-token math)"),
    "kernel_floor_s": Param("kernels", "graph_kernel_us", 1.3e-6, 15e-6, 3.3e-6,
                            "mean cost of a graph-replayed kernel beyond its roofline work: at least the 1.3 us "
                            "dead time per kernel boundary (Hazy Research, H100), at most ~15 us (an H100 decode "
                            "attention kernel: 1.2 TB/s at 34 MB against 1.85 TB/s at 1 GB is ~10 us fixed)",
                            scope="device"),
}
# The per-engine host mechanisms a user's profile is calibrated on by default (the GPU side is physics).
ENGINE_PARAMS = ("host_step_s", "host_per_seq_s", "spec_bookkeeping_s", "draft_step_overhead_s")
# The shipped fit: per-engine host mechanisms and each architecture's per-kernel graph cost, jointly. Not the host work
# per draft pass: measured (SGLang: engine_profiles/sglang.toml, PR #4247's 0.43 ms per extra pass, GPU included), it
# had traded against the bookkeeping per step (0.57 +- 0.21 ms against 0.87 +- 0.76 ms, one RMS residual either way).
SHIPPED_PARAMS = ("host_step_s", "host_per_seq_s", "spec_bookkeeping_s", "kernel_floor_s")
FITTED, AT_BOUND, LOOSE, NO_ROWS = "fitted", "at bound", "1-sigma > value", "no row depends on it"
ONE_SOURCE = "one source only (cannot be checked held out)"
HIDDEN = "hidden on plain steps by the overlap scheduler; on speculative steps spec_bookkeeping_s is the same host work"
# A fit whose RMS log residual stays above this (predictions still ~35 % off) does not explain the rows: the rows
# measure something the model does not price, or hold a mistake; `specroof calibrate` refuses it without --force.
MAX_RMS_LOG = 0.3


@dataclass(frozen=True)
class FitParam:
    """One parameter of one group (an engine, or an architecture for device parameters) after the fit: `value` (what
    the result's profiles hold: the fitted value, or the starting value when the parameter was `kept` there for not
    being determined), `tried` (what the fit wanted), 1-sigma `stderr`, bounds and the verdict. Without pruning an
    undetermined parameter is not kept: it holds the fit's value, with its verdict (found by review: it was reported
    'fitted', and `ok`, at +- inf)."""

    group: str
    name: str
    value: float
    tried: float
    stderr: float
    lo: float
    hi: float
    status: str
    kept: bool = True

    def line(self) -> str:
        v = f"{self.value:.4g} +- {self.stderr:.2g}" if self.status == FITTED else \
            f"{self._shown():.4g} ({'kept' if self.kept else 'the fit value, not pruned'})"
        sd = f"+- {self.stderr:.2g}" if np.isfinite(self.stderr) else "with no finite 1-sigma: the rows do not bound it"
        why = "" if self.status == FITTED else f"; not determined: {self.status} (fit wanted {self.tried:.3g} {sd}, " \
                                                f"bounds {self.lo:g}..{self.hi:g})"
        return f"{self.group}.{self.name} = {v}{why}"

    def _shown(self) -> float:
        """A kept value as it was given: a start on a bound is nudged 1e-9 of the range inside it (`_start`), which
        printed a kept 0 as 5e-14 (found by review)."""
        edge = 2e-9 * (self.hi - self.lo)
        if self.kept and abs(self.value - self.lo) <= edge:
            return self.lo
        return self.hi if self.kept and abs(self.hi - self.value) <= edge else self.value


@dataclass(frozen=True)
class FitResult:
    """Result of `fit`: the profiles and per-architecture kernel floors with fitted values, every parameter's
    verdict, the rows used with their log residuals log(predicted / measured) at the optimum, and the RMS of those
    before and after. `ok`: every parameter tried was determined."""

    engines: dict[str, EngineProfile]
    floors: dict[str, float]
    params: tuple[FitParam, ...]
    row_ids: tuple[str, ...]
    residuals: np.ndarray
    rms_before: float
    rms_after: float
    success: bool
    message: str              # how the solve ended, in the calibration's terms (convergence.describe)
    solver_message: str = ""  # scipy's own sentence, a detail

    @property
    def ok(self) -> bool:
        """Every parameter tried was determined and the fit explains the rows (RMS log residual <= MAX_RMS_LOG)."""
        return all(p.status == FITTED for p in self.params) and self.rms_after <= MAX_RMS_LOG

    def values(self, group: str) -> dict[str, float]:
        return {p.name: p.value for p in self.params if p.group == group and p.status == FITTED}


@dataclass(frozen=True)
class Group:
    """What a row is priced with: its engine profile's name and its device's architecture."""

    engine: str
    arch: str


class _Problem:
    """Residuals of prepared rows as a function of the free parameters (one column per group x parameter: engine
    parameters per engine, device parameters per architecture), each row recomputed only when one of its own
    columns moves."""

    def __init__(self, rows: Sequence[PreparedRow], groups: Sequence[Group], engines: dict[str, EngineProfile],
                 floors: dict[str, float], cols: list[tuple[str, str]]):
        self.rows, self.groups, self.base, self.floors, self.cols = rows, list(groups), engines, floors, cols
        self.meas = np.array([float(p.row["measured"]) for p in rows])
        src = [p.row.get("source_id") or p.row["source"] for p in rows]
        n_src = Counter(src)
        self.w = np.array([1.0 / np.sqrt(n_src[s]) for s in src])
        self.mine = [[j for j, (g, n) in enumerate(cols) if g == (gr.engine if PARAMS[n].scope == "engine" else
                                                                   gr.arch)] for gr in self.groups]
        self.memo: list[tuple[tuple[float, ...], float] | None] = [None] * len(rows)

    def engines_at(self, x: np.ndarray) -> dict[str, EngineProfile]:
        kw: dict[str, dict[str, float]] = {}
        for (g, name), v in zip(self.cols, x):
            if PARAMS[name].scope == "engine":
                kw.setdefault(g, {})[name] = float(v)
        return {e: replace(eng, **kw.get(e, {})) for e, eng in self.base.items()}

    def floors_at(self, x: np.ndarray) -> dict[str, float]:
        out = dict(self.floors)
        out.update({g: float(v) for (g, name), v in zip(self.cols, x) if name == "kernel_floor_s"})
        return out

    def __call__(self, x: np.ndarray) -> np.ndarray:
        engs, floors = self.engines_at(x), self.floors_at(x)
        out = np.empty(len(self.rows))
        for i, (p, gr) in enumerate(zip(self.rows, self.groups)):
            key = tuple(float(x[j]) for j in self.mine[i])
            hit = self.memo[i]
            if hit is None or hit[0] != key:
                pred = predict_prepared(p, engs[gr.engine], floors.get(gr.arch))
                hit = (key, self.w[i] * float(np.log(pred / self.meas[i])))
                self.memo[i] = hit
            out[i] = hit[1]
        return out

    def sparsity(self) -> np.ndarray:
        S = np.zeros((len(self.rows), len(self.cols)), dtype=bool)
        for i, js in enumerate(self.mine):
            S[i, js] = True
        return S


def _start(value: float | None, name: str) -> float:
    par = PARAMS[name]
    v = par.start if value is None else float(value)
    span = par.hi - par.lo
    return float(np.clip(v, par.lo + 1e-9 * span, par.hi - 1e-9 * span))


def _stderr(jac: Any, fun: np.ndarray, n_params: int, span: np.ndarray) -> np.ndarray:
    """1-sigma of each parameter: the Gauss-Newton covariance s^2 (J^T J)^-1. Infinite where it cannot be estimated:
    no more rows than parameters (no residual degree of freedom), or a column in the near-null space of J scaled by
    the parameter ranges (collinear parameters: the data fix only a combination of them, however small the
    residuals)."""
    J = jac.toarray() if hasattr(jac, "toarray") else np.asarray(jac)
    if fun.size <= n_params:
        return np.full(n_params, np.inf)
    s2 = float(fun @ fun) / (fun.size - n_params)
    se = np.sqrt(np.clip(np.diag(np.linalg.pinv(J.T @ J)) * s2, 0.0, None))
    sv, vt = np.linalg.svd(J * span, full_matrices=False)[1:]
    if sv.size and sv[-1] <= 1e-6 * sv[0]:
        for vec in vt[sv <= 1e-6 * sv[0]]:
            se[np.abs(vec) > 0.1] = np.inf
    return se


def _on_bound(v: float, par: Param) -> bool:   # within 0.1 % of the range from a bound
    return min(v - par.lo, par.hi - v) <= 1e-3 * (par.hi - par.lo)


def _verdict(v: float, se: float, par: Param) -> str:
    """At a bound (`_on_bound`, or within 1-sigma of it: 49.6 +- 19 us under 50 us), loose, or fitted."""
    if _on_bound(v, par):
        return AT_BOUND
    if se > abs(v):
        return LOOSE
    return AT_BOUND if np.isfinite(se) and (v - se <= par.lo or v + se >= par.hi) else FITTED


def _solve(prob: _Problem, x0: np.ndarray) -> tuple[Any, np.ndarray]:
    from scipy.optimize import least_squares  # lazy: keeps `import simulator` fast
    lo = np.array([PARAMS[n].lo for _, n in prob.cols])
    hi = np.array([PARAMS[n].hi for _, n in prob.cols])
    # one column: no sparsity pattern (scipy's 2-D trust-region subproblem of the sparse path needs two columns)
    sparsity = prob.sparsity() if len(prob.cols) > 1 else None
    sol = least_squares(prob, x0, bounds=(lo, hi), x_scale=(hi - lo) * 0.1, diff_step=1e-3, method="trf",
                        jac_sparsity=sparsity, max_nfev=200)
    return sol, _stderr(sol.jac, sol.fun, len(prob.cols), hi - lo)


def _sources_moved(prob: _Problem, x0: np.ndarray) -> list[set[str]]:
    """For each column, the sources of the rows that move (log residual by more than 1e-4) when the column moves by
    10 % of its range: no source, no row depends on it; one source, it cannot be checked held out."""
    r0 = prob(x0)
    src = np.array([p.row.get("source_id") or p.row["source"] for p in prob.rows])
    out = []
    for j, (_, n) in enumerate(prob.cols):
        par = PARAMS[n]
        x = x0.copy()
        x[j] = x[j] + 0.1 * (par.hi - par.lo) if x[j] + 0.1 * (par.hi - par.lo) <= par.hi else x[j] - 0.1 * (
            par.hi - par.lo)
        out.append(set(src[np.abs(prob(x) - r0) / prob.w > 1e-4]))
    return out


def _worst_per_group(bad: dict[tuple[str, str], str], tried: dict[tuple[str, str], tuple[float, float]]
                     ) -> dict[tuple[str, str], str]:
    """The one undetermined parameter to fix per group this round: one at a bound first, else the one with the
    largest 1-sigma relative to its value (a parameter collinear with another is then often determined)."""
    out: dict[tuple[str, str], str] = {}
    for g in {c[0] for c in bad}:
        mine = [c for c in bad if c[0] == g]
        key = lambda c: (bad[c] == AT_BOUND, tried[c][1] / max(abs(tried[c][0]), 1e-30))  # noqa: E731
        worst = max(mine, key=key)
        out[worst] = bad[worst]
    return out


def _cols(groups: Sequence[Group], params: Sequence[str]) -> list[tuple[str, str]]:
    engines = sorted({g.engine for g in groups})
    archs = sorted({g.arch for g in groups})
    return [(e, n) for e in engines for n in params if PARAMS[n].scope == "engine"] + \
        [(a, n) for a in archs for n in params if PARAMS[n].scope == "device"]


def fit(rows: Sequence[PreparedRow], groups: Sequence[Group], engines: dict[str, EngineProfile],
        floors: dict[str, float], params: Sequence[str] = ENGINE_PARAMS, prune: bool = True,
        min_sources: int = 1, hide_overlapped: bool = False) -> FitResult:
    """Fit `params` to `rows` (row i priced with engines[groups[i].engine] on a device of architecture
    groups[i].arch, whose per-kernel graph cost starts at floors[arch]); see the module docstring. With `prune`,
    undetermined parameters are fixed at their starting (sourced) values and the rest refitted. A parameter that
    fewer than `min_sources` sources constrain is not fitted (the shipped calibration asks for 2: a value one source
    alone sets cannot be checked on data it did not see). With `hide_overlapped` (the shipped calibration), an
    engine's host step that only speculative steps expose is not fitted (`_hidden`)."""
    _check_inputs(rows, params)
    cols = _cols(groups, params)
    start = _starts(cols, engines, floors)
    prob = _Problem(rows, groups, engines, floors, cols)
    x_all = np.array([start[c] for c in cols])
    set_ = [c for c in cols if not _unset(c, engines)]       # the profiles as they price before the fit
    rms0 = float(np.sqrt(np.mean((_Problem(rows, groups, engines, floors, set_)(np.array([start[c] for c in set_]))
                                  / prob.w) ** 2)))
    moved = _sources_moved(prob, x_all)
    verdict = _undetermined_from_the_start(cols, moved, min_sources, engines if hide_overlapped else {})
    tried: dict[tuple[str, str], tuple[float, float]] = {c: (start[c], float("inf")) for c in cols}
    warm = dict(start)
    while True:
        prob, free = _fixed_problem(rows, groups, engines, floors, cols, start, verdict)
        sol = _round(prob, free, warm, tried) if free else None
        bad_now = _undetermined(free, tried)
        if sol is None or not prune or not bad_now:
            break
        verdict.update(_worst_per_group(bad_now, tried))
    return _result(prob, sol, free, cols, start, tried, {**verdict, **_undetermined(free, tried)}, rms0)


def _undetermined_from_the_start(cols: list[tuple[str, str]], moved: list[set[str]], min_sources: int,
                                 hide: dict[str, EngineProfile]) -> dict[tuple[str, str], str]:
    """Columns no fit can determine: no row moves them, fewer than `min_sources` sources do, or (for the engines in
    `hide`) host work the overlap scheduler hides (`_hidden`)."""
    out = {c: NO_ROWS if not m else ONE_SOURCE for c, m in zip(cols, moved) if len(m) < min_sources or not m}
    out.update({c: HIDDEN for c in cols if c not in out and _hidden(hide.get(c[0]), c[1])})
    return out


def _hidden(eng: EngineProfile | None, name: str) -> bool:
    """Host work per step of an engine that overlaps it with plain steps but not with speculative ones: plain rows
    see it only where it exceeds the GPU step, speculative rows only summed with spec_bookkeeping_s, so its share of
    that sum is not identified and it keeps its sourced value (the speculative host work goes to the bookkeeping).
    An engine whose default began to overlap speculative steps at a date (overlap_with_spec_from) ran its older
    measurements without, so the same holds for them."""
    return name == "host_step_s" and eng is not None and eng.overlap and \
        (not eng.overlap_with_spec or bool(eng.overlap_with_spec_from))


def _check_inputs(rows: Sequence[PreparedRow], params: Sequence[str]) -> None:
    bad = [p for p in params if p not in PARAMS]
    if not params:         # review: an empty --params said "unknown calibration parameter(s) []"
        raise ScenarioError(f"no calibration parameter given (--params is empty); choose from {', '.join(PARAMS)}")
    if bad:
        raise ScenarioError(f"unknown calibration parameter(s) {bad}; choose from {', '.join(PARAMS)}")
    if not rows:
        raise ScenarioError("no usable rows to fit")


def _undetermined(free: list[tuple[str, str]], tried: dict[tuple[str, str], tuple[float, float]]
                  ) -> dict[tuple[str, str], str]:
    out = {c: _verdict(*tried[c], PARAMS[c[1]]) for c in free}
    return {c: st for c, st in out.items() if st != FITTED}


def _unset(c: tuple[str, str], engines: dict[str, EngineProfile]) -> bool:
    """An engine parameter its base profile leaves unset (None): the fit starts it at the parameter's start value,
    but the profile prices without it."""
    return PARAMS[c[1]].scope == "engine" and getattr(engines[c[0]], c[1]) is None


def _starts(cols: list[tuple[str, str]], engines: dict[str, EngineProfile], floors: dict[str, float]
            ) -> dict[tuple[str, str], float]:
    """Each column's starting value: the engine's field, or the architecture's kernel floor (clipped into bounds)."""
    return {c: _start(getattr(engines[c[0]], c[1]) if PARAMS[c[1]].scope == "engine" else floors.get(c[0]), c[1])
            for c in cols}


def _result(prob: _Problem, sol: Any, free: list[tuple[str, str]], cols: list[tuple[str, str]],
            start: dict[tuple[str, str], float], tried: dict[tuple[str, str], tuple[float, float]],
            verdict: dict[tuple[str, str], str], rms0: float) -> FitResult:
    x = sol.x if sol is not None else np.zeros(0)
    res = prob(x) / prob.w
    fitted = dict(zip(free, x))
    out = tuple(FitParam(g, n, float(fitted.get((g, n), start[(g, n)])), tried[(g, n)][0], tried[(g, n)][1],
                         PARAMS[n].lo, PARAMS[n].hi, verdict.get((g, n), FITTED), (g, n) not in fitted)
                for g, n in cols)
    return FitResult(prob.engines_at(x), prob.floors_at(x), out, tuple(p.row["row_id"] for p in prob.rows), res,
                     rms0, float(np.sqrt(np.mean(res ** 2))), bool(sol is None or sol.success),
                     describe(sol, [f"{g}.{n}" for g, n in free], len(prob.rows)), "" if sol is None else sol.message)


def _fixed_problem(rows: Sequence[PreparedRow], groups: Sequence[Group], engines: dict[str, EngineProfile],
                   floors: dict[str, float], cols: list[tuple[str, str]], start: dict[tuple[str, str], float],
                   verdict: dict[tuple[str, str], str]) -> tuple[_Problem, list[tuple[str, str]]]:
    """The problem over the still-free columns, the undetermined ones fixed at their starting values (one the base
    profile leaves unset, such as overlap_efficiency in the measured mode, stays unset)."""
    free = [c for c in cols if c not in verdict]
    fixed_e = {e: replace(eng, **{n: start[(g, n)] for (g, n) in verdict if g == e and not _unset((g, n), engines)})
               for e, eng in engines.items()}
    fixed_f = dict(floors, **{g: start[(g, n)] for (g, n) in verdict if n == "kernel_floor_s"})
    return _Problem(rows, groups, fixed_e, fixed_f, free), free


def _solve_restarted(prob: _Problem, free: list[tuple[str, str]], x0: np.ndarray) -> tuple[Any, np.ndarray]:
    """A solve from `x0` and, for columns it ends on a bound, one with them started inside (PARAMS start, or mid-range):
    the lower weighted sum of squares wins. Host work hidden under the GPU's puts max() kinks in the residuals, so a
    solve started on a bound (a prior of 0) can stop at a local minimum there (tests/test_validate.py builds one)."""
    sol, se = _solve(prob, x0)
    x1 = x0.copy()
    for j, (_, n) in enumerate(free):
        par = PARAMS[n]
        if _on_bound(sol.x[j], par):
            x1[j] = par.start if par.lo < par.start < par.hi else 0.5 * (par.lo + par.hi)
    if np.array_equal(x1, x0):
        return sol, se
    sol1, se1 = _solve(prob, x1)
    return (sol1, se1) if float(sol1.fun @ sol1.fun) < float(sol.fun @ sol.fun) else (sol, se)


def _round(prob: _Problem, free: list[tuple[str, str]], warm: dict[tuple[str, str], float],
           tried: dict[tuple[str, str], tuple[float, float]]) -> Any:
    """One least-squares solve from the warm start (restarted inside the ranges of the columns it leaves on a bound:
    `_solve_restarted`); records each column's value and 1-sigma in `tried`."""
    sol, se = _solve_restarted(prob, free, np.array([warm[c] for c in free]))
    for c, v, e in zip(free, sol.x, se):
        tried[c] = (float(v), float(e))
        warm[c] = _start(float(v), c[1])
    return sol


def usable(rows: Sequence[dict[str, str]], keep: Callable[[PreparedRow], bool] = lambda p: True
           ) -> tuple[list[PreparedRow], list[tuple[str, str]]]:
    """Prepared rows that can be priced (and pass `keep`), and (row_id, reason) for those that cannot."""
    good, skipped = [], []
    for r in rows:
        try:
            p = prepare_row(r)
            predict_prepared(p)
        except SpecroofError as e:
            skipped.append((r["row_id"], str(e)))
            continue
        if keep(p):
            good.append(p)
    return good, skipped


def _check_args(rows: Any, params: Any) -> None:
    """`calibrate`'s rows (a CSV path or a list) and params (distinct: review, a repeat was named 'rows = str')."""
    if not isinstance(rows, (str, Path, list, tuple)):
        raise ScenarioError(f"rows = {type(rows).__name__}; expected a rows CSV path or a list of rows")
    twice = [] if isinstance(params, str) else sorted({q for q in params if list(params).count(q) > 1})
    if isinstance(params, str) or twice:
        raise ScenarioError(f"params = {params!r}; expected a list of distinct parameter names such as "
                            f"('host_step_s',){f' ({twice} given more than once)' if twice else ''}")


def calibrate(rows: str | Path | Sequence[dict[str, str]], base: EngineProfile | str,
              params: Sequence[str] = ENGINE_PARAMS, prune: bool = True) -> FitResult:
    """Fit `params` of the `base` profile to `rows` (a rows CSV path or loaded rows; the validation schema). Every
    row is priced with `base`, whatever its engine column says (given as a profile, each row is still prepared with
    its column's engine, which must load). A row whose hardware, model, engine or draft does not load is refused."""
    eng0 = base if isinstance(base, EngineProfile) else load_engine(base)
    _check_args(rows, params)
    rs = load_rows(rows) if isinstance(rows, (str, Path)) else list(rows)
    given = [dict(r, engine=str(base)) for r in rs] if isinstance(base, (str, Path)) else rs
    bad = load_refusal(given, rows if isinstance(rows, (str, Path)) else None)   # an engine column replaced loads
    if bad:       # before pricing a row (it had priced all 784 rows of a file, 12 s, to refuse the one at its end)
        raise ScenarioError(f"{bad}; calibrate fits every row it is given: fix or remove them")
    prepared, skipped = usable(given)
    if skipped:                       # a fit on quietly fewer rows than given is not the fit asked for
        raise ScenarioError(f"{str(rows) + ': ' if isinstance(rows, (str, Path)) else ''}{len(skipped)} of {len(rs)} "
                            f"rows cannot be priced, e.g. row {skipped[0][0]}: {skipped[0][1]}; fix or remove them")
    if len(prepared) < len(params):
        raise ScenarioError(f"{len(prepared)} usable rows cannot determine {len(params)} parameters; add measurements "
                            "(with and without speculation, at several batch sizes) or fit fewer --params")
    groups = [Group(eng0.name, p.dep.hw.architecture) for p in prepared]
    floors = {p.dep.hw.architecture: p.dep.hw.kernel_floor_s for p in prepared}
    return fit(prepared, groups, {eng0.name: eng0}, floors, params, prune)


def row_group(p: PreparedRow) -> Group:
    """The (engine, architecture) a prepared row is priced with."""
    return Group(p.dep.eng.name, p.dep.hw.architecture)


def bundled(names: Sequence[str]) -> dict[str, EngineProfile]:
    """The bundled profiles by name, every calibrated value back at its sourced prior (the start of a fit)."""
    return {n: load_engine(n).uncalibrated() for n in names}


def prior_floors(rows: Sequence[PreparedRow]) -> dict[str, float]:
    """Each architecture's per-kernel graph cost before calibration (the sourced prior), from the rows' devices."""
    return {p.dep.hw.architecture: p.dep.hw.uncalibrated().kernel_floor_s for p in rows}


def __getattr__(name: str) -> Any:
    """`write_profile` lives in profile_out (which imports this module); the old import path still works."""
    if name == "write_profile":
        from .profile_out import write_profile  # lazy: profile_out imports this module (a cycle)
        return write_profile
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["ENGINE_PARAMS", "PARAMS", "SHIPPED_PARAMS", "FitParam", "FitResult", "Group", "Param", "bundled",
           "calibrate", "dump_toml", "fit", "prior_floors", "row_group", "usable"]
