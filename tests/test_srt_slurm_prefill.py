"""tools/srt_slurm_prefill.py: a recipe's prefill instance in specroof's terms (its committed output,
validation/sources/srt_slurm_prefill.csv, is data no row reads yet). Needs PyYAML, as the tool does (run by hand)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from .helpers import load_tool


@pytest.fixture(scope="module")
def tool():
    pytest.importorskip("yaml")
    return load_tool("srt_slurm_prefill")


def test_sglang_dp_attention_splits_the_instance_and_its_chunk(tool):
    # --tp-size 8 --dp-size 8 --enable-dp-attention: eight attention ranks of one GPU each, and SGLang divides
    # chunked-prefill-size by dp-size (server_args.py); without DP attention the instance is one TP group
    p = {"tp-size": 8, "dp-size": 8, "ep-size": 8, "enable-dp-attention": True, "chunked-prefill-size": 32768}
    assert tool._sglang(p) == (1, 8, 8, "4096")
    assert tool._sglang({"tensor-parallel-size": 4, "chunked-prefill-size": 16384}) == (4, 1, 1, "16384")
    assert tool._sglang({"tp-size": 8, "dp-size": 8}) == (8, 1, 1, "")       # dp-size without DP attention


def test_trtllm_attention_dp_makes_every_gpu_a_rank(tool):
    p = {"tensor_parallel_size": 8, "moe_expert_parallel_size": 8, "enable_attention_dp": True,
         "max_num_tokens": 8448}
    assert tool._trtllm(p) == (1, 8, 8, "8448")
    assert tool._trtllm({"tensor_parallel_size": 4}) == (4, 1, 1, "")


def test_the_committed_table_is_whole_instances():
    path = Path(__file__).resolve().parents[1] / "validation" / "sources" / "srt_slurm_prefill.csv"
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows and all(len(r["commit"]) >= 7 and r["recipe"].startswith("recipes/") for r in rows)
    for r in (r for r in rows if r["prefill_tp"]):
        assert min(int(r["prefill_tp"]), int(r["prefill_dp"]), int(r["prefill_ep"])) >= 1
