"""A benchmark run's start-up burst (simulator/burst.py, Workload.num_prompts): the first wave of a run of N prompts
queued together for prefill, in the mean TTFT and E2E over the run."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.burst import first_wave_s, start_up_s
from simulator.errors import ScenarioError
from simulator.prompts import prompt_side
from simulator.scenario import Scenario
from simulator.serving import Workload, serve
from simulator.validation import load_rows, predict_row, prepare_row

from .helpers import load_tool, run
from .strategies import SERVE_SCENARIOS

PD = dict(hardware="gb200-nvl72", model="deepseek-r1", engine="trtllm", tp=1, dp=16, ep=16, precision="fp4")


def _dep(sc):
    return Scenario(**dict(sc, k=3)).resolve()


@settings(max_examples=25, deadline=None)
@given(sc=SERVE_SCENARIOS, c=st.integers(1, 64), per=st.integers(1, 20), isl=st.integers(64, 9000),
       pd=st.booleans())
@example(sc=dict(hardware="h200-sxm", model="deepseek-r1", method="mtp", engine="trtllm", tp=8, precision="fp8"),
         c=64, per=1, isl=1024, pd=True)       # one wave (N = C) at a prefill instance: the steepest start-up term
@example(sc=dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang"), c=2, per=1, isl=64,
         pd=False)
def test_the_run_ttft_is_monotone_in_the_concurrency_at_as_many_prompts_per_slot(sc, c, per, isl, pd):
    # N = per x C, as InferenceX runs (10 x C). At one N for both, the mean can fall: at C = 4 with N = 4 every
    # request is in the first wave, queued at t = 0 with no decode step in flight, while at C = 2 the second wave
    # waits for the steps of the first (SGLang, 64-token prompts: 9.39 ms at 2, 9.13 ms at 4; found by this test).
    dep = _dep(sc)
    a, b = (serve(workload=Workload(isl=isl, osl=256, concurrency=(n,), num_prompts=per * n, pd=pd), dep=dep)
            for n in (c, 2 * c))
    for lo, hi in ((a.base, b.base), (a.spec, b.spec)):
        assert np.all(np.isfinite(hi.ttft_s)) and hi.ttft_s[0] >= lo.ttft_s[0] * (1 - 1e-9)
        assert np.all(hi.e2e_s >= hi.ttft_s)


@settings(max_examples=25, deadline=None)
@given(sc=SERVE_SCENARIOS, isl=st.integers(16, 20000), n=st.integers(1, 512), pd=st.booleans())
def test_the_first_wave_is_monotone_in_its_prompts_and_their_length(sc, isl, n, pd):
    dep = _dep(sc)
    a, b = (prompt_side(dep, Workload(isl=i, osl=64, pd=pd)) for i in (isl, isl + 1))
    wave_a, wave_b = (lambda k, p=p: first_wave_s(p, k, pd, p.pass_prompt_s) for p in (a, b))   # passes apart
    assert wave_a(n + 1) >= wave_a(n) > 0.0
    assert wave_b(n) >= wave_a(n) * (1 - 1e-9)
    lone = a.pass_s if pd else a.solo_s            # one prompt: its own pass (and KV transfer), no queue
    assert wave_a(1) == pytest.approx(lone, rel=1e-12)


@settings(max_examples=10, deadline=None)
@given(sc=SERVE_SCENARIOS, c=st.integers(1, 64), pd=st.booleans())
def test_without_num_prompts_the_steady_state_stands_and_a_long_run_tends_to_it(sc, c, pd):
    dep = _dep(sc)
    steady = serve(workload=Workload(isl=2048, osl=128, concurrency=(c,), pd=pd), dep=dep)
    runs = [serve(workload=Workload(isl=2048, osl=128, concurrency=(c,), pd=pd, num_prompts=n), dep=dep)
            for n in (10 * c, 1000 * c)]
    for name in ("base", "spec"):
        s, (short, long) = getattr(steady, name), (getattr(r, name) for r in runs)
        np.testing.assert_allclose(short.tpot_s, s.tpot_s, rtol=1e-12)      # the decode is the steady state's
        np.testing.assert_allclose(short.tokens_per_s_per_gpu, s.tokens_per_s_per_gpu, rtol=1e-12)
        # the start-up term is (R0 / N)(first wave - steady): 100 x the prompts, a hundredth of it
        np.testing.assert_allclose((long.ttft_s - s.ttft_s) * 100.0, short.ttft_s - s.ttft_s, rtol=1e-9,
                                   atol=1e-12)
        np.testing.assert_allclose(short.e2e_s - s.e2e_s, short.ttft_s - s.ttft_s, rtol=1e-9, atol=1e-12)


def test_start_up_is_zero_without_num_prompts_and_one_wave_is_the_first_wave():
    dep = _dep(dict(hardware="h200-sxm", model="deepseek-r1", engine="sglang", tp=8, precision="fp8"))
    w = Workload(isl=1024, osl=1024, concurrency=(64,))
    pf = prompt_side(dep, w)
    R, ttft = np.array([64.0]), np.array([0.05])
    assert start_up_s(pf, w, R, R, ttft)[0] == 0.0
    one = Workload(isl=1024, osl=1024, concurrency=(64,), num_prompts=64)
    assert ttft[0] + start_up_s(pf, one, R, R, ttft)[0] == pytest.approx(first_wave_s(pf, 64, False), rel=1e-12)
    # one request: the first wave is the steady state's lone prompt, whatever the run's length
    solo = serve(workload=Workload(isl=1024, osl=1024, concurrency=(1,)), dep=dep)
    for n in (1, 2, 10):
        run = serve(workload=Workload(isl=1024, osl=1024, concurrency=(1,), num_prompts=n), dep=dep)
        np.testing.assert_allclose(run.base.ttft_s, solo.base.ttft_s, rtol=1e-12)


@pytest.mark.parametrize("kw, why", [
    (dict(concurrency=(16, 64), num_prompts=32), "num_prompts = 32 below concurrency 64"),
    (dict(rate=(2.0,), num_prompts=32), "num_prompts = 32 with a rate"),
    (dict(num_prompts=0), r"num_prompts = 0; expected an integer >= 1"),
    (dict(num_prompts=True), r"num_prompts = True; expected an integer >= 1"),
    (dict(num_prompts=64.0), r"num_prompts = 64.0; expected an integer >= 1"),
    (dict(prompts_per_slot=10, num_prompts=640), "prompts_per_slot = 10 with num_prompts = 640"),
    (dict(rate=(2.0,), prompts_per_slot=10), "prompts_per_slot = 10 with a rate"),
    (dict(prompts_per_slot=0), r"prompts_per_slot = 0; expected an integer >= 1"),
    (dict(prompts_per_slot=2.5), r"prompts_per_slot = 2.5; expected an integer >= 1"),
])
def test_num_prompts_is_refused_where_it_means_nothing(kw, why):
    with pytest.raises(ScenarioError, match=why):
        Workload(**kw)


def test_the_start_up_burst_prices_a_published_run():
    # InferenceX, GB300 NVL72, TensorRT-LLM disaggregated (1 prefill instance + DEP32 decode, recipe
    # ctx1_gen1_dep32_batch32_eplb0_mtp0: 32 x 32 = 1024 slots), 1024 requests of 1k/8k, 10 x 1024 prompts sent at
    # once up to the concurrency: mean TTFT 1.317 s measured. The steady state never queues at the prefill
    # instance (0.051 s: its pass and KV transfer); the first wave's 1024 prompts queue there together.
    r = {x["row_id"]: x for x in load_rows()}["V553"]
    assert (r["metric"], r["concurrency"], r["num_prompts"]) == ("ttft_s", "1024", "10240")
    run, steady = predict_row(r), predict_row(dict(r, num_prompts=""))
    assert steady < 0.1 * float(r["measured"])
    assert run == pytest.approx(float(r["measured"]), rel=0.3)


def test_a_serving_row_takes_num_prompts_on_its_ttft_and_e2e_only():
    r = {x["row_id"]: x for x in load_rows()}["V553"]
    assert prepare_row(r).workload.num_prompts == 10240           # one decode instance: the run's prompts
    with pytest.raises(ScenarioError, match="V553: num_prompts = 10240 prices .*metric tpot_s"):
        predict_row(dict(r, metric="tpot_s"))


def test_the_event_replay_agrees_with_the_start_up_estimate_where_the_waves_spread():
    # tools/burst_check.py replays the client against the priced prefill instance and decode. One slot: no queue,
    # every TTFT the pass. V553 (1024 requests, their outputs spread over 20 % of 8k tokens): the later waves arrive
    # spread out, and the replay's mean is burst.py's within 1 %.
    bc = load_tool("burst_check")
    t = bc.replay(1, 1, 5, 10.0, 0.05, 0.01, np.full(5, 100))
    np.testing.assert_allclose(t, 0.05, rtol=1e-12)
    line = bc.check({x["row_id"]: x for x in load_rows()}["V553"])
    replayed, priced = (float(line.split(k)[1].split()[0].rstrip(";")) for k in ("replayed mean TTFT ", "priced "))
    assert replayed == pytest.approx(priced, rel=0.01)
    assert bc.main([]) == 2 and bc.main(["V0000"]) == 2


@pytest.mark.parametrize("argv, needle", [
    (["--num-prompts", "0"], "--num-prompts: num-prompts 0 must be >= 1"),
    (["--num-prompts", "x"], "num-prompts 'x' is not an integer"),
    (["--num-prompts", "3", "--concurrency", "8"], "num_prompts = 3 below concurrency 8"),
    (["--num-prompts", "100", "--rate", "2"], "num_prompts = 100 with a rate"),
    (["--num-prompts", "0x"], "num-prompts multiple (Mx) 0 must be >= 1"),
    (["--num-prompts", "2.5x"], "num-prompts multiple (Mx) '2.5' is not an integer"),
    (["--num-prompts", "10x", "--rate", "2"], "prompts_per_slot = 10 with a rate"),
])
def test_serve_refuses_a_bad_num_prompts_in_one_line(argv, needle, capsys):
    """serve --num-prompts: a bad value is one line on stderr and exit 2, no traceback (review of the burst change:
    only the library's Workload refusals were tested)."""
    rc, out, err = run(capsys, "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", *argv)
    assert rc == 2 and out == "" and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_serve_with_num_prompts_says_its_ttft_is_a_run_mean(capsys):
    rc, out, _ = run(capsys, "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "4",
                     "--num-prompts", "40")
    assert rc == 0
    assert "TTFT and E2E are the means over a run of 40 prompts" in out and "start-up burst in TTFT and E2E" in out


def test_prompts_per_slot_is_num_prompts_at_each_concurrency(capsys):
    """Workload.prompts_per_slot m (serve --num-prompts Mx) prices each concurrency C as a run of m C prompts, as
    InferenceX runs its sweeps (10 x C at every concurrency): the same TTFT and E2E as num_prompts = m C at C alone."""
    dep = _dep(dict(hardware="h200-sxm", model="llama-3.1-8b", engine="sglang"))
    both = serve(workload=Workload(isl=2048, osl=256, concurrency=(4, 32), prompts_per_slot=10), dep=dep)
    for i, c in enumerate((4, 32)):
        one = serve(workload=Workload(isl=2048, osl=256, concurrency=(c,), num_prompts=10 * c), dep=dep)
        for ph in ("base", "spec"):
            np.testing.assert_allclose(getattr(both, ph).ttft_s[i], getattr(one, ph).ttft_s[0], rtol=1e-12)
            np.testing.assert_allclose(getattr(both, ph).e2e_s[i], getattr(one, ph).e2e_s[0], rtol=1e-12)
    w = Workload(concurrency=(4, 32), prompts_per_slot=10)
    np.testing.assert_array_equal(w.run_prompts(np.array([4.0, 32.0])), [40.0, 320.0])
    assert Workload(concurrency=(4,)).run_prompts(np.array([4.0])) is None
    rc, out, _ = run(capsys, "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "4,8",
                     "--num-prompts", "10x", "--format", "json")
    assert rc == 0 and '"prompts_per_slot": 10' in out
    rc, out, _ = run(capsys, "serve", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--concurrency", "4",
                     "--num-prompts", "10x")
    assert rc == 0 and "means over a run of 10 x C prompts" in out
