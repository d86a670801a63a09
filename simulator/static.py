"""One static batch run to completion, with and without speculation: a prefill pass over every prompt, then the
decode steps (an offline latency benchmark such as vLLM's benchmark_latency, or a `--batch` run of bench_one_batch).
Validation prices such rows here; serving workloads are `serving.serve`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .admission import admission_width, speculates
from .loop import decode
from .pricing import check_context, context_message, memory, price_pass
from .scenario import Deployment, Scenario, as_scenario
from .traffic import pos_int


@dataclass(frozen=True)
class BatchRun:
    """Result of `static_batch`: one static batch of B requests run to completion (an offline latency benchmark such
    as vLLM's benchmark_latency), with and without speculation, per batch.

    batch : (P,); ttft_s : the prefill pass of B x isl prompt tokens; base_e2e_s, spec_e2e_s : prefill plus the
    osl - 1 further tokens; e2e_speedup = base / spec; k : the draft depth chosen at the mean context;
    feasible, message : the KV cache of B requests at isl + osl fits beside the drafter; base_feasible,
    base_message : it fits without one (plain decoding).
    """

    batch: np.ndarray
    ttft_s: np.ndarray
    base_e2e_s: np.ndarray
    spec_e2e_s: np.ndarray
    k: np.ndarray
    feasible: np.ndarray
    message: tuple[str, ...]
    base_feasible: np.ndarray
    base_message: tuple[str, ...]

    @property
    def e2e_speedup(self) -> np.ndarray:
        return self.base_e2e_s / self.spec_e2e_s


def _per_token(dep: Deployment, B: np.ndarray, L: float, spec: bool) -> tuple[np.ndarray, np.ndarray]:
    """Time per output token of a decode step at context L (the step over its tokens), and the draft depth."""
    step, tau, k, _ = decode(dep, B, L, spec)
    return step / tau, k


def static_batch(scenario: Scenario | None = None, batch: Any = None, isl: int = 1024, osl: int = 1024,
                 dep: Deployment | None = None, **kw: Any) -> BatchRun:
    """Price one static batch (see BatchRun): a prefill pass over every prompt, then osl - 1 decode steps (spec: at
    the best verify shape) whose per-token time is integrated over the context isl .. isl + osl by Simpson's rule
    (exact for a cost affine in the context)."""
    isl, osl = pos_int("isl", isl), pos_int("osl", osl)
    s = as_scenario(scenario, "static_batch").replace(**kw, **({} if batch is None else {"batch": batch}))
    dep = dep if dep is not None else s.resolve()
    check_context(dep, isl, "isl (--isl)", "and the output fewer")
    B = np.asarray(s.batch, dtype=np.float64)
    ops = dep.lops
    ttft = price_pass(dep, ops, B, float(isl), 0.0, "target").total_s
    Ls = (float(isl), isl + osl / 2.0, float(isl + osl))
    e2e, k = [], np.zeros(B.size, dtype=int)
    for spec in (False, speculates(dep)):
        per = [_per_token(dep, B, L, spec) for L in Ls]
        e2e.append(ttft + (osl - 1) * (per[0][0] + 4.0 * per[1][0] + per[2][0]) / 6.0)
        k = per[1][1]
    pos = context_message(dep, isl, osl, "output tokens")
    fits = []
    for drafter in (speculates(dep), False):     # a speculating batch holds its verify tokens (admission_width)
        mem = memory(dep, B, admission_width(dep, drafter), float(isl + osl), drafter=drafter)
        fits += [mem.fits & (not pos), tuple(pos or mem.message(i, dep.hw.name, dep.eng)
                                             for i in range(B.size))]
    return BatchRun(B.astype(int), ttft, e2e[0], e2e[-1], k, *fits)


__all__ = ["BatchRun", "static_batch"]
