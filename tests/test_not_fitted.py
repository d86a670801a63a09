"""Sources validated but not fitted on (calibration/not_fitted.toml): the shipped list, its reader's refusals, the fit
pool that leaves them out, and cross-validation predicting them with the fit on every other source."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from simulator.calibration import usable
from simulator.cross_validation import fit_pool
from simulator.errors import SpecError
from simulator.fitted import NOT_FITTED_FILE, not_fitted
from simulator.rows import load_rows

from .helpers import run

ROOT = Path(__file__).resolve().parents[1]
USER = "qwen3-30b-a3b-eagle3-user-reports"
GOOD = 'reason = "runs its author reports as not reproducing"\nevidence = ["https://github.com/o/r/issues/1"]\n'


def _data_dir(tmp_path, monkeypatch, text: str) -> Path:
    (tmp_path / "calibration").mkdir()
    p = tmp_path / "calibration" / NOT_FITTED_FILE
    p.write_text(text)
    monkeypatch.setenv("SPECROOF_DATA_DIR", str(tmp_path))
    return p


def test_every_source_not_fitted_is_a_shipped_source_with_its_reason():
    listed = not_fitted()
    assert USER in listed
    sources = {r["source_id"] for r in load_rows()}
    assert set(listed) <= sources, set(listed) - sources       # a typo would silently fit the source
    assert all(len(why) > 200 for why in listed.values())


def test_every_source_not_fitted_has_rows_a_fit_would_use():
    # a listed source all of whose rows were outside the fit pool anyway (legacy builds, unknown acceptance) would be
    # listed for nothing (found by review, 2026-12-08)
    listed = not_fitted()
    prepared, _ = usable([r for r in load_rows() if r["source_id"] in listed])
    assert {p.row["source_id"] for p in fit_pool(prepared, skip=())} == set(listed)


def test_the_fit_pool_leaves_the_listed_sources_out_and_only_them():
    rows = [r for r in load_rows() if r["source_id"] in (USER, "gpustack-qwen3-8b-h100")]
    prepared, _ = usable(rows)
    every = fit_pool(prepared, skip=())
    pool = fit_pool(prepared)
    assert {p.row["source_id"] for p in every} == {USER, "gpustack-qwen3-8b-h100"}
    assert {p.row["source_id"] for p in pool} == {"gpustack-qwen3-8b-h100"}
    assert len(every) - len(pool) == sum(p.row["source_id"] == USER for p in every) == 17


def test_no_file_lists_no_source(tmp_path, monkeypatch):
    (tmp_path / "calibration").mkdir()
    monkeypatch.setenv("SPECROOF_DATA_DIR", str(tmp_path))
    assert not_fitted() == {}
    (tmp_path / "calibration" / NOT_FITTED_FILE).write_text(f"[some-source]\n{GOOD}")
    assert list(not_fitted()) == ["some-source"]


@pytest.mark.parametrize("text, match", [
    ("[s]\nreason = \"why\"\n", r"\[s\]: expected a table of exactly reason and evidence, got \['reason'\]"),
    (f"[s]\n{GOOD}extra = 1\n", r"\[s\]: expected a table of exactly reason and evidence"),
    ("s = 1\n", r"\[s\]: expected a table of exactly reason and evidence, got int"),
    ('[s]\nreason = "  "\nevidence = ["https://x.org/a"]\n', r"\[s\] reason = '  ': expected a non-empty text"),
    ('[s]\nreason = 3\nevidence = ["https://x.org/a"]\n', r"\[s\] reason = 3: expected a non-empty text"),
    ('[s]\nreason = "why"\nevidence = []\n', r"\[s\] evidence = \[\]: expected a non-empty list of https URLs"),
    ('[s]\nreason = "why"\nevidence = ["http://x.org/a"]\n', r"evidence\[0\] = 'http://x.org/a': expected an https"),
    ('[s]\nreason = "why"\nevidence = ["https://x.org/a", "https:///"]\n', r"evidence\[1\] = 'https:///': expected"),
    ('[s]\nreason = "why"\nevidence = ["https://x.org/a\\n"]\n', r"evidence\[0\] = 'https://x.org/a\\n': expected"),
    ('[s]\nreason = "why"\nevidence = [3]\n', r"evidence\[0\] = 3: expected an https URL"),
    ('[s]\nreason = "why"\nevidence = "https://x.org/a"\n', r"evidence = 'https://x.org/a': expected a non-empty list"),
    ('[" "]\nreason = "why"\nevidence = ["https://x.org/a"]\n', r"\[ \]: an empty source id"),
    ("[s\n", r"malformed TOML"),
])
def test_a_malformed_list_is_refused_naming_the_file_and_field(tmp_path, monkeypatch, text, match):
    p = _data_dir(tmp_path, monkeypatch, text)
    with pytest.raises(SpecError, match=match) as e:
        not_fitted()
    assert str(p) in str(e.value)


@pytest.mark.slow
def test_cross_validation_predicts_a_source_not_fitted_with_the_fit_on_all_others(tmp_path, capsys):
    # Two fitted sources and the one not fitted: the user reports are in no fold and priced with the full fit.
    rows = [r for r in load_rows() if r["source_id"] in (USER, "gpustack-qwen3-8b-h100", "specdrift-gptoss-h100")]
    path = tmp_path / "rows.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    from simulator.cross_validation import crossval, predict_with
    cv = crossval(str(path))
    assert cv.not_fitted == (USER,) and USER not in cv.folds
    assert sorted(cv.folds) == ["gpustack-qwen3-8b-h100", "specdrift-gptoss-h100"]
    assert USER not in {p.row["source_id"] for p in usable(rows)[0] if p.row["row_id"] in cv.full.row_ids}
    by_id = {p.row["row_id"]: p for p in usable(rows)[0]}
    mine = [r for r in cv.report.rows if r["source_id"] == USER]
    assert len(mine) == 17
    for r in mine:
        assert r["predicted"] == pytest.approx(predict_with(by_id[r["row_id"]], cv.full), rel=1e-12)
    rc, _, err = run(capsys, "validate", "--cv", "source", str(path))
    assert rc == 0 and f"not fitted on (calibration/not_fitted.toml names why): {USER};" in err


def test_a_pool_emptied_by_the_list_says_so(tmp_path):
    # found by review (2026-12-08): a rows file whose every headline row is a listed source's said only "no headline
    # rows to cross-validate"
    from simulator.cross_validation import crossval
    from simulator.errors import ScenarioError
    rows = [r for r in load_rows() if r["source_id"] == USER]
    with pytest.raises(ScenarioError, match=f"no headline rows to cross-validate .calibration/not_fitted.toml leaves "
                                            f"out {USER}"):
        crossval(rows)
