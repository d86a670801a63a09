"""An engine's memory share at start-up: SGLang's rule for mem_fraction_static (and its scaling on ROCm's aiter
backend), a deployment's own share, and where the share a prediction uses came from."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .engine import EngineProfile


def sglang_memory_fraction(hbm_gib: float, tp_size: int, pp: int, dp_attention: int, method: str | None,
                           graph_bs: int | None = None) -> float:
    """SGLang's mem_fraction_static when the server is started without it (server_args.py
    _handle_gpu_memory_settings, PR #10975, read): (gpu - reserved) / gpu in MiB, rounded to 3 places, reserved =
    512 + 1.5 max(chunked_prefill_size, 2048) + 2 cuda_graph_max_bs + 1024 tp_size pp / 8, plus cuda_graph_max_bs x
    dp x 3 (x 4.5 above 300) under DP attention, at least 10 GiB on a GPU over 60 GiB, then 6 GiB for a STANDALONE
    draft model or 2 GiB for any other drafter but NGRAM. The chunk and the graph batch are the defaults of the GPU's
    memory bucket (`_sglang_buckets`) unless --cuda-graph-max-bs (`graph_bs`) is given. tp_size counts every GPU of a
    stage (under DP attention SGLang's --tp is tp x dp). At most 0 where the reserve exceeds the GPU."""
    gpu = hbm_gib * 1024.0
    chunk, bs = _sglang_buckets(gpu, tp_size)
    bs = graph_bs or bs
    reserved = 512.0 + 1.5 * max(chunk, 2048) + 2.0 * bs + 1024.0 * tp_size * pp / 8.0
    if dp_attention > 1:
        reserved += bs * dp_attention * (4.5 if bs > 300 else 3.0)
    if gpu > 60 * 1024:
        reserved = max(reserved, 10 * 1024.0)
    reserved += 0.0 if method in (None, "ngram") else 6 * 1024.0 if method == "draft" else 2 * 1024.0
    return max(round((gpu - reserved) / gpu, 3), 0.0)


def _sglang_buckets(gpu_mib: float, tp_size: int) -> tuple[int, int]:
    """(chunked_prefill_size, cuda_graph_max_bs) SGLang defaults to by GPU memory (MiB) and TP size, outside NPUs
    (the same function of server_args.py): T4-class, A10/4090-class, A100-40G/L40, H100/A100-80G, H200/H20, then
    B200/MI300 and larger."""
    small = tp_size < 4
    for top, chunk, bs in ((20, 2048, 8), (35, 2048, 24 if small else 80),
                           (60, 4096, 32 if small else 160), (90, 8192, 256 if small else 512),
                           (160, 8192, 256 if small else 512)):
        if gpu_mib < top * 1024:
            return chunk, bs
    return 16384, 512


# SGLang on ROCm scales whatever share it holds, given or computed, by 0.85 when the attention backend is aiter and the
# model's context length exceeds 8192 (model_runner.py / server_args.py: 'if attention_backend == "aiter": if
# context_len > 8192: mem_fraction_static *= 0.85', read; sgl-project/sglang PR #36656 proposes deleting it). aiter is
# its HIP default for standard attention, and for MLA only at 16 or 128 KV heads per rank (get_num_kv_heads(tp_size),
# "current aiter only support head number 16 or 128"; triton otherwise). InferenceX's MI355X scripts pass it.
AITER_SHARE, AITER_CONTEXT, AITER_MLA_HEADS = 0.85, 8192, (16, 128)


def sglang_aiter(hw: Any, par: Any, target: Any) -> bool:
    """Whether SGLang runs the deployment on ROCm's aiter attention backend with a context over AITER_CONTEXT, where it
    scales its memory share by AITER_SHARE: an AMD device, its default backend for the target (aiter, or for MLA at
    AITER_MLA_HEADS KV heads per rank of --tp = tp x dp under DP attention), and more than 8192 positions."""
    if hw.vendor != "amd" or (target.max_position or 0) <= AITER_CONTEXT:
        return False
    return not target.is_mla or max(1, target.n_kv_heads // (par.tp * _dp_attention(par, target))) in AITER_MLA_HEADS


def _dp_attention(par: Any, target: Any) -> int:
    """SGLang's DP-attention ranks: dp of an MoE (--enable-dp-attention, --tp counting tp x dp GPUs); a dense model's
    dp runs replicas (1)."""
    return par.dp if target.is_moe else 1


def with_memory(eng: EngineProfile, hw: Any, par: Any, target: Any, method: str | None, asked: float | None,
                graph_bs: int | None) -> EngineProfile:
    """The profile with the memory share a deployment runs with: its own (`asked`, --memory-fraction), else the
    engine's start-up rule for its device `hw` and layout `par` (tp, dp, pp; dp of an MoE `target` is SGLang's DP
    attention, whose --tp counts the dp ranks too), else the profile's fixed share; under SGLang's rules on an AMD
    device, that share x AITER_SHARE for a target of more than AITER_CONTEXT positions. memory_rule records where it
    came from (`memory_origin`)."""
    sg = eng.memory_rule.startswith("sglang")
    if asked is None and not sg:
        return eng
    dpa = _dp_attention(par, target)
    rule = lambda m: sglang_memory_fraction(hw.hbm_capacity_bytes / 2**30, par.tp * dpa, par.pp, dpa, m,  # noqa: E731
                                            graph_bs)
    f, plain, how = (float(asked), float(asked), "asked") if asked is not None else (rule(method), rule(None), "rule")
    if sg and sglang_aiter(hw, par, target):
        f, plain, how = round(f * AITER_SHARE, 6), round(plain * AITER_SHARE, 6), how + "+aiter"
    return replace(eng, gpu_memory_fraction=f, plain_memory_fraction=None if plain == f else plain,
                   memory_rule=f"sglang:{how}" if sg else how)


# vLLM sizes its KV cache as gpu_memory_utilization x the GPU's memory less the weights, the peak of a profiling run
# and the memory outside PyTorch (v1/worker/gpu_worker.py determine_available_memory). The profiling run's peak is its
# sampler's: logits for max_num_seqs dummy requests over the whole vocabulary on every rank (the logits are gathered),
# with the sampler's float32 copies and sort buffers. llm-d logged it on one H100 (vLLM v0.11 image, defaults:
# https://github.com/llm-d/llm-d-benchmark/blob/main/config_explorer/empirical-vllm-memory-results.md): 4.76 GiB for
# Llama-3.1-8B (vocabulary 128256), 4.84 for Llama-3.3-70B FP8 at TP2 (128256), 5.56 for Qwen3-0.6B and 5.64 for
# Qwen3-32B (151936), 7.38 for gpt-oss-20b and -120b (201088): the same for models 50x apart in size, in proportion to
# the vocabulary. The two ends give 37.7 bytes per logit of 1024 rows and 0.15 GiB besides (derived; the Qwen3 and
# Llama-70B runs are within 2 %). Rows: vLLM's default max_num_seqs, 1024 on GPUs of 70 GiB or more but A100s, else
# 256 (engine/arg_utils.py get_batch_defaults). Memory outside PyTorch (CUDA context, NCCL): 0.13 GiB at TP1, 0.55 at
# TP2 (the same log), taken as 0.55 beyond (an estimate).
VLLM_SAMPLER_BYTES_PER_LOGIT = 37.7
VLLM_PROFILE_FIXED_GIB = 0.15
VLLM_NON_TORCH_GIB = (0.13, 0.55)


def vllm_sampler_rows(hw: Any) -> int:
    """vLLM's default max_num_seqs on the device: 1024 with 70 GiB or more, not an A100; else 256."""
    return 1024 if hw.hbm_capacity_bytes >= 70 * 2**30 and "a100" not in hw.name.lower() else 256


def reserve_bytes(eng: EngineProfile, hw: Any, target: Any, tp: int, max_seqs: float | None = None) -> float:
    """What the engine sets aside at start-up beside the weights and the KV cache, bytes per GPU ([memory] reserve):
    vLLM's profiling peak (its sampler over max_num_seqs requests, `max_seqs` where the deployment sets it
    (--max-running-requests), else `vllm_sampler_rows`, and the whole vocabulary) and memory outside PyTorch, or the
    profile's figure in GiB."""
    if eng.memory_reserve_rule != "vllm":
        return eng.memory_reserve_gib * 2**30
    rows = vllm_sampler_rows(hw) if max_seqs is None else max_seqs
    sampler = VLLM_SAMPLER_BYTES_PER_LOGIT * rows * target.vocab_size
    return sampler + (VLLM_PROFILE_FIXED_GIB + VLLM_NON_TORCH_GIB[tp > 1]) * 2**30


def memory_origin(eng: EngineProfile) -> str:
    """Where the profile's memory share comes from (memory_rule, as `with_memory` records it), in words a 'does not
    fit' message ends with."""
    rule = eng.memory_rule
    aiter = (f" x {AITER_SHARE:g}, as SGLang scales any share on ROCm's aiter attention backend for a model of more "
             f"than {AITER_CONTEXT} positions") if rule.endswith("+aiter") else ""
    if "asked" in rule:
        return f"your deployment's memory_fraction, --memory-fraction{aiter}"
    head = "SGLang's start-up rule for this device, layout and drafter" if rule.startswith("sglang") else \
        "the engine profile's"
    return f"{head}{aiter}{SET_OWN}"


# The hint a 'does not fit' line ends with where the share is not the user's own (a disaggregated prefill instance,
# which runs the engine's default share whatever --memory-fraction says, replaces it: prompts.prefill_deployment).
SET_OWN = "; set your server's own with memory_fraction, --memory-fraction"


__all__ = ["AITER_CONTEXT", "AITER_MLA_HEADS", "AITER_SHARE", "SET_OWN", "VLLM_SAMPLER_BYTES_PER_LOGIT",
           "memory_origin", "reserve_bytes", "sglang_aiter", "sglang_memory_fraction", "vllm_sampler_rows",
           "with_memory"]
