"""A serving sweep takes every workload input `specroof serve` does (review, 2026-12-06: a [serve] table had no
num_prompts, prompts_per_slot, prefill_gpus nor prefill instance layout, so a disaggregated or finite-run sweep could
not be written): each row is serve's point for that workload."""

from __future__ import annotations

import pytest

from simulator.errors import SpecError
from simulator.scenario import Scenario
from simulator.serving import Workload, serve
from simulator.sweep.serving import plan, serve_sweep, workload_kw

BASE = {"hardware": "h200-sxm", "model": "deepseek-r1", "tp": 8, "precision": "fp8", "method": "mtp", "k": 2,
        "engine": "sglang"}


def test_each_row_is_serve_with_the_same_workload():
    doc = {**BASE, "serve": {"isl": 1024, "osl": 512, "concurrency": [4, 64], "pd": True, "prefill_gpus": 8,
                             "prefill_tp": 1, "prefill_dp": 8, "prefill_ep": [1, 8], "prompts_per_slot": 10}}
    df = serve_sweep(doc)
    assert len(df) == 4 and df["feasible"].all()
    for ep in (1, 8):
        w = Workload(isl=1024, osl=512, concurrency=(4, 64), pd=True, prefill_gpus=8, prefill_layout=(1, 8, ep),
                     prompts_per_slot=10)
        pts = serve(Scenario(**BASE), w).to_dict()["points"]
        got = df[df["prefill_ep"] == ep].sort_values("concurrency")
        assert list(got["spec_ttft_s"]) == pytest.approx([p["spec"]["ttft_s"] for p in pts], rel=1e-12)
        assert list(got["base_tpot_s"]) == pytest.approx([p["base"]["tpot_s"] for p in pts], rel=1e-12)


def test_num_prompts_is_a_workload_input():
    doc = {**BASE, "serve": {"isl": 1024, "osl": 512, "concurrency": [8], "num_prompts": [80, 800]}}
    df = serve_sweep(doc)
    assert list(df["num_prompts"]) == [80, 800] and df["spec_ttft_s"].iloc[0] != df["spec_ttft_s"].iloc[1]


@pytest.mark.parametrize("serve_table, message", [
    ({"pd": True, "prefill_tp": 1}, "prefill_tp given without the rest of prefill_tp, prefill_dp, prefill_ep"),
    ({"pd": True, "prefill_tp": 1, "prefill_dp": 1, "prefill_ep": 0}, "serve:"),
    ({"num_prompts": 80, "prompts_per_slot": 10}, "serve:"),
    ({"prefill_gpus": 8}, "serve:"),                                    # a prefill side without pd
])
def test_bad_workloads_are_refused_before_any_pricing(serve_table, message):
    with pytest.raises(SpecError, match=message):
        plan({**BASE, "serve": {"isl": 1024, "osl": 512, "concurrency": [8], **serve_table}})


def test_workload_kw_joins_the_layout_and_passes_the_rest():
    assert workload_kw({"isl": 1, "prefill_tp": 2, "prefill_dp": 4, "prefill_ep": 8}) == {
        "isl": 1, "prefill_layout": (2, 4, 8)}
    assert workload_kw({"isl": 1, "pd": True}) == {"isl": 1, "pd": True}
