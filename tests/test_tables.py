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
