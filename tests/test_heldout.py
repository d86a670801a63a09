"""Held-out error bands (simulator/heldout.py, tools/heldout_bands.py) and their place in `specroof curve`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from simulator.errors import SpecError
from simulator.heldout import (
    MIN_ROWS,
    MIN_SOURCES,
    Band,
    band_for,
    batch_band,
    build_bands,
    interval,
    load_bands,
    to_toml,
)

from .helpers import load_tool, run

records = st.lists(st.tuples(st.booleans(), st.integers(1, 512).map(float), st.booleans(),
                             st.floats(0.2, 5.0), st.sampled_from(["s1", "s2", "s3"])), max_size=60)


def _rec(n, moe=True, batch=1.0, given_=True, ratio=0.9, sources=("a", "b", "c")):
    return [(moe, batch, given_, ratio, sources[i % len(sources)]) for i in range(n)]


def test_batch_bands_edges():
    assert [batch_band(b) for b in (1, 4, 4.5, 5, 32, 33, 1024)] == ["1-4", "1-4", "5-32", "5-32", "5-32", "33+",
                                                                    "33+"]


def _interval_by_hand(ratios, sources):
    """The module docstring's formula, written out: source means, their spread, the pooled scatter within."""
    logs = np.log(ratios)
    names = sorted(set(sources))
    means = np.array([np.mean([x for x, s in zip(logs, sources) if s == n]) for n in names])
    n = len(names)
    tau = np.std(means, ddof=1)
    res = [x - means[names.index(s)] for x, s in zip(logs, sources)]
    sigma = np.sqrt(np.sum(np.square(res)) / (len(logs) - n)) if len(logs) > n else 0.0
    t90 = {2: 1.8856180831641267, 3: 1.6377443536962102}[n - 1]      # Student t, 0.90 quantile, 2 and 3 dof
    half = t90 * np.sqrt(tau ** 2 * (1 + 1 / n) + sigma ** 2)
    return np.exp(means.mean() - half), np.exp(means.mean()), np.exp(means.mean() + half), tau, sigma


def test_build_bands_interval_thresholds_and_the_any_acceptance_pool():
    ratios = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3]
    srcs = ["abc"[i % 3] for i in range(9)]
    got = {(b.targets, b.batch, b.acceptance): b for b in build_bands([(True, 8.0, True, r, s)
                                                                        for r, s in zip(ratios, srcs)])}
    assert set(got) == {("moe", "5-32", "given"), ("moe", "5-32", "any")}
    b = got[("moe", "5-32", "given")]
    assert (b.rows, b.sources) == (9, 3)
    assert (b.lo, b.mid, b.hi, b.tau, b.sigma) == pytest.approx(_interval_by_hand(ratios, srcs))
    # Too few rows, or fewer than MIN_SOURCES sources: no band.
    assert build_bands(_rec(MIN_ROWS - 1)) == []
    assert build_bands(_rec(MIN_ROWS, sources=("a", "b"))) == []
    # Given and assumed rows of one regime pool into 'any' where neither alone is enough.
    half = _rec(MIN_ROWS // 2, given_=True) + _rec(MIN_ROWS - MIN_ROWS // 2, given_=False)
    assert [(b.acceptance, b.rows) for b in build_bands(half)] == [("any", MIN_ROWS)]
    assert MIN_SOURCES == 3


def test_sources_not_rows_set_the_width():
    # Ten rows of one source at 0.9 and one row each of two others at 0.6 and 1.35: by rows the band would sit
    # tight about 0.9; the random-effects interval is as wide as the three sources disagree.
    ratios = [0.9] * 10 + [0.6, 1.35]
    srcs = ["big"] * 10 + ["x", "y"]
    lo, mid, hi, tau, sigma = interval(np.log(ratios), srcs)
    assert sigma == pytest.approx(0.0, abs=1e-12) and tau == pytest.approx(np.std(np.log([0.9, 0.6, 1.35]), ddof=1))
    assert lo < 0.6 and hi > 1.35 and mid == pytest.approx(np.exp(np.mean(np.log([0.9, 0.6, 1.35]))))
    assert (lo, mid, hi, tau, sigma) == pytest.approx(_interval_by_hand(ratios, srcs))


@given(st.lists(st.tuples(st.floats(0.2, 5.0), st.sampled_from("abcd")), min_size=3, max_size=40)
       .filter(lambda r: len({s for _, s in r}) >= 2))
def test_the_interval_is_ordered_and_widens_with_the_spread(recs):
    logs, srcs = np.log([r for r, _ in recs]), [s for _, s in recs]
    lo, mid, hi, tau, sigma = interval(logs, srcs)
    assert 0 < lo <= mid <= hi and tau >= 0 and sigma >= 0
    lo2, mid2, hi2, *_ = interval(2.0 * logs, srcs)          # every log ratio doubled: the spreads double
    assert np.log(hi2 / lo2) == pytest.approx(2.0 * np.log(hi / lo), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("ratio", [0.0, -1.0, float("nan"), float("inf")])
def test_build_bands_refuses_a_ratio_that_is_not_a_positive_number(ratio):
    with pytest.raises(ValueError, match=r"record 3 \(b\): ratio"):
        build_bands(_rec(3) + [(True, 1.0, True, ratio, "b")])


def test_band_for_prefers_the_regime_then_any_acceptance_and_never_borrows_another_batch_or_class():
    exact = Band("moe", "1-4", "given", 9, 3, 0.8, 0.9, 1.0, 0.1, 0.05)
    pooled = Band("moe", "1-4", "any", 20, 3, 0.7, 0.9, 1.1, 0.1, 0.05)
    assert band_for([exact, pooled], True, 2, True) is exact
    assert band_for([exact, pooled], True, 2, False) is pooled      # no 'assumed' band: the pool
    assert band_for([exact], True, 2, False) is None
    assert band_for([exact, pooled], True, 8, True) is None          # another batch band
    assert band_for([exact, pooled], False, 1, True) is None         # dense targets
    assert exact.speedup_range(2.0) == pytest.approx((1.6, 2.0))
    assert exact.regime == "moe targets, batch 1-4, acceptance given"


@given(records)
@example([(False, 1.0, True, 1.0, s) for s in ("s1", "s2", "s3") for _ in range(3)])   # all ratios equal
def test_bands_are_ordered_and_round_trip_through_the_file(tmp_path_factory, recs):
    bands = build_bands(recs)
    for b in bands:
        assert b.rows >= MIN_ROWS and b.sources >= MIN_SOURCES and 0 < b.lo <= b.mid <= b.hi
    path = tmp_path_factory.mktemp("bands") / "heldout.toml"
    path.write_text(to_toml(bands, "a header\nof two lines"))
    back = load_bands(path)
    assert [(b.targets, b.batch, b.acceptance, b.rows, b.sources) for b in back] == \
        [(b.targets, b.batch, b.acceptance, b.rows, b.sources) for b in bands]
    for a, b in zip(back, bands):
        assert (a.lo, a.mid, a.hi, a.tau, a.sigma) == pytest.approx((b.lo, b.mid, b.hi, b.tau, b.sigma), abs=6e-5)


def test_the_shipped_bands_load_and_hold_the_low_batch_moe_regime():
    bands = load_bands()
    assert bands, "calibration/heldout.toml is shipped"
    assert band_for(bands, True, 1, True) is not None


GOOD = ('targets = "moe"\nbatch = "1-4"\nacceptance = "given"\nrows = 9\nsources = 3\nlo = 0.8\nmid = 0.9\nhi = 1.0\n'
        "tau = 0.1\nsigma = 0.0\n")


# One field of a good band replaced: (the text replaced, its replacement, what the error says).
BAD_FIELDS = [
    ('"moe"', '"sparse"', r"band 1: targets = 'sparse'; allowed: dense, moe"),
    ('"1-4"', '"any"', r"band 1: batch = 'any'; allowed: 1-4, 5-32, 33\+"),
    ('"given"', '"maybe"', r"acceptance = 'maybe'; allowed: given, assumed, any"),
    ("rows = 9", "rows = 9.5", r"rows = 9.5; expected an integer > 0"),
    ("rows = 9", "rows = true", r"rows = True; expected an integer > 0"),
    ("lo = 0.8", "lo = -0.8", r"lo = -0.8; expected a finite number > 0"),
    ("lo = 0.8", "lo = 0", r"lo = 0; expected a finite number > 0"),
    ("lo = 0.8", "lo = nan", r"lo = nan; expected a finite number > 0"),
    ("lo = 0.8", 'lo = "0.8"', r"lo = '0.8'; expected a finite number > 0"),
    ("lo = 0.8", "lo = 0.95", r"expected lo <= mid <= hi"),
    ("tau = 0.1", "tau = -0.1", r"tau = -0.1; expected a finite number >= 0"),
    ("sigma = 0.0\n", "", r"sigma = None; expected a finite number >= 0"),
    ("sigma = 0.0\n", "sigma = 0.0\nbias = 1\n", r"band 1: unknown field 'bias'"),
]
BAD_FILES = [
    ("[[band]]\n" + GOOD + "[[band]]\n" + GOOD, r"regime moe/1-4/given appears twice"),
    ("band = 3\n", r"band must be an array of tables"),
    ("band = [3]\n", r"band 1: expected a table"),
    ("[meta]\nx = 1\n", r"unknown table 'meta'; allowed: \[\[band\]\]"),
    ("[[band]\n", r"malformed TOML"),
]


@pytest.mark.parametrize("text, match", [("[[band]]\n" + GOOD.replace(old, new), m) for old, new, m in BAD_FIELDS]
                         + BAD_FILES)
def test_a_bad_bands_file_is_one_error_naming_file_entry_field_and_value(tmp_path, text, match):
    p = tmp_path / "heldout.toml"
    p.write_text(text)
    with pytest.raises(SpecError, match=match) as e:
        load_bands(p)
    assert str(p) in str(e.value) and "\n" not in str(e.value)


def test_a_missing_bands_file_is_named(tmp_path):
    with pytest.raises(SpecError, match="file not found"):
        load_bands(tmp_path / "none.toml")


def test_heldout_bands_tool_prints_and_writes_only_a_held_out_report(tmp_path, capsys):
    tool = load_tool("heldout_bands")
    head = "row_id,source_id,method,metric,model,batch,concurrency"
    rows = [head] + [f"R{i},s{i % 3},mtp,speedup,deepseek-r1,,2" for i in range(9)] + \
        ["D1,s0,eagle3,speedup,llama-3.1-8b,1,", "L1,s0,mtp,speedup,deepseek-r1,,2", "N1,s0,mtp,speedup,deepseek-r1,,"]
    rp, rr = tmp_path / "rows.csv", tmp_path / "cv.csv"
    rp.write_text("\n".join(rows) + "\n")
    rep = ["row_id,error,kind,scope"] + [f"R{i},{0.1 * i - 0.3:.2f},speedup,headline" for i in range(9)] + \
        ["D1,0.1,speedup,headline", "L1,0.5,speedup,legacy engine", "N1,0.5,speedup,headline"]
    rr.write_text("\n".join(rep) + "\n")
    (tmp_path / "cv.md").write_text("Predictions: in-sample (profiles as shipped).\n")
    out = tmp_path / "bands.toml"
    assert tool.main([str(rr), "--rows", str(rp)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [ln.split()[:5] for ln in lines[1:]] == [["moe", "1-4", "any", "9", "3"], ["moe", "1-4", "given", "9", "3"]]
    # measured / predicted = 1 / (1 + error): R0..R8 errors -0.3..+0.5, source s(i % 3).
    ratios = [1 / (1 + (0.1 * i - 0.3)) for i in range(9)]
    want = _interval_by_hand(ratios, [f"s{i % 3}" for i in range(9)])
    assert [float(x) for x in lines[1].split()[5:10]] == pytest.approx(want, abs=1e-3)
    assert tool.main([str(rr), "--rows", str(rp), "--write", "--out", str(out)]) == 2
    assert "not a held-out report" in capsys.readouterr().err and not out.exists()
    (tmp_path / "cv.md").write_text("Predictions: leave-one-source-out: every calibrated parameter refitted\n")
    assert tool.main([str(rr), "--rows", str(rp), "--write", "--out", str(out)]) == 0
    assert [b.rows for b in load_bands(out)] == [9, 9]
    rr.write_text("row_id,error,kind,scope\nR0,abc,speedup,headline\n")
    assert tool.main([str(rr), "--rows", str(rp)]) == 2
    assert "row R0: error 'abc'" in capsys.readouterr().err
    rr.write_text("row_id,error,kind,scope\nR0,0.1,speedup,headline\n")     # one row: no regime holds enough
    assert tool.main([str(rr), "--rows", str(rp)]) == 2
    assert "no regime holds enough" in capsys.readouterr().err


MTP = ["--hardware", "b200", "--model", "deepseek-r1", "--tp", "8", "--precision", "fp8", "--method", "mtp",
       "--engine", "sglang", "--k", "2", "--context", "1400", "--acceptance-length", "2.3"]


def test_curve_prints_each_points_band_and_says_where_none_applies(capsys):
    bands = load_bands()
    rc, out, _ = run(capsys, "curve", *MTP, "--batch", "1,64", "--format", "json")
    pts = json.loads(out)["points"]
    for p in pts:
        b = band_for(bands, True, p["batch"], True)
        if b is None:
            assert p["heldout"] is None
            continue
        h = p["heldout"]
        assert h["regime"] == b.regime and h["rows"] == b.rows
        assert (h["speedup_lo"], h["speedup_hi"]) == pytest.approx(b.speedup_range(p["speedup"]))
    rc, out, _ = run(capsys, "curve", *MTP, "--batch", "1")
    assert rc == 0 and "heldout_80%" in out.splitlines()[1]
    b = band_for(bands, True, 1, True)
    assert f"held out ({b.regime}; {b.rows} published speedups from {b.sources} sources" in out
    rc, out, _ = run(capsys, "curve", *MTP, "--batch", "1", "--format", "csv")
    head, first = out.splitlines()[:2]
    cols = dict(zip(head.split(","), first.split(",")))
    assert float(cols["heldout_lo_speedup"]) == pytest.approx(float(cols["speedup"]) * b.lo, rel=2e-3)
    # Dense targets at batch 64: no held-out published speedup (those rows are all at batch 1-4).
    rc, out, _ = run(capsys, "curve", "--model", "llama-3.1-8b", "--batch", "64")
    assert band_for(bands, False, 64, False) is None
    assert "held out: no published speedup like the point(s) at batch 64 (dense targets" in out


def test_without_a_bands_file_curve_says_nothing_about_held_out_error(capsys, monkeypatch, tmp_path):
    (tmp_path / "calibration").mkdir()        # a data folder whose calibration holds no heldout.toml
    monkeypatch.setenv("SPECROOF_DATA_DIR", str(tmp_path))
    assert load_bands() == ()
    rc, out, _ = run(capsys, "curve", "--model", "llama-3.1-8b", "--batch", "1,64")
    assert rc == 0 and "held out" not in out
    rc, out, _ = run(capsys, "curve", "--model", "llama-3.1-8b", "--batch", "1,64", "--format", "json")
    assert all("heldout" not in p for p in json.loads(out)["points"])
