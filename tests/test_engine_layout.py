"""A layout the engine cannot express is refused before pricing (EngineProfile.check_layout): vLLM's expert
parallelism has no size of its own (--enable-expert-parallel spreads the experts over every GPU of the instance,
EP size = TP x DP), so 1 < ep < tp x dp is no vLLM deployment."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from simulator import Scenario, load_engine
from simulator.errors import ScenarioError

from .helpers import run


def test_vllm_refuses_expert_parallelism_over_part_of_the_instance(capsys):
    rc, _, err = run(capsys, "curve", "--engine", "vllm", "--model", "qwen3-30b-a3b", "--tp", "4", "--ep", "2",
                     "--batch", "1")
    assert rc == 2 and err.count("\n") == 1
    assert "ep = 2 (--ep) with engine (--engine) = vllm" in err and "expected ep = 1 or 4 (--ep 1 or --ep 4)" in err


@pytest.mark.parametrize("engine, ep", [("vllm", 1), ("vllm", 4), ("sglang", 2), ("trtllm", 2)])
def test_the_layouts_each_engine_runs_resolve(engine, ep):
    Scenario(model="qwen3-30b-a3b", engine=engine, tp=4, ep=ep, batch=(1,)).resolve()


@given(tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2, 4]), ep=st.sampled_from([1, 2, 4, 8, 16, 32]))
@example(tp=4, dp=1, ep=2)
def test_vllm_takes_ep_1_or_the_whole_instance_only(tp, dp, ep):
    eng = load_engine("vllm")
    if 1 < ep < tp * dp:
        with pytest.raises(ScenarioError, match="its expert parallelism has no size of its own"):
            eng.check_layout(tp, dp, ep)
    else:
        eng.check_layout(tp, dp, ep)
    load_engine("sglang").check_layout(tp, dp, ep)       # SGLang's --ep-size takes any divisor
