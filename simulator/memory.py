"""Memory one rank holds: weights by their sharding, the KV cache, and transient activations, in bytes.

Pure Python/numpy over the same `ModelShape`, `Precision` and `Parallelism` as the op builder (`workload.py`).
"""

from __future__ import annotations

import numpy as np

from .experts import rank_batch
from .linear_attention import FP32_STATE_BYTES, linear_state_bytes_rank
from .model import ModelShape
from .sparse_attention import index_key_bytes, layer_indexer_params
from .units import DTYPE_BYTES
from .workload import INF_WINDOW, Parallelism, Precision, kv_elems_per_token_layer_rank, kv_heads_per_rank


def weight_bytes_per_rank(m: ModelShape, precision: Precision | None = None, par: Parallelism | None = None,
                          include_mtp: bool = False) -> float:
    """Weights one rank holds: projections, dense FFNs, shared experts and vocab split tp ways (each attention-DP
    group holds a full copy); routed experts spread over all tp x dp GPUs (E/ep experts per rank, each split
    tp x dp / ep ways); replicated norms, router and MLA down-projections, a head's input FC and an MTP module's
    eh_proj (whole and BF16 on every rank, as engines build them). MTP modules follow the same layout."""
    p = precision or Precision()
    par = par or Parallelism()
    tp, n, pp = par.tp, par.stage_gpus, par.pp
    c = m.param_counts()
    wb, eb, lb = DTYPE_BYTES[p.weights], DTYPE_BYTES[p.expert_dtype], DTYPE_BYTES[p.lm_head]
    attn = c["attention"] / tp
    if m.is_mla:   # q_a / kv_a are replicated, and so is a DSA layer's indexer (sparse_attention: ReplicatedLinear)
        rep = (m.d_model * (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_head_dim) + layer_indexer_params(m)) \
            * m.n_layers
        attn = (c["attention"] - rep) / tp + rep
    elif tp > m.n_kv_heads:  # replicated KV heads
        attn += m.n_attn_layers * m.attn_in_factor * m.d_model * 2 * m.d_head * (kv_heads_per_rank(m,
                                                                                 tp) - m.n_kv_heads / tp)
    moe = 0.0
    if m.is_moe:
        router = m.n_moe_layers * m.router_params()
        shared = m.n_moe_layers * m.n_shared_experts * m.ffn_params(m.d_ff_shared)
        routed = (c["moe"] - router - shared) * par.expert_slots(m) / m.n_experts   # redundant slots included
        moe = (routed / n + shared / tp) * eb + router * 2.0
    medusa_heads = m.n_medusa_heads * m.d_model * m.vocab_size   # Medusa LM heads, stored like the LM head
    # a head's input FC is whole in BF16 on every rank (workload.forward_pass), as are the MTP modules' eh_proj (below)
    bf = DTYPE_BYTES["bf16"]
    layers = attn * DTYPE_BYTES[p.attention_dtype] + (c["dense_ffn"] / tp + (c["medusa"] - medusa_heads) / tp) * wb \
        + c["fc"] * bf + c["norms"] * 2.0 + moe
    # Pipeline stages hold n_layers / pp layers each; the last stage also holds the LM head (the first the embedding).
    ends = c["lm_head"] + medusa_heads + (c["embedding"] if pp == 1 else 0.0)
    total = layers / pp + ends / tp * lb
    if include_mtp and m.n_mtp_layers:
        total += (c["mtp"] - c["mtp_eh"]) / (n if m.is_moe else tp) * eb + c["mtp_eh"] * bf
    return float(total)


def kv_bytes_per_rank(m: ModelShape, B: np.ndarray, q: np.ndarray, L: np.ndarray, precision: Precision | None = None,
                      par: Parallelism | None = None, cap: float = INF_WINDOW, state_copies=1.0,
                      state_bytes: float = FP32_STATE_BYTES) -> np.ndarray:
    """KV cache one rank holds for the instance's B sequences of L + q tokens (the busiest attention-DP group's), at
    most `cap` of them kept (a drafter's KV window); the model's own windowed layers keep at most `window` tokens. A
    hybrid model's linear-attention layers keep `state_copies` fixed-size states per sequence instead, at
    `state_bytes` an element (linear_attention: 1, or `spec_state_copies` while speculating)."""
    p = precision or Precision()
    par = par or Parallelism()
    tp = par.tp
    B, q, L = (np.asarray(x, dtype=np.float64) for x in (B, q, L))
    # The busiest attention-DP group's sequences (ceil(B / dp) at whole B: experts.dealt); a stage keeps each one's KV
    # of its n_layers / pp layers: B x layers / pp.
    B = rank_batch(B, par.dp) / par.pp
    ctx = L + q if cap >= INF_WINDOW else np.minimum(L + q, cap)
    # DSA models also keep the indexer's FP8 keys of every token (sparse_attention.index_key_bytes), on every rank
    idx = index_key_bytes(m.index_head_dim) if m.index_topk else 0.0
    per_tok_layer = kv_elems_per_token_layer_rank(m, tp) * DTYPE_BYTES[p.kv] + idx
    full = (m.n_attn_layers - m.n_window_layers) * ctx
    win = m.n_window_layers * np.minimum(ctx, m.window or np.inf)
    states = m.n_linear_layers * sum(linear_state_bytes_rank(m, tp, DTYPE_BYTES[p.activations], state_bytes)) \
        * state_copies if m.n_linear_layers else 0.0
    return B * ((full + win) * per_tok_layer + states)


def activation_bytes_per_rank(m: ModelShape, B: np.ndarray, q: np.ndarray, precision: Precision | None = None,
                              par: Parallelism | None = None, logits: str = "all") -> np.ndarray:
    """Peak transient activations of one pass: residual + widest intermediate per token, plus fp32 logits.

    An estimate (vLLM profiles this at start-up); small next to weights and KV except at prefill-sized T.
    """
    p = precision or Precision()
    par = par or Parallelism()
    tp = par.tp
    B, q = rank_batch(B, par.dp, par.pp), np.asarray(q, dtype=np.float64)   # one micro-batch
    T = B * q
    widest = max(m.d_ff, m.top_k * m.d_ff_expert, (m.n_heads * (1 + m.attn_output_gate) + 2 * m.n_kv_heads) * m.d_head,
                 m.lin_conv_dim + m.lin_v_heads * (m.lin_v_dim + 2)) / tp      # a linear layer's in_proj output
    tl = T if logits == "all" else B
    return T * (4 * m.d_model + 2 * widest) * DTYPE_BYTES[p.activations] + tl * m.lm_vocab / tp * 4.0
