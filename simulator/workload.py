"""One forward pass as a table of ops: FLOPs, HBM bytes and collective bytes, for any (B, q, L).

Every quantity of an op is a linear combination of a few features of the grid point, so one symbolic table (built
once per model, precision and parallelism) prices prefill (q = prompt), decode (q = 1) and verify (q = k + 1 or a tree
of T tokens) at any batch B and cached context L. Features, per point and per op (`window`, MoE `E`, `k` are per op):

    F_ONE    1
    F_B      B                                  sequences
    F_T      T = B*q                            tokens in the pass
    F_BL     B*Lw,  Lw = min(L, window)          cached keys read (KV cache read once per sequence for all q queries)
    F_TL     T*Lw                               query-key pairs against the cache
    F_CAUSAL B*q*(q+1)/2                        causal query-key pairs among the q new tokens (capped at the window)
    F_U      1 - (1 - k/E)^T                    fraction of routed experts touched by T tokens (uniform routing)

`flops = cf @ f`, `hbm_bytes = cb @ f`, `wire_bytes = cc @ f` (bytes one rank puts on the scale-up link).
Pure Python/numpy; no numba here. This module is the only place FLOP and byte formulas live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import ScenarioError
from .model import ModelShape
from .units import DTYPE_BYTES

F_ONE, F_B, F_T, F_BL, F_TL, F_CAUSAL, F_U = range(7)
N_FEAT = 7
FAMILIES: tuple[str, ...] = ("dense", "attention", "moe", "lm_head", "collective", "overhead")
FAM = {n: i for i, n in enumerate(FAMILIES)}
COLL_NONE, COLL_ALLREDUCE, COLL_ALLTOALL, COLL_GATHER = 0, 1, 2, 3
INF_WINDOW = 1e300


@dataclass(frozen=True, slots=True)
class Precision:
    """Storage format per tensor family (real deployments mix: DeepSeek-R1 NVFP4 experts with BF16 attention).

    weights: attention and dense-FFN projections; experts: routed and shared experts (None: same as weights);
    lm_head: embedding and LM head; kv: KV cache; activations: activations and collectives.
    A GEMM runs at the tensor peak of its weight format (W8A8 at fp8, NVFP4 at fp4).
    """

    weights: str = "bf16"
    experts: str | None = None
    lm_head: str = "bf16"
    kv: str = "bf16"
    activations: str = "bf16"

    @property
    def expert_dtype(self) -> str:
        return self.experts or self.weights

    def check(self) -> None:
        for fam in ("weights", "expert_dtype", "lm_head", "kv", "activations"):
            v = getattr(self, fam)
            if v not in DTYPE_BYTES:
                raise ScenarioError(f"precision {fam} = {v!r}; expected one of {', '.join(DTYPE_BYTES)}")


@dataclass(frozen=True, slots=True)
class Parallelism:
    """tp: GPUs the instance spans (attention heads and FFNs split tp ways, Megatron-LM, Shoeybi et al. 2019 §3);
    ep: 1 (experts TP-split) or tp (each GPU holds E/ep whole experts; tokens dispatched all-to-all)."""

    tp: int = 1
    ep: int = 1

    def check(self, m: ModelShape) -> None:
        for k in ("tp", "ep"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ScenarioError(f"{k} = {v!r}; expected a positive integer")
        if m.n_layers and m.n_heads % self.tp:
            raise ScenarioError(f"tp = {self.tp} does not divide the {m.n_heads} attention heads of {m.name}")
        if self.ep > 1:
            if not m.is_moe:
                raise ScenarioError(f"ep = {self.ep} but {m.name} has no experts")
            if self.ep != self.tp:
                raise ScenarioError(f"ep = {self.ep} must be 1 or equal tp = {self.tp} (experts spread over the tp "
                                    "GPUs); attention-DP layouts are not modelled")
            if m.n_experts % self.ep:
                raise ScenarioError(f"ep = {self.ep} does not divide the {m.n_experts} experts of {m.name}")


@dataclass(frozen=True)
class OpSet:
    """Symbolic ops of one forward pass on one rank; see the module docstring for the features.

    names : tuple[str]; family : int array (index into FAMILIES); repeat : float array (layers);
    kernels : float array (kernel launches per repeat); dtype : tuple[str] (peak used for compute);
    cf, cb, cc : float arrays (n_ops, N_FEAT); window, moe_e, moe_k : float arrays; coll : int array.
    """

    names: tuple[str, ...]
    family: np.ndarray
    repeat: np.ndarray
    kernels: np.ndarray
    dtype: tuple[str, ...]
    cf: np.ndarray
    cb: np.ndarray
    cc: np.ndarray
    window: np.ndarray
    moe_e: np.ndarray
    moe_k: np.ndarray
    coll: np.ndarray
    tp: int = 1

    def __len__(self) -> int:
        return len(self.names)

    def concat(self, other: OpSet, repeat: float = 1.0, prefix: str = "") -> OpSet:
        """Ops of `self` followed by `other` run `repeat` times (e.g. k sequential draft steps)."""
        return OpSet(
            names=self.names + tuple(prefix + n for n in other.names),
            family=np.concatenate([self.family, other.family]),
            repeat=np.concatenate([self.repeat, other.repeat * repeat]),
            kernels=np.concatenate([self.kernels, other.kernels]),
            dtype=self.dtype + other.dtype,
            cf=np.concatenate([self.cf, other.cf]), cb=np.concatenate([self.cb, other.cb]),
            cc=np.concatenate([self.cc, other.cc]), window=np.concatenate([self.window, other.window]),
            moe_e=np.concatenate([self.moe_e, other.moe_e]), moe_k=np.concatenate([self.moe_k, other.moe_k]),
            coll=np.concatenate([self.coll, other.coll]), tp=self.tp)


@dataclass
class _Builder:
    rows: list[dict] = field(default_factory=list)

    def op(self, name: str, fam: str, repeat: float, *, dtype: str = "bf16", kernels: float = 1.0,
           f: dict[int, float] | None = None, b: dict[int, float] | None = None, c: dict[int, float] | None = None,
           window: float = INF_WINDOW, moe: tuple[float, float] = (0.0, 0.0), coll: int = COLL_NONE) -> None:
        if repeat <= 0:
            return
        row = dict(name=name, fam=FAM[fam], repeat=float(repeat), dtype=dtype, kernels=kernels,
                   cf=np.zeros(N_FEAT), cb=np.zeros(N_FEAT), cc=np.zeros(N_FEAT), window=window,
                   moe_e=moe[0], moe_k=moe[1], coll=coll)
        for key, dct in (("cf", f), ("cb", b), ("cc", c)):
            for i, v in (dct or {}).items():
                row[key][i] += v
        self.rows.append(row)

    def matmul(self, name: str, fam: str, repeat: float, m: int, n: float, k: float, wdtype: str, adtype: str,
               kernels: float = 1.0) -> None:
        """y[M, N] = x[M, K] W[K, N]: 2*M*N*K FLOPs (a multiply-add is 2 FLOPs); weights read once per pass at their
        own precision, activations in and out (calculon layers.Linear; Kaplan et al. 2020 §2.1)."""
        ab = DTYPE_BYTES[adtype]
        self.op(name, fam, repeat, dtype=wdtype, kernels=kernels, f={m: 2.0 * n * k},
                b={F_ONE: n * k * DTYPE_BYTES[wdtype], m: (n + k) * ab})

    def build(self, tp: int) -> OpSet:
        r = self.rows
        return OpSet(
            names=tuple(x["name"] for x in r), family=np.array([x["fam"] for x in r], dtype=np.int64),
            repeat=np.array([x["repeat"] for x in r]), kernels=np.array([x["kernels"] for x in r], dtype=float),
            dtype=tuple(x["dtype"] for x in r),
            cf=np.array([x["cf"] for x in r]).reshape(len(r), N_FEAT),
            cb=np.array([x["cb"] for x in r]).reshape(len(r), N_FEAT),
            cc=np.array([x["cc"] for x in r]).reshape(len(r), N_FEAT),
            window=np.array([x["window"] for x in r], dtype=float), moe_e=np.array([x["moe_e"] for x in r]),
            moe_k=np.array([x["moe_k"] for x in r]), coll=np.array([x["coll"] for x in r], dtype=np.int64), tp=tp)


def kv_heads_per_rank(m: ModelShape, tp: int) -> float:
    """KV heads one rank holds: Hkv/tp, or 1 (replicated) when tp > Hkv (vLLM QKVParallelLinear)."""
    return max(1.0, m.n_kv_heads / tp)


def kv_elems_per_token_layer_rank(m: ModelShape, tp: int) -> float:
    """KV elements per token per layer on one rank. MLA's latent is shared by all heads, so every rank keeps all of
    it."""
    if m.is_mla:
        return float(m.kv_elems_per_token_layer)
    return 2.0 * kv_heads_per_rank(m, tp) * m.d_head


def forward_pass(m: ModelShape, precision: Precision | None = None, par: Parallelism | None = None,
                 logits: str = "all") -> OpSet:
    """Ops of one forward pass of `m` on one of `par.tp` ranks, for B sequences of q new tokens over L cached ones.

    logits: "all" (an LM-head row for every query token: decode and verify) or "last" (one per sequence: prefill).
    """
    p = precision or Precision()
    par = par or Parallelism()
    p.check()
    par.check(m)
    if logits not in ("all", "last"):
        raise ScenarioError(f"logits = {logits!r}; expected 'all' or 'last'")
    tp = par.tp
    d, hr = m.d_model, m.n_heads / tp
    wd, ed, ad, kvb = p.weights, p.expert_dtype, p.activations, DTYPE_BYTES[p.kv]
    ab = DTYPE_BYTES[ad]
    g = _Builder()
    tok = F_T if logits == "all" else F_B
    lm_tokens = tok

    # Embedding gather (vocab-parallel: each rank reads the rows it owns) and, for EAGLE heads, the input FC.
    if not m.n_medusa_heads:
        g.op("embedding", "lm_head", 1, dtype=p.lm_head, kernels=1,
             b={F_T: d * DTYPE_BYTES[p.lm_head] / tp + d * ab})
    if m.fc_in_factor:
        g.matmul("fc", "dense", 1, F_T, d / tp, m.fc_in_factor * d, wd, ad)

    L = m.n_layers
    if L:
        # ---- attention projections ------------------------------------------------------------------------------
        if m.is_mla:
            # DeepSeek-V2 §2.1 in the weight-absorbed form used at decode (W_UK folded into q, W_UV into the output):
            # q_a and kv_a are replicated across TP ranks, q_b / kv_b / o split by heads (vLLM MLA).
            qd = m.qk_nope_head_dim + m.qk_rope_head_dim
            if m.q_lora_rank:
                g.matmul("q_a_proj", "dense", L, F_T, m.q_lora_rank, d, wd, ad, kernels=2)
                g.matmul("q_b_proj", "dense", L, F_T, hr * qd, m.q_lora_rank, wd, ad, kernels=2)
            else:
                g.matmul("q_proj", "dense", L, F_T, hr * qd, d, wd, ad, kernels=2)
            g.matmul("kv_a_proj", "dense", L, F_T, m.kv_lora_rank + m.qk_rope_head_dim, d, wd, ad, kernels=2)
            g.matmul("kv_b_absorbed", "dense", L, F_T, hr * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank,
                     wd, ad, kernels=2)
            g.matmul("o_proj", "dense", L, F_T, d, hr * m.v_head_dim, wd, ad)
            # Absorbed scores over the latent (kv_lora + rope) and values in the latent (kv_lora), per head.
            flops_pair = 2.0 * hr * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * hr * m.kv_lora_rank
            io_tok = hr * (m.kv_lora_rank + m.qk_rope_head_dim + m.kv_lora_rank) * ab
        else:
            hkv = kv_heads_per_rank(m, tp)
            g.matmul("qkv_proj", "dense", L, F_T, (hr + 2 * hkv) * m.d_head, m.attn_in_factor * d, wd, ad, kernels=3)
            g.matmul("o_proj", "dense", L, F_T, d, hr * m.d_head, wd, ad)
            # QK^T and PV: 2 FLOPs per multiply-add, d_head each, per head (FlashAttention-2, Dao 2023 §3.3).
            flops_pair = 4.0 * hr * m.d_head
            io_tok = 2.0 * hr * m.d_head * ab            # read q, write o
        kv_tok = kv_elems_per_token_layer_rank(m, tp) * kvb
        # ---- attention core: full-context layers and windowed (sliding / chunked) layers -----------------------
        for nl, win, tag in ((L - m.n_window_layers, INF_WINDOW, "attention"),
                             (m.n_window_layers, float(m.window or INF_WINDOW), "attention_window")):
            g.op(tag, "attention", nl, dtype="bf16", kernels=2, window=win,
                 f={F_TL: flops_pair, F_CAUSAL: flops_pair},
                 b={F_BL: kv_tok, F_T: kv_tok + io_tok})
        # ---- FFN: dense layers, then MoE layers ------------------------------------------------------------------
        nmat = 2 if m.gated_mlp else 1
        g.matmul("ffn_up", "dense", m.n_dense_layers, F_T, nmat * m.d_ff / tp, d, wd, ad, kernels=2)
        g.matmul("ffn_down", "dense", m.n_dense_layers, F_T, d, m.d_ff / tp, wd, ad, kernels=2)
        if m.is_moe:
            nm, E, k = m.n_moe_layers, float(m.n_experts), float(m.top_k)
            g.matmul("router", "moe", nm, F_T, E, d, "bf16", ad, kernels=2)
            if m.n_shared_experts:
                sw = m.n_shared_experts * m.d_ff_shared / tp
                g.matmul("shared_up", "moe", nm, F_T, nmat * sw, d, ed, ad)
                g.matmul("shared_down", "moe", nm, F_T, d, sw, ed, ad)
            # Routed experts: FLOPs follow the top_k assignments (T*k tokens); weights follow the distinct experts
            # touched, E*(1 - (1 - k/E)^T) under uniform routing, each read once; per rank 1/tp of that
            # (TP-split experts, or E/ep whole experts with ep == tp: the same bytes).
            pe = (nmat + 1) * d * m.d_ff_expert
            g.op("experts", "moe", nm, dtype=ed, kernels=4, moe=(E, k),
                 f={F_T: 2.0 * k * pe / tp},
                 b={F_U: E * pe * DTYPE_BYTES[ed] / tp, F_T: k * (2 * d + (nmat + 1) * m.d_ff_expert / tp) * ab})
        # ---- collectives (Megatron-LM: one all-reduce after attention, one after the FFN, per layer) ------------
        if tp > 1:
            ring = 2.0 * (tp - 1) / tp                    # ring all-reduce: each rank sends 2(n-1)/n of the buffer
            # Under EP the MoE layer keeps its all-reduce: attention is tensor-parallel, so every rank needs every
            # token's output back, and TP-split shared experts need their partial sums reduced.
            n_ar = L + m.n_dense_layers + m.n_moe_layers
            g.op("allreduce", "collective", n_ar, kernels=1, c={F_T: ring * d * ab}, coll=COLL_ALLREDUCE)
            if par.ep > 1 and m.is_moe:
                # Expert parallelism: dispatch and combine all-to-all; each rank routes its T/ep tokens' k copies,
                # (ep-1)/ep of them leaving the rank (DeepEP-style, DeepSeek-V3 tech report §3.2.2).
                a2a = (par.ep - 1) / par.ep * m.top_k * d * ab / par.ep
                g.op("alltoall", "collective", 2 * m.n_moe_layers, kernels=1, c={F_T: a2a}, coll=COLL_ALLTOALL)
            g.op("embed_allreduce", "collective", 1, kernels=1, c={F_T: ring * d * ab}, coll=COLL_ALLREDUCE)

    # ---- Medusa heads (Cai et al. 2024, §2.1.1): per head ResBlocks and an LM head on the last hidden state ------
    if m.n_medusa_heads:
        nh = m.n_medusa_heads
        g.matmul("medusa_resblock", "dense", nh * m.n_medusa_layers, F_T, d / tp, d, wd, ad, kernels=2)
        g.matmul("medusa_lm_head", "lm_head", nh, lm_tokens, m.vocab_size / tp, d, p.lm_head, ad, kernels=2)
    else:
        g.matmul("lm_head", "lm_head", 1, lm_tokens, m.lm_vocab / tp, d, p.lm_head, ad, kernels=2)
        if tp > 1:   # logits gathered to the sampling rank
            g.op("logits_gather", "collective", 1, kernels=1,
                 c={lm_tokens: (tp - 1) / tp * m.lm_vocab * ab}, coll=COLL_GATHER)
    return g.build(tp)


# ---- evaluation at concrete points (numpy; the numba kernel in roofline.py computes the same) ---------------------

def features(B: np.ndarray, q: np.ndarray, L: np.ndarray, window: float, moe_e: float, moe_k: float) -> np.ndarray:
    """Feature matrix (n_points, N_FEAT) for one op's window and MoE (E, k)."""
    B, q, L = (np.asarray(x, dtype=np.float64) for x in (B, q, L))
    T = B * q
    Lw = np.minimum(L, window)
    out = np.empty(B.shape + (N_FEAT,))
    out[..., F_ONE] = 1.0
    out[..., F_B] = B
    out[..., F_T] = T
    out[..., F_BL] = B * Lw
    out[..., F_TL] = T * Lw
    out[..., F_CAUSAL] = causal_pairs(B, q, window)
    out[..., F_U] = experts_touched_fraction(T, moe_e, moe_k) if moe_e > 0 else 0.0
    return out


def causal_pairs(B, q, window: float):
    """Query-key pairs among q new tokens per sequence under causal masking, each seeing at most `window` keys."""
    B, q = np.asarray(B, dtype=np.float64), np.asarray(q, dtype=np.float64)
    qw = np.minimum(q, float(window))
    return B * (qw * (qw + 1.0) / 2.0 + (q - qw) * qw)


def experts_touched_fraction(n_tokens: np.ndarray | float, n_experts: float, top_k: float) -> np.ndarray:
    """E[distinct experts]/E for N tokens each routed to k of E experts uniformly: 1 - (1 - k/E)^N.

    (Each expert is missed by one token with probability 1 - k/E; vLLM RFC #46295 measures this growth.)
    """
    n = np.asarray(n_tokens, dtype=np.float64)
    if top_k < n_experts:
        return -np.expm1(n * math.log1p(-top_k / n_experts))
    return np.where(n > 0, 1.0, 0.0)   # every expert routed: all touched by any token, none by zero tokens


def op_totals(ops: OpSet, B: float, q: float, L: float) -> dict[str, np.ndarray]:
    """FLOPs, HBM bytes and wire bytes per op (already multiplied by `repeat`) at one point."""
    fl, by, wi = np.zeros(len(ops)), np.zeros(len(ops)), np.zeros(len(ops))
    for i in range(len(ops)):
        f = features(np.array([B]), np.array([q]), np.array([L]), ops.window[i], ops.moe_e[i], ops.moe_k[i])[0]
        fl[i], by[i], wi[i] = ops.cf[i] @ f, ops.cb[i] @ f, ops.cc[i] @ f
    return {"flops": fl * ops.repeat, "bytes": by * ops.repeat, "wire_bytes": wi * ops.repeat}


