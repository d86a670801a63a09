"""SI unit constants and bytes per element; no logic beyond the tables.

Everything inside specroof is SI (seconds, bytes, FLOP, FLOP/s, bytes/s). These constants are used once, at the
data boundary (TOML/JSON loaders), to convert the unit-suffixed keys of the data files.
"""

from __future__ import annotations

KB = 1e3
MB = 1e6
GB = 1e9
GiB = 2.0**30
TB = 1e12
TFLOPS = 1e12
US = 1e-6
MS = 1e-3

# Bytes per stored element, including block-scale overhead where the format carries one.
#   fp8: per-tensor or 128x128 block scales (DeepSeek-V3 tech report §3.3.2) add < 0.01 %: ignored.
#   fp4 = NVFP4: 4-bit E2M1 values plus one FP8 (E4M3) scale per 16 values -> 0.5 + 1/16 bytes
#         (NVIDIA blog "Introducing NVFP4", https://developer.nvidia.com/blog/introducing-nvfp4-for-efficient-and-accurate-low-precision-inference/).
#   mxfp4: 4-bit values plus one E8M0 scale per 32 values -> 0.5 + 1/32 bytes
#         (OCP Microscaling Formats v1.0, https://www.opencompute.org/documents/ocp-microscaling-formats-mx-v1-0-spec-final-pdf).
#   fp6 = MXFP6: 6-bit values plus one E8M0 scale per 32 -> 0.75 + 1/32 bytes (same OCP spec).
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp6": 0.75 + 1.0 / 32.0,
    "fp4": 0.5 + 1.0 / 16.0,
    "mxfp4": 0.5 + 1.0 / 32.0,
}

# Which tensor-core peak a GEMM with weights in this format runs at (W8A8 at the fp8 rate, NVFP4/MXFP4 at fp4).
DTYPE_PEAK: dict[str, str] = {
    "fp32": "tf32",
    "bf16": "bf16",
    "fp16": "bf16",
    "fp8": "fp8",
    "fp6": "fp6",
    "fp4": "fp4",
    "mxfp4": "fp4",
}

# Weight formats whose GEMMs also read their activations in a low-precision format (W8A8 fp8, NVFP4 W4A4): engines run
# one kernel that quantises the activations before each such GEMM (two in a fused MoE, before w13 and before w2):
# vLLM apply_w8a8_block_fp8_linear -> per_token_group_quant_fp8 and Fp8LinearOp.apply -> scaled_fp8_quant
# (vllm/model_executor/layers/quantization/utils/fp8_utils.py, w8a8_utils.py), fused_moe -> moe_kernel_quantize_input;
# SGLang -> sglang_per_token_group_quant_fp8 (python/sglang/srt/layers/quantization/fp8_utils.py). Measured on an H200
# at DeepSeek-V3's TP8 shapes: 1.3-1.8 us under graph replay at 1-16 tokens (validation/device/h200_fp8_linear.csv).
# Not in the set: mxfp4 (gpt-oss), whose experts run W4A16 on Hopper and CDNA3 (the kernel dequantises the weights),
# and fp6. Backends that fuse the quantisation into the preceding norm (AITER's fused RMSNorm-quant, TensorRT-LLM's
# NVFP4 norm) run fewer kernels than counted: an estimate of the vLLM / SGLang default path.
ACT_QUANT: frozenset[str] = frozenset({"fp8", "fp4"})

PEAK_KEYS: tuple[str, ...] = ("fp64", "tf32", "bf16", "fp8", "fp6", "fp4")
