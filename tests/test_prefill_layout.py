"""A disaggregated prefill instance priced on its own layout (Workload.prefill_layout, serve --prefill-tp/-dp/-ep,
rows.csv prefill_tp/prefill_dp/prefill_ep/chunk)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ScenarioError, SpecError
from simulator.prompts import kv_transfer_s, prefill_deployment, prompt_side
from simulator.rows import load_rows
from simulator.scenario import Scenario
from simulator.traffic import Workload
from simulator.validation import serving_workload

from .helpers import run

DSR1 = dict(hardware="h200-sxm", model="deepseek-r1", engine="sglang", precision="fp8", tp=1, dp=8, ep=8)
CLI = ("serve", "--hardware", "h200-sxm", "--model", "deepseek-r1", "--engine", "sglang", "--precision", "fp8",
       "--tp", "1", "--dp", "8", "--ep", "8", "--isl", "1024", "--osl", "64", "--concurrency", "4", "--pd")


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
    assert serving_workload({**r, "prefill_tp": "", "prefill_dp": "", "prefill_ep": ""}).prefill_layout is None
    # all three or none: two of them are refused here too, not priced on the decode layout (as rows.py refuses them)
    with pytest.raises(ScenarioError, match="prefill_tp, prefill_dp given without the rest"):
        serving_workload({**r, "prefill_ep": ""})


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


# ---- review, 2026-12-06 --------------------------------------------------------------------------------------------

def test_a_layout_the_model_cannot_take_names_the_prefill_flags(dep, capsys):
    # The resolve error named only 'tp = 3', which reads as the decode instance's --tp
    with pytest.raises(ScenarioError, match=r"the prefill instance \(prefill_layout: --prefill-tp 3 --prefill-dp 1 "
                                            r"--prefill-ep 1\): tp = 3 does not divide"):
        prefill_deployment(dep, Workload(isl=1024, osl=64, pd=True, prefill_layout=(3, 1, 1)))
    rc, out, err = run(capsys, *CLI, "--prefill-tp", "3", "--prefill-dp", "1", "--prefill-ep", "1")
    assert rc == 2 and "--prefill-tp 3" in err and "Traceback" not in err


def test_a_prefill_instance_that_does_not_fit_is_refused(dep, capsys):
    # One H200 cannot hold DeepSeek-R1's 673 GB of FP8 weights: it was priced at 4.8 requests/s
    with pytest.raises(ScenarioError, match=r"the prefill instance .*--prefill-tp 1 --prefill-dp 1 --prefill-ep 1\) "
                                            r"does not fit: needs .* GB per GPU \(weights .*give it more GPUs"):
        prefill_deployment(dep, Workload(isl=1024, osl=64, pd=True, prefill_layout=(1, 1, 1)))
    rc, out, err = run(capsys, *CLI, "--prefill-tp", "1", "--prefill-dp", "1", "--prefill-ep", "1")
    assert rc == 2 and "does not fit" in err and "Traceback" not in err
    # its share is the engine's default whatever --memory-fraction says: the hint names that (review, 2026-12-06)
    assert "--memory-fraction sets the decode instance's only" in err and "set your server's own" not in err
    assert prefill_deployment(dep, Workload(isl=1024, osl=64, pd=True, prefill_layout=(2, 4, 8))).n_gpus == 8


def test_the_shared_domain_counts_the_prefill_instances_gpus():
    # mi325x publishes no NIC: both instances must share its 8-GPU board. A tp4 decode instance with a tp8 prefill
    # instance is 12 GPUs (was counted as 4 + 4 = 8 and priced)
    d = Scenario(hardware="mi325x", model="llama-3.1-70b", precision="fp8", tp=4, method=None).resolve()
    w = Workload(isl=1024, osl=64, pd=True, prefill_layout=(8, 1, 1))
    with pytest.raises(ScenarioError, match=r"over 12 GPUs spans more than one 8-GPU scale-up domain of mi325x.*"
                                            r"a smaller prefill instance \(--prefill-gpus\) or layout"):
        kv_transfer_s(d, w, 8)
    same = kv_transfer_s(d, replace(w, prefill_layout=None))
    assert kv_transfer_s(d, replace(w, prefill_layout=(4, 1, 1)), 4) == same
    assert kv_transfer_s(d, replace(w, prefill_gpus=4.0), 8) > 0        # a share of 4 GPUs fits beside it


def test_the_output_names_the_prefill_instance(capsys):
    lay = ("--prefill-tp", "8", "--prefill-dp", "1", "--prefill-ep", "1", "--prefill-gpus", "4")
    rc, out, err = run(capsys, *CLI, *lay, "--format", "json")
    assert rc == 0, err
    w = json.loads(out)["workload"]
    assert w["prefill_layout"] == [8, 1, 1] and w["prefill_gpus"] == 4.0
    rc, out, err = run(capsys, *CLI, *lay)
    assert rc == 0 and "PD-disaggregated (prefill instance tp 8 dp 1 ep 1; 4 prefill GPUs per decode instance)" in out
    rc, out, err = run(capsys, *CLI, "--format", "json")
    assert json.loads(out)["workload"]["prefill_layout"] is None


@settings(max_examples=5, deadline=None)
@given(isl=st.sampled_from([256, 1024, 4096, 16384]), gpus=st.sampled_from([None, 2.0, 8.0, 24.0]))
def test_the_decode_layout_given_as_prefill_layout_prices_as_none(dep, isl, gpus):
    # Reduces to the old pricing: naming the decode instance's own layout changes nothing
    w = Workload(isl=isl, osl=64, concurrency=(4,), pd=True, prefill_gpus=gpus)
    assert prompt_side(dep, replace(w, prefill_layout=(1, 8, 8))) == prompt_side(dep, w)


@settings(max_examples=8, deadline=None)
@given(isl=st.integers(64, 32768), decode_tp=st.sampled_from([1, 2, 4, 8]))
def test_the_kv_transfer_never_speeds_up_with_fewer_prefill_nics(isl, decode_tp):
    # Monotone: a narrower prefill attention group sends over no more NICs; at or above the decode tp it is the old
    # price (the decode side's NICs bound it)
    d = Scenario(**{**DSR1, "tp": decode_tp, "dp": 8 // decode_tp, "ep": 8}).resolve()
    w = Workload(isl=isl, osl=64, pd=True)
    t = [kv_transfer_s(d, w, p) for p in (1, 2, 4, 8, 16)]
    assert all(a >= b for a, b in zip(t, t[1:]))
    assert all(x == kv_transfer_s(d, w) for p, x in zip((1, 2, 4, 8, 16), t) if p >= decode_tp)


@pytest.mark.parametrize("given", [("prefill_tp",), ("prefill_tp", "prefill_dp"), ("prefill_ep",)])
def test_rows_refuse_part_of_a_prefill_layout(tmp_path, given):
    # serving_workload took a row with only some of the three as no prefill layout: priced on the decode one, silently
    cols = ["row_id", "source", "hardware", "engine", "model", "method", "metric", "measured", "prefill_tp",
            "prefill_dp", "prefill_ep"]
    row = {"row_id": "X", "source": "s", "hardware": "h200-sxm", "engine": "sglang", "model": "deepseek-r1",
           "method": "", "metric": "tpot_s", "measured": "0.01", **{c: "8" for c in given}}
    f = tmp_path / "rows.csv"
    f.write_text(",".join(cols) + "\n" + ",".join(row.get(c, "") for c in cols) + "\n")
    with pytest.raises(SpecError, match=r"line 2 \(X\): .*given without the rest of prefill_tp, prefill_dp, "
                                        r"prefill_ep; give all three"):
        load_rows(f)
    f.write_text(",".join(cols) + "\n" + ",".join({**row, "prefill_tp": "8", "prefill_dp": "1",
                                                    "prefill_ep": "1"}.get(c, "") for c in cols) + "\n")
    assert load_rows(f)[0]["prefill_ep"] == "1"


def test_serve_help_says_prefill_tp_is_per_attention_group(capsys):
    # SGLang's --tp-size counts the instance's GPUs; specroof's tp is one attention group's
    rc, out, err = run(capsys, "serve", "--help")
    assert rc == 0 and "--prefill-tp 1 --prefill-dp 8" in " ".join(out.split())


def test_frontier_json_names_the_prefill_instance(capsys):
    rc, out, err = run(capsys, "frontier", "--hardware", "h200-sxm", "--model", "deepseek-r1", "--engine", "sglang",
                       "--precision", "fp8", "--gpus", "8", "--isl", "1024", "--osl", "256", "--pd",
                       "--prefill-tp", "8", "--prefill-dp", "1", "--prefill-ep", "1", "--format", "json")
    assert rc == 0, err
    assert json.loads(out)["workload"]["prefill_layout"] == [8, 1, 1]
