"""The bundled model registry: `models/index.toml`, one entry per shipped config (where it came from and the published
parameter counts). `model.load_model` reads a bundled model through it."""

from __future__ import annotations

from dataclasses import dataclass

from .data import data_dir, read_toml, suggest
from .errors import ModelConfigError


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """One `models/index.toml` entry: where the config came from and the published parameter counts."""

    id: str
    file: str
    hf_repo: str
    kind: str
    provenance: str
    constructed: bool
    params_total: float | None
    params_active: float | None
    params_source: str
    params_note: str
    target: str
    serve_repo: str = ""     # the repository engine configs name, where it is not hf_repo (see models/README.md)

    @property
    def deploy_repo(self) -> str:
        """The repository to load in an engine: serve_repo where given (a head retrained for this target with the
        config's shapes), else hf_repo."""
        return self.serve_repo or self.hf_repo


def _registry() -> dict[str, ModelRecord]:
    path = data_dir("models") / "index.toml"
    doc = read_toml(path)
    out = {}
    for mid, e in doc.items():
        if not isinstance(e, dict) or "file" not in e:
            raise ModelConfigError(f"{path}: [{mid}] needs a 'file' key")
        out[mid] = ModelRecord(
            id=mid, file=e["file"], hf_repo=e.get("hf_repo", ""), kind=e.get("kind", "target"),
            provenance=e.get("provenance", ""), constructed=bool(e.get("constructed", False)),
            params_total=e.get("params_total"), params_active=e.get("params_active"),
            params_source=e.get("params_source", ""), params_note=e.get("params_note", ""),
            target=e.get("target", ""), serve_repo=e.get("serve_repo", ""))
    return out


def list_models() -> list[str]:
    """Ids of the bundled models (read at call time)."""
    return list(_registry())


def model_record(model_id: str) -> ModelRecord:
    """The registry entry for a bundled model id."""
    reg = _registry()
    model_id = {k.lower(): k for k in reg}.get(model_id.strip().lower(), model_id)     # ids are case-insensitive
    if model_id not in reg:
        raise ModelConfigError(f"unknown model {model_id!r}{suggest(model_id, list(reg))}; "
                               f"bundled: {', '.join(reg)} (or pass a path to a config.json)")
    return reg[model_id]


def record_for_repo(repo: str) -> ModelRecord:
    """The bundled model whose Hugging Face repository is `repo` (case-insensitive; `advise` writes these ids into
    engine commands); none is one error naming the nearest repositories (one read of the registry)."""
    reg = _registry()
    key = repo.strip().lower()
    hit = next((r for r in reg.values() if key in (r.hf_repo.lower(), r.serve_repo.lower()) and key), None)
    if hit is None:
        raise ModelConfigError(f"model {repo!r}: no such file, and no bundled model has that Hugging Face repository"
                               f"{suggest(repo, [r.hf_repo for r in reg.values() if r.hf_repo])}; pass a bundled id "
                               "or repository (`specroof models` lists them) or a path to a config.json")
    return hit


__all__ = ["ModelRecord", "list_models", "model_record", "record_for_repo"]
