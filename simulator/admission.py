"""How many requests an engine runs at once, and whether they fit: the running cap it sets and the KV cache its GPUs
hold. A request beyond either waits in the engine's queue and holds no KV cache until it is admitted:
- SGLang admits a waiting request into a prefill batch only while the free KV tokens cover it
  (python/sglang/srt/managers/schedule_policy.py, PrefillAdder: AddReqResult.NO_TOKEN stops adding) and allocates its
  KV slots then (schedule_batch.py, ScheduleBatch.prepare_for_extend);
- vLLM's V1 scheduler leaves a request waiting when KVCacheManager.allocate_slots cannot give it blocks
  (vllm/v1/core/sched/scheduler.py);
- TensorRT-LLM's capacity scheduler admits a request only when its KV blocks fit (GUARANTEED_NO_EVICT, the default
  CapacitySchedulerPolicy).
So a closed loop of more requests than fit runs the most that fit, and the rest queue (their wait is in TTFT); no
concurrency is refused unless not one request fits. The engines differ in what they reserve per request (vLLM its
current tokens, preempting when the cache runs out; SGLang its prompt plus a decaying share of its remaining output;
TensorRT-LLM prompt plus maximum output): here every running request holds its KV cache at the workload's mean
context, the steady-state average over a closed loop's requests (an estimate between those policies)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .acceptance import Verify
from .drafters import TREE_METHODS
from .pricing import MemoryUse, candidates, memory
from .scenario import Deployment, Scenario
from .traffic import Workload

# The most requests the search for the KV limit tries (2^30, a power of two: beyond any engine's request pool).
MAX_REQUESTS = 2 ** 30


def speculates(dep: Deployment) -> bool:
    """A drafter is loaded and run: a method is given and k is not 0 (k = 0 is plain decoding, as in predict)."""
    return dep.drafter is not None and dep.scenario.k != 0


def shape_scenario(s: Scenario, v: Verify) -> Scenario:
    """The scenario that runs verify shape v alone (fixed_shape's rule, for a Scenario)."""
    if s.method not in TREE_METHODS:
        return s.replace(k=v.k, tree_tokens=None, tree_branching=None)
    return s.replace(k=v.k, tree_tokens=v.T, tree_branching=v.w)


def fixed_shape(dep: Deployment, v: Verify) -> Deployment:
    """The deployment that runs verify shape v alone: its depth with its tree size and branching given (a chain as a
    tree of k + 1 tokens, branching 1), so neither k = "auto" nor Medusa's default tree reselects it (found by
    review: rebuilt with no tree size, a Medusa chain became Medusa's default 64-token tree). A method that only
    verifies chains (n-gram, suffix, DFlash, self-sparse) takes its depth alone: a tree size is refused there (found by
    review: serve, frontier and serving sweeps failed at k = "auto" for those methods)."""
    return replace(dep, scenario=shape_scenario(dep.scenario, v))


def running_cap(dep: Deployment, spec: bool) -> float:
    """The most requests one mode runs at once by the engine's setting; the rest wait for a slot. SGLang's
    --max-running-requests and vLLM's --max-num-seqs bind every decode, so a cap the deployment sets
    (Scenario.max_running_requests) holds both modes; the profile's own (SGLang's 48 under speculation,
    server_args._handle_speculative_decoding) only speculating. A dense model's dp runs replicas, each a server with
    its own cap (engine_configs writes the flag per replica), so the deployment runs dp times it; so does an MoE's
    attention DP where each rank schedules its own (vLLM's engine cores, --max-num-seqs per rank), but not where the
    engine divides the cap among its DP schedulers (SGLang: EngineProfile.cap_per_instance_under_dp_attention).
    Found by review: a dense --dp 2 under SGLang ran 48 speculating requests in all, where each replica runs 48."""
    user = dep.scenario.max_running_requests
    cap = dep.eng.spec_max_running if spec else (float(user) if user is not None else np.inf)
    whole = dep.target.is_moe and dep.eng.cap_per_instance_under_dp_attention
    return cap * (1 if whole else dep.par.dp)


def admission_width(dep: Deployment, spec: bool) -> float:
    """Tokens a running request holds KV slots and activations for per step beyond its context: 1 decoding, the
    narrowest verify shape the scenario tries when speculating (its k + 1 or tree; with k = "auto", depth 1). A
    speculating engine needs KV slots for every running request's drafts each step: vLLM allocates k lookahead slots
    per request (KVCacheManager.allocate_slots, num_lookahead_tokens); SGLang's EAGLE worker allocates steps x topk
    slots per request for the draft (EAGLEWorker._draft_preprocess_decode) and num_draft_tokens for the verify
    (EagleVerifyInput.prepare_for_verify), and the verify pass's activations are T tokens per request. So a
    speculating instance fits fewer requests than a decoding one; where only the narrowest shape fits, the step takes
    it (pricing.best_spec_step keeps the best shape that fits). Found by review: admitting by one token per request
    let `serve` report a point whose every verify shape overflowed memory, with TPOT falling as load rose."""
    return float(min(v.T for v in candidates(dep))) if spec else 1.0


def memory_held(dep: Deployment, w: Workload, C: np.ndarray, drafter: bool) -> MemoryUse:
    """Memory per GPU in steady state: the KV cache of C held requests at their mean context (Workload.mean_context; a
    closed loop holds requests at every stage of their decode) plus the tokens each verifies (`admission_width`), with
    the larger of a decode or verify pass's and one prefill chunk's activations (the longest prompt's chunk), and the
    drafter's weights and cache when it is loaded."""
    mem = memory(dep, C, admission_width(dep, drafter), w.mean_context, drafter=drafter)
    chunk = memory(dep, np.array([float(dep.par.dp)]), float(min(w.chunk, w.prompts.max())), 0.0, logits="last")
    return replace(mem, activation_bytes=np.maximum(mem.activation_bytes, chunk.activation_bytes))


def feasibility(dep: Deployment, w: Workload, held: np.ndarray, drafter: bool) -> tuple[np.ndarray, list[str]]:
    """Whether the requests each point holds fit in memory, with or without the drafter loaded, and why not."""
    mem = memory_held(dep, w, held, drafter)
    return mem.fits.copy(), [mem.message(i, dep.hw.name, dep.eng) for i in range(held.size)]


def fit_limit(dep: Deployment, w: Workload, drafter: bool) -> float:
    """The most requests one mode holds the KV cache of, exactly: inf where its running cap fits (the requests
    beyond it wait and hold none), else the largest whole number that fits (0 when one does not), up to
    MAX_REQUESTS - 1. The memory grows with the count, so `fits` is monotone: one memory call prices 1, the cap and
    the powers of two, which bracket the answer, and each further call narrows the bracket 1024-fold on 1023 whole
    numbers at once (one to four calls in all, not one per number: calibration prices the serving rows tens of
    thousands of times)."""
    cap = running_cap(dep, drafter)

    def fits(n: np.ndarray) -> np.ndarray:
        return memory_held(dep, w, np.asarray(n, dtype=np.float64), drafter).fits
    pw = 2 ** np.arange(1, int(np.log2(MAX_REQUESTS)), dtype=np.int64)       # 2 .. MAX_REQUESTS / 2
    head = [1.0, cap] if np.isfinite(cap) else [1.0]
    ok = fits(np.concatenate((head, pw)))
    if not ok[0]:
        return 0.0
    if np.isfinite(cap) and ok[1]:
        return np.inf
    ok = ok[len(head):]
    j = int(np.argmin(ok)) if not ok.all() else ok.size               # the first power of two that does not fit
    lo, hi = (int(pw[j - 1]) if j else 1), (int(pw[j]) if j < ok.size else MAX_REQUESTS)
    while hi - lo > 1:                                                # fits(lo), not fits(hi)
        n = np.unique(np.linspace(lo, hi, 1025)[1:-1].astype(np.int64))
        n = n[(n > lo) & (n < hi)]
        f = fits(n)
        lo, hi = (int(n[f].max()) if f.any() else lo), (int(n[~f].min()) if (~f).any() else hi)
    return float(lo)


def running_limit(dep: Deployment, w: Workload, spec: bool) -> float:
    """The most requests one mode runs at once: its running cap, or fewer where the KV cache of that many does not
    fit (module docstring); at least 1, so that a point where not one fits is priced and then refused by
    `feasibility` with its memory message."""
    return max(min(running_cap(dep, spec), fit_limit(dep, w, spec)), 1.0)


def held(R: np.ndarray, prefill_queue: np.ndarray, decode_batch: np.ndarray) -> np.ndarray:
    """Requests whose KV cache one mode's decode GPUs hold: the R running ones, fewer where a disaggregated prefill
    instance sets the rate and the requests queued for prefill hold none there (the decode batch, rounded up)."""
    return np.where(prefill_queue > 0.0, np.minimum(R, np.ceil(decode_batch)), R)


__all__ = ["MAX_REQUESTS", "admission_width", "feasibility", "fit_limit", "fixed_shape", "held", "memory_held",
           "running_cap", "running_limit", "shape_scenario", "speculates"]
