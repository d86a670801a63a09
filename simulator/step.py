"""Price one forward pass (prefill, decode or verify) of a model on a device, over a list of batch sizes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .admission import running_cap
from .checkpoint import checkpoint_note
from .errors import ScenarioError
from .pricing import check_context, context_message, host_rule, memory, price_pass, scheduler_batch, with_filter
from .roofline import BOUNDS
from .scenario import Deployment, Scenario, as_scenario
from .tables import frame, step_row
from .workload import FAMILIES


@dataclass(frozen=True)
class StepResult:
    """Result of `simulate_step`: one forward pass priced at each batch size.

    Attributes
    ----------
    scenario : dict              resolved inputs (names, tp, ep, precisions, query tokens, context, engine)
    batch : (P,) float           sequences per step
    step_s : (P,) float          step time, s (GPU roofline + engine overheads). Valid only where `feasible`.
    breakdown_s : dict[str, (P,)]  time per op family (dense, attention, moe, lm_head, collective, overhead), s
    bound : tuple[str]           memory, compute or communication: the class of ops that takes longest
    memory_bytes : (P,) float    per-GPU weights + KV + activations, bytes
    feasible : (P,) bool         fits in the engine's share of usable HBM (and the model's context limit)
    message : tuple[str]         why a point is infeasible ('' when feasible)
    """

    scenario: dict[str, Any]
    batch: np.ndarray
    step_s: np.ndarray
    breakdown_s: dict[str, np.ndarray]
    bound: tuple[str, ...]
    memory_bytes: np.ndarray
    feasible: np.ndarray
    message: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: infeasible points carry null times."""
        pts = []
        for i, b in enumerate(self.batch):
            ok = bool(self.feasible[i])
            pts.append({
                "batch": int(b), "step_s": float(self.step_s[i]) if ok else None,
                "bound": self.bound[i] if ok else None,
                "breakdown_s": {k: float(v[i]) for k, v in self.breakdown_s.items()} if ok else None,
                "memory_bytes": float(self.memory_bytes[i]), "feasible": ok, "message": self.message[i]})
        return {"scenario": self.scenario, "points": pts}

    def to_dataframe(self):
        """pandas DataFrame, one row per batch: the time per op family as <family>_s (null where infeasible)."""
        return frame([step_row(p) for p in self.to_dict()["points"]])


def _room(q: int) -> str:
    """What a context refused by check_context leaves out for a step of q new tokens per sequence."""
    return f"--query-tokens {q} needs {q - 1} fewer; such a step is reported infeasible" if q > 1 else \
        "a decode step adds one token"


def _feasible(dep: Deployment, B: np.ndarray, q: int, context: int, logits: str) -> tuple[Any, np.ndarray, list[str]]:
    """Memory per point, whether each point is a step the deployment runs, and why not: memory, the running cap,
    then the model's positions (a context past them refuses every point)."""
    mem = memory(dep, B, q, float(context), logits, verify=q > 1)      # q > 1, every logit: a verify pass
    ok = mem.fits.copy()
    msgs = [mem.message(i, dep.hw.name, dep.eng) for i in range(B.size)]
    cap = running_cap(dep, False)     # Scenario.max_running_requests over the dp ranks (inf where none is set)
    for i in np.flatnonzero((B > cap) & ok):
        msgs[i] = _over_cap_message(dep, B[i], cap)
    ok &= B <= cap
    pos = context_message(dep, context, q, "new tokens")
    if pos:
        ok[:] = False
        msgs = [pos] * B.size
    return mem, ok, msgs


def _over_cap_message(dep: Deployment, b: float, cap: float) -> str:
    """Why a batch above the requests the deployment lets the engine run at once (Scenario.max_running_requests:
    SGLang's --max-running-requests, vLLM's --max-num-seqs, over its dp ranks as `admission.running_cap` counts them)
    is infeasible: the engine never runs such a step (found by review: the CLI refused the flag though it sizes vLLM's
    start-up reserve)."""
    user = dep.scenario.max_running_requests
    per = f" ({user} per rank x dp {dep.par.dp})" if cap != user else ""
    return (f"batch {b:g} > {cap:g} requests at once (--max-running-requests {user}{per}): the engine never runs "
            f"this step; the rest of the requests wait for a slot")


# The Scenario fields of speculation, at their plain values: simulate_step prices one pass, whatever the scenario
# says of drafting.
PLAIN = {"method": None, "draft": None, "draft_precision": None, "acceptance": None, "k": "auto", "tree_tokens": None,
         "tree_branching": None, "draft_kv_window": None, "spec_overlap": None}


def simulate_step(hardware: Any = None, model: Any = None, batch: Any = None, query_tokens: int = 1,
                  context: int | None = None, *, logits: str = "all", scenario: Scenario | None = None,
                  dep: Deployment | None = None, **kw: Any) -> StepResult:
    """Price one forward pass of `query_tokens` new tokens per sequence over `context` cached tokens.

    q = 1 is a decode step, q = k + 1 (or a tree of T tokens) a verify step, q = prompt length with
    logits="last" a prefill. The step adds the engine's host overhead (hidden behind the GPU when it overlaps).
    The deployment is a Scenario (its speculative fields are ignored): `scenario`, with the given fields replaced,
    or `Scenario(hardware=..., model=..., batch=..., context=..., **kw)` over the Scenario defaults; `dep`: the
    scenario already resolved (calibration reuses it).
    """
    given = {k: v for k, v in dict(hardware=hardware, model=model, batch=batch, context=context).items()
             if v is not None}
    # the speculative fields are ignored, a method given among them too (API review: a TypeError), and so are a
    # tree and a drafter, which a plain pass has none of (review: a tree scenario was refused as a chain's)
    s = as_scenario(scenario, "simulate_step").replace(**{**given, **kw, **PLAIN})
    if isinstance(query_tokens, bool) or not isinstance(query_tokens, (int, np.integer)) or query_tokens < 1:
        raise ScenarioError(f"query_tokens = {query_tokens!r}; expected an integer >= 1")
    if logits not in ("all", "last"):
        raise ScenarioError(f"logits = {logits!r}; expected 'all' or 'last'")
    dep = dep if dep is not None else s.resolve()
    check_context(dep, s.context, more=_room(int(query_tokens)))
    q, L = int(query_tokens), float(s.context)
    B = np.asarray(s.batch, dtype=np.float64)
    # q > 1 with every logit: a verify pass (its KV re-reads, a hybrid target's state commit); q = 1 a decode pass
    ops = dep.lops if logits == "last" else dep.verify_ops if q > 1 else dep.tops
    # the sampled rows: every token's where every logit is computed (a verify pass's filter when q > 1), else one a
    # sequence (a prefill's, by the plain sampler)
    st = with_filter(dep, price_pass(dep, ops, B, float(q), L, "target"), B, *((q, q > 1) if logits == "all" else ()))
    total = host_rule(dep.eng, st.total_s, scheduler_batch(dep, B), dep.eng.overlaps(None))
    fam = {name: st.by_family_s[:, i].copy() for i, name in enumerate(FAMILIES)}
    fam["overhead"] = fam["overhead"] + (total - st.total_s)
    mem, ok, msgs = _feasible(dep, B, q, s.context, logits)
    p = dep.p
    scen = {"hardware": dep.hw.name, "model": dep.target.name, "tp": s.tp, "ep": s.ep, "dp": s.dp, "pp": s.pp,
            "precision": p.weights, "hardware_file": dep.hw.path or None, "engine_file": dep.eng.path or None,
            "expert_precision": p.expert_dtype, "attention_precision": p.attention_dtype,
            "lm_head_precision": p.lm_head, "kv_precision": p.kv, "checkpoint": checkpoint_note(dep.target, p),
            "routing_locality": dep.target.priced_routing_locality, "sampling": s.sampling, "query_tokens": q,
            "context": s.context, "engine": dep.eng.name, "overlap": dep.overlap,
            "logits": logits, "n_gpus": dep.n_gpus, "memory_fraction": dep.eng.gpu_memory_fraction,
            "cuda_graph_max_batch": s.cuda_graph_max_batch, "max_running_requests": s.max_running_requests}
    return StepResult(scen, B, total, fam, tuple(BOUNDS[i] for i in st.bound), mem.total_bytes, ok, tuple(msgs))
