"""User-facing error types. All are ValueError subclasses; the CLI turns them into `error: ...` and exit code 2."""

from __future__ import annotations


class SpecError(ValueError):
    """A hardware spec, engine profile or other data file is missing, malformed or out of range."""


class ModelConfigError(ValueError):
    """A model config (HF config.json) cannot be read into a ModelShape."""


class ScenarioError(ValueError):
    """An argument combination is invalid (batch <= 0, tp not dividing heads, unsupported precision, ...)."""
