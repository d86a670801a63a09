"""Which attention backend an engine runs a speculative step on, where that choice costs host time: SGLang's rule on
Hopper (engine_profiles/sglang.toml [attention]). The default backend is FlashInfer, whose per-step plan() calls and
blocking host syncs a step pays (EngineProfile.flashinfer_spec_step_s), except for an MLA target, a model type SGLang
always runs on FA3 there, and a top-k 1 chain of a model type it lists as FA3-default (is_fa3_default_architecture).
Pure data and one rule; the price is added in pricing.spec_step."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data import name_list

KEYS = ("flashinfer_architectures", "fa3_model_types", "fa3_always_model_types")


@dataclass(frozen=True, slots=True)
class AttentionPath:
    """archs: device architectures the rule applies on (none: no step runs FlashInfer's path); fa3_chain: model
    types whose top-k 1 chains get FA3; fa3_always: model types the engine puts on FA3 whatever the top-k."""

    archs: tuple[str, ...] = ()
    fa3_chain: tuple[str, ...] = ()
    fa3_always: tuple[str, ...] = ()

    def flashinfer(self, model_type: str, mla: bool, arch: str, tree: bool) -> bool:
        """Whether a speculative step of this target runs the FlashInfer path."""
        if arch not in self.archs or mla or model_type in self.fa3_always:
            return False
        return tree or model_type not in self.fa3_chain


def read_attention_path(doc: dict[str, Any], path: Path, archs: tuple[str, ...],
                        model_types: tuple[str, ...]) -> AttentionPath:
    """[attention] of a profile: each key a { value = [names], source = ... } of allowed names (absent: empty)."""
    return AttentionPath(*(name_list(doc, path, "attention", key, allowed, at_least_one=False)
                           for key, allowed in zip(KEYS, (archs, model_types, model_types))))


__all__ = ["KEYS", "AttentionPath", "read_attention_path"]
