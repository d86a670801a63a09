"""The `specroof` / `python -m simulator` command line (simulator/cli/): happy paths and output schemas, and clear
errors (stderr `error: ...`, exit code 2, never a traceback) for bad input."""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from simulator.hardware import list_hardware
from simulator.registry import list_models
from simulator.roofline import BOUNDS
from simulator.workload import FAMILIES

from .helpers import run

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _warm_kernel():
    """Load the numba kernel with a multi-point grid first, so in-process tests do not depend on which one runs
    first (a one-point first call warns; pinned in a fresh process by test_single_batch_prints_no_warning)."""
    from simulator.step import simulate_step
    simulate_step("h100-sxm", "llama-3.1-8b", [1, 2])




def _no_nan(name):
    raise AssertionError(f"JSON output contains {name}")


def loads(out: str):
    """Strict JSON: NaN / Infinity are not JSON and must never be printed."""
    return json.loads(out, parse_constant=_no_nan)


def py(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simulator", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


# ---- hardware -------------------------------------------------------------------------------------------------

def test_hardware_table(capsys):
    rc, out, err = run(capsys, "hardware")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["name", "bf16_TF", "fp8_TF"]
    for name in list_hardware():
        assert any(ln.split()[0] == name for ln in lines[2:]), name


def test_hardware_csv(capsys):
    rc, out, _ = run(capsys, "hardware", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and [r["name"] for r in rows] == list_hardware()
    h100 = next(r for r in rows if r["name"] == "h100-sxm")
    assert float(h100["bf16_TF"]) == pytest.approx(989.4) and h100["fp4_TF"] == ""     # no value: empty in CSV
    assert float(h100["HBM_TB/s"]) == pytest.approx(3.35) and int(h100["domain"]) == 8
    assert h100["peer_GB/s"] == "" and next(r for r in rows if r["name"] == "mi300x")["peer_GB/s"] == "64"   # review


def test_hardware_all_json(capsys):
    rc, out, _ = run(capsys, "hardware", "--format", "json")
    data = loads(out)
    assert rc == 0 and [d["name"] for d in data] == list_hardware()


def test_hardware_one_json(capsys):
    rc, out, err = run(capsys, "hardware", "h100-sxm", "--format", "json")
    assert rc == 0 and err == ""
    d = loads(out)
    assert d["name"] == "h100-sxm"
    assert d["hbm_bandwidth_bytes_per_s"] == pytest.approx(3.35e12)      # SI units
    assert d["peak_bf16_flops_per_s"] == pytest.approx(989.4e12)
    assert d["peak_fp4_flops_per_s"] is None
    assert d["sources"] and all(s.startswith("http") for s in d["sources"])


def test_hardware_one_table_shows_sources_and_assumptions(capsys):
    rc, out, _ = run(capsys, "hardware", "b300")
    assert rc == 0
    assert "source: https://" in out and "assumption: hbm_fraction not measured for b300" in out
    assert "fully connected: one" not in out                # behind a switch (NVLink)
    rc, out, _ = run(capsys, "hardware", "mi355x")          # review: the TP2/TP4 link rate could not be seen
    assert rc == 0 and "one 76.8 GB/s link to each peer (no switch)" in out and "76.8, 230.4, 537.6 GB/s/dir" in out


def test_hardware_by_alias(capsys):
    rc, out, _ = run(capsys, "hardware", "nvidia-h100", "--format", "json")
    assert rc == 0 and loads(out)["name"] == "h100-sxm"


# ---- models -----------------------------------------------------------------------------------------------------

def test_models_table(capsys):
    rc, out, err = run(capsys, "models")
    assert rc == 0 and err == ""
    ids = [ln.split()[0] for ln in out.splitlines()[2:]]
    assert ids == list_models()


def test_models_csv(capsys):
    rc, out, _ = run(capsys, "models", "--format", "csv")
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(out))}
    assert rc == 0 and list(rows) == list_models()
    assert float(rows["deepseek-v3"]["params_B"]) == pytest.approx(671.03, abs=0.01)
    assert rows["mixtral-8x7b"]["experts"] == "8/2" and rows["llama-3.1-8b"]["experts"] == ""


def test_models_one_json(capsys):
    rc, out, _ = run(capsys, "models", "deepseek-v3", "--format", "json")
    assert rc == 0
    d = loads(out)
    assert set(d) == {"shape", "params", "record"}
    assert d["shape"]["name"] == "deepseek-v3" and d["shape"]["kv_lora_rank"] == 512
    assert d["params"]["total"] == pytest.approx(671.03e9, rel=1e-4)
    assert d["record"]["params_total"] == 6.71e11 and d["record"]["params_active"] == 3.7e10
    assert d["record"]["hf_repo"] == "deepseek-ai/DeepSeek-V3"


def test_models_by_path_has_no_record(capsys, tmp_path):
    p = tmp_path / "my.json"
    shutil.copy(REPO / "models" / "JackFram__llama-68m.json", p)
    rc, out, _ = run(capsys, "models", str(p), "--format", "json")
    d = loads(out)
    assert rc == 0 and d["record"] is None and d["shape"]["name"] == "my"


# ---- step -------------------------------------------------------------------------------------------------------

def test_step_defaults(capsys):
    rc, out, err = run(capsys, "step")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("llama-3.1-8b on 1x h100-sxm (tp=1), weights bf16")
    assert "engine sglang" in lines[0]      # the one default engine (Scenario), as curve and advise use
    rows = [ln.split() for ln in lines[3:-1]]
    assert [r[0] for r in rows] == ["1", "2", "4", "8", "16", "32", "64", "128", "256"]
    assert all(r[2] in BOUNDS and r[-1] == "yes" for r in rows)
    assert "infeasible" not in out


POINT_KEYS = {"batch", "step_s", "bound", "breakdown_s", "memory_bytes", "feasible", "message"}


def test_batch_lists_are_ascending_and_each_once(capsys):
    """Review (2026-12-05): `--batch 256,1,8,8` printed its rows in that order, batch 8 twice."""
    rc, out, _ = run(capsys, "curve", "--batch", "256,1,8,8", "--format", "json")
    assert rc == 0 and [p["batch"] for p in json.loads(out)["points"]] == [1, 8, 256]
    rc, out, _ = run(capsys, "step", "--batch", "64,2", "--format", "json")
    assert rc == 0 and [p["batch"] for p in json.loads(out)["points"]] == [2, 64]


def test_vllm_refuses_a_medusa_tree_but_not_speculation_off(capsys):
    """vLLM drafts Medusa as a chain: its default tree is refused; at --k 0 (speculation off) no tree runs, and the
    refusal had fired there too (found by review, 2026-12-05)."""
    base = ["curve", "--method", "medusa", "--engine", "vllm", "--model", "vicuna-7b", "--batch", "1,8"]
    rc, _, err = run(capsys, *base)
    assert rc == 2 and "engine vllm drafts medusa as a chain, one token per head" in err
    rc, out, _ = run(capsys, *base, "--k", "0", "--format", "json")
    assert rc == 0 and [p["speedup"] for p in json.loads(out)["points"]] == [1.0, 1.0]
    rc, out, _ = run(capsys, *base, "--k", "3", "--tree-tokens", "4", "--format", "json")    # the chain it names
    assert rc == 0 and [p["k"] for p in json.loads(out)["points"]] == [3, 3]
    # a tree of k + 1 that drafts 3 wide is priced as a tree (acceptance.priced_shape): refused too (second review)
    rc, _, err = run(capsys, *base, "--k", "3", "--tree-tokens", "4", "--tree-branching", "3")
    assert rc == 2 and "engine vllm drafts medusa as a chain, one token per head" in err
    # advise has no --k (it tries every depth with one tree): the refusal says so rather than naming a flag it lacks
    rc, _, err = run(capsys, "advise", "--method", "medusa", "--engine", "vllm", "--model", "vicuna-7b")
    assert rc == 2 and "advise tries every depth with one tree, so it has no such chain" in err


def test_curve_says_which_overlap_mode_priced_the_speculative_steps(capsys):
    """Out-of-sample check (2026-12-05): a 2025 vLLM build priced in the current default's overlapped mode came out
    10 % fast at batch 1, and nothing said which mode was priced or how to price the other."""
    rc, out, _ = run(capsys, "curve", "--engine", "vllm", "--batch", "1")
    assert rc == 0 and "host work hidden behind the GPU (vllm's default in current builds); --no-spec-overlap" in out
    rc, out, _ = run(capsys, "curve", "--engine", "sglang", "--batch", "1", "--spec-overlap")
    assert rc == 0 and "host work hidden behind the GPU (as asked: --spec-overlap)" in out
    for args, why in ((["--engine", "sglang", "--no-spec-overlap"], "as asked: --no-spec-overlap"),
                      (["--engine", "vllm", "--pp", "2", "--model", "llama-3.1-70b"],      # review: vLLM under PP
                       "vllm runs speculation with pipeline stages without it"),
                      (["--engine", "vllm", "--method", "suffix", "--acceptance-rate", "0.5"],
                       "vllm runs suffix without it"),
                      (["--engine", "hf", "--model", "vicuna-7b", "--method", "medusa"], "hf does not overlap them"),
                      (["--engine", "hf", "--method", "draft", "--acceptance-rate", "0.6", "--pp", "2"],
                       "hf does not overlap them")):       # fourth review: not "with pipeline stages"
        rc, out, _ = run(capsys, "curve", "--batch", "1", *args)
        assert rc == 0 and f"host work exposed after the GPU work ({why})" in out, args
    rc, out, _ = run(capsys, "curve", "--engine", "ideal", "--batch", "1")
    assert rc == 0 and "speculative steps priced with" not in out          # no host work to hide
    rc, out, _ = run(capsys, "serve", "--engine", "vllm", "--concurrency", "1")     # serve says it too
    assert rc == 0 and "host work hidden behind the GPU (vllm's default in current builds)" in out


def test_step_json_schema(capsys):
    rc, out, err = run(capsys, "step", "--hardware", "h100-sxm", "--model", "llama-3.1-70b", "--tp", "8",
                       "--batch", "1,8,32,128", "--context", "1024", "--format", "json")
    assert rc == 0 and err == ""
    d = loads(out)
    assert set(d) == {"scenario", "points"}
    s = d["scenario"]
    assert (s["hardware"], s["model"], s["tp"], s["ep"], s["context"], s["query_tokens"]) == \
        ("h100-sxm", "llama-3.1-70b", 8, 1, 1024, 1)
    assert s["precision"] == "bf16" and s["engine"] == "sglang"
    assert [p["batch"] for p in d["points"]] == [1, 8, 32, 128]
    prev = 0.0
    for p in d["points"]:
        assert set(p) == POINT_KEYS
        assert p["feasible"] is True and p["message"] == ""
        assert isinstance(p["step_s"], float) and 1e-4 < p["step_s"] < 1.0     # seconds, not ms
        assert p["step_s"] >= prev
        prev = p["step_s"]
        assert p["bound"] in BOUNDS
        assert set(p["breakdown_s"]) == set(FAMILIES)
        assert sum(p["breakdown_s"].values()) == pytest.approx(p["step_s"], rel=1e-9)
        assert p["breakdown_s"]["collective"] > 0                                # tp = 8
        assert 70.5e9 * 2 / 8 < p["memory_bytes"] < 80 * 2**30                   # bytes per GPU


def test_step_csv(capsys):
    rc, out, _ = run(capsys, "step", "--model", "mixtral-8x7b", "--tp", "2", "--batch", "1,16", "--format", "csv")
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == ["batch", "step_ms", "bound"] + [f"{f}_ms" for f in FAMILIES] + ["mem_GB", "feasible",
                                                                                                "reason"]
    assert [int(r["batch"]) for r in rows] == [1, 16]
    for r in rows:
        assert r["feasible"] == "yes" and r["reason"] == "" and float(r["step_ms"]) > 0 and float(r["moe_ms"]) > 0
        assert sum(float(r[f"{f}_ms"]) for f in FAMILIES) == pytest.approx(float(r["step_ms"]), abs=0.01)


def test_step_infeasible_point(capsys):
    rc, out, err = run(capsys, "step", "--model", "llama-3.1-405b", "--hardware", "h100-sxm", "--batch", "1,8",
                       "--format", "json")
    assert rc == 0 and err == ""
    assert "NaN" not in out and "Infinity" not in out
    for p in loads(out)["points"]:
        assert p["feasible"] is False
        assert p["step_s"] is None and p["bound"] is None and p["breakdown_s"] is None
        assert "does not fit" in p["message"] and "h100-sxm x 0.836 gives" in p["message"]   # SGLang's rule, no drafter
        assert p["memory_bytes"] > 80 * 2**30


def test_step_infeasible_table_and_csv(capsys):
    rc, out, _ = run(capsys, "step", "--model", "llama-3.1-405b", "--batch", "1")
    assert rc == 0 and "batch 1: infeasible: does not fit" in out
    assert "nan" not in out.lower()
    rc, out, _ = run(capsys, "step", "--model", "llama-3.1-405b", "--batch", "1", "--format", "csv")
    row = next(csv.DictReader(io.StringIO(out)))
    # an infeasible row's numbers are empty, so pandas reads the columns as numbers (review, 2026-12-05)
    assert row["step_ms"] == "" and row["bound"] == "" and row["feasible"] == "no"
    assert row["reason"].startswith("does not fit: needs") and "h100-sxm x 0.836 gives" in row["reason"]


def test_csv_says_why_a_point_is_infeasible(capsys):
    # The CSV of curve, step and serve carries the reason the table prints below it (empty where a point fits), per
    # mode for serve; frontier's CSV is its frontier, with the best point per target on stderr as notes.
    rc, out, _ = run(capsys, "curve", "--batch", "1,2048", "--format", "csv")
    ok, bad = csv.DictReader(io.StringIO(out))
    assert rc == 0 and ok["feasible"] == "yes" and ok["reason"] == ""
    assert bad["feasible"] == "no" and bad["reason"].startswith("does not fit: needs")
    rc, out, _ = run(capsys, "serve", "--concurrency", "1,4096", "--format", "csv")
    rows = {(r["concurrency"], r["mode"]): r for r in csv.DictReader(io.StringIO(out))}
    assert rc == 0 and rows[("1", "on")]["feasible"] == rows[("1", "off")]["feasible"] == "yes"
    assert rows[("4096", "on")]["feasible"] == "yes" and rows[("4096", "on")]["reason"] == ""
    off = rows[("4096", "off")]
    assert off["feasible"] == "yes" and float(off["running"]) < 4096          # the most that fit run; the rest wait
    rc, out, _ = run(capsys, "serve", "--model", "llama-3.1-405b", "--concurrency", "1", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))                 # not one request fits one H100
    assert rc == 0 and [r["feasible"] for r in rows] == ["no", "no"]
    assert all(r["reason"].startswith("does not fit: needs") for r in rows)
    rc, out, err = run(capsys, "frontier", "--gpus", "1", "--targets", "20,100", "--format", "csv")
    assert rc == 0 and list(csv.DictReader(io.StringIO(out)))[0]["mode"] in ("on", "off")
    targets = [x for x in err.splitlines() if x.startswith("note: target ")]
    assert len(targets) == 2 and "ratio_on/off" in targets[0]


def test_step_fits_with_enough_gpus(capsys):
    rc, out, _ = run(capsys, "step", "--model", "llama-3.1-405b", "--hardware", "h200-sxm", "--tp", "8",
                     "--precision", "fp8", "--batch", "1", "--format", "json")
    p = loads(out)["points"][0]
    assert rc == 0 and p["feasible"] is True and math.isfinite(p["step_s"])


def test_step_options_reach_the_scenario(capsys):
    rc, out, _ = run(capsys, "step", "--hardware", "b200", "--model", "deepseek-v3", "--tp", "8", "--ep", "8",
                     "--precision", "fp4", "--kv-precision", "fp8", "--query-tokens", "4", "--context", "0",
                     "--engine", "sglang", "--overlap", "0.5", "--batch", "2", "--format", "json")
    assert rc == 0
    s = loads(out)["scenario"]
    assert (s["hardware"], s["tp"], s["ep"], s["precision"], s["kv_precision"], s["lm_head_precision"]) == \
        ("b200", 8, 8, "fp4", "fp8", "bf16")
    assert (s["query_tokens"], s["context"], s["engine"], s["overlap"]) == (4, 0, "sglang", 0.5)


# ---- errors -----------------------------------------------------------------------------------------------------

def assert_clean_error(rc, out, err, *needles):
    assert rc == 2
    assert "Traceback" not in err and "Traceback" not in out
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), err
    for n in needles:
        assert n in lines[-1], (n, lines[-1])


# library errors (SpecError / ModelConfigError / ScenarioError): exactly one line, starting "error: "
LIB_ERRORS = [
    (["step", "--hardware", "h100-sxn"], ["unknown hardware 'h100-sxn'", "did you mean h100-sxm"]),
    (["step", "--model", "llama-3.1-8"], ["unknown model 'llama-3.1-8'", "did you mean llama-3.1-8b"]),
    (["step", "--model", "mixtrall-8x7b"], ["unknown model", "did you mean mixtral-8x7b"]),
    (["step", "--hardware", "nvidia-gb300"], ["'nvidia-gb300' is ambiguous", "b300", "gb300-nvl72"]),
    (["step", "--hardware", "gb300"], ["ambiguous: it fits b300, gb300-nvl72"]),
    (["step", "--tp", "3"], ["tp = 3 does not divide the 32 attention heads of llama-3.1-8b"]),
    # the target's layout is checked before the drafter is built: the error names the model the user set
    (["curve", "--tp", "64"], ["tp = 64 does not divide the 32 attention heads of llama-3.1-8b"]),
    (["step", "--attention-precision", "int3"], ["attention_precision = 'int3'", "fp8"]),
    (["step", "--precision", "int4"], ["precision = 'int4'"]),
    (["step", "--kv-precision", "fp5"], ["kv_precision = 'fp5'"]),
    (["step", "--model", "mixtral-8x7b", "--tp", "2", "--ep", "4"],
     ["ep = 4 must divide the instance's GPUs, tp x dp = 2"]),
    (["step", "--model", "mixtral-8x7b", "--ep", "2"], ["ep = 2 must divide the instance's GPUs, tp x dp = 1"]),
    (["step", "--tp", "2", "--ep", "2"], ["ep = 2 but llama-3.1-8b has no experts"]),
    (["step", "--hardware", "mi325x", "--model", "llama-3.1-70b", "--tp", "16"],
     ["a 16-GPU collective spans more than one 8-GPU scale-up domain of mi325x"]),
    # stages past the scale-up domain name --pp and the pp that fit (they read "a 2-GPU collective spans ...")
    (["step", "--hardware", "mi325x", "--model", "llama-3.1-70b", "--pp", "9"],
     ["pp = 9 (--pp): tp x dp x pp = 1 x 9 = 9 GPUs span more than one 8-GPU scale-up domain of mi325x",
      "expected pp from 1 to 8 at tp x dp = 1"]),
    (["curve", "--hardware", "mi325x", "--model", "llama-3.1-70b", "--tp", "4", "--pp", "3"],
     ["pp = 3 (--pp)", "expected pp from 1 to 2 at tp x dp = 4"]),
    (["serve", "--hardware", "mi325x", "--model", "llama-3.1-70b", "--tp", "8", "--pp", "2"],
     ["pp = 2 (--pp)", "expected pp = 1 at tp x dp = 8"]),
    (["step", "--engine", "vlm"], ["unknown engine 'vlm'", "did you mean vllm"]),
    # a GPU count with no searched layout is refused up front (it printed "0 points searched" and nothing else)
    (["frontier", "--model", "llama-3.1-70b", "--method", "eagle3", "--gpus", "3"],
     ["gpus = 3 (frontier --gpus): no layout of 3 GPUs per instance for llama-3.1-70b",
      "expected one of 1, 2, 4, 8"]),
    (["frontier", "--model", "deepseek-r1", "--precision", "fp8", "--method", "mtp", "--gpus", "8,512"],
     ["gpus = 512 (frontier --gpus)", "ep = 512 exceeds the 256 experts", "a count up to 256"]),
    (["hardware", "h100-sxn"], ["unknown hardware 'h100-sxn'", "did you mean h100-sxm"]),
    (["hardware", "gb300"], ["ambiguous"]),
    (["models", "deepseek-v4"], ["unknown model 'deepseek-v4'", "did you mean deepseek-v3"]),
]


@pytest.mark.parametrize("args, needles", LIB_ERRORS, ids=[" ".join(a) for a, _ in LIB_ERRORS])
def test_library_errors(capsys, args, needles):
    rc, out, err = run(capsys, *args)
    assert_clean_error(rc, out, err, *needles)
    assert err.startswith("error: ") and err.count("\n") == 1
    assert out == ""


# argument-parser errors: a usage line, then "error: ..."
ARG_ERRORS = [
    (["step", "--batch", "0"], ["argument --batch: batch 0 must be >= 1"]),
    (["step", "--batch", "-3"], ["batch -3 must be >= 1"]),
    (["step", "--batch", "1.5"], ["argument --batch: batch '1.5' is not an integer"]),
    # an empty element of a list is refused, not dropped; a number must be finite (inf passed "must be >= 1")
    (["curve", "--acceptance-rates", "0.9,,0.5"], ["acceptance rates '0.9,,0.5' has an empty element"]),
    (["curve", "--acceptance-length", "inf"], ["acceptance length 'inf' is not a finite number"]),
    (["curve", "--acceptance-rate", "nan"], ["acceptance rate 'nan' is not a finite number"]),
    (["serve", "--rate", "inf"], ["rate 'inf' is not a finite number"]),
    (["frontier", "--tpot-slo-ms", "inf"], ["tpot-slo-ms 'inf' is not a finite number"]),
    (["serve", "--concurrency", "2..1"], ["concurrency range '2..1' is empty"]),
    (["step", "--batch", "x"], ["argument --batch: batch 'x' is not an integer"]),
    (["step", "--batch", "1,,2"], ["batch '' is not an integer"]),
    (["step", "--tp", "0"], ["argument --tp: tp 0 must be >= 1"]),
    (["step", "--tp", "two"], ["argument --tp: tp 'two' is not an integer"]),
    (["step", "--ep", "0"], ["argument --ep: ep 0 must be >= 1"]),
    (["step", "--context", "-1"], ["argument --context: context -1 must be >= 0"]),
    (["step", "--query-tokens", "0"], ["argument --query-tokens: query-tokens 0 must be >= 1"]),
    (["step", "--format", "xml"], ["argument --format: invalid choice: 'xml'"]),
    (["step", "--overlap", "min"],
     ["argument --overlap: overlap 'min': expected measured, max, sum or a number in [0, 1]"]),
    (["step", "--overlap", "1.5"], ["argument --overlap: overlap 1.5 outside [0, 1]"]),
    ([], ["the following arguments are required: COMMAND"]),
    (["frobnicate"], ["invalid choice: 'frobnicate'"]),
    # an argument a command does not take points to that command's help (it pointed to `specroof --help`)
    (["curve", "--bogus", "1"], ["unrecognized arguments: --bogus 1 (see `specroof curve --help`)"]),
    (["step", "--tp", "2", "extra"], ["unrecognized arguments: extra (see `specroof step --help`)"]),
    # review (2026-12-05): accepted and ignored (one pass has no speculative step to overlap)
    (["step", "--spec-overlap"], ["unrecognized arguments: --spec-overlap (see `specroof step --help`)"]),
    (["frontier", "--gpus", "8", "--bogus"], ["unrecognized arguments: --bogus (see `specroof frontier --help`)"]),
    (["--bogus", "curve"], ["unrecognized arguments: --bogus (see `specroof --help`)"]),
    # serve and frontier take each request's context from --isl / --osl: --context changed no number, silently
    (["serve", "--context", "8192"], ["argument --context: 8192: does not apply here", "set --isl and --osl",
                                      "(see `specroof serve --help`)"]),
    (["frontier", "--context", "8192"], ["argument --context: 8192: does not apply here"]),
]


@pytest.mark.parametrize("args, needles", ARG_ERRORS, ids=[" ".join(a) or "<none>" for a, _ in ARG_ERRORS])
def test_argument_errors(capsys, args, needles):
    rc, out, err = run(capsys, *args)
    assert_clean_error(rc, out, err, *needles)
    assert out == ""


def _h100_lines():
    return (REPO / "hardware_specs" / "h100-sxm.toml").read_text().splitlines(keepends=True)


def test_missing_key_in_hardware_toml(capsys, tmp_path):
    p = tmp_path / "h100-sxm.toml"
    p.write_text("".join(ln for ln in _h100_lines() if not ln.startswith("hbm_bandwidth_tb_s")))
    rc, out, err = run(capsys, "step", "--hardware", str(p))
    assert_clean_error(rc, out, err, str(p), "[memory] hbm_bandwidth_tb_s is missing")
    rc, out, err = run(capsys, "hardware", str(p))
    assert_clean_error(rc, out, err, "hbm_bandwidth_tb_s is missing")


def test_figure_without_source_url(capsys, tmp_path):
    p = tmp_path / "nosrc.toml"
    lines = [ln if not ln.startswith("tdp_w") else "tdp_w = { value = 700 }\n" for ln in _h100_lines()]
    p.write_text("".join(lines))
    rc, out, err = run(capsys, "step", "--hardware", str(p))
    assert_clean_error(rc, out, err, str(p), "[power] tdp_w: source = None, expected an http(s) URL")


def test_figure_value_out_of_range(capsys, tmp_path):
    p = tmp_path / "fast.toml"
    p.write_text("".join(ln.replace("value = 3.35", "value = 3350") for ln in _h100_lines()))
    rc, out, err = run(capsys, "step", "--hardware", str(p))
    assert_clean_error(rc, out, err, "hbm_bandwidth_tb_s: value = 3350 outside the plausible range")


def test_malformed_toml(capsys, tmp_path):
    p = tmp_path / "broken.toml"
    p.write_text('schema = 1\nname = "broken"\n[memory\n')
    rc, out, err = run(capsys, "step", "--hardware", str(p))
    assert_clean_error(rc, out, err, str(p), "malformed TOML")


def test_missing_hardware_file(capsys, tmp_path):
    rc, out, err = run(capsys, "step", "--hardware", str(tmp_path / "none.toml"))
    assert_clean_error(rc, out, err, "none.toml: file not found")


def test_malformed_json_config(capsys, tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hidden_size": 4096,,}')
    rc, out, err = run(capsys, "step", "--model", str(p))
    assert_clean_error(rc, out, err, str(p), "malformed JSON")
    rc, out, err = run(capsys, "models", str(p))
    assert_clean_error(rc, out, err, "malformed JSON")


def test_unknown_model_type(capsys, tmp_path):
    cfg = json.loads((REPO / "models" / "JackFram__llama-68m.json").read_text())
    cfg["model_type"] = "gpt2"
    p = tmp_path / "gpt2.json"
    p.write_text(json.dumps(cfg))
    rc, out, err = run(capsys, "step", "--model", str(p))
    assert_clean_error(rc, out, err, str(p), "unsupported model_type 'gpt2'",
                       "supported: bailing_moe, bailing_moe_v2, deepseek_v3")


def test_config_missing_key(capsys, tmp_path):
    cfg = json.loads((REPO / "models" / "JackFram__llama-68m.json").read_text())
    del cfg["intermediate_size"]
    p = tmp_path / "c.json"
    p.write_text(json.dumps(cfg))
    rc, out, err = run(capsys, "step", "--model", str(p))
    assert_clean_error(rc, out, err, str(p), "missing key 'intermediate_size'")


def test_user_config_by_path_runs(capsys, tmp_path):
    p = tmp_path / "mine.json"
    shutil.copy(REPO / "models" / "Qwen__Qwen3-8B.json", p)
    rc, out, _ = run(capsys, "step", "--model", str(p), "--batch", "1,2", "--format", "json")
    assert rc == 0 and loads(out)["scenario"]["model"] == "mine"


# ---- through the real entry point (fresh interpreter) ------------------------------------------------------------

def test_module_entry_point_happy():
    r = py("step", "--batch", "1,8", "--format", "json")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    d = loads(r.stdout)
    assert [p["batch"] for p in d["points"]] == [1, 8] and all(p["feasible"] for p in d["points"])


@pytest.mark.parametrize("args, needle", [
    (["step", "--batch", "0"], "error: argument --batch: batch 0 must be >= 1"),
    (["step", "--batch", "1.5"], "error: argument --batch: batch '1.5' is not an integer"),
    (["step", "--tp", "3"], "error: tp = 3 does not divide the 32 attention heads of llama-3.1-8b"),
    (["step", "--hardware", "h100-sxn"], "error: unknown hardware 'h100-sxn'; did you mean h100-sxm"),
])
def test_module_entry_point_errors(args, needle):
    r = py(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1].startswith(needle)


def test_single_batch_prints_no_warning():
    """`specroof step --batch 1` is the simplest call; its stderr must be empty (numba is handed a broadcast view
    of the scalar q / L in roofline._points, and numpy prints a FutureWarning on the first such call)."""
    r = py("step", "--batch", "1", "--format", "json")
    assert r.returncode == 0
    assert r.stderr == "", r.stderr
    assert loads(r.stdout)["points"][0]["feasible"] is True


def test_outputs_are_finite_numbers(capsys):
    rc, out, _ = run(capsys, "step", "--model", "gpt-oss-120b", "--hardware", "b200", "--precision", "fp4",
                     "--batch", "1,4,64,512", "--query-tokens", "5", "--context", "32000", "--format", "json")
    assert rc == 0
    pts = loads(out)["points"]
    assert pts[0]["feasible"] and not pts[-1]["feasible"]      # 512 x 32k tokens of KV do not fit one B200
    for p in pts:
        vals = [p["memory_bytes"]] + ([p["step_s"], *p["breakdown_s"].values()] if p["feasible"] else [])
        assert np.all(np.isfinite(vals))


@pytest.mark.parametrize("cmd", ["hardware", "models", "step", "curve", "advise", "serve", "frontier", "validate",
                                 "calibrate", "sweep"])
def test_help_states_each_default_once(capsys, cmd):
    # Found bug: the Scenario flags said "(default: h100-sxm) (default: h100-sxm)" and --draft said it three times
    # (the field text, the flag builder and argparse's formatter each appended one).
    rc, out, _ = run(capsys, cmd, "--help")
    assert rc == 0
    entries: list[str] = []
    for line in out.splitlines():   # an entry starts at an option ("  -x", "  --x") or a group title (column 0)
        if line.startswith("  -") or not line.startswith(" ") or not entries:
            entries.append(line)
        else:
            entries[-1] += " " + line.strip()
    twice = [e for e in entries if e.count("(default") > 1]
    assert not twice, twice[:3]
    # a list default reads as it is typed (found by a CLI audit: frontier showed "(default: (20.0, 50.0, 100.0))")
    assert not [e for e in entries if "(default: (" in e or "(default: [" in e]
    # ... and once where there is a default to state: a value, not None or a bare switch (found bug: 0.0 == False
    # hid --prefix-hit's default)
    from simulator.cli import build_parser
    sub = next(a for a in build_parser()._actions if a.choices and cmd in a.choices).choices[cmd]
    for a in sub._actions:
        if a.option_strings and a.help and a.default is not None and a.default is not False and \
                not isinstance(a, argparse._HelpAction) and a.default is not argparse.SUPPRESS and \
                a.default != []:      # an empty repeatable flag states no value, like None
            entry = next(e for e in entries if e.lstrip().startswith(a.option_strings[0]))
            assert "(default" in entry, entry


def _pts(*fs, k=3, speedup=1.5):
    return [{"batch": b, "feasible": f, "k": k if f else None, "speedup": speedup if f else None} for b, f in fs]


@pytest.mark.parametrize("cb, pts, needle", [
    (None, _pts((1, False), (2, False)), "no evaluated batch is feasible"),
    (None, _pts((1, True), (2, False)), "does not pay at any feasible evaluated batch (the infeasible"),
    (4, _pts((1, True), (4, True)), "pays at every evaluated batch up to 4, the last one evaluated"),
    (2, _pts((1, True), (2, True), (4, True)), "pays up to batch 2 and not at the next evaluated batch"),
    # audit bug: "pays up to 128 and not at the next evaluated batch" when that batch (256) did not fit
    (2, _pts((1, True), (2, True), (4, False)), "pays at every feasible evaluated batch, up to 2; the larger"),
    (2, _pts((1, True), (2, True), k=0), "k = 0 is plain decoding (speculation off)"),
    (2, _pts((2, True), (4, False), (8, True)), "batch 4 is infeasible with speculation (below) and it does not "
                                                "pay at the next feasible one, 8"),
    # review (2026-12-05): "pays at every evaluated batch up to 64" beside 0.95x at batches 2-8
    (4, [*_pts((1, True), (2, True), speedup=0.95), *_pts((4, True))],
     "pays at batch 4, the last one evaluated (larger batches were not evaluated); below it, speculation loses at "
     "batch 1, 2 (speedup < 1)"),
])
def test_crossover_text_never_concludes_from_infeasible_points(cb, pts, needle):
    from simulator.cli.curve import crossover_text
    assert needle in crossover_text({"crossover_batch": cb, "points": pts})


def test_headers_name_the_layout_and_formats_priced(capsys):
    """Audit finding: the README's GB200 command printed '32x gb200-nvl72 (tp=1) ... weights bf16', leaving out
    the DP-attention and expert-parallel layout and the FP4 experts it priced."""
    rc, out, _ = run(capsys, "curve", "--hardware", "gb200-nvl72", "--model", "deepseek-r1", "--precision", "bf16",
                     "--expert-precision", "fp4", "--tp", "1", "--dp", "32", "--ep", "32", "--method", "mtp",
                     "--engine", "trtllm", "--batch", "32")
    head = out.splitlines()[0]
    assert rc == 0 and "(tp=1, dp=32, ep=32)" in head and "weights bf16, experts fp4" in head
    rc, out, _ = run(capsys, "serve", "--concurrency", "1")
    assert rc == 0 and out.startswith("llama-3.1-8b on 1x h100-sxm (tp=1; weights bf16)")


def test_serve_prints_the_moe_under_load_hazard_as_curve_does(capsys):
    # Found by a CLI audit: curve and advise warned that MoE speedups at 16+ sequences are over-predicted, while serve
    # (whose validation rows are the ones behind the warning) printed the same figures without it.
    hz = "moe-speculation-under-load-overpredicted"
    base = ("serve", "--hardware", "b200", "--model", "deepseek-r1", "--tp", "8", "--precision", "fp8",
            "--method", "mtp", "--k", "2")
    rc, out, _ = run(capsys, *base, "--concurrency", "4,64")
    assert rc == 0 and hz in out
    rc, out, _ = run(capsys, *base, "--concurrency", "4,64", "--format", "json")
    assert rc == 0 and hz in [h["id"] for h in json.loads(out)["hazards"]]
    rc, out, _ = run(capsys, *base, "--concurrency", "4")          # below 16 sequences: not warned
    assert rc == 0 and hz not in out
    rc, out, _ = run(capsys, "serve", "--concurrency", "4", "--format", "json")   # a dense target: none
    assert rc == 0 and hz not in out


def test_curve_warns_of_load_only_where_it_priced_the_load(capsys):
    """Review: DeepSeek-V3 on 8 H100s fits at no batch (85 GB of weights per GPU), yet curve printed the warning that
    MoE speedups at 16 to 96 requests measure below the prediction. The load hazards read the feasible points only."""
    hz = "moe-speculation-under-load-overpredicted"
    args = ("curve", "--model", "deepseek-v3", "--tp", "8", "--method", "mtp", "--precision", "fp8", "--batch", "1,64")
    rc, out, _ = run(capsys, *args, "--hardware", "h100-sxm")
    assert rc == 0 and "infeasible" in out and hz not in out
    rc, out, _ = run(capsys, *args, "--hardware", "h200-sxm")
    assert rc == 0 and hz in out


def test_frontier_names_why_a_layout_has_no_point(capsys):
    """A layout searched but with no feasible point says why, per layout (it read "no concurrency fits in memory" with
    no figures, "no feasible point with speculation" when neither mode had one, and "0 points searched")."""
    rc, out, err = run(capsys, "frontier", "--model", "deepseek-r1", "--hardware", "b200", "--precision", "fp8",
                       "--method", "mtp", "--gpus", "3", "--targets", "50")
    assert rc == 0, err
    assert "0 feasible points" in out and "points searched" not in out
    assert "infeasible: no feasible point with or without speculation" in out
    assert "skipped tp1xdp3 ep3: no concurrency fits in memory (at 3: does not fit: needs 239.2 GB per GPU" in out


def test_frontiers_header_names_the_weight_formats_as_curve_and_serve_do(capsys):
    """Review (2026-12-06): frontier's header read 'weights bf16 (experts bf16)' for a dense model; it names the
    experts' format where it differs from the weights', as curve's and serve's headers do."""
    rc, out, _ = run(capsys, "frontier", "--model", "llama-3.1-8b", "--gpus", "1", "--targets", "50")
    assert rc == 0 and "engine sglang, weights bf16; isl 1024" in out.splitlines()[0]
    rc, out, _ = run(capsys, "frontier", "--model", "gpt-oss-120b", "--expert-precision", "mxfp4", "--gpus", "1",
                     "--targets", "50")
    assert rc == 0 and "weights bf16, experts mxfp4; isl" in out.splitlines()[0]


def _four_sglang_rows(tmp_path):
    with (REPO / "validation" / "rows.csv").open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["engine"] == "sglang" and r["hardware"] == "h100-sxm"][:4]
    p = tmp_path / "four.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return p


def test_calibrate_says_how_the_fit_ended_in_its_own_words(tmp_path, capsys, monkeypatch):
    """calibrate printed scipy's sentence as its verdict ("(`gtol` termination condition is satisfied.)"), and a fit
    stopped at the evaluation limit ("(The maximum number of function evaluations is exceeded.)") was written as if
    it had converged; now it names what did not converge and what to do, and writes only with --force."""
    src, out = _four_sglang_rows(tmp_path), tmp_path / "p.toml"
    args = ["calibrate", str(src), "--engine", "sglang", "--out", str(out), "--params", "host_step_s"]
    rc, so, err = run(capsys, *args)
    assert rc == 0 and "(converged after " in so and "termination condition" not in so, (so, err)
    import scipy.optimize
    real = scipy.optimize.least_squares
    monkeypatch.setattr(scipy.optimize, "least_squares", lambda *a, **k: real(*a, **dict(k, max_nfev=3)))
    out.unlink()
    rc, so, err = run(capsys, *args)
    assert rc == 2 and so == "" and not out.exists() and len(err.strip().splitlines()) == 1
    assert err.startswith("error: calibration did not converge: the least-squares fit of sglang.host_step_s to the 4 "
                          "rows stopped at its limit of 3 evaluations"), err
    assert "fit fewer --params" in err and "--force" in err
    rc, so, err = run(capsys, *args, "--force", "--format", "json")
    got = json.loads(so)
    assert rc == 0 and out.exists() and not got["success"] and got["message"].startswith("did not converge")
    assert got["solver_message"] == "The maximum number of function evaluations is exceeded."


def test_curve_and_serve_say_which_positions_per_position_rates_extrapolate(capsys):
    # Three rates with k auto: k 4 was priced with position 4 at the last rate repeated and nothing said so (rates
    # 0.8, 0.7, 0.6 then; with SGLang's refit draft-pass cost auto stops at k 3 there, so higher rates reach past 3;
    # with the measured draft-pass cost of 2026-12-05 they reach the deepest depth tried, 8; since the refit of
    # 2026-12-08 without the Qwen3-30B-A3B user reports, 8 at batch 1 and 7 at batch 8, and the note names both).
    rc, out, err = run(capsys, "curve", "--acceptance-rates", "0.9,0.85,0.8", "--k", "auto", "--batch", "1,8")
    note = "acceptance extrapolated: rates are given for positions 1-3 only; positions 4-8 repeat the last one, 0.8, " \
           "at k 7, 8 (every batch reported)"
    assert rc == 0 and note in out.splitlines()
    rates = ["--acceptance-rates", "0.8,0.7,0.6"]
    rc, out, err = run(capsys, "curve", *rates, "--k", "6", "--batch", "1,8", "--format", "csv")
    assert rc == 0 and "positions 4-6 repeat the last one, 0.6, at k 6" in err and "extrapolated" not in out
    rc, out, _ = run(capsys, "curve", *rates, "--k", "6", "--batch", "1,8", "--format", "json")
    assert rc == 0 and any("positions 4-6 repeat" in n for n in loads(out)["notes"])
    rc, out, _ = run(capsys, "curve", *rates, "--k", "3", "--batch", "1,8")     # within the rates: nothing to say
    assert rc == 0 and "extrapolated" not in out
    rc, out, _ = run(capsys, "serve", *rates, "--k", "5", "--concurrency", "1,8")
    assert rc == 0 and "positions 4-5 repeat the last one, 0.6, at k 5 (every concurrency reported)" in out


def test_acceptance_length_extrapolates_by_the_methods_decay_whatever_its_case(capsys):
    # Review: --method MTP is MTP (the Scenario reads names case-insensitively), but the length was carried to other
    # k i.i.d. (d = 1, not MTP's 0.72): k 6-7 and speedups 17-23 % above --method mtp's for the same measurement.
    args = ["curve", "--hardware", "h200-sxm", "--model", "deepseek-v3", "--tp", "8", "--precision", "fp8",
            "--acceptance-length", "2.4", "--acceptance-k", "2", "--batch", "1,64", "--format", "json"]
    got = []
    for m in ("mtp", "MTP"):
        rc, out, _ = run(capsys, *args, "--method", m)
        assert rc == 0
        d = loads(out)
        got.append(([(p["k"], p["speedup"]) for p in d["points"]], d["scenario"]["acceptance_model"]))
    assert got[0] == got[1] and "decay" in got[0][1]
    # and on Medusa's default tree: --method MEDUSA read the length as a chain's (2.96 tokens per step, not 2.3)
    args = ["curve", "--model", "vicuna-7b", "--precision", "fp16", "--engine", "hf", "--acceptance-length", "2.3",
            "--acceptance-k", "5", "--batch", "1,8", "--format", "json"]
    got = []
    for m in ("medusa", "MEDUSA"):
        rc, out, _ = run(capsys, *args, "--method", m)
        assert rc == 0
        got.append([(p["tree_tokens"], p["tokens_per_step"], p["speedup"]) for p in loads(out)["points"]])
    assert got[0] == got[1] and got[0][0][:2] == (64, pytest.approx(2.3))


def test_curve_refuses_a_context_past_the_models_positions_and_prints_no_capacity(capsys):
    # It printed an all-infeasible table and "largest batch that fits in memory: 2 without speculation" for a
    # context llama-3.1-8b (131072 positions) cannot hold.
    for fmt in ("table", "json", "csv"):
        rc, out, err = run(capsys, "curve", "--model", "llama-3.1-8b", "--context", "200000", "--batch", "1",
                           "--format", fmt)
        assert rc == 2 and out == "" and "largest batch" not in err and len(err.strip().splitlines()) == 1
        assert "--context" in err and "200000" in err and "max_position_embeddings is 131072" in err
    rc, out, _ = run(capsys, "curve", "--model", "llama-3.1-8b", "--context", "131070", "--batch", "1,8")
    assert rc == 0 and "exceeds llama-3.1-8b's max_position_embeddings 131072" in out     # the edge keeps its rows


@pytest.mark.parametrize("args, named", [
    (("step", "--context", "200000"), "context (--context) = 200000"),
    (("serve", "--isl", "200000", "--osl", "10"), "the longest prompt (--isl, or --lengths) = 200000"),
])
def test_step_and_serve_refuse_a_context_past_the_models_positions_as_curve_does(capsys, args, named):
    # Found by review: step and serve reported rows 'infeasible' where curve refused the same scenario
    rc, out, err = run(capsys, *args, "--model", "llama-3.1-8b")
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert named in err and "leaves no position for a new token" in err and "131071" in err
    # with room for a token but not for all: rows, infeasible with the reason
    edge = ("step", "--context", "131070", "--query-tokens", "4") if args[0] == "step" else \
        ("serve", "--isl", "131000", "--osl", "500")
    rc, out, _ = run(capsys, *edge, "--model", "llama-3.1-8b")
    assert rc == 0 and "exceeds llama-3.1-8b's max_position_embeddings 131072" in out


@pytest.mark.parametrize("kind, copied, name", [("hardware", "hardware_specs/h100-sxm.toml", "h100-sxm"),
                                                ("engine", "engine_profiles/sglang.toml", "sglang")])
def test_a_copy_of_a_bundled_file_is_reported_as_an_uncalibrated_file(tmp_path, capsys, kind, copied, name):
    # A copy read by path keeps the bundled name but not the shipped calibration (calibration/fit.toml: the kernel
    # floor of a device, the fitted host costs of an engine), so the same name printed other numbers with nothing to
    # tell the two apart. The file is named wherever the device or engine is (and still used as written).
    from simulator.engine import load_engine
    from simulator.hardware import load_hardware
    p = tmp_path / "x.toml"
    shutil.copy(REPO / copied, p)
    load, field = (load_hardware, "kernel_floor_s") if kind == "hardware" else (load_engine, "spec_bookkeeping_s")
    assert load(str(p)).path == str(p) and load(name).path == ""
    assert getattr(load(str(p)), field) != getattr(load(name), field)                         # why it matters
    note = f"{name} [file {p}, used as written: the shipped calibration applies to bundled names only]"
    for cmd in (["curve", "--batch", "1"], ["step", "--batch", "1"], ["advise", "--batch", "1..2"],
                ["serve", "--concurrency", "1"]):
        rc, out, _ = run(capsys, *cmd, f"--{kind}", str(p))
        head = out.splitlines()[0 if cmd[0] != "advise" else 1]
        assert rc == 0 and (f"x {note}" if kind == "hardware" else f"engine {note}") in head, cmd
        rc, out, err = run(capsys, *cmd, f"--{kind}", str(p), "--format", "csv")
        assert rc == 0 and f"note: {kind} {note}" in err.splitlines(), cmd
        rc, out, err = run(capsys, *cmd, "--format", "csv")
        assert rc == 0 and f"note: {kind} " not in err, cmd          # no file note for a bundled name
    for args, want in (([f"--{kind}", str(p)], str(p)), ([], None)):
        rc, out, _ = run(capsys, "curve", "--batch", "1", *args, "--format", "json")
        assert json.loads(out)["scenario"][f"{kind}_file"] == want
    rc, out, _ = run(capsys, "curve", "--batch", "1")
    assert rc == 0 and "[file" not in out and "used as written" not in out


def test_curve_says_a_tree_size_under_k_auto_is_a_ceiling(capsys):
    """Review: --k auto --tree-tokens 100000 was accepted silently and priced a 16-token tree; the budget is a
    ceiling (chains and power-of-two trees up to it), and the header now says so. Medusa's default tree is not one."""
    rc, out, _ = run(capsys, "curve", "--k", "auto", "--tree-tokens", "100000", "--batch", "1")
    assert rc == 0 and "k auto (chains and trees of up to 100000 tokens tried)" in out.splitlines()[0]
    rc, out, _ = run(capsys, "curve", "--method", "medusa", "--engine", "hf", "--model", "vicuna-7b", "--batch", "1")
    assert rc == 0 and "tokens tried" not in out.splitlines()[0]
    rc, out, _ = run(capsys, "curve", "--k", "3", "--tree-tokens", "16", "--batch", "1")
    assert rc == 0 and "tokens tried" not in out.splitlines()[0]


def test_json_output_is_strict_even_for_an_undetermined_parameter(tmp_path, capsys):
    """Found by review (2026-12-05): calibrate --format json wrote "stderr": Infinity for a parameter at a bound, which
    strict JSON parsers refuse; every JSON the CLI prints now writes such a number null, the status saying why."""
    rows = Path(__file__).resolve().parents[1] / "examples" / "vllm_h100_rows.csv"
    # Fitting two of its parameters leaves host_per_seq_s at its bound with an infinite 1-sigma (the four defaults
    # gave it a finite one after the refit of 2026-12-06, so they no longer exercise the case).
    rc, so, _ = run(capsys, "calibrate", str(rows), "--engine", "vllm", "--out", str(tmp_path / "o.toml"), "--force",
                    "--format", "json", "--params", "host_step_s,host_per_seq_s")

    def refuse(name):
        raise AssertionError(f"JSON contains {name}")

    got = json.loads(so, parse_constant=refuse)
    bound = [p for p in got["params"] if p["status"] != "fitted"]
    assert rc == 0 and bound and all(p["stderr"] is None for p in bound if p["name"] == "host_per_seq_s")
    from simulator.cli.fmt import dumps
    assert json.loads(dumps({"stderr": math.inf, "p": [-math.inf, math.nan, 1.0]}), parse_constant=refuse) == \
        {"stderr": None, "p": [None, None, 1.0]}


def test_k0_says_speculation_is_off_and_draws_no_speculation_warning(capsys):
    """Review (2026-12-06): `serve --k 0` headed its table with the method and its acceptance and printed the MoE
    speculation-under-load warning, with speculation off at every point; `curve --k 0` warned the same."""
    common = ["--hardware", "b200", "--model", "deepseek-r1", "--tp", "8", "--precision", "fp8", "--k", "0"]
    rc, out, _ = run(capsys, "serve", *common, "--concurrency", "16")
    assert rc == 0 and "speculation off (k = 0)" in out.splitlines()[0] and "acceptance" not in out.splitlines()[0]
    assert "warnings:" not in out
    rc, out, _ = run(capsys, "curve", *common, "--batch", "16,32")
    assert rc == 0 and "warnings:" not in out
    rc, out, _ = run(capsys, "serve", *common[:-2], "--concurrency", "16")     # speculating, the warning stays
    assert rc == 0 and "moe-speculation-under-load-overpredicted" in out


def test_k0_frontier_and_notes_say_speculation_is_off(capsys):
    """Review (2026-12-06, fourth session): `frontier --k 0` headed its tables '<method> vs off' and printed the MoE
    speculation-under-load warning; `curve --k 0` and `serve --k 0` printed how the speculative steps' host work was
    priced, with no speculative step priced."""
    common = ["--hardware", "h200-sxm", "--model", "deepseek-r1", "--precision", "fp8", "--engine", "trtllm",
              "--k", "0"]
    rc, out, _ = run(capsys, "frontier", *common, "--gpus", "8", "--isl", "1024", "--osl", "1024")
    assert rc == 0 and "speculation off (k = 0)" in out.splitlines()[0] and " vs off" not in out.splitlines()[0]
    assert "warnings:" not in out
    for cmd, extra in (("curve", ["--batch", "1,16"]), ("serve", ["--concurrency", "4"])):
        rc, out, _ = run(capsys, cmd, "--model", "llama-3.1-8b", "--k", "0", *extra)
        assert rc == 0 and "host work" not in out
        rc, out, _ = run(capsys, cmd, "--model", "llama-3.1-8b", *extra)            # speculating: the note stays
        assert rc == 0 and "speculative steps priced with their host work" in out
