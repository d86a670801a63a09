"""Known hazards of a result (hazards/known_hazards.toml): what `specroof curve`, `serve` and `frontier` print beside
their numbers, for a notebook's `predict`, `serve` and `frontier` results as well (found by review: the library gave
the numbers without the warnings, the MoE-under-load one among them). Each result's deployment options are what its
prediction used: the layout, whether the target routes to experts, the overlap mode, and the largest batch, k and
tree it speculates at over its feasible points; a result in which nothing feasible speculates has none."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .acceptance import priced_shape, tree_width
from .frontier import FrontierResult
from .hazards import DEPLOYMENT_OPTIONS, MODEL_ADDED_OPTIONS, Hazard, check, deployment_options, with_model_facts
from .loop import step_batch
from .serving import ServeResult
from .speedup import SpeedupResult


def _layout(sc: dict[str, Any]) -> dict[str, Any]:
    """The layout and deployment options a result's scenario dict carries."""
    return {"tp": sc["tp"], "ep": sc["ep"], "dp": sc["dp"], "pp": sc["pp"], **{o: sc[o] for o in DEPLOYMENT_OPTIONS},
            **{o: bool(sc.get(o)) for o in MODEL_ADDED_OPTIONS}}


def _curve(r: SpeedupResult) -> dict[str, Any] | None:
    ok = r.feasible
    if not np.any(r.k[ok]):                    # no feasible point speculates (k = 0): nothing of it to warn about
        return None
    sc, br = r.scenario, r.scenario["tree_branching"]   # the branching priced (Medusa's default tree's)
    return {**_layout(sc), "context": sc["context"],
            "max_batch": int(np.max(r.batch[ok], initial=0)), "max_k": int(r.k[ok].max()),
            "topk": max(tree_width(int(k), int(T), br, sc["k"] == "auto") for k, T in zip(r.k[ok], r.tree_tokens[ok])),
            "verify_tokens": int(r.tree_tokens[ok].max()), "overlap_scheduler": sc["spec_overlap"]}


def _serve(res: ServeResult) -> dict[str, Any] | None:
    sc, ph, ok = res.scenario, res.spec, res.feasible
    if not sc["method"] or not np.any(ph.k[ok]):
        return None
    return {**_layout(sc),
            "max_batch": int(np.ceil(np.max(step_batch(ph.decode_batch, ph.running)[ok], initial=1.0))),  # its steps
            "max_k": int(np.max(ph.k[ok], initial=0)), "overlap_scheduler": bool(sc["spec_overlap"]),
            "topk": max([tree_width(int(k), int(T), sc["tree_branching"], sc["k"] == "auto") for k, T in
                         zip(ph.k[ok], ph.verify_tokens[ok]) if k], default=1)}


def _frontier(res: FrontierResult, options: Mapping[str, Any], files: Iterable[str | Path]) -> list[Hazard]:
    """Per layout on the speculative frontier, that layout's deployment (the one the search resolved) with the
    largest concurrency, k and tree it runs at; each hazard once."""
    out: dict[str, Hazard] = {}
    w = res.workload
    for lay in sorted({p.layout for p in res.on}, key=lambda x: (x.tp, x.dp, x.ep)):
        pts = [p for p in res.on if p.layout == lay]
        dep = res.deployment(lay)
        s = dep.scenario
        if not s.method or s.k == 0:     # review, 2026-12-06: --k 0 drew the speculation hazards with none running
            continue
        # the shape each point priced (found by review: s.verify(k) read the budget's tree where k = "auto" ran a chain)
        shapes = [priced_shape(p.k, p.verify_tokens, s.branching, s.auto) for p in pts if p.k]
        opts = {"tp": lay.tp, "dp": lay.dp, "ep": lay.ep, "pp": s.pp, **deployment_options(dep),
                "overlap_scheduler": dep.eng.overlaps(s.method),
                "max_batch": max(p.concurrency for p in pts), "max_k": max(p.k for p in pts),
                "topk": max([v.w for v in shapes], default=1), "verify_tokens": max([v.T for v in shapes], default=1),
                "context": int(max(w.samples[0] + w.samples[1])), **dict(s.options), **options}
        for h in check(dep.eng.name, s.method, with_model_facts(opts, deployment_options(dep)), files=files):
            out.setdefault(h.id, h)
    return list(out.values())


def known_hazards(result: Any, options: Mapping[str, Any] | None = None,
                  files: Iterable[str | Path] = ()) -> list[Hazard]:
    """The known hazards that apply to a result of `predict` / `speedup_curve`, `serve` or `frontier`, most serious
    first. options : deployment options the result does not carry (temperature, prefix_caching, ...: the CLI's
    option flags; `hazards.OPTIONS`), over those the prediction used; files : more hazard files beside the bundled
    one."""
    opts = dict(options or {})
    if isinstance(result, FrontierResult):
        return _frontier(result, opts, files)
    if isinstance(result, SpeedupResult):
        used = _curve(result)
    elif isinstance(result, ServeResult):
        used = _serve(result)
    else:
        raise TypeError(f"known_hazards takes a result of predict, serve or frontier; got {type(result).__name__}")
    if used is None:
        return []
    return check(result.scenario["engine"], result.scenario["method"], with_model_facts({**used, **opts}, used),
                 files=files)
