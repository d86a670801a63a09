"""tools/hf_probe.py, the prepared device script for the `hf` engine profile: its CPU smoke test (tiny models) runs
every probe and writes what it says (the timings themselves need the device machine)."""

from __future__ import annotations

import csv
import json

import pytest

from .helpers import load_tool


@pytest.fixture(scope="module")
def probe():
    return load_tool("hf_probe")


def test_quick_run_writes_every_probe(probe, tmp_path):
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    assert probe.main(["--out", str(tmp_path), "--quick"]) == 0
    with open(tmp_path / "hf_probe.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["probe"] for r in rows] == ["forward"] * 4 + ["generate", "assisted", "assisted"]
    assert sorted((int(r["batch"]), int(r["q"])) for r in rows if r["probe"] == "forward") == [
        (1, 1), (1, 4), (4, 1), (4, 4)]
    assert [int(r["k"]) for r in rows if r["probe"] == "assisted"] == [1, 3]
    assert all(float(r["time_us"]) > 0 for r in rows)
    info = json.loads((tmp_path / "hf_meta.json").read_text())
    assert info["transformers"] == transformers.__version__ and info["failed"] == []


def test_refuses_a_full_run_without_cuda(probe, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the full run is allowed")
    assert probe.main(["--out", str(tmp_path)]) == 2
    assert "no CUDA device" in capsys.readouterr().err and not (tmp_path / "hf_probe.csv").exists()
