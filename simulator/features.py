"""An op table evaluated at concrete points in numpy: the features of each op (workload.py's F_* table) and the
FLOPs, bytes and payloads they give. The reference the numba kernel in roofline.py computes the same as."""

from __future__ import annotations

import numpy as np

from .experts import busiest_rank_fraction, experts_touched_fraction, rank_batch, routed_tokens
from .workload import F_B, F_BL, F_CAUSAL, F_ONE, F_T, F_TL, F_TPAD, F_U, N_FEAT, OpSet


def features(B: np.ndarray, q: np.ndarray, L: np.ndarray, window: float, moe_e: float, moe_k: float,
             moe_table: np.ndarray | None = None, share: float = 1.0, tile: float = 0.0, pp: int = 1,
             dp: int | None = None, moe_rho: float = 1.0) -> np.ndarray:
    """Feature matrix (n_points, N_FEAT) for one op (window, MoE (E, k, busiest-rank table, routing locality rho:
    experts.routed_tokens), batch share, stages)."""
    B, q, L = (np.asarray(x, dtype=np.float64) for x in (B, q, L))
    b = rank_batch(B, round(1.0 / share) if dp is None else dp, pp, share < 1.0)
    T = b * q
    Lw = np.minimum(L, window)
    out = np.empty(B.shape + (N_FEAT,))
    out[..., F_ONE] = 1.0
    out[..., F_B] = b
    out[..., F_T] = T
    out[..., F_BL] = b * Lw
    out[..., F_TL] = T * Lw
    out[..., F_CAUSAL] = causal_pairs(b, q, window)
    if moe_e > 0:
        u = experts_touched_fraction(routed_tokens(b, q, moe_rho), moe_e, moe_k)
        out[..., F_U] = u if moe_table is None else busiest_rank_fraction(u, moe_table[: int(moe_e) + 1])
    else:
        out[..., F_U] = 0.0
    out[..., F_TPAD] = np.ceil(T / tile) * tile if tile > 0 else T
    return out


def causal_pairs(B, q, window: float):
    """Query-key pairs among q new tokens per sequence under causal masking, each seeing at most `window` keys."""
    B, q = np.asarray(B, dtype=np.float64), np.asarray(q, dtype=np.float64)
    qw = np.minimum(q, float(window))
    return B * (qw * (qw + 1.0) / 2.0 + (q - qw) * qw)


def op_totals(ops: OpSet, B: float, q: float, L: float, tile: float = 0.0) -> dict[str, np.ndarray]:
    """FLOPs, HBM bytes and collective payload bytes per op (already multiplied by `repeat`) at one point: one
    micro-batch's pass through every pipeline stage, the head ops once."""
    fl, by, wi = np.zeros(len(ops)), np.zeros(len(ops)), np.zeros(len(ops))
    for i in range(len(ops)):
        f = features(np.array([B]), np.array([q]), np.array([L]), ops.window[i], ops.moe_e[i], ops.moe_k[i],
                     ops.moe_table[i], ops.share[i], tile, ops.pp, ops.dp, ops.moe_rho[i])[0]
        fl[i], by[i], wi[i] = ops.cf[i] @ f, ops.cb[i] @ f, ops.cc[i] @ f
    return {"flops": fl * ops.repeat, "bytes": by * ops.repeat, "payload_bytes": wi * ops.repeat}
