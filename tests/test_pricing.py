"""The pricing service (simulator/pricing.py): formulas that must agree are tied here, each pair by a property."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.acceptance import Verify
from simulator.memory import kv_bytes_per_rank
from simulator.pricing import base_step, best_spec_step, candidates, memory, spec_step
from simulator.scenario import Scenario
from simulator.speedup import predict
from simulator.step import simulate_step

from .strategies import scenarios

FAST = settings(max_examples=25, deadline=None)


@FAST
@given(sc=scenarios(), B=st.integers(1, 512), L=st.integers(0, 32768))
def test_simulate_step_q1_is_the_base_step(sc, B, L):
    h, mid, tp, ep, weights = sc
    s = Scenario(hardware=h, model=mid, tp=tp, ep=ep, precision=weights, method=None, batch=(B,), context=L)
    step = simulate_step(scenario=s)
    base, _ = base_step(s.resolve(), np.array([float(B)]), float(L))
    np.testing.assert_allclose(step.step_s, base, rtol=1e-12)


@FAST
@given(B=st.integers(1, 256), L=st.integers(0, 16384), method=st.sampled_from(["eagle3", "mtp", "draft", "medusa"]))
def test_the_curve_base_step_is_the_plain_step(B, L, method):
    model = {"mtp": "deepseek-v3", "medusa": "vicuna-7b"}.get(method, "llama-3.1-8b")
    tp = 8 if model == "deepseek-v3" else 1
    s = Scenario(hardware="b200", model=model, method=method, tp=tp, precision="fp8" if tp == 8 else "bf16",
                 acceptance=None if method != "draft" else __import__("simulator").Acceptance.from_rate(0.6),
                 batch=(B,), context=L)
    r = predict(s)
    st_ = simulate_step(scenario=s.replace(method=None))
    np.testing.assert_allclose(r.base_step_s, st_.step_s, rtol=1e-12)


@pytest.mark.parametrize("method, model", [("eagle3", "llama-3.1-8b"), ("draft", "llama-3.1-8b"),
                                           ("mtp", "deepseek-v3"), ("eagle", "llama-3.1-8b")])
def test_the_drafter_kv_is_kv_bytes_per_rank_of_its_shape(method, model):
    tp = 8 if model == "deepseek-v3" else 1
    dep = Scenario(hardware="h200-sxm", model=model, method=method, tp=tp, precision="fp8").resolve()
    d = dep.drafter
    B, q, L = np.array([1.0, 64.0]), 4.0, np.array([1024.0, 60000.0])
    np.testing.assert_array_equal(d.kv_bytes(B, q, L), kv_bytes_per_rank(d.shape, B, q, L, d.precision, d.par,
                                                                          cap=d.kv_window))
    mem = memory(dep, B, q, L, drafter=True)
    np.testing.assert_allclose(mem.draft_bytes - d.weights_bytes, d.kv_bytes(B, q, L))


def test_k0_step_is_the_base_step_and_the_best_step_never_loses_to_it():
    dep = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", k="auto").resolve()
    B = np.array([1.0, 64.0, 512.0])
    base, _ = base_step(dep, B, 1024.0)
    off = spec_step(dep, Verify(0, 1, 1), B, 1024.0)
    np.testing.assert_allclose(off.step_s, base) and np.testing.assert_array_equal(off.draft_s, 0.0)
    best = best_spec_step(dep, dep.acceptance, B, 1024.0, base)
    assert [v.k for v in candidates(dep)] == list(range(1, dep.kmax + 1))
    assert np.all(best.tokens >= 1.0) and np.all(best.step.step_s > base)
