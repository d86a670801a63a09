"""Which attention backend an engine runs a speculative step on, where that choice costs host time: SGLang's rule on
Hopper (engine_profiles/sglang.toml [attention]). The default backend is FlashInfer, whose per-step plan() calls and
blocking host syncs a step pays (EngineProfile.flashinfer_spec_step_s), except for an MLA target, a model type SGLang
always runs on FA3 there, and a top-k 1 chain of a model type it lists as FA3-default (is_fa3_default_architecture).
Pure data and one rule; the price is added in pricing.spec_step."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .data import check_fields
from .errors import SpecError

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
    out = []
    for key, allowed in zip(KEYS, (archs, model_types, model_types)):
        fig = doc.get("attention", {}).get(key)
        if fig is None:
            out.append(())
            continue
        where = f"{path}: [attention] {key}"
        check_fields(fig, where, frozenset(), allow_estimate=False)
        v = fig["value"]
        if not isinstance(v, list) or any(x not in allowed for x in v):
            raise SpecError(f"{where}: value = {v!r}; expected a list of names from {', '.join(allowed)}")
        out.append(tuple(v))
    return AttentionPath(*out)


__all__ = ["KEYS", "AttentionPath", "read_attention_path"]
