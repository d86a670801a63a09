"""known_hazards: a notebook's predict, serve and frontier results get the warnings the CLI prints beside them."""

from __future__ import annotations

import json

import pytest

from simulator import Scenario, Workload, known_hazards, predict, serve
from simulator.frontier import frontier

from .helpers import run

DSV3 = ("--hardware", "h200-sxm", "--model", "deepseek-v3", "--tp", "8", "--precision", "fp8", "--method", "mtp")
S = Scenario(hardware="h200-sxm", model="deepseek-v3", tp=8, precision="fp8", method="mtp", batch=(1, 64))


def _cli(capsys, *args) -> list[str]:
    rc, out, _ = run(capsys, *args, "--format", "json")
    assert rc == 0
    return [h["id"] for h in json.loads(out)["hazards"]]


def test_a_curve_result_gets_the_clis_hazards(capsys):
    ids = [h.id for h in known_hazards(predict(S))]
    assert "moe-speculation-under-load-overpredicted" in ids
    assert ids == _cli(capsys, "curve", *DSV3, "--batch", "1,64")


def test_options_the_result_does_not_carry_are_given_as_the_cli_flags_give_them(capsys):
    s = Scenario(method="eagle3", engine="vllm", batch=(1, 8))
    opts = {"temperature": 0.7}
    ids = [h.id for h in known_hazards(predict(s), opts)]
    assert ids == _cli(capsys, "curve", "--method", "eagle3", "--engine", "vllm", "--batch", "1,8", "--temperature",
                       "0.7")


def test_a_serve_result_gets_the_clis_hazards(capsys):
    ids = [h.id for h in known_hazards(serve(S, Workload(concurrency=(1, 32))))]
    assert "moe-speculation-under-load-overpredicted" in ids
    assert ids == _cli(capsys, "serve", *DSV3, "--concurrency", "1,32")


def test_a_frontier_result_gets_the_clis_hazards(capsys):
    s = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", batch=(1,))
    res = frontier(s, Workload(concurrency=(1,)), gpus=(1, 2))
    ids = [h.id for h in known_hazards(res)]
    assert ids == _cli(capsys, "frontier", "--model", "llama-3.1-8b", "--method", "eagle3", "--gpus", "1,2")


def test_nothing_speculating_has_no_hazards():
    assert known_hazards(predict(S.replace(k=0))) == []
    assert known_hazards(serve(S.replace(k=0), Workload(concurrency=(1,)))) == []


def test_anything_else_is_refused():
    with pytest.raises(TypeError, match="known_hazards takes a result of predict, serve or frontier; got dict"):
        known_hazards({})


def test_a_sparse_attention_target_is_warned_and_a_dense_mla_one_is_not(capsys):
    """The sparse_attention option is filled in from the model (index_topk > 0): GLM-5 gets the blind round 13
    warning, DeepSeek-V3 (dense MLA) does not."""
    glm = S.replace(model="glm-5", batch=(1, 8))
    ids = [h.id for h in known_hazards(predict(glm))]
    assert "sparse-attention-decode-underpriced" in ids
    assert ids == _cli(capsys, "curve", *DSV3[:2], "--model", "glm-5", *DSV3[4:], "--batch", "1,8")
    assert "sparse-attention-decode-underpriced" not in [h.id for h in known_hazards(predict(S))]
