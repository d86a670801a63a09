"""Speedup of speculative decoding over plain decoding, per batch size.

At batch B (MagicDec, Chen et al. 2024, eq. 1; Leviathan et al. 2023, Thm 3.8 with a measured draft cost):
    base step  T_base(B)  = T_target(B, q=1, L) + engine overheads
    spec step  T_spec(B)  = sum of draft passes + T_target(B, q=V, L) + engine and speculation overheads
    speedup(B) = E[tokens per step] * T_base(B) / T_spec(B)
with V = k + 1 (chain) or the tree size. At a fixed B this is both the per-token latency ratio and the throughput
ratio (both runs serve the same B sequences). Tokens/s per GPU = B * E / T_spec / GPUs; per user = E / T_spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .acceptance import ALPHA_MAX, Acceptance, tree_widths
from .engine import EngineProfile
from .errors import ScenarioError
from .hardware import Hardware
from .methods import MEDUSA_TREE_TOKENS, TREE_METHODS, Drafter, default_tree_branching, make_drafter
from .model import ModelShape
from .step import (resolve_overlap, as_engine, as_hardware, as_model, check_batches, engine_hardware, make_precision, memory_use,
                   price_pass)
from .roofline import BOUNDS
from .workload import INF_WINDOW, OpSet, Parallelism, forward_pass



def default_acceptance(method: str) -> Acceptance:
    """Published acceptance for methods that have one; others must be given (no invented defaults).

    eagle3: mean acceptance length 2.79 at K = 3, Llama-3.1-8B-Instruct on H100 (vLLM issue #20780).
    eagle:  per-position rates 0.71, 0.68, 0.66, 0.66, 0.65 (EAGLE, Li et al. 2024, Table 2 n-alpha, Vicuna-7B).
    medusa: tau 2.32 for Medusa's 64-token tree of depth 5 on Vicuna-7B (Spec-Bench leaderboard, A100).
    mtp:    tau 2.82 at nextn = 3, DeepSeek-R1 on 8x B200 (TensorRT-LLM tech blog 1 MTP table).
    """
    if method == "eagle3":
        return Acceptance.from_length(2.79, 3)
    if method == "eagle":
        return Acceptance.from_rates([0.71, 0.68, 0.66, 0.66, 0.65])
    if method == "medusa":
        return Acceptance.from_tree_length(2.32, tree_widths(64, 5, 13))
    if method == "mtp":
        return Acceptance.from_length(2.82, 3)
    raise ScenarioError(f"method {method} has no published default acceptance here; pass --acceptance-rate, "
                        "--acceptance-length (with --acceptance-k) or --acceptance-rates")


@dataclass(frozen=True)
class SpeedupResult:
    """Result of `speedup_curve`. Arrays have one entry per batch size; times in s, memory in bytes.

    Attributes
    ----------
    scenario : dict               resolved inputs (hardware, model, method, drafter, engine, acceptance, ...)
    batch : (P,)                  sequences per step
    k : (P,) int                  draft depth used at that batch (the best one with k="auto")
    tree_tokens : (P,) int        tokens verified per sequence (k + 1 for a chain)
    speedup : (P,)                tokens_per_step * base_step_s / spec_step_s
    tokens_per_step : (P,)        expected tokens per sequence per speculative step (bonus included)
    base_step_s, spec_step_s : (P,)  plain decode step and speculative step
    draft_s, verify_s, overhead_s : (P,)  split of spec_step_s (overhead: host, bookkeeping, eager launches)
    tokens_per_s_per_gpu, tokens_per_s_per_user : (P,)   with speculation
    base_tokens_per_s_per_gpu, base_tokens_per_s_per_user : (P,)  without
    verify_bound : tuple[str]     memory / compute / communication: what bounds the verify pass
    memory_bytes : (P,)           per-GPU memory with speculation (target + draft weights, KV incl. lookahead)
    feasible : (P,) bool          with speculation (fits in the engine's share of HBM); `message` says why not
    base_feasible : (P,) bool
    break_even_acceptance : (P,)  acceptance rate at which speedup = 1 for that batch's k (nan: never pays)
    crossover_batch : int or None largest batch with speedup >= 1 (None: speculation never pays)
    max_batch_base, max_batch_spec : int   largest batch that fits without / with speculation
    Values are meaningful only where `feasible`; `to_dict` writes null elsewhere.
    """

    scenario: dict[str, Any]
    batch: np.ndarray
    k: np.ndarray
    tree_tokens: np.ndarray
    speedup: np.ndarray
    tokens_per_step: np.ndarray
    base_step_s: np.ndarray
    spec_step_s: np.ndarray
    draft_s: np.ndarray
    verify_s: np.ndarray
    overhead_s: np.ndarray
    tokens_per_s_per_gpu: np.ndarray
    tokens_per_s_per_user: np.ndarray
    base_tokens_per_s_per_gpu: np.ndarray
    base_tokens_per_s_per_user: np.ndarray
    verify_bound: tuple[str, ...]
    memory_bytes: np.ndarray
    feasible: np.ndarray
    base_feasible: np.ndarray
    message: tuple[str, ...]
    break_even_acceptance: np.ndarray
    crossover_batch: int | None
    max_batch_base: int
    max_batch_spec: int
    notes: tuple[str, ...] = field(default=())

    _POINT_FIELDS = ("k", "tree_tokens", "speedup", "tokens_per_step", "base_step_s", "spec_step_s", "draft_s",
                     "verify_s", "overhead_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user")

    def to_dict(self) -> dict[str, Any]:
        pts = []
        for i, b in enumerate(self.batch):
            ok = bool(self.feasible[i])
            pt: dict[str, Any] = {"batch": int(b)}
            for f in self._POINT_FIELDS:
                v = getattr(self, f)[i]
                pt[f] = (int(v) if f in ("k", "tree_tokens") else float(v)) if ok else None
            pt["verify_bound"] = self.verify_bound[i] if ok else None
            pt["memory_bytes"] = float(self.memory_bytes[i])
            pt["feasible"] = ok
            pt["message"] = self.message[i]
            pts.append(pt)
        be = [None if not np.isfinite(x) else float(x) for x in self.break_even_acceptance]
        return {"scenario": self.scenario, "points": pts, "crossover_batch": self.crossover_batch,
                "break_even_acceptance": be, "max_batch_base": self.max_batch_base,
                "max_batch_spec": self.max_batch_spec, "notes": list(self.notes)}

    def to_dataframe(self):
        """pandas DataFrame, one row per batch (needs pandas)."""
        import pandas as pd
        return pd.DataFrame(self.to_dict()["points"])


@dataclass(frozen=True)
class _Ctx:
    hw: Hardware
    eng: EngineProfile
    target: ModelShape
    drafter: Drafter
    par: Parallelism
    tops: OpSet
    B: np.ndarray
    L: float | np.ndarray
    overlap: str | float


def _spec_parts(c: _Ctx, k: int, T: int, width: int) -> tuple[np.ndarray, ...]:
    """(draft_s, verify_s, overhead_s, spec_s, verify bound) over the broadcast of batch B and context L (the sweep
    passes a column of contexts) for depth k and T verified tokens."""
    B, L = c.B, c.L
    draft = np.zeros(np.broadcast_shapes(np.shape(B), np.shape(L)))
    launch = np.zeros_like(draft)
    for dp in c.drafter.passes(k, width):
        st = price_pass(dp.ops, c.hw, c.eng, B, dp.q, np.minimum(L, dp.window), "draft", c.overlap)
        over = st.by_family_s[..., -1]
        draft += dp.count * (st.total_s - over)
        launch += dp.count * (over + c.eng.draft_step_overhead_s)
    vs = price_pass(c.tops, c.hw, c.eng, B, float(T), L, "verify", c.overlap)
    vover = vs.by_family_s[..., -1]
    verify = vs.total_s - vover
    launch += vover
    e = c.eng
    gpu = draft + verify + launch
    host = e.host_step_s
    if c.drafter.gpu_free:
        host = host + e.ngram_host_s + e.ngram_host_per_seq_s * B
    spec = (np.maximum(gpu, host) if e.overlap_with_spec else gpu + host) \
        + e.spec_bookkeeping_s + e.spec_bookkeeping_per_token_s * B * T
    return draft, verify, spec - draft - verify, spec, vs.bound


@dataclass(frozen=True)
class Deployment:
    """A resolved scenario: the device as the engine drives it, the target, the drafter, precisions, parallelism,
    the target's forward-pass ops and the overlap mode. Shared by `speedup_curve` and the sweep."""

    hw: Hardware
    eng: EngineProfile
    target: ModelShape
    drafter: Drafter
    p: Any
    dp: Any
    par: Parallelism
    tops: Any
    overlap: str | float


def resolve_deployment(hardware: Hardware | str, model: ModelShape | str, method: str,
                       draft: str | ModelShape | None = None, tp: int = 1, ep: int = 1, precision: str = "bf16",
                       draft_precision: str | None = None, kv_precision: str | None = None,
                       expert_precision: str | None = None, engine: EngineProfile | str | None = "sglang",
                       draft_kv_window: int | None = None, overlap: str | float | None = None) -> Deployment:
    """Load and check everything a speculative scenario needs; raises the user errors `speedup_curve` raises."""
    hw0, target, eng = as_hardware(hardware), as_model(model), as_engine(engine)
    hw = engine_hardware(hw0, eng)
    par = Parallelism(tp=tp, ep=ep)
    p = make_precision(precision, kv_precision, expert_precision)
    dp = make_precision(draft_precision or p.weights, kv_precision)
    for dt in {p.weights, p.expert_dtype, p.lm_head, dp.weights}:
        hw.peak_flops_per_s(dt)
    drafter = make_drafter(method, target, draft, dp, Parallelism(tp=tp, ep=1), draft_kv_window)
    return Deployment(hw, eng, target, drafter, p, dp, par, forward_pass(target, p, par, "all"),
                      resolve_overlap(overlap, eng))


def base_step(eng: EngineProfile, base_gpu: np.ndarray) -> np.ndarray:
    """Plain decode step: GPU time plus host work, hidden behind the GPU when the engine overlaps them."""
    return np.maximum(base_gpu, eng.host_step_s) if eng.overlap else base_gpu + eng.host_step_s


def speculative_memory(dep: Deployment, B, T, L):
    """(MemoryUse of the target with T lookahead tokens, total bytes per GPU incl. the drafter, drafter bytes):
    target weights + KV for L + T tokens + activations, draft weights, and draft KV (capped at its window)."""
    mem = memory_use(dep.target, dep.hw, dep.eng, dep.p, dep.par, B, T, L)
    d = dep.drafter
    dmem = d.weights_bytes + B * np.minimum(np.asarray(L, dtype=np.float64) + T, d.kv_window) * d.kv_bytes_per_token
    return mem, mem.total_bytes + dmem, dmem


def verify_shape(method: str, k: int, tree_tokens: int | None = None, tree_branching: int | None = None):
    """(tokens verified per sequence T, tree frontier width) for depth k: a chain of k + 1, or a tree (Medusa's
    default 64-token tree unless one is given)."""
    if tree_tokens is None and method == "medusa":
        tree_tokens = MEDUSA_TREE_TOKENS
    if tree_tokens is None or k == 0:
        return k + 1, 1
    return tree_tokens, tree_branching or default_tree_branching(tree_tokens, k)


def expected_tokens_for(acc: Acceptance, k: int, T: int, width: int) -> float:
    """Tokens per step for depth k verifying T tokens: the chain formula when T = k + 1, else the tree's."""
    if T == k + 1:
        return acc.expected_tokens(k)
    return acc.expected_tokens_tree(tree_widths(T, k, width))


def speedup_curve(hardware: Hardware | str = "h100-sxm", model: ModelShape | str = "llama-3.1-8b",
                  method: str = "eagle3", draft: str | ModelShape | None = None,
                  acceptance: Acceptance | None = None, k: int | str = 3, tree_tokens: int | None = None,
                  tree_branching: int | None = None, batch: Any = (1, 2, 4, 8, 16, 32, 64, 128, 256),
                  context: int = 1024, tp: int = 1, ep: int = 1, precision: str = "bf16",
                  draft_precision: str | None = None, kv_precision: str | None = None,
                  engine: EngineProfile | str | None = "sglang", draft_kv_window: int | None = None,
                  k_max: int = 8, overlap: str | float | None = None,
                  expert_precision: str | None = None) -> SpeedupResult:
    """Predict the speedup of speculative decoding at each batch size (see the module docstring).

    k: draft depth, or "auto" for the best depth (and, when `tree_tokens` is given, tree size up to it) per batch.
    tree_tokens: verify a tree of this many tokens per sequence (EAGLE/Medusa trees); None: a chain of k + 1
        (Medusa: its default 64-token tree).
    acceptance: an Acceptance; default: `default_acceptance(method)` (published values, see there).
    """
    B = check_batches(batch)
    if isinstance(context, bool) or not isinstance(context, (int, np.integer)) or context < 0:
        raise ScenarioError(f"context = {context!r}; expected an integer >= 0")
    fixed_tree = method == "medusa" and tree_tokens is None
    if fixed_tree:
        tree_tokens = MEDUSA_TREE_TOKENS   # Medusa verifies its default 64-token tree unless told otherwise
    auto = k == "auto"
    if not auto:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ScenarioError(f"k = {k!r}; expected an integer >= 0 or 'auto'")
    if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
        raise ScenarioError(f"k_max = {k_max!r}; expected an integer >= 1")
    if tree_tokens is not None:
        if method not in TREE_METHODS:
            raise ScenarioError(f"method {method} verifies a chain; --tree-tokens applies to "
                                f"{', '.join(sorted(TREE_METHODS))}")
        if isinstance(tree_tokens, bool) or not isinstance(tree_tokens, (int, np.integer)) or tree_tokens < 2:
            raise ScenarioError(f"tree tokens = {tree_tokens!r}; expected an integer >= 2")
        if not auto and 0 < k and tree_tokens < k + 1:
            raise ScenarioError(f"a tree of {tree_tokens} tokens is smaller than k + 1 = {k + 1}: it cannot hold "
                                f"a chain of depth {k}")
    dep = resolve_deployment(hardware, model, method, draft, tp, ep, precision, draft_precision, kv_precision,
                             expert_precision, engine, draft_kv_window, overlap)
    hw, eng, target, drafter, par, p, dp, overlap = (dep.hw, dep.eng, dep.target, dep.drafter, dep.par, dep.p,
                                                     dep.dp, dep.overlap)
    acc = acceptance if acceptance is not None else default_acceptance(method)
    # Base: plain decode, q = 1.
    bst = price_pass(dep.tops, hw, eng, B, 1.0, float(context), "target", overlap)
    base_gpu = bst.total_s
    base = base_step(eng, base_gpu)
    ctx = _Ctx(hw, eng, target, drafter, par, dep.tops, B, float(context), overlap)

    # Candidates (k, T, width).
    kmax_eff = min(k_max, drafter.n_heads_max)
    if auto:
        ks = list(range(1, kmax_eff + 1))
    else:
        if k > drafter.n_heads_max:
            raise ScenarioError(f"k = {k} exceeds the {drafter.n_heads_max} Medusa heads of {drafter.shape.name}")
        ks = [int(k)]
    cands: list[tuple[int, int, int]] = []
    for kk in ks:
        if tree_tokens is None or kk == 0:   # k = 0: no drafts, a plain one-token step whatever the tree
            cands.append((kk, kk + 1, 1))
        else:
            sizes = [kk + 1] + [t for t in (2 ** j for j in range(1, 12)) if kk + 1 < t <= tree_tokens] \
                if auto and not fixed_tree else [tree_tokens]
            for T in sorted(set(sizes)):
                w = 1 if T == kk + 1 else (tree_branching or default_tree_branching(T, kk))
                if T - 1 > kk * w:   # depth kk with at most w candidates per depth cannot hold T - 1 nodes
                    if not auto:
                        raise ScenarioError(f"a tree of {T} tokens needs more than depth {kk} x branching {w} = "
                                            f"{kk * w} draft nodes; raise k or --tree-branching")
                    continue
                cands.append((kk, T, w))
    if not cands:
        raise ScenarioError(f"no tree of at most {tree_tokens} tokens fits depth <= {kmax_eff} with branching "
                            f"{tree_branching}")


    n = B.size
    best = None
    for kk, T, w in cands:
        dr, ve, ov, sp, vb = _spec_parts(ctx, kk, T, w)
        tok = expected_tokens_for(acc, kk, T, w)
        s = tok * base / sp
        mem, total_mem, dmem = speculative_memory(dep, B, T, float(context))
        ok = total_mem <= mem.capacity_bytes
        rec = dict(k=np.full(n, kk), T=np.full(n, T), w=np.full(n, w), s=s, tok=np.full(n, tok), dr=dr, ve=ve,
                   ov=ov, sp=sp, vb=vb, mem=total_mem, ok=ok, dmem=dmem, tmem=mem)
        if best is None:
            best = rec
            continue
        better = (ok & ~best["ok"]) | ((ok == best["ok"]) & (s > best["s"]))
        for key in ("k", "T", "w", "s", "tok", "dr", "ve", "ov", "sp", "vb", "mem", "ok", "dmem"):
            if isinstance(best[key], np.ndarray):
                best[key] = np.where(better, rec[key], best[key])
    assert best is not None
    base_mem = memory_use(target, hw, eng, p, par, B, 1, float(context))
    base_ok, _ = base_mem.messages(hw.name)
    msgs = []
    for i in range(n):
        if best["ok"][i]:
            msgs.append("")
        else:
            msgs.append(f"does not fit with speculation: needs {best['mem'][i] / 1e9:.1f} GB per GPU (target weights "
                        f"{base_mem.weights_bytes / 1e9:.1f} + KV {best['tmem'].kv_bytes[i] / 1e9:.1f} + draft "
                        f"{best['dmem'][i] / 1e9:.2f} + activations {best['tmem'].activation_bytes[i] / 1e9:.1f}), "
                        f"{hw.name} x {eng.gpu_memory_fraction:g} gives {base_mem.capacity_bytes / 1e9:.1f} GB")
    if target.max_position and context + int(best["T"].max()) > target.max_position:
        best["ok"][:] = False
        base_ok = np.zeros_like(base_ok)
        msgs = [f"context {context} + {int(best['T'].max())} tokens exceeds {target.name}'s max_position_embeddings "
                f"{target.max_position}"] * n

    # Break-even acceptance for the chosen candidate at each batch.
    from scipy.optimize import brentq   # lazy: keeps `import simulator` fast
    be = np.full(n, np.nan)
    for i in range(n):
        need = best["sp"][i] / base[i]
        kk, T, w = int(best["k"][i]), int(best["T"][i]), int(best["w"][i])
        f = lambda a: expected_tokens_for(acc.with_alpha(a), kk, T, w) - need  # noqa: E731
        if f(0.0) >= 0:
            be[i] = 0.0
        elif f(ALPHA_MAX) > 0:
            be[i] = brentq(f, 0.0, ALPHA_MAX, xtol=1e-10)
    s = best["s"]
    ok = best["ok"]
    pays = np.where(ok & (s >= 1.0))[0]
    crossover = int(B[pays].max()) if pays.size else None
    # Largest feasible batch: memory is affine in B at fixed q, L.
    def bmax(mem_at_1: float, mem_at_2: float, cap: float) -> int:
        per = mem_at_2 - mem_at_1
        fixed = mem_at_1 - per
        return int(max(0, np.floor((cap - fixed) / per))) if per > 0 else 0
    one, two = np.array([1.0]), np.array([2.0])
    cap = base_mem.capacity_bytes
    mb = memory_use(target, hw, eng, p, par, one, 1, float(context)).total_bytes[0], \
        memory_use(target, hw, eng, p, par, two, 1, float(context)).total_bytes[0]
    Tm = float(best["T"].max())
    ms = speculative_memory(dep, one, Tm, float(context))[1][0], speculative_memory(dep, two, Tm, float(context))[1][0]
    gpus = tp
    tokens = best["tok"]
    scen = {"hardware": hw.name, "model": target.name, "method": method, "drafter": drafter.description,
            "draft_model": drafter.shape.name if drafter.shape is not None else None, "engine": eng.name,
            "tp": tp, "ep": ep, "n_gpus": gpus, "precision": p.weights, "expert_precision": p.expert_dtype,
            "draft_precision": dp.weights, "kv_precision": p.kv, "context": int(context),
            "k": "auto" if auto else int(k), "k_max": int(kmax_eff), "tree_tokens": tree_tokens,
            "tree_branching": tree_branching, "acceptance": acc.source, "acceptance_alpha": acc.alpha,
            "acceptance_kind": acc.kind, "draft_kv_window": None if drafter.kv_window == INF_WINDOW
            else int(drafter.kv_window), "overlap": overlap}
    notes = ("speedup at a fixed batch is both the per-token latency ratio and the throughput ratio",)
    return SpeedupResult(
        scenario=scen, batch=B, k=best["k"].astype(int), tree_tokens=best["T"].astype(int), speedup=s,
        tokens_per_step=tokens, base_step_s=base, spec_step_s=best["sp"], draft_s=best["dr"], verify_s=best["ve"],
        overhead_s=best["ov"], tokens_per_s_per_gpu=B * tokens / best["sp"] / gpus,
        tokens_per_s_per_user=tokens / best["sp"], base_tokens_per_s_per_gpu=B / base / gpus,
        base_tokens_per_s_per_user=1.0 / base, verify_bound=tuple(BOUNDS[int(i)] for i in best["vb"]), memory_bytes=best["mem"], feasible=ok, base_feasible=base_ok,
        message=tuple(msgs), break_even_acceptance=be, crossover_batch=crossover,
        max_batch_base=bmax(mb[0], mb[1], cap), max_batch_spec=bmax(ms[0], ms[1], cap), notes=notes)
