"""A disaggregated prefill instance priced on its own layout (Workload.prefill_layout, serve --prefill-tp/-dp/-ep,
rows.csv prefill_tp/prefill_dp/prefill_ep/chunk)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ScenarioError
from simulator.prompts import kv_transfer_s, prefill_deployment, prompt_side
from simulator.scenario import Scenario
from simulator.traffic import Workload
from simulator.validation import serving_workload

from .helpers import run

DSR1 = dict(hardware="h200-sxm", model="deepseek-r1", engine="sglang", precision="fp8", tp=1, dp=8, ep=8)


@pytest.fixture(scope="module")
def dep():
    return Scenario(**DSR1).resolve()


@pytest.mark.parametrize("bad", [(8, 1), (8, 1, 0), (8.0, 1, 1), (True, 1, 1), "8,1,1", 8])
def test_prefill_layout_is_three_whole_numbers(bad):
    with pytest.raises(ScenarioError, match="prefill_layout .* expected \\(tp, dp, ep\\)"):
        Workload(pd=True, prefill_layout=bad)


def test_prefill_layout_needs_disaggregation():
    with pytest.raises(ScenarioError, match="without pd"):
        Workload(prefill_layout=(8, 1, 1))
    assert Workload(pd=True, prefill_layout=[8, 1, 1]).prefill_layout == (8, 1, 1)


def test_no_layout_or_the_decode_layout_is_the_decode_deployment(dep):
    assert prefill_deployment(dep, Workload(pd=True)) is dep
    assert prefill_deployment(dep, Workload(pd=True, prefill_layout=(1, 8, 8))) is dep
    p = prefill_deployment(dep, Workload(pd=True, prefill_layout=(8, 1, 1)))
    assert (p.par.tp, p.par.dp, p.par.ep) == (8, 1, 1) and p.n_gpus == 8


def test_a_layout_the_model_cannot_take_is_refused(dep):
    with pytest.raises(ScenarioError):
        prompt_side(dep, Workload(isl=1024, osl=64, concurrency=(4,), pd=True, prefill_layout=(3, 1, 1)))


@settings(max_examples=6, deadline=None)
@given(isl=st.sampled_from([512, 1024, 4096, 8192]), gpus=st.sampled_from([4.0, 8.0, 16.0]))
def test_the_prefill_side_is_the_one_its_own_layout_prices(dep, isl, gpus):
    # A decode instance at tp1 dp8 whose prefill instance runs tp8: its prompt side is that of a tp8 deployment's
    # (same passes, same rate per prefill GPU); only the KV transfer differs (a tp8 decode instance spreads it over
    # eight NICs, a DP-attention rank holds a request's KV on one)
    w = Workload(isl=isl, osl=64, concurrency=(4,), pd=True, prefill_gpus=gpus)
    tp8 = Scenario(**{**DSR1, "tp": 8, "dp": 1, "ep": 1}).resolve()
    mine = prompt_side(dep, replace(w, prefill_layout=(8, 1, 1)))
    ref = prompt_side(tp8, w)
    np.testing.assert_allclose(mine.capacity_rps, ref.capacity_rps, rtol=1e-12)
    np.testing.assert_allclose(mine.pass_s - kv_transfer_s(dep, w, 8), ref.pass_s - kv_transfer_s(tp8, w),
                               rtol=1e-12)


def test_kv_crosses_the_fewer_attention_groups_nics():
    # tp8 decode, tp1 (DP attention) prefill: the request's KV leaves one GPU, over one NIC
    d = Scenario(**{**DSR1, "tp": 8, "dp": 1, "ep": 1}).resolve()
    w = Workload(isl=8192, osl=64, concurrency=(1,), pd=True)
    wide, narrow = kv_transfer_s(d, w), kv_transfer_s(d, w, 1)
    lat = d.hw.scaleout_latency_s
    np.testing.assert_allclose(narrow - lat, 8 * (wide - lat), rtol=1e-12)
    assert kv_transfer_s(d, w, 16) == wide


def test_rows_carry_the_prefill_instance_and_its_chunk():
    r = dict(row_id="X", concurrency="8", isl="1024", osl="1024", tp="1", dp="8", ep="8", prefill_tp="8",
             prefill_dp="1", prefill_ep="1", chunk="16384", notes="disaggregated: 8 prefill + 16 decode GPUs")
    w = serving_workload(r)
    assert w.prefill_layout == (8, 1, 1) and w.chunk == 16384 and w.prefill_gpus == 4.0
    assert serving_workload({**r, "prefill_ep": ""}).prefill_layout is None     # all three or none


def test_serve_cli_takes_the_prefill_layout(capsys):
    base = ("serve", "--hardware", "h200-sxm", "--model", "deepseek-r1", "--engine", "sglang", "--precision", "fp8",
            "--tp", "1", "--dp", "8", "--ep", "8", "--isl", "1024", "--osl", "64", "--concurrency", "4", "--pd")
    rc, out, err = run(capsys, *base, "--prefill-tp", "8", "--prefill-dp", "1", "--prefill-ep", "1")
    assert rc == 0, err
    rc, out, err = run(capsys, *base, "--prefill-tp", "8")
    assert rc == 2 and "give all three" in err and "Traceback" not in err
    rc, out, err = run(capsys, *base, "--prefill-tp", "0", "--prefill-dp", "1", "--prefill-ep", "1")
    assert rc == 2 and "prefill-tp" in err
    rc, out, err = run(capsys, *base[:-1], "--prefill-tp", "8", "--prefill-dp", "1", "--prefill-ep", "1")
    assert rc == 2 and "without pd" in err
