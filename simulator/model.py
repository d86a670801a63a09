"""Model shapes: HF `config.json` -> frozen `ModelShape`, through an explicit per-`model_type` table.

Supported: llama, mistral, qwen2, qwen3 (dense, GQA); qwen3_moe, mixtral, minimax_m2 (MoE); deepseek_v3 / kimi_k2
(MLA + MoE + MTP) and deepseek_v32 / glm_moe_dsa (the same behind DeepSeek Sparse Attention); glm4_moe (GLM-4.5 /
4.6 / 4.7: GQA with DeepSeek-V3's MoE and MTP); gpt_oss (MoE, alternating sliding-window attention, attention sinks);
llama4 / llama4_text (MoE interleaved with dense layers, chunked attention); EAGLE / EAGLE-3 drafter heads (one Llama
layer) and Medusa heads.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from . import config_keys as ck
from .data import data_dir, read_text
from .errors import ModelConfigError, ScenarioError
from .registry import ModelRecord, model_record, record_for_repo
from .sparse_attention import index_fields, layer_indexer_params


@dataclass(frozen=True, slots=True)
class ModelShape:
    """Architecture numbers that price a forward pass (no weights, no tokenizer).

    Attributes
    ----------
    name, model_type : str
    n_layers : int            decoder layers (0 for a Medusa head set)
    d_model : int             hidden size
    n_heads, n_kv_heads : int query heads, key/value heads (GQA: n_heads % n_kv_heads == 0)
    d_head : int              per-head dim of q/k/v (non-MLA)
    d_ff : int; gated_mlp : bool   FFN width of dense layers; SwiGLU-style (3 matrices) vs plain (2)
    vocab_size : int; tied_embeddings : bool   vocabulary; the LM head shares the embedding matrix
    qkv_bias, o_bias : bool   projection biases
    qk_norm, qk_norm_tp_reduce : bool  RMSNorm on q and k; over the TP-split projection (one all-reduce a layer)
    q_lora_rank, kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim : int
        MLA ranks (DeepSeek-V2 §2.1); kv_lora_rank == 0 means not MLA
    n_experts, top_k, n_shared_experts, d_ff_expert, d_ff_shared, n_moe_layers : int
        MoE: routed experts, experts per token, shared experts (width d_ff_shared each), expert FFN width,
        number of MoE layers (the rest are dense)
    expert_bias, attn_sinks : bool   gpt-oss: experts and router carry biases; per-head sink logits
    n_window_layers, window : int
        layers whose attention sees at most `window` past tokens (sliding window or chunked attention)
    n_mtp_layers : int        DeepSeek-style multi-token-prediction modules shipped with the model (DeepSeek-V3, GLM)
    n_group, topk_group : int DeepSeek's group-limited routing: a token's top_k experts come from topk_group of
                              n_group equal groups (1, 1: routing over all experts)
    index_n_heads, index_head_dim, index_topk : int  DSA's indexer; MLA over index_topk tokens (0: dense attention)
    fc_in_factor : int        drafter heads: input FC of (fc_in_factor * d_model) -> d_model (EAGLE 2, EAGLE-3 3)
    attn_in_factor : int      drafter heads: q/k/v input width multiple of d_model (EAGLE-3: 2)
    draft_vocab_size : int    EAGLE-3 reduced LM-head vocabulary (0: vocab_size)
    shares_embedding, shares_lm_head : bool  heads that use the target's embedding / LM head (not own weights)
    n_medusa_heads, n_medusa_layers : int    Medusa: heads, ResBlocks per head
    kind : str                "target", "eagle-head", "eagle3-head", "medusa-head"
    checkpoint_quant : str    quant_method of config.json's quantization_config ("fp8", "mxfp4"; "" none): what the
                              published checkpoint stores (checkpoint.checkpoint_note); pricing reads Precision only
    """

    name: str
    model_type: str
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    d_ff: int
    gated_mlp: bool
    vocab_size: int
    tied_embeddings: bool
    qkv_bias: bool = False
    o_bias: bool = False
    qk_norm: bool = False
    qk_norm_tp_reduce: bool = False
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    n_experts: int = 0
    top_k: int = 0
    n_shared_experts: int = 0
    d_ff_expert: int = 0
    d_ff_shared: int = 0
    n_moe_layers: int = 0
    expert_bias: bool = False
    n_window_layers: int = 0
    window: int = 0
    n_mtp_layers: int = 0
    n_group: int = 1
    topk_group: int = 1
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    attn_sinks: bool = False
    fc_in_factor: int = 0
    attn_in_factor: int = 1
    draft_vocab_size: int = 0
    shares_embedding: bool = False
    shares_lm_head: bool = False
    n_medusa_heads: int = 0
    n_medusa_layers: int = 0
    kind: str = "target"
    max_position: int = 0
    checkpoint_quant: str = ""

    # ---- derived ---------------------------------------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0 and self.n_moe_layers > 0

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def lm_vocab(self) -> int:
        """Rows of the LM head this model evaluates (the reduced draft vocabulary for EAGLE-3)."""
        return self.draft_vocab_size or self.vocab_size

    @property
    def kv_elems_per_token_layer(self) -> int:
        """KV-cache elements per token per layer: 2*Hkv*d_head (GQA), or kv_lora_rank + rope dim (absorbed MLA)."""
        if self.is_mla:
            return self.kv_lora_rank + self.qk_rope_head_dim  # DeepSeek-V2 §2.1.2: cache c_t^KV and k_t^R only
        return 2 * self.n_kv_heads * self.d_head

    # Parameter counts per component, exact for the architectures above (norm weights included, rotary buffers not).
    def attention_params(self) -> int:
        """Parameters of one attention block (projections, biases, q/k norms, sinks)."""
        d, h = self.d_model, self.n_heads
        if self.is_mla:
            qd = self.qk_nope_head_dim + self.qk_rope_head_dim
            q = (d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * h * qd) if self.q_lora_rank \
                else d * h * qd
            kv = d * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank \
                + self.kv_lora_rank * h * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv + h * self.v_head_dim * d + layer_indexer_params(self)
        din = self.attn_in_factor * d
        qkv = din * (h + 2 * self.n_kv_heads) * self.d_head
        o = h * self.d_head * d
        p = qkv + o
        if self.qkv_bias:
            p += (h + 2 * self.n_kv_heads) * self.d_head
        if self.o_bias:
            p += d
        if self.qk_norm:
            p += 2 * self.d_head
        if self.attn_sinks:
            p += h
        return p

    def ffn_params(self, width: int) -> int:
        """One FFN of hidden width `width` (3 matrices when gated)."""
        return (3 if self.gated_mlp else 2) * self.d_model * width

    def expert_params(self) -> int:
        """One routed expert (gpt-oss: plus its biases)."""
        p = self.ffn_params(self.d_ff_expert)
        if self.expert_bias:
            p += 2 * self.d_ff_expert + self.d_model
        return p

    def router_params(self) -> int:
        return self.d_model * self.n_experts + (self.n_experts if self.expert_bias else 0)

    def moe_layer_params(self, active: bool) -> int:
        """One MoE FFN block: router + shared experts + routed experts (all, or top_k when `active`)."""
        routed = (self.top_k if active else self.n_experts) * self.expert_params()
        return self.router_params() + self.n_shared_experts * self.ffn_params(self.d_ff_shared) + routed

    def medusa_params(self) -> int:
        """Medusa heads: per head, n_medusa_layers ResBlocks (d x d + bias) and an LM head d x vocab
        (Cai et al. 2024, §2.1.1; FasterDecoding/Medusa medusa_model.py)."""
        d = self.d_model
        return self.n_medusa_heads * (self.n_medusa_layers * (d * d + d) + d * self.vocab_size)

    def param_counts(self) -> dict[str, int]:
        """Parameters by component; `total` excludes MTP modules (as DeepSeek's 671B does)."""
        d = self.d_model
        c: dict[str, int] = {}
        c["embedding"] = 0 if self.shares_embedding or self.n_medusa_heads else self.vocab_size * d
        own_head = not (self.tied_embeddings or self.shares_lm_head or self.n_medusa_heads)
        c["lm_head"] = self.lm_vocab * d if own_head else 0
        c["attention"] = self.n_layers * self.attention_params()
        c["dense_ffn"] = self.n_dense_layers * self.ffn_params(self.d_ff)
        c["moe"] = self.n_moe_layers * self.moe_layer_params(active=False) if self.is_moe else 0
        c["moe_active"] = self.n_moe_layers * self.moe_layer_params(active=True) if self.is_moe else 0
        c["norms"] = self.n_layers * 2 * d + (d if self.n_layers else 0)
        c["fc"] = self.fc_in_factor * d * d
        c["medusa"] = self.medusa_params() if self.n_medusa_heads else 0
        c["mtp_eh"] = self.n_mtp_layers * 2 * d * d       # eh_proj, 2d -> d (whole and BF16 on every rank)
        c["mtp"] = c["mtp_eh"] + self.n_mtp_layers * (3 * d + self.attention_params()
                                        + (self.moe_layer_params(False) if self.is_moe else self.ffn_params(self.d_ff)))
        base = c["embedding"] + c["lm_head"] + c["attention"] + c["dense_ffn"] + c["norms"] + c["fc"] + c["medusa"]
        c["total"] = base + c["moe"]
        c["active"] = base + c["moe_active"]
        return c

    @property
    def n_params(self) -> int:
        """Total parameters (all experts; MTP modules excluded)."""
        return self.param_counts()["total"]

    @property
    def n_params_active(self) -> int:
        """Parameters used per token (top_k routed experts; embedding and LM head included)."""
        return self.param_counts()["active"]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelShape:
        return cls(**d)


# ---- HF config -> ModelShape, one reader per model_type -----------------------------------------------------------

def _base(cfg: dict[str, Any], src: str, name: str) -> dict[str, Any]:
    d, h = ck.get(cfg, "hidden_size", src, lo=1), ck.get(cfg, "num_attention_heads", src, lo=1)
    if "head_dim" not in cfg and d % h:
        raise ModelConfigError(f"{src}: hidden_size = {d} is not a multiple of num_attention_heads = {h} (no head_dim)")
    if "head_dim" not in cfg and d // h > ck.KEY_MAX["head_dim"]:
        raise ModelConfigError(f"{src}: hidden_size / num_attention_heads = {d // h}; expected a head size of at most "
                               f"{ck.KEY_MAX['head_dim']} (no head_dim)")
    hkv = ck.get(cfg, "num_key_value_heads", src, h)
    if hkv == 0 or h % hkv:
        raise ModelConfigError(f"{src}: num_attention_heads = {h} is not a multiple of num_key_value_heads = {hkv}")
    ck.activation(cfg, src)
    return dict(
        name=name, model_type=str(cfg.get("model_type")),
        n_layers=ck.get(cfg, "num_hidden_layers", src, lo=1), d_model=d, n_heads=h, n_kv_heads=hkv,
        d_head=ck.get(cfg, "head_dim", src, d // h, lo=1), d_ff=ck.get(cfg, "intermediate_size", src, lo=1),
        # Every model_type read here has a gated MLP (gate, up, down) whatever its activation: HF's LlamaMLP,
        # MistralMLP, Qwen2/3MLP, Mixtral's w1/w2/w3, DeepseekV3MLP, gpt-oss gate_up_proj, Llama4TextMLP, MiniMax-M2.
        gated_mlp=True,
        vocab_size=ck.get(cfg, "vocab_size", src, lo=1),
        tied_embeddings=ck.get(cfg, "tie_word_embeddings", src, False, bool),
        max_position=ck.get(cfg, "max_position_embeddings", src, 0, lo=1),       # absent: no limit
    )


def _dense(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    kw = _base(cfg, src, name)
    mt = kw["model_type"]
    bias = ck.get(cfg, "attention_bias", src, False, bool)
    kw["qkv_bias"] = bias or mt == "qwen2"          # Qwen2Attention: q/k/v with bias=True, o without
    kw["o_bias"] = bias
    kw["qk_norm"] = mt == "qwen3"                   # Qwen3Attention: RMSNorm on q and k per head
    sw, n = ck.window(cfg, "sliding_window", src), kw["n_layers"]
    types = ck.layer_types(cfg, src, n)
    if sw and types:
        kw["n_window_layers"] = sum(1 for t in types if t == "sliding_attention")
    elif sw and mt == "mistral":
        kw["n_window_layers"] = n
    elif sw and ck.get(cfg, "use_sliding_window", src, False, bool):
        # Qwen2/Qwen3 attention: layer i slides when use_sliding_window and i >= max_window_layers (HF modeling).
        kw["n_window_layers"] = max(0, n - ck.get(cfg, "max_window_layers", src, n))
    if kw.get("n_window_layers"):
        kw["window"] = sw
    return ModelShape(**kw)


def _moe_common(kw: dict[str, Any], cfg: dict[str, Any], src: str, experts_key: str, width_key: str) -> None:
    kw["n_experts"] = ck.get(cfg, experts_key, src, lo=1)
    kw["top_k"] = ck.get(cfg, "experts_per_token" if "experts_per_token" in cfg else "num_experts_per_tok", src)
    kw["d_ff_expert"] = ck.get(cfg, width_key, src, lo=1)
    if kw["top_k"] == 0 or kw["top_k"] > kw["n_experts"]:
        raise ModelConfigError(f"{src}: num_experts_per_tok = {kw['top_k']} must be in [1, {kw['n_experts']}]")


def _qwen3_moe(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    kw = _base(cfg, src, name)
    kw["qk_norm"] = True
    _moe_common(kw, cfg, src, "num_experts", "moe_intermediate_size")
    step = ck.get(cfg, "decoder_sparse_step", src, 1, lo=1)
    dense_only = set(ck.layer_indices(cfg, "mlp_only_layers", src, kw["n_layers"]) or [])
    # Qwen3MoeDecoderLayer: MoE when layer not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
    kw["n_moe_layers"] = sum(1 for i in range(kw["n_layers"]) if i not in dense_only and (i + 1) % step == 0)
    if not kw["n_moe_layers"]:      # review: decoder_sparse_step 0 had quietly made the model dense
        raise ModelConfigError(f"{src}: decoder_sparse_step = {step} and mlp_only_layers leave no MoE layer of "
                               f"num_hidden_layers = {kw['n_layers']}")
    return ModelShape(**kw)


def _mixtral(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    kw = _base(cfg, src, name)
    _moe_common(kw, cfg, src, "num_local_experts", "intermediate_size")
    kw["n_moe_layers"] = kw["n_layers"]
    if sw := ck.window(cfg, "sliding_window", src):
        kw["n_window_layers"], kw["window"] = kw["n_layers"], sw
    return ModelShape(**kw)


def _minimax_m2(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    # vLLM models/minimax_m2.py: Mixtral-style experts in every layer (Mixtral's reader, whose sliding_window MiniMax
    # does not set), GQA with RMSNorm on q and k over the TP-split projection (MiniMaxText01RMSNormTP, qk_norm_type
    # "per_layer"): each layer all-reduces the ranks' sums of squares. Its biased sigmoid routing costs no bytes.
    norm = ck.get(cfg, "qk_norm_type", src, "per_layer", str)
    if norm not in ("per_layer", "per_head"):
        raise ModelConfigError(f"{src}: qk_norm_type = {norm!r} must be 'per_layer' or 'per_head'")
    qk = ck.get(cfg, "use_qk_norm", src, False, bool)
    return replace(_mixtral(cfg, src, name), qk_norm=qk, qk_norm_tp_reduce=qk and norm == "per_layer")


def _deepseek_v3(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    kw = _base(cfg, src, name)
    kw["q_lora_rank"] = ck.get(cfg, "q_lora_rank", src, 0)
    kw["kv_lora_rank"] = ck.get(cfg, "kv_lora_rank", src, lo=1)
    kw["qk_rope_head_dim"] = ck.get(cfg, "qk_rope_head_dim", src, lo=1)
    kw["qk_nope_head_dim"] = ck.get(cfg, "qk_nope_head_dim", src)
    kw["v_head_dim"] = ck.get(cfg, "v_head_dim", src, lo=1)
    kw["d_head"] = kw["qk_nope_head_dim"] + kw["qk_rope_head_dim"]
    _deepseek_moe(kw, cfg, src)
    if kw["model_type"] in ("deepseek_v32", "glm_moe_dsa"):     # DSA: MLA behind a lightning indexer
        kw.update(index_fields(cfg, src, kw["q_lora_rank"]))
    return ModelShape(**kw)


def _deepseek_moe(kw: dict[str, Any], cfg: dict[str, Any], src: str) -> None:
    """DeepSeek-V3's FFN side (its MLA models, GLM-4.5's GQA ones): routed + shared experts, dense first layers, MTP."""
    _moe_common(kw, cfg, src, "n_routed_experts", "moe_intermediate_size")
    kw["n_shared_experts"] = ck.get(cfg, "n_shared_experts", src, 0)
    kw["d_ff_shared"] = kw["d_ff_expert"]            # DeepseekV3MoE: shared MLP of n_shared * moe_intermediate_size
    first = ck.get(cfg, "first_k_dense_replace", src, 0)
    freq = ck.get(cfg, "moe_layer_freq", src, 1, lo=1)
    # DeepseekV3DecoderLayer: MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
    kw["n_moe_layers"] = sum(1 for i in range(kw["n_layers"]) if i >= first and i % freq == 0)
    if not kw["n_moe_layers"]:          # found by review: a config whose routed experts no layer runs was accepted
        raise ModelConfigError(f"{src}: first_k_dense_replace = {first} (moe_layer_freq {freq}) leaves no MoE layer "
                               f"of num_hidden_layers = {kw['n_layers']}; expected first_k_dense_replace < it")
    kw["n_group"], kw["topk_group"] = ck.groups(cfg, src, kw["n_experts"], kw["top_k"])
    kw["n_mtp_layers"] = ck.get(cfg, "num_nextn_predict_layers", src, 0)


def _glm4_moe(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    # GLM-4.5 / 4.6 / 4.7 (transformers, SGLang, vLLM glm4_moe.py): GQA with biased q/k/v, unbiased o_proj (TensorRT-LLM
    # GLM4Attention dense_bias=False), per-head q/k RMSNorm where use_qk_norm (GLM-4.5, not -Air), partial RoPE (one
    # elementwise kernel: not read); DeepSeek-V3's FFN side and MTP modules (SGLang glm4_moe_nextn.py).
    kw = _base(cfg, src, name)
    kw["qkv_bias"] = ck.get(cfg, "attention_bias", src, False, bool)
    kw["qk_norm"] = ck.get(cfg, "use_qk_norm", src, False, bool)
    _deepseek_moe(kw, cfg, src)
    return ModelShape(**kw)


def _gpt_oss(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    kw = _base(cfg, src, name)
    _moe_common(kw, cfg, src, "num_local_experts", "intermediate_size")
    kw.update(n_moe_layers=kw["n_layers"], qkv_bias=True, o_bias=True, attn_sinks=True, expert_bias=True)
    types = ck.layer_types(cfg, src, kw["n_layers"])
    kw["n_window_layers"] = sum(1 for t in types if t == "sliding_attention")
    kw["window"] = ck.window(cfg, "sliding_window", src) if kw["n_window_layers"] else 0
    if kw["n_window_layers"] and not kw["window"]:
        raise ModelConfigError(f"{src}: layer_types names sliding_attention layers but sliding_window is "
                               f"{cfg.get('sliding_window')!r}; expected their window, an integer >= 1")
    return ModelShape(**kw)


def _llama4(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    text = cfg.get("text_config", cfg)
    if not isinstance(text, dict):
        raise ModelConfigError(f"{src}: text_config must be an object")
    kw = _base(text, src, name)
    kw["model_type"] = str(cfg.get("model_type"))
    _moe_common(kw, text, src, "num_local_experts", "intermediate_size")
    kw["d_ff"] = ck.get(text, "intermediate_size_mlp", src)      # dense layers
    kw["n_shared_experts"], kw["d_ff_shared"] = 1, kw["d_ff_expert"]   # Llama4TextMoe: one shared expert
    n = kw["n_layers"]
    step = ck.get(text, "interleave_moe_layer_step", src, 1, lo=1)
    moe_layers = ck.layer_indices(text, "moe_layers", src, n) or list(range(step - 1, n, step))   # HF's default
    kw["n_moe_layers"] = len(moe_layers)
    # Llama4TextConfig: no_rope_layers default [int((i + 1) % 4 != 0)]; RoPE layers use chunked attention. A chunked
    # layer attends to the (L mod chunk) + 1 tokens of its own chunk; it is priced as a window of `chunk` tokens,
    # min(L, chunk): exact below one chunk, the worst case (about 2x the average) beyond, so that step time stays
    # monotone in L.
    nrl = ck.layer_flags(text, "no_rope_layers", src, n) or [int((i + 1) % 4 != 0) for i in range(n)]
    if chunk := ck.window(text, "attention_chunk_size", src):
        kw["n_window_layers"], kw["window"] = sum(nrl), chunk
    return ModelShape(**kw)


def _medusa(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    d = ck.get(cfg, "hidden_size", src, lo=1)
    return ModelShape(
        name=name, model_type="medusa", n_layers=0, d_model=d, n_heads=1, n_kv_heads=1, d_head=d, d_ff=0,
        gated_mlp=False, vocab_size=ck.get(cfg, "vocab_size", src, lo=1), tied_embeddings=False,
        n_medusa_heads=ck.get(cfg, "medusa_num_heads", src), n_medusa_layers=ck.get(cfg, "medusa_num_layers", src, 1),
        shares_embedding=True, kind="medusa-head")


_READERS: dict[str, Callable[[dict[str, Any], str, str], ModelShape]] = {
    "llama": _dense, "mistral": _dense, "qwen2": _dense, "qwen3": _dense, "qwen3_moe": _qwen3_moe, "mixtral": _mixtral,
    "deepseek_v3": _deepseek_v3, "kimi_k2": _deepseek_v3, "deepseek_v32": _deepseek_v3, "glm_moe_dsa": _deepseek_v3,
    "glm4_moe": _glm4_moe, "minimax_m2": _minimax_m2, "gpt_oss": _gpt_oss, "llama4": _llama4, "llama4_text": _llama4,
    "medusa": _medusa}
SUPPORTED_MODEL_TYPES = tuple(sorted(_READERS))


def _head_kind(cfg: dict[str, Any]) -> str:
    arch = " ".join(cfg.get("architectures") or []).lower()
    if "eagle3" in arch or "draft_vocab_size" in cfg:
        return "eagle3-head"
    if "eagle" in arch:
        return "eagle-head"
    return "target"


def _quant_method(cfg: dict[str, Any]) -> str:
    """quantization_config.quant_method, or '' where the config declares none (or not as an object with a string)."""
    q = cfg.get("quantization_config")
    m = q.get("quant_method") if isinstance(q, dict) else None
    return m if isinstance(m, str) else ""


def shape_from_config(cfg: dict[str, Any], name: str = "model", source: str = "<config>",
                      kind: str | None = None) -> ModelShape:
    """Read an HF config dict into a ModelShape; `kind` overrides head detection (registry entries set it)."""
    if not isinstance(cfg, dict):
        raise ModelConfigError(f"{source}: expected a JSON object, got {type(cfg).__name__}")
    mt = cfg.get("model_type")
    arch = cfg.get("architectures")
    if arch is not None and not (isinstance(arch, list) and all(isinstance(a, str) for a in arch)):
        raise ModelConfigError(f"{source}: architectures = {arch!r}; expected a list of strings")
    if not isinstance(mt, str) or mt not in _READERS:
        raise ModelConfigError(f"{source}: unsupported model_type {mt!r}; supported: "
                               f"{', '.join(SUPPORTED_MODEL_TYPES)}")
    shape = replace(_READERS[mt](cfg, source, name), checkpoint_quant=_quant_method(cfg))
    kind = kind or (shape.kind if mt == "medusa" else _head_kind(cfg))
    if kind == "eagle-head":
        # EAGLE-1 (Li et al. 2024, §4.1): FC(2d -> d) over [feature; token embedding], one decoder layer,
        # the target's embedding and LM head.
        shape = replace(shape, kind=kind, fc_in_factor=2, shares_embedding=True, shares_lm_head=True)
    elif kind == "eagle3-head":
        # EAGLE-3 (Li et al. 2025, §3.2): FC(3d -> d) fusing low/mid/high target features; the layer's q/k/v take
        # [embedding; hidden] (2d); its own LM head over draft_vocab_size tokens; the target's embedding.
        shape = replace(shape, kind=kind, fc_in_factor=3, attn_in_factor=2, shares_embedding=True,
                        draft_vocab_size=ck.draft_vocab(cfg, source, shape.vocab_size))
    elif kind not in ("target", "medusa-head"):
        raise ModelConfigError(f"{source}: unknown kind {kind!r}")
    return shape


def read_config(path: Path) -> dict[str, Any]:
    """Parse a config.json; errors name the file and position."""
    try:
        doc = json.loads(read_text(path, "config.json", ModelConfigError).removeprefix("\ufeff"))   # a BOM
    except json.JSONDecodeError as e:
        raise ModelConfigError(f"{path}: malformed JSON: {e}") from None
    if not isinstance(doc, dict):
        raise ModelConfigError(f"{path}: expected a JSON object (a config.json), got a {type(doc).__name__}")
    return doc


def load_model_and_record(name_or_path: str | Path) -> tuple[ModelShape, ModelRecord | None]:
    """Load a model and, for a bundled id, its registry record (one read of the registry)."""
    s = str(name_or_path)
    if "/" in s and not s.endswith(".json") and not Path(s).exists():
        rec = record_for_repo(s)           # a bundled model's Hugging Face repository, or an error naming the nearest
    elif s.endswith(".json") or "/" in s or "\\" in s:
        p = Path(s)
        return shape_from_config(read_config(p), name=p.stem, source=str(p)), None
    else:
        rec = model_record(s)
    p = data_dir("models") / rec.file
    return shape_from_config(read_config(p), name=rec.id, source=str(p), kind=rec.kind), rec


def load_model(name_or_path: str | Path) -> ModelShape:
    """Load a bundled model by id, or any supported HF config.json by path."""
    return load_model_and_record(name_or_path)[0]


def check_servable(target: ModelShape, model: Any, expert_precision: str | None, moe: bool | None) -> None:
    """The target can be served as a scenario asks (`model` as it named it, its expert_precision and its hazard
    option moe): a target's kind and layers, and expert options only for MoE."""
    if target.kind != "target":
        raise ScenarioError(f"model {target.name} is of kind {target.kind} (a drafter), not a model that can be "
                            "served: pass it as draft with its target as model")
    if isinstance(model, str) and model.endswith(".json") and target.n_layers < 2:
        # A one-layer config is a draft head's (EAGLE-1 heads ship as a plain LlamaForCausalLM with
        # num_hidden_layers 1, e.g. yuhuili/EAGLE-LLaMA3-Instruct-8B); no served LLM has a single layer.
        raise ScenarioError(f"model {model}: num_hidden_layers = {target.n_layers}, a draft head's shape (EAGLE "
                            "heads have one layer), not a model that can be served: pass it as --draft with its "
                            "target as --model (a target has at least 2 layers)")
    if expert_precision is not None and not target.is_moe:      # found by review: ignored, yet in the header
        raise ScenarioError(f"expert_precision (--expert-precision) = {expert_precision} but model {target.name} has "
                            "no experts: leave it out, or use precision (--precision) for its weights")
    if moe is not None and moe != target.is_moe:
        raise ScenarioError(f"options moe = {str(moe).lower()} but model {target.name} "
                            f"{'routes tokens to experts' if target.is_moe else 'has no experts'}: the hazard "
                            "option moe is read from the model; leave it out")
