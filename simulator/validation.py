"""Predicted against published measurements: `validation/rows.csv` (schema in validation/README.md).

Each row is a complete scenario (hardware, engine, model, method or none, batch or concurrency, context, k/tree,
measured tau if published) and one measured value. Rows that cannot be simulated are reported as skipped, with the
reason. Rows are grouped by `source_id` (one independent publication or measurement campaign) for per-source
summaries and leave-one-source-out cross-validation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .acceptance import Acceptance
from .drafters import default_decay
from .engine import EngineProfile, load_engine
from .errors import ScenarioError, SpecError, SpecroofError
from .fusion import without
from .hardware import load_hardware
from .model import load_model
from .report import ValidationReport
from .rows import SERVING_METRICS, load_rows
from .sampling import check_sampling
from .scenario import Deployment, Scenario, with_engine
from .serving import Workload, serve
from .shape import curve_key, curve_load
from .speedup import predict, run_speedup
from .static import static_batch
from .step import simulate_step
from .traffic import PREFILL_LAYOUT_KEYS, length_ratio, prefill_layout_of


def _int(r: dict[str, str], key: str, default: int | None = None) -> int | None:
    v = (r.get(key) or "").strip()
    if not v:
        return default
    try:
        f = float(v)
    except ValueError:
        f = float("nan")
    if not f.is_integer():
        raise ScenarioError(f"row {r['row_id']}: {key} = {v!r} is not an integer")
    return int(f)


def row_acceptance(r: dict[str, str]) -> Acceptance | None:
    """The row's measured tau as an Acceptance (on its tree when it has one), or None for the method default."""
    tau = (r.get("tau") or "").strip()
    if not tau:
        return None
    k = _int(r, "k")
    kt = _int(r, "tau_k", k)
    if kt is None:
        raise ScenarioError(f"row {r['row_id']}: tau = {tau} needs the k it was measured at (k or tau_k)")
    return Acceptance.from_measurement(float(tau), kt, _int(r, "tree_tokens"), _int(r, "tree_branching"),
                                       default_decay(_text(r, "method")))


def _row_engine(r: dict[str, str], eng: EngineProfile) -> EngineProfile:
    """The profile with the row's scheduler facts (e.g. vLLM before async scheduling became the default, an engine
    build dated before its default overlapped speculative steps or fused the all-reduce with the norms (TensorRT-LLM
    before 2025-07), or the requests a launch flag lets the engine run
    while speculating): facts of the measured run, like tp or precision, not fitted knobs."""
    ov, date = (r.get("overlap_scheduler") or "").strip().lower(), _text(r, "engine_date", "")
    if ov not in ("", "true", "false"):
        raise ScenarioError(f"row {r['row_id']}: overlap_scheduler = {ov!r}; expected true or false")
    if ov:
        eng = replace(eng, overlap=ov == "true", overlap_with_spec=ov == "true")
    elif date and eng.overlap_with_spec_from and date < eng.overlap_with_spec_from:
        eng = replace(eng, overlap_with_spec=False)
    eng = without(eng, {f for f, month in eng.fused_from if date and date < month})  # fusions its build lacked
    bal = (r.get("dp_balance") or "").strip().lower()
    if bal not in ("", "true", "false"):
        raise ScenarioError(f"row {r['row_id']}: dp_balance = {bal!r}; expected true or false")
    if bal:
        eng = replace(eng, dp_prompt_balance=bal == "true")
    eng = _row_topp(r, eng, date)
    cap = _int(r, "spec_max_running")
    if cap is not None:
        if cap < 1:
            raise ScenarioError(f"row {r['row_id']}: spec_max_running = {cap}; expected a whole number >= 1")
        eng = replace(eng, spec_max_running=float(cap))
    return eng


def row_sampling(r: dict[str, str]) -> str:
    """The row's sampling (empty: greedy), checked (`sampling.check_sampling`) with the row named."""
    return check_sampling(f"row {r['row_id']}: sampling", _text(r, "sampling", "greedy"))


def _row_topp(r: dict[str, str], eng: EngineProfile, date: str | None) -> EngineProfile:
    """The profile with the top-k / top-p filter the row's build ran (`sampling.TopPFilter.dated`) where its
    requests sample with top-p."""
    return replace(eng, topp=eng.topp.dated(date or "")) if row_sampling(r) == "top-p" else eng


def _share(r: dict[str, str]) -> float | None:
    """The row's memory_fraction (checked in (0, 1] by rows.load_rows), None where empty: the engine's own."""
    v = _text(r, "memory_fraction")
    return None if v is None else float(v)


def _text(r: dict[str, str], key: str, default: str | None = None) -> str | None:
    return (r.get(key) or "").strip() or default


def row_length_ratio(r: dict[str, str]) -> float:
    """The row's length_ratio: its client drew each request's lengths uniformly from [ratio x isl, isl] and [ratio x
    osl, osl] (`Workload.length_ratio`); 1 (fixed lengths) when empty. A ScenarioError names the row when the value is
    not a number in [0, 1], when the row has no isl and osl to draw below, or when it has a fixed batch (a batch run
    to completion has fixed lengths)."""
    v = (r.get("length_ratio") or "").strip()
    if not v:
        return 1.0
    try:
        ratio = length_ratio(float(v))
    except (ValueError, ScenarioError):
        raise ScenarioError(f"row {r['row_id']}: length_ratio = {v!r}; expected a number in [0, 1] (each length drawn "
                            "uniformly from [ratio x length, length]) or empty (fixed lengths)") from None
    if _int(r, "isl") is None or _int(r, "osl") is None:
        raise ScenarioError(f"row {r['row_id']}: length_ratio = {v} needs the isl and osl it draws below")
    if _int(r, "batch") is not None:
        raise ScenarioError(f"row {r['row_id']}: length_ratio = {v} on a fixed-batch row: a batch run is priced at its "
                            "fixed isl and osl; leave length_ratio empty")
    return ratio


def row_batch_context(r: dict[str, str]) -> tuple[int, int]:
    """(batch, context) of a row: its batch, or its concurrency (a serving run's decode batch in steady state); its
    context, or isl + osl / 2 (the mean context over a request's decode), or 1024."""
    batch = _int(r, "batch") or _int(r, "concurrency")
    if batch is None:
        raise ScenarioError(f"row {r['row_id']}: needs a batch or a concurrency")
    ctx = _int(r, "context")
    if ctx is None:
        isl, osl = _int(r, "isl"), _int(r, "osl")
        ctx = isl + (osl or 0) // 2 if isl is not None else 1024
    return batch, ctx


def row_scenario(r: dict[str, str]) -> Scenario:
    """The row as a Scenario (one batch), with its hardware, model and engine loaded once and its draft checked to
    load. A row without a method (or with method none) is a plain decode row: the Scenario has method None."""
    method = _text(r, "method")
    method = None if method in (None, "none") else method
    n, tp, dp = _int(r, "n_gpus"), _int(r, "tp", 1), _int(r, "dp", 1)
    if n is not None and n != tp * dp and disaggregation(r) is None:
        raise ScenarioError(f"row {r['row_id']}: n_gpus = {n} but one instance of tp x dp = {tp * dp} GPUs is "
                            "priced: a multi-instance row that does not say how its GPUs split is not modelled")
    batch, ctx = row_batch_context(r)
    return Scenario(hardware=row_loaded(r, "hardware"), model=row_loaded(r, "model"),
                    method=method, engine=_row_engine(r, row_loaded(r, "engine")), draft=row_loaded(r, "draft"),
                    acceptance=row_acceptance(r) if method else None, k=_int(r, "k", 3) if method else 3,
                    tree_tokens=_int(r, "tree_tokens"), tree_branching=_int(r, "tree_branching"), batch=(batch,),
                    context=ctx, tp=tp, dp=dp, ep=_int(r, "ep", 1), precision=_text(r, "precision", "bf16"),
                    kv_precision=_text(r, "kv_precision"), expert_precision=_text(r, "expert_precision"),
                    attention_precision=_text(r, "attention_precision"),
                    memory_fraction=_share(r), max_running_requests=_int(r, "max_running_requests"),
                    sampling=row_sampling(r))


def _draft(v: str) -> str | None:
    """A row's draft (a bundled model or head id, or a config's path), checked to load and kept as named: the drafter
    loads it again with its registry record (the target a head was trained for) and reads a one-layer config given by
    path as a head. Empty is the method's default drafter (None), nothing to load."""
    if v:
        load_model(v)
    return v or None


# The fields a row names a file or bundled entry by, each with its loader and what it names (load_refusal's words).
_LOADED = {"hardware": (load_hardware, "a device"), "model": (load_model, "a model"),
           "engine": (load_engine, "an engine"), "draft": (_draft, "a draft model or head")}


def _load_error(r: dict[str, str], field: str, value: str, why: Any) -> str:
    return f"row {r['row_id']}: {field} = {value!r}: {why}"


def row_loaded(r: dict[str, str], field: str) -> Any:
    """The row's `field` (hardware, model, engine or draft) loaded: a bundled name, alias or id, or a file's path (a
    draft stays its id or path, None when empty: `_draft`). One that does not load is a SpecError naming the row, the
    field and its value, then the loader's reason and what is allowed (the bundled names, or the path's error):
    validate lists the row as skipped with it, calibrate refuses the file with it (`load_refusal`), the same words."""
    v = _text(r, field, "") or ""
    try:
        return _LOADED[field][0](v)
    except SpecroofError as e:
        raise SpecError(_load_error(r, field, v, e)) from None


def load_refusal(rows: Sequence[dict[str, str]], path: str | Path | None = None,
                 fields: Sequence[str] = ("hardware", "model", "engine", "draft")) -> str:
    """One line on the rows whose first field of `fields` that fails on some row does not load (row_loaded's words
    for the first such row, at its line of `path` or its index in `rows`, and how many rows), or "" when every field
    of every row loads. Loads each distinct value once and prices nothing, so a caller that refuses such rows does so
    before any pricing."""
    for field in fields:
        why: dict[str, str] = {}     # a value's refusal in row_loaded's words for its first row ("" when it loads)
        bad: list[int] = []
        for i, r in enumerate(rows):
            v = _text(r, field, "") or ""
            if v not in why:
                try:
                    row_loaded(r, field)
                    why[v] = ""
                except SpecError as e:
                    why[v] = str(e)
            if why[v]:
                bad.append(i)
        if bad:
            # the first bad row is its value's first row, so why[v] names it
            i, ids = bad[0], ", ".join(rows[j]["row_id"] for j in bad[:5]) + (", ..." if len(bad) > 5 else "")
            where = f"{path}: line {i + 2}" if path is not None else f"rows[{i}]"  # line 1 is the header (load_rows)
            return f"{where}: {why[_text(rows[i], field, '') or '']}; {len(bad)} of {len(rows)} rows name " \
                f"{_LOADED[field][1]} that does not load ({ids})"
    return ""


def _plain(s: Scenario, dep: Deployment, metric: str) -> float:
    """A plain decode row: the base step at the row's batch."""
    st = simulate_step(scenario=s, dep=dep)
    if not st.feasible[0]:
        raise ScenarioError(f"infeasible: {st.message[0]}")
    t, b, n = float(st.step_s[0]), float(st.batch[0]), float(st.scenario["n_gpus"])
    values = {"base_step_s": t, "tpot_s": t, "itl_s": t, "tokens_per_s_per_user": 1.0 / t,
              "tokens_per_s_per_gpu": b / t / n}
    if metric not in values:
        raise ScenarioError(f"metric {metric} needs speculation (a method)")
    return values[metric]


_DISAGG = re.compile(r"disaggregated: (\d+) prefill \+ (\d+) decode GPUs")


def disaggregation(r: dict[str, str]) -> tuple[int, int] | None:
    """(prefill GPUs, decode GPUs) of a prefill/decode-disaggregated row (its notes say "disaggregated: P prefill +
    D decode GPUs", with tp/dp/ep one decode instance), or None."""
    m = _DISAGG.search(r.get("notes") or "")
    if m is None:
        return None
    P, D = int(m.group(1)), int(m.group(2))
    inst = _int(r, "tp", 1) * _int(r, "dp", 1)
    if D % inst or P < 1:
        raise ScenarioError(f"row {r['row_id']}: {D} decode GPUs are not whole instances of tp x dp = {inst}")
    return P, D


def instance_mix(r: dict[str, str]) -> tuple[tuple[int, float], ...]:
    """How a row's C requests spread over its decode instances: ((requests per instance, share of instances), ...)
    over the busy instances. One instance: ((C, 1.0),). A disaggregated row's m = D / (tp x dp) instances behind a
    balancing router: C mod m of them serve ceil(C / m) requests, the others floor(C / m) (idle when that is 0, their
    GPUs still counted)."""
    c = _int(r, "concurrency")
    pd = disaggregation(r)
    if c is None or pd is None:
        return ((c or 1, 1.0),)
    m = pd[1] // (_int(r, "tp", 1) * _int(r, "dp", 1))
    lo, hi = divmod(c, m)
    mix = ((lo, (m - hi) / m), (lo + 1, hi / m))
    return tuple((n, sh) for n, sh in mix if n > 0 and sh > 0)


def serving_workload(r: dict[str, str]) -> Workload | None:
    """A row measured in a serving benchmark (a concurrency with prompt and output lengths, no fixed batch) as a
    Workload (its lengths drawn below isl and osl when it has a length_ratio; its run's num_prompts, whose start-up
    burst the mean TTFT and E2E include); None for a fixed-batch row. A disaggregated row is priced per decode
    instance (`instance_mix`: the concurrencies its instances serve), each with its P / m share of the prefill GPUs
    and of the run's prompts, its prefill passes on the row's prefill instance (prefill_tp, prefill_dp, prefill_ep,
    all three or none) and chunk (the row's, where given)."""
    c, isl, osl = _int(r, "concurrency"), _int(r, "isl"), _int(r, "osl")
    if _int(r, "batch") is not None or c is None or isl is None or osl is None:
        return None
    lengths = {"isl": isl, "osl": osl, "length_ratio": row_length_ratio(r)}
    if _int(r, "chunk") is not None:
        lengths["chunk"] = _int(r, "chunk")
    pd, n = disaggregation(r), _int(r, "num_prompts")
    if pd is None:
        return Workload(**lengths, concurrency=(c,), num_prompts=n)
    m = pd[1] // (_int(r, "tp", 1) * _int(r, "dp", 1))
    return Workload(**lengths, concurrency=tuple(n for n, _ in instance_mix(r)), pd=True, prefill_gpus=pd[0] / m,
                    prefill_layout=prefill_layout_of(tuple(_int(r, k) for k in PREFILL_LAYOUT_KEYS)),  # the recipe's
                    num_prompts=None if n is None else max(1, round(n / m)))      # the router deals N over m


def _serving(s: Scenario, dep: Deployment, w: Workload, metric: str, mix: tuple[tuple[int, float], ...]) -> float:
    """A serving row: `serve` at the concurrency of each busy instance (prefill of arriving requests shares the
    decode steps, or runs on the prefill instance), combined over the instances: throughput per GPU is the
    instance-share-weighted sum (idle instances add GPUs, no tokens), per-request figures are request-weighted
    means, ratios are those of the combined figures. A disaggregated row's throughput per GPU counts its decode GPUs
    only, as InferenceX's output_tput_per_gpu does (utils/process_result.py: output throughput / decode GPUs; the
    published TTFT and TPOT of its 93 disaggregated runs give, by Little's law, 0.96 of it per decode GPU, median)."""
    res = serve(s, w, dep=dep)
    bad = np.flatnonzero(~res.feasible)
    if bad.size:
        raise ScenarioError(f"infeasible: {res.message[int(bad[0])]}")
    share = np.array([sh for _, sh in mix])
    req = share * res.concurrency / (share * res.concurrency).sum()
    spec, base = (res.spec if s.method is not None else res.base), res.base

    def per_req(x: np.ndarray) -> float:
        return float((req * x).sum())

    per_decode = res.gpus / dep.n_gpus       # serve counts both instances' GPUs (1 without disaggregation)

    def per_gpu(ph: Any) -> float:
        return float((share * ph.tokens_per_s_per_gpu).sum()) * per_decode

    values = {"tpot_s": lambda: per_req(spec.tpot_s), "itl_s": lambda: per_req(spec.itl_s),
              "ttft_s": lambda: per_req(spec.ttft_s), "e2e_s": lambda: per_req(spec.e2e_s),
              "tokens_per_s_per_gpu": lambda: per_gpu(spec),
              "tokens_per_s_per_user": lambda: per_req(spec.tokens_per_s_per_user),
              "base_step_s": lambda: per_req(base.step_s), "spec_step_s": lambda: per_req(res.spec.step_s),
              "speedup": lambda: per_req(base.tpot_s) / per_req(res.spec.tpot_s),
              "e2e_speedup": lambda: per_req(base.e2e_s) / per_req(res.spec.e2e_s),
              "throughput_ratio": lambda: per_gpu(res.spec) / per_gpu(base)}
    return values[metric]()


def _step(s: Scenario, dep: Deployment, metric: str) -> float:
    res = predict(s, dep)
    if not res.feasible[0]:
        raise ScenarioError(f"infeasible: {res.message[0]}")
    spec_tpot = res.spec_step_s / res.tokens_per_step
    return float({"speedup": res.speedup, "base_step_s": res.base_step_s, "spec_step_s": res.spec_step_s,
                  "tpot_s": spec_tpot, "itl_s": res.spec_step_s, "tokens_per_s_per_user": res.tokens_per_s_per_user,
                  "tokens_per_s_per_gpu": res.tokens_per_s_per_gpu}[metric][0])


def _static(s: Scenario, dep: Deployment, r: dict[str, str], metric: str) -> float:
    """A static-batch row (an offline latency benchmark: batch, isl and osl given): `static_batch`."""
    res = static_batch(s, s.batch, _int(r, "isl"), _int(r, "osl"), dep=dep)
    if not res.feasible[0]:
        raise ScenarioError(f"infeasible: {res.message[0]}")
    values = {"e2e_s": res.spec_e2e_s, "ttft_s": res.ttft_s, "e2e_speedup": res.e2e_speedup}
    if metric not in values:
        raise ScenarioError(f"metric {metric} of a static batch is not priced")
    return float(values[metric][0])


@dataclass(frozen=True)
class PreparedRow:
    """A row with its Scenario resolved once (calibration prices it many times with other engine values); `route`
    is how it is priced: 'serving' (a concurrency with isl and osl), 'static' (one batch run to completion),
    'run' (the speedup of a benchmark of num_prompts prompts at the batch: `run_speedup`), 'step' (a speculative
    step) or 'plain' (a plain decode step)."""

    row: dict[str, str]
    scenario: Scenario
    dep: Deployment
    workload: Workload | None
    route: str


def _num_prompts(r: dict[str, str], s: Scenario, w: Workload | None) -> int | None:
    """The row's num_prompts, where a metric it prices has it: a fixed-batch speculative speedup (a run of that many
    prompts in waves) or a serving row's TTFT or E2E (a run's start-up burst, burst.py); raises elsewhere."""
    n = _int(r, "num_prompts")
    run = s.method is not None and r["metric"] == "speedup" and _int(r, "batch") is not None
    if n is not None and not run and (w is None or r["metric"] not in ("ttft_s", "e2e_s")):
        raise ScenarioError(f"row {r['row_id']}: num_prompts = {n} prices the speedup of a run of that many prompts "
                            "at a fixed batch, or a serving run's start-up in its mean TTFT or E2E; this row has "
                            f"metric {r['metric']}, method {s.method or 'none'} and batch {_int(r, 'batch') or 'none'}")
    return n


def row_route(r: dict[str, str], s: Scenario, w: Workload | None) -> str:
    """How a row is priced (see PreparedRow), given its serving workload `w` (serving_workload); raises when a
    serving metric lacks its workload, and when num_prompts is on a row other than a fixed-batch speculative
    speedup or a serving row's TTFT or E2E (the metrics priced over a run of that many prompts)."""
    n = _num_prompts(r, s, w)
    if w is not None:
        return "serving"
    if r["metric"] in SERVING_METRICS:
        if _int(r, "batch") is not None and _int(r, "isl") is not None and _int(r, "osl") is not None:
            return "static"
        raise ScenarioError(f"row {r['row_id']}: {r['metric']} is a serving metric: it needs the prompt and output "
                            "lengths (isl, osl) and a concurrency or a batch")
    return "plain" if s.method is None else ("step" if n is None else "run")


def prepare_row(r: dict[str, str]) -> PreparedRow:
    """Resolve a row; raises a SpecroofError when it cannot be simulated (the reason names the row)."""
    row_length_ratio(r)                       # checked on every row, whatever route prices it
    s = row_scenario(r)
    w = serving_workload(r)
    return PreparedRow(r, s, replace(s.resolve(), memo={}), w, row_route(r, s, w))


def predict_prepared(p: PreparedRow, engine: EngineProfile | None = None, kernel_floor_s: float | None = None
                     ) -> float:
    """The row's predicted value; `engine` replaces its profile's values (its scheduler mode still applies) and
    `kernel_floor_s` the device's per-kernel graph cost (calibration varies both). Serving rows go through `serve`,
    static batches through `static_batch`, speculative rows through step pricing, plain rows through the base step."""
    s, dep = p.scenario, p.dep
    if engine is not None:
        dep = with_engine(dep, _row_engine(p.row, engine))
        s = dep.scenario
    if kernel_floor_s is not None:
        dep = replace(dep, hw=replace(dep.hw, kernel_floor_s=kernel_floor_s))
    m = p.row["metric"]
    if p.route == "serving":
        assert p.workload is not None
        return _serving(s, dep, p.workload, m, instance_mix(p.row))
    if p.route == "static":
        return _static(s, dep, p.row, m)
    if p.route == "run":
        return float(run_speedup(s, _int(p.row, "num_prompts"), dep)[0])
    return _plain(s, dep, m) if p.route == "plain" else _step(s, dep, m)


def predict_row(r: dict[str, str], engine: EngineProfile | None = None) -> float:
    """Simulate one row; raises a SpecroofError when it cannot be simulated."""
    return predict_prepared(prepare_row(r), engine)


# ---- scope: which rows measure what the shipped profiles model ------------------------------------------------

RATIO_METRICS = ("speedup", "e2e_speedup", "throughput_ratio")
HEADLINE, NO_TAU, LEGACY = "headline", "acceptance unknown", "legacy engine"
SCOPES = (HEADLINE, NO_TAU, LEGACY)


KINDS = ("speedup", "step", "ttft")


def row_kind(r: dict[str, str]) -> str:
    """'speedup' for a ratio of speculation on to off; 'ttft' for a time to first token (prefill, queueing and
    scheduling policy, not a decode step); else 'step' (a step time, TPOT, ITL, per-user or per-GPU rate, or an
    end-to-end latency made mostly of decode steps)."""
    if r["metric"] in RATIO_METRICS:
        return "speedup"
    return "ttft" if r["metric"] == "ttft_s" else "step"


def row_scope(r: dict[str, str], eng: EngineProfile) -> str:
    """Where a row counts (validation/README.md, "Scopes"): 'legacy engine' when it was measured with an engine build
    older than the profile's valid_from (the profile does not model that build); 'acceptance unknown' when it
    speculates without a published acceptance length (its error mixes the acceptance guess with the cost model);
    else 'headline'. A plain-step metric (base_step_s) is priced without acceptance, so an unknown one does not
    matter to it. Calibration fits headline rows only."""
    date = _text(r, "engine_date", "")
    if eng.valid_from and date and date < eng.valid_from:
        return LEGACY
    if _text(r, "method", "none") != "none" and not _text(r, "tau") and _text(r, "metric", "") != "base_step_s":
        return NO_TAU
    return HEADLINE


def predict_rows(path: str | Path | Sequence[dict[str, str]] | None = None,
                 engines: dict[str, EngineProfile] | None = None) -> list[dict[str, Any]]:
    """Every row with its prediction (or the reason it is skipped), kind and scope; `engines` replaces named
    profiles."""
    rows = list(path) if isinstance(path, Sequence) and not isinstance(path, str) else load_rows(path)
    out = []
    for r in rows:
        rec = record(r)
        try:
            p = prepare_row(r)
            eng = (engines or {}).get(r["engine"].strip().lower())
            rec["scope"], rec["route"] = row_scope(r, eng or p.dep.eng), p.route
            rec["predicted"] = predict_prepared(p, eng)
            rec["error"] = rec["predicted"] / rec["measured"] - 1.0
        except SpecroofError as e:       # every reason names its row (a drafter's words had not: review)
            why, head = str(e), f"row {r['row_id']}:"
            rec["skipped"], rec["scope"] = why if why.startswith(head) else f"{head} {why}", ""
        out.append(rec)
    return out


def record(r: dict[str, str]) -> dict[str, Any]:
    """The report record of a row before prediction (curve, load: the configuration and load of a point of a speedup
    curve, shape.curve_key)."""
    return {"row_id": r["row_id"], "published_row": r.get("published_row", ""), "source_id": r.get("source_id") or
            r["source"], "source": r["source"], "engine": r["engine"], "metric": r["metric"], "kind": row_kind(r),
            "scope": "", "route": "", "measured": float(r["measured"]), "predicted": None, "error": None,
            "skipped": "", "curve": curve_key(r), "load": curve_load(r)}


def validate(path: str | Path | None = None, engines: dict[str, EngineProfile] | None = None) -> ValidationReport:
    """Simulate every row it can with the shipped (or given) profiles: in-sample for rows the profiles were
    calibrated on (see `crossval` for held-out accuracy)."""
    return ValidationReport(predict_rows(path, engines), "in-sample (profiles as shipped)")
