"""A benchmark run's start-up burst: what the first wave of a run of N prompts at concurrency C adds to the mean TTFT
(and E2E) over the run, beside `serving.serve`'s steady state.

Benchmark clients with --request-rate inf create every request at t = 0 and let C of them through their
--max-concurrency semaphore at once (vLLM's benchmark_serving.py and InferenceX's copy of it,
utils/bench_serving/benchmark_serving.py: get_request yields without waiting at an infinite rate, and each
request's TTFT is timed from its send inside the semaphore, backend_request_func.py). InferenceX runs N = 10 C
(benchmarks/benchmark_lib.sh run_benchmark_serving callers: --num-prompts $((CONC * 10)); the disaggregated runs'
srt-slurm sa-bench NUM_PROMPTS_MULT 10 and AMD's bench.sh num_prompts_multiplier 10, at least 16) and reports the
mean TTFT over all N (utils/process_result.py: mean_ttft). So the first wave's R0 = min(C, R) requests (R the
requests the engine runs: its cap, or the most whose KV cache fits) find their prompts queued together at once:
    co-located       W(j) = prompts.prefill_wait(j)              the j-th prompt (first come, first served) waits for
                                                                the prefill of the j prompts up to it, priced as the
                                                                steady state prices j prompts waiting together
                                                                (serving's W(n): passes of their own, (t_1 - q)
                                                                max(1, j / k) + j q, or the decode steps their
                                                                chunks ride on where the engine mixes)
    disaggregated    W(j) = t_pass + (j - 1) / mu               the prefill instance's pass and KV transfer, after
                                                                the j - 1 before it at its rate mu (requests/s)
and the run's mean TTFT is the steady state's, with the first wave's R0 requests at the mean of W(j) over j = 1..R0
instead of the steady state's TTFT of a running request:
    TTFT_run = TTFT + (R0 / N) (mean_j W(j) - TTFT_running)
(1 / 10 of the requests at N = 10 C). Where the engine runs fewer than C (R < C), every request keeps the steady
state's wait for a slot, e2e (C / R - 1) (serving), the first wave's R0 too, though they start at once and the other
C - R wait about one e2e for the first wave to end: over the first C requests that charges (C - R)^2 / R e2e more
than such a start (0.1 % of an e2e on the run's mean at 564 requests on 512 slots, N = 10 C), not priced apart.
An estimate: the later waves are taken at the steady state, though a run whose outputs are drawn from a narrow
range finishes its first wave close together and sends the second in a bunch too;
the first wave's passes are priced at the steady state's decode step where the engine mixes (at t = 0
no request decodes yet: slightly high), and SGLang, which does not mix, runs a waiting prefill batch before any
decode (scheduler.get_next_batch_to_run). Where the steady state already queues at a disaggregated prefill instance
(TTFT_running = (R - B) / mu, serving's module docstring), the first wave finds that queue still building, and the
start-up lowers the run's mean.
"""

from __future__ import annotations

import numpy as np

from .prompts import PromptSide, prefill_wait
from .traffic import Workload


def first_wave_s(pf: PromptSide, n: float, pd: bool, tokens_s: float = 0.0, step: float = 0.0,
                 decodes: bool = False) -> float:
    """Mean TTFT of n prompts queued together at t = 0 (module docstring): the mean of W(j) over j = 1..n, n rounded
    to whole prompts (at least one). `pd`: at a disaggregated prefill instance. Co-located, W(j) is the steady
    state's own price of j prompts waiting together (prompts.prefill_wait with the point's `tokens_s`, decode `step`
    and whether requests decode), so one prompt alone is the steady state's TTFT of one request in flight (found by a
    property test: a lone prompt priced as a plain pass of its own came out 3 % under the steady state's, which
    rides a speculative step, and TTFT fell from one request to two in a run of two prompts)."""
    j = np.arange(1.0, max(1.0, round(n)) + 1.0)
    if pd:
        return float(pf.pass_s + (j - 1.0).mean() / pf.capacity_rps)
    return float(np.mean(prefill_wait(pf, j, tokens_s, np.full(j.size, step), decodes)))


def start_up_s(pf: PromptSide, w: Workload, C: np.ndarray, R: np.ndarray, ttft: np.ndarray,
               step: np.ndarray | None = None, tokens_s: float = 0.0, decodes: bool = False) -> np.ndarray:
    """What the run's start-up burst adds to the mean TTFT (and E2E) over a run of N = w.run_prompts(C) prompts
    (num_prompts, or prompts_per_slot x C), per point of C requests in flight and R running whose steady-state TTFT
    is `ttft` (before any wait for a slot), priced as the steady state prices prompts waiting together
    (`first_wave_s`: its decode `step` per point, `tokens_s`, `decodes`): (R0 / N) (mean_j W(j) - ttft), R0 = R
    (module docstring). 0 where the workload gives neither (the steady state alone)."""
    R = np.atleast_1d(np.asarray(R, dtype=np.float64))
    n = w.run_prompts(np.broadcast_to(np.asarray(C, dtype=np.float64), R.shape))
    if n is None:
        return np.zeros(R.shape)
    st = np.zeros(R.shape) if step is None else np.broadcast_to(np.asarray(step, dtype=np.float64), R.shape)
    first = np.array([first_wave_s(pf, r, w.pd, tokens_s, s, decodes) for r, s in zip(R, st)])
    return R / n * (first - ttft)


__all__ = ["first_wave_s", "start_up_s"]
