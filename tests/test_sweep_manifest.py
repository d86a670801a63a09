"""A sweep directory's manifest and shard count as a user meets them (user review of `specroof sweep`, 2026-12-06):
a hand-edited manifest is named as the edit it is (file and field), not blamed on the shards; a shard count other
than the folder's names both counts and the two ways on; `--dry-run --out DIR` plans what the run would do there."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.errors import OutputError, ScenarioError, SpecError
from simulator.sweep import load_spec, plan_dir, sweep_to_dir
from simulator.sweep.manifest import DIGESTS, altered_fields, manifest_for
from simulator.sweep.spec import spec_digest
from tests.strategies import json_values

from .helpers import run

SPEC = 'hardware = "h100-sxm"\nmodel = "llama-3.1-8b"\nmethod = "eagle3"\nk = [1, 2, 3, 4, 5, 6]\n' \
       'acceptance_rate = [0.6, 0.7]\nbatch = [1, 4]\n'


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A finished sweep of SPEC in 3 shards: (spec path, folder); each test copies the folder."""
    base = tmp_path_factory.mktemp("swept")
    spec = base / "s.toml"
    spec.write_text(SPEC)
    sweep_to_dir(str(spec), base / "d", n_shards=3, progress=False)
    return spec, base / "d"


def _copy(swept, tmp_path):
    import shutil
    spec, d = swept
    shutil.copytree(d, tmp_path / "d")
    return spec, tmp_path / "d"


def _shards(d):
    return {p.name: p.read_bytes() for p in (d / "shards").iterdir()}


def _edit(d, change):
    m = d / "manifest.json"
    man = json.loads(m.read_text())
    change(man)
    m.write_text(json.dumps(man, indent=1))


@pytest.mark.parametrize("change, says", [
    (lambda m: m.update(n_shards=4), "n_shards = 4 is not the value written"),
    (lambda m: m.update(spec_hash="ab" + m["spec_hash"][2:]), 'spec_hash = "ab'),
    (lambda m: m["spec"]["scalars"].update(tp=2), "spec (against this one: tp: 2 there, 1 here) is not the value"),
    (lambda m: m.update(specroof_version="0.0.1"), 'specroof_version = "0.0.1" is not the value written'),
    (lambda m: m.update(description="mine", shape=[9]), 'description = "mine", shape = [9] are not the values'),
    (lambda m: m.pop("dims"), "dims (removed) is not the value written"),
    (lambda m: m[DIGESTS].pop("spec"), "spec (no digest of it was written)"),
])
def test_a_hand_edited_manifest_is_named_not_blamed_on_the_shards(swept, tmp_path, capsys, change, says):
    # user review: an edited spec_hash was blamed on every shard by --merge ('corrupt: another spec or row count')
    # and called 'a sweep of another spec' by a rerun; an edited n_shards silently computed the sweep again beside
    # its shards; an edited specroof_version, dims or shape passed --merge
    spec, d = _copy(swept, tmp_path)
    _edit(d, change)
    before = _shards(d)
    for args in (["sweep", str(spec), "--out", str(d)], ["sweep", "--merge", str(d)],
                 ["sweep", str(spec), "--out", str(d), "--dry-run"]):
        rc, _, err = run(capsys, *args)
        assert rc == 2 and err.startswith(f"error: {d / 'manifest.json'}: the manifest was edited after the sweep "
                                          "wrote it: "), err
        # without a spec (--merge) the recorded spec is named, not compared
        said = re.sub(r" \(against this one: [^)]*\)", "", says) if "--merge" in args else says
        assert said in err and "the shards are not at fault" in err and "new --out directory" in err, err
        assert err.count("\n") == 1 and "another spec" not in err
    assert _shards(d) == before                        # nothing recomputed, nothing added


def test_a_corrupt_digest_table_is_named(swept, tmp_path, capsys):
    _, d = _copy(swept, tmp_path)
    _edit(d, lambda m: m.update({DIGESTS: ["x"]}))
    rc, _, err = run(capsys, "sweep", "--merge", str(d))
    assert rc == 2 and "corrupt manifest: field_sha256 = [\"x\"]; expected an object of digests" in err, err


def test_a_manifest_written_before_the_digests_still_resumes(swept, tmp_path, capsys):
    # a folder made by an earlier build of this version has no field_sha256: it resumes, and the older checks hold
    spec, d = _copy(swept, tmp_path)
    _edit(d, lambda m: m.pop(DIGESTS))
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d))
    assert rc == 0 and "0 run, 3 already there" in out
    # an older build's sweep of another spec (its hash is its spec's)
    _edit(d, lambda m: m["spec"]["scalars"].update(tp=2) or m.update(spec_hash=spec_digest(m["spec"])))
    rc, _, err = run(capsys, "sweep", str(spec), "--out", str(d))
    assert rc == 2 and "holds a sweep of another spec" in err and "tp: 2 there, 1 here" in err, err
    # its spec_hash edited by hand: named, as with the digests
    _edit(d, lambda m: m.update(spec_hash="0" * 64))
    for args in (["sweep", str(spec), "--out", str(d)], ["sweep", "--merge", str(d)]):
        rc, _, err = run(capsys, *args)
        assert rc == 2 and 'the manifest was edited after the sweep wrote it: spec_hash = "0000' in err, err
        assert "is not the hash of the spec recorded beside it" in err and "another spec" not in err, err


@settings(max_examples=60, deadline=None)
@given(field=st.sampled_from(["format", "specroof_version", "spec_hash", "n_shards", "n_cells", "n_points",
                              "points_per_cell", "dims", "shape", "description", "spec"]), value=json_values())
@example(field="n_shards", value=3.0)          # 3.0 == 3 in Python, but not the value written
@example(field="n_shards", value=True)
def test_any_edited_field_is_named_alone(field, value):
    man = manifest_for(load_spec(SPEC_DICT), 3)
    assert altered_fields(man) == []
    edited = json.loads(json.dumps(man | {field: value}))
    if json.dumps(value, sort_keys=True) != json.dumps(man[field], sort_keys=True):
        assert altered_fields(edited) == [field]


SPEC_DICT = {"hardware": "h100-sxm", "model": "llama-3.1-8b", "method": "eagle3", "k": [1, 2], "batch": [1, 4]}


def test_another_shard_count_names_both_counts_and_the_ways_on(swept, tmp_path, capsys):
    # user review: '--shards 12' on a folder of 6 said only 'pass --shard I/6 (or a new --out directory)'
    spec, d = _copy(swept, tmp_path)
    before = _shards(d)
    for extra, says in ((["--shards", "12"], "not the 12 of --shards 12: rerun with --shards 3 (or no --shards) to "
                                             "resume it, or use a new --out directory for 12 shards"),
                        (["--shard", "5/12"], "not the 12 of --shard 5/12: run its shards as --shard I/3 "
                                              "(0 <= I < 3), or use a new --out directory for a job array of 12")):
        for dry in ([], ["--dry-run"]):
            rc, _, err = run(capsys, "sweep", str(spec), "--out", str(d), *extra, *dry)
            assert rc == 2 and f"{d} was split into 3 shards (manifest.json: n_shards = 3), " in err, err
            assert says in err and err.count("\n") == 1, err
    with pytest.raises(ScenarioError, match="split into 3 shards"):
        sweep_to_dir(str(spec), d, n_shards=12, progress=False)
    assert _shards(d) == before
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d), "--shards", "3")     # the way on it names
    assert rc == 0 and "0 run, 3 already there" in out


def test_a_dry_run_plans_the_folder_it_is_given(tmp_path, capsys):
    # user review: `--dry-run --out DIR` planned the default 1 shard of an empty folder, beside DIR's 6 (2 done)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    d = tmp_path / "d"
    for i in (0, 2):
        sweep_to_dir(str(spec), d, shard=(i, 6), progress=False)
    (d / "shards" / "shard-2-of-6.parquet").write_bytes(b"garbage")
    sweep_to_dir(str(spec), d, shard=(4, 6), progress=False)
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d), "--dry-run")
    assert rc == 0 and ", 6 shards, spec hash " in out, out
    assert f"{d}: a sweep of this spec: 2 of 6 shard(s) done, 4 to run; shard-2-of-6.parquet corrupt: its bytes " \
           "do not match the checksum written with it, to compute again" in out, out
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d), "--dry-run", "--format", "json")
    got = json.loads(out)
    assert (got["n_shards"], got["shards_done"], got["shards_to_run"], got["new"]) == (6, 2, 4, False)
    assert list(got["recompute"]) == ["shard-2-of-6.parquet"] and got["out"] == str(d)
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d), "--dry-run", "--shard", "4/6")
    assert rc == 0 and "shard 4/6" in out and "1 of 1 shard(s) done, 0 to run" in out, out
    p = plan_dir(str(spec), d)
    assert [i for i, st in p["states"].items() if st != "ok"] == [1, 2, 3, 5]
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(d))               # the run does what was planned
    assert rc == 0 and "4 run, 2 already there" in out


def test_a_dry_run_refuses_what_the_run_refuses_and_creates_nothing(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    new = tmp_path / "new" / "d"
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(new), "--dry-run", "--shards", "4")
    assert rc == 0 and f"{new}: no sweep there yet: 0 of 4 shard(s) done, 4 to run" in out and not new.parent.exists()
    f = tmp_path / "file"
    f.write_text("x")
    rc, _, err = run(capsys, "sweep", str(spec), "--out", str(f), "--dry-run")
    assert rc == 2 and f"--out {f}: is a file; expected a folder" in err
    with pytest.raises(OutputError, match="is a file"):
        plan_dir(str(spec), f)
    rc, _, err = run(capsys, "sweep", str(spec), "--dry-run", "--shard", "0/2", "--workers", "2")
    assert rc == 2 and "--shard I/N runs one shard in this process" in err, err
    d = tmp_path / "other"
    sweep_to_dir({**SPEC_DICT, "k": [1]}, d, progress=False)
    rc, _, err = run(capsys, "sweep", str(spec), "--out", str(d), "--dry-run")
    assert rc == 2 and "holds a sweep of another spec" in err
    with pytest.raises(SpecError):
        _edit(d, lambda m: m.update(n_points=1))
        plan_dir(str(spec), d)


def test_a_batch_sweep_into_a_csv_name_is_refused(tmp_path, capsys):
    # user review: `--out plan.csv` (as a serving sweep takes) made a folder named plan.csv holding Parquet files
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    for dry in ([], ["--dry-run"]):
        rc, _, err = run(capsys, "sweep", str(spec), "--out", str(tmp_path / "plan.csv"), *dry)
        assert rc == 2 and "a batch sweep writes a folder" in err and "not a .csv file" in err, err
        assert not (tmp_path / "plan.csv").exists()


def test_a_runs_seconds_count_its_merge(swept, tmp_path, monkeypatch):
    # user review: a rerun that only merged 2.9e6 rows (2.6 s) said '0 run, 24 already there (0.00 s)'
    import time

    from simulator.sweep import store
    spec, d = _copy(swept, tmp_path)
    (d / "sweep.parquet").unlink()
    real = store.merge

    def slow(out):
        time.sleep(0.2)
        return real(out)
    monkeypatch.setattr(store, "merge", slow)
    r = sweep_to_dir(str(spec), d, progress=False)
    assert r["shards_run"] == 0 and r["seconds"] >= 0.2
