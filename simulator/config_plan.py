"""What the engine configuration writers read: the advice as a plan (the k schedule over batch ranges, the one k, the
layout and limits), the result type, the engines' names for each method and the notes shared by every writer. Text
only: no pricing here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .engine import load_engine
from .errors import ScenarioError
from .registry import list_models, model_record

EMIT_ENGINES: tuple[str, ...] = ("vllm", "sglang", "trtllm", "hf")

# specroof method -> the engine's own name (vLLM --speculative-config "method", SGLang --speculative-algorithm,
# TensorRT-LLM speculative_config.decoding_type, HF generate() keyword). engines.md §1.1, §2.1, §3.1, §4.
ENGINE_METHOD: dict[str, dict[str, str]] = {
    "vllm": {"eagle3": "eagle3", "eagle": "eagle", "mtp": "mtp", "ngram": "ngram", "draft": "draft_model",
             "dflash": "dflash", "suffix": "suffix", "medusa": "medusa"},
    "sglang": {"eagle3": "EAGLE3", "eagle": "EAGLE", "mtp": "NEXTN", "ngram": "NGRAM", "draft": "STANDALONE",
               "dflash": "DFLASH"},
    "trtllm": {"eagle3": "Eagle3", "eagle": "Eagle", "mtp": "MTP", "ngram": "NGram", "draft": "DraftTarget",
               "dflash": "DFlash", "suffix": "SA"},
    "hf": {"draft": "assistant_model", "ngram": "prompt_lookup_num_tokens"},
}
NEEDS_DRAFT_PATH = frozenset({"draft", "eagle", "eagle3", "medusa", "dflash"})


@dataclass(frozen=True, slots=True)
class KRange:
    """Batches start..end (inclusive) run draft depth k (0: speculation off) verifying tree_tokens per sequence
    (0 when off; k + 1 for a chain). speedup_min / speedup_max: the predicted speedup of the best k over the
    evaluated batches in the range (below 1 in an off range: what speculation would have cost)."""

    start: int
    end: int
    k: int
    tree_tokens: int
    speedup_min: float
    speedup_max: float
    fits: str = "yes"       # "yes" (with speculation), "without speculation" or "no" (not even without)

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "k": self.k, "tree_tokens": self.tree_tokens,
                "speedup_min": num_or_none(self.speedup_min), "speedup_max": num_or_none(self.speedup_max),
                "fits": self.fits}


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """What to paste into one engine. supported False: `notes` say why there is no config; text "" with
    supported True: speculation is predicted not to pay, run without it."""

    engine: str
    supported: bool
    kind: str          # "shell" | "yaml" | "python" | ""
    text: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"engine": self.engine, "supported": self.supported, "kind": self.kind, "text": self.text,
                "notes": list(self.notes)}


def num_or_none(x: float) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def repo_of(name: str | None) -> str:
    """The HF repo of a bundled model id, else a placeholder to fill in."""
    if not name:
        return ""
    if name in list_models():
        repo = model_record(name).deploy_repo
        if repo:
            return repo
    return f"<path to {name}>"


@dataclass(frozen=True)
class ConfigPlan:
    """What the config writers need, all read from the advice arrays."""

    method: str
    target: str
    draft: str
    tp: int
    ep: int
    lo: int
    hi: int
    schedule: tuple[KRange, ...]
    off_above: int | None
    pays: bool
    fixed_k: int
    fixed_T: int
    fixed_ratio: float
    topk: int
    options: Mapping[str, Any]
    interior_off: tuple[int, ...] = ()
    fixed_topk: int = 1
    sglang_spec_v2: bool | None = False   # SGLang priced with SpecV2 (Scenario.spec_overlap): SGLANG_ENABLE_SPEC_V2;
    #                                     None: another engine was priced (SGLang's worker is not in the prediction)
    cap: int = 0                       # the most sequences the configs admit: hi, or less where hi does not fit
    cap_base: int = 0                  # the most that fit without speculation (no drafter), up to hi
    off_fits: bool = False             # off above off_above because speculation stops fitting, not paying
    fixed_fits_to: int = 0             # the largest batch the fixed k's verify fits in memory at (0: not known)
    no_spec_reason: str = ""           # why no config is written (default: speculation loses at every batch)
    dp: int = 1                        # data-parallel ranks of tp GPUs (DP attention for an MoE, else replicas)
    pp: int = 1                        # pipeline stages
    memory_fraction: float | None = None   # the share of GPU memory priced (the profile's or Scenario's)
    memory_origin: str = ""            # where that share came from (engine_memory.memory_origin): said beside each flag
    memory_engine: str = ""            # the engine whose own share that is ('': the deployment's, asked, for any
    #                                    engine); another engine's flag is not given it
    memory_of_free: bool = False       # that share is of what the weights and the start-up reserve leave (the priced
    #                                    profile's [memory] share_of_free: TensorRT-LLM's free_gpu_memory_fraction),
    #                                    not of the GPU; a flag of the other meaning is not given it
    sglang_aiter: bool = False         # SGLang scales the share it is given by engine_memory.AITER_SHARE (ROCm aiter)
    moe: bool = False                  # the target routes to experts: dp > 1 is DP attention, not replicas
    graph_cap: int | None = None       # Scenario.cuda_graph_max_batch: one rank's micro-batch replays graphs to it

    def share_for(self, engine: str) -> float | None:
        """The share priced, for `engine`'s flag where it is that engine's (review: advise priced under HF wrote
        --gpu-memory-utilization 1 into vLLM's line, a share vLLM's own start-up leaves no room for) and means what
        the flag means: a share of the GPU, or (TensorRT-LLM's free_gpu_memory_fraction) of what the weights and
        the start-up reserve leave, as each engine's profile says ([memory] share_of_free); else None."""
        if self.memory_fraction is None or self.memory_engine not in ("", engine):
            return None
        return self.memory_fraction if load_engine(engine).share_of_free == self.memory_of_free else None

    def foreign_note(self, flag: str) -> str:
        """Why `flag` is not written: the share priced is another engine's, or a share of something else (of the
        whole GPU, or of what the weights and the start-up reserve leave)."""
        why = (f"{flag} is not written: the share priced, {self.memory_fraction:g}, is {self.memory_engine}'s"
               if self.memory_engine else
               f"{flag} is a share {_share_of(not self.memory_of_free)}, the share priced one "
               f"{_share_of(self.memory_of_free)}: {self.memory_fraction:g} is not written")
        return f"{why}; the limits above are sized to it (price this engine, --engine, for limits sized to its own " \
            "share)"

    def memory_note(self, flag: str) -> str:
        """Why `flag` carries the share priced: the limits written are sized to it, whatever the engine would choose."""
        return (f"{flag} {self.memory_fraction:g} is the share priced ({self.memory_origin.split(';')[0]}): the limits "
                "above are sized to it")

    @property
    def most(self) -> int:
        """The batch the configs admit at most: the range's top, or the largest batch that fits below it."""
        return self.cap or self.hi

    def cap_note(self, flag: str, v: int | None = None) -> str:
        """Why `flag` is `v` (default: most): the range's top, or the largest batch that fits in memory, or a DP
        rank's (pipeline micro-batch's) share of it."""
        v = self.most if v is None else v
        share = f" (a share of {self.most} over {self.dp} DP ranks x {self.pp} stages)" if v != self.most else ""
        if self.most < self.hi:
            return (f"{flag} {v}{share}: the largest batch that fits in memory with the drafter loaded (the range "
                    f"asks for up to {self.hi})")
        return f"{flag} {v}{share} keeps the batch inside the range the prediction covers"

    def per_rank(self, n: int, micro: bool = False) -> int:
        """Sequences the busiest of the dp ranks holds of n, ceil(n / dp); `micro`: one of its pp micro-batches,
        ceil(n / (dp pp)) (= ceil(ceil(n / dp) / pp) for whole n)."""
        return -(-n // (self.dp * (self.pp if micro else 1)))

    def rank_schedule(self, upto: int) -> list[tuple[int, int, int]]:
        """The k schedule up to instance batch `upto` as (start, end, k) ranges of one DP rank's batch (what an
        engine that schedules per rank looks k up by): rank batch b takes the k priced at instance batch dp x b."""
        # batches below the range (not evaluated) take its first range's k, not k = 0: a table starting at batch 1
        # switched speculation off where it pays most (found by review: --batch 8..512 wrote [1, 7, 0])
        first = self.schedule[0].k if self.schedule else 0
        k_at = lambda n: first if n < self.lo else next((r.k for r in self.schedule if r.start <= n <= r.end), 0)  # noqa: E731
        out: list[list[int]] = []
        for b in range(1, self.per_rank(upto) + 1):
            k = k_at(min(b * self.dp, upto))
            if out and out[-1][2] == k:
                out[-1][1] = b
            else:
                out.append([b, b, k])
        return [(s, e, k) for s, e, k in out]

    def below_note(self) -> list[str]:
        """What a per-batch table says of the batches below the range, which were not evaluated ([] from batch 1)."""
        if self.lo <= 1 or not self.schedule:
            return []
        rank = f" (a rank's batches 1-{self.per_rank(self.lo - 1)} in the table)" if self.dp > 1 else ""
        return [f"batches 1-{self.lo - 1}, below the range{rank}, were not evaluated: the table gives them the first "
                f"range's k ({self.schedule[0].k})"]

    def off_note(self, flag: str) -> list[str]:
        """For an engine written with one k (no switch by batch): where speculation is predicted to lose, and the
        limit that keeps a latency-bound server below the crossover ([] when it pays everywhere)."""
        out = []
        if self.interior_off:
            out.append(f"speculation is also predicted to lose at batch(es) {ranges_text(self.interior_off)}, where "
                       "one k keeps it on")
        if self.off_above is not None and not self.off_fits:
            out.append(f"speculation is predicted to lose above batch {self.off_above} and one k cannot switch it "
                       f"off: cap {flag} {self.per_rank(self.off_above)} for latency-bound serving, or serve without "
                       f"speculation when the load stays above {self.off_above}")
        return out

    def graph_bs(self, n: int) -> int:
        """The CUDA-graph cap to write: the scenario's, else one rank's micro-batch of n."""
        return self.graph_cap or self.per_rank(n, micro=True)

    @property
    def on_ranges(self) -> list[KRange]:
        return [r for r in self.schedule if r.k > 0]

    @property
    def kmax(self) -> int:
        return max((r.k for r in self.schedule), default=0)

    @property
    def tree(self) -> bool:
        return any(r.tree_tokens > r.k + 1 for r in self.on_ranges) or self.fixed_T > self.fixed_k + 1


def _share_of(of_free: bool) -> str:
    """What a memory share is of, in words: the whole GPU, or what the weights and the start-up reserve leave."""
    return "of the memory the weights and the engine's start-up reserve leave" if of_free else "of the whole GPU"


def no_spec(engine: str, p: ConfigPlan) -> EngineConfig:
    why = p.no_spec_reason or f"speculation is predicted not to pay at any batch in {p.lo}..{p.hi}: serve without it"
    return EngineConfig(engine, True, "", "", (why,))


def fixed_fits_all(p: ConfigPlan) -> bool:
    """Whether the one k fits in memory at every batch where speculation is on."""
    on_hi = p.off_above if p.off_above is not None else p.hi
    return p.fixed_fits_to == 0 or p.fixed_fits_to >= on_hi


def fixed_caveat(p: ConfigPlan) -> str:
    """How the one k's worst case treats the batches it does not fit at ('' when it fits at all of them)."""
    return "" if fixed_fits_all(p) else " (a batch it does not fit at counted as served without speculation)"


def fixed_note(p: ConfigPlan, engine: str) -> str:
    on_hi = p.off_above if p.off_above is not None else p.hi
    fits = (f"fits at every batch where speculation is on ({p.lo}..{on_hi})" if fixed_fits_all(p) else
            f"fits at the batches where speculation is on up to {p.fixed_fits_to} (of {p.lo}..{on_hi}; above it "
            f"its verify does not fit in memory and {engine} holds fewer sequences)")
    return (f"{engine} takes one k for every batch: k = {p.fixed_k} {fits} and stays closest to the per-batch best "
            f"there (worst case {p.fixed_ratio:.0%} of the best speedup){fixed_caveat(p)}")


def ranges_text(xs: Iterable[int]) -> str:
    """'3-5, 9' from [3, 4, 5, 9]."""
    xs = sorted(xs)
    parts: list[str] = []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(f"{xs[i]}" if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(parts)


def _sglang_layout_missing(p: ConfigPlan) -> str | None:
    """Why SGLang refuses this method on this layout (its speculative and pipeline argument checks), or None."""
    alg, dpa = ENGINE_METHOD["sglang"].get(p.method, ""), p.dp > 1 and p.moe
    if p.method == "dflash" and (p.pp > 1 or dpa):
        return ("SGLang's DFLASH supports neither DP attention nor pipeline stages (speculative_hook.py _handle_dflash:"
                " 'does not support dp attention', 'only supports pp_size == 1')")
    if p.pp > 1:
        return _sglang_pp_missing(p, alg, dpa)
    if dpa and p.method in ("ngram", "draft"):
        return f"SGLang refuses {alg} speculation with --enable-dp-attention (its speculative argument checks)"
    return None


def _sglang_pp_missing(p: ConfigPlan, alg: str, dpa: bool) -> str | None:
    """Why SGLang refuses speculation with pipeline stages here, or None: only a single-layer EAGLE / NEXTN chain."""
    chain = p.fixed_T == p.fixed_k + 1 and p.fixed_topk == 1          # the one k SGLang runs, a top-k 1 chain
    if not p.pays or (p.method in ("eagle", "mtp") and chain and not dpa):   # nothing to refuse where it never pays
        return None
    return (f"SGLang runs speculation with pipeline stages (SGLANG_ENABLE_PP_SPEC=1, PR #30775) only for a "
            f"single-layer EAGLE or NEXTN chain (topk 1) without DP attention (validation_hook.py pipeline checks); "
            f"{alg}{'' if chain else ' as a tree'}{' with DP attention' if dpa else ''} is refused")


def layout_missing(engine: str, p: ConfigPlan) -> str | None:
    """Why an engine cannot run the layout priced ('' / None when it can)."""
    if engine == "sglang":
        return _sglang_layout_missing(p)
    try:                 # review: vLLM's --enable-expert-parallel was written for ep 2 of 4 GPUs (it runs EP over 4)
        load_engine(engine).check_layout(p.tp, p.dp, p.ep)
    except ScenarioError as e:
        return str(e)
    if p.dp == 1:
        return None
    if engine == "trtllm" and (p.tp > 1 or not p.moe):
        return ("TensorRT-LLM's attention DP runs one attention rank per GPU (enable_attention_dp: attention DP size "
                f"= tensor_parallel_size): {p.dp} {'groups of ' + str(p.tp) + ' GPUs' if p.tp > 1 else 'replicas'} "
                "are not one TensorRT-LLM server; run them as separate servers behind a router")
    return None
