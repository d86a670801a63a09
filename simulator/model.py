"""Model shapes: the frozen `ModelShape` a forward pass is priced from, and loading one (a bundled id, a Hugging Face
repository a bundled entry names, or a config.json path). The per-`model_type` readers of config.json are in
hf_config.py (`shape_from_config`, re-exported here).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .data import data_dir, read_text
from .errors import ModelConfigError, ScenarioError
from .experts import SEQ_ROUTING_RHO
from .registry import ModelRecord, model_record, record_for_repo
from .sparse_attention import layer_indexer_params


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
    shared_expert_gate : bool the shared expert's output is scaled by sigmoid(x W), W of d x 1 (Qwen2-MoE, Qwen3-Next)
    expert_bias, attn_sinks : bool   gpt-oss: experts and router carry biases; per-head sink logits
    n_window_layers, window : int
        layers whose attention sees at most `window` past tokens (sliding window or chunked attention)
    n_mtp_layers : int        DeepSeek-style multi-token-prediction modules shipped with the model (DeepSeek-V3, GLM)
    n_group, topk_group : int DeepSeek's group-limited routing: a token's top_k experts come from topk_group of
                              n_group equal groups (1, 1: routing over all experts)
    index_n_heads, index_head_dim, index_topk : int  DSA's indexer; MLA over index_topk tokens (0: dense attention)
    n_linear_layers : int     hybrid models (Qwen3-Next): layers of Gated DeltaNet linear attention (Yang et al. 2024,
                              arXiv 2412.06464) in place of softmax attention; they keep a fixed-size state, no KV
    lin_k_heads, lin_v_heads, lin_k_dim, lin_v_dim, lin_conv_kernel : int
                              their query/key heads, value heads, head sizes and causal-conv1d width
    attn_output_gate : bool   gated attention (Qwen3-Next): q_proj also emits a per-head sigmoid gate on the output
    fc_in_factor : int        drafter heads: input FC of (fc_in_factor * d_model) -> d_model (EAGLE 2, EAGLE-3 3)
    attn_in_factor : int      drafter heads: q/k/v input width multiple of d_model (EAGLE-3: 2)
    draft_vocab_size : int    EAGLE-3 reduced LM-head vocabulary (0: vocab_size)
    shares_embedding, shares_lm_head : bool  heads that use the target's embedding / LM head (not own weights)
    n_medusa_heads, n_medusa_layers : int    Medusa: heads, ResBlocks per head
    kind : str                "target", "eagle-head", "eagle3-head", "medusa-head"
    checkpoint_quant : str    quant_method of config.json's quantization_config ("fp8", "mxfp4"; "" none): what the
                              published checkpoint stores (checkpoint.checkpoint_note); pricing reads Precision only
    routing_locality : float  MoE: how far a sequence's q verified tokens route independently, rho of
                              experts.routed_tokens (1: as q independent tokens; default the measured SEQ_ROUTING_RHO)
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
    shared_expert_gate: bool = False
    n_window_layers: int = 0
    window: int = 0
    n_mtp_layers: int = 0
    n_group: int = 1
    topk_group: int = 1
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    n_linear_layers: int = 0
    lin_k_heads: int = 0
    lin_v_heads: int = 0
    lin_k_dim: int = 0
    lin_v_dim: int = 0
    lin_conv_kernel: int = 0
    attn_output_gate: bool = False
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
    routing_locality: float = SEQ_ROUTING_RHO

    # ---- derived ---------------------------------------------------------------------------------------------
    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0 and self.n_moe_layers > 0

    @property
    def priced_routing_locality(self) -> float | None:
        """The routing locality its verify passes are priced at (`routing_locality`); None for a dense model."""
        return self.routing_locality if self.is_moe else None

    @property
    def n_dense_layers(self) -> int:
        return self.n_layers - self.n_moe_layers

    @property
    def n_attn_layers(self) -> int:
        """Layers with softmax attention and a KV cache: all but a hybrid model's linear-attention ones."""
        return self.n_layers - self.n_linear_layers

    @property
    def lin_conv_dim(self) -> int:
        """Channels of a Gated DeltaNet layer's causal conv1d: q and k (lin_k_heads x lin_k_dim each) and v."""
        return 2 * self.lin_k_heads * self.lin_k_dim + self.lin_v_heads * self.lin_v_dim

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
        qkv = din * (h * (1 + self.attn_output_gate) + 2 * self.n_kv_heads) * self.d_head
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

    def linear_attention_params(self) -> int:
        """One Gated DeltaNet layer (transformers modeling_qwen3_next.py Qwen3NextGatedDeltaNet): in_proj_qkvz
        (q, k, v and the output gate z), in_proj_ba (per value head beta and decay), depthwise conv1d over q/k/v,
        dt_bias and A_log per value head, the gated RMSNorm over a value head, out_proj."""
        d, nv, dv = self.d_model, self.lin_v_heads, self.lin_v_dim
        return d * (self.lin_conv_dim + nv * dv) + d * 2 * nv + self.lin_conv_dim * self.lin_conv_kernel \
            + 2 * nv + dv + nv * dv * d

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
        """The router, and the shared expert's gate where it has one (both replicated, unquantised)."""
        return self.d_model * self.n_experts + (self.n_experts if self.expert_bias else 0) \
            + (self.d_model if self.shared_expert_gate else 0)

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
        c["attention"] = self.n_attn_layers * self.attention_params() \
            + self.n_linear_layers * self.linear_attention_params()
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

    def __post_init__(self) -> None:
        # found by review: a replace() that cut n_layers but not n_linear_layers priced negative KV bytes
        if not 0 <= self.n_linear_layers <= self.n_layers:
            raise ValueError(f"{self.name}: n_linear_layers = {self.n_linear_layers}; expected 0..n_layers = "
                             f"{self.n_layers}")
        rho = self.routing_locality
        if isinstance(rho, bool) or not isinstance(rho, (int, float)) or not 0.0 <= rho <= 1.0:
            raise ValueError(f"{self.name}: routing_locality = {rho!r}; expected a number from 0 to 1")


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


def check_servable(target: ModelShape, model: Any, expert_precision: str | None, moe: bool | None,
                   routing_locality: float | None = None) -> None:
    """The target can be served as a scenario asks (`model` as it named it, its expert_precision, its hazard option
    moe and its routing_locality): a target's kind and layers, and expert options only for MoE."""
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
    if routing_locality is not None and not target.is_moe:
        raise ScenarioError(f"routing_locality (--routing-locality) = {routing_locality:g} but model {target.name} has "
                            "no experts to route to: leave it out")
    if moe is not None and moe != target.is_moe:
        raise ScenarioError(f"options moe = {str(moe).lower()} but model {target.name} "
                            f"{'routes tokens to experts' if target.is_moe else 'has no experts'}: the hazard "
                            "option moe is read from the model; leave it out")


def shape_from_config(cfg: dict[str, Any], name: str = "model", source: str = "<config>",
                      kind: str | None = None) -> ModelShape:
    """Read an HF config dict into a ModelShape (hf_config.shape_from_config, which builds ModelShape: imported
    when called, so that either module may be imported first)."""
    from .hf_config import shape_from_config as read  # import cycle: hf_config imports us
    return read(cfg, name, source, kind)


def __getattr__(name: str) -> Any:      # SUPPORTED_MODEL_TYPES lives with the readers (PEP 562)
    if name == "SUPPORTED_MODEL_TYPES":
        from .hf_config import SUPPORTED_MODEL_TYPES  # import cycle: hf_config imports us
        return SUPPORTED_MODEL_TYPES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["ModelShape", "check_servable", "load_model", "load_model_and_record", "read_config", "shape_from_config"]
