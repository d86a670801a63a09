"""A sweep directory under misuse (an adversarial review of `specroof sweep`, 2026-12-05): a resumed sweep whose
named files changed, a merge beside other writers' and users' files, shard counts, a corrupt manifest, a removed
shards folder, and the spec checks the CLI makes elsewhere (k, zip names, serving lists, calibrate's --out)."""

from __future__ import annotations

import json

import pytest

from simulator.cli import main
from simulator.errors import SpecError
from simulator.sweep import load_spec, sweep_to_dir
from simulator.sweep.store import JOB_ARRAY_SHARDS, shard_limit

SPEC = 'hardware = "{hw}"\nmodel = "llama-3.1-8b"\nmethod = "eagle3"\nk = [1, 2, 3]\nacceptance_rate = [0.6, 0.7]\n' \
       'batch = [1, 4]\n'


def _spec(tmp_path, hw="h100-sxm", extra=""):
    p = tmp_path / "s.toml"
    p.write_text(SPEC.format(hw=hw) + extra)
    return p


def _run(capsys, *args):
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_changed_hardware_file_is_not_resumed(tmp_path, capsys):
    # review: the hash covered the path, not the file: a rewritten spec (or a profile rewritten by calibrate --out)
    # was resumed into shards priced from the old one, mixing both in one sweep.parquet
    from simulator.data import data_dir
    hw = tmp_path / "hw.toml"
    hw.write_text((data_dir("hardware_specs") / "h100-sxm.toml").read_text())
    spec = _spec(tmp_path, hw=str(hw))
    d = tmp_path / "d"
    assert _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")[0] == 0
    hw.write_text(hw.read_text().replace("value = 3.35", "value = 8.0"))
    rc, _, err = _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")
    assert rc == 2 and f"file {hw} changed since the sweep there" in err and "new --out" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    # the same content under the same path resumes (nothing to run)
    hw.write_text(hw.read_text().replace("value = 8.0", "value = 3.35"))
    rc, out, _ = _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")
    assert rc == 0 and "0 run, 3 already there" in out


def test_shard_counts_are_bounded(tmp_path, capsys):
    # review: --shards 100000000 on 3 cells hung after writing its manifest; a job array of fixed size still runs
    spec = _spec(tmp_path)
    s = load_spec(str(spec))
    assert shard_limit(s.n_cells) == JOB_ARRAY_SHARDS
    rc, _, err = _run(capsys, "sweep", str(spec), "--out", str(tmp_path / "h"), "--shards", "100000000")
    assert rc == 2 and "shards = 100000000; expected at most 4096" in err
    assert not (tmp_path / "h").exists()          # review: the refused run had created the --out folder
    rc, _, err = _run(capsys, "sweep", str(spec), "--out", str(tmp_path / "p"), "--shard", "0/100000000")
    assert rc == 2 and "expected at most 4096" in err
    r = sweep_to_dir(str(spec), tmp_path / "array", shard=(7, 10), progress=False)     # empty shard of an array
    assert r["shards_run"] == 1


@pytest.mark.parametrize("field, value, says", [
    ("n_shards", 10**9, "n_shards = 1000000000; expected at most 4096"),
    ("n_points", 99, "n_points = 99; expected n_cells x points_per_cell"),
    ("n_cells", 6, "n_points = 12; expected n_cells x points_per_cell = 24"),
])
def test_a_corrupt_manifest_is_named_by_its_field(tmp_path, capsys, field, value, says):
    # review: n_cells edited to 6 was blamed on every shard (recomputed on every run), n_points 99 never flagged,
    # 1e9 shards made the merge hang
    spec, d = _spec(tmp_path), tmp_path / "d"
    assert _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")[0] == 0
    m = d / "manifest.json"
    man = json.loads(m.read_text())
    man[field] = value
    m.write_text(json.dumps(man))
    for args in (["sweep", str(spec), "--out", str(d)], ["sweep", "--merge", str(d)]):
        rc, _, err = _run(capsys, *args)
        assert rc == 2 and "corrupt manifest" in err and says in err and err.count("\n") == 1, err


def test_a_manifest_whose_counts_disagree_with_its_spec(tmp_path):
    spec, d = _spec(tmp_path), tmp_path / "d"
    sweep_to_dir(str(spec), d, n_shards=3, progress=False)
    m = d / "manifest.json"
    man = json.loads(m.read_text())
    man["points_per_cell"], man["n_points"] = 3, 3 * man["n_cells"]       # consistent alone, not with the spec
    m.write_text(json.dumps(man))
    with pytest.raises(SpecError, match=r"corrupt manifest: n_points = 9; this spec \(the same hash\) has 12"):
        sweep_to_dir(str(spec), d, progress=False)


def test_a_removed_shards_folder_and_a_file_in_its_place(tmp_path, capsys):
    # review: the rerun the incomplete-sweep error recommends crashed with FileNotFoundError; a file where the
    # folder belongs gave NotADirectoryError
    import shutil
    spec, d = _spec(tmp_path), tmp_path / "d"
    assert _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")[0] == 0
    shutil.rmtree(d / "shards")
    (d / "sweep.parquet").unlink()
    rc, _, err = _run(capsys, "sweep", "--merge", str(d))
    assert rc == 2 and "recomputes them" in err
    rc, out, _ = _run(capsys, "sweep", str(spec), "--out", str(d))
    assert rc == 0 and "3 run, 0 already there" in out
    shutil.rmtree(d / "shards")
    (d / "shards").write_text("not a folder")
    rc, _, err = _run(capsys, "sweep", str(spec), "--out", str(d))
    assert rc == 2 and err.startswith("error: --out ") and "cannot write" in err and "Traceback" not in err


def test_a_corrupt_shard_is_named_when_it_is_computed_again(tmp_path, capsys):
    # review: a truncated shard was recomputed with only '1 run, 2 already there'
    spec, d = _spec(tmp_path), tmp_path / "d"
    assert _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")[0] == 0
    p = d / "shards" / "shard-1-of-3.parquet"
    p.write_bytes(p.read_bytes()[:50])
    rc, out, err = _run(capsys, "sweep", str(spec), "--out", str(d))
    assert rc == 0 and "1 run, 2 already there" in out
    assert "note: shard-1-of-3.parquet was corrupt: its bytes do not match the checksum" in err


def test_spec_values_the_cli_refuses_are_refused_in_a_sweep(tmp_path, capsys):
    # review: k = 65 and 500 were priced and reported feasible (the CLI refuses --k 65); a zip group named after a
    # result column raised a ValueError from xarray; [serve] rate = [1.0, 1] ran twice
    for extra, says in (('k = [8, 65]\n', "k: 65; expected at most 64"),
                        ('[[zip]]\nname = "speedup"\ncontext = [0, 1024]\nbatch = [1, 8]\n',
                         "zip.name: 'speedup'; expected a new dimension name (not a parameter or a result column)")):
        p = tmp_path / "x.toml"
        p.write_text('hardware = "h100-sxm"\nmodel = "llama-3.1-8b"\nmethod = "eagle3"\nacceptance_rate = 0.8\n'
                     + extra)
        rc, _, err = _run(capsys, "sweep", str(p), "--out", str(tmp_path / "o"))
        assert rc == 2 and says in err, err
    for key, vals in (("rate", "[1.0, 1]"), ("concurrency", "[4, 4.0]")):
        p = tmp_path / "serve.toml"
        p.write_text(f'model = "llama-3.1-8b"\nmethod = "eagle3"\n[serve]\n{key} = {vals}\n')
        rc, _, err = _run(capsys, "sweep", str(p), "--out", str(tmp_path / "serve.csv"))
        assert rc == 2 and f"serve.{key}" in err and "a value given twice" in err, err


def test_a_large_grid_is_announced(tmp_path, capsys, monkeypatch):
    # review: 5.4e10 points started without a word
    import simulator.cli.sweep as cli_sweep
    monkeypatch.setattr(cli_sweep, "LARGE_POINTS", 10)
    rc, _, err = _run(capsys, "sweep", str(_spec(tmp_path)), "--out", str(tmp_path / "d"))
    assert rc == 0 and "note: 12 points in 3 cells: a long run" in err


def test_calibrate_writes_a_profile_that_engine_reads_as_a_file(tmp_path, capsys, monkeypatch):
    # review: --out prof.json was written, and the printed `--engine prof.json` read it as a bundled name; the rule is
    # engine.is_profile_path, the one --engine applies
    rows = str(__import__("pathlib").Path("examples/vllm_h100_rows.csv").resolve())
    monkeypatch.chdir(tmp_path)
    rc, _, err = _run(capsys, "calibrate", rows, "--engine", "vllm", "--out", "prof.json")
    assert rc == 2 and "expected a .toml path" in err and not (tmp_path / "prof.json").exists()


def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    # review: --scheduler 'foo bar' raised ValueError and tcp://127.0.0.1:1 OSError, as tracebacks (a stand-in
    # dask.distributed whose Client refuses, as the real one does, so the test needs no cluster)
    import sys
    import types

    from simulator.errors import ScenarioError

    def refuse(address, timeout=None):
        raise ValueError("missing port number in address 'foo bar'")
    fake = types.ModuleType("dask.distributed")
    fake.Client, fake.LocalCluster, fake.as_completed = refuse, None, None
    monkeypatch.setitem(sys.modules, "dask", types.ModuleType("dask"))
    monkeypatch.setitem(sys.modules, "dask.distributed", fake)
    with pytest.raises(ScenarioError, match=r"--scheduler 'foo bar': no Dask scheduler reached there \(missing port"):
        sweep_to_dir(str(_spec(tmp_path)), tmp_path / "d", scheduler="foo bar", progress=False)


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    # review: synced_tmp leaked its temporary file when the write failed (a full disk)
    import os

    from simulator.errors import OutputError
    from simulator.sweep import durable

    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(durable.os, "fsync", full)
    with pytest.raises(OutputError, match=r"shard .*x\.parquet: cannot write: No space left on device"):
        with durable.os_errors(tmp_path / "x.parquet", "shard"):
            durable.atomic_bytes(tmp_path / "x.parquet", b"data")
    assert os.listdir(tmp_path) == []


def test_files_are_fingerprinted_only_where_they_are_read(tmp_path, monkeypatch):
    # review: a bundled name that matched a folder in the working directory was fingerprinted from it
    from simulator.sweep.names import file_digests
    monkeypatch.chdir(tmp_path)
    (tmp_path / "h100-sxm").mkdir()
    (tmp_path / "h100-sxm" / "config.json").write_text("{}")
    (tmp_path / "hw.toml").write_text("x")
    assert file_digests(["h100-sxm", "meta-llama/Llama-3.1-8B", "hw.toml"]) == {
        "hw.toml": __import__("hashlib").sha256(b"x").hexdigest()}


def test_a_sweep_of_the_previous_format_names_the_format(tmp_path):
    # review: a directory written before the files fingerprint said only 'the hashes differ'
    from simulator.sweep.spec import FORMAT, spec_difference
    here = load_spec(str(_spec(tmp_path))).normalized
    there = {k: v for k, v in here.items() if k != "files"} | {"format": "specroof-sweep/2"}
    assert FORMAT == "specroof-sweep/3"
    assert 'format: "specroof-sweep/2" there, "specroof-sweep/3" here' in spec_difference(there, here)


def test_a_corrupt_merged_file_is_named_when_joined_again(tmp_path, capsys):
    """User review of batch sweeps: a truncated or altered DIR/sweep.parquet was silently rewritten by --merge and by
    a rerun; it is rewritten from the shards (byte for byte as before) and named on stderr."""
    spec, d = _spec(tmp_path), tmp_path / "d"
    assert _run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")[0] == 0
    merged = d / "sweep.parquet"
    good = merged.read_bytes()
    for rerun in (["sweep", "--merge", str(d)], ["sweep", str(spec), "--out", str(d)]):
        merged.write_bytes(good[: len(good) // 2])
        rc, _, err = _run(capsys, *rerun)
        assert rc == 0 and "note: sweep.parquet was corrupt: its bytes do not match the checksum" in err
        assert merged.read_bytes() == good
    rc, _, err = _run(capsys, "sweep", "--merge", str(d))          # an intact one: nothing said
    assert rc == 0 and "note" not in err
