"""File-handling bugs an independent review found (2026-12-05), each pinned: an output that is the input, a column
given twice, an --engine-override that names no engine, sweep grids past the limits, serving-sweep tables, a
calibrated profile that would not load, a corrupt sweep manifest or checksum, and two sweeps of different specs
racing for one new folder."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from simulator.errors import OutputError, SpecError
from simulator.sweep import merge, parse_spec, sweep_to_dir
from simulator.sweep.serving import plan

from .helpers import run

REPO = Path(__file__).resolve().parents[1]
ROWS = REPO / "examples" / "vllm_h100_rows.csv"
SMALL = {"model": "llama-3.1-8b", "method": "eagle3", "k": [1, 3], "acceptance_rate": [0.6, 0.8],
         "context": [512, 4096], "batch": [1, 16]}


def test_an_output_that_is_the_input_is_refused_before_the_work(tmp_path, capsys):
    rows = tmp_path / "v.csv"
    shutil.copy(ROWS, rows)
    before = rows.read_bytes()
    for args in (("validate", str(rows), "--report", str(tmp_path / "v")),
                 ("validate", str(rows), "--report", str(tmp_path / "sub" / ".." / "v")),
                 ("calibrate", str(rows), "--engine", "vllm", "--out", str(rows), "--force")):
        (tmp_path / "sub").mkdir(exist_ok=True)
        rc, _, err = run(capsys, *args)
        assert rc == 2 and "is the input file" in err and err.count("\n") == 1, (args, err)
    assert rows.read_bytes() == before
    rc, _, _ = run(capsys, "validate", str(rows), "--report", str(tmp_path / "w"))
    assert rc == 0 and (tmp_path / "w.csv").exists() and rows.read_bytes() == before


def test_a_column_given_twice_is_refused(tmp_path, capsys):
    lines = ROWS.read_text().splitlines()
    bad = tmp_path / "dup.csv"
    bad.write_text("\n".join([lines[0] + ",batch"] + [ln + ",64" for ln in lines[1:]]) + "\n")
    rc, _, err = run(capsys, "validate", str(bad))
    assert rc == 2 and "['batch'] appear more than once" in err


@pytest.mark.parametrize("spec, needle", [("vllmm=x.toml", "'vllmm' is not a bundled engine"),
                                          ("=x.toml", "'' is not a bundled engine"),
                                          ("vllm=", "expected NAME=PROFILE.toml"),
                                          ("vllm", "expected NAME=PROFILE.toml")])
def test_an_engine_override_that_names_no_engine_is_refused(spec, needle, capsys):
    rc, _, err = run(capsys, "validate", str(ROWS), "--engine-override", spec)
    assert rc == 2 and needle in err


def test_an_engine_override_applies_whatever_the_case(tmp_path, capsys):
    slow = tmp_path / "slow.toml"
    slow.write_text((REPO / "engine_profiles" / "vllm.toml").read_text().replace(
        "step_overhead_s = { value = 0.0003", "step_overhead_s = { value = 0.05", 1))
    preds = []
    for spec in (None, f"vllm={slow}", f"VLLM={slow}"):
        rc, out, _ = run(capsys, "validate", str(ROWS), "--format", "json",
                         *(("--engine-override", spec) if spec else ()))
        assert rc == 0
        preds.append([r["predicted"] for r in json.loads(out)["rows"]])
    assert preds[1] == preds[2] and preds[1] != preds[0]


def test_sweep_grids_past_the_limits_are_refused_before_the_work():
    # np.prod in int64 wrapped: four axes of 65536 values counted 0 points (and 2^64 + 1 as 1.1e15), and a single cell
    # of 1e11 points allocated 745 GiB before failing.
    wrap = {**SMALL, "k": 3, "acceptance_rate": 0.7, "batch": 1,
            **{k: {"start": 1, "stop": 65536} for k in ("context", "draft_kv_window", "cuda_graph_max_batch", "k_max")}}
    with pytest.raises(SpecError, match=r"1.8\de\+19 points"):
        parse_spec(wrap)
    fat = {**SMALL, "k": 3, "context": 512, "acceptance_rate": {"start": 0.0, "stop": 0.9, "step": 0.00001},
           "batch": {"start": 1, "stop": 1000}}
    with pytest.raises(SpecError, match="one cell has 9e\\+07 points"):
        parse_spec(fat)


@pytest.mark.parametrize("serve, needle", [({"isl": [], "osl": 128}, "serve.isl: empty list"),
                                           ({"concurrency": [1, 1]}, "serve.concurrency: repeated values"),
                                           ({"concurrency": {"start": 1, "stop": 10 ** 9}},
                                            "serve.concurrency: range has"),
                                           ({"concurrency": {"start": 1, "stop": 2000}},
                                            "serve.concurrency: 2000 points; at most 1024"),
                                           ({"concurency": [1]}, "unknown key(s) ['concurency']")])
def test_a_serving_sweep_table_is_checked_naming_its_key(serve, needle):
    doc = {"hardware": "h100-sxm", "model": "llama-3.1-8b", "method": "eagle3", "engine": "vllm", "serve": serve}
    with pytest.raises(SpecError, match=re.escape(needle)):
        plan(doc)


def test_a_serving_sweeps_dry_run_checks_the_spec(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text('hardware = "h100-sxmm"\nmodel = "llama-3.1-8b"\nmethod = "eagle3"\n[serve]\nconcurrency = [1]\n')
    rc, _, err = run(capsys, "sweep", str(spec), "--out", str(tmp_path / "o.csv"), "--dry-run")
    assert rc == 2 and "unknown hardware 'h100-sxmm'" in err
    spec.write_text('hardware = "h100-sxm"\nmodel = "llama-3.1-8b"\nmethod = "eagle3"\n[serve]\nconcurrency = [1, 8]\n'
                    'isl = [512, 1024]\n')
    rc, out, _ = run(capsys, "sweep", str(spec), "--out", str(tmp_path / "o.csv"), "--dry-run")
    assert rc == 0 and "= 4 rows" in out and not (tmp_path / "o.csv").exists()


def test_a_calibrated_profile_loads_whatever_its_base_holds(tmp_path, capsys):
    # A base profile's multi-line note was written with its raw newline (a profile that did not load, over --out);
    # a base given as a path without .toml was looked up among the bundled profiles after the fit.
    text = (REPO / "engine_profiles" / "vllm.toml").read_text()
    base = tmp_path / "noext"
    base.write_text(text)
    multi = tmp_path / "multi.toml"
    i = text.index('note = "') + len('note = "')
    j = text.index('"', i)
    multi.write_text(text[:i - 1] + '"""' + text[i:j] + '\nsecond line\t"""' + text[j + 1:])
    for eng in (str(multi), str(base)):
        out = tmp_path / "cal.toml"
        rc, _, err = run(capsys, "calibrate", str(ROWS), "--engine", eng, "--out", str(out), "--force")
        assert rc == 0, err
        rc, _, err = run(capsys, "curve", "--engine", str(out), "--batch", "1")
        assert rc == 0, err


def test_a_corrupt_manifest_or_checksum_is_named(tmp_path, capsys):
    out = tmp_path / "sw"
    sweep_to_dir(parse_spec(SMALL), out, n_shards=2)
    man = json.loads((out / "manifest.json").read_text())
    for bad, needle in (([1, 2], "a JSON list, expected an object"),
                        ({**man, "n_shards": 0}, "n_shards = 0; expected a whole number >= 1"),
                        ({k: v for k, v in man.items() if k != "n_shards"}, "n_shards = None"),
                        ({**man, "n_shards": "2"}, "n_shards = '2'")):
        (out / "manifest.json").write_text(json.dumps(bad))
        with pytest.raises(SpecError, match="corrupt manifest"):
            merge(out)
        rc, _, err = run(capsys, "sweep", "--merge", str(out))
        assert rc == 2 and needle in err, err
    (out / "manifest.json").write_text(json.dumps(man))
    ck = next((out / "checksums").glob("shard-*"))
    ck.write_bytes(b"\xff\xfe\x00garbage")
    rc, _, err = run(capsys, "sweep", "--merge", str(out))
    assert rc == 2 and "its checksum file is unreadable" in err


def test_two_sweeps_of_different_specs_do_not_share_a_new_folder(tmp_path):
    # The manifest is created once (a hard link of a finished file): the second spec finds the first's and is
    # refused, whichever wins the race; before, both could write one and their shards mixed.
    out = tmp_path / "sw"
    sweep_to_dir(parse_spec(SMALL), out, n_shards=2)
    with pytest.raises(Exception, match="holds a sweep of another spec"):
        sweep_to_dir(parse_spec({**SMALL, "context": [512, 8192]}), out, n_shards=2)
    assert json.loads((out / "manifest.json").read_text())["n_shards"] == 2       # the first spec's, untouched


def test_output_checks_compare_files_not_names(tmp_path):
    from simulator.files import check_output
    a = tmp_path / "a.csv"
    a.write_text("x")
    link = tmp_path / "l.csv"
    link.symlink_to(a)
    with pytest.raises(OutputError, match="is the input file"):
        check_output(link, "--out", (a,))
    assert check_output(tmp_path / "b.csv", "--out", (a, None)) == tmp_path / "b.csv"


def test_dump_toml_round_trips_every_string():
    import tomllib

    from simulator.toml_out import dump_toml
    doc = {"name": 'a "b" \\ c', "s": {"k": {"note": "line\nnext\ttab\r\x01\x7f\b\f end", "value": 1.5}}}
    assert tomllib.loads(dump_toml(doc)) == doc


def test_an_engine_date_not_yyyy_mm_is_refused(tmp_path, capsys):
    # compared as text with a profile's valid_from: '2025-1' and 'Jan 2025' read as headline, '2025-01' as legacy
    import csv
    with ROWS.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for bad in ("2025-1", "Jan 2025", "2025-13"):
        f = tmp_path / "d.csv"
        with f.open("w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerow({**rows[0], "engine_date": bad})
        rc, _, err = run(capsys, "validate", str(f))
        assert rc == 2 and f"engine_date = {bad!r}; expected YYYY-MM" in err


def test_a_toml_file_may_start_with_a_byte_order_mark(tmp_path, capsys):
    hw = tmp_path / "h.toml"
    hw.write_bytes(b"\xef\xbb\xbf" + (REPO / "hardware_specs" / "h100-sxm.toml").read_bytes())
    rc, _, err = run(capsys, "step", "--hardware", str(hw), "--batch", "1")
    assert rc == 0, err


def test_the_merged_sweep_is_sealed_and_not_rewritten(tmp_path):
    out = tmp_path / "sw"
    sweep_to_dir(parse_spec(SMALL), out, n_shards=2)
    dest = merge(out)
    assert (out / "checksums" / "sweep.parquet.sha256").exists() and not (tmp_path / "checksums").exists()
    t0 = dest.stat().st_mtime_ns
    assert merge(out) == dest and dest.stat().st_mtime_ns == t0
    data = bytearray(dest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    dest.write_bytes(bytes(data))
    merge(out)                                      # a changed byte: rebuilt from the shards, sealed again
    assert dest.stat().st_mtime_ns != t0


def test_an_interrupt_is_one_line(monkeypatch, capsys):
    # Ctrl-C on a long sweep printed a 28-line KeyboardInterrupt traceback; now one line and exit 130.
    import simulator.cli.info as info

    def stop(a):
        raise KeyboardInterrupt
    monkeypatch.setattr(info, "run_hardware", stop)
    rc, out, err = run(capsys, "hardware")
    assert rc == 130 and err == "interrupted\n" and out == ""


def test_a_hazard_condition_must_be_a_finite_number(tmp_path, capsys):
    # conditions = { temperature_gt = nan } was accepted and matched nothing, silently
    h = tmp_path / "h.toml"
    h.write_text('schema = 1\n[[hazard]]\nid = "x"\ntitle = "t"\nseverity = "lossy"\nengines = ["vllm"]\n'
                 'methods = ["*"]\nconditions = { temperature_gt = nan }\nlinks = ["https://e.com"]\ndetail = "d"\n')
    rc, _, err = run(capsys, "curve", "--engine", "vllm", "--batch", "1", "--hazards", str(h))
    assert rc == 2 and "temperature_gt = nan, expected a finite number" in err


def test_step_refuses_a_serving_only_flag(capsys):
    # --max-running-requests was the flag here until step priced it (it sizes vLLM's reserve and caps the batch:
    # tests/test_step_cap.py); --dp-balance schedules prompts, which one pass has none of
    rc, _, err = run(capsys, "step", "--batch", "1", "--dp-balance", "true")
    assert rc == 2 and "unrecognized arguments: --dp-balance" in err


def test_a_rows_file_of_which_no_row_can_be_priced_is_an_error(tmp_path, capsys):
    import csv
    with ROWS.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    f = tmp_path / "bad.csv"
    with f.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({**r, "hardware": "h100-sxmm"})
    rc, _, err = run(capsys, "validate", str(f))
    assert rc == 2 and f"not one of {len(rows)} row(s) could be priced" in err and "unknown hardware" in err


def test_a_sweep_folder_named_shards_keeps_its_checksums_inside(tmp_path):
    # found by the second review: the merged file's checksum was placed by its folder's name, so a sweep rooted in a
    # folder called "shards" sealed it in the parent
    out = tmp_path / "d" / "shards"
    sweep_to_dir(parse_spec(SMALL), out, n_shards=2)
    merge(out)
    assert (out / "checksums" / "sweep.parquet.sha256").exists() and not (tmp_path / "d" / "checksums").exists()
