"""A calibrated profile, written, prices as the fit did; a fit reports every parameter it did not determine; a refused
fit says when the rows are not explained (found by a user review of the calibrate flow, 2026-12-06)."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import calibrate, load_engine, load_rows, write_profile
from simulator.calibration import FITTED, PARAMS
from simulator.cli import main
from simulator.errors import ScenarioError
from simulator.validation import predict_row

STEPS = ("base_step_s", "spec_step_s")
ISSUE = [r for r in load_rows() if r["source_id"] == "vllm-issue-20780" and r["metric"] in STEPS]
FIT_ROWS = [r for r in ISSUE if r["k"] in ("", "2", "4", "6")]
NOTEBOOK_PARAMS = ("host_step_s", "spec_bookkeeping_s", "draft_step_overhead_s")


def _write_rows(path, rows: list[dict[str, str]]):
    """The rows as a CSV file in the validation schema (the header of the first row's keys); returns the path."""
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def _k3_rows() -> list[dict[str, str]]:
    """vLLM EAGLE-3 rows at one depth (k = 3): the bookkeeping per step and the host work per draft pass are
    collinear there (the rows fix bookkeeping + 3 x draft pass only)."""
    truth = replace(load_engine("vllm"), spec_bookkeeping_s=1e-3)
    rows = []
    for b in (1, 4, 16, 64):
        for metric in STEPS:
            r = dict(row_id=f"{metric}-{b}", source="synthetic", hardware="h100-sxm", engine="vllm",
                     model="llama-3.1-8b", method="eagle3", batch=str(b), context="1024", k="3", tau="2.8",
                     tau_k="3", metric=metric, measured="1")
            rows.append(dict(r, measured=repr(predict_row(r, truth))))
    return rows


def _prices_as_the_fit(path, fitted, rows) -> None:
    mine = load_engine(str(path))
    for r in rows:
        assert predict_row(r, mine) == pytest.approx(predict_row(r, fitted), rel=1e-9, abs=0), r["row_id"]


@pytest.mark.parametrize("as_profile", [True, False])
def test_a_profile_fitted_from_the_sourced_values_is_written_as_fitted(tmp_path, as_profile):
    """Notebook 05's flow: fit from load_engine('vllm').uncalibrated(), then write_profile. The base given as that
    EngineProfile raised a TypeError; given as the name 'vllm' it wrote the shipped calibration's host step (0.97 ms)
    where the fit had kept the sourced 0.3 ms, so every written step priced 0.67 ms above the fit (+9 % at k = 1)."""
    base = load_engine("vllm").uncalibrated()
    res = calibrate(FIT_ROWS, base, NOTEBOOK_PARAMS)
    assert {p.name: p.status for p in res.params}["host_step_s"] != FITTED      # kept at its sourced value
    out = write_profile(res, "vllm", base if as_profile else "vllm", tmp_path / "mine.toml", "issue 20780")
    mine = load_engine(str(out))
    assert mine.host_step_s == pytest.approx(base.host_step_s) != load_engine("vllm").host_step_s
    assert mine.spec_bookkeeping_s == pytest.approx(res.engines["vllm"].spec_bookkeeping_s)
    _prices_as_the_fit(out, res.engines["vllm"], ISSUE)


def test_the_cli_still_writes_the_shipped_calibration_it_started_from(tmp_path, capsys):
    """`specroof calibrate --engine vllm` starts from the shipped (calibrated) profile: the host step it keeps is the
    shipped calibration's, said so in the file, and the written profile prices the rows as the fit printed."""
    src = _write_rows(tmp_path / "m.csv", FIT_ROWS)
    out = tmp_path / "cli.toml"
    assert main(["calibrate", str(src), "--engine", "vllm", "--out", str(out), "--params", "spec_bookkeeping_s"]) == 0
    capsys.readouterr()
    assert load_engine(str(out)).host_step_s == load_engine("vllm").host_step_s
    assert "the shipped calibration (calibration/fit.toml)" in out.read_text()
    res = calibrate(str(src), "vllm", ("spec_bookkeeping_s",))
    _prices_as_the_fit(out, res.engines["vllm"], ISSUE)


@settings(max_examples=6, deadline=None)
@given(host=st.floats(0.0, PARAMS["host_step_s"].hi), draft=st.floats(0.0, PARAMS["draft_step_overhead_s"].hi))
def test_whatever_a_kept_parameter_started_at_the_written_profile_prices_as_the_fit(tmp_path_factory, host, draft):
    base = replace(load_engine("vllm").uncalibrated(), host_step_s=host, draft_step_overhead_s=draft)
    res = calibrate(FIT_ROWS, base, ("spec_bookkeeping_s",))
    out = write_profile(res, "vllm", base, tmp_path_factory.mktemp("p") / "mine.toml", "issue 20780")
    _prices_as_the_fit(out, res.engines["vllm"], ISSUE)


def test_write_profile_refuses_a_profile_that_would_not_price_as_the_fit(tmp_path):
    base = load_engine("vllm")
    res = calibrate(FIT_ROWS, base, ("spec_bookkeeping_s",))
    out = tmp_path / "x.toml"
    with pytest.raises(ScenarioError, match=r"engine 'sglang' is not in the fit; it fitted vllm"):
        write_profile(res, "sglang", "vllm", out, "rows")
    changed = calibrate(FIT_ROWS, replace(base, overlap=False), ("spec_bookkeeping_s",))   # not a fitted field
    with pytest.raises(ScenarioError, match=r"would not price as the fit did \(overlap differ"):
        write_profile(changed, "vllm", replace(base, overlap=False), out, "rows")
    with pytest.raises(ScenarioError, match=r"base profile 'mine' has no file to copy"):
        write_profile(res, "vllm", replace(base, name="mine"), out, "rows")
    assert not out.exists() and not list(tmp_path.iterdir())


def test_an_unpruned_fit_reports_what_it_did_not_determine(tmp_path):
    """calibrate(..., prune=False) reported two collinear parameters 'fitted' at +- inf and the fit `ok`, and
    write_profile wrote them as fitted."""
    rows = _k3_rows()
    params = ("spec_bookkeeping_s", "draft_step_overhead_s")
    pruned, kept_all = calibrate(rows, "vllm", params), calibrate(rows, "vllm", params, prune=False)
    assert not pruned.ok and not kept_all.ok
    for p in kept_all.params:
        assert p.status != FITTED and not np.isfinite(p.stderr) and not p.kept and p.value == p.tried
        assert getattr(kept_all.engines["vllm"], p.name) == p.value
        assert "not determined" in p.line() and "(the fit value, not pruned)" in p.line() and "inf" not in p.line()
    assert [p.kept for p in pruned.params if p.status != FITTED] == [True]
    out = write_profile(kept_all, "vllm", "vllm", tmp_path / "k.toml", "k3")
    assert "fitted by specroof" not in out.read_text()
    _prices_as_the_fit(out, kept_all.engines["vllm"], rows)


def test_a_refused_fit_says_when_the_rows_are_not_explained_either(tmp_path, capsys):
    """A row written in ms (not s) was refused as 'parameters undetermined', with the advice to add measurements;
    the refusal now also says the rows are not explained and names the worst row."""
    rows = _k3_rows()
    rows[3]["measured"] = repr(float(rows[3]["measured"]) * 1e3)
    src = _write_rows(tmp_path / "ms.csv", rows)
    rc = main(["calibrate", str(src), "--engine", "vllm", "--out", str(tmp_path / "p.toml"), "--params",
               "spec_bookkeeping_s,draft_step_overhead_s"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: calibration left parameters undetermined (")
    assert "nor does it explain the rows: RMS log residual" in err
    assert f"worst row {rows[3]['row_id']}: predicted/measured - 1 = -99.9%" in err and err.count("\n") == 1


def test_calibrate_says_which_rows_name_another_engine_than_it_prices_with(tmp_path, capsys):
    """Calibrate prices every row with --engine (validation/README.md); a row of another engine (SGLang in a vLLM
    fit, or a name that is no engine) was fitted without a word. The CLI now names them on stderr."""
    rows = [dict(r) for r in FIT_ROWS]
    rows[1]["engine"], rows[2]["engine"] = "sglang", "tgi"
    rows[0]["engine"] = "VLLM"                                  # the same engine, in other letters: no note
    src = _write_rows(tmp_path / "mixed.csv", rows)
    rc = main(["calibrate", str(src), "--engine", "vllm", "--out", str(tmp_path / "p.toml"), "--params",
               "spec_bookkeeping_s"])
    err = capsys.readouterr().err
    assert rc == 0 and err == (f"note: 2 row(s) of {src} name another engine than --engine vllm ({rows[1]['row_id']}: "
                               f"sglang, {rows[2]['row_id']}: tgi); calibrate prices every row with vllm, whatever "
                               "its engine column says\n")
