"""Evaluate a sweep spec: price each configuration once through `simulator.pricing`, then combine every acceptance
value and batch in one numba kernel (`kernels.py`).

Grid dimensions, outermost first: the swept configuration parameters and zip groups, k and context (together: the
*cells*), then acceptance, then batch. Step times do not depend on acceptance, so every configuration is resolved
once (`Scenario.resolve`), its verify shapes (`pricing.candidates`, a union over its cells) are priced over all its
contexts and the whole batch axis in one call each, and the kernels form tokens x base / spec for every acceptance
value and, with k = "auto", pick the best shape per point by `pricing.better`, exactly as `speedup.predict` does. A
configuration that `predict` rejects (tp not dividing the heads, a precision the chip lacks, MTP on a model without
MTP modules, ...) is kept, infeasible, with the error as its message.
"""

from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..acceptance import Acceptance, Verify, expected_tokens_iid
from ..drafters import default_decay
from ..errors import ScenarioError, SpecroofError
from ..pricing import base_step, candidates, check_context, memory, nothing_free, share_text, spec_step
from ..scenario import Deployment, Scenario
from ..workload import OVERLAP_MODES
from .kernels import KERNELS, pool_threads
from .spec import ACCEPTANCE, CONFIG_PARAMS, SweepSpec


@dataclass
class ShardResult:
    """Arrays of cells c0..c1-1. `fields[name] = (level, array)`: level "point" (n_cell, NA, NB), "cell_batch"
    (n_cell, NB), "cell_acc" (n_cell, NA) or "cell" (n_cell,). message codes index `messages` ('' = feasible)."""

    spec: SweepSpec
    c0: int
    c1: int
    fields: dict[str, tuple[str, np.ndarray]]
    messages: list[str]


class _Messages:
    def __init__(self) -> None:
        self.table: list[str] = [""]
        self.index: dict[str, int] = {"": 0}

    def code(self, msg: str) -> int:
        i = self.index.get(msg)
        if i is None:
            i = self.index[msg] = len(self.table)
            self.table.append(msg)
        return i


def _none(v: Any) -> Any:
    return None if v == "default" else v


def cell_scenario(d: dict[str, Any]) -> Scenario:
    """A cell's parameter values as the Scenario `predict` would be given (acceptance applied by the combine)."""
    kw = {p: _none(d[p]) for p in CONFIG_PARAMS}
    if isinstance(kw["overlap"], str) and kw["overlap"] not in OVERLAP_MODES:
        kw["overlap"] = float(kw["overlap"])
    return Scenario(**kw, k=d["k"], context=d["context"])


def resolve_cell(d: dict[str, Any], loaded: dict[tuple[str, str], Any]) -> Deployment:
    """A cell's configuration resolved as `predict` resolves it: at k = "auto" (a deployment for every depth its
    cells may take), or at k = 0 for a cell that does not speculate, as predict resolves that (found by a property
    test: vLLM's Medusa, whose default tree vLLM cannot run, was refused at k = 0 by the sweep, priced by curve)."""
    return cell_scenario(d).replace(k=0 if d["k"] == 0 else "auto").resolve(loaded)


def _cell_inputs(spec: SweepSpec, d: dict[str, Any], dep: Deployment, cache: dict[tuple, Acceptance]
                 ) -> tuple[list[Verify], list[Acceptance]]:
    """A cell's verify candidates (at its own k and context) and acceptances; raises where `predict` would reject
    it (the one check of a cell: pricing it and refusing a wholly rejected spec both use it)."""
    cell = replace(dep, scenario=dep.scenario.replace(k=d["k"], context=d["context"]))
    check_context(cell)         # first, as predict checks it
    return candidates(cell), _acceptances(spec, d, dep, cache)


def _acceptances(spec: SweepSpec, d: dict[str, Any], dep: Deployment, cache: dict[tuple, Acceptance]
                 ) -> list[Acceptance]:
    """The Acceptance of each acceptance index for a cell (its own zipped/scalar value or the method default)."""
    if spec.acc_axis is not None:
        p = spec.acc_axis.name
        vals = spec.acc_axis.values[p]
    elif "acceptance_rate" in d or "acceptance_length" in d:
        p = "acceptance_rate" if "acceptance_rate" in d else "acceptance_length"
        vals = (d[p],)
    else:
        return [dep.acceptance]          # the method's published one; raises for methods without one
    out, sc = [], dep.scenario
    for v in vals:
        key = (p, v, d.get("acceptance_k"), d["method"], sc.tree, sc.branching)
        if key not in cache:       # a length measured on the cell's tree when it verifies one (as the CLI reads it;
            # Medusa's default tree included: review, it was read as a chain's)
            cache[key] = Acceptance.from_rate(v) if p == "acceptance_rate" else Acceptance.from_measurement(
                v, d["acceptance_k"], sc.tree, sc.branching, default_decay(d["method"]))
        out.append(cache[key])
    return out


def _tokens(accs: list[Acceptance], cands: list[Verify]) -> np.ndarray:
    """(NA, C) expected tokens per step; i.i.d. chains in one vectorized call."""
    if all(v.is_chain for v in cands) and all(a.kind == "iid" for a in accs):
        t = expected_tokens_iid(np.array([a.alpha for a in accs])[:, None],
                                np.array([v.k for v in cands], dtype=float)[None, :])
        return np.ascontiguousarray(t, dtype=np.float64)
    return np.array([[a.tokens(v) for v in cands] for a in accs], dtype=np.float64)


@dataclass
class _Group:
    """One configuration priced over the union of its cells' verify shapes and all its contexts."""

    dep: Deployment
    base: np.ndarray            # (nL, NB)
    parts: np.ndarray           # (4, nL, nU, NB): draft, verify, overhead, spec
    mem: np.ndarray             # (nL, nU, NB)
    fits: np.ndarray            # (nL, nU, NB)
    L_index: dict[float, int]
    U_index: dict[Verify, int]
    capacity: tuple[float, float] = (0.0, 0.0)   # bytes per GPU the engine's share gives, with the drafter and without
    reserved: float = 0.0                        # the engine's start-up reserve, bytes per GPU (for the message)
    free: float = np.inf                         # what the weights (with the drafter's) and that reserve leave


def _price_group(dep: Deployment, Ls: np.ndarray, U: list[Verify], B: np.ndarray,
                 pool: ThreadPoolExecutor | None) -> _Group:
    base = base_step(dep, B[None, :], Ls[:, None])[0]
    parts = np.empty((4, Ls.size, len(U), B.size))

    def one(j: int) -> None:
        st = spec_step(dep, U[j], B, Ls[:, None])
        for f, a in enumerate((st.draft_s, st.verify_s, st.overhead_s, st.step_s)):
            parts[f, :, j] = a
    if pool is None or len(U) < 2:
        for j in range(len(U)):
            one(j)
    else:
        list(pool.map(one, range(len(U))))     # the roofline kernels release the GIL
    T = np.array([v.T for v in U], dtype=np.float64)
    shape = (Ls.size, len(U), B.size)
    m, m0 = (memory(dep, B[None, None, :], T[None, :, None], Ls[:, None, None], drafter=d) for d in (True, False))
    spec = np.array([v.k > 0 for v in U])[None, :, None]          # k = 0 is plain decoding: no drafter loaded
    total = np.where(spec, np.broadcast_to(m.total_bytes, shape), np.broadcast_to(m0.total_bytes, shape))
    cap = np.where(spec, m.capacity_bytes, m0.capacity_bytes)    # a plain server's share (engine.memory_share)
    one = lambda x: float(np.ravel(x)[0])  # noqa: E731   capacity depends on neither batch nor context
    return _Group(dep, base, parts, total, total <= cap, {float(L): j for j, L in enumerate(Ls)},
                  {v: j for j, v in enumerate(U)}, (one(m.capacity_bytes), one(m0.capacity_bytes)),
                  one(m.reserved_bytes), one(m.free_bytes))


class _Shard:
    """Builds the arrays of cells c0..c1-1: resolves and prices each configuration once, then combines."""

    def __init__(self, spec: SweepSpec, c0: int, c1: int) -> None:
        self.spec, self.c0, self.c1 = spec, c0, c1
        self.n = n = c1 - c0
        self.B = np.asarray(spec.batch, dtype=np.float64)
        self.cells = spec.cell_values(c0, c1)
        self.msgs = _Messages()
        self.loaded: dict[tuple[str, str], Any] = {}
        self.acc_cache: dict[tuple, Acceptance] = {}
        self.inv_code = np.zeros(n, dtype=np.int32)
        self.mem_code = np.zeros(n, dtype=np.int32)
        self.row_tmax = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        self.alpha = np.full((n, spec.n_acc), np.nan)
        self.group: dict[int, _Group] = {}
        self.cands: dict[int, list[Verify]] = {}
        self.accs: dict[int, list[Acceptance]] = {}

    def bad(self, i: int, e: Exception) -> None:
        """Cell i is a configuration `predict` rejects: kept, infeasible, with the error as its message."""
        self.inv_code[i] = self.msgs.code(str(e))

    def price(self, pool: ThreadPoolExecutor | None) -> None:
        groups: dict[tuple, list[int]] = {}
        for i, d in enumerate(self.cells):
            groups.setdefault((*(d[p] for p in CONFIG_PARAMS), d["k"] == 0), []).append(i)   # resolve_cell
        for members in groups.values():
            self._price_group(members, pool)

    def _live(self, members: list[int], dep: Deployment) -> list[int]:
        live = []
        for i in members:
            d = self.cells[i]
            try:
                self.cands[i], self.accs[i] = _cell_inputs(self.spec, d, dep, self.acc_cache)
            except SpecroofError as e:
                self.bad(i, e)
                continue
            self.alpha[i] = [a.alpha for a in self.accs[i]]
            live.append(i)
        return live

    def _price_group(self, members: list[int], pool: ThreadPoolExecutor | None) -> None:
        try:
            dep = resolve_cell(self.cells[members[0]], self.loaded)
            live = self._live(members, dep)
            if not live:
                return
            Ls = np.array(sorted({self.cells[i]["context"] for i in live}), dtype=np.float64)
            U = list(dict.fromkeys(v for i in live for v in self.cands[i]))
            g = _price_group(dep, Ls, U, self.B, pool)
        except SpecroofError as e:
            for i in members:
                self.bad(i, e)
            return
        f, f0 = dep.eng.memory_share(True), dep.eng.memory_share(False)
        (c, c0), r = g.capacity, g.reserved     # priced with the group (it had priced memory twice more here)
        plain = f" (x {f0:g}, {c0 / 1e9:.1f} GB, at k = 0)" if f0 != f else ""
        m_code = self.msgs.code(f"does not fit: needs more than the {c / 1e9:.1f} GB per GPU that "
                                f"{share_text(dep.hw.name, f, dep.eng.share_of_free, r)} gives{plain}"
                                f"{nothing_free(dep.eng.share_of_free, g.free)} (memory_bytes: what it needs)")
        for i in live:
            self.group[i] = g
            self.mem_code[i] = m_code
            if dep.target.max_position:
                self.row_tmax[i] = dep.target.max_position - self.cells[i]["context"]

    def combine(self, kernel: str) -> ShardResult:
        """Gather each cell's candidates from its group and run the combine kernels."""
        n, NA, NB = self.n, self.spec.n_acc, self.B.size
        C = max([len(v) for v in self.cands.values()] + [1])
        a = _Arrays(n, NA, C, NB)
        for i, g in self.group.items():
            a.fill(i, g, self.cells[i], self.cands[i], self.accs[i], self.msgs)
        invalid = np.ones(n, dtype=np.bool_)
        invalid[list(self.group)] = False
        fields = a.fixed(self, invalid) if not self.spec.auto else a.choose(self, invalid, kernel)
        if not self.spec.auto:
            KERNELS[kernel][0](a.base, a.tokens, a.parts[3], fields["speedup"][1])
        return ShardResult(self.spec, self.c0, self.c1, fields, self.msgs.table)


class _Arrays:
    """The combine kernels' inputs for one shard (see kernels.py for the shapes)."""

    def __init__(self, n: int, NA: int, C: int, NB: int) -> None:
        self.base = np.full((n, NB), np.nan)
        self.parts = np.full((4, n, C, NB), np.nan)
        self.mem = np.full((n, C, NB), np.nan)
        self.ok = np.zeros((n, C, NB), dtype=np.bool_)
        self.T = np.zeros((n, C), dtype=np.int64)
        self.K = np.zeros((n, C), dtype=np.int64)
        self.n_cand = np.ones(n, dtype=np.int64)
        self.pos_code = np.zeros((n, C), dtype=np.int32)
        self.tokens = np.full((n, NA, C), np.nan)
        self.shape = (n, NA, NB)

    def fill(self, i: int, g: _Group, d: dict[str, Any], cands: list[Verify], accs: list[Acceptance],
             msgs: _Messages) -> None:
        jl, ju = g.L_index[float(d["context"])], [g.U_index[v] for v in cands]
        nc = len(cands)
        self.base[i] = g.base[jl]
        self.parts[:, i, :nc] = g.parts[:, jl, ju]
        self.mem[i, :nc] = g.mem[jl, ju]
        self.ok[i, :nc] = g.fits[jl, ju]
        self.T[i, :nc] = [v.T for v in cands]
        self.K[i, :nc] = [v.k for v in cands]
        self.n_cand[i] = nc
        self.tokens[i, :, :nc] = _tokens(accs, cands)
        m, L = g.dep.target, d["context"]
        for c, v in enumerate(cands):
            if m.max_position and L + v.T > m.max_position:
                self.pos_code[i, c] = msgs.code(f"context {L} + {v.T} tokens exceeds {m.name}'s "
                                                f"max_position_embeddings {m.max_position}")

    def fixed(self, sh: _Shard, invalid: np.ndarray) -> dict[str, tuple[str, np.ndarray]]:
        """One candidate per cell: everything but the speedup is independent of acceptance."""
        pos_bad = (self.T[:, 0] > sh.row_tmax) & ~invalid
        code = np.where(self.ok[:, 0], 0, sh.mem_code[:, None])
        code = np.where(pos_bad[:, None], self.pos_code[:, :1], code)
        code = np.where(invalid[:, None], sh.inv_code[:, None], code).astype(np.int32)
        f: dict[str, tuple[str, np.ndarray]] = {"speedup": ("point", np.empty(self.shape))}
        f["verify_tokens"] = ("cell", np.where(invalid, 0, self.T[:, 0]))
        f["tokens_per_step"] = ("cell_acc", np.ascontiguousarray(self.tokens[:, :, 0]))
        f["alpha"] = ("cell_acc", sh.alpha)
        f["base_step_s"] = ("cell_batch", self.base)
        for j, name in enumerate(("draft_s", "verify_s", "overhead_s", "spec_step_s")):
            f[name] = ("cell_batch", np.ascontiguousarray(self.parts[j, :, 0]))
        f["memory_bytes"] = ("cell_batch", np.ascontiguousarray(self.mem[:, 0]))
        f["feasible"] = ("cell_batch", self.ok[:, 0] & ~pos_bad[:, None] & ~invalid[:, None])
        f["message"] = ("cell_batch", code)
        return f

    def choose(self, sh: _Shard, invalid: np.ndarray, kernel: str) -> dict[str, tuple[str, np.ndarray]]:
        """k = "auto": the best candidate per point, and the chosen candidate's fields."""
        _, k_choose, k_gather, k_gather_acc = KERNELS[kernel]
        speedup, choice = np.empty(self.shape), np.empty(self.shape, dtype=np.int16)
        feasible, code = np.empty(self.shape, dtype=np.bool_), np.empty(self.shape, dtype=np.int32)
        ok = self.ok & (self.T <= sh.row_tmax[:, None])[:, :, None]     # each candidate's own position limit
        k_choose(self.base, self.tokens, self.parts[3], ok, self.T, self.n_cand, sh.row_tmax, invalid,
                 sh.mem_code, self.pos_code, sh.inv_code, speedup, choice, feasible, code)
        tok = np.empty(self.shape)
        k_gather_acc(choice, self.tokens, tok)
        f: dict[str, tuple[str, np.ndarray]] = {"speedup": ("point", speedup), "tokens_per_step": ("point", tok),
                                                "alpha": ("cell_acc", sh.alpha), "base_step_s": ("cell_batch",
                                                          self.base)}
        for j, name in enumerate(("draft_s", "verify_s", "overhead_s", "spec_step_s")):
            out = np.empty(self.shape)
            k_gather(choice, self.parts[j], out)
            f[name] = ("point", out)
        out = np.empty(self.shape)
        k_gather(choice, self.mem, out)
        f["memory_bytes"] = ("point", out)
        f["feasible"] = ("point", feasible)
        f["message"] = ("point", code)
        c = choice.astype(np.intp).reshape(self.shape[0], self.shape[1] * self.shape[2])
        f["k"] = ("point", np.where(invalid[:, None, None], 0,
                                    np.take_along_axis(self.K, c, axis=1).reshape(self.shape)).astype(np.int16))
        f["verify_tokens"] = ("point", np.where(invalid[:, None, None], 0,
                                              np.take_along_axis(self.T, c, axis=1).reshape(self.shape)))
        return f


def evaluate(spec: SweepSpec, c0: int = 0, c1: int | None = None, kernel: str = "numba",
             threads: int | None = None) -> ShardResult:
    """Evaluate cells c0..c1-1 of the grid (all of it by default). kernel: "numba" or "reference" (the plain numpy
    combine); threads: Python threads pricing verify shapes concurrently (default: numba's thread count where its
    threading layer is thread safe, else 1)."""
    c1 = spec.n_cells if c1 is None else c1
    if not 0 <= c0 <= c1 <= spec.n_cells:
        raise ScenarioError(f"cells {c0}..{c1} outside the grid's 0..{spec.n_cells}")
    if kernel not in KERNELS:
        raise ScenarioError(f"kernel = {kernel!r}; expected one of {', '.join(KERNELS)}")
    sh = _Shard(spec, c0, c1)
    nthreads = threads if threads is not None else pool_threads()
    pool = ThreadPoolExecutor(nthreads) if nthreads > 1 and sh.n > 1 else None
    try:
        sh.price(pool)
    finally:
        if pool is not None:
            pool.shutdown()
    return sh.combine(kernel)


def check_some_configuration(spec: SweepSpec) -> None:
    """Raise the first error when `predict` would reject every cell of the spec (a drafter as the model, a tp no
    model's heads divide, a k past a drafter's heads, ...): a whole sweep of rejected rows is bad input, refused
    before any output. Configurations are walked over the axes that set them (not the cells' product); the first
    one that resolves is then tried at its cells' own k, context and acceptance until one passes."""
    cfg = [a for a in spec.cell_axes if any(p in CONFIG_PARAMS for p in a.params)]
    rest = [a for a in spec.cell_axes if not any(p in CONFIG_PARAMS for p in a.params)]
    loaded: dict[tuple[str, str], Any] = {}
    cache: dict[tuple, Acceptance] = {}
    first: SpecroofError | None = None
    tried = 0
    for ci in itertools.product(*(range(a.n) for a in cfg)):
        d0 = _with_axes(dict(spec.scalars), cfg, ci)
        tried += 1
        why = _first_cell_error(spec, d0, rest, loaded, cache)
        if why is None:
            return
        first = first or why
    if first is not None:
        raise ScenarioError(f"sweep spec: every cell is rejected ({tried} configuration(s) tried); the first: "
                            f"{first}")


def _first_cell_error(spec: SweepSpec, d0: dict[str, Any], rest: list[Any], loaded: dict[tuple[str, str], Any],
                      cache: dict[tuple, Acceptance]) -> SpecroofError | None:
    """None as soon as one cell of a configuration resolves (resolve_cell: once for the cells that speculate, once for
    those at k = 0) and passes `_cell_inputs`, else the first error."""
    first = None
    deps: dict[bool, Deployment | SpecroofError] = {}
    ks = {d0["k"]} if "k" in d0 else {v for a in rest if "k" in a.params for v in a.values["k"]}
    for ri in itertools.product(*(range(a.n) for a in rest)):
        d = _with_axes(dict(d0), rest, ri)
        z = d["k"] == 0
        if z not in deps:
            deps[z] = _resolved_or_error(d, loaded)
        try:
            if isinstance(deps[z], SpecroofError):
                raise deps[z]
            _cell_inputs(spec, d, deps[z], cache)
            return None
        except SpecroofError as e:
            first = first or e
        if all(isinstance(v, SpecroofError) for v in deps.values()) and len(deps) == len({k == 0 for k in ks}):
            return first             # no class of this configuration resolves: its other cells need not be tried
    return first


def _resolved_or_error(d: dict[str, Any], loaded: dict[tuple[str, str], Any]) -> Deployment | SpecroofError:
    try:
        return resolve_cell(d, loaded)
    except SpecroofError as e:
        return e


def _with_axes(d: dict[str, Any], axes: list[Any], idx: tuple[int, ...]) -> dict[str, Any]:
    """d with the parameter values of `axes` at indices `idx`."""
    for a, i in zip(axes, idx):
        for p in a.params:
            d[p] = a.values[p][i]
    return d


__all__ = ["ACCEPTANCE", "ShardResult", "cell_scenario", "check_some_configuration", "evaluate"]
