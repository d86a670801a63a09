"""Results as pandas tables (simulator/tables.py): one row per point, the same numbers and nulls as to_dict."""

from __future__ import annotations

import math

import pytest

from simulator import Scenario, Workload, serve
from simulator.serving import Phase
from simulator.step import simulate_step
from simulator.workload import FAMILIES

pd = pytest.importorskip("pandas")


def _same(a, b) -> bool:
    return (a is None and (b is None or (isinstance(b, float) and math.isnan(b)))) or a == b


def test_a_serve_table_has_every_phase_field_of_both_modes_and_nulls_where_a_mode_does_not_fit():
    # 70B in BF16 fits on one H100 in neither mode: every number is null, as in to_dict
    r = serve(Scenario(model="llama-3.1-70b", method="eagle3"), Workload(osl=256, concurrency=(1, 8)))
    df = r.to_dataframe()
    assert len(df) == 2 and not df.feasible.any()
    assert df[[f"spec_{f}" for f in Phase.__dataclass_fields__]].isna().all().all()
    assert df.e2e_speedup.isna().all()
    ok = serve(Scenario(method="eagle3"), Workload(osl=256, concurrency=(1, 8)))
    pts, df = ok.to_dict()["points"], ok.to_dataframe()
    for name in ("spec", "base"):
        for f in Phase.__dataclass_fields__:
            assert all(_same(p[name][f], v) for p, v in zip(pts, df[f"{name}_{f}"])), (name, f)
    assert df.e2e_speedup.tolist() == pytest.approx(ok.e2e_speedup.tolist())


def test_a_rate_workload_table_carries_the_rate():
    df = serve(Scenario(method="eagle3"), Workload(osl=256, rate=(0.5, 2.0))).to_dataframe()
    assert df.rate.tolist() == [0.5, 2.0]


def test_a_step_table_spreads_the_families_and_nulls_an_infeasible_point():
    r = simulate_step(hardware="h100-sxm", model="llama-3.1-8b", batch=[1, 64, 65], max_running_requests=64)
    df = r.to_dataframe()
    assert df.feasible.tolist() == [True, True, False]
    for f in FAMILIES:
        assert df[f"{f}_s"].iloc[:2].tolist() == pytest.approx(r.breakdown_s[f][:2].tolist()), f
    assert df.loc[2, [f"{f}_s" for f in FAMILIES]].isna().all() and math.isnan(df.step_s[2])
    assert df.step_s.iloc[:2].tolist() == pytest.approx(r.step_s[:2].tolist())


def test_the_serve_table_prints_a_small_rate_with_its_digits(capsys):
    # review: 1.5 tokens/s per GPU of a 64-GPU prefill-bound run printed as 0.0
    from simulator.cli import fmt

    from .helpers import run
    assert [fmt.rate(x) for x in (None, 0.01534, 1.5349, 86.61, 1135.94)] == ["-", "0.0153", "1.53", "86.6", "1135.9"]
    rc, out, _ = run(capsys, "serve", "--model", "deepseek-r1", "--hardware", "h200-sxm", "--tp", "8", "--dp", "8",
                     "--precision", "fp8", "--isl", "32000", "--osl", "16", "--concurrency", "1")
    row = next(ln.split() for ln in out.splitlines() if ln.split()[:2] == ["1", "off"])
    assert rc == 0 and float(row[11]) > 0.0         # tok/s/gpu, about 0.02
