"""Top-k / top-p filtering of the sampled rows (simulator.sampling): rows x vocabulary x the engine's per-entry time,
on a plain step's B rows and a verify pass's B x T rows; nothing for greedy sampling. Properties, the limit where the
filter is off, the dated sort window of validation's rows, bad input, and the measurements the per-entry times are
taken from."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from simulator.engine import load_engine
from simulator.errors import ScenarioError, SpecError
from simulator.pricing import base_step, spec_step
from simulator.sampling import SAMPLING, TopPFilter, filter_s
from simulator.scenario import Scenario
from simulator.validation import predict_row, row_scenario

from .helpers import run
from .strategies import BATCH, CONTEXT, MONTHS, SAMPLINGS

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VLLM = load_engine("vllm")
ROWS_PER_ENTRY = 512 * 131072            # vLLM PR #40376's 'topp_whole' rows at its largest batch


@functools.cache
def _dep(sampling: str, engine=VLLM, model="llama-3.1-8b", method="eagle3"):
    """A resolved deployment, once per session (resolving is the slow part of these properties)."""
    return Scenario(model=model, engine=engine, method=method, sampling=sampling, k=3).resolve()


@FAST
@given(B=st.lists(BATCH, min_size=1, max_size=4), L=CONTEXT.filter(lambda x: x <= 100000), sampling=SAMPLINGS)
@example(B=[1, 256], L=1024, sampling="top-p")
def test_the_filter_adds_rows_times_vocab_times_its_cost(B, L, sampling):
    """A plain step gains B x V x plain_s and a verify pass B x T x V x verify_s over greedy sampling, exactly, in
    its lm_head family; greedy adds nothing; both grow with the batch."""
    Bv = np.array(sorted(set(B)), dtype=float)
    g, s = _dep("greedy"), _dep(sampling)
    V, f = g.target.vocab_size, VLLM.topp
    on = sampling != "greedy"
    base_g, st_g = base_step(g, Bv, float(L))
    base_s, st_s = base_step(s, Bv, float(L))
    np.testing.assert_allclose(st_s.total_s - st_g.total_s, Bv * V * f.plain_s * on, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(st_s.by_family_s.sum(-1), st_s.total_s, rtol=1e-12)
    np.testing.assert_allclose(st_s.by_bound_s.sum(-1), st_s.total_s, rtol=1e-12)
    assert np.all(base_s >= base_g * (1 - 1e-12))
    v = g.scenario.verify(3)
    sg, ss = spec_step(g, v, Bv, float(L)), spec_step(s, v, Bv, float(L))
    per_seq = (v.T - 1) * f.verify_s + f.plain_s            # vLLM: k draft rows filtered, the bonus row sampled plain
    np.testing.assert_allclose(ss.verify_s - sg.verify_s, Bv * V * per_seq * on, rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(ss.draft_s, sg.draft_s)


@FAST
@given(B=st.lists(BATCH, min_size=1, max_size=4), sampling=SAMPLINGS)
def test_an_engine_without_a_filter_prices_top_p_as_greedy(B, sampling):
    """The limit: a profile whose [sampling] is empty (TensorRT-LLM's, the bare roofline's) prices the same steps
    whatever the sampling, as specroof did before the mechanism."""
    Bv = np.array(sorted(set(B)), dtype=float)
    for eng in ("trtllm", "ideal", replace(VLLM, topp=TopPFilter())):
        a, b = _dep("greedy", eng), _dep(sampling, eng)
        np.testing.assert_array_equal(base_step(a, Bv, 1024.0)[0], base_step(b, Bv, 1024.0)[0])
        v = a.scenario.verify(3)
        np.testing.assert_array_equal(spec_step(a, v, Bv, 1024.0).step_s, spec_step(b, v, Bv, 1024.0).step_s)


@given(month=MONTHS)
@example(month="2025-09").via("before the plain window: only verify rows sorted")
@example(month="2025-10").via("the plain window's first month")
@example(month="2026-03").via("sort_until itself: the current kernels")
def test_a_build_in_the_sort_window_sorts(month):
    """vLLM's window: a build before 2026-03 sorts every verified row, one from 2025-10 every plain row too; later
    builds run the current kernels; the greedy price never depends on the month."""
    f, d = VLLM.topp, VLLM.topp.dated(month)
    if month < "2025-10":
        assert (d.plain_s, d.verify_s) == (5.5e-12, 9.16e-11)       # FlashInfer plain rows, PyTorch-sorted verify
    elif month < "2026-03":
        assert (d.plain_s, d.verify_s) == (9.16e-11, 9.16e-11)      # PR #26859 to PR #33538: both sorted
    else:
        assert (d.plain_s, d.verify_s) == (5.5e-12, 3.0e-11)        # FlashInfer and Triton
    assert float(filter_s(d, "greedy", 64, 128256, True)) == 0.0
    assert f.dated("") == f and TopPFilter().dated(month) == TopPFilter()


def test_per_entry_times_are_the_cited_measurements():
    """vLLM PR #40376's table (one B200, 'topp_whole'): 512 rows x 131072 entries take 6.150 ms in PyTorch's sort,
    2.013 ms in Triton and 0.372 ms in FlashInfer; at 128 rows the sort takes 2.318 ms, which the 512-row rate
    prices 34 % under (smaller batches pay more a row: the price there is a lower bound)."""
    f = VLLM.topp
    assert f.sort_s * ROWS_PER_ENTRY == pytest.approx(6.150e-3, rel=0.01)
    assert f.verify_s * ROWS_PER_ENTRY == pytest.approx(2.013e-3, rel=0.03)
    assert f.plain_s * ROWS_PER_ENTRY == pytest.approx(0.372e-3, rel=0.03)
    at128 = float(filter_s(f.dated("2025-11"), "top-p", 128, 131072))
    assert 0.6 < at128 / 2.318e-3 < 0.7


def test_a_validation_row_prices_the_filter_its_build_ran():
    """ML.ENERGY's vLLM v0.11.1 runs (top_p 0.95): a 2025-11 build sorts each sampled row, 9.16e-11 s an entry; the
    same row greedy, or dated after the window, prices less."""
    row = {"row_id": "T1", "source": "t", "hardware": "h100-sxm", "engine": "vllm", "model": "llama-3.1-8b",
           "method": "", "metric": "base_step_s", "measured": "0.0115", "batch": "64", "context": "454",
           "engine_date": "2025-11", "overlap_scheduler": "true", "sampling": "top-p"}
    s = row_scenario(row)
    assert s.sampling == "top-p" and s.engine.topp.plain_s == VLLM.topp.sort_s
    sorted_, greedy = predict_row(row), predict_row({**row, "sampling": ""})
    late = predict_row({**row, "engine_date": "2026-06"})
    assert sorted_ - greedy == pytest.approx(64 * 128256 * VLLM.topp.sort_s, rel=1e-6)
    assert greedy < late < sorted_


@pytest.mark.parametrize("value", ["nucleus", "topp", "", None, 1])
def test_bad_sampling_is_refused(value, capsys):
    """One message naming the field, the value and what is allowed: the Scenario, a validation row and the CLI."""
    with pytest.raises(ScenarioError, match=re.escape(f"sampling = {value!r}; expected one of greedy, top-p")):
        Scenario(sampling=value)
    if isinstance(value, str) and value:
        row = {"row_id": "T2", "hardware": "h100-sxm", "engine": "vllm", "model": "llama-3.1-8b", "batch": "8",
               "sampling": value}
        why = f"row T2: sampling = {value!r}; expected one of greedy, top-p (greedy: temperature 0"
        with pytest.raises(ScenarioError, match=re.escape(why)):
            row_scenario(row)
        rc, _, err = run(capsys, "step", "--engine", "vllm", "--sampling", value)
        assert rc == 2 and "--sampling" in err and "Traceback" not in err and value in err


@pytest.mark.parametrize("key, value, needle", [
    ("sort_s_per_entry", "-1e-11", "outside the plausible range"),
    ("sort_s_per_entry", "1e-6", "outside the plausible range"),
    ("sort_until", '"2026-13"', "expected a month"),
    ("plain_sort_from", "202510", "expected a month")])
def test_bad_profile_sampling_is_refused(tmp_path, capsys, key, value, needle):
    """A copy of vLLM's profile with a bad [sampling] entry is refused naming the file, the key and the value."""
    src = (Path(__file__).resolve().parents[1] / "engine_profiles" / "vllm.toml").read_text()
    head = re.search(rf"{key} = {{ value = [^,]+", src).group(0)
    p = tmp_path / "mine.toml"
    p.write_text(src.replace(head, f"{key} = {{ value = {value}", 1))
    with pytest.raises(SpecError, match=rf"mine\.toml: \[sampling\] {key}.*{needle}"):
        load_engine(str(p))
    rc, _, err = run(capsys, "step", "--engine", str(p), "--sampling", "top-p")
    assert rc == 2 and key in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_window_needs_its_end(tmp_path):
    src = (Path(__file__).resolve().parents[1] / "engine_profiles" / "vllm.toml").read_text()
    p = tmp_path / "mine.toml"
    p.write_text(re.sub(r"\nsort_until = .*\n", "\n", src, count=1))
    with pytest.raises(SpecError, match=r"plain_sort_from = '2025-10' without sort_until"):
        load_engine(str(p))


def test_the_commands_echo_and_name_it(capsys):
    """step, curve and serve put the sampling in their JSON scenario and name a non-greedy one in the header."""
    for cmd in (["step"], ["curve", "--k", "3"], ["serve", "--k", "3", "--concurrency", "8"]):
        rc, out, err = run(capsys, *cmd, "--engine", "vllm", "--sampling", "top-p", "--format", "json")
        assert rc == 0, err
        assert json.loads(out)["scenario"]["sampling"] == "top-p"
        rc, out, _ = run(capsys, *cmd, "--engine", "vllm", "--sampling", "top-p")
        assert rc == 0 and "top-p sampling" in out.splitlines()[0]
        rc, out, _ = run(capsys, *cmd, "--engine", "vllm")
        assert rc == 0 and "sampling" not in out.splitlines()[0]
    for cmd in (["curve", "--k", "3"], ["serve", "--k", "3", "--concurrency", "8"]):       # review: a profile that
        rc, out, _ = run(capsys, *cmd, "--engine", "trtllm", "--sampling", "top-p")       # times no filter says so
        assert rc == 0 and "trtllm's profile times no top-k / top-p filter" in out


def test_speculation_pays_less_under_top_p_at_large_batch():
    """vLLM's rejection sampler filters (k + 1)x the rows a plain step samples, so top-p traffic lowers the speedup
    the more the larger the batch (Llama-3.1-8B, EAGLE-3, k = 3, one H100), and not at one sequence."""
    from simulator.speedup import speedup_curve
    kw = dict(model="llama-3.1-8b", engine="vllm", method="eagle3", k=3, batch=(1, 64, 256))
    g = speedup_curve(scenario=Scenario(**kw)).speedup
    t = speedup_curve(scenario=Scenario(**kw, sampling="top-p")).speedup
    drop = 1 - t / g
    assert drop[0] < 0.01 and 0.03 < drop[1] < drop[2] < 0.2
    assert SAMPLING == ("greedy", "top-p")


def test_a_prefill_samples_one_plain_row_a_sequence():
    """`step --logits last` prices one plain row a sequence whatever q (review: q = 4 took the verify filter over
    4 rows); with every logit, q rows at the verify rates."""
    from simulator import simulate_step
    kw = dict(model="llama-3.1-8b", engine="vllm", batch=[64], query_tokens=4)
    V, f = 128256, VLLM.topp
    last = [simulate_step(logits="last", sampling=smp, **kw).step_s[0] for smp in SAMPLING]
    assert last[1] - last[0] == pytest.approx(64 * V * f.plain_s, rel=1e-6)
    full = [simulate_step(logits="all", sampling=smp, **kw).step_s[0] for smp in SAMPLING]
    assert full[1] - full[0] == pytest.approx(64 * V * (3 * f.verify_s + f.plain_s), rel=1e-6)


def test_each_attention_dp_rank_samples_its_own_rows():
    """Under attention DP the busiest rank samples ceil(B / dp) rows, not the instance's B (review: 8x at dp 8)."""
    kw = dict(model="deepseek-v3", hardware="h200-sxm", engine="vllm", precision="fp8", ep=8, method=None)
    B = np.array([64.0, 512.0])
    for tp, dp in ((8, 1), (1, 8)):
        g = Scenario(tp=tp, dp=dp, **kw).resolve()
        t = Scenario(tp=tp, dp=dp, sampling="top-p", **kw).resolve()
        extra = base_step(t, B, 1024.0)[1].total_s - base_step(g, B, 1024.0)[1].total_s
        np.testing.assert_allclose(extra, np.ceil(B / dp) * 129280 * VLLM.topp.plain_s, rtol=1e-9)


def test_a_dated_speculative_row_sorts_every_verified_row():
    """A vLLM EAGLE-3 speedup row of a 2025-11 build under top-p: its plain and its verified rows sorted, so its
    speedup is lower than the same row greedy."""
    row = {"row_id": "T3", "source": "t", "hardware": "h100-sxm", "engine": "vllm", "model": "llama-3.1-8b",
           "method": "eagle3", "metric": "speedup", "measured": "1.5", "batch": "64", "context": "1024", "k": "3",
           "tau": "2.8", "engine_date": "2025-11", "sampling": "top-p"}
    s = row_scenario(row)
    assert (s.engine.topp.plain_s, s.engine.topp.verify_s) == (9.16e-11, 9.16e-11)
    assert predict_row(row) < predict_row({**row, "sampling": "greedy"}) == predict_row({**row, "sampling": "GREEDY"})


def test_serve_prices_top_p():
    """serve's TPOT grows with the filter (the decode steps it prices are base_step / spec_step's)."""
    from simulator.serving import serve
    from simulator.traffic import Workload
    kw, w = dict(model="llama-3.1-8b", engine="vllm", method="eagle3", k=3), Workload(concurrency=(64,))
    a = serve(Scenario(**kw), workload=w)
    b = serve(Scenario(**kw, sampling="top-p"), workload=w)
    assert np.all(b.spec.tpot_s > a.spec.tpot_s) and np.all(b.base.tpot_s > a.base.tpot_s)


@pytest.mark.parametrize("edit, needle", [
    (lambda t: re.sub(r"\nsort_s_per_entry = .*\n", "\n", t, count=1), "without a sort_s_per_entry above 0"),
    (lambda t: t.replace('value = "2025-10"', 'value = "2026-05"', 1), "is not before sort_until"),
    (lambda t: t.replace("bonus_row_plain = { value = true", "bonus_row_plain = { value = 1", 1),
     "expected true or false")])
def test_a_bad_sort_window_is_refused(tmp_path, edit, needle):
    src = (Path(__file__).resolve().parents[1] / "engine_profiles" / "vllm.toml").read_text()
    p = tmp_path / "mine.toml"
    p.write_text(edit(src))
    with pytest.raises(SpecError, match=rf"mine\.toml: \[sampling\].*{re.escape(needle)}"):
        load_engine(str(p))


def test_sampled_vllm_traffic_is_warned_of_older_builds_sort(capsys):
    """The hazard names the builds whose rejection sampler sorted every verified row: top-p sampling under vLLM, in
    curve and serve (review: it fired on --temperature alone, which filters nothing, and never in serve), and not for
    greedy traffic, another engine or speculation off."""
    hid = "vllm-topp-sort-in-rejection-sampler"
    for cmd in (["curve", "--batch", "1"], ["serve", "--concurrency", "8"]):
        rc, out, _ = run(capsys, *cmd, "--engine", "vllm", "--k", "3", "--sampling", "top-p")
        assert rc == 0 and hid in out
        for args in (("--engine", "vllm", "--k", "3"), ("--engine", "sglang", "--k", "3", "--sampling", "top-p"),
                     ("--engine", "vllm", "--k", "0", "--sampling", "top-p")):
            rc, out, _ = run(capsys, *cmd, *args)
            assert rc == 0 and hid not in out
    rc, out, _ = run(capsys, "curve", "--batch", "1", "--engine", "vllm", "--k", "3", "--temperature", "0.7")
    assert rc == 0 and hid not in out


def test_the_note_names_the_rows_priced(capsys):
    """curve and serve say what each row was filtered at: a plain step's rows only when nothing is verified (review:
    serve --k 0 named verified rows), a draft position's row for vLLM, whose bonus row is sampled plain."""
    rc, out, _ = run(capsys, "serve", "--engine", "vllm", "--k", "0", "--concurrency", "8", "--sampling", "top-p")
    assert rc == 0 and "5.5e-12 s a vocabulary entry on a plain step (vllm's [sampling]" in out
    rc, out, _ = run(capsys, "curve", "--engine", "sglang", "--k", "3", "--batch", "1", "--sampling", "top-p")
    assert rc == 0 and "on a plain step and 5.5e-12 on a verified row (sglang's [sampling]" in out
    rc, out, _ = run(capsys, "curve", "--engine", "vllm", "--k", "3", "--batch", "1", "--sampling", "top-p")
    assert rc == 0 and "on a plain step and 3e-11 on a draft position's row (vllm's [sampling]" in out
