"""The prompt side of a serving workload (`serving.serve`; its module docstring gives the formulas): what a prompt
token costs in a decode step that carries it, a prompt's prefill run alone where the engine does not mix prompts into
decode steps, and a disaggregated prefill instance's pass, KV transfer and rate."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from .engine_memory import SET_OWN
from .errors import ScenarioError
from .pricing import memory, price_pass
from .roofline import BOUNDS
from .scenario import Deployment, Scenario
from .traffic import Workload
from .workload import OpSet


@dataclass(frozen=True)
class PromptSide:
    """The prompt side: marginal cost per prompt token in a mixed step (0 under disaggregation: the decode steps carry
    no prompts), chunks per prompt and tokens per chunk (means over requests, so that TTFT = n_chunks (step +
    chunk_tokens m) is the mean TTFT), what bounds a chunk, and under disaggregation the prefill instance: its pass
    over a prompt plus the KV transfer (pass_s, mean over requests), its GPUs and the requests per second it can
    prefill, capacity_rps (infinite when prefill shares the decode steps). alone_s: where the engine does not mix
    prompts into decode steps (EngineProfile.mixed_prefill false, co-located), a prompt's own prefill pass (its
    chunk passes, mean over requests); 0 where it mixes. per_pass: the prompts one such pass takes (a chunk's worth
    of whole prompts on each attention-DP rank, at least one per rank). solo_s: that pass co-located whether the
    engine mixes or not (alone_s where it does not): where no request decodes there is no decode step for a prompt to
    ride on, and every pass is a prefill pass of its own (0 under disaggregation). pass_prompt_s: what one more
    prompt adds to such a pass of its own, the chord (t_k - t_1) / (k - 1) from one prompt's pass t_1 to a full
    pass t_k of k = dp chunk / prompt prompts, unrounded (a mean prompt's tokens x their marginal cost in a mixed step
    where a pass takes one prompt, whose passes each cost t_1 whatever it is; 0 under disaggregation). fill: a mean
    prompt's tokens over one mixed step's prompt budget (a chunk on each attention-DP rank), unrounded: the steps
    waiting prompts' chunks fill together. own_s: a mean prompt's tokens at their cost on the one rank that
    prefills it (a mixed step's chunk on that rank alone), which per_token_s spreads over the ranks' chunks: what a
    lone prompt waits for under dp > 1 (review, 2026-12-05: TTFT was up to dp x below the prompt's own pass); ranks:
    the attention-DP ranks (or a dense model's replicas) prompts are dealt to; lockstep: those ranks run every step
    together (an MoE under DP attention, whose expert collectives join them), so a step waits for the rank carrying a
    prompt's chunk (`prompt_load`); a dense model's replicas step apart (apart: a prefill pass of its own pauses
    only the replica that holds its prompt)."""

    per_token_s: float
    chunk_tokens: float
    n_chunks: float
    bound: str
    pass_s: float = 0.0
    gpus: float = 0.0
    capacity_rps: float = np.inf
    alone_s: float = 0.0
    per_pass: float = 1.0
    solo_s: float = 0.0
    pass_prompt_s: float = 0.0
    fill: float = 1.0
    own_s: float = 0.0
    ranks: float = 1.0
    lockstep: bool = False
    apart: bool = False


def _prompt_token(dep: Deployment, prompt: float, cached: float, chunk: int,
                  ranks: float | None = None) -> tuple[float, int]:
    """(marginal cost of one prompt token, what bounds the chunk) for a prompt of `prompt` tokens after `cached`
    ones: the extra time of one sequence per attention-DP rank carrying a full chunk of it (or the whole prompt, if
    shorter) over the same with one token, per prompt token (the weight reads and kernel floors are shared with the
    decode batch). A chunk attends to the prompt before it: priced at its mean preceding context. `ranks`: the ranks
    carrying a chunk (default every DP rank; 1: a lone prompt's chunk, PromptSide.own_s)."""
    # The engine's token budget takes full chunks (the last one shorter), so a chunk is priced full: one token over
    # the chunk no longer halves every chunk (found by a property test: TTFT fell 0.7 % at 8193 tokens).
    n_dp = float(dep.par.dp if ranks is None else ranks)
    ct = min(prompt, float(chunk))
    L = cached + (prompt - ct) / 2.0
    big = price_pass(dep, dep.lops, n_dp, ct, L, "target")
    one = price_pass(dep, dep.lops, n_dp, 1.0, L, "target")
    return max(float(big.total_s - one.total_s), 0.0) / (ct * n_dp), int(big.bound)


def _chunks(prompt: float, cached: float, chunk: int) -> tuple[float, float, np.float64]:
    """(n, tokens, context) of a prompt of `prompt` tokens after `cached` ones prefilled in n = ceil(prompt / chunk)
    equal chunks: each chunk's tokens and the chunks' mean preceding context (attention is affine in it)."""
    n = float(np.ceil(prompt / chunk))
    ct = prompt / n
    return n, ct, np.float64(cached + (prompt - ct) / 2.0)


def _alone(dep: Deployment, prompt: float, cached: float, chunk: int, busiest: bool) -> float:
    """A prompt's prefill run apart from any decode: ceil(prompt / chunk) passes of equal chunks, each at the chunks'
    mean preceding context (attention is affine in it), on the decode layout; each pass reads the weights and pays
    the kernel floors again. `busiest`: the prompt alone in its pass, so under DP attention one rank holds it (its
    attention-side ops at one sequence of the rank, the experts and everything shared at its tokens only); else one
    prompt on every attention-DP rank (a prefill instance under load)."""
    n, ct, L = _chunks(prompt, cached, chunk)
    if not busiest or dep.par.dp == 1:
        return float(n * price_pass(dep, dep.lops, float(dep.par.dp), ct, L, "target").total_s)
    side, rest = _dp_split(dep)
    return float(n * (price_pass(dep, side, float(dep.par.dp), ct, L, "target").total_s
                      + price_pass(dep, rest, 1.0, ct, L, "target").total_s))


def _pass_prompt(dep: Deployment, prompt: float, cached: float, chunk: int, k: float, mixed: float) -> float:
    """What one more prompt of `prompt` tokens (after `cached`) adds to a prefill pass of its own: the chord
    (t_k - t_1) / (k - 1) from the prompt's pass alone (`_alone`, busiest) to a full pass of k prompts dealt over the
    attention-DP ranks, exact at one prompt and at k. k is the pass's capacity in prompts, dp chunk / prompt, not
    rounded down, so that the chord moves smoothly with the prompt (a pass of a fraction of a sequence is priced as
    one). A compute-bound pass grows by a whole prompt's math per prompt, not by its marginal cost in a decode step
    (which rides on the step's weight reads); `mixed` (that marginal cost) where a pass takes one prompt (k = 1), whose
    passes each cost t_1 whatever it is."""
    if k <= 1.0:
        return mixed
    n, ct, L = _chunks(prompt, cached, chunk)
    full = float(n * price_pass(dep, dep.lops, k, ct, L, "target").total_s)
    # The one-prompt end without tile padding: a pass rounds its tokens up to the GEMM tile once, so a prompt added to
    # a pass adds its own tokens, not the partial tile it pays alone; from the padded pass alone the chord would fall
    # as a prompt crosses a tile (2113 tokens priced below 2112 per added prompt).
    bare = replace(dep, hw=replace(dep.hw, gemm_tile_m=0))
    return max(full - _alone(bare, prompt, cached, chunk, True), 0.0) / (k - 1.0)


def _dp_split(dep: Deployment) -> tuple[OpSet, OpSet]:
    """The last-token pass's attention-side ops (their share of the batch is a DP rank's) and the rest, kept in the
    deployment's memo where it has one (price_pass caches passes by their op set). An op whose share is below one
    (1 / dp) is attention-side: every op of a dense model under DP attention."""
    ops = dep.lops
    hit = dep.memo.get(("dp split", id(ops))) if dep.memo is not None else None
    if hit is None or hit[0] is not ops:
        side = ops.share < 1.0 - 1e-9
        hit = (ops, ops_where(ops, side), ops_where(ops, ~side))
        if dep.memo is not None:
            dep.memo[("dp split", id(ops))] = hit
    return hit[1], hit[2]


def ops_where(ops: OpSet, keep: np.ndarray) -> OpSet:
    """The ops of `ops` where `keep` (a boolean per op) is true, as an op set of their own."""
    i = np.flatnonzero(keep)
    return replace(ops, **{f.name: tuple(getattr(ops, f.name)[j] for j in i) if f.name in ("names", "dtype")
                           else getattr(ops, f.name)[i] for f in fields(ops) if f.name not in ("n_gpus", "dp", "pp")})


def _prompt_class(dep: Deployment, prompt: float, cached: float, chunk: int) -> tuple[float, float]:
    """(its tokens x their marginal cost, its pass on a prefill instance) for one prompt of `prompt` tokens after
    `cached` ones, on the decode layout: a disaggregated prefill instance under load prefills one prompt per
    attention-DP rank in a pass."""
    return _prompt_token(dep, prompt, cached, chunk)[0] * prompt, _alone(dep, prompt, cached, chunk, False)


def prompt_side(dep: Deployment, w: Workload) -> PromptSide:
    """Price the prompt side (see PromptSide): the marginal cost of the mean prompt's tokens in a mixed step; where the
    engine does not mix, each request class's prefill run alone; under disaggregation each request class's own
    prompt (its cost grows faster than its length) on the prefill instance's own layout (prefill_deployment), so
    that the prefill instance's rate is mu = (prefill GPUs / one prefill instance's GPUs) / t_p, t_p the mean over
    requests of a prompt's tokens x their marginal cost on that instance (serving's module docstring)."""
    p, cached = w.prompts, w.samples[0] - w.prompts
    per_tok, bound = _prompt_token(dep, float(w.prompt), float(cached.mean()), w.chunk)
    n = np.ceil(p / w.chunk)
    pf = PromptSide(per_tok, float(p.mean() / n.mean()), float(n.mean()), BOUNDS[bound])   # n equal chunks each
    classes = list(zip(p, cached))
    if not w.pd:
        alone = {c: _alone(dep, float(c[0]), float(c[1]), w.chunk, True) for c in set(classes)}
        per_pass = dep.par.dp * max(1.0, np.floor(w.chunk / float(p.mean())))
        packed = float(dep.par.dp * max(1.0, w.chunk / float(p.mean())))
        own = _prompt_token(dep, float(w.prompt), float(cached.mean()), w.chunk, 1.0)[0] if dep.par.dp > 1 \
            else per_tok
        pf = replace(pf, solo_s=float(np.mean([alone[c] for c in classes])), per_pass=float(per_pass),
                     fill=float(p.mean()) / (w.chunk * dep.par.dp), own_s=float(p.mean()) * own,
                     ranks=float(dep.par.dp),
                     lockstep=dep.par.dp > 1 and dep.target.is_moe and not dep.eng.dp_prompt_balance,
                     apart=dep.par.dp > 1 and not dep.target.is_moe,
                     pass_prompt_s=_pass_prompt(dep, float(p.mean()), float(cached.mean()), w.chunk, packed,
                                                float(p.mean()) * per_tok))
        return pf if dep.eng.mixed_prefill else replace(pf, alone_s=pf.solo_s)
    pdep = prefill_deployment(dep, w)
    priced = {c: _prompt_class(pdep, float(c[0]), float(c[1]), w.chunk) for c in set(classes)}
    pass_s = float(np.mean([priced[c][1] for c in classes]))
    t_p = float(np.mean([priced[c][0] for c in classes]))
    gpus = prefill_side_gpus(dep, w)
    return replace(pf, per_token_s=0.0, pass_s=pass_s + kv_transfer_s(dep, w, pdep.par.tp), gpus=gpus,
                   capacity_rps=gpus / pdep.n_gpus / t_p if t_p > 0 else np.inf)


def prefill_deployment(dep: Deployment, w: Workload) -> Deployment:
    """The deployment a disaggregated prefill instance runs: the decode deployment's scenario at the workload's
    prefill_layout (tp, dp, ep; one stage), at the engine's default memory share and running cap (the decode
    instance's own are not the prefill instance's); the decode deployment itself where no prefill layout is given or
    it is the decode one."""
    if w.prefill_layout is None or w.prefill_layout == (dep.par.tp, dep.par.dp, dep.par.ep) and dep.par.pp == 1:
        return dep
    tp, dp, ep = w.prefill_layout
    where = f"the prefill instance (prefill_layout: --prefill-tp {tp} --prefill-dp {dp} --prefill-ep {ep})"
    try:
        pdep = _resolved(dep, replace(dep.scenario, tp=tp, dp=dp, ep=ep, pp=1, memory_fraction=None,
                                      max_running_requests=None, cuda_graph_max_batch=None))
    except ScenarioError as e:      # review, 2026-12-06: 'tp = 3 does not divide ...' named the decode --tp
        raise ScenarioError(f"{where}: {e}") from None
    # It must hold its weights and the largest prompt's KV with one chunk's activations (review, 2026-12-06: a
    # one-GPU DeepSeek-R1 prefill instance, 673 GB of weights on a 141 GB H200, was priced at 4.8 requests/s). The
    # drafter's weights are left out: a lower bound, refused only where the target alone cannot fit.
    isl = float(w.samples[0].max())
    q = min(float(w.chunk), isl)
    use = memory(pdep, np.array([float(dp)]), np.array([q]), np.array([isl - q]), logits="last")
    if not use.fits[0]:
        why = use.message(0, pdep.hw.name, pdep.eng).replace(SET_OWN, "; --memory-fraction sets the decode "
                                                              "instance's only")    # review, 2026-12-06
        raise ScenarioError(f"{where} {why} (one prompt of {isl:.0f} tokens per attention-DP rank): give it more GPUs")
    return pdep


def prefill_side_gpus(dep: Deployment, w: Workload) -> float:
    """The GPUs that prefill for the decode instance: Workload.prefill_gpus, else one prefill instance's (its
    layout's tp x dp, one stage), else the decode instance's."""
    if w.prefill_gpus:
        return float(w.prefill_gpus)
    return float(w.prefill_layout[0] * w.prefill_layout[1]) if w.prefill_layout else float(dep.n_gpus)


def _resolved(dep: Deployment, s: Scenario) -> Deployment:
    """`s` resolved, once per deployment where it carries a memo (validation prices a disaggregated row's prefill
    instance at every concurrency of its decode instances): the deployment's own cache, not a module-level one."""
    if dep.memo is None:
        return s.resolve()
    key = ("prefill_deployment", s)
    if key not in dep.memo:
        dep.memo[key] = s.resolve()
    return dep.memo[key]


def prompt_load(pf: PromptSide, f: np.ndarray, tokens_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(prefill time per decode step, a prompt's own prefill time to its first token) for f prompts of other
    requests arriving per step, `tokens_s` a mean prompt's tokens x their marginal cost. Mixed into the decode steps:
    f tokens_s, and no pass of its own (0). Run apart (pf.alone_s > 0; serving's module docstring): each pass pays
    its fixed part, t_1 - tokens_s (never below 0), and its prompts their tokens, so with Poisson arrivals the load
    is E[passes] (t_1 - tokens_s) + f tokens_s, E[passes] = E[ceil(N / k)] for k = pf.per_pass prompts a pass takes;
    a prompt's own time is its pass plus the tokens of the Poisson(f) others that arrived in its step (Palm): an
    estimate, exact when they fit one pass (f much below k), which ignores the order of passes within a step.
    Replicas that step apart (pf.apart: a dense model's dp) each take their Poisson(f / dp) share of the arrivals
    in passes of k / dp, and a pass pauses its own replica's decode only (found by review: every replica had
    paused for every other's pass, dp times the passes at a low arrival rate: SGLang at --dp 4 and 4C priced a
    TPOT up to 1.6x that of --dp 1 at C, 1024 / 256 tokens)."""
    if not pf.alone_s:
        return np.maximum(f * tokens_s, straggler_load(pf, f)), np.zeros_like(f)
    if pf.apart and pf.ranks > 1.0:
        return _replica_load(pf, f, tokens_s), pf.alone_s + f * tokens_s
    fixed = max(pf.alone_s - tokens_s, 0.0)
    return expected_passes(f, pf.per_pass) * fixed + f * tokens_s, pf.alone_s + f * tokens_s


def _replica_load(pf: PromptSide, f: np.ndarray, tokens_s: float) -> np.ndarray:
    """`prompt_load` run apart on one of r replicas that step apart: its Poisson(f / r) prompts in passes of
    k / r, each pass its fixed part t_1 - q_r and each prompt q_r, what one more prompt adds to a replica's pass:
    the chord `tokens_s` = (t_K - t_1) / (K - 1) spans K = max(r, 1 / fill) prompts over the r replicas, so
    q_r = tokens_s (K - 1) / (K / r - 1) (a replica's pass of one prompt costs t_1 whatever q_r: 0 there)."""
    r = pf.ranks
    K = max(r, 1.0 / pf.fill)
    q = tokens_s * (K - 1.0) / (K / r - 1.0) if K > r * (1.0 + 1e-9) else 0.0
    return expected_passes(f / r, pf.per_pass / r) * max(pf.alone_s - q, 0.0) + f / r * q


def straggler_load(pf: PromptSide, f: np.ndarray) -> np.ndarray:
    """Prefill time per decode step of ranks in lockstep (pf.lockstep) that mix prompts into their decode steps: a
    prompt is prefilled on the one rank that holds its request, and every rank's step lasts as long as the busiest
    rank's, so a step costs a chunk on one rank whenever any rank carries one. Each rank carries a chunk in a share
    u = min(1, f n_chunks / R) of the steps (f prompts per step dealt over R ranks, each taking n_chunks steps);
    taken as independent, a step carries one somewhere with probability 1 - (1 - u)^R, and a chunk costs
    own_s / n_chunks: load = (1 - (1 - u)^R) own_s / n_chunks. It is f tokens_s (the prompts' tokens spread over
    every rank's chunk) at R = 1 and, as u reaches 1 (every rank carries a chunk in every step), the cost of a chunk
    on each rank at once; below that, up to R times it (u -> 0). 0 where ranks step apart."""
    if not pf.lockstep:
        return np.zeros_like(f)
    u = np.minimum(f * pf.n_chunks / pf.ranks, 1.0)
    with np.errstate(divide="ignore"):          # u = 1: log1p(-1) = -inf, and the step always carries a chunk
        busy = -np.expm1(pf.ranks * np.log1p(-u))   # 1 - (1 - u)^R without its cancellation at small u (found by
    return busy * pf.own_s / pf.n_chunks            # a property test: 4e-5 off at u = 1e-13)


def prefill_wait(pf: PromptSide, n: np.ndarray, tokens_s: float, step: np.ndarray, decodes: bool) -> np.ndarray:
    """The time n prompts waiting together (a request's and n - 1 others) take to prefill, co-located, in passes of
    pf.per_pass whole prompts as `prompt_load` prices those arriving while a request decodes: max(1, n / per_pass)
    times a prompt's fixed part, and each prompt's tokens, tokens_s. The fixed part: its n_chunks chunk passes' own
    (weight reads, kernel floors, t_1 - tokens_s) where it is prefilled apart (the engine does not mix, or no request
    decodes at all), else the decode steps their chunks ride on: as many as the n prompts' tokens fill (n fill; the
    engine's token budget takes the next prompt's chunk beside the last of one), at least one prompt's n_chunks (found
    by a property test: each prompt's chunks were counted apart, n_chunks x n steps, so one token over the chunk
    doubled the steps of a queue of prompts). One prompt: its pass t_1, or n_chunks (step + chunk m)."""
    n = np.asarray(n, dtype=np.float64)
    if decodes and not pf.alone_s:   # the n prompts' tokens spread over the ranks, or a rank's share of them alone
        return step * np.maximum(pf.n_chunks, n * pf.fill) + np.maximum(n * tokens_s,
                                                                         np.maximum(1.0, n / pf.ranks) * pf.own_s)
    return max(pf.solo_s - tokens_s, 0.0) * np.maximum(1.0, n / pf.per_pass) + n * tokens_s


def expected_passes(f: np.ndarray, k: float) -> np.ndarray:
    """E[ceil(N / k)] for N ~ Poisson(f) and a whole k >= 1: the sum over j >= 0 of P(N > j k), P(N > n) the
    regularised lower incomplete gamma function P(n + 1, f). f at k = 1 (a pass per prompt), 1 - exp(-f) as k grows
    without bound (one pass takes every prompt)."""
    from scipy.special import gammainc  # lazy: keeps `import simulator` fast (scipy costs ~0.2 s)
    f = np.asarray(f, dtype=np.float64)
    if k == 1.0:
        return f.copy()
    if np.isinf(k):
        return -np.expm1(-f)
    top = float(np.nanmax(f, initial=0.0))
    n = int(np.ceil((top + 12.0 * np.sqrt(top) + 12.0) / k)) + 1     # P(N > j k) below 1e-16 beyond
    j = np.arange(n, dtype=np.float64).reshape((n,) + (1,) * f.ndim)
    return gammainc(j * k + 1.0, f).sum(axis=0)


def kv_transfer_s(dep: Deployment, w: Workload, prefill_tp: int | None = None) -> float:
    """Moving a prompt's KV cache from the prefill to the decode instance over the scale-out network (each GPU its
    share over its own NIC: the request's KV lies on its attention group's tp GPUs on either side, so it crosses
    min(prefill tp, decode tp) NICs in parallel; `prefill_tp` default the decode instance's). Where a device
    publishes no NIC, the two instances must share one scale-up domain: then
    each prefill GPU sends to its decode GPU over the scale-up link (one peer link on a fully connected board) after
    a collective's small-message latency; instances that do not fit one domain are refused (review, 2026-12-05:
    MI325X had moved the KV over all seven links, and between two boards over none that exists)."""
    isl = float(w.samples[0].mean())
    kv = float(memory(dep, np.array([1.0]), isl, 0.0).kv_bytes[0]) * dep.par.tp   # the whole KV of one request
    hw, links = dep.hw, min(dep.par.tp, prefill_tp or dep.par.tp)
    if hw.scaleout_bytes_per_s:
        return hw.scaleout_latency_s + kv / (hw.scaleout_bytes_per_s * hw.link_fraction * links)
    both = dep.n_gpus + prefill_side_gpus(dep, w)       # review, 2026-12-06: the prefill's, not the decode's
    if both > hw.scaleup_domain:
        fix = ("a smaller prefill instance (--prefill-gpus) or layout (--prefill-tp/-dp/-ep)"
               if dep.n_gpus < hw.scaleup_domain
               else "a decode instance of fewer GPUs (it fills the domain alone)")  # --prefill-gpus cannot help
        raise ScenarioError(f"prefill/decode disaggregation over {both:g} GPUs spans more than one {hw.scaleup_domain}-"
                            f"GPU scale-up domain of {hw.name}, whose scale-out bandwidth is not published: the KV "
                            f"transfer between the instances cannot be priced (fit both in one domain: {fix}; or give "
                            "a device spec with interconnect.scaleout_gb_s_per_direction)")
    return hw.allreduce_latency_s + kv / (hw.scaleup_group_bytes_per_s(2.0) * hw.link_fraction * links)


__all__ = ["PromptSide", "expected_passes", "kv_transfer_s", "ops_where", "prefill_deployment", "prefill_side_gpus",
           "prefill_wait", "prompt_load", "prompt_side", "straggler_load"]
