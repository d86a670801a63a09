"""Gated DeltaNet linear attention (Yang et al. 2024, arXiv 2412.06464), the layers of a hybrid target, per layer.

Qwen3-Next (model_type qwen3_next; transformers modeling_qwen3_next.py Qwen3NextGatedDeltaNet, SGLang and vLLM
qwen3_next.py) runs three Gated DeltaNet layers for every gated softmax-attention layer. Such a layer keeps no KV
cache: each sequence carries one fixed-size state per layer, a value head's lin_k_dim x lin_v_dim matrix S updated by
the gated delta rule, S_t = S_{t-1} alpha_t (I - beta_t k_t k_t^T) + beta_t v_t k_t^T, o_t = S_t q_t (eq. 10), and the
last lin_conv_kernel - 1 inputs of its causal conv1d over q, k and v. Per layer and rank (heads split tp ways):

- in_proj_qkvz (d -> q, k, v and the output gate z) and in_proj_ba (d -> beta and the decay of each value head),
  after the input RMSNorm; out_proj (value heads -> d) after the gated RMSNorm;
- the conv update and the recurrent update: the state read once per sequence, and written after every new token in
  decode and verify (the engines keep one per draft token so that a rejection rolls back: SGLang's MambaPool
  intermediate_ssm_state_cache, [layers, slots + 1, speculative_num_draft_tokens, HV, K, V], filled by its target-verify
  kernel with disable_state_update=True; vLLM's num_spec + 1 state slots a request, fla fused_recurrent.py), after the
  last token only in a prefill;
- where the engine copies the accepted state into the live slot after a verify (SGLang's
  scatter_mamba_states_after_mtp_verify; EngineProfile.linear_state_commit), one more state read and written.

The recurrent state's format is the engine's (EngineProfile.linear_state_bytes): fp32 under SGLang (--mamba-ssm-dtype,
default float32: docs.sglang.io "Qwen3" page; mamba_utils.py ssm_dtype = torch.float32), the model's bf16 under vLLM
(mamba_ssm_cache_dtype "auto": the state in the conv state's format, the model's); the conv window in the activations'
format (SGLang SGLANG_MAMBA_CONV_DTYPE bfloat16). A speculating sequence keeps a state per draft token, and SGLang a
live one besides (1 + q under SGLang, q under vLLM: `spec_state_copies`).
"""

from __future__ import annotations

from typing import Any

from . import config_keys as ck
from .errors import ModelConfigError
from .units import DTYPE_BYTES

FP32_STATE_BYTES = 4      # SGLang's default state format; the default of a profile that names none
# FLOPs of the gated delta rule per token and state element: the decay, S k, the rank-1 update and S q (eq. 10),
# about 7 (an estimate of the recurrent kernel's math, far below its state traffic at decode)
LINEAR_FLOPS_PER_STATE_ELEM = 7.0
# Kernels per layer (SGLang qwen3_next.py under CUDA graphs, counted from the code): input RMSNorm and the two input
# GEMMs; the split of their outputs (fused_qkvzba_split_reshape_cat) and causal_conv1d_update; one fused gating +
# recurrent kernel (fused_sigmoid_gating_delta_rule_update); the gated RMSNorm and out_proj
IN_PROJ_KERNELS, CONV_KERNELS, RECURRENT_KERNELS, OUT_KERNELS = 3, 2, 1, 2


def linear_fields(cfg: dict[str, Any], src: str, n: int) -> dict[str, Any]:
    """The linear-attention keys of a qwen3_next config: which of its n layers are Gated DeltaNet (layer_types, or all
    but every full_attention_interval-th: transformers' Qwen3NextConfig), their heads, head sizes and conv width."""
    types = ck.layer_types(cfg, src, n, ("full_attention", "linear_attention"))
    every = ck.get(cfg, "full_attention_interval", src, 4, lo=1)
    lin = sum(t == "linear_attention" for t in types) if types else sum(1 for i in range(n) if (i + 1) % every)
    hk, hv = ck.get(cfg, "linear_num_key_heads", src, lo=1), ck.get(cfg, "linear_num_value_heads", src, lo=1)
    if hv % hk:     # each query/key head serves hv / hk value heads (transformers: repeat_interleave)
        raise ModelConfigError(f"{src}: linear_num_value_heads = {hv} is not a multiple of linear_num_key_heads = "
                               f"{hk}")
    return dict(n_linear_layers=lin, lin_k_heads=hk, lin_v_heads=hv,
                lin_k_dim=ck.get(cfg, "linear_key_head_dim", src, lo=1),
                lin_v_dim=ck.get(cfg, "linear_value_head_dim", src, lo=1),
                lin_conv_kernel=ck.get(cfg, "linear_conv_kernel_dim", src, lo=1))


def linear_state_bytes_rank(m: Any, tp: int, ab: float, state_bytes: float = FP32_STATE_BYTES) -> tuple[float, float]:
    """(recurrent state, conv window) bytes one rank keeps per sequence in one linear layer: the value heads it holds
    x lin_k_dim x lin_v_dim at `state_bytes` an element, and lin_conv_kernel - 1 inputs of its conv channels at `ab`
    bytes (SGLang MambaPool: temporal and conv states, (HV / tp, V, K) and (conv_dim / tp, K - 1))."""
    state = m.lin_v_heads / tp * m.lin_k_dim * m.lin_v_dim * state_bytes
    return state, m.lin_conv_dim / tp * (m.lin_conv_kernel - 1) * ab


def spec_state_copies(q: Any, commit: bool) -> Any:
    """States a sequence keeps while speculating with q tokens a verify: one per draft token (SGLang's
    intermediate_ssm_state_cache of speculative_num_draft_tokens; vLLM's num_spec + 1 slots), and, where the engine
    commits the accepted one into a live slot (EngineProfile.linear_state_commit: SGLang), that slot too."""
    return q + (1.0 if commit else 0.0)


def linear_ops(g: Any, m: Any, tp: int, wdtype: str, adtype: str, norm_fused: bool, token_states: bool,
               state_commit: bool, state_bytes: float = FP32_STATE_BYTES) -> None:
    """Add one forward pass's linear-attention ops, on every linear layer of `m`, to the op builder `g` (workload's).

    norm_fused: the input RMSNorm rides on the previous all-reduce (Fusion.norm_allreduce; no input quantisation
    kernel then); token_states: keep the state after every token (decode, verify) rather than the last (prefill);
    state_commit: the verify pass also copies the accepted state into the live slot (one kernel over the layers);
    state_bytes: an element of the state (EngineProfile.linear_state_bytes)."""
    if not m.n_linear_layers:
        return
    from .workload import F_B, F_T  # import cycle: workload imports us
    n, ab = m.n_linear_layers, DTYPE_BYTES[adtype]
    nv, dk, dv, conv = m.lin_v_heads / tp, m.lin_k_dim, m.lin_v_dim, m.lin_conv_dim / tp
    g.matmul("lin_in_proj", "dense", n, F_T, conv + nv * dv + 2 * nv, m.d_model, wdtype, adtype,
             kernels=IN_PROJ_KERNELS - norm_fused, quant=not norm_fused)
    state, window = linear_state_bytes_rank(m, tp, ab, state_bytes)
    kept = F_T if token_states else F_B
    # io: the recurrent kernel reads q, k, v (the conv's output), beta and the decay per value head and writes o;
    # the output gate z is read by the gated norm (lin_out_proj's kernels), its bytes left out (per token, small)
    for name, kernels, keep, flops, io in (
            ("lin_conv", CONV_KERNELS, window, 2.0 * m.lin_conv_kernel * conv, 2.0 * conv * ab),
            ("lin_recurrent", RECURRENT_KERNELS, state, LINEAR_FLOPS_PER_STATE_ELEM * nv * dk * dv,
             (conv + 2 * nv + 2 * nv * dv) * ab)):
        b = {F_B: keep, F_T: io}
        b[kept] = b.get(kept, 0.0) + keep
        g.op(name, "attention", n, kernels=kernels, f={F_T: flops}, b=b)
    g.matmul("lin_out_proj", "dense", n, F_T, m.d_model, nv * dv, wdtype, adtype, kernels=OUT_KERNELS)
    if state_commit:
        g.op("lin_state_commit", "attention", n, kernels=1.0 / n, b={F_B: 2.0 * (state + window)})


__all__ = ["FP32_STATE_BYTES", "LINEAR_FLOPS_PER_STATE_ELEM", "linear_fields", "linear_ops", "linear_state_bytes_rank",
           "spec_state_copies"]
