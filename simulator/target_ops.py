"""A target's forward-pass op sets as an engine runs them: the kernels it fuses (`fusion.FusionRule`) and, for the
verify pass, the KV-cache re-reads of its verify kernel. What `scenario.Scenario.resolve` prices; no pricing here."""

from __future__ import annotations

from .engine import EngineProfile
from .fusion import FusionRule
from .hardware import Hardware
from .model import ModelShape
from .workload import OpSet, Parallelism, Precision, forward_pass


def verify_key(eng: EngineProfile, hw: Hardware, target: ModelShape) -> tuple[float, bool]:
    """What sets a verify pass apart from a decode pass under `eng`: the share of per-query KV re-reads its verify
    kernel sends to HBM, and whether it commits a hybrid target's accepted linear-attention state afterwards."""
    return eng.verify_kv_reread(hw.architecture, target.is_mla), eng.linear_state_commit and target.n_linear_layers > 0


def verify_ops(eng: EngineProfile, hw: Hardware, target: ModelShape, p: Precision, par: Parallelism) -> OpSet | None:
    """The verify pass's own ops where they differ from a decode pass's (`verify_key`), else None."""
    r, commit = verify_key(eng, hw, target)
    return target_ops(eng, hw, target, p, par, "all", kv_reread=r, state_commit=commit) if r or commit else None


def target_ops(eng: EngineProfile, hw: Hardware, target: ModelShape, p: Precision, par: Parallelism, logits: str,
               kv_reread: float = 0.0, state_commit: bool = False) -> OpSet:
    """The target's forward-pass ops with the kernels the engine fuses (`fusion.FusionRule`)."""
    fu = FusionRule.on(eng, hw).of(target, par.tp, par.dp, hw.scaleup_domain)
    return forward_pass(target, p, par, logits, scaleup_domain=hw.scaleup_domain, kv_reread=kv_reread, fusion=fu,
                        sparse_heads=eng.sparse_mla_heads(hw.architecture), state_commit=state_commit,
                        state_bytes=eng.linear_state_bytes)


def same_ops(a: EngineProfile, b: EngineProfile, hw: Hardware) -> bool:
    """Whether two engine profiles build the same op sets on `hw`: the kernels they fuse, the heads their sparse-MLA
    kernel pads to and the format of a linear-attention state (`with_engine` resolves a deployment again when they
    differ)."""
    return (FusionRule.on(a, hw) == FusionRule.on(b, hw)
            and a.sparse_mla_heads(hw.architecture) == b.sparse_mla_heads(hw.architecture)
            and a.linear_state_bytes == b.linear_state_bytes)


__all__ = ["same_ops", "target_ops", "verify_key", "verify_ops"]
