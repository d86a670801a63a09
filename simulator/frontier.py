"""The throughput-interactivity frontier, speculation on and off: search deployment layouts and concurrencies for the
Pareto frontier of output tokens/s per GPU against tokens/s per user, and compare the two at interactivity targets.

Every point is `serving.serve` at one layout (TP x attention-DP, EP) and one concurrency: a steady-state closed loop
with prefill sharing the steps, or pausing them where the engine does not mix the two (or on separate instances with
`pd`). Per user = 1 / TPOT of a running request; per GPU = output tokens/s over every GPU of the deployment. A
layout is one instance of n = tp x dp GPUs; for an MoE model the experts are spread over all n (ep = n, wide expert
parallelism, DP attention when dp > 1) or, with dp = 1, split tensor-parallel (ep = 1). A dense model is searched at
dp = 1 (replicas do not change per-GPU figures). A mode's points are those where no request waits for a running
slot: above its cap (SGLang runs 48 at once while speculating; --max-running-requests) the same requests run, with
the same tokens/s per user and per GPU and a TTFT longer by the wait, so the cap itself is searched instead.

The production pattern this explains (speculation on for latency-sensitive traffic, off for throughput) is where the
two frontiers cross: at high tokens/s per user the speculative frontier reaches throughput the plain one cannot; at
low interactivity (large batches) the plain frontier is higher or equal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .admission import running_limit, speculates
from .checkpoint import checkpoint_note
from .errors import ScenarioError, SpecroofError
from .model import ModelShape
from .scenario import Deployment, Scenario, as_scenario
from .serving import Workload, serve
from .workload import Parallelism

DEFAULT_TARGETS = (20.0, 50.0, 100.0)   # tokens/s per user: chat-like, fast chat, agentic / reasoning interactivity
PER_RANK_BATCH = tuple(2 ** j for j in range(11))   # 1 .. 1024 sequences per attention-DP rank


@dataclass(frozen=True)
class Layout:
    """One instance: tp x dp GPUs, experts over ep of them."""

    tp: int
    dp: int
    ep: int

    @property
    def gpus(self) -> int:
        return self.tp * self.dp

    def label(self) -> str:
        return f"tp{self.tp}" + (f"xdp{self.dp}" if self.dp > 1 else "") + (f" ep{self.ep}" if self.ep > 1 else "")


@dataclass(frozen=True)
class Point:
    """One evaluated (layout, concurrency, mode): interactivity, throughput per GPU, and what it took."""

    layout: Layout
    mode: str
    concurrency: int
    k: int
    tokens_per_s_per_user: float
    tokens_per_s_per_gpu: float
    tpot_s: float
    ttft_s: float
    e2e_s: float
    memory_fraction: float = 1.0     # the engine's share of each GPU at this layout (SGLang's rule varies with it)
    verify_tokens: int = 1           # tokens verified per sequence a step (k + 1 for a chain; 1 off)

    def to_dict(self) -> dict[str, Any]:
        return {"layout": self.layout.label(), "tp": self.layout.tp, "dp": self.layout.dp, "ep": self.layout.ep,
                "gpus": self.layout.gpus, "mode": self.mode, "concurrency": self.concurrency, "k": self.k,
                "tokens_per_s_per_user": self.tokens_per_s_per_user,
                "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu, "tpot_s": self.tpot_s, "ttft_s": self.ttft_s,
                "e2e_s": self.e2e_s, "memory_fraction": self.memory_fraction, "verify_tokens": self.verify_tokens}


@dataclass(frozen=True)
class Target:
    """At an interactivity target (tokens/s per user, or a TPOT SLO as 1/TPOT): the best point of each frontier that
    meets it (None: none does) and the throughput ratio on / off."""

    tokens_per_s_per_user: float
    on: Point | None
    off: Point | None
    edge: tuple[str, ...] = ()     # the modes that meet it with no point beating it by EDGE (near their ceiling)

    @property
    def ratio(self) -> float | None:
        if self.on is None or self.off is None:
            return None
        return self.on.tokens_per_s_per_gpu / self.off.tokens_per_s_per_gpu

    def to_dict(self) -> dict[str, Any]:
        return {"tokens_per_s_per_user": self.tokens_per_s_per_user, "tpot_slo_s": 1.0 / self.tokens_per_s_per_user,
                "on": None if self.on is None else self.on.to_dict(),
                "off": None if self.off is None else self.off.to_dict(), "throughput_ratio": self.ratio,
                "edge": list(self.edge)}


# A target within this of a mode's fastest point hangs on the price of the points near it: the held-out median error
# of a step is about 12 % (README, "How accurate is it"), and a target that much faster leaves the mode no point at all
# (found by review: a ratio of 52 where plain decoding met 142.9 tokens/s per user at one request by 0.2 %, and 26.4
# at 140, met at two requests by 0.8 %).
EDGE = 0.12


def target(t: float, on: Sequence[Point], off: Sequence[Point]) -> Target:
    """The best point of each frontier at target t, and which modes meet it near their ceiling: no point of their
    frontier beats t by EDGE (front[-1] is the fastest)."""
    pick = {"on": best_at(on, t), "off": best_at(off, t)}
    edge = tuple(m for m, front in (("on", on), ("off", off)) if pick[m] is not None and
                 front[-1].tokens_per_s_per_user < t * (1.0 + EDGE))
    return Target(t, pick["on"], pick["off"], edge)


@dataclass(frozen=True)
class FrontierResult:
    """Result of `frontier`: every feasible point, the Pareto frontiers (speculation on, off), the targets, the
    layouts skipped and why, and the search it came from. `feasible`: at least one point of each mode exists.
    `rejected`: requests of the length distribution left out as too long for the model (`Workload.fitting`).
    `deployments`: each priced layout's resolved deployment, resolved once by the search (`deployment`), so what
    reads a layout's deployment afterwards (the notes, the CLI's hazards) does not resolve it again."""

    scenario: dict[str, Any]
    workload: Workload
    points: tuple[Point, ...]
    on: tuple[Point, ...]
    off: tuple[Point, ...]
    targets: tuple[Target, ...]
    skipped: tuple[tuple[str, str], ...]
    notes: tuple[str, ...] = field(default=())
    rejected: int = 0
    deployments: tuple[tuple[Layout, Deployment], ...] = field(default=(), repr=False, compare=False)

    def deployment(self, layout: Layout) -> Deployment:
        """The deployment the search priced `layout` with (a KeyError for a layout it did not price)."""
        return dict(self.deployments)[layout]

    @property
    def feasible(self) -> bool:
        return bool(self.on) and bool(self.off)

    @property
    def message(self) -> str:
        if self.feasible:
            return ""
        why = "; ".join(f"{lay}: {m}" for lay, m in self.skipped[:3])
        mode = "with or without" if not (self.on or self.off) else "with" if not self.on else "without"
        return f"no feasible point {mode} speculation" + \
            (f" ({why})" if why else "")

    def to_dict(self) -> dict[str, Any]:
        w = self.workload
        isl, osl = w.mean_lengths
        return {"scenario": self.scenario, "workload": {"isl": isl, "osl": osl, "length_ratio": w.length_ratio,
                                                         "chunk": w.chunk, "prefix_hit": w.prefix_hit, "pd": w.pd,
                                                         "prefill_gpus": w.prefill_gpus,
                                                         "prefill_layout": w.prefill_layout,
                                                         "rejected": self.rejected},
                "feasible": self.feasible, "message": self.message,
                "frontier_on": [p.to_dict() for p in self.on], "frontier_off": [p.to_dict() for p in self.off],
                "targets": [t.to_dict() for t in self.targets], "points": len(self.points),
                "skipped": [{"layout": lay, "reason": m} for lay, m in self.skipped], "notes": list(self.notes)}


def layouts(is_moe: bool, gpus: Sequence[int], max_tp: int = 8) -> list[Layout]:
    """The layouts searched for each GPU count (see the module docstring): tp a power of two up to max_tp dividing
    the count; for MoE, wide EP over all GPUs at every tp, and TP-split experts (ep 1) at dp 1."""
    out: list[Layout] = []
    for n in gpus:
        for tp in (t for t in (1, 2, 4, 8, 16, 32, 64) if t <= min(n, max_tp) and n % t == 0):
            dp = n // tp
            if not is_moe:
                if dp == 1:
                    out.append(Layout(tp, 1, 1))
                continue
            out.append(Layout(tp, dp, n))
            if dp == 1 and n > 1:
                out.append(Layout(tp, 1, 1))
    return list(dict.fromkeys(out))


def pareto(points: Sequence[Point]) -> tuple[Point, ...]:
    """The points no other beats on both tokens/s per user and tokens/s per GPU, by increasing interactivity."""
    best: list[Point] = []
    top = -np.inf
    for p in sorted(points, key=lambda p: (-p.tokens_per_s_per_user, -p.tokens_per_s_per_gpu)):
        if p.tokens_per_s_per_gpu > top:
            best.append(p)
            top = p.tokens_per_s_per_gpu
    return tuple(reversed(best))


def best_at(front: Sequence[Point], target: float) -> Point | None:
    """The highest-throughput frontier point at or above `target` tokens/s per user."""
    ok = [p for p in front if p.tokens_per_s_per_user >= target]
    return max(ok, key=lambda p: p.tokens_per_s_per_gpu) if ok else None


def _points(sc: Scenario, dep: Deployment, lay: Layout, w: Workload) -> tuple[list[Point], str]:
    """Each mode at 1..1024 requests per attention-DP rank and at its running limit (SGLang's 48 while speculating,
    or --max-running-requests, or the most requests whose KV cache fits: admission.running_limit), where it fits
    (plain decoding holds no drafter) and no request waits for a running slot: above the limit the same requests
    run, so tokens/s per user and per GPU are the limit's, and only TTFT grows (by the wait); such a point is not
    one to run at, and the limit itself is searched instead. Also why none is feasible when none is (the smallest
    concurrency's reason). `sc` is the scenario at `lay`, `dep` its resolved deployment."""
    caps = {"on": running_limit(dep, w, speculates(dep)), "off": running_limit(dep, w, False)}   # k = 0 is off
    extra = {int(c) for c in caps.values() if lay.dp <= c <= lay.dp * PER_RANK_BATCH[-1]}
    conc = tuple(sorted({lay.dp * b for b in PER_RANK_BATCH} | extra))
    res = serve(sc, replace(w, concurrency=conc, rate=()), dep=dep)
    out = []
    for mode, ph, fits in (("on", res.spec, res.feasible), ("off", res.base, res.base_feasible)):
        for i, c in enumerate(res.concurrency):
            if fits[i] and c <= caps[mode]:
                out.append(Point(lay, mode, int(c), int(ph.k[i]), float(ph.tokens_per_s_per_user[i]),
                                 float(ph.tokens_per_s_per_gpu[i]), float(ph.tpot_s[i]), float(ph.ttft_s[i]),
                                 float(ph.e2e_s[i]), dep.eng.memory_share(mode == "on" and speculates(dep)),
                                 int(ph.verify_tokens[i])))
    why = f"no concurrency fits in memory (at {int(res.concurrency[0])}: {res.base_message[0]})"
    return out, "" if out else why


def _check(s: Scenario, w: Any, gpus: Any, targets: Any, max_tp: Any) -> tuple[float, ...]:
    """The frontier's arguments, each refused by name (a ScenarioError) before the search."""
    if not isinstance(w, Workload):
        raise ScenarioError(f"frontier: workload = {w!r}; expected a Workload")
    if w.rate:            # review: the rates were dropped without a word (the search sets the load)
        raise ScenarioError(f"frontier: workload rate = {list(w.rate)}; the frontier searches concurrencies and "
                            "prices no arrival rate: leave rate (and max_concurrency) out, or price rates with serve")
    if s.method is None:
        raise ScenarioError("frontier compares speculation on and off: give a method")
    if s.pp != 1:        # the search spans tp x dp = gpus; stages would multiply the GPUs each point is divided by
        raise ScenarioError(f"pp = {s.pp}: the frontier searches tp x dp layouts of each GPU count and does not "
                            "search pipeline stages; drop pp (price one staged layout with serve --pp)")
    return _check_search(gpus, targets, max_tp)


def _check_search(gpus: Any, targets: Any, max_tp: Any) -> tuple[float, ...]:
    """GPU counts, interactivity targets and the largest TP the search may use."""
    if not (isinstance(gpus, (list, tuple)) and gpus and all(_whole(g, 1) for g in gpus)):
        raise ScenarioError(f"gpus = {list(gpus) if isinstance(gpus, (list, tuple)) else gpus!r}; expected a list "
                            "of GPU counts >= 1")
    if not _whole(max_tp, 1):
        raise ScenarioError(f"max_tp = {max_tp!r}; expected an integer >= 1")
    if not (isinstance(targets, (list, tuple)) and all(_positive(t) for t in targets)):
        raise ScenarioError(f"targets = {list(targets) if isinstance(targets, (list, tuple)) else targets!r}; "
                            "expected a list of tokens/s per user > 0")
    return tuple(dict.fromkeys(float(t) for t in targets))   # a target given twice is one (review: the CLI's
    # --tpot-slo-ms 20 repeated the default 50 tokens/s target's row)


def _whole(v: Any, lo: int) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer)) and v >= lo


def _positive(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.number)) and bool(np.isfinite(v)) and v > 0


def searched_layouts(target: ModelShape, gpus: Sequence[int], max_tp: int = 8) -> list[Layout]:
    """`layouts` less those the model refuses (tp not dividing its heads, more EP ranks than experts); a GPU count
    left with none is refused before the search (a ScenarioError naming gpus, the count and the counts allowed)."""
    out: list[Layout] = []
    for n in gpus:
        why, ok = [], []
        for lay in layouts(target.is_moe, [n], max_tp):
            try:
                Parallelism(tp=lay.tp, ep=lay.ep, dp=lay.dp).check(target)
                ok.append(lay)
            except ScenarioError as e:
                why.append(f"{lay.label()}: {e}")
        if not ok:
            searched = "; ".join(why) or f"a dense model is searched at dp 1 with tp = the GPU count, a power of " \
                f"two up to max_tp = {max_tp} (replicas do not change per-GPU figures)"
            raise ScenarioError(f"gpus = {n} (frontier --gpus): no layout of {n} GPUs per instance for "
                                f"{target.name} ({searched}); expected {_allowed(target, max_tp)}")
        out += ok
    return list(dict.fromkeys(out))


def _allowed(target: ModelShape, max_tp: int) -> str:
    """The GPU counts that have a searched layout, in words."""
    tps = ", ".join(str(t) for t in (1, 2, 4, 8, 16, 32, 64) if t <= max_tp and target.n_heads % t == 0)
    if not target.is_moe:
        return f"one of {tps} (tp dividing the {target.n_heads} heads, up to max_tp = {max_tp})"
    return f"a count up to {target.n_experts} (one EP rank per GPU over its {target.n_experts} experts) or one of " \
        f"{tps} (tp alone, up to max_tp = {max_tp})"


def _search(s: Scenario, d: Deployment, w: Workload, lays: list[Layout]
            ) -> tuple[list[Point], list[tuple[str, str]], dict[Layout, Deployment]]:
    """Every layout's points, the layouts skipped and why, and each priced layout's deployment: resolved once here
    (the scenario's own, `d`, where the layout is the scenario's) and reused by the notes and the CLI's hazards."""
    pts: list[Point] = []
    skipped: list[tuple[str, str]] = []
    deps: dict[Layout, Deployment] = {}
    for lay in lays:
        sc = s.replace(tp=lay.tp, dp=lay.dp, ep=lay.ep)
        try:
            dep = d if (lay.tp, lay.dp, lay.ep) == (s.tp, s.dp, s.ep) else sc.resolve()
            got, why = _points(sc, dep, lay, w)
        except SpecroofError as e:
            skipped.append((lay.label(), str(e)))
            continue
        deps[lay] = dep
        if not got:
            skipped.append((lay.label(), why))
        pts += got
    return pts, skipped, deps


def _notes(s: Scenario, d: Deployment, front: list[Point], rejected: int,
           deps: dict[Layout, Deployment]) -> tuple[str, ...]:
    """What the search assumes: the steady state, the frontier layouts across nodes, the requests left out as too
    long, and the engine's running cap. `deps`: each searched layout's deployment (`_search`)."""
    notes = ("a prediction: steady-state closed loop per layout and concurrency (serving.serve)",
             "per user = 1 / TPOT of a running request; per GPU = output tokens/s over all GPUs of the deployment")
    across = sorted({p.layout.label() for p in front if deps[p.layout].cross_node})
    if across:       # review: frontier recommended TP16 on two H100 boards without the warning curve prints
        notes += (f"frontier layout(s) {', '.join(across)} put a collective other than the expert all-to-all across "
                  "nodes, priced as NCCL over InfiniBand: one published run of that kind measured about twice the "
                  "priced step (hazard tensor-parallel-across-nodes-underpriced); read them as upper bounds",)
    if rejected:
        notes += (f"{rejected} of the length distribution's requests need more than {d.target.name}'s "
                  f"{d.target.max_position} positions: an engine rejects them, so the rest are priced",)
    if d.eng.running_cap is not None:
        who = "either mode" if s.max_running_requests is not None else "speculation"
        notes += (f"{d.eng.name} runs at most {d.eng.running_cap:g} requests at once with {who} (per DP rank where "
                  "each rank schedules its own: admission.running_cap): concurrencies "
                  "above it, whose requests wait for a running slot, are left out (the same tokens/s per user and "
                  f"per GPU as at {d.eng.running_cap:g}, TTFT longer by the wait); {d.eng.running_cap:g} itself is "
                  "searched",)
    return notes


def frontier(scenario: Scenario | None = None, workload: Workload | None = None, gpus: Sequence[int] = (8,),
             targets: Sequence[float] = DEFAULT_TARGETS, max_tp: int = 8, **kw: Any) -> FrontierResult:
    """Search layouts for `gpus` GPUs per instance and concurrencies (1..1024 sequences per attention-DP rank) for the
    frontiers with speculation on (the scenario's method, k as it says: "auto" picks per point) and off."""
    s = as_scenario(scenario, "frontier").replace(**kw)
    w = Workload() if workload is None else workload
    tg = _check(s, w, gpus, targets, max_tp)
    d = s.resolve()          # checks the scenario once, before the search
    w, rejected = w.fitting(d.target.max_position)       # the requests a server rejects are not priced (serve's rule)
    if not (w.samples[1] > 1).any():     # of the requests served (review: the rejected ones had passed the check)
        raise ScenarioError(f"osl = {w.mean_lengths[1]:g}: the frontier ranks tokens/s per user, 1 / TPOT, and with "
                            "one output token per request there is no decode to time; expected osl >= 2")
    pts, skipped, deps = _search(s, d, w, searched_layouts(d.target, gpus, max_tp))
    on = pareto([p for p in pts if p.mode == "on"])
    off = pareto([p for p in pts if p.mode == "off"])
    scen = {"hardware": d.hw.name, "model": d.target.name, "method": s.method, "engine": d.eng.name,
            "precision": d.p.weights, "expert_precision": d.p.expert_dtype, "gpus": list(gpus), "k": s.k,
            "checkpoint": checkpoint_note(d.target, d.p), "routing_locality": d.target.priced_routing_locality,
            "sampling": d.scenario.sampling,
            "acceptance": d.acceptance.source, "overlap": d.overlap,
            "memory_fraction": s.memory_fraction,       # the deployment's own; None: each point's (its layout's)
            "max_running_requests": d.eng.running_cap, "hardware_file": d.hw.path or None,
            "engine_file": d.eng.path or None}
    notes = _notes(s, d, on + off, rejected, deps)
    return FrontierResult(scen, w, tuple(pts), on, off, tuple(target(t, on, off) for t in tg), tuple(skipped),
                          notes, rejected, tuple(deps.items()))


__all__ = ["DEFAULT_TARGETS", "EDGE", "FrontierResult", "Layout", "Point", "Target", "best_at", "frontier",
           "layouts", "pareto", "searched_layouts", "target"]
