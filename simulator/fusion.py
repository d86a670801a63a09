"""Which kernels an engine fuses on a target's decode path: the counts `workload` takes off its unfused kernel
counts (a kernel the engine runs inside another costs no per-kernel time of its own). Data from an engine profile's
[kernels] table (`FusionRule`), resolved for one model and layout (`Fusion`); no pricing here."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .data import MONTH_RE, check_fields
from .errors import SpecError
from .hardware import ARCHITECTURES
from .model import ModelShape

# GQA decode path (TensorRT-LLM, read in its PyTorch backend) and the MLA / MoE path of DeepSeek-architecture targets
# (SGLang, read in its release wheels v0.5.0rc2-v0.5.10: engine_profiles/sglang.toml [kernels]).
FUSIONS = frozenset({"rope_kv_in_attention", "act_quant_in_producer", "allreduce_norm_llama",
                     "shared_expert_in_routed", "mla_one_a_quant", "mla_bf16_absorbed_bmm", "allreduce_norm_mla"})
ALLREDUCE_FUSIONS = frozenset({"allreduce_norm_llama", "allreduce_norm_mla"})   # need peer-to-peer all-reduce


@dataclass(frozen=True, slots=True)
class Fusion:
    """Kernels an engine fuses on a target's decode path, against workload's counts (an unfused layer).

    rope_kv : RoPE and the KV-cache write run inside the attention kernel (one fewer kernel each for the QKV block and
        the attention core; on a target with a q/k norm only the KV write: TensorRT-LLM applies RoPE apart there,
        `rope_fusion=not use_qk_norm`; Llama-4's weightless L2 q/k norm is not in ModelShape, so its RoPE is
        counted fused, about 0.25 ms of a 5.4 ms Scout step, found by review);
    act_quant : the FP8 quantisation of a GEMM's input runs in the kernel that produces it (SiLU-mul for the dense
        FFN's down projection; the attention kernel for o_proj where the KV cache is FP8);
    norm_allreduce : under TP, residual add + RMSNorm and the next GEMM's input quantisation run inside the
        all-reduce kernel (the input and post-attention norms and the QKV / gate_up quantisations of a dense layer):
        TensorRT-LLM's Llama decoder layer only (its Qwen3 layer and EAGLE-3 head run the norms apart);
    shared_expert : the shared expert of a DeepSeek-architecture MoE layer runs as one more routed expert inside the
        routed kernels (or on a second stream beside them), so it adds no kernel or input quantisation of its own;
        its weights and FLOPs are priced as before;
    mla_a_quant : the fused q_a / kv_a GEMM of an MLA layer quantises its input once (counted twice otherwise);
    mla_bf16_bmm : the absorbed W_UK / W_UV batched matmuls run in BF16 on weights dequantised at load: no activation
        quantisation (two counted otherwise, one per bmm input), BF16 weight bytes;
    ar_norm : under TP within a node without attention DP, the residual add + RMSNorm after each all-reduce of an
        MLA MoE layer run inside the all-reduce kernel, no quantisation fused (TensorRT-LLM's DeepseekV3DecoderLayer,
        AllReduceFusionOp.RESIDUAL_RMS_NORM; SGLang's FlashInfer fusion): the post-attention norm (`ar_norm`) and the
        next layer's input norm (`ar_norm_next`), 2 kernels fewer per layer. Counted on every layer's input norm, so
        layer 0's (after the embedding) and those after a dense layer (TensorRT-LLM fuses a dense layer's all-reduces
        only with NVFP4) are counted fused too: 4 kernels a DeepSeek-V3 step; a dense layer keeps its post-attention
        norm. An MTP module's input norm follows its eh_proj, not an all-reduce: its drafter takes `ar_norm` only.
    """

    rope_kv: bool = False
    act_quant: bool = False
    norm_allreduce: bool = False
    shared_expert: bool = False
    mla_a_quant: bool = False
    mla_bf16_bmm: bool = False
    ar_norm: bool = False
    ar_norm_next: bool = False


@dataclass(frozen=True, slots=True)
class FusionRule:
    """An engine profile's [kernels] fusions before they meet a model: `names` (`fused`, of FUSIONS) and the hidden
    size above which the all-reduce fusion applies (`allreduce_norm_min_hidden`). `of` resolves them for one model
    and layout; the target's op sets (`target_ops`) and the drafter's (`drafters.make_drafter`) both take it."""

    names: tuple[str, ...] = ()
    norm_min_hidden: int = 0
    second_stream: bool = True    # the device runs a graph's second stream (SGLang: CUDA only, not ROCm)

    @classmethod
    def of_engine(cls, eng: Any, vendor: str, arch: str, p2p: bool = True) -> FusionRule:
        """The rule an engine profile (`engine.EngineProfile`) states, on a device of `vendor` and chip generation
        `arch`: a fusion the profile scopes to some generations (`fused_on`) only on those ('': on none); on a
        device without peer-to-peer all-reduce (`p2p` False: PCIe only) no all-reduce fusion, as TensorRT-LLM's
        fused all-reduce needs NVLink P2P and falls back to NCCL and a norm kernel."""
        on = dict(eng.fused_on)
        names = tuple(n for n in eng.fused if (n not in on or arch in on[n]) and (p2p or n not in ALLREDUCE_FUSIONS))
        return cls(names, int(eng.allreduce_norm_min_hidden), vendor == "nvidia")

    @classmethod
    def on(cls, eng: Any, hw: Any) -> FusionRule:
        """The rule on device `hw` (`hardware.Hardware`): its vendor, chip generation and peer-to-peer all-reduce,
        the one place a device's part in the fusions is read."""
        return cls.of_engine(eng, hw.vendor, hw.architecture, hw.p2p_allreduce)

    def of(self, m: ModelShape, tp: int, dp: int = 1, domain: int = 1 << 30) -> Fusion:
        """The fusions as they apply to `m` at `tp`: on a GQA target the GQA ones, the Llama all-reduce fusion only
        for a dense Llama model (model_type llama, not a draft head) under TP whose hidden size exceeds
        `norm_min_hidden` (TensorRT-LLM's LlamaDecoderLayer: enable_fusion &= hidden_size > 4096); on an MLA target
        the MLA ones: one q_a / kv_a quantisation only where q has a LoRA (q_a fused with kv_a), the shared expert
        hidden where SGLang fuses it (256 routed experts, one shared: determine_num_fused_shared_experts) or runs it
        on a second stream (CUDA graphs only; `second_stream`), the all-reduce + norm one under TP (tp > 1) within
        the scale-up domain (tp <= `domain`: SGLang enables it on one node only, TensorRT-LLM's fused all-reduce needs
        NVLink P2P and falls back to NCCL and a norm kernel across nodes) without attention DP (dp = 1: TensorRT-LLM's
        enable_fusion &= not enable_attention_dp)."""
        n = self.names
        if m.is_mla:
            fused_se = m.n_experts == 256 and m.n_shared_experts == 1
            return Fusion(shared_expert="shared_expert_in_routed" in n and m.is_moe and m.n_shared_experts > 0
                          and (fused_se or self.second_stream),
                          mla_a_quant="mla_one_a_quant" in n and m.q_lora_rank > 0,
                          mla_bf16_bmm="mla_bf16_absorbed_bmm" in n,
                          ar_norm=(ar := "allreduce_norm_mla" in n and 1 < tp <= domain and dp == 1),
                          ar_norm_next=ar)
        llama = m.model_type == "llama" and m.kind == "target" and not m.is_moe
        return Fusion("rope_kv_in_attention" in n, "act_quant_in_producer" in n,
                      "allreduce_norm_llama" in n and llama and tp > 1 and m.d_model > self.norm_min_hidden)


def without(eng: Any, names: set[str] | frozenset[str]) -> Any:
    """The engine profile (`engine.EngineProfile`) with the fusions `names` taken off its `fused`: a build that does
    not run them (a row dated before `fused_from`, a run that turned one off)."""
    return replace(eng, fused=tuple(f for f in eng.fused if f not in names)) if set(eng.fused) & set(names) else eng


def read_kernels(doc: dict[str, Any], path: Path, fused: tuple[str, ...]) -> dict[str, Any]:
    """An engine profile's [kernels] fused_from ({ value = { name = "YYYY-MM" } }: the month the engine's default
    build began to run each fusion; `specroof validate` prices a row dated before it without it) and fused_on
    ({ value = { name = ["blackwell", ...] } }: the chip generations on which the engine runs it; on others it runs
    the unfused kernels), checked against its `fused` names: the `EngineProfile` fields of the same names."""
    gens = {a for v in ARCHITECTURES.values() for a in v}
    months = _table(doc, path, "fused_from", fused, lambda v: isinstance(v, str) and MONTH_RE.fullmatch(v),
                    'a month as "YYYY-MM"')
    on = _table(doc, path, "fused_on", fused, lambda v: isinstance(v, list) and v and all(a in gens for a in v),
                f"a list of chip generations from {', '.join(sorted(gens))}")
    return {"fused_from": tuple(sorted(months.items())),
            "fused_on": tuple(sorted((k, tuple(v)) for k, v in on.items()))}


def _table(doc: dict[str, Any], path: Path, key: str, fused: tuple[str, ...], ok: Any, want: str) -> dict[str, Any]:
    """A [kernels] table of values by fusion name, each name one of the profile's `fused`, each value `ok`."""
    entry = doc.get("kernels", {}).get(key)
    if entry is None:
        return {}
    where = f"{path}: [kernels] {key}"
    check_fields(entry, where, frozenset(), allow_estimate=False)
    v = entry["value"]
    if not isinstance(v, dict) or not v:
        raise SpecError(f"{where}: value = {v!r}; expected {{ name = ... }} for names in [kernels] fused")
    for name, x in v.items():
        if name not in fused:
            raise SpecError(f"{where}: {name} = {x!r}; {name!r} is not in [kernels] fused ({', '.join(fused)})")
        if not ok(x):
            raise SpecError(f"{where}: {name} = {x!r}; expected {want}")
    return v


__all__ = ["FUSIONS", "Fusion", "FusionRule", "read_kernels", "without"]
