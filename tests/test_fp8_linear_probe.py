"""tools/fp8_linear_probe.py, which times vLLM's own fp8 linear (its Triton activation quantisation and block-fp8
GEMM, read from a vLLM source file at run time: no vLLM code is in this repository, so the kernels themselves run only
where a vLLM file is given: `TRITON_INTERPRET=1 python tools/fp8_linear_probe.py --fp8-utils .../fp8_utils.py --out OUT
--quick` on a CPU)."""

from __future__ import annotations

import json

import pytest

from .helpers import load_tool


@pytest.fixture(scope="module")
def probe():
    return load_tool("fp8_linear_probe")


def test_config_is_vllms_nearest_tuned_entry_else_its_default(probe, tmp_path):
    name = "N=7168,K=2048,device_name=NVIDIA_H200,dtype=fp8_w8a8,block_shape=[128,128].json"
    (tmp_path / name).write_text(json.dumps({"1": {"BLOCK_SIZE_M": 16}, "64": {"BLOCK_SIZE_M": 64}}))
    assert probe.config_for(tmp_path, "NVIDIA H200", 7168, 2048, 40) == ({"BLOCK_SIZE_M": 64}, f"tuned {name}")
    cfg, src = probe.config_for(tmp_path, "NVIDIA H100", 7168, 2048, 40)        # no file for this device
    assert src == "vLLM default" and cfg["BLOCK_SIZE_N"] == cfg["BLOCK_SIZE_K"] == 128
    assert probe.config_for(None, "NVIDIA H200", 2112, 7168, 1)[1] == "vLLM default"


def test_copies_stream_the_weights_past_the_l2(probe):
    assert probe._copies(2112 * 7168, quick=False) == 18              # 15 MB of fp8: 18 copies, 272 MB per graph
    assert probe._copies(7168 * 256, quick=False) == 64               # capped
    assert probe._copies(7168 * 18432, quick=False) == 4              # at least four
    assert probe._copies(10, quick=True) == 1


def test_a_file_without_the_kernels_is_refused_in_one_line(probe, tmp_path, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    other = tmp_path / "fp8_utils.py"
    other.write_text("def _per_token_group_quant_fp8():\n    pass\n")
    assert probe.main(["--fp8-utils", str(other), "--out", str(tmp_path), "--quick"]) == 2
    assert "no _w8a8_block_fp8_matmul (is it vLLM's fp8_utils.py?)" in capsys.readouterr().err


def test_no_gpu_and_no_quick_is_refused(probe, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert probe.main(["--fp8-utils", str(tmp_path / "x.py"), "--out", str(tmp_path)]) == 2
    assert "no CUDA device" in capsys.readouterr().err
