"""DeepSeek Sparse Attention (DSA): the lightning indexer and its top-k selection, priced per layer.

DSA (DeepSeek-V3.2-Exp tech report, §2.1, https://github.com/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/
DeepSeek_V3_2.pdf; also GLM-5, model_type glm_moe_dsa) puts a small indexer in front of every MLA layer: its
index_n_heads (H_I) heads of index_head_dim (d_I) score each query token against every cached token,
I_ts = sum_j w_tj ReLU(q_tj . k_s) (eq. 1), and MLA (in its MQA / weight-absorbed mode) then attends only to the
index_topk (K) best-scoring tokens (eq. 2). Per layer and rank this adds (engines: SGLang nsa_indexer.py / vLLM
deepseek_v2.py Indexer with DeepGEMM's fp8_paged_mqa_logits and FlashMLA's sparse kernels):

- projections, replicated on every TP rank (SGLang nsa_indexer.py:209-229, ReplicatedLinear for wq_b, wk and
  weights_proj): wq_b (q_lora_rank -> H_I d_I, from MLA's compressed query), wk (d_model -> d_I) and weights_proj
  (d_model -> H_I); plus a LayerNorm on k (weight and bias, d_I each);
- the key cache: one d_I-wide FP8 key per token and layer with one fp32 scale per 128 elements (SGLang
  memory_pool.py:1930, index_head_dim + index_head_dim // 128 * 4 = 132 bytes at d_I = 128), written once per new
  token and read for every score;
- the scores: 2 H_I d_I FLOPs per (query, cached token) pair over all L cached tokens (no window), written as fp32
  logits [tokens, L] and read back by the top-k kernel (SGLang nsa_indexer.py:515-527: fp8_paged_mqa_logits, then
  topk_transform), which writes K int32 indices per query token (nsa_indexer.py:601);
- MLA then gathers each query token's own K tokens (indices per query token, not per sequence), priced in
  workload._attention as a window of K tokens read once per query token.

Shared indexers (GLM-5.2's index_topk_freq / indexer_types "shared": layers that reuse another layer's top-k) are
not priced here: such a config is refused by name.
"""

from __future__ import annotations

from typing import Any

from . import config_keys as ck
from .errors import ModelConfigError

# DeepGEMM's FP8 index keys: one fp32 scale per block of 128 elements (SGLang memory_pool.py:1930; DeepSeek-V3.2-Exp
# inference/model.py Indexer: fp8 keys quantised per block_size = 128).
INDEX_SCALE_BLOCK = 128
FP32_BYTES = 4.0
INT32_BYTES = 4.0
# Kernels per layer, counted from the indexer's forward (SGLang nsa_indexer.py Indexer.forward_cuda; vLLM
# deepseek_v2.py Indexer.forward): q side wq_b GEMM, RoPE, Hadamard rotation, FP8 quantisation (4); k side wk GEMM,
# weights_proj GEMM, LayerNorm, Hadamard rotation, quantise-and-cache write (5); the logits kernel; the top-k kernel.
# An estimate: elementwise ops torch.compile fuses (concatenations, the weights scaling) are not counted.
INDEXER_Q_KERNELS, INDEXER_K_KERNELS = 4.0, 5.0


def index_fields(cfg: dict[str, Any], src: str, q_lora_rank: int) -> dict[str, int]:
    """The indexer's three keys of a DSA config (deepseek_v32, glm_moe_dsa), all required."""
    if not q_lora_rank:
        raise ModelConfigError(f"{src}: q_lora_rank = {cfg.get('q_lora_rank')!r}; DeepSeek Sparse Attention's "
                               "indexer projects MLA's compressed query (wq_b), so it needs q_lora_rank >= 1")
    freq = cfg.get("index_topk_freq", 1)
    types = cfg.get("indexer_types") or []
    if freq not in (None, 1) or (isinstance(types, list) and any(t != "full" for t in types)):
        raise ModelConfigError(f"{src}: index_topk_freq = {freq!r} / indexer_types name shared indexers (layers "
                               "reusing another layer's top-k, GLM-5.2); only a full indexer in every layer is priced")
    return dict(index_n_heads=ck.get(cfg, "index_n_heads", src, lo=1),
                index_head_dim=ck.get(cfg, "index_head_dim", src, lo=1),
                index_topk=ck.get(cfg, "index_topk", src, lo=1))


def indexer_params(d_model: int, q_lora_rank: int, heads: int, head_dim: int) -> int:
    """Parameters of one layer's indexer: wq_b, wk, weights_proj and the LayerNorm on k (weight and bias)."""
    return q_lora_rank * heads * head_dim + d_model * head_dim + d_model * heads + 2 * head_dim


def layer_indexer_params(m: Any) -> int:
    """Parameters of one layer's indexer of a model shape (model.ModelShape), 0 for dense attention: counted in its
    attention block, and replicated on every TP rank (memory.weight_bytes_per_rank), as the module docstring says."""
    return indexer_params(m.d_model, m.q_lora_rank, m.index_n_heads, m.index_head_dim) if m.index_topk else 0


def index_key_bytes(head_dim: int) -> float:
    """Bytes of one token's index key in one layer: FP8 elements and an fp32 scale per 128 (132 at d_I = 128)."""
    return head_dim + -(-head_dim // INDEX_SCALE_BLOCK) * FP32_BYTES


def indexer_ops(g: Any, m: Any, wdtype: str, adtype: str, kv_reread: float) -> None:
    """Add one forward pass's indexer ops, on every layer of `m`, to the op builder `g` (workload's).

    kv_reread: as for the MLA cache (workload.forward_pass), the share of a verify kernel's per-query re-reads of the
    index keys that reach HBM (0: read once per sequence for all its query tokens)."""
    if not m.index_topk:                # dense attention: no indexer
        return
    from .workload import F_BL, F_CAUSAL, F_T, F_TL, INF_WINDOW  # import cycle: workload imports us
    n, hi, di, key = m.n_layers, m.index_n_heads, m.index_head_dim, index_key_bytes(m.index_head_dim)
    g.matmul("indexer_q", "attention", n, F_T, hi * di, m.q_lora_rank, wdtype, adtype, kernels=INDEXER_Q_KERNELS)
    # wk and weights_proj read the same hidden state: one GEMM of d_I + H_I columns; the key is written to the cache
    g.matmul("indexer_k", "attention", n, F_T, di + hi, m.d_model, wdtype, adtype, kernels=INDEXER_K_KERNELS)
    g.op("indexer_key_write", "attention", n, kernels=0.0, b={F_T: key})
    # Scores over every cached token (and the causal new ones): q . k per head, the weighted ReLU sum (eq. 1);
    # fp32 logits written by the scoring kernel and read back by the top-k kernel.
    pair = 2.0 * hi * di + 3.0 * hi
    r = kv_reread
    g.op("indexer_score", "attention", n, kernels=1.0, window=INF_WINDOW, f={F_TL: pair, F_CAUSAL: pair},
         b={F_BL: (1.0 - r) * key, F_TL: r * key + 2.0 * FP32_BYTES, F_CAUSAL: 2.0 * FP32_BYTES})
    g.op("indexer_topk", "attention", n, kernels=1.0, b={F_T: m.index_topk * INT32_BYTES})
