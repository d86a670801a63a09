"""Curve shape (simulator/shape.py): the change of a speedup between two loads of one configuration, predicted
against measured, which an acceptance length shared by both loads cancels from."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import Acceptance, Scenario, predict
from simulator.report import ValidationReport
from simulator.shape import FLAT, curve_key, curve_load, markdown, pairs, summary
from simulator.validation import load_rows, record

BASE = {"row_id": "X1", "source_id": "src", "source": "src", "hardware": "h100-sxm", "engine": "sglang",
        "model": "llama-3.1-8b", "method": "eagle3", "k": "3", "metric": "speedup", "measured": "1.5", "batch": "1",
        "concurrency": "", "tau": "2.5", "notes": "n", "engine_version": "", "source_url": "u"}


def _rec(rid, load, measured, predicted, **kw):
    r = record({**BASE, "row_id": rid, "batch": str(load), "measured": str(measured), **kw})
    r.update(scope="headline", predicted=predicted, error=predicted / measured - 1.0)
    return r


def test_points_of_one_curve_share_a_key_and_other_configurations_do_not():
    k = curve_key(BASE)
    # what may differ along a curve: the load, the acceptance measured there, the row's bookkeeping, the build
    assert curve_key({**BASE, "row_id": "X2", "batch": "8", "tau": "2.1", "measured": "1.1", "notes": "other",
                      "engine_version": "v2", "source_url": "u2"}) == k
    for col, v in (("k", "4"), ("tp", "2"), ("model", "qwen3-8b"), ("source", "other label"), ("isl", "8192")):
        assert curve_key({**BASE, col: v}) != k, col
    # no curve: a step metric, or no load
    assert curve_key({**BASE, "metric": "tpot_s"}) == "" and curve_key({**BASE, "batch": ""}) == ""
    assert curve_load({**BASE, "batch": "", "concurrency": "64"}) == 64.0 and curve_load({**BASE, "batch": ""}) is None


def test_a_step_compares_the_predicted_change_with_the_measured_one():
    recs = [_rec("A", 1, 2.0, 2.2), _rec("C", 64, 1.2, 1.98), _rec("B", 8, 1.6, 1.76)]
    st_ = pairs(recs)
    assert [s["rows"] for s in st_] == ["A-B", "B-C"] and [s["loads"] for s in st_] == ["1->8", "8->64"]
    assert st_[0]["error"] == pytest.approx(0.0) and st_[0]["agrees"]                  # same change, level off
    assert st_[1]["measured_change"] == pytest.approx(-0.25) and st_[1]["predicted_change"] == pytest.approx(0.125)
    assert st_[1]["error"] == pytest.approx(1.125 / 0.75 - 1) and not st_[1]["agrees"]  # rises where it falls
    s = summary(st_)["headline"]["overall"]
    assert s["n"] == 2 and s["agrees"] == 0.5 and s["median_abs_error"] == pytest.approx(0.25)
    md = markdown(st_)
    assert "### curve shape: headline speedup rows" in md and "| A-B | src | headline | 1->8 |" in md


def test_rows_of_different_scopes_or_unpredicted_rows_make_no_step():
    a, b = _rec("A", 1, 2.0, 2.0), _rec("B", 8, 1.6, 1.6)
    b["scope"] = "acceptance unknown"
    c = _rec("C", 16, 1.4, 1.4)
    c["predicted"] = None
    assert pairs([a, b, c]) == [] and markdown([]) == ""


@settings(max_examples=40)
@given(m=st.lists(st.floats(0.3, 5.0), min_size=2, max_size=6), level=st.floats(0.2, 5.0),
       noise=st.lists(st.floats(-0.5, 0.5), min_size=6, max_size=6))
def test_a_level_error_shared_by_every_load_leaves_the_shape_unchanged(m, level, noise):
    """Scaling every prediction of a curve by one factor (what an acceptance length wrong by the same factor at
    every load does) changes no shape error and no direction."""
    p = [x * (1.0 + e) for x, e in zip(m, noise)]
    one = pairs([_rec(f"R{i}", 2 ** i, x, y) for i, (x, y) in enumerate(zip(m, p))])
    scaled = pairs([_rec(f"R{i}", 2 ** i, x, level * y) for i, (x, y) in enumerate(zip(m, p))])
    assert len(one) == len(m) - 1
    for a, b in zip(one, scaled):
        assert b["error"] == pytest.approx(a["error"], rel=1e-9, abs=1e-12) and a["agrees"] == b["agrees"]
    exact = pairs([_rec(f"R{i}", 2 ** i, x, level * x) for i, x in enumerate(m)])
    assert all(s["error"] == pytest.approx(0.0, abs=1e-12) and s["agrees"] for s in exact)


@pytest.mark.parametrize("model,method,hw,tp,eng", [("llama-3.1-8b", "eagle3", "h100-sxm", 1, "sglang"),
                                                     ("deepseek-r1", "mtp", "h200-sxm", 8, "sglang"),
                                                     ("qwen3-30b-a3b", "eagle3", "h100-sxm", 2, "vllm")])
def test_the_predicted_change_along_batch_does_not_depend_on_the_acceptance_length(model, method, hw, tp, eng):
    """The premise of scoring shape on 'acceptance unknown' rows: at a fixed k neither step depends on tau, so
    speedup(B2) / speedup(B1) is the same at every acceptance length."""
    ratios = []
    for tau in (1.5, 2.4, 3.6):
        s = Scenario(hardware=hw, model=model, method=method, tp=tp, engine=eng, k=4, batch=(1, 8, 64),
                     acceptance=Acceptance.from_length(tau, 4))
        sp = np.asarray(predict(s).speedup)
        ratios.append(sp[1:] / sp[:-1])
    np.testing.assert_allclose(ratios[1], ratios[0], rtol=1e-12)
    np.testing.assert_allclose(ratios[2], ratios[0], rtol=1e-12)


def test_flat_changes_agree_in_direction():
    recs = [_rec("A", 1, 1.0, 1.0), _rec("B", 2, 1.0 + FLAT / 2, 1.0 - FLAT / 2)]
    assert pairs(recs)[0]["agrees"]


def test_the_report_carries_the_shape_of_the_shipped_curves():
    rows = load_rows()
    recs = []
    for r in rows:
        rec = record(r)
        if rec["curve"]:          # priced exactly: every step's shape error is 0
            rec.update(scope="headline", predicted=rec["measured"], error=0.0)
            recs.append(rec)
    rep = ValidationReport(recs, "test")
    steps = rep.shape()
    assert len(steps) >= 20 and all(s["error"] == pytest.approx(0.0) for s in steps)
    assert "curve shape: headline speedup rows" in rep.markdown() and rep.to_dict()["shape"] == steps
