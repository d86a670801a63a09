"""User-facing error types, all under one `SpecroofError` (a ValueError): the CLI prints any of them as one
`error: ...` line on stderr and exits with code 2. Internal invariants use `assert`, never these."""

from __future__ import annotations


class SpecroofError(ValueError):
    """Base of every error a user can cause: bad input, bad file, unwritable output."""


class SpecError(SpecroofError):
    """A hardware spec, engine profile, sweep spec or other data file is missing, malformed or out of range."""


class ModelConfigError(SpecroofError):
    """A model config (HF config.json) cannot be read into a ModelShape, or cannot be the model asked for."""


class ScenarioError(SpecroofError):
    """An input or a combination of inputs is invalid (batch <= 0, tp not dividing heads, unsupported precision)."""


class OutputError(SpecroofError):
    """An output path cannot be written (missing folder, read-only, a file where a folder is expected, full disk)."""
