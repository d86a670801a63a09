"""Files that survive faults (issue 14): two identical sweeps into one folder, a shard corrupted after it was written,
a disk that fills up during a write, and an output that cannot be written (checked before the work)."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from simulator.errors import OutputError, ScenarioError
from simulator.files import write_atomic, write_text
from simulator.sweep import merge, sweep_to_dir

from .helpers import run

REPO = Path(__file__).resolve().parents[1]
SPEC = ('model = "llama-3.1-8b"\nk = { start = 1, stop = 8 }\nacceptance_rate = { start = 0.5, stop = 0.9, step = 0.1 }'
        '\ncontext = { start = 256, stop = 4096, step = 256 }\nbatch = { start = 1, stop = 32 }\n')


def _sweep(spec: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "simulator", "sweep", str(spec), "--out", str(out), *extra,
                             "--format", "json"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_two_identical_sweeps_into_one_folder(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    out, ref = tmp_path / "shared", tmp_path / "alone"
    a, b = _sweep(spec, out, "--shards", "24"), _sweep(spec, out, "--shards", "24")
    ra, rb = a.communicate(timeout=300), b.communicate(timeout=300)
    assert a.returncode == 0 and b.returncode == 0, (ra[1][-800:], rb[1][-800:])
    c = _sweep(spec, ref, "--shards", "24")
    c.communicate(timeout=300)
    assert (out / "sweep.parquet").read_bytes() == (ref / "sweep.parquet").read_bytes()
    assert not list(out.rglob(".*.tmp"))


def test_a_corrupted_shard_is_named_and_recomputed(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('model = "llama-3.1-8b"\nk = [1, 3]\nacceptance_rate = [0.6, 0.8]\nbatch = [1, 16]\n')
    out = tmp_path / "d"
    r = sweep_to_dir(str(spec), out, n_shards=3, progress=False)
    good = (out / "sweep.parquet").read_bytes()
    shard = out / "shards" / "shard-1-of-3.parquet"
    data = bytearray(shard.read_bytes())
    data[len(data) // 3] ^= 0xFF                 # a flipped byte in the data pages; the footer is intact
    shard.write_bytes(bytes(data))
    (out / "sweep.parquet").unlink()
    with pytest.raises(ScenarioError, match=r"shard-1-of-3\.parquet: corrupt: its bytes do not match the checksum"):
        merge(out)
    rc, stdout, err = run(capsys, "sweep", str(spec), "--out", str(out), "--format", "json")
    d = json.loads(stdout)
    assert rc == 0 and d["shards_run"] == 1 and d["shards_skipped"] == 2, err
    assert (out / "sweep.parquet").read_bytes() == good and r["n_shards"] == 3


def test_a_full_disk_leaves_no_file_and_names_the_output(tmp_path, monkeypatch):
    target = tmp_path / "report.md"
    target.write_text("old")

    def full(tmp: Path) -> None:
        tmp.write_text("partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(OutputError, match=r"report\.md: cannot write \(No space left on device\)"):
        write_atomic(target, full, "--report")
    assert target.read_text() == "old" and not list(tmp_path.glob(".*.tmp"))


def test_an_unwritable_output_fails_before_the_work(tmp_path, capsys, monkeypatch):
    import simulator.cross_validation as cv
    monkeypatch.setattr(cv, "crossval", lambda *a, **k: pytest.fail("the work ran before the output was checked"))
    rc, out, err = run(capsys, "validate", "--cv", "source", "--report", str(tmp_path / "no" / "such" / "x"))
    assert rc == 2 and out == "" and err.startswith("error: --report") and "does not exist" in err
    with pytest.raises(OutputError, match="is a folder"):
        write_text(tmp_path, "x")
