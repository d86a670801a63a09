"""One forward pass under a deployment's cap on requests at once (--max-running-requests / vLLM's --max-num-seqs):
the cap sizes vLLM's start-up reserve (its sampler's profiling run over max_num_seqs requests), and a batch above it
is a step the engine never runs, so step reports it infeasible with its reason."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.step import simulate_step

from .helpers import run


def test_a_vllm_step_reserves_for_the_written_max_num_seqs():
    kw = dict(hardware="h100-sxm", model="llama-3.1-70b", engine="vllm", tp=2, batch=[1])
    free, capped = simulate_step(**kw), simulate_step(**kw, max_running_requests=64)
    # the default max_num_seqs on an 80 GB H100 is 1024 (engine_memory.vllm_default_max_seqs); 64 reserve less
    assert capped.memory_bytes[0] < free.memory_bytes[0]
    assert capped.step_s[0] == free.step_s[0]
    assert capped.scenario["max_running_requests"] == 64 and free.scenario["max_running_requests"] is None


def test_a_batch_above_the_cap_is_infeasible_with_its_reason():
    r = simulate_step(hardware="h100-sxm", model="llama-3.1-8b", engine="sglang", batch=[64, 65],
                      max_running_requests=64)
    assert r.feasible.tolist() == [True, False]
    assert r.message[1].startswith("batch 65 > 64 requests at once (--max-running-requests 64)")
    assert json.loads(json.dumps(r.to_dict()))["points"][1]["step_s"] is None


def test_dense_replicas_each_run_the_cap():
    r = simulate_step(hardware="h100-sxm", model="llama-3.1-8b", engine="vllm", dp=2, batch=[128, 129],
                      max_running_requests=64)
    assert r.feasible.tolist() == [True, False]
    assert "(64 per rank x dp 2)" in r.message[1]


@settings(max_examples=15)
@given(cap=st.integers(1, 300), batches=st.lists(st.integers(1, 400), min_size=1, max_size=4))
@example(cap=1, batches=[1, 2])
def test_the_cap_only_removes_the_batches_above_it(cap, batches):
    # SGLang's reserve does not depend on the cap, so below it the points are the uncapped ones
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", engine="sglang", batch=batches)
    free, capped = simulate_step(**kw), simulate_step(**kw, max_running_requests=cap)
    B = np.asarray(batches)
    assert capped.feasible.tolist() == (free.feasible & (B <= cap)).tolist()
    ok = capped.feasible
    assert np.array_equal(capped.step_s[ok], free.step_s[ok])


def test_the_cli_takes_the_cap(capsys):
    rc, out, _ = run(capsys, "step", "--engine", "vllm", "--batch", "32,128", "--max-running-requests", "64",
                     "--format", "json")
    d = json.loads(out)
    assert rc == 0 and d["scenario"]["max_running_requests"] == 64
    assert [p["feasible"] for p in d["points"]] == [True, False]
