"""Serving a workload: TTFT, TPOT, ITL, end-to-end latency and throughput at a concurrency, with and without
speculation, under continuous batching in steady state.

A closed loop of C requests in flight, each with `isl` prompt tokens (a share `prefix_hit` served from the prefix
cache) and `osl` output tokens. In steady state (Little's law on the request slots):
    decode batch   B = C (E2E - TTFT) / E2E          requests decoding, the rest are in prefill (a time average)
    step batch     b = 1 + (R - 1) B / R              the sequences in a decoding request's steps: itself and each
                                                      other slot with its share of a lifetime decoding (size-biased;
                                                      loop.step_batch: 1 for one request, R when all decode)
    decode step    T = T_step(b, L) + P m             L = isl + osl/2, the mean context of a decoding request
    prefill load   P = f isl'                         prompt tokens per step of a request: f = (b - 1) tau /
                                                      (osl - 1), the other slots' prompts (the b - 1 others in its
                                                      steps finish tau / (osl - 1) requests each per step, each
                                                      decoding its osl - 1 tokens after the first, and are
                                                      replaced; a request's own prompt is prefilled before it
                                                      decodes), each isl' = isl (1 - prefix_hit); with the n - 1
                                                      of TTFT, (R - 1)(1 - B / R) + (R - 1) B / R = R - 1 others'
                                                      prompts in a lifetime
    m              marginal cost of one prompt token in a mixed (chunked-prefill) step: the priced extra time of a
                   chunk of min(chunk, isl') prompt tokens over the step without it, per token
    P m  ->  max(P m, (1 - (1 - u)^R) t_c)    an MoE's R attention-DP ranks step together and each mixes its own
                   prompts in: a step lasts as long as the rank carrying a chunk (t_c, a chunk on its one rank), which
                   each rank does in a share u = min(1, f n_c / R) of the steps (prompts.straggler_load); not where
                   the engine schedules the ranks' prompts into the same steps (EngineProfile.dp_prompt_balance)
    TPOT = ITL = T / tau     (tau tokens per step; 1 without speculation)
    TTFT = W(n) = c max(n_c, n isl' / (dp chunk)) + n q    every slot's prompt is prefilled once in a request's
                       lifetime (X E2E = R): those arriving while it decodes load its steps (P), the other n - 1 =
                       (R - 1)(1 - B / R) wait for their first token beside it, and the n prompts are prefilled in
                       passes as full as they fill them (SGLang's PrefillAdder and vLLM's scheduler fill a pass's
                       token budget, chunking the prompt that does not fit), at least the n_c = ceil(isl' / chunk)
                       of one prompt; c a pass's fixed part, here the decode step T_step(b, L) its chunk rides on;
                       q a prompt's tokens x their marginal cost there (isl' m; a full chunk's per token past a
                       chunk). One request in flight: n_c (T_step(b, L) + isl' / n_c m)
An engine that runs a prefill batch or a decode batch per step, never both (EngineProfile.mixed_prefill false:
SGLang without --enable-mixed-chunk, and always while it speculates), prefills the prompts that arrived during a
step in passes of their own, which read the weights again and pause every decode. Taking the arrivals in a step as
Poisson with mean f, a pass as taking k = dp floor(chunk / isl') prompts (at least one per attention-DP rank), and
t_1 one prompt's own prefill (ceil(isl' / chunk) equal chunk passes, on the busiest DP rank), t_K a full pass of
K = dp chunk / isl' prompts (k unrounded) and q = (t_K - t_1) / (K - 1) what one more prompt adds to a pass (exact at
one prompt and at K; isl' m where a pass takes one prompt, whose passes each cost t_1 whatever q is):
    P m            ->  E[ceil(N / k)] (t_1 - q) + f q   each pass pays its fixed part, each prompt what it adds
                                                        (prompts.prompt_load; a dense model's dp replicas step
                                                        apart: N, k, q each replica's, B / R in b over dp)
    TTFT           =   b T / 2 + W(n)                 the rest of a step in flight (an estimate: an arrival at a
                       uniform time waits half a step), then the passes of W with c = (t_1 - q) / n_c and isl' m
                       read as q (t_1 at one request); b = 1 - (1 - B / R)^(R - 1), the chance that another of the R
                       running slots is decoding (an estimate: slots independent; 0 at one request in flight)
    E2E  = TTFT + (osl - 1) ITL     (the steady state's; Workload.num_prompts adds a run's start-up burst: burst.py)
    output tokens/s per GPU = C osl / E2E / GPUs,  per user = 1 / TPOT
So each lifetime carries all R prompts, and a short output cannot outrun its prompts' prefill. With osl = 1 no
request decodes (B = 0): every running prompt waits for passes of their own, E2E = TTFT = W(R) with c = (t_1 - q) /
n_c and isl' m read as q whether or not the engine mixes. B is solved by bisection on Little's law on the decode
stage. An engine that runs at most m requests at once while speculating (SGLang resets max_running_requests to 48)
serves R = min(C, m) and queues the rest: E2E = (C / R) x the running E2E (Little's law), the wait is added to TTFT,
and throughput is that of R requests; so does one whose KV cache holds fewer than min(C, m) (R the most that fit:
engines admit a request only when its KV cache fits, simulator/admission.py). With prefill/decode disaggregation
the decode instance carries no prefill (P = 0), TTFT is the prefill instance's pass over the prompt plus the KV
transfer between instances, and the GPUs of both instances count. The prefill instance prefills at most
    mu = (prefill GPUs / prefill instance GPUs) / t_p     requests/s
t_p the mean over requests of a prompt's tokens x their marginal cost (on the prefill instance's layout,
Workload.prefill_layout, at the chunk, per request length), and a closed loop cannot complete requests faster than they
are prefilled (a tandem queue's slower stage sets its rate): where R / E2E would exceed mu, the rate is mu, the decode
batch is what it feeds, B = mu (osl - 1) TPOT(B) (Little's law on the decode stage), the other R - B requests queue for
prefill, TTFT = (R - B) / mu and E2E = R / mu, and the decode GPUs hold the KV cache of B requests, not R. There
speculation shortens TPOT but not E2E, and does not raise throughput; an arrival rate above mu is beyond capacity.
Speculation off is k = 0: the plain decode step of `pricing.base_step`.

Length distributions (`Workload.lengths`, samples i of (isl_i, osl_i), or the draw of `Workload.length_ratio`): every
formula takes the means over requests; L = sum osl_i (isl_i + osl_i / 2) / sum osl_i (the context averaged over output
tokens: long outputs hold more steps), P = (b - 1) tau mean(isl_i') / mean(osl_i), TTFT = mean over requests of
n_i (T_step + isl_i' / n_i m) with n_i = ceil(isl_i' / chunk) equal chunks, E2E = TTFT + (mean osl - 1) ITL; memory at
L, the positions checked on the longest request; a sample of `lengths` that needs more positions than the model has
is left out (`Workload.fitting`: an engine rejects that request) and counted in `ServeResult.rejected`.
Arrival rates (`Workload.rate`, lambda requests/s): the closed-loop throughput X(C) = C / E2E(C) rises with C until
the running cap or memory stops it; the requests in flight are the smallest C with X(C) = lambda (Little's law),
a rate above the largest X is beyond capacity (infeasible, with both modes' capacity). A fluid model: the waits of
bursty arrivals near saturation are not included. With the benchmark client's cap M on requests in flight
(`Workload.max_concurrency`: --request-rate with --max-concurrency), a rate that needs more than M in flight, or that
is not sustained at all, is served as the closed loop of M: the client holds the rest, outside every latency, and
what M complete is delivered (at most the rate).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from .acceptance import extrapolation_note
from .admission import admission_width, feasibility, fit_limit, fixed_shape, held, running_cap, speculates
from .burst import start_up_s
from .checkpoint import checkpoint_note
from .errors import ScenarioError
from .hazards import deployment_options
from .loop import FED_FLOOR, Loop, batch_grid, curve, curve_with, fed_batch, step_batch
from .pricing import candidates, check_context, context_message, overlap_note, sampling_note
from .prompts import PromptSide, prompt_load, prompt_side
from .roofline import BOUNDS
from .scenario import Deployment, Scenario, as_scenario
from .serve_notes import cap_note, kv_notes, workload_notes
from .tables import frame, serve_row
from .traffic import DEFAULT_CHUNK, Workload, read_lengths


@dataclass(frozen=True)
class Phase:
    """One mode (speculation on or off) at each concurrency: every time in s, throughput in output tokens/s.

    in_flight : requests in flight (the concurrency, or solved from the arrival rate); running : requests the engine
    runs, min(in flight, its running cap, the most whose KV cache fits: `_phase`), the rest queue; decode_batch :
    requests in the decode stage (a time average; a request's steps carry loop.step_batch of it); k, tokens_per_step
    : draft depth and tokens per step (0, 1 off); verify_tokens : tokens verified per sequence per step (k + 1 for a
    chain, the tree's size for a tree; 1 off); step_s : time between token bursts (the ITL of vLLM's
    benchmark_serving, one gap per streamed chunk); ttft_s, tpot_s, e2e_s; itl_s = tpot_s, the ITL of SGLang's
    bench_serving (a chunk's gap split over its tokens); tpot_first_s, tpot_last_s : TPOT at the first and the last
    output token (context isl vs isl + osl); tokens_per_s_per_gpu, tokens_per_s_per_user; prefill_share : share of a
    step spent on other requests' prompts; decode_bound : what bounds the decode pass; prefill_queue : requests
    waiting for a disaggregated prefill instance where it sets the rate (R - B; else 0)."""

    in_flight: np.ndarray
    running: np.ndarray
    decode_batch: np.ndarray
    k: np.ndarray
    verify_tokens: np.ndarray
    tokens_per_step: np.ndarray
    step_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    itl_s: np.ndarray
    e2e_s: np.ndarray
    tpot_first_s: np.ndarray
    tpot_last_s: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    tokens_per_s_per_user: np.ndarray
    prefill_share: np.ndarray
    decode_bound: tuple[str, ...]
    prefill_queue: np.ndarray


@dataclass(frozen=True)
class ServeResult:
    """Result of `serve`: the workload priced with speculation (`spec`) and without (`base`), per concurrency.

    scenario : dict; workload : Workload; concurrency : (P,) requests in flight; gpus : GPUs counted per
    throughput (decode instance, plus the prefill instance under disaggregation); e2e_speedup = base E2E / spec E2E;
    tpot_speedup = base TPOT / spec TPOT; throughput_ratio = spec / base output tokens/s per GPU;
    prefill_bound : what bounds a prefill chunk; feasible, message : with speculation, the KV cache of the requests
    the decode GPUs hold fits beside the drafter (all C, or the fed decode batch where a prefill instance sets the
    rate) at the mean context, and the rate is sustained; base_feasible, base_message : the same without speculation
    (no drafter loaded), which can fit where speculation does not. The arrays hold numbers at every point, valid only
    where their mode fits (the ratios where both; to_dict and to_dataframe give null elsewhere); prefill_rps : the
    requests/s a disaggregated prefill instance prefills (the most a closed loop completes); inf when prefill shares
    the decode steps (null in to_dict when infinite); rejected : samples of the length distribution left out because
    they need more positions than the model has (`Workload.fitting`; `workload` holds the rest)."""

    scenario: dict[str, Any]
    workload: Workload
    concurrency: np.ndarray
    gpus: float
    spec: Phase
    base: Phase
    prefill_bound: str
    feasible: np.ndarray
    message: tuple[str, ...]
    base_feasible: np.ndarray
    base_message: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    rate: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prefill_rps: float = np.inf
    rejected: int = 0

    @property
    def e2e_speedup(self) -> np.ndarray:
        return self.base.e2e_s / self.spec.e2e_s

    @property
    def tpot_speedup(self) -> np.ndarray:
        return self.base.tpot_s / self.spec.tpot_s

    @property
    def throughput_ratio(self) -> np.ndarray:
        return self.spec.tokens_per_s_per_gpu / self.base.tokens_per_s_per_gpu

    def to_dataframe(self):  # pandas, one row per point: spec_* and base_* columns (null where that mode does not fit)
        return frame([serve_row(p, tuple(Phase.__dataclass_fields__)) for p in self.to_dict()["points"]])

    @property
    def decodes(self) -> bool:
        """Whether any request has an output token after its first: without one there is no decode, and no time
        per output token to report."""
        return bool((self.workload.samples[1] > 1).any())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a mode that does not fit carries null numbers and its reason, and the ratios need both;
        without a decode (every output one token long) the per-output-token times are null too."""
        none = set() if self.decodes else {*PER_TOKEN_FIELDS, "tpot_speedup"}
        pts = []
        for i, c in enumerate(self.concurrency):
            ok, ok_b = bool(self.feasible[i]), bool(self.base_feasible[i])
            pt: dict[str, Any] = {"concurrency": int(c), "feasible": ok, "message": self.message[i],
                                  "base_feasible": ok_b, "base_message": self.base_message[i]}
            if self.rate.size:
                pt["rate"] = float(self.rate[i])
            for name, ph, fits in (("spec", self.spec, ok), ("base", self.base, ok_b)):
                pt[name] = {f: None if f in none else (_num(getattr(ph, f)[i]) if f != "decode_bound"
                                                       else ph.decode_bound[i])
                            for f in Phase.__dataclass_fields__} if fits else None
            for f in ("e2e_speedup", "tpot_speedup", "throughput_ratio"):
                pt[f] = _num(getattr(self, f)[i]) if ok and ok_b and f not in none else None
            pts.append(pt)
        w, (isl, osl) = self.workload, self.workload.mean_lengths
        wd = {"isl": isl, "osl": osl, "rate": list(w.rate), "samples": int(w.samples[0].size),
              "rejected": self.rejected, **{f: getattr(w, f) for f in ("chunk", "prefix_hit", "pd", "prefill_gpus",
                                            "prefill_layout", "length_ratio", "mean_context", "max_concurrency",
                                            "num_prompts", "prompts_per_slot")}}
        return {"scenario": self.scenario, "workload": wd, "gpus": self.gpus, "prefill_bound": self.prefill_bound,
                "prefill_rps": float(self.prefill_rps) if np.isfinite(self.prefill_rps) else None, "points": pts,
                "notes": list(self.notes)}


# Relative difference below which two E2E times of one point are a tie (rounding): where a prefill instance sets the
# rate, all C requests and the KV limit's share of them finish in the same C / rate.
TIE = 1e-9

PER_TOKEN_FIELDS = ("tpot_s", "itl_s", "tpot_first_s", "tpot_last_s", "tokens_per_s_per_user", "step_s")
"""Phase fields per output token after the first: none without a decode (every output one token long)."""


def _num(x: Any) -> float | int:
    return int(x) if isinstance(x, (np.integer,)) else float(x)


def _phase(dep: Deployment, w: Workload, pf: PromptSide, C: np.ndarray, spec: bool, gpus: float,
           lim: float | None = None) -> Phase:
    """Solve the steady state for one mode (`_solve`) with min(C, its running cap) requests running, and where more
    run than the decode GPUs' KV cache holds (admission.fit_limit), again with that many, which binds unless a
    disaggregated prefill instance feeds a decode batch the KV cache holds and is the slower (then it sets the rate
    and the rest queue for prefill; else the KV cache does, and the rest wait for a slot). `lim`: the fit limit,
    where the caller has it."""
    C = C.astype(np.float64)
    R = np.minimum(C, running_cap(dep, spec))
    lim = fit_limit(dep, w, spec) if lim is None else lim
    more = (R > lim) & (lim >= 1.0)
    # both solves price the step on one grid, so two points running as many requests get one answer (the grid's
    # interpolation had given a load of 46 a TPOT 8e-6 below a load of 23, both running the 23 that fit: hypothesis)
    g = batch_grid(np.concatenate([R, np.minimum(R, lim)]) if more.any() else R,
                   FED_FLOOR if np.isfinite(pf.capacity_rps) else None, dep.hw.gemm_tile_m * dep.par.dp * dep.par.pp)
    ph = _solve(dep, w, pf, C, R, spec, gpus, g)
    if not more.any():
        return ph
    kv = _solve(dep, w, pf, C, np.minimum(R, lim), spec, gpus, g)
    # a prefill instance that sets the rate gives both the same E2E (C / its rate): a tie, not the KV cache binding
    over = more & ((held(R, ph.prefill_queue, ph.decode_batch) > lim) | (kv.e2e_s > ph.e2e_s * (1.0 + TIE)))
    return Phase(*(_pick(over, getattr(kv, f.name), getattr(ph, f.name)) for f in fields(Phase)))


def _spec_phase(dep: Deployment, w: Workload, pf: PromptSide, C: np.ndarray, gpus: float
                ) -> tuple[Phase, np.ndarray, list[str]]:
    """The speculating mode at each concurrency, with whether its held requests fit and why not. With k = "auto" the
    step takes the best verify shape at each decode batch, and the requests admitted are those the narrowest shape
    fits (admission_width); at the points where some shape's own KV limit binds (the widest's is the lowest), each
    wider shape is also solved as a fixed deployment with its own limit, and such a point takes whichever finishes its
    requests first (found by review: on one H200 under vLLM at 512 requests auto admitted 391 and ran k = 1 at the
    top, 54.6 ms TPOT, where a fixed k = 3 admits 389 at 52.4 ms). Where every shape fits all the running requests the
    per-batch choice stands (a second review: comparing there swapped shapes on grid noise). The arrival-rate path
    (`_serve_rate`) still admits by the narrowest shape."""
    ph = _phase(dep, w, pf, C, True, gpus)
    ok, msgs = feasibility(dep, w, held(ph.running, ph.prefill_queue, ph.decode_batch), True)
    narrow = admission_width(dep, True)
    wide = [fixed_shape(dep, v) for v in candidates(dep) if v.T > narrow] if dep.scenario.auto else []
    lims = [fit_limit(d, w, True) for d in wide]           # each priced once, here and by its _phase below
    bind = np.minimum(C, running_cap(dep, True)) > min(lims, default=np.inf)
    if not bind.any():
        return ph, ok, msgs
    msgs = list(msgs)
    for d, lim in zip(wide, lims):
        alt = _phase(d, w, pf, C, True, gpus, lim)
        fits, why = feasibility(d, w, held(alt.running, alt.prefill_queue, alt.decode_batch), True)
        take = bind & fits & (~ok | (alt.e2e_s < ph.e2e_s * (1.0 - TIE)))
        ph = Phase(*(_pick(take, getattr(alt, f.name), getattr(ph, f.name)) for f in fields(Phase)))
        ok, msgs = ok | take, [b if t else a for t, a, b in zip(take, msgs, why)]
    return ph, ok, msgs


def _closed_loop(dep: Deployment, w: Workload, pf: PromptSide, C: np.ndarray, spec: bool, gpus: float
                 ) -> tuple[Phase, np.ndarray, list[str]]:
    """One mode at each concurrency C, with whether its held requests fit and why not: the speculating mode through
    `_spec_phase` (k = auto's shapes), plain decoding through `_phase`. What `serve` prices at a concurrency, and a
    rate at the client's binding max concurrency (`_client_capped`)."""
    if spec:
        return _spec_phase(dep, w, pf, C, gpus)
    ph = _phase(dep, w, pf, C, False, gpus)
    return (ph, *feasibility(dep, w, held(ph.running, ph.prefill_queue, ph.decode_batch), False))


def _pick(mask: np.ndarray, a: Any, b: Any) -> Any:
    """Per point, a where mask else b: arrays elementwise, tuples (the bounds' names) item by item."""
    return tuple(x if m else y for m, x, y in zip(mask, a, b)) if isinstance(a, tuple) else np.where(mask, a, b)


def _solve(dep: Deployment, w: Workload, pf: PromptSide, C: np.ndarray, R: np.ndarray, spec: bool, gpus: float,
           g: np.ndarray) -> Phase:
    """Solve the steady state for one mode (see the module docstring) with R requests running (the rest of the C wait
    for a slot) for its decode batch B (`loop.Loop.batch`), with the step priced once on the batch grid g."""
    i, o = w.samples
    mid = curve(dep, g, w.mean_context, spec, most=max(float(o.mean()) - 1.0, 1.0))
    # the first and last tokens' contexts weighed, as mean_context is, by the output tokens a request decodes (review:
    # with a trace the unweighted means put the range beside the TPOT priced)
    first, last = (curve_with(dep, mid, float((o * L).sum() / o.sum())) for L in (i, i + o))
    osl = float(o.mean())
    # a mean prompt's tokens x their marginal cost in a mixed step, or what it adds to a prefill pass of its own where
    # prompts are prefilled apart (the engine does not mix, or no request decodes)
    own = bool(pf.alone_s) or osl <= 1.0
    tokens_s = 0.0 if w.pd else pf.pass_prompt_s if own else float(w.prompts.mean()) * pf.per_token_s
    loop = Loop(mid, pf, w, R, tokens_s, osl)
    B = loop.batch()
    step, tau, k, bound, load, T, ttft = loop.at(B)
    tpot = T / tau
    e2e = ttft + (osl - 1) * tpot
    queue = np.zeros(R.size)
    fed = R / e2e > pf.capacity_rps                          # the prefill instance cannot keep up: it sets the rate
    if fed.any():                                            # (disaggregated: no prompt load in the decode steps)
        B = np.where(fed, fed_batch(mid, R, osl, pf.capacity_rps), B)
        fs, ftau, fk, fb = mid.at(step_batch(B, R))
        step, tau, k, bound = (np.where(fed, a, b) for a, b in ((fs, step), (ftau, tau), (fk, k), (fb, bound)))
        T, tpot = np.where(fed, fs, T), np.where(fed, fs / ftau, tpot)
        e2e = np.where(fed, R / pf.capacity_rps, e2e)
        ttft = np.where(fed, e2e - (osl - 1) * tpot, ttft)
        queue = np.where(fed, R - B, 0.0)
    # TPOT with every running request at the first or the last context: the step of the load's verify shape there,
    # and the prompt load its completions bring.
    n = step_batch(B, R)
    ends = [(c[0] + prompt_load(pf, loop.arrivals(n, c[1]), tokens_s)[0]) / c[1] for c in (first.at(n), last.at(n))]
    wait = e2e * (C / R - 1.0) + start_up_s(pf, w, C, R, ttft, step, tokens_s, osl > 1.0)   # + a run's start-up
    return Phase(C.astype(np.float64), R, B, k, mid.verify_tokens(n), tau, T, ttft + wait, tpot, tpot, e2e + wait,
                 *ends, R * osl / e2e / gpus, 1.0 / tpot, load / T, tuple(BOUNDS[int(i)] for i in bound), queue)


def _inputs(scenario: Scenario | None, workload: Workload | None, dep: Deployment | None, kw: dict[str, Any]
            ) -> tuple[Scenario, Workload, Deployment]:
    s = as_scenario(scenario, "serve").replace(**kw)
    if workload is not None and not isinstance(workload, Workload):
        raise ScenarioError(f"serve: workload = {workload!r}; expected a Workload")
    return s, workload or Workload(), dep if dep is not None else s.resolve()


def _at_rate(dep: Deployment, w: Workload, pf: PromptSide, spec: bool, gpus: float, c_fit: float
             ) -> tuple[Phase, np.ndarray, float, bool, np.ndarray]:
    """One mode at each arrival rate: the requests in flight from Little's law, rate = C / E2E(C), on the closed-loop
    throughput X(C) = C / E2E(C) (it rises with C until the engine's running cap or memory stops it): the smallest C
    with X(C) = rate, interpolated in log C; at a rate below X(1) one slot suffices (the latencies of C = 1).
    Reports in flight = rate x E2E and throughput = rate x mean osl / GPUs (what is delivered). Returns (phase,
    whether the rate is sustained, the capacity in requests/s, whether a prefill instance sets it, where the client's
    max concurrency binds). The capacity is the steady state's X at the most requests that run (the cap, or the most
    that fit: `admission.fit_limit`, exact), or the prefill instance's rate. A fluid model: the waits of bursty
    (Poisson) arrivals at a utilisation near 1 are not included. Where the client's max concurrency binds, the point
    is its closed loop (`_client_capped`)."""
    lam = np.asarray(w.rate, dtype=np.float64)
    top_c = max(min(c_fit, running_cap(dep, spec)), 1.0)     # X(C) is flat above the running cap
    g = np.geomspace(1.0, top_c, max(2, int(24 * np.log10(top_c)) + 1))
    free = replace(pf, capacity_rps=np.inf)    # a rate below the prefill instance's is served as if it had no bound
    X = np.maximum.accumulate(g / _phase(dep, w, free, g, spec, gpus, c_fit).e2e_s)  # (a rate above: not sustained)
    C = np.exp(np.interp(lam, X, np.log(g)))   # interpolated where X is smooth
    ph = _phase(dep, w, free, C, spec, gpus, c_fit)
    inf = lam * ph.e2e_s     # time-average requests in flight; at a rate below X(1) under one: so are the running
    ph = replace(ph, in_flight=inf, running=np.minimum(ph.running, inf), decode_batch=np.minimum(ph.decode_batch, inf),
                 tokens_per_s_per_gpu=lam * w.mean_osl / gpus)
    top = min(float(X[-1]), pf.capacity_rps)
    ok = (lam <= top) & (c_fit >= 1.0)
    ph, ok, hit = _client_capped(dep, w, pf, spec, gpus, ph, ok, C)
    return ph, ok, top if c_fit >= 1.0 else 0.0, pf.capacity_rps < float(X[-1]), hit


def _client_capped(dep: Deployment, w: Workload, pf: PromptSide, spec: bool, gpus: float, ph: Phase, ok: np.ndarray,
                   C: np.ndarray) -> tuple[Phase, np.ndarray, np.ndarray]:
    """Where the benchmark client's max concurrency M binds, a rate that needs more than M requests in flight (the
    Little's-law root above M) or that the server does not sustain at all: the client holds the arrivals beyond M,
    outside every latency (vLLM bench serve and SGLang bench_serving time a request from its send, after their
    concurrency semaphore), so the server runs the closed loop of M requests, priced as `serve` prices a concurrency
    (running cap, memory, a prefill instance, k = auto's shapes), and delivers what M complete. Elsewhere the point is
    the uncapped one, on the same grid (review: a cap that never bound had moved the root by up to 6 %). Returns (the
    phase, whether each point is served, where M binds)."""
    if w.max_concurrency is None:
        return ph, ok, np.zeros(ok.size, dtype=bool)
    at, fits, _ = _closed_loop(dep, w, pf, np.full(ok.size, float(w.max_concurrency)), spec, gpus)
    # A rate above what M in flight complete binds too: the throughput curve is interpolated between its grid points,
    # and where the step changes shape (k = auto's depth, a GEMM tile) its root could sit under M at a rate the closed
    # loop of M does not deliver (found by hypothesis: 39.6 requests/s sustained under a cap of 69 whose loop
    # completes 39.5)
    lam = np.asarray(w.rate, dtype=np.float64)
    hit = (C > w.max_concurrency * (1.0 + TIE)) | ~ok | (fits & (lam > w.max_concurrency / at.e2e_s * (1.0 + TIE)))
    if not hit.any():                 # a cap that binds nowhere: the points are the uncapped ones
        return ph, ok, hit
    # With k = auto the closed loop may admit wider shapes than the rate path (`_spec_phase`) and complete more than
    # arrive at a rate just past the rate path's capacity: it delivers the rate there, its latencies those of M in
    # flight (an upper bound, review).
    at = replace(at, tokens_per_s_per_gpu=np.minimum(at.tokens_per_s_per_gpu, np.asarray(w.rate) * w.mean_osl / gpus))
    pick = hit & fits
    return Phase(*(_pick(pick, getattr(at, f.name), getattr(ph, f.name)) for f in fields(Phase))), ok | pick, pick


def _limit(dep: Deployment, spec: bool, c_fit: float, by_prefill: bool) -> str:
    """What sets one mode's capacity at an arrival rate, named: memory (not one request fits, or the most that fit,
    when they are fewer than the running cap), the prefill instance, or the running cap (requests beyond it wait,
    and hold no KV cache)."""
    cap = running_cap(dep, spec)
    if c_fit < 1.0:
        return "not one request fits in memory"
    if by_prefill:
        return "the prefill instance prefills no more"
    if cap <= c_fit:
        if dep.scenario.max_running_requests is not None:
            return f"--max-running-requests runs at most {cap:g} requests at once"
        return f"{dep.eng.name} runs at most {cap:g} requests at once while speculating, --max-running-requests sets it"
    return f"{c_fit:.0f} requests in flight fit in memory"


def _serve_rate(dep: Deployment, w: Workload, pf: PromptSide, spec_on: bool, gpus: float
                ) -> tuple[Phase, Phase, np.ndarray, tuple[np.ndarray, list[str]], tuple[np.ndarray, list[str]],
                           tuple[np.ndarray, ...]]:
    """Both modes at each arrival rate: (spec, base, slots the sustained modes need, (feasible, messages) with
    speculation, the same without, where the client's max concurrency binds per mode). Each mode's capacity counts
    the requests that fit with its own memory."""
    out = []
    for spec in (True, False) if spec_on else (False,):
        c_fit = fit_limit(dep, w, spec)
        ph, ok, cap, by_prefill, hit = _at_rate(dep, w, pf, spec, gpus, c_fit)
        how, limit = "with" if spec else "without", _limit(dep, spec, c_fit, by_prefill)
        out.append((ph, ok, ["" if o else f"rate {r:g} requests/s exceeds the capacity {how} speculation: {cap:.4g} "
                             f"requests/s ({limit}; beyond it the queue grows without bound)"
                             for r, o in zip(w.rate, ok)], hit))
    (spec, ok_s, msg_s, hit_s), (base, ok_b, msg_b, hit_b) = out[0], out[-1]
    slots = np.ceil(np.maximum(np.where(ok_s, spec.in_flight, 0.0), np.where(ok_b, base.in_flight, 0.0)))
    return spec, base, slots.astype(int), (ok_s, msg_s), (ok_b, msg_b), (hit_s,) * spec_on + (hit_b,)


def _scenario_dict(dep: Deployment) -> dict[str, Any]:
    """The resolved inputs a ServeResult reports (the files a device or engine profile was read from, if any)."""
    s = dep.scenario
    return {"hardware": dep.hw.name, "model": dep.target.name, "method": s.method, "engine": dep.eng.name,
            "tp": s.tp, "dp": s.dp, "pp": s.pp, "ep": s.ep, "n_gpus": dep.n_gpus, "precision": dep.p.weights,
            "expert_precision": dep.p.expert_dtype, "attention_precision": dep.p.attention_dtype, "k": s.k,
            "checkpoint": checkpoint_note(dep.target, dep.p), "routing_locality": dep.target.priced_routing_locality,
            "acceptance": dep.acceptance.source if s.method else None,
            "hardware_file": dep.hw.path or None, "engine_file": dep.eng.path or None, "tree_branching": s.branching,
            "acceptance_model": dep.acceptance.model if s.method else None, "overlap": dep.overlap,
            "max_running_requests": dep.eng.running_cap, "dp_balance": dep.eng.dp_prompt_balance,
            **deployment_options(dep),
            "spec_overlap": dep.eng.overlaps(s.method), "memory_fraction": dep.eng.gpu_memory_fraction,
            "memory_fraction_plain": dep.eng.memory_share(False), "memory_share_of_free": dep.eng.share_of_free}


def serve(scenario: Scenario | None = None, workload: Workload | None = None, dep: Deployment | None = None,
          **kw: Any) -> ServeResult:
    """Predict a serving workload with and without speculation (see the module docstring). `scenario` and the
    Scenario fields in `kw` set the deployment (its batch is ignored: the concurrencies or the arrival rates set the
    load); `dep`: it already resolved. With `workload.rate`, each point is an arrival rate and each mode's requests
    in flight are solved (`_at_rate`); `concurrency` then holds the slots (max concurrency) both modes need, 0 where
    the rate is not sustained."""
    s, w, dep = _inputs(scenario, workload, dep, kw)
    w, rejected = w.fitting(dep.target.max_position)
    check_context(dep, w.longest_prompt, "the longest prompt (--isl, or --lengths)", "and the output fewer")
    pf = prompt_side(dep, w)
    gpus = dep.n_gpus + pf.gpus
    pos = context_message(dep, *w.longest(), "output tokens")
    hits: tuple[np.ndarray, ...] = ()
    if w.rate:
        spec, base, C, (ok, msgs), (ok_b, msgs_b), hits = _serve_rate(dep, w, pf, speculates(dep), gpus)
    else:
        C = np.asarray(w.concurrency, dtype=np.float64)
        base, ok_b, msgs_b = _closed_loop(dep, w, pf, C, False, gpus)
        spec, ok, msgs = _closed_loop(dep, w, pf, C, True, gpus) if speculates(dep) else (base, ok_b, msgs_b)
    if pos:                                   # the longest request exceeds the model's positions: no point stands
        ok, ok_b, msgs = np.zeros(C.size, dtype=bool), np.zeros(C.size, dtype=bool), [pos] * C.size
        msgs_b = msgs
    scen = _scenario_dict(dep)
    notes = workload_notes(dep, w, pf, rejected) + cap_note(w, hits)
    cap = running_cap(dep, True)
    per = f", {dep.eng.spec_max_running:g} per DP rank" if cap != dep.eng.spec_max_running else ""
    if dep.scenario.max_running_requests is not None and cap < float(np.max(C, initial=0.0)):
        notes += (f"at most {cap:g} requests run at once (--max-running-requests{per}), with speculation and without; "
                  "the rest queue (in TTFT)",)
    elif speculates(dep) and cap < float(np.max(spec.in_flight, initial=0.0)):
        notes += (f"with speculation {dep.eng.name} runs at most {cap:g} requests at once (--max-running-requests, "
                  f"or [spec] max_running_requests in its engine profile{per}) and the rest queue (in TTFT): above "
                  f"{cap:g} the on and off rows decode different batches",)
    if not w.rate and not pos:     # past the positions no request runs: nothing to say of how many fit (review)
        notes += kv_notes(dep, (("with speculation", True, spec),) * speculates(dep) + (("without", False, base),))
    notes += sampling_note(dep)
    if speculates(dep):     # the overlap mode, and the reported points' k past per-position rates given, as curve
        notes += overlap_note(dep) + extrapolation_note(dep.acceptance, "concurrency", C, spec.k, ok)
    if np.isfinite(pf.capacity_rps):
        notes += (f"the prefill instance prefills at most {pf.capacity_rps:.3g} requests/s: a load beyond it queues "
                  "for prefill (in TTFT), and speculation then shortens TPOT but not E2E",)
    return ServeResult(scen, w, np.asarray(C).astype(int), gpus, spec, base, pf.bound, ok, tuple(msgs), ok_b,
                       tuple(msgs_b), notes, np.asarray(w.rate, dtype=np.float64), pf.capacity_rps, rejected)


__all__ = ["DEFAULT_CHUNK", "PER_TOKEN_FIELDS", "Phase", "ServeResult", "Workload", "read_lengths", "serve"]
