"""What a model's published checkpoint stores its weights as (config.json's quantization_config), and the note that
tells a user who prices the model in bf16 which flag prices the checkpoint as published. Nothing is priced here: the
formats priced are the scenario's (workload.Precision)."""

from __future__ import annotations

from .model import ModelShape
from .workload import Precision

# quant_method -> (format of every quantized linear weight, or None; format of the routed experts). DeepSeek-V3 / R1,
# Kimi-K2 and MiniMax-M2.5 ship block-wise FP8 linear layers (quant_method "fp8", weight_block_size [128, 128] in
# their config.json); gpt-oss ships MXFP4 routed experts only (quant_method "mxfp4", with attention, router,
# embedding and LM head in modules_to_not_convert: its config.json). Other methods name no one format: no note.
FORMATS: dict[str, tuple[str | None, str]] = {"fp8": ("fp8", "fp8"), "mxfp4": (None, "mxfp4")}


def checkpoint_note(m: ModelShape, p: Precision) -> str:
    """'' unless every weight is priced bf16 while the checkpoint declares a format specroof names; then which flag
    prices the published checkpoint, as its config.json's quantization_config declares (found by review:
    gpt-oss-120b was priced in bf16 by default, 234 GB, where its MXFP4 checkpoint fits one 80 GB GPU). Also where
    an experts-only checkpoint (gpt-oss: MXFP4 experts, attention in modules_to_not_convert) is priced with its
    attention in the experts' format too (found by a physics audit: --precision mxfp4 priced gpt-oss-120b's
    attention weights at a quarter of their bytes, the step 23 % fast at 32k context on an H100)."""
    f = FORMATS.get(m.checkpoint_quant)
    if f is None:
        return ""
    w, e = f
    if w is None and m.is_moe and p.attention_dtype != "bf16" and p.expert_dtype == e:     # review: the attention
        return (f"the published checkpoint quantizes only the routed experts to {e}: its attention and other "
                f"weights are bf16 (--precision bf16 --expert-precision {e}); priced as given")
    if p.weights != "bf16" or p.expert_dtype != "bf16" or p.attention_dtype != "bf16":
        return ""
    if w is not None:
        return f"the published checkpoint is {w} (--precision {w})"
    if m.is_moe:
        return f"the published checkpoint's experts are {e} (--expert-precision {e})"
    return ""


__all__ = ["FORMATS", "checkpoint_note"]
