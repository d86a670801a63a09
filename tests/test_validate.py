"""Validation against published measurements and calibration of engine profiles (least squares)."""

import csv
import json
import math

import numpy as np
import pytest

from simulator.calibration import calibrate
from simulator.cli import main
from simulator.engine import load_engine
from simulator.errors import ScenarioError, SpecError
from simulator.validation import METRICS, REQUIRED, default_rows_path, load_rows, predict_row, validate

ROWS = default_rows_path()


def _write(path, rows, cols=None):
    cols = cols or list(rows[0])
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    return path


FIRST_44 = {f"S{i:03d}" for i in range(1, 45)}   # the rows the profiles were calibrated and the target set on


def test_shipped_rows_meet_the_accuracy_target(tmp_path):
    # Issue target: median |error| <= 10 % and every row within 25 %, profiles as shipped, no per-row knobs. It was
    # set on the first 44 rows; the rows added since (D..., S045..., V...) are validation data, not part of it.
    first = [r for r in load_rows() if r["row_id"] in FIRST_44]
    rep = validate(_write(tmp_path / "first44.csv", first))
    assert all(not r["skipped"] for r in rep.rows)
    s = rep.summary["overall"]
    assert s["n"] == len(first) == 44
    assert s["median_abs_error"] <= 0.10, s
    assert s["max_abs_error"] <= 0.25, s


def test_report_files_and_skips(tmp_path):
    rows = load_rows()[:2]
    rows[1] = dict(rows[1], hardware="rtx-3090", row_id="X1")
    rep = validate(_write(tmp_path / "r.csv", rows))
    assert rep.rows[1]["skipped"].startswith("unknown hardware 'rtx-3090'")
    assert rep.summary["overall"]["n"] == 1
    md, cs = rep.write(tmp_path / "rep")
    assert "median abs error" in md.read_text() and "skipped: unknown hardware" in md.read_text()
    with open(cs) as f:
        back = list(csv.DictReader(f))
    assert [r["row_id"] for r in back] == [rows[0]["row_id"], "X1"]


@pytest.mark.parametrize("mutate,match", [
    (lambda r: r.pop("measured"), "missing column"),
    (lambda r: r.update(extra="1"), "unknown column"),
    (lambda r: r.update(metric="latency"), "metric = 'latency'"),
    (lambda r: r.update(measured="fast"), "measured = 'fast'"),
    (lambda r: r.update(measured="-1"), "expected a positive number"),
])
def test_bad_rows_files(tmp_path, mutate, match):
    r = dict(load_rows()[0])
    mutate(r)
    with pytest.raises(SpecError, match=match):
        load_rows(_write(tmp_path / "bad.csv", [r]))
    with pytest.raises(SpecError, match="file not found"):
        load_rows(tmp_path / "missing.csv")


def test_bad_integer_in_row():
    r = dict(load_rows()[0], batch="two")
    with pytest.raises(ScenarioError, match="batch = 'two'"):
        predict_row(r)


def _synthetic_rows():
    rows = []
    for b in (1, 4, 16, 64, 128):
        for metric in ("base_step_s", "spec_step_s", "speedup"):
            rows.append(dict(row_id=f"{metric}-{b}", source="synthetic", hardware="h100-sxm", engine="sglang",
                             model="llama-3.1-8b", method="eagle3", batch=str(b), context="1024", k="3", tau="2.8",
                             tau_k="3", metric=metric, measured="1"))
    return rows


def test_calibration_recovers_parameters_from_noisy_synthetic_data():
    true = {"spec_bookkeeping_s": 2.0e-3, "gemm_fraction": 0.5, "hbm_fraction": 0.8}
    eng = load_engine("sglang")
    from dataclasses import replace
    truth = replace(eng, **true)
    rng = np.random.default_rng(7)
    rows = _synthetic_rows()
    for r in rows:
        r["measured"] = repr(predict_row(r, truth) * float(np.exp(rng.normal(0, 0.01))))   # 1 % noise
    res = calibrate(rows, eng, tuple(true))
    for p, v in true.items():
        assert res.values[p] == pytest.approx(v, rel=0.15), (p, res.values, res.stderr)
        assert res.stderr[p] < 0.5 * v
    assert res.rms_after < 0.02 < res.rms_before


def test_holdout_sglang_eagle3_batches():
    # Fit on part of the SGLang EAGLE-3 table (batches 2, 8, 24, 48, 64), predict the held-back ones (4, 16, 32, 56).
    rows = [r for r in load_rows() if r["source"].startswith("EAGLE-3 paper Table 3") and r["method"] == "eagle3"]
    fit = [r for r in rows if r["batch"] in ("2", "8", "24", "48", "64")]
    held = [r for r in rows if r["batch"] in ("4", "16", "32", "56")]
    res = calibrate(fit, "sglang", ("spec_bookkeeping_s", "gemm_fraction"))
    errs = [predict_row(r, res.engine) / float(r["measured"]) - 1 for r in held]
    assert max(abs(e) for e in errs) <= 0.15, errs


def test_calibrate_cli_writes_a_working_profile(tmp_path, capsys):
    rows = [r for r in load_rows() if r["source"].startswith("TensorRT-LLM")]
    src = _write(tmp_path / "m.csv", rows)
    out = tmp_path / "mine.toml"
    rc = main(["calibrate", str(src), "--engine", "trtllm", "--out", str(out), "--params",
               "host_step_s,spec_bookkeeping_s", "--format", "json"])
    got = json.loads(capsys.readouterr().out)
    assert rc == 0 and set(got["values"]) == {"host_step_s", "spec_bookkeeping_s"}
    assert all(math.isfinite(x) for x in got["residuals"])
    e = load_engine(str(out))
    assert e.name == "mine" and "calibrated" not in e.sources
    rc = main(["curve", "--hardware", "b200", "--model", "deepseek-r1", "--tp", "8", "--method", "mtp",
               "--engine", str(out), "--batch", "1", "--format", "json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["points"][0]["feasible"]


def test_calibrate_errors(tmp_path, capsys):
    rows = load_rows()[:1]
    with pytest.raises(ScenarioError, match="unknown calibration parameter"):
        calibrate(rows, "sglang", ("latency",))
    with pytest.raises(ScenarioError, match="cannot determine 2 parameters"):
        calibrate(rows, "sglang", ("spec_bookkeeping_s", "gemm_fraction"))
    rc = main(["calibrate", str(tmp_path / "none.csv"), "--engine", "sglang", "--out", str(tmp_path / "x.toml")])
    assert rc == 2 and capsys.readouterr().err.startswith("error: ")


def test_validate_cli(tmp_path, capsys):
    rc = main(["validate", "--report", str(tmp_path / "v"), "--format", "json"])
    out = capsys.readouterr().out
    assert rc == 0
    d = json.loads(out[: out.rindex("}") + 1])
    assert d["summary"]["overall"]["n"] >= 30
    assert (tmp_path / "v.md").exists() and (tmp_path / "v.csv").exists()
    assert REQUIRED[0] == "row_id" and "speedup" in METRICS


def test_row_scheduler_mode_and_draft_step_overhead():
    from dataclasses import replace
    rows = [r for r in load_rows() if r["source"].startswith("vLLM issue #20780")]
    base = next(r for r in rows if r["metric"] == "base_step_s")
    eng = load_engine("vllm")
    synced = predict_row(base, eng)                                   # the row says: no async scheduling
    overlapped = predict_row(dict(base, overlap_scheduler=""), eng)   # the profile's default (async on)
    assert synced == pytest.approx(overlapped + eng.host_step_s, rel=1e-9)
    with pytest.raises(ScenarioError, match="overlap_scheduler = 'maybe'"):
        predict_row(dict(base, overlap_scheduler="maybe"), eng)
    spec = next(r for r in rows if r["metric"] == "spec_step_s" and r["k"] == "4")
    more = replace(eng, draft_step_overhead_s=eng.draft_step_overhead_s + 1e-3)
    assert predict_row(spec, more) == pytest.approx(predict_row(spec, eng) + 4e-3, rel=1e-9)   # 4 draft passes
