"""Known hazards of speculative decoding per engine, drafter and deployment option: data, not code.

The list lives in `hazards/known_hazards.toml` (bundled) and in any file a user adds (`--hazards FILE.toml`, or
`load_hazards(files=...)`). Each `[[hazard]]` names the engines and methods it applies to and the deployment options
that must hold (`conditions`); `check` returns the entries that match. Nothing here is modelled in the speedup: a
hazard is a warning with links (engines.md §0-§4 in the project's reference notes has the background).

Conditions are `option = value` (equality) or `option_gt | _ge | _lt | _le = number` over the options in `OPTIONS`.
An option that is unknown for a call (None) never satisfies a condition.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .data import data_dir, read_toml, suggest
from .drafters import METHODS
from .errors import ScenarioError, SpecError

SEVERITIES: tuple[str, ...] = ("corruption", "lossy", "unsupported", "throughput")
"""Most to least serious: wrong output; output distribution changed by design; crash, rejected or silently off;
correct but slower than predicted."""

# option -> (type, default, meaning). bool options default to False (the flag is off); numbers default to None
# (unknown: a condition on it does not match).
OPTIONS: dict[str, tuple[type, Any, str]] = {
    "prefix_caching": (bool, False, "prefix / radix KV caching on"),
    "hybrid_model": (bool, False, "the target has Mamba / GDN (linear-attention) layers; a bundled hybrid target "
                     "(Qwen3-Next) sets it whatever the flag says"),
    "moe": (bool, False, "the target routes tokens to experts (mixture of experts); filled in from the model"),
    "mla": (bool, False, "the target's attention is multi-head latent attention (DeepSeek-V2/V3 class); filled in "
            "from the model"),
    "sparse_attention": (bool, False, "the target's attention reads the top index_topk cached tokens an indexer picks "
                         "(DeepSeek Sparse Attention: DeepSeek-V3.2, GLM-5); filled in from the model"),
    "architecture": (str, None, "the device's chip generation (ampere, hopper, blackwell, cdna3, cdna4); filled in "
                     "from the hardware"),
    "sampling": (str, None, "how requests draw their tokens (greedy, top-p: a top_p below 1 or a top_k); filled in "
                 "from --sampling"),
    "cross_node": (bool, False, "one instance's tensor-parallel or pipeline group spans more than one scale-up "
                   "domain (its collectives or stage sends cross the network); filled in from the deployment"),
    "pd_disaggregation": (bool, False, "prefill and decode run on separate instances"),
    "overlap_scheduler": (bool, False, "host work overlapped with speculative steps (SGLang SpecV2); priced: "
                          "given in a Scenario's options it acts as Scenario.spec_overlap"),
    "relaxed_acceptance": (bool, False, "TensorRT-LLM MTP relaxed acceptance for thinking"),
    "dynamic_k": (bool, False, "the written vLLM config holds a per-batch-size K table (more than one k, "
                               "counting k = 0, where it pays: engine_configs.vllm_table_pays)"),
    "batch_off": (bool, False, "the config switches speculation off at some batch sizes (k = 0, max_concurrency)"),
    "temperature": (float, None, "sampling temperature"),
    "accept_threshold": (float, None, "SGLang --speculative-accept-threshold-single (1.0 = lossless)"),
    "topk": (int, None, "draft tree branching (1 = chain)"),
    "dp": (int, None, "data-parallel ranks"),
    "pp": (int, None, "pipeline stages"),
    "tp": (int, None, "tensor-parallel GPUs"),
    "ep": (int, None, "expert-parallel GPUs"),
    "max_batch": (int, None, "largest batch (concurrent sequences) the deployment sees"),
    "max_k": (int, None, "largest draft depth k used"),
    "verify_tokens": (int, None, "largest number of tokens verified per sequence"),
    "context": (int, None, "tokens in the KV cache per sequence"),
}
# The options filled in from the deployment (its model, device and layout), never asked of a user: one place for the
# commands that check hazards (curve, advise, serve, frontier) and for the results' scenario dicts that carry them.
DEPLOYMENT_OPTIONS = ("moe", "mla", "sparse_attention", "architecture", "cross_node", "sampling")


# Options a user sets and the target may set too: true where either says so (the flag marks a target specroof reads
# without the layers, a config priced as another model; a hybrid target specroof prices sets it itself).
MODEL_ADDED_OPTIONS = ("hybrid_model",)


def deployment_options(dep: Any) -> dict[str, Any]:
    """DEPLOYMENT_OPTIONS and MODEL_ADDED_OPTIONS of a resolved deployment (scenario.Deployment)."""
    return {"moe": dep.target.is_moe, "mla": dep.target.is_mla, "sparse_attention": dep.target.index_topk > 0,
            "architecture": dep.hw.architecture, "cross_node": dep.cross_node, "sampling": dep.scenario.sampling,
            "hybrid_model": dep.target.n_linear_layers > 0}


def with_model_facts(options: Mapping[str, Any], facts: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with each of MODEL_ADDED_OPTIONS true where they or the deployment's `facts` say so."""
    out = dict(options)
    for o in MODEL_ADDED_OPTIONS:
        out[o] = bool(out.get(o)) or bool(facts.get(o))
    return out


_OPS = {"gt": lambda a, b: a > b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b}
_KEYS = {"id", "title", "severity", "engines", "methods", "conditions", "links", "detail"}
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_URL = re.compile(r"^https?://\S+$")


@dataclass(frozen=True, slots=True)
class Hazard:
    """One known hazard.

    id, title, severity (one of SEVERITIES), engines and methods ("*" = any), conditions as
    (option, op, value) with op "eq", "gt", "ge", "lt" or "le", links (URLs), detail, source (the file it came from).
    """

    id: str
    title: str
    severity: str
    engines: tuple[str, ...]
    methods: tuple[str, ...]
    conditions: tuple[tuple[str, str, Any], ...]
    links: tuple[str, ...]
    detail: str
    source: str = field(default="", compare=False)

    def matches(self, engine: str, method: str, options: Mapping[str, Any]) -> bool:
        """True when engine, method and every condition hold for the (complete, checked) `options`."""
        if "*" not in self.engines and engine not in self.engines:
            return False
        if "*" not in self.methods and method not in self.methods:
            return False
        for opt, op, want in self.conditions:
            have = options.get(opt)
            if have is None:
                return False
            if op == "eq":
                if have != want:
                    return False
            elif not _OPS[op](have, want):
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        cond = {(o if op == "eq" else f"{o}_{op}"): v for o, op, v in self.conditions}
        return {"id": self.id, "title": self.title, "severity": self.severity, "engines": list(self.engines),
                "methods": list(self.methods), "conditions": cond, "links": list(self.links), "detail": self.detail}


def _parse_condition(key: str, value: Any, where: str) -> tuple[str, str, Any]:
    opt, op = key, "eq"
    if key not in OPTIONS:
        base, _, suffix = key.rpartition("_")
        if suffix in _OPS and base in OPTIONS:
            opt, op = base, suffix
        else:
            names = list(OPTIONS) + [f"{o}_{s}" for o in OPTIONS if OPTIONS[o][0] in (int, float) for s in _OPS]
            raise SpecError(f"{where}: unknown condition {key!r}{suggest(key, names)}; options: "
                            f"{', '.join(OPTIONS)} (numbers also take _gt, _ge, _lt, _le)")
    _check_condition(OPTIONS[opt][0], opt, op, key, value, where)
    return opt, op, value


def _check_condition(kind: type, opt: str, op: str, key: str, value: Any, where: str) -> None:
    """A condition's value for an option of `kind`: a name (equality only), true / false, or a finite number."""
    if kind is str:
        if op != "eq" or not isinstance(value, str) or not value:
            raise SpecError(f"{where}: {key} = {value!r}, expected {opt} = \"name\" (a name, compared for equality)")
    elif kind is bool:
        if op != "eq":
            raise SpecError(f"{where}: {key} compares a true/false option; write {opt} = true or false")
        if not isinstance(value, bool):
            raise SpecError(f"{where}: {key} = {value!r}, expected true or false")
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SpecError(f"{where}: {key} = {value!r}, expected a number")
    elif not math.isfinite(value):             # found by review: nan was accepted and matched nothing, silently
        raise SpecError(f"{where}: {key} = {value!r}, expected a finite number")


def _str_list(h: dict[str, Any], key: str, where: str, allowed: Sequence[str] | None = None) -> tuple[str, ...]:
    v = h[key]
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
        raise SpecError(f"{where}: {key} = {v!r}, expected a non-empty list of strings")
    if allowed is not None:
        for x in v:
            if x != "*" and x not in allowed:
                raise SpecError(f"{where}: {key} entry {x!r} is not one of {', '.join(allowed)} or '*'"
                                f"{suggest(x, list(allowed))}")
    return tuple(v)


def _entries(doc: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """A hazard file's [[hazard]] tables, after checking its top-level keys and schema."""
    unknown = set(doc) - {"schema", "hazard"}
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {sorted(unknown)}; expected schema and [[hazard]] tables")
    if doc.get("schema") != 1:
        raise SpecError(f"{path}: schema = {doc.get('schema')!r}, expected 1")
    items = doc.get("hazard", [])
    if not isinstance(items, list) or not all(isinstance(h, dict) for h in items):
        raise SpecError(f"{path}: hazard must be an array of tables ([[hazard]])")
    return items


def _check_keys_and_id(h: dict[str, Any], where: str, seen: set[str]) -> None:
    """An entry has exactly the keys in _KEYS and an id of lowercase letters, digits and '-' that its file has not
    used yet; the id is added to `seen`."""
    hid = h.get("id")
    extra = set(h) - _KEYS
    if extra:
        raise SpecError(f"{where}: unknown key(s) {sorted(extra)}; expected {sorted(_KEYS)}")
    missing = _KEYS - set(h)
    if missing:
        raise SpecError(f"{where}: missing key(s) {sorted(missing)}")
    if not isinstance(hid, str) or not _ID.match(hid):
        raise SpecError(f"{where}: id = {hid!r}, expected lowercase letters, digits and '-'")
    if hid in seen:
        raise SpecError(f"{where}: duplicate id {hid!r} in the same file")
    seen.add(hid)


def _parse_hazard(h: dict[str, Any], where: str, path: Path) -> Hazard:
    """One [[hazard]] entry (keys and id already checked): its texts, severity, lists, links and conditions."""
    for key in ("title", "detail"):
        if not isinstance(h[key], str) or not h[key].strip():
            raise SpecError(f"{where}: {key} = {h[key]!r}, expected a non-empty string")
    sev = h["severity"]
    if sev not in SEVERITIES:
        raise SpecError(f"{where}: severity = {sev!r}, expected one of {', '.join(SEVERITIES)}")
    engines = _str_list(h, "engines", where)
    methods = _str_list(h, "methods", where, METHODS)
    links = _str_list(h, "links", where)
    for u in links:
        if not _URL.match(u):
            raise SpecError(f"{where}: link {u!r} is not an http(s) URL")
    cond = h["conditions"]
    if not isinstance(cond, dict):
        raise SpecError(f"{where}: conditions = {cond!r}, expected a table (use {{}} for always)")
    conds = tuple(_parse_condition(k, v, f"{where}: conditions") for k, v in cond.items())
    return Hazard(h["id"], h["title"].strip(), sev, engines, methods, conds, links, h["detail"].strip(), str(path))


def _parse_file(path: Path) -> list[Hazard]:
    """Every hazard in one file, checked; an error names the file and the entry."""
    out: list[Hazard] = []
    seen: set[str] = set()
    for i, h in enumerate(_entries(read_toml(path), path)):
        hid = h.get("id")
        where = f"{path}: hazard[{i}]" + (f" ({hid})" if isinstance(hid, str) else "")
        _check_keys_and_id(h, where, seen)
        out.append(_parse_hazard(h, where, path))
    return out


def bundled_files() -> list[Path]:
    """The bundled hazard files (every *.toml in the `hazards` data folder)."""
    return sorted(data_dir("hazards").glob("*.toml"))


def load_hazards(files: Iterable[str | Path] = (), bundled: bool = True) -> tuple[Hazard, ...]:
    """The bundled hazards plus those in `files`, in order; an entry whose id is already loaded replaces it."""
    paths = (bundled_files() if bundled else []) + [Path(f) for f in files]
    by_id: dict[str, Hazard] = {}
    for p in paths:
        for h in _parse_file(p):
            by_id[h.id] = h
    return tuple(by_id.values())


def resolve_options(options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`options` over the defaults in OPTIONS, type-checked; unknown names raise ScenarioError."""
    out = {k: v[1] for k, v in OPTIONS.items()}
    for k, v in (options or {}).items():
        if k not in OPTIONS:
            raise ScenarioError(f"unknown deployment option {k!r}{suggest(k, list(OPTIONS))}; "
                                f"expected some of {', '.join(OPTIONS)}")
        out[k] = _option_value(k, v, OPTIONS[k][0])
    return out


def _option_value(k: str, v: Any, kind: type) -> Any:
    """One deployment option's value, checked against its kind (None: unknown, or off for a true/false option)."""
    if v is None:
        return None if kind is not bool else False
    if kind is bool:
        if not isinstance(v, bool):
            raise ScenarioError(f"deployment option {k} = {v!r}; expected True or False")
    elif kind is str:
        if not isinstance(v, str):
            raise ScenarioError(f"deployment option {k} = {v!r}; expected a name")
    elif isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        raise ScenarioError(f"deployment option {k} = {v!r}; expected a number")
    elif kind is int and (not math.isfinite(v) or v != int(v)):
        raise ScenarioError(f"deployment option {k} = {v!r}; expected an integer")
    return kind(v)


def check(engine: Any, method: str, options: Mapping[str, Any] | None = None,
          hazards: Sequence[Hazard] | None = None, files: Iterable[str | Path] = ()) -> list[Hazard]:
    """Known hazards that apply to `engine` (a profile name or an EngineProfile), `method` and `options`.

    options : deployment options (see OPTIONS); missing ones take their defaults.
    hazards : the list to check (default: `load_hazards(files)`).
    Returns the matching hazards, most serious first (SEVERITIES order), then in file order.
    """
    name = getattr(engine, "name", engine)
    if not isinstance(name, str) or not name:
        raise ScenarioError(f"engine = {engine!r}; expected a profile name or an EngineProfile")
    if method not in METHODS:
        raise ScenarioError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    opts = resolve_options(options)
    hs = load_hazards(files) if hazards is None else tuple(hazards)
    hit = [h for h in hs if h.matches(name, method, opts)]
    return sorted(hit, key=lambda h: SEVERITIES.index(h.severity))
