"""tools/gpu_probe.py, the prepared device script: its CPU smoke test runs every probe and writes what it says
(the timings themselves need the device machine; `python tools/gpu_probe.py --out OUT` there)."""

from __future__ import annotations

import csv
import json

import pytest

from .helpers import load_tool


@pytest.fixture(scope="module")
def probe():
    return load_tool("gpu_probe")


def test_quick_run_writes_every_probe(probe, tmp_path):
    torch = pytest.importorskip("torch")
    assert probe.main(["--out", str(tmp_path), "--quick"]) == 0
    with open(tmp_path / "probe.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {r["probe"] for r in rows} == {"floor", "copy", "gemm", "moe", "attention", "layer", "gqa", "fp8"}
    gqa = [r for r in rows if r["probe"] == "gqa"]             # each point twice: SDPA and packed GQA attention
    assert sorted((r["case"].rsplit(", ", 1)[1], int(r["batch"]), int(r["q"])) for r in gqa) == [
        (att, b, q) for att in ("packed", "sdpa") for b in (1, 4) for q in (1, 4)]
    layer = [r for r in rows if r["probe"] == "layer"]        # a decode and a verify at every batch, all timed
    assert sorted((int(r["batch"]), int(r["q"])) for r in layer) == [(1, 1), (1, 3), (4, 1), (4, 3)]
    assert all(int(r["m"]) == int(r["batch"]) * int(r["q"]) and "not timed" not in r["note"] for r in layer)
    assert all(float(r["time_us"]) > 0 for r in rows)
    moe = [r for r in rows if r["probe"] == "moe"]
    assert all("experts touched" in r["note"] for r in moe)
    info = json.loads((tmp_path / "meta.json").read_text())
    assert info["torch"] == torch.__version__ and rows[0]["device"] == info["device"]


def test_refuses_a_full_run_without_cuda(probe, tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the full run is allowed")
    assert probe.main(["--out", str(tmp_path)]) == 2
    assert "no CUDA device" in capsys.readouterr().err and not (tmp_path / "probe.csv").exists()


def test_uniform_routing_offsets(probe):
    torch = pytest.importorskip("torch")
    tok, offs, touched = probe._experts(torch, 64, 16, 4, "cpu")
    assert tok.numel() == 64 * 4 and int(offs[-1]) == 64 * 4 and 4 <= touched <= 16
    assert torch.all(offs[1:] >= offs[:-1])


def test_layer_pass_keeps_its_shape(probe):
    # The absorbed-MLA layer returns the residual stream [tokens, d] for a decode and for a verify of q tokens.
    torch = pytest.importorskip("torch")
    c = probe.DSV3_QUICK
    for b, q in ((1, 1), (3, 3)):
        fn, how, touched = probe._mla_layer(torch, c, b, q, 16, "cpu")
        y = fn()
        assert tuple(y.shape) == (b * q, c["d"]) and torch.isfinite(y.float()).all() and how
        assert c["k"] <= touched <= min(c["e"], b * q * c["k"])


def test_mla_attention_matches_sdpa(probe):
    # The latent-cache product (rows = heads x query tokens, the cache read once) is SDPA with one KV head whose
    # values are the first `lat` columns of the keys (the reference, in fp32).
    torch = pytest.importorskip("torch")
    b, h, q, L, lat, rope = 2, 4, 3, 10, 8, 4
    qq = torch.randn(b, q * h, lat + rope)
    cache = torch.randn(b, L, lat + rope)
    got = probe._mla_attention(torch, qq, cache, lat, 0.3)
    ref = torch.nn.functional.scaled_dot_product_attention(qq.view(b, q * h, 1, lat + rope).transpose(1, 2),
                                                           cache[:, None], cache[:, None, :, :lat], scale=0.3)
    torch.testing.assert_close(got, ref.transpose(1, 2).reshape(b, q * h, lat), rtol=1e-5, atol=1e-5)


def test_only_runs_the_probes_named_and_a_failing_probe_spares_the_rest(probe, tmp_path, monkeypatch):
    pytest.importorskip("torch")

    def broken(*_):
        raise RuntimeError("no such kernel")
    broken.__name__ = "copy_rows"
    monkeypatch.setattr(probe, "PROBES", (probe.floor_rows, broken))
    assert probe.main(["--out", str(tmp_path), "--quick", "--only", "floor", "copy"]) == 1
    with open(tmp_path / "probe.csv", newline="") as f:
        assert {r["probe"] for r in csv.DictReader(f)} == {"floor"}
    assert json.loads((tmp_path / "meta.json").read_text())["failed"] == ["copy_rows: RuntimeError: no such kernel"]
