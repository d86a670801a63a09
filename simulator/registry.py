"""The bundled model registry: `models/index.toml`, one entry per shipped config (where it came from and the published
parameter counts). `model.load_model` reads a bundled model through it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    same_shape: tuple[tuple[str, str], ...] = ()   # (repository, why): other repositories priced as this model

    def same_shape_why(self, repo: str) -> str:
        """Why `repo` (one of same_shape, any case) is priced as this model; '' where it is not listed."""
        key = repo.strip().lower()
        return next((why for r, why in self.same_shape if r.lower() == key), "")

    @property
    def deploy_repo(self) -> str:
        """The repository to load in an engine: serve_repo where given (a head retrained for this target with the
        config's shapes), else hf_repo."""
        return self.serve_repo or self.hf_repo


def _same_shape(path: object, mid: str, v: object) -> tuple[tuple[str, str], ...]:
    """An entry's same_shape_repos: a list of {repo = "org/name", why = "..."} tables, each with both keys."""
    if v is None:
        return ()
    ok = isinstance(v, list) and all(isinstance(t, dict) and set(t) == {"repo", "why"} and all(
        isinstance(t[k], str) and t[k].strip() for k in ("repo", "why")) and "/" in t["repo"] for t in v)
    if not ok:
        raise ModelConfigError(f"{path}: [{mid}] same_shape_repos = {v!r}; expected a list of tables "
                               "{repo = \"org/name\", why = \"...\"}, each with a non-empty repo and why")
    return tuple((t["repo"].strip(), t["why"].strip()) for t in v)


def _check_repos_unique(path: object, reg: dict[str, ModelRecord]) -> None:
    """A repository names one bundled model: its hf_repo, serve_repo or a same_shape_repos entry, once."""
    seen: dict[str, str] = {}
    for r in reg.values():
        for repo in [r.hf_repo, r.serve_repo] + [x for x, _ in r.same_shape]:
            key = repo.lower()
            if key and seen.get(key, r.id) != r.id:
                raise ModelConfigError(f"{path}: repository {repo!r} is listed by both [{seen[key]}] and [{r.id}] "
                                       "(hf_repo, serve_repo or same_shape_repos); expected it in one entry")
            if key:
                seen[key] = r.id


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
            target=e.get("target", ""), serve_repo=e.get("serve_repo", ""),
            same_shape=_same_shape(path, mid, e.get("same_shape_repos")))
    _check_repos_unique(path, out)
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
    hit = next((r for r in reg.values() if key and (key in (r.hf_repo.lower(), r.serve_repo.lower())
                                                     or r.same_shape_why(key))), None)
    if hit is None:
        known = [x for r in reg.values() for x in [r.hf_repo] + [y for y, _ in r.same_shape] if x]
        raise ModelConfigError(f"model {repo!r}: no such file, and no bundled model has that Hugging Face repository"
                               f"{suggest(repo, known)}; pass a bundled id "
                               "or repository (`specroof models` lists them) or a path to a config.json")
    return hit


def same_shape_note(name: str) -> str:
    """For a repository listed under a bundled model's same_shape_repos, the line that says which bundled model
    prices it and why ('model X: priced as Y (same shape: why)'); '' for anything else (an id, a path, a bundled
    model's own repository, an unknown name: the loader reports those)."""
    if "/" not in name or name.endswith(".json") or Path(name).exists():
        return ""
    key = name.strip().lower()
    hit = next((r for r in _registry().values() if r.same_shape_why(key)), None)
    return "" if hit is None else f"model {name}: priced as {hit.id} (same shape: {hit.same_shape_why(key)})"


__all__ = ["ModelRecord", "list_models", "model_record", "record_for_repo", "same_shape_note"]
