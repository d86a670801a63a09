"""HF `config.json` -> frozen `ModelShape`, through an explicit per-`model_type` table of readers.

Supported: llama, mistral, qwen2, qwen3 (dense, GQA); qwen3_moe, mixtral, minimax_m2 (MoE); qwen3_next (Gated DeltaNet
linear attention beside gated attention and MoE: linear_attention.py); deepseek_v3 / kimi_k2 (MLA + MoE + MTP) and
deepseek_v32 / glm_moe_dsa (the same behind DeepSeek Sparse Attention); glm4_moe (GLM-4.5 / 4.6 / 4.7: GQA with
DeepSeek-V3's MoE and MTP); bailing_moe / bailing_moe_v2 (Ant Group's Ling / Ring 1.x and 2.0: GQA with routed and
shared experts); gpt_oss (MoE, alternating sliding-window attention, attention sinks); llama4 / llama4_text (MoE
interleaved with dense layers, chunked attention); EAGLE / EAGLE-3 drafter heads (one Llama layer) and Medusa heads.
Every key is read checked (config_keys); `model.load_model` reads the files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from . import config_keys as ck
from .errors import ModelConfigError
from .linear_attention import linear_fields
from .model import ModelShape
from .sparse_attention import index_fields


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


def _qwen3_next(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    # Qwen3-Next (transformers modeling_qwen3_next.py; SGLang models/qwen3_next.py): Qwen3-MoE's routed experts plus
    # one sigmoid-gated shared expert; every full_attention_interval-th layer gated softmax attention (q_proj emits the
    # query and a per-head output gate; q/k RMSNorm), the others Gated DeltaNet linear attention (Yang et al. 2024).
    sh = _qwen3_moe(cfg, src, name)
    w = ck.get(cfg, "shared_expert_intermediate_size", src, 512)     # transformers' Qwen3NextConfig default
    return replace(sh, n_shared_experts=1 if w else 0, d_ff_shared=w, shared_expert_gate=w > 0,
                   **linear_fields(cfg, src, sh.n_layers),
                   attn_output_gate=ck.get(cfg, "attn_output_gate", src, True, bool),
                   # the checkpoint ships one MTP layer its config does not declare (vLLM qwen3_next_mtp.py:
                   # getattr(config, "num_nextn_predict_layers", 1)); a gated-attention + MoE layer (drafters)
                   n_mtp_layers=ck.get(cfg, "num_nextn_predict_layers", src, 1))


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


def _bailing_moe(cfg: dict[str, Any], src: str, name: str) -> ModelShape:
    # Ling / Ring (model_type bailing_moe for BailingMoeForCausalLM and BailingMoeV2ForCausalLM; SGLang and vLLM
    # models/bailing_moe.py): fused query_key_value (bias where use_bias or use_qkv_bias), dense o_proj (bias where
    # use_bias), per-head q/k RMSNorm where use_qk_norm; MoE from layer first_k_dense_replace on (_is_layer_sparse), the
    # first layers dense of intermediate_size; num_shared_experts shared MLPs of moe_shared_expert_intermediate_size
    # each (moe_intermediate_size where absent; SGLang multiplies the key by num_shared_experts) beside the routed
    # experts; DeepSeek-style group-limited sigmoid routing (n_group / topk_group); partial RoPE (one elementwise
    # kernel: not read). The MLPs' own biases (use_bias) are not priced: no released Ling config sets it.
    if (act := ck.activation(cfg, src)) != "silu":       # BailingMoEMLP / SparseMoeBlock raise on any other
        raise ModelConfigError(f"{src}: hidden_act = {act!r}; bailing_moe runs silu only (SGLang bailing_moe.py)")
    kw = _base(cfg, src, name)
    bias = ck.get(cfg, "use_bias", src, False, bool)
    kw["qkv_bias"] = bias or ck.get(cfg, "use_qkv_bias", src, False, bool)
    kw["o_bias"] = bias
    kw["qk_norm"] = ck.get(cfg, "use_qk_norm", src, False, bool)
    _moe_common(kw, cfg, src, "num_experts", "moe_intermediate_size")
    kw["n_shared_experts"] = ck.get(cfg, "num_shared_experts", src, 0)
    kw["d_ff_shared"] = ck.get(cfg, "moe_shared_expert_intermediate_size", src, kw["d_ff_expert"],
                               lo=1 if kw["n_shared_experts"] else 0)
    first = ck.get(cfg, "first_k_dense_replace", src, 0)
    kw["n_moe_layers"] = max(0, kw["n_layers"] - first)
    if not kw["n_moe_layers"]:
        raise ModelConfigError(f"{src}: first_k_dense_replace = {first} leaves no MoE layer of num_hidden_layers = "
                               f"{kw['n_layers']}; expected first_k_dense_replace < it")
    # SGLang's BailingMoESparseMoeBlock: n_group and topk_group both 0 (their default) route over all experts; one
    # without the other fails its assert (the DeepSeek readers default topk_group to n_group, as DeepSeek's router)
    g, tg = ck.get(cfg, "n_group", src, 0), ck.get(cfg, "topk_group", src, 0)
    if not g and not tg:
        kw["n_group"], kw["topk_group"] = 1, 1
    elif not g or not tg:
        raise ModelConfigError(f"{src}: n_group = {cfg.get('n_group')!r} with topk_group = {cfg.get('topk_group')!r}; "
                               "expected both 0 (no grouping) or both set (SGLang: 0 < topk_group <= n_group)")
    else:
        kw["n_group"], kw["topk_group"] = ck.groups(cfg, src, kw["n_experts"], kw["top_k"], "num_experts")
    kw["n_mtp_layers"] = ck.get(cfg, "num_nextn_predict_layers", src, 0)
    if kw["n_mtp_layers"] > 1:          # SGLang's nextn loader: assert num_nextn_layers == 1
        raise ModelConfigError(f"{src}: num_nextn_predict_layers = {kw['n_mtp_layers']}; bailing_moe loads 0 or 1")
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
    "qwen3_next": _qwen3_next,
    "deepseek_v3": _deepseek_v3, "kimi_k2": _deepseek_v3, "deepseek_v32": _deepseek_v3, "glm_moe_dsa": _deepseek_v3,
    "glm4_moe": _glm4_moe, "bailing_moe": _bailing_moe, "bailing_moe_v2": _bailing_moe, "minimax_m2": _minimax_m2,
    "gpt_oss": _gpt_oss, "llama4": _llama4, "llama4_text": _llama4, "medusa": _medusa}
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
