"""The pricing service: a pass, the memory a rank holds, the plain decode step, the speculative step, the verify
shapes to try and the rule that picks the best of them. `step`, `speedup`, the sweep and `advise` all price here.

At batch B and context L (MagicDec, Chen et al. 2024, eq. 1; Leviathan et al. 2023, Thm 3.8 with a priced draft):
    base step  T_base  = T_target(B, q=1, L) + host work (hidden behind the GPU when the engine overlaps them)
    spec step  T_spec  = sum of draft passes + T_target(B, q=T, L) + eager launches + host work + bookkeeping
                         (+ the attention backend's own per-step cost where a step runs it: `flashinfer_path`)
    speedup            = E[tokens per step] * T_base / T_spec
with T = k + 1 for a chain or the tree size. Engine overheads are named mechanisms: host work per step and per
running sequence (hidden behind the GPU when the engine overlaps them, which some engines turn off for some
methods), host work per draft pass, bookkeeping per speculative step, eager launches where a pass has no CUDA graph;
sampling per token x vocabulary is an op of the forward pass (workload.SAMPLER_BYTES_PER_VOCAB), and a scenario that
samples with top-p / top-k adds the engine's filter over each sampled row (`sampling`: B rows a plain step, B x T a
verify pass).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

import numpy as np

from .acceptance import ALPHA_MAX, Acceptance, Verify, depth_capacity, priced_shape, tree_holds
from .engine import EngineProfile
from .engine_memory import memory_origin, reserve_bytes
from .errors import ScenarioError
from .experts import dealt, rank_batch
from .linear_attention import spec_state_copies
from .memory import activation_bytes_per_rank, kv_bytes_per_rank, weight_bytes_per_rank
from .roofline import BOUNDS, StepTimes, rates, step_times
from .sampling import filter_s
from .scenario import Deployment
from .workload import FAM, OpSet

GB = 1e9


# ---- passes and steps -----------------------------------------------------------------------------------------

def _fingerprint(x) -> tuple:
    a = np.asarray(x, dtype=np.float64)
    return a.shape, a.tobytes()


def price_pass(dep: Deployment, ops: OpSet, B, q, L, pass_kind: str) -> StepTimes:
    """GPU time of one pass ('target', 'draft' or 'verify'): every kernel pays the device's per-kernel floor, and a
    pass launched eagerly (no CUDA graph at its batch) takes the longer of that and the engine's launches (roofline's
    module doc). With a `dep.memo` a graphed pass is cached by its inputs (the op set held by reference, so its id
    cannot be reused while cached) at two kernel floors, and priced at the device's floor by linear interpolation:
    its time is affine in the floor (roofline.step_times adds kernels x floor per op); an eager one is priced anew."""
    graphed = _graphed(dep, ops, B, pass_kind)
    if dep.memo is None or not np.all(graphed):
        return _price_pass(dep, ops, B, q, L, graphed)       # an eager point's max(GPU, launches) is not affine
    hw = dep.hw
    key = (pass_kind, id(ops), _fingerprint(B), _fingerprint(q), _fingerprint(L), dep.eng.gpu_key,
           dep.scenario.cuda_graph_max_batch, dep.overlap,
           tuple(getattr(hw, f.name) for f in fields(hw) if f.name != "kernel_floor_s"))
    hit = dep.memo.get(key)
    if hit is None or hit[0] is not ops:
        at = [_price_pass(replace(dep, hw=replace(hw, kernel_floor_s=f)), ops, B, q, L, graphed)
              for f in (0.0, _FLOOR_PROBE_S)]
        hit = (ops, at[0], at[1])
        dep.memo[key] = hit
    w = hw.kernel_floor_s / _FLOOR_PROBE_S
    st0, st1 = hit[1], hit[2]
    return StepTimes(*(a + w * (b - a) for a, b in ((st0.total_s, st1.total_s), (st0.by_family_s, st1.by_family_s),
                                                    (st0.by_bound_s, st1.by_bound_s))))


_FLOOR_PROBE_S = 1e-5


def _price_pass(dep: Deployment, ops: OpSet, B, q, L, graphed) -> StepTimes:
    eng = dep.eng
    r = rates(dep.hw, ops, eng.hbm_fraction, eng.gemm_fraction, eng.allreduce_latency_s)
    launch = np.where(graphed, 0.0, eng.kernel_launch_s)
    return step_times(ops, r, B, q, L, launch, dep.overlap, eng.graph_kernel_floor)


def _graphed(dep: Deployment, ops: OpSet, B, pass_kind: str):
    """Where the pass replays a CUDA graph (elsewhere its kernels are launched eagerly). Under DP attention each rank
    replays its own graph: SGLang's CudaGraphRunner.can_run checks the largest rank's batch (max of global_num_tokens)
    against cuda_graph_max_bs, so the cap applies to the busiest rank's sequences (one pipeline micro-batch of them)."""
    return dep.eng.graphed(pass_kind, rank_batch(B, ops.dp, ops.pp), dep.scenario.cuda_graph_max_batch)


def host_s(eng: EngineProfile, B):
    """Host work per step of one scheduler running B sequences: a fixed part and a part per running sequence."""
    return eng.host_step_s + eng.host_per_seq_s * np.asarray(B, dtype=np.float64)


def scheduler_batch(dep: Deployment, B):
    """The sequences the busiest scheduler runs: under attention DP each rank has its own scheduler process (SGLang's
    DP attention runs dp_size schedulers, TensorRT-LLM and vLLM one executor / engine core a DP rank) and the step
    waits for the slowest, so host work per sequence counts the busiest rank's share (`dealt`), not the instance's
    (found 2026-12-07, when a trial fit put SGLang's host work per sequence at 3.5 us: an 8192-request GB300 instance
    over 48 ranks was priced 29 ms of host work a step, where a rank's is 0.6 ms; the shipped profiles then held 0)."""
    return dealt(B, dep.par.dp)


def _hide(gpu, host, overlapped: bool):
    """A step's time from its GPU time and host work: max when they overlap, else the sum."""
    return np.maximum(gpu, host) if overlapped else gpu + host


def host_rule(eng: EngineProfile, gpu, B, overlapped: bool):
    """A plain step's time from its GPU time and the engine's host work (`_hide`)."""
    return _hide(gpu, host_s(eng, B), overlapped)


def with_filter(dep: Deployment, st: StepTimes, B, q: float = 1.0, verify: bool = False) -> StepTimes:
    """A priced pass plus the top-k / top-p filter over the q sampled rows of each of the busiest attention-DP rank's
    sequences (`sampling.filter_s`: a plain step's, or with `verify` a rejection sampler's), in the lm_head family and
    the memory-bound class; `st` itself when the scenario samples greedily or the engine's filter costs nothing."""
    t = filter_s(dep.eng.topp, dep.scenario.sampling, dealt(B, dep.par.dp), dep.target.vocab_size, q, verify)
    if not np.any(t):
        return st
    t = np.broadcast_to(t, np.broadcast_shapes(np.shape(t), st.total_s.shape))
    fam = np.broadcast_to(st.by_family_s, t.shape + st.by_family_s.shape[-1:]).copy()
    bnd = np.broadcast_to(st.by_bound_s, t.shape + st.by_bound_s.shape[-1:]).copy()
    fam[..., FAM["lm_head"]] += t
    bnd[..., BOUNDS.index("memory")] += t
    return StepTimes(st.total_s + t, fam, bnd)


def base_step(dep: Deployment, B, L) -> tuple[np.ndarray, StepTimes]:
    """Plain decode step (q = 1) at each point, and its GPU breakdown."""
    st = with_filter(dep, price_pass(dep, dep.tops, B, 1.0, L, "target"), B)
    return host_rule(dep.eng, st.total_s, scheduler_batch(dep, B), dep.eng.overlaps(None)), st


@dataclass(frozen=True)
class SpecStep:
    """One speculative step at each point: draft passes, the verify pass, overheads (eager launches, host work,
    bookkeeping) and the total, s; `bound` indexes roofline.BOUNDS for the verify pass."""

    draft_s: np.ndarray
    verify_s: np.ndarray
    overhead_s: np.ndarray
    step_s: np.ndarray
    bound: np.ndarray


def flashinfer_path(dep: Deployment, v: Verify) -> bool:
    """Whether an EAGLE-style speculative step runs the engine's FlashInfer attention path (SGLang: its host plans and
    syncs, `EngineProfile.flashinfer_spec_step_s`; the rule in simulator/attention_path.py). N-gram and DFlash are not
    priced on it (their own workers: DFlash's attention is chosen apart, n-gram's tree verify is not priced here)."""
    t = dep.target
    return dep.drafter is not None and dep.drafter.method not in ("ngram", "dflash") and \
        dep.eng.attention_path.flashinfer(t.model_type, t.is_mla, dep.hw.architecture, v.w > 1)


def flashinfer_s(dep: Deployment, v: Verify) -> float:
    """The FlashInfer path's cost per speculative step of shape `v` (0 off the path)."""
    return dep.eng.flashinfer_spec_step_s if flashinfer_path(dep, v) else 0.0


def spec_step(dep: Deployment, v: Verify, B, L) -> SpecStep:
    """Price a speculative step of shape `v` over the broadcast of batch B and context L (the sweep passes a column
    of contexts). k = 0 is speculation off: the plain decode step (no drafter, no bookkeeping). A shape that cannot
    exist (fewer tokens than a chain of depth k, a width below 1, more draft nodes than the depth holds, tokens to
    verify without drafts) is refused: `verify_shape` builds only real ones, and a hand-built Verify(k, T, w) with T
    and w swapped priced a one-token verify under a wide draft (found in tests, 2026-12-07)."""
    if v.T < v.k + 1 or v.w < 1 or not (v.T == 1 if v.k == 0 else tree_holds(v)):
        raise ScenarioError(f"verify shape k = {v.k}, T = {v.T}, w = {v.w} cannot exist: a depth-k step verifies "
                            "k + 1 tokens per sequence or a tree of more (one without drafts), a width is at least "
                            "1, and the tree's T - 1 draft nodes must fit its depth and width (Verify is (k, T, w))")
    if v.k == 0:
        base, st = base_step(dep, B, L)
        base = np.broadcast_to(base, np.broadcast_shapes(np.shape(B), np.shape(L)))
        return SpecStep(np.zeros_like(base), np.broadcast_to(st.total_s, base.shape),
                        np.maximum(base - st.total_s, 0.0), base, np.broadcast_to(st.bound, base.shape))
    e, d = dep.eng, dep.drafter
    draft = np.zeros(np.broadcast_shapes(np.shape(B), np.shape(L)))
    launch = np.zeros_like(draft)
    for dp in d.passes(v.k, v.w):
        st = price_pass(dep, dp.ops, B, dp.q, np.minimum(L, dp.window), "draft")
        over = st.by_family_s[..., -1]
        draft += dp.count * (st.total_s - over)
        launch += dp.count * (over + e.draft_step_overhead_s)
    vs = with_filter(dep, price_pass(dep, dep.verify_ops, B, float(v.T), L, "verify"), B, float(v.T), verify=True)
    vover = vs.by_family_s[..., -1]
    verify = vs.total_s - vover
    launch += vover
    gpu = draft + verify + launch
    Bs = scheduler_batch(dep, B)
    host = host_s(e, Bs)
    if d.gpu_free:
        host = host + e.ngram_host_s + e.ngram_host_per_seq_s * Bs
    # Bookkeeping that is host work hides with the rest of the host work when the step overlaps (SGLang's SpecV2
    # worker removed the ~1.1 ms of host time the V1 worker exposed per step, PR #11398); bookkeeping done by GPU
    # kernels (vLLM's rejection sampler, PR #14930; TensorRT-LLM's in-graph acceptance) adds either way, and so does
    # the part of a host bookkeeping beyond what the profile knows to be host work (EngineProfile.hidden_bookkeeping_s).
    bk_host = e.hidden_bookkeeping_s
    spec = _hide(gpu, host + bk_host, e.overlaps(d.method)) + (e.spec_bookkeeping_s - bk_host) + flashinfer_s(dep, v)
    # max(gpu, host) >= draft + verify, so the overhead is never negative; the clip removes float round-off (-0.000)
    return SpecStep(draft, verify, np.maximum(spec - draft - verify, 0.0), spec, vs.bound)


# ---- memory -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MemoryUse:
    """Per-GPU memory at each point, bytes: target weights, KV cache, activations, the drafter (weights and KV), the
    capacity the engine's share of usable HBM gives, that share, and what the engine sets aside at start-up (its
    profiling run's peak, engine_memory.reserve_bytes), which a pass's own activations use before they add."""

    weights_bytes: float
    kv_bytes: np.ndarray
    activation_bytes: np.ndarray
    capacity_bytes: np.ndarray | float
    draft_bytes: np.ndarray | float = 0.0
    fraction: np.ndarray | float = 1.0   # the engine's share of the GPU's memory that gives capacity_bytes (per point
    #                                      where shapes with and without a drafter are kept: best_spec_step)
    reserved_bytes: np.ndarray | float = 0.0
    free_bytes: np.ndarray | float = np.inf   # what the weights (the drafter's too) and that reserve leave of the
    #                                            GPU's memory: a share of free memory gives the KV cache that share

    @property
    def total_bytes(self) -> np.ndarray:
        return self.weights_bytes + self.kv_bytes + np.maximum(self.activation_bytes, self.reserved_bytes) + \
            self.draft_bytes

    @property
    def fits(self) -> np.ndarray:
        return np.atleast_1d(self.total_bytes <= self.capacity_bytes)

    def message(self, i: int, hw_name: str, eng: EngineProfile) -> str:
        """Why point i does not fit ('' when it does): the one 'does not fit' text, naming the engine's share of the
        memory and where it comes from (engine_memory.memory_origin)."""
        if self.fits.flat[i]:
            return ""
        at = lambda x: float(np.broadcast_to(x, self.fits.shape).flat[i])  # noqa: E731
        draft = f" + draft {at(self.draft_bytes) / GB:.2f}" if np.any(np.asarray(self.draft_bytes)) else ""
        need, have = at(self.total_bytes) / GB, at(self.capacity_bytes) / GB
        act, res = at(self.activation_bytes), at(self.reserved_bytes)
        act = f"activations {act / GB:.1f}" if act >= res else f"the engine's start-up reserve {res / GB:.1f}"
        return (f"does not fit: needs {need:.1f} GB per GPU (weights {self.weights_bytes / GB:.1f}"
                f" + KV {at(self.kv_bytes) / GB:.1f}{draft} + {act}), "
                f"{share_text(hw_name, at(self.fraction), eng.share_of_free, res)} gives {have:.1f} GB"
                f"{nothing_free(eng.share_of_free, at(self.free_bytes))} (that share of its memory: "
                f"{memory_origin(eng)}), {short_gb(need - have)} GB short")


def share_text(hw_name: str, f: float, of_free: bool, reserve_bytes: float) -> str:
    """What gives the capacity: the device x the engine's share, or (TensorRT-LLM's free_gpu_memory_fraction) that
    share of what the weights and the start-up reserve leave, with them (found by review: 'h100-sxm x 0.9 gives 84.9
    GB' of an 80 GiB device)."""
    if not of_free:
        return f"{hw_name} x {f:g}"
    return (f"{hw_name} x {f:g} of what the weights and the {reserve_bytes / GB:.1f} GB start-up reserve leave, "
            "with them,")


def nothing_free(of_free: bool, free_bytes: float) -> str:
    """Where the share is of the memory left free (TensorRT-LLM's free_gpu_memory_fraction) and the weights and the
    start-up reserve leave none, why the capacity a 'does not fit' line names exceeds the GPU: f M + (1 - f)(W + R)
    is past M once W + R is (found by review: 70B in bf16 on one H100 under trtllm read 'gives 92.2 GB'); else ''."""
    if not of_free or free_bytes > 0:
        return ""
    return (f" (more than the GPU holds: the weights and the start-up reserve alone exceed it by "
            f"{short_gb(-free_bytes / GB)} GB, so none of it is free for the KV cache)")


def short_gb(x: float) -> str:
    """A shortfall in GB as a 'does not fit' line prints it: three significant digits below 10 GB, whole GB above."""
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def memory(dep: Deployment, B, q, L, logits: str = "all", drafter: bool = False,
           verify: bool | None = None) -> MemoryUse:
    """Memory per GPU for B sequences of L cached and q new tokens; with `drafter`, the draft weights and KV too;
    `verify` (default: with the drafter): a verify pass, whose hybrid target keeps a state per draft token."""
    m, p, par, eng = dep.target, dep.p, dep.par, dep.eng
    dw = dk = 0.0
    if drafter:
        dw, dk = dep.drafter.weights_bytes, dep.drafter.kv_bytes(B, q, L)
    r = reserve_bytes(eng, dep.hw, m, par.tp, dep.scenario.max_running_requests)
    f, w = eng.memory_share(drafter), weight_bytes_per_rank(m, p, par)
    cap = dep.hw.hbm_capacity_bytes * f
    # TensorRT-LLM (trtllm.toml [memory] share_of_free; KvCacheCreator._cal_max_memory, _torch/pyexecutor/_util.py):
    # KV <= f (M - W - R), so W + R + KV <= f M + (1 - f)(W + R)
    if eng.share_of_free:
        cap += (1.0 - f) * (w + dw + r)
    # A hybrid target's linear-attention states: one a sequence, or those a speculating one keeps (linear_attention)
    spec = drafter if verify is None else verify
    copies = spec_state_copies(np.asarray(q, dtype=float), eng.linear_state_commit) if spec and logits == "all" \
        else 1.0
    kv = kv_bytes_per_rank(m, B, q, L, p, par, state_copies=copies, state_bytes=eng.linear_state_bytes)
    return MemoryUse(w, kv, activation_bytes_per_rank(m, B, q, p, par, logits), cap,
                     dw + dk, f, r, dep.hw.hbm_capacity_bytes - w - dw - r)


def max_batch(dep: Deployment, q: float, L: float, drafter: bool) -> int:
    """Largest whole batch that fits. At fixed q and L memory is affine in the sequences the busiest attention-DP
    rank holds, ceil(B / dp) (experts.dealt: a staircase in B under DP attention), once each of its pp micro-batches
    holds one; the slope is read at dp x pp and 2 dp x pp, and a batch the line allows that does not fit (a
    micro-batch's one-sequence floor) is searched down."""
    n = dep.par.dp * dep.par.pp
    used = lambda b: memory(dep, np.array([float(b)]), q, L, drafter=drafter)  # noqa: E731
    one, two = used(n), used(2 * n)
    per = float(two.total_bytes[0] - one.total_bytes[0]) / dep.par.pp        # per sequence of the busiest rank
    if per <= 0:
        return 0
    fixed = float(one.total_bytes[0]) - per * dep.par.pp
    B = int(max(0, np.floor((one.capacity_bytes - fixed) / per))) * dep.par.dp
    fits = lambda b: b == 0 or bool(used(b).fits[0])  # noqa: E731
    if fits(B):
        return B
    lo, hi = 0, B                      # fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def context_message(dep: Deployment, L: int, q: int, what: str = "tokens") -> str:
    """'' when L + q fits the target's position limit, else why not (the one max_position check)."""
    m = dep.target
    if m.max_position and L + q > m.max_position:
        return f"context {L} + {q} {what} exceeds {m.name}'s max_position_embeddings {m.max_position}"
    return ""


def check_context(dep: Deployment, L: int | None = None, what: str = "context (--context)",
                  more: str = "k + 1 fewer to verify k drafts") -> None:
    """Refuse a context (the scenario's, or a prompt of L tokens) that leaves the target no position for even one new
    token: such a scenario cannot exist, so it gets no rows and no capacity figure (a context with room for plain
    decoding but not for a deep verify, or a prompt with room for some output but not all, keeps its points,
    infeasible with the reason). curve, step, serve and batch apply the one rule."""
    m, L = dep.target, dep.scenario.context if L is None else L
    if m.max_position and L + 1 > m.max_position:
        raise ScenarioError(f"{what} = {L} leaves no position for a new token: {m.name}'s "
                            f"max_position_embeddings is {m.max_position}, so it must be at most "
                            f"{m.max_position - 1} ({more})")


# ---- verify shapes and the best-candidate rule -------------------------------------------------------------------

def candidates(dep: Deployment) -> list[Verify]:
    """The verify shapes a scenario tries, in order: its k, or every depth up to k_max with k = "auto"; with a tree
    budget and k = "auto" also chains and power-of-two trees up to the budget that the depth and branching hold."""
    s = dep.scenario
    if not s.auto and dep.drafter is not None and s.k > dep.drafter.n_heads_max:
        raise ScenarioError(f"k = {s.k} exceeds the {dep.drafter.n_heads_max} Medusa heads of "
                            f"{dep.drafter.shape.name}")
    ks = list(range(1, dep.kmax + 1)) if s.auto else [int(s.k)]
    out = [v for k in ks for v in _shapes_at_depth(dep, k)]
    if not out:
        raise ScenarioError(f"no tree of at most {s.tree} tokens fits depth <= {dep.kmax} with branching "
                            f"{s.branching}")
    return out


def _shapes_at_depth(dep: Deployment, k: int) -> list[Verify]:
    """The verify shapes of depth k: a chain, or the scenario's tree (k = "auto": chains and power-of-two trees up
    to the budget); a fixed tree the depth cannot hold is an error."""
    s = dep.scenario
    if s.tree is None or k == 0:   # k = 0: no drafts, a plain one-token step whatever the tree
        return [Verify(k, k + 1, 1)]
    # k = "auto": the chain only within the budget (review: tree_tokens = 4 verified a chain of 7 at k = 6)
    sizes = [k + 1] * (k + 1 <= s.tree) + [t for t in (2 ** j for j in range(1, 12)) if k + 1 < t <= s.tree] \
        if s.auto and not s.fixed_tree else [s.tree]
    out = []
    for T in sorted(set(sizes)):
        v = priced_shape(k, T, s.branching, s.auto)
        if tree_holds(v):
            out.append(v)
        elif not s.auto:
            cap = sum(depth_capacity(j, v.w) for j in range(k))
            raise ScenarioError(f"a tree of {T} tokens needs {T - 1} draft nodes; depth {k} with branching {v.w} "
                                f"holds at most {cap} ({v.w} + {k - 1} x {v.w}^2); raise k or tree_branching")
    return out


def better(s, ok, best_s, best_ok):
    """The best-candidate rule: a candidate replaces the best so far when it fits and the best does not, or when both
    fit (or both do not) and its speedup is strictly larger. The sweep's numba kernel applies the same rule."""
    return (ok & ~best_ok) | ((ok == best_ok) & (s > best_s))


def break_even_alpha(acc: Acceptance, v: Verify, need: float) -> float:
    """The acceptance rate at which tokens per step reach `need` = T_spec / T_base (0: pays at any; nan: never)."""
    from scipy.optimize import brentq  # lazy: keeps `import simulator` fast (scipy costs ~0.2 s)
    f = lambda a: acc.with_alpha(a).tokens(v) - need  # noqa: E731
    if f(0.0) >= 0:
        return 0.0
    if f(ALPHA_MAX) > 0:
        return float(brentq(f, 0.0, ALPHA_MAX, xtol=1e-10))
    return float("nan")


@dataclass
class BestStep:
    """The best verify shape at each point, with its speedup, tokens per step, priced step and memory (v: one Verify
    per point; s: speedup; ok: fits)."""

    v: list[Verify]
    s: np.ndarray
    tokens: np.ndarray
    step: SpecStep
    mem: MemoryUse
    ok: np.ndarray

    def take(self, other: BestStep, mask: np.ndarray) -> None:
        self.v = [o if m else b for b, o, m in zip(self.v, other.v, mask)]
        for name in ("s", "tokens", "ok"):
            setattr(self, name, np.where(mask, getattr(other, name), getattr(self, name)))
        self.step = SpecStep(*(np.where(mask, getattr(other.step, f.name), getattr(self.step, f.name))
                               for f in fields(SpecStep)))
        self.mem = MemoryUse(*(np.where(mask, getattr(other.mem, f.name), getattr(self.mem, f.name))
                               if f.name != "weights_bytes" else self.mem.weights_bytes for f in fields(MemoryUse)))


def best_spec_step(dep: Deployment, acc: Acceptance, B: np.ndarray, L: float, base: np.ndarray,
                   most: float = np.inf) -> BestStep:
    """Price every candidate verify shape at batches B and context L, and keep the best per point (`better`). `most`:
    the tokens a request has left to decode, which bound its tokens per step (a step cannot emit more than remain;
    serving passes the mean output less the first token)."""
    best: BestStep | None = None
    for v in candidates(dep):
        st = spec_step(dep, v, B, L)
        tok = min(acc.tokens(v), most)
        mem = memory(dep, B, v.T, L, drafter=v.k > 0)     # k = 0 is plain decoding: no drafter loaded
        fits = mem.fits & (context_message(dep, L, v.T) == "")   # and its own position limit
        rec = BestStep([v] * B.size, tok * base / st.step_s, np.full(B.size, tok), st, mem, fits)
        if best is None:
            best = rec
        else:
            best.take(rec, better(rec.s, rec.ok, best.s, best.ok))
    assert best is not None
    return best


def overlap_note(dep: Deployment) -> tuple[str, ...]:
    """Which host-overlap mode priced the speculative steps, and how to price the other (found by an out-of-sample
    check: a 2025 vLLM build priced in the current default's overlapped mode came out 10 % fast at batch 1)."""
    e, m = dep.eng, dep.scenario.method
    if m is None or dep.scenario.k == 0 or not (e.host_step_s or e.spec_bookkeeping_s):   # no speculative step (k =
        return ()                                          # 0: review) or nothing on the host to hide (ideal)
    s = dep.scenario
    if e.overlaps(m):        # no build date: it differs by method and tree (SGLang: chains first; review)
        why = "as asked: --spec-overlap" if s.spec_overlap_asked else f"{e.name}'s default in current builds"
        return (f"speculative steps priced with their host work hidden behind the GPU ({why}); --no-spec-overlap "
                "prices a build, method or tree that runs them without the overlap",)
    why = ("as asked: --no-spec-overlap" if s.spec_overlap_asked is False else
           f"{e.name} runs {m} without it" if m in e.no_overlap_methods else
           f"{e.name} runs speculation with pipeline stages without it"
           if dep.par.pp > 1 and not e.overlap_with_spec_under_pp else f"{e.name} does not overlap them")
    return (f"speculative steps priced with their host work exposed after the GPU work ({why})",)


def sampling_note(dep: Deployment) -> tuple[str, ...]:
    """What the top-p filter was priced at (nothing for greedy sampling), or that the engine's profile times none."""
    if dep.scenario.sampling == "greedy":
        return ()
    f = dep.eng.topp
    if not (f.plain_s or f.verify_s):
        return (f"{dep.eng.name}'s profile times no top-k / top-p filter ([sampling]): top-p sampling priced as "
                "greedy",)
    spec = "" if dep.scenario.method is None or dep.scenario.k == 0 else \
        f" and {f.verify_s:.3g} on " + ("a draft position's row" if f.bonus_plain else "a verified row")
    return (f"top-p sampling: each sampled row filtered at {f.plain_s:.3g} s a vocabulary entry on a plain step{spec} "
            f"({dep.eng.name}'s [sampling]; simulator/sampling.py)",)
