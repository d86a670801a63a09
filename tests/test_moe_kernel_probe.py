"""tools/moe_kernel_probe.py, which times vLLM's own fused-MoE Triton kernel read from a vLLM source file at run
time (no vLLM code is in this repository, so the kernel itself is exercised only where a vLLM file is given:
`TRITON_INTERPRET=1 python tools/moe_kernel_probe.py --fused-moe .../fused_moe.py --out OUT --quick` on a CPU)."""

from __future__ import annotations

import json

import pytest

from .helpers import load_tool


@pytest.fixture(scope="module")
def probe():
    return load_tool("moe_kernel_probe")


def test_config_is_vllms_nearest_tuned_entry_else_its_default_rule(probe, tmp_path):
    name = "E=128,N=768,device_name=NVIDIA_H200.json"
    (tmp_path / name).write_text(json.dumps({"1": {"BLOCK_SIZE_M": 16}, "64": {"BLOCK_SIZE_M": 64},
                                             "256": {"BLOCK_SIZE_M": 128}}))
    assert probe.config_for(tmp_path, "NVIDIA H200", 128, 768, 40) == ({"BLOCK_SIZE_M": 64}, f"tuned {name}")
    assert probe.config_for(tmp_path, "NVIDIA H200", 128, 768, 1000)[0] == {"BLOCK_SIZE_M": 128}
    cfg, src = probe.config_for(tmp_path, "NVIDIA H100", 128, 768, 40)       # no file for this device
    assert src == "vLLM default" and cfg["BLOCK_SIZE_M"] == 16                # M <= E: the small-batch rule
    assert probe.config_for(None, "NVIDIA H200", 128, 768, 129)[0]["BLOCK_SIZE_M"] == 64


def test_align_pads_each_experts_run_to_the_block(probe):
    torch = pytest.importorskip("torch")
    ids = torch.tensor([[2, 0], [2, 1], [0, 2]], dtype=torch.int32)            # 3 tokens, top-2, 3 experts
    sorted_ids, experts, npad = probe.align(torch, ids, 3, 4)
    n = ids.numel()                                                             # the sentinel of a padded slot
    assert sorted_ids.tolist() == [1, 4, n, n, 3, n, n, n, 0, 2, 5, n]          # slots (token * 2 + k) by expert
    assert experts.tolist() == [0, 1, 2] and npad.tolist() == [12]


def test_a_file_without_the_kernel_is_refused_in_one_line(probe, tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    other = tmp_path / "fused_moe.py"
    other.write_text("def something_else():\n    pass\n")
    assert probe.main(["--fused-moe", str(other), "--out", str(tmp_path), "--quick"]) == 2
    assert "no fused_moe_kernel / write_zeros_to_output (is it vLLM's fused_moe.py?)" in capsys.readouterr().err


def test_attention_probe_refuses_a_file_without_the_kernel(tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    probe = load_tool("attention_kernel_probe")
    other = tmp_path / "triton_unified_attention.py"
    other.write_text("x = 1\n")
    assert probe.main(["--unified-attention", str(other), "--out", str(tmp_path), "--quick"]) == 2
    assert "no unified_attention (is it vLLM's triton_unified_attention.py?)" in capsys.readouterr().err


def test_fp8_cases_only_where_the_shard_is_whole_blocks(probe):
    assert probe.blocks_fit("deepseek-v3-tp8") and probe.blocks_fit("qwen3-30b-a3b-tp2")
    assert not probe.blocks_fit("qwen3-30b-a3b-tp4")              # 768 / 4 = 192 columns: 1.5 blocks
