"""The notes `serving.serve` reports beside its numbers: what the steady state assumes of the workload, the requests
the KV cache or the benchmark client's max concurrency holds back. Text only: no pricing here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .admission import running_cap
from .prompts import PromptSide
from .scenario import Deployment
from .traffic import Workload

if TYPE_CHECKING:                      # serving imports this module; Phase is named for the type only
    from .serving import Phase


def kv_notes(dep: Deployment, modes: tuple[tuple[str, bool, Phase], ...]) -> tuple[str, ...]:
    """A note per mode whose running requests the KV cache limits: fewer run than are in flight and than its cap."""
    out: tuple[str, ...] = ()
    for name, spec, ph in modes:
        short = (ph.running < ph.in_flight - 1e-9) & (ph.running < running_cap(dep, spec))
        if short.any():
            out += (f"{name}, at most {float(ph.running[short].max()):g} requests fit in the KV cache at once (at "
                    "the mean context): the rest wait in the engine's queue holding none, and their wait is in TTFT "
                    "(SGLang, vLLM and TensorRT-LLM admit a request only when its KV cache fits)",)
    return out


def workload_notes(dep: Deployment, w: Workload, pf: PromptSide, rejected: int) -> tuple[str, ...]:
    """What the steady state assumes of the workload, the requests left out as too long, and the prefill passes."""
    notes = ("steady state at a fixed arrival rate (fluid: arrival bursts not queued)" if w.rate else
             "steady-state closed loop: each of the C slots serves one request after another",
             "TPOT and ITL are per output token, averaged over a request (prefill of other requests included)",
             "every running request's prompt is prefilled once in a request's lifetime: TTFT includes the prefill of "
             "the prompts waiting beside it (at short outputs most of it)",
             _ttft_note(w))
    if rejected:
        m = dep.target
        notes += (f"{rejected} of the {rejected + w.samples[0].size} requests of the length distribution "
                  f"need{'s' if rejected == 1 else ''} more than {m.name}'s {m.max_position} positions (prompt + "
                  "output): an engine rejects such a request (vLLM and SGLang answer it with an error), so the "
                  f"workload is priced on the {w.samples[0].size} it serves" +
                  (", at their share of each arrival rate given (the rates shown)" if w.rate else ""),)
    if pf.alone_s:
        notes += ("prompts are prefilled in passes of their own that pause every decode (the engine does not mix "
                  "prefill into decode steps); TTFT waits for the step in flight",)
    elif pf.lockstep:
        notes += (f"the {pf.ranks:g} attention-DP ranks step together and each mixes its own prompts in: a step "
                  f"lasts as long as the rank carrying a prompt's chunk ({dep.eng.name} does not schedule the ranks' "
                  "prompts into the same steps; --dp-balance prices a server that does, e.g. TensorRT-LLM with "
                  "attention_dp_config.enable_balance)",)
    return notes


def _ttft_note(w: Workload) -> str:
    """What TTFT is: the steady state's, or with num_prompts the mean over a run with its start-up burst."""
    path = ("; it leaves out a request's path through the server (HTTP, tokenizing, scheduling) and prices the "
            "prefill as a CUDA-graph replay where many builds run it eager (measured about 0.1 ms more a dense layer, "
            "0.7-1.1 ms an MLA + MoE layer, at short prompts; README, 'Findings'), so published TTFTs measure above it "
            "(README, 'How accurate is it'): read it as a lower bound")
    if w.num_prompts is None and w.prompts_per_slot is None:
        return ("TTFT is the GPU's prefill and the steady state's queue (for a slot, or at a prefill instance), not a "
                "benchmark's start-up burst (--num-prompts prices it)" + path)
    n = w.num_prompts if w.num_prompts is not None else f"{w.prompts_per_slot} x C"
    return (f"TTFT and E2E are the means over a run of {n} prompts whose first C start at once: the "
            "steady state's, with the first wave's prompts queued together for prefill (simulator/burst.py; "
            "throughput is the steady state's)" + path)


def cap_note(w: Workload, hits: tuple[np.ndarray, ...]) -> tuple[str, ...]:
    """Where the client's max concurrency binds (`serving._client_capped`), named with its rates."""
    bound = np.logical_or.reduce(hits) if hits else np.zeros(0, dtype=bool)
    if not bound.any():
        return ()
    rates = ", ".join(f"{r:g}" for r, b in zip(w.rate, bound) if b)
    return (f"at {rates} requests/s the client's max concurrency {w.max_concurrency} binds (in at least one mode): "
            "the arrivals beyond it wait at the client, outside TTFT and E2E (benchmark clients time a request from "
            "its send), and the server runs that many requests closed-loop, delivering what they complete",)


__all__ = ["cap_note", "kv_notes", "workload_notes"]
