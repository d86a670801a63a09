"""Prompts under attention DP (prompts.straggler_load): an MoE's DP ranks step together and each mixes its own
prompts in, so a step lasts as long as the rank that carries a prompt's chunk. Monotone in the arrivals, bounded by
one chunk per step, the averaged load at one rank or where the engine balances the ranks' prompts (the mechanism
switched off), and one case against a cited measurement (TensorRT-LLM's DeepSeek-R1 max-throughput guide)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.cli import main
from simulator.errors import ScenarioError
from simulator.prompts import PromptSide, prompt_load, straggler_load
from simulator.serving import Workload, serve
from simulator.validation import load_rows, predict_row


def _side(ranks: float, n_chunks: float, own: float, lockstep: bool = True) -> PromptSide:
    return PromptSide(own / ranks, 1.0, n_chunks, "compute", own_s=own, ranks=ranks, lockstep=lockstep)


@settings(max_examples=80, deadline=None)
@example(ranks=8, n_chunks=1.0, own=0.05, f=1e-12)     # almost no arrivals: R times the averaged load (1 - (1 - u)^R
#                                                        had lost 4e-5 to cancellation here)
@example(ranks=8, n_chunks=3.0, own=0.2, f=50.0)       # every rank always carries a chunk
@example(ranks=2, n_chunks=1.0, own=1e-3, f=1.0)       # u = 1/2 exactly
@given(ranks=st.sampled_from([1, 2, 4, 8, 16, 32]), n_chunks=st.sampled_from([1.0, 2.0, 4.5]),
       own=st.floats(1e-4, 1.0), f=st.floats(0.0, 64.0))
def test_a_step_waits_for_the_rank_carrying_a_chunk(ranks, n_chunks, own, f):
    pf = _side(float(ranks), n_chunks, own)
    chunk = own / n_chunks                       # a chunk's time on the one rank that carries it
    fs = np.array([f, f * 1.5 + 1e-9])
    load = straggler_load(pf, fs)
    u = np.minimum(fs * n_chunks / ranks, 1.0)
    assert np.all(load >= u * chunk * (1 - 1e-12))            # at least the averaged load
    assert np.all(load <= np.minimum(u * ranks, 1.0) * chunk * (1 + 1e-12))   # at most a chunk a step, R x average
    assert load[1] >= load[0] * (1 - 1e-12)                    # more arrivals, more prefill per step
    if ranks == 1:
        np.testing.assert_allclose(load, u * chunk, rtol=1e-12)
    if u[0] >= 1.0:
        assert load[0] == pytest.approx(chunk, rel=1e-12)
    np.testing.assert_array_equal(straggler_load(replace(pf, lockstep=False), fs), 0.0)   # switched off
    mixed, _ = prompt_load(pf, fs, pf.per_token_s * 1.0)
    np.testing.assert_allclose(mixed, np.maximum(fs * pf.per_token_s, load), rtol=1e-12)


def test_near_no_arrivals_a_step_pays_r_times_the_averaged_prompt_load():
    pf = _side(8.0, 1.0, 0.08)                  # 8 ranks, a prompt of one chunk costing 80 ms on its rank
    f = np.array([1e-7])                        # prompts per step over the instance
    averaged = f[0] * 0.08 / 8.0                # its work spread over the 8 ranks' steps
    assert straggler_load(pf, f)[0] == pytest.approx(8.0 * averaged, rel=1e-5)


DSR1_DP8 = dict(hardware="h200-sxm", model="deepseek-r1", engine="trtllm", precision="fp8", kv_precision="fp8",
                tp=1, dp=8, ep=8, method=None, k=0)


def test_balancing_the_ranks_prompts_switches_the_straggler_off():
    w = Workload(isl=1024, osl=2048, concurrency=(256, 1024))
    off, on = (serve(workload=w, dp_balance=b, **DSR1_DP8) for b in (False, True))
    assert np.all(off.base.tpot_s > on.base.tpot_s * 1.05)
    assert off.scenario["dp_balance"] is False and on.scenario["dp_balance"] is True
    assert any("attention-DP ranks step together" in n for n in off.notes)
    assert not any("attention-DP ranks step together" in n for n in on.notes)
    dense = dict(DSR1_DP8, model="llama-3.1-8b", precision="bf16", ep=1)    # replicas step apart
    a, b = (serve(workload=w, dp_balance=x, **dense) for x in (False, True))
    np.testing.assert_allclose(a.base.tpot_s, b.base.tpot_s, rtol=1e-12)
    one = dict(DSR1_DP8, tp=8, dp=1)                                       # one rank: nothing to wait for
    a, b = (serve(workload=w, dp_balance=x, **one) for x in (False, True))
    np.testing.assert_allclose(a.base.tpot_s, b.base.tpot_s, rtol=1e-12)


def test_trtllm_best_perf_max_throughput_rows():
    """TensorRT-LLM's 'best performance on DeepSeek-R1' guide, max-throughput samples (attention DP8 + EP8, no
    attention_dp_config: enable_balance off, its default): 11.67 tokens/s/user on 8x B200 (FP4, 3072 requests) and
    10.42 on 8x H200 (FP8, 1024). Priced with the ranks' prompts averaged (balanced) they were 71-80 % fast; with the
    straggler within 20 %."""
    rows = {r["row_id"]: r for r in load_rows() if r["source_id"] == "trtllm-best-perf-dsr1"}
    for rid in ("V815", "V817"):
        r = rows[rid]
        got = predict_row(r)
        assert abs(got / float(r["measured"]) - 1.0) < 0.20
        balanced = predict_row(dict(r, dp_balance="true"))
        assert balanced / float(r["measured"]) - 1.0 > 0.6


def test_a_rows_dp_balance_is_true_or_false():
    r = next(r for r in load_rows() if r["row_id"] == "V815")
    with pytest.raises(ScenarioError, match=r"row V815: dp_balance = 'yes'; expected true or false"):
        predict_row(dict(r, dp_balance="yes"))


def test_only_serving_commands_take_dp_balance(capsys):
    args = ["--hardware", "h200-sxm", "--model", "deepseek-r1", "--precision", "fp8", "--tp", "1", "--dp", "8",
            "--ep", "8", "--engine", "trtllm"]
    assert main(["serve", *args, "--k", "0", "--isl", "1024", "--osl", "1024", "--concurrency", "64",
                 "--dp-balance", "--format", "json"]) == 0
    assert '"dp_balance": true' in capsys.readouterr().out
    for cmd in ("curve", "step", "advise"):
        with pytest.raises(SystemExit) as e:
            main([cmd, *args, "--dp-balance"])
        assert e.value.code == 2
