"""The prompt side of a serving workload (`serving.serve`; its module docstring gives the formulas): what a prompt
token costs in a decode step that carries it, a prompt's prefill run alone where the engine does not mix prompts into
decode steps, and a disaggregated prefill instance's pass, KV transfer and rate."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .pricing import memory, price_pass
from .roofline import BOUNDS
from .scenario import Deployment
from .traffic import Workload


@dataclass(frozen=True)
class PromptSide:
    """The prompt side: marginal cost per prompt token in a mixed step (0 under disaggregation: the decode steps carry
    no prompts), chunks per prompt and tokens per chunk (means over requests, so that TTFT = n_chunks (step +
    chunk_tokens m) is the mean TTFT), what bounds a chunk, and under disaggregation the prefill instance: its pass
    over a prompt plus the KV transfer (pass_s, mean over requests), its GPUs and the requests per second it can
    prefill, capacity_rps (infinite when prefill shares the decode steps). alone_s: where the engine does not mix
    prompts into decode steps (EngineProfile.mixed_prefill false, co-located), a prompt's own prefill pass (its
    chunk passes, mean over requests); 0 where it mixes."""

    per_token_s: float
    chunk_tokens: float
    n_chunks: float
    bound: str
    pass_s: float = 0.0
    gpus: float = 0.0
    capacity_rps: float = np.inf
    alone_s: float = 0.0


def _prompt_token(dep: Deployment, prompt: float, cached: float, chunk: int) -> tuple[float, int]:
    """(marginal cost of one prompt token, what bounds the chunk) for a prompt of `prompt` tokens after `cached`
    ones: the extra time of one sequence per attention-DP rank carrying a chunk of min(chunk, prompt) tokens over the
    same with one token, per prompt token (the weight reads and kernel floors are shared with the decode batch). A
    chunk attends to the prompt before it: priced at its mean preceding context."""
    n_dp = float(dep.par.dp)
    ct = min(float(chunk), prompt)
    L = np.float64(cached + (prompt - ct) / 2.0)
    big = price_pass(dep, dep.lops, n_dp, ct, L, "target")
    one = price_pass(dep, dep.lops, n_dp, 1.0, L, "target")
    return max(float(big.total_s - one.total_s), 0.0) / (ct * n_dp), int(big.bound)


def _alone(dep: Deployment, prompt: float, cached: float, chunk: int, seqs: float) -> float:
    """A prompt's prefill run apart from any decode: ceil(prompt / chunk) passes of `seqs` sequences (1: the prompt
    alone; under DP attention the busiest rank then holds it, and the experts and dense layers see its tokens only)
    of min(chunk, prompt) tokens, each at the chunks' mean preceding context (attention is affine in it), on the
    decode layout; each pass reads the weights and pays the kernel floors again."""
    n, ct = np.ceil(prompt / chunk), min(float(chunk), prompt)
    L = cached + (prompt - ct) / 2.0
    return float(n * price_pass(dep, dep.lops, seqs, ct, L, "target").total_s)


def _prompt_class(dep: Deployment, prompt: float, cached: float, chunk: int) -> tuple[float, float]:
    """(its tokens x their marginal cost, its pass on a prefill instance) for one prompt of `prompt` tokens after
    `cached` ones, on the decode layout: a disaggregated prefill instance under load prefills one prompt per
    attention-DP rank in a pass."""
    return _prompt_token(dep, prompt, cached, chunk)[0] * prompt, _alone(dep, prompt, cached, chunk, dep.par.dp)


def prompt_side(dep: Deployment, w: Workload) -> PromptSide:
    """Price the prompt side (see PromptSide): the marginal cost of the mean prompt's tokens in a mixed step; where the
    engine does not mix, each request class's prefill run alone; under disaggregation each request class's own
    prompt (its cost grows faster than its length), so that the prefill instance's rate is mu = (prefill GPUs /
    decode GPUs) / t_p, t_p the mean over requests of a prompt's tokens x their marginal cost (serving's module
    docstring)."""
    p, cached = w.prompts, w.samples[0] - w.prompts
    per_tok, bound = _prompt_token(dep, float(w.prompt), float(cached.mean()), w.chunk)
    n = np.ceil(p / w.chunk)
    pf = PromptSide(per_tok, float((n * np.minimum(p, w.chunk)).mean() / n.mean()), float(n.mean()), BOUNDS[bound])
    classes = list(zip(p, cached))
    if not w.pd:
        if dep.eng.mixed_prefill:
            return pf
        alone = {c: _alone(dep, float(c[0]), float(c[1]), w.chunk, 1.0) for c in set(classes)}
        return replace(pf, alone_s=float(np.mean([alone[c] for c in classes])))
    priced = {c: _prompt_class(dep, float(c[0]), float(c[1]), w.chunk) for c in set(classes)}
    pass_s = float(np.mean([priced[c][1] for c in classes]))
    t_p = float(np.mean([priced[c][0] for c in classes]))
    gpus = float(w.prefill_gpus or dep.n_gpus)
    return replace(pf, per_token_s=0.0, pass_s=pass_s + _kv_transfer_s(dep, w), gpus=gpus,
                   capacity_rps=gpus / dep.n_gpus / t_p if t_p > 0 else np.inf)


def prompt_load(pf: PromptSide, f: np.ndarray, tokens_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(prefill time per decode step, a prompt's own prefill time to its first token) for f prompts arriving per
    step, `tokens_s` a mean prompt's tokens x their marginal cost. Mixed into the decode steps: f tokens_s, and no
    pass of its own (0). Run apart (pf.alone_s > 0; module docstring): the prompts that arrived during a step share
    one pass, so with Poisson arrivals (P1 = 1 - exp(-f) that any did) the load is P1 t_1 + (f - P1) tokens_s and a
    prompt waits for its pass with the f / P1 - 1 others expected beside it."""
    if not pf.alone_s:
        return f * tokens_s, np.zeros_like(f)
    p1 = -np.expm1(-f)
    beside = np.where(p1 > 0.0, f / np.where(p1 > 0.0, p1, 1.0), 1.0) - 1.0   # f / P1 -> 1 as f -> 0
    return p1 * pf.alone_s + (f - p1) * tokens_s, pf.alone_s + beside * tokens_s


def _kv_transfer_s(dep: Deployment, w: Workload) -> float:
    """Moving a prompt's KV cache from the prefill to the decode instance over the scale-out network (each GPU its
    share over its own NIC)."""
    isl = float(w.samples[0].mean())
    kv = float(memory(dep, np.array([1.0]), isl, 0.0).kv_bytes[0]) * dep.par.tp   # the whole KV of one request
    bw = (dep.hw.scaleout_bytes_per_s or dep.hw.scaleup_bytes_per_s) * dep.hw.link_fraction * dep.par.tp
    return dep.hw.scaleout_latency_s + kv / bw


__all__ = ["PromptSide", "prompt_load", "prompt_side"]
