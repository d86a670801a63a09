"""Uneven pipeline stages (simulator/pipeline.py): the engines' split of the layers, and a full pipeline's cycle at its
slowest stage."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.hardware import load_hardware
from simulator.pipeline import HEAD_OPS, cycle_runs, stage_layers
from simulator.roofline import rates, step_times
from simulator.workload import Parallelism, Precision, forward_pass

from .helpers import model

H100 = load_hardware("h100-sxm")


def _vllm_partitions(L: int, pp: int) -> list[int]:
    """vllm/distributed/utils.py get_pp_indices without VLLM_PP_LAYER_PARTITION (the rule SGLang copies)."""
    parts = [L // pp] * pp
    for i in range(2, L % pp + 2):
        parts[-i] += 1
    return parts


def _trtllm_partitions(L: int, pp: int) -> list[int]:
    """tensorrt_llm/mapping.py pp_layers: torch.tensor_split of the layer indices, the first L mod pp one longer."""
    return [len(a) for a in np.array_split(np.arange(L), pp)]


@settings(max_examples=200)
@given(L=st.integers(1, 200), pp=st.integers(1, 64))
@example(L=32, pp=3).via("the user review's 32 layers on 3 stages")
def test_stage_layers_are_the_engines_split(L, pp):
    if pp > L:
        return
    f, c = stage_layers(L, pp)
    for parts in (_vllm_partitions(L, pp), _trtllm_partitions(L, pp)):
        assert sum(parts) == L and parts[-1] == f and max(parts) == c


@settings(max_examples=200)
@given(L=st.integers(1, 200), pp=st.integers(1, 64), layer=st.floats(1e6, 1e10), head=st.floats(0.0, 1e10))
def test_the_cycle_counts_the_slowest_stage_and_an_even_split_keeps_the_old_rule(L, pp, layer, head):
    if pp > L:
        return
    is_head = np.array([True, False])
    runs = cycle_runs(L, pp, is_head, layer, head)
    f, c = stage_layers(L, pp)
    # the cycle is pp times the slower of the last stage (f layers + head) and a fuller one (c layers), by weight
    stage = max(c * layer, f * layer + head)
    assert runs[0] * head + runs[1] * L * layer == pytest.approx(pp * stage, rel=1e-12)
    assert runs[0] in (0.0, float(pp)) and pp * f / L <= runs[1] <= pp * c / L
    if L % pp == 0:
        np.testing.assert_array_equal(runs, [pp, 1.0])


def _split(ops, B, **kw):
    """The priced time of ops in the pass at batch B, of the layer ops alone and of the head ops alone, each with
    every op counted on one micro-batch's path (micro 1)."""
    path = replace(ops, micro=np.ones(len(ops)))
    names = np.array(ops.names)
    parts = {}
    for key, keep in (("all", np.ones(len(ops), bool)), ("head", np.isin(names, HEAD_OPS)),
                      ("send", names == "pp_send")):
        one = replace(path, repeat=np.where(keep, path.repeat, 0.0))
        parts[key] = float(step_times(one, rates(H100, one), np.asarray(B, float), 1.0, 1024.0).total_s)
    parts["layers"] = parts["all"] - parts["head"] - parts["send"]
    parts["priced"] = float(step_times(ops, rates(H100, ops), np.asarray(B, float), 1.0, 1024.0).total_s)
    return parts


@pytest.mark.parametrize("mid, pp, tp, last", [("llama-3.1-8b", 3, 1, True), ("qwen3-32b", 5, 1, True),
                                               ("llama-3.1-70b", 3, 4, True), ("qwen3-30b-a3b", 5, 1, False)])
def test_a_full_pipeline_is_priced_at_its_slowest_stage(mid, pp, tp, last):
    """32 layers on 3 stages run [11, 11, 10] (vLLM and TensorRT-LLM alike), the last with the LM head. Priced
    as even (10.67 layers + the head per stage) a full pipeline of Llama-3.1-8B came out 5.7 % over its slowest stage
    (10 layers + a head that weighs 1.9 layers); an MoE's layer outweighs its head, so there the fuller stages set the
    cycle. One micro-batch's path (fewer sequences than stages) crosses every layer and the head once, as before."""
    m = model(mid)
    ops = forward_pass(m, Precision(), Parallelism(tp=tp, pp=pp), scaleup_domain=8)
    f, c = stage_layers(m.n_layers, pp)
    assert c == f + 1
    full = _split(ops, pp * 16)
    ell, head = full["layers"] / m.n_layers, full["head"]
    slowest = f * ell + head if last else c * ell
    assert (f * ell + head > c * ell) == last
    assert full["priced"] == pytest.approx(pp * slowest + full["send"], rel=1e-9)
    even = full["layers"] + pp * head + full["send"]          # the rule before uneven stages were priced
    assert full["priced"] < even
    one = _split(ops, 1)
    assert one["priced"] == pytest.approx(one["all"], rel=1e-12)
