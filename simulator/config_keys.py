"""Checked reads of an HF `config.json`'s keys: each value refused in one line naming the file, the key, the value
and what is allowed (a `ModelConfigError`), before it reaches a formula. `model.py` builds shapes from them.

Required and optional integers (`get`), sliding windows and chunk sizes (`window`), and the per-layer patterns of
mixed models: layer index lists (`layer_indices`: Qwen3-MoE `mlp_only_layers`, Llama-4 `moe_layers`), 0/1 flags per
layer (`layer_flags`: Llama-4 `no_rope_layers`) and layer type names (`layer_types`). Found by review (2026-12-05):
the optional keys were read with bare int()/set()/range(), so a malformed value crashed with a traceback and an absurd
one (a negative window) priced negative attention time.
"""

from __future__ import annotations

from typing import Any

from .errors import ModelConfigError

# Largest value a config key may take and still price (a model that exists is far inside each).
KEY_MAX = {**dict.fromkeys(("num_hidden_layers", "num_nextn_predict_layers", "medusa_num_heads", "medusa_num_layers"),
                           1024), "hidden_size": 1 << 20, "vocab_size": 1 << 24, "max_position_embeddings": 1 << 40,
           **dict.fromkeys(("head_dim", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"), 1 << 13),
           **dict.fromkeys(("num_attention_heads", "num_key_value_heads", "n_routed_experts", "num_local_experts",
                            "num_experts", "n_shared_experts", "num_shared_experts", "q_lora_rank", "kv_lora_rank"),
                           1 << 16),
           **dict.fromkeys(("intermediate_size", "moe_intermediate_size", "intermediate_size_mlp"), 1 << 22),
           **dict.fromkeys(("sliding_window", "attention_chunk_size", "index_topk"), 1 << 40),
           **dict.fromkeys(("index_n_heads", "index_head_dim"), 1 << 13),
           **dict.fromkeys(("linear_num_key_heads", "linear_num_value_heads"), 1 << 16),
           **dict.fromkeys(("linear_key_head_dim", "linear_value_head_dim"), 1 << 13),
           "linear_conv_kernel_dim": 1 << 10, "full_attention_interval": 1024,
           **dict.fromkeys(("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"), 1 << 22)}


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def get(cfg: dict[str, Any], key: str, src: str, default: Any = ..., kind: type = int, lo: int = 0) -> Any:
    """cfg[key] checked: an integer >= lo (and at most KEY_MAX[key]), a bool, or a str; `default` when the key is
    absent or null, else a ModelConfigError naming it as missing."""
    if key not in cfg or cfg[key] is None:
        if default is ...:
            raise ModelConfigError(f"{src}: missing key {key!r}")
        return default
    v = cfg[key]
    if kind is int:
        if not _is_int(v) or v < lo:
            raise ModelConfigError(f"{src}: {key} = {v!r}, expected an integer >= {lo}")
        if v > KEY_MAX.get(key, v):
            raise ModelConfigError(f"{src}: {key} = {v}; expected {lo}..{KEY_MAX[key]} (a model that can be priced)")
    elif kind is bool and not isinstance(v, bool):
        raise ModelConfigError(f"{src}: {key} = {v!r}, expected true or false")
    elif kind is str and not isinstance(v, str):
        raise ModelConfigError(f"{src}: {key} = {v!r}, expected a string")
    return v


def window(cfg: dict[str, Any], key: str, src: str) -> int:
    """A sliding-window or attention-chunk size in tokens: 0 where the key is absent, null, 0 or false (HF's 'no
    window'), else an integer >= 1."""
    v = cfg.get(key)
    if v is None or v is False or v == 0:
        return 0
    return get(cfg, key, src, lo=1)


def layer_indices(cfg: dict[str, Any], key: str, src: str, n: int) -> list[int] | None:
    """A list of distinct layer indices in [0, n) (None where the key is absent, null or empty)."""
    v = cfg.get(key)
    if v is None or v == []:
        return None
    if not isinstance(v, list) or not all(_is_int(i) and 0 <= i < n for i in v) or len(set(v)) < len(v):
        raise ModelConfigError(f"{src}: {key} = {v!r}; expected a list of distinct layer indices in [0, {n}) "
                               f"(num_hidden_layers = {n})")
    return v


def layer_flags(cfg: dict[str, Any], key: str, src: str, n: int) -> list[int] | None:
    """A 0/1 flag per layer, n of them (None where the key is absent, null or empty)."""
    v = cfg.get(key)
    if v is None or v == []:
        return None
    if not isinstance(v, list) or len(v) != n or not all(_is_int(i) and i in (0, 1) for i in v):
        raise ModelConfigError(f"{src}: {key} = {v!r}; expected a list of {n} flags, 0 or 1, one per layer "
                               f"(num_hidden_layers = {n})")
    return v


def groups(cfg: dict[str, Any], src: str, n_experts: int, top_k: int,
           experts_key: str = "n_routed_experts") -> tuple[int, int]:
    """DeepSeek's group-limited routing (DeepseekV3TopkRouter): n_group equal groups of experts, topk_group chosen, the
    top_k experts picked inside them; groups that do not split the experts or hold fewer than top_k cannot run.
    Returns (n_group, topk_group)."""
    g, tg = get(cfg, "n_group", src, 1, lo=1), get(cfg, "topk_group", src, cfg.get("n_group") or 1, lo=1)
    if n_experts % g:
        raise ModelConfigError(f"{src}: n_group = {g} does not divide {experts_key} = {n_experts}")
    if tg > g or tg * (n_experts // g) < top_k:
        raise ModelConfigError(f"{src}: topk_group = {tg} of n_group = {g} groups of {n_experts // g} experts cannot "
                               f"hold num_experts_per_tok = {top_k}; expected topk_group <= n_group and topk_group x "
                               "experts per group >= num_experts_per_tok")
    return int(g), int(tg)


# hidden_act names transformers knows (ACT2CLS in src/transformers/activations.py): an elementwise function whose cost
# the roofline does not see; a name outside the list is a typo or another library's config.
HF_ACTIVATIONS = ("gelu", "gelu_10", "gelu_accurate", "gelu_fast", "gelu_new", "gelu_python", "gelu_pytorch_tanh",
                  "laplace", "leaky_relu", "linear", "mish", "prelu", "quick_gelu", "relu", "relu2", "relu6",
                  "sigmoid", "silu", "swish", "tanh", "xielu")


def activation(cfg: dict[str, Any], src: str) -> str:
    """hidden_act ('silu' where absent), one of transformers' activation names."""
    act: str = get(cfg, "hidden_act", src, "silu", str)
    if act not in HF_ACTIVATIONS:     # review: "relu" and "abc" had dropped the gate matrix (a third of the FFN)
        raise ModelConfigError(f"{src}: hidden_act = {act!r}; expected one of transformers' activations "
                               f"({', '.join(HF_ACTIVATIONS)})")
    return act


def draft_vocab(cfg: dict[str, Any], src: str, vocab: int) -> int:
    """An EAGLE-3 head's draft_vocab_size: 0 (the whole vocabulary) where absent or null, else 1..vocab_size."""
    dv: int = get(cfg, "draft_vocab_size", src, 0, lo=1)
    if dv > vocab:
        raise ModelConfigError(f"{src}: draft_vocab_size = {dv} exceeds vocab_size = {vocab}; expected the head's "
                               "reduced vocabulary, at most the target's")
    return dv


# The layer types HF configs name that specroof prices (full attention, or a sliding window of `sliding_window`).
LAYER_TYPES = ("full_attention", "sliding_attention")


def layer_types(cfg: dict[str, Any], src: str, n: int, allowed: tuple[str, ...] = LAYER_TYPES) -> list[str]:
    """layer_types: one attention type name per layer ([] where absent or null), each one of `allowed`."""
    v = cfg.get("layer_types")
    if v is None:
        return []
    if not isinstance(v, list) or len(v) != n or not all(isinstance(t, str) for t in v):
        raise ModelConfigError(f"{src}: layer_types = {v!r}; expected a list of {n} attention type names, one per "
                               f"layer (num_hidden_layers = {n}), each one of {', '.join(allowed)}")
    bad = next((i for i, t in enumerate(v) if t not in allowed), None)
    if bad is not None:     # found by review: an unknown name was priced as full attention
        raise ModelConfigError(f"{src}: layer_types[{bad}] = {v[bad]!r}; expected one of {', '.join(allowed)} "
                               "(the attention types specroof prices)")
    return v


__all__ = ["HF_ACTIVATIONS", "KEY_MAX", "LAYER_TYPES", "activation", "draft_vocab", "get", "groups", "layer_flags",
           "layer_indices", "layer_types", "window"]
