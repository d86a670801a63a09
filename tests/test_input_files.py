"""Malformed user files and library calls fail with one error naming file, row and field (a third new-user audit):
measurement CSVs for validate and calibrate, a hardware TOML, an HF config.json, Acceptance and Scenario fields."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from simulator import Acceptance, Scenario, predict, simulate_step, speedup_curve, static_batch
from simulator.calibration import calibrate
from simulator.cli import main
from simulator.errors import ModelConfigError, ScenarioError, SpecError
from simulator.frontier import frontier
from simulator.hardware import load_hardware
from simulator.model import load_model
from simulator.validation import load_rows

ROOT = Path(__file__).resolve().parent.parent
ROWS = ROOT / "examples" / "vllm_h100_rows.csv"


def _rows_file(tmp_path: Path, edit) -> Path:
    lines = ROWS.read_text(encoding="utf-8").splitlines()
    p = tmp_path / "rows.csv"
    p.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
    return p


def _set(lines: list[str], row: int, col: str, value: str) -> list[str]:
    import csv
    import io
    rd = list(csv.reader(io.StringIO("\n".join(lines))))
    rd[row][rd[0].index(col)] = value
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rd)
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("edit, needle", [
    (lambda ls: _set(ls, 3, "tau", "x"), "line 4 (S040): tau = 'x'; expected a number >= 1"),
    (lambda ls: _set(ls, 3, "batch", "x"), "line 4 (S040): batch = 'x'; expected a whole number >= 1"),
    (lambda ls: _set(ls, 3, "tp", "0"), "line 4 (S040): tp = '0'; expected a whole number >= 1"),
    (lambda ls: _set(ls, 3, "k", "-1"), "line 4 (S040): k = '-1'; expected a whole number >= 0"),
    # review: a speculative row at k = 0 was priced as plain decoding and fitted so
    (lambda ls: _set(ls, 3, "k", "0"), "line 4 (S040): k = 0 with method = 'eagle3'"),
    (lambda ls: ls[:4] + [ls[3]] + ls[4:], "line 5: row_id 'S040' repeats line 4"),
    (lambda ls: _set(ls, 3, "row_id", ""), "line 4: row_id is empty"),
    (lambda ls: ls[:1], "no data rows (a header alone)"),
    (lambda ls: ls[:3] + [ls[3] + ",extra"] + ls[4:], "line 4: 38 fields; the header has 37"),
    (lambda ls: ls[:3] + ["S040,x,y,z,w"] + ls[4:], "line 4: 5 fields; the header has 37"),
])
def test_malformed_rows_are_one_error_naming_file_line_and_field(tmp_path, capsys, edit, needle):
    p = _rows_file(tmp_path, edit)
    with pytest.raises(SpecError) as e:
        load_rows(p)
    assert str(e.value).startswith(f"{p}: ") and needle in str(e.value)
    for cmd in (["validate", str(p)], ["calibrate", str(p), "--engine", "vllm", "--out", str(tmp_path / "o.toml")]):
        assert main(cmd) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("text, needle", [
    ("", "empty (no header line); missing column(s)"),
    ("row_id;source;hardware\n1;2;3\n", "one column 'row_id;source;hardware': the file is not comma-separated"),
    ("row_id\tsource\n1\t2\n", "the file is not comma-separated"),
])
def test_an_empty_or_not_comma_separated_rows_file_says_so(tmp_path, capsys, text, needle):
    # review: both were told only which columns were missing
    p = tmp_path / "rows.csv"
    p.write_text(text, encoding="utf-8")
    assert main(["validate", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_a_utf8_bom_is_read_not_refused(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf" + ROWS.read_bytes())
    assert [r["row_id"] for r in load_rows(p)] == [r["row_id"] for r in load_rows(ROWS)]
    cfg = tmp_path / "config.json"
    cfg.write_bytes(b"\xef\xbb\xbf" + (ROOT / "models" / "meta-llama__Llama-3.1-8B-Instruct.json").read_bytes())
    assert load_model(str(cfg)).n_layers == 32


def test_calibrate_refuses_rows_it_cannot_price(tmp_path, capsys):
    """Audit: an unknown model in one row was dropped without a word and the profile written (exit 0). It is now
    refused before any row is priced, with its line and field (as validate skips it), and so is a draft that does not
    load; a row that loads but cannot be priced (a head trained for another model, n_gpus) is refused after pricing."""
    p = _rows_file(tmp_path, lambda ls: _set(ls, 3, "model", "llama-9b"))
    with pytest.raises(ScenarioError, match=r": line 4: row S040: model = 'llama-9b': unknown model 'llama-9b'; .*"
                                            r"1 of 18 rows name a model that does not load \(S040\)"):
        calibrate(p, "vllm", ("spec_bookkeeping_s",))
    assert main(["calibrate", str(p), "--engine", "vllm", "--force", "--out", str(tmp_path / "o.toml")]) == 2
    assert not (tmp_path / "o.toml").exists() and "does not load" in capsys.readouterr().err
    p = _rows_file(tmp_path, lambda ls: _set(ls, 3, "draft", "eagle3-llama-9b"))      # a draft, likewise
    with pytest.raises(ScenarioError, match=r": line 4: row S040: draft = 'eagle3-llama-9b': unknown model .*"
                                            r"1 of 18 rows name a draft model or head that does not load \(S040\)"):
        calibrate(p, "vllm", ("spec_bookkeeping_s",))
    p = _rows_file(tmp_path, lambda ls: _set(ls, 3, "draft", "eagle3-kimi-k2"))   # loads, but for another target
    with pytest.raises(ScenarioError, match=r"1 of 18 rows cannot be priced, e\.g\. row S040: eagle3 head "
                                            r"eagle3-kimi-k2 has hidden size 7168, but target llama-3\.1-8b"):
        calibrate(p, "vllm", ("spec_bookkeeping_s",))
    p = _rows_file(tmp_path, lambda ls: _set(ls, 3, "n_gpus", "3"))
    with pytest.raises(ScenarioError, match=r"1 of 18 rows cannot be priced, e\.g\. row S040: row S040: n_gpus = 3"):
        calibrate(p, "vllm", ("spec_bookkeeping_s",))
    assert main(["calibrate", str(p), "--engine", "vllm", "--force", "--out", str(tmp_path / "o.toml")]) == 2
    assert not (tmp_path / "o.toml").exists() and "cannot be priced" in capsys.readouterr().err


@pytest.mark.parametrize("spec, old, new, needle", [
    ("hardware_specs/h100-sxm.toml", "gemm_tile_m = { value = 64,", "gemm_tile_m = { value = nan,",
     r"\[kernels\] gemm_tile_m: value = nan, expected an integer"),
    # found by review (2026-12-05): [spec] max_running_requests = 4.5 served "running 4.5" requests
    ("engine_profiles/sglang.toml", "max_running_requests = { value = 48,", "max_running_requests = { value = 4.5,",
     r"\[spec\] max_running_requests: value = 4.5, expected an integer"),
])
def test_a_non_integer_in_an_integer_field_is_named(tmp_path, spec, old, new, needle):
    from simulator.engine import load_engine
    src = (ROOT / spec).read_text()
    assert old in src
    p = tmp_path / "spec.toml"
    p.write_text(src.replace(old, new))
    with pytest.raises(SpecError, match=needle):
        (load_hardware if spec.startswith("hardware") else load_engine)(str(p))


@pytest.mark.parametrize("key, value, needle", [
    ("architectures", True, "architectures = True; expected a list of strings"),
    ("architectures", [1], "architectures = [1]; expected a list of strings"),
    ("model_type", ["llama"], "unsupported model_type ['llama']"),
])
def test_config_json_with_a_wrongly_typed_field_is_named(tmp_path, key, value, needle):
    cfg = json.loads((ROOT / "models" / "meta-llama__Llama-3.1-8B-Instruct.json").read_text())
    cfg[key] = value
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(ModelConfigError) as e:
        load_model(str(p))
    assert str(e.value).startswith(str(p)) and needle in str(e.value)


LLAMA_8B = "meta-llama__Llama-3.1-8B-Instruct.json"


@pytest.mark.parametrize("file, key, value, needle", [
    (LLAMA_8B, "hidden_size", 10**12, "hidden_size = 1000000000000; expected 1..1048576"),
    (LLAMA_8B, "num_hidden_layers", 5000, "num_hidden_layers = 5000; expected 1..1024"),
    (LLAMA_8B, "vocab_size", 2**30, "vocab_size = 1073741824; expected 1..16777216"),
    (LLAMA_8B, "max_position_embeddings", 2**70, "max_position_embeddings = 1180591"),
    (LLAMA_8B, "num_attention_heads", 1,
     "hidden_size / num_attention_heads = 4096; expected a head size of at most 8192"),
    ("deepseek-ai__DeepSeek-V3.json", "n_routed_experts", 10**6, "n_routed_experts = 1000000; expected 1..65536"),
    ("deepseek-ai__DeepSeek-V3.json", "kv_lora_rank", 10**9, "kv_lora_rank = 1000000000; expected 1..65536"),
    ("deepseek-ai__DeepSeek-V3.json", "qk_rope_head_dim", 0, "qk_rope_head_dim = 0, expected an integer >= 1"),
    ("deepseek-ai__DeepSeek-V3.json", "num_experts_per_tok", 300, "num_experts_per_tok = 300 must be in [1, 256]"),
])
def test_config_json_sizes_beyond_any_model_name_their_key(tmp_path, capsys, file, key, value, needle):
    """Audit: such sizes passed the reader and were refused by the shape's internal names (d_model, d_head)."""
    cfg = json.loads((ROOT / "models" / file).read_text())
    cfg[key] = value
    if key == "num_attention_heads":
        cfg.update(num_key_value_heads=1, hidden_size=4096 * 4)
        cfg.pop("head_dim", None)
        needle = needle.replace("4096", "16384")
    p = tmp_path / "config.json"
    p.write_text(json.dumps(cfg))
    with pytest.raises(ModelConfigError) as e:
        load_model(str(p))
    assert str(e.value).startswith(str(p)) and needle in str(e.value)
    assert main(["step", "--model", str(p), "--batch", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err


@pytest.mark.parametrize("make, needle", [
    (lambda: Acceptance.from_rate(0.7).with_alpha(math.nan), "acceptance rate = nan"),
    (lambda: Acceptance("iid", alpha=1.0), "acceptance rate = 1.0; expected a number in [0, 1)"),
    (lambda: Acceptance("foo"), "acceptance kind = 'foo'"),
    (lambda: Acceptance("decay", alpha=0.5, decay=math.inf), "acceptance decay = inf"),
    (lambda: speedup_curve(batchh=4), "unknown field 'batchh'; did you mean batch?"),
    (lambda: Scenario().replace(contxt=5), "unknown field 'contxt'; did you mean context?"),
    (lambda: speedup_curve("h100-sxm", hardware="h200-sxm"), "hardware given twice"),
    (lambda: speedup_curve("a", "b", "c", "d"), "at most 3 positional arguments"),
    (lambda: predict({"tp": 1}), "predict: scenario = {'tp': 1}; expected a Scenario"),
    (lambda: simulate_step(scenario="x"), "simulate_step: scenario = 'x'; expected a Scenario"),
    (lambda: static_batch(batch="8"), "batch = '8'; expected a positive integer"),
    (lambda: static_batch(batch=0), "batch = 0; expected a positive integer"),
    (lambda: frontier(scenario={}), "frontier: scenario = {}; expected a Scenario"),
    (lambda: frontier(gpus=8), "gpus = 8; expected a list of GPU counts >= 1"),
    (lambda: frontier(targets=["abc"]), "targets = ['abc']; expected a list of tokens/s per user > 0"),
    (lambda: frontier(max_tp=0, gpus=[1]), "max_tp = 0; expected an integer >= 1"),
    # fourth audit: with pp 2 each point was divided by 16 GPUs and reported as 8
    (lambda: frontier(pp=2, gpus=[8]), "pp = 2: the frontier searches tp x dp layouts"),
    (lambda: calibrate(ROWS, "vllm", params="host_step_s"), "params = 'host_step_s'; expected a list of distinct"),
    (lambda: calibrate(ROWS, "vllm", params=("host_step_s", "host_step_s")),     # review: the message named rows
     "params = ('host_step_s', 'host_step_s'); expected a list of distinct parameter names such as ('host_step_s',) "
     "(['host_step_s'] given more than once)"),
    (lambda: calibrate(None, "vllm"), "rows = NoneType; expected a rows CSV path or a list of rows"),
])
def test_library_calls_fail_as_scenario_errors(make, needle):
    """Audit: these raised TypeError, AttributeError or KeyError, or let NaN through to a 'feasible' point."""
    with pytest.raises(ScenarioError) as e:
        make()
    assert needle in str(e.value)


@pytest.mark.parametrize("make, needle", [
    (lambda: Acceptance.from_rates(None), "per-position acceptance rates = None; expected a list"),
    (lambda: Acceptance.from_rates(0.7), "per-position acceptance rates = 0.7; expected a list"),
    (lambda: Acceptance.from_tree_length(2.0, "abc"), "tree widths = 'abc'; expected a list"),
    (lambda: Acceptance.from_tree_length(1.5, [0, 2]), "tree widths = [0, 2]; expected a list"),
    (lambda: Acceptance.from_measurement(2.0, 3, tree_tokens="8"), "tree_tokens = '8'; expected an integer >= 1"),
])
def test_acceptance_constructors_name_the_bad_argument(make, needle):
    """Third audit: TypeError, ValueError or a silently accepted zero width."""
    with pytest.raises(ScenarioError) as e:
        make()
    assert needle in str(e.value)


def test_acceptance_length_takes_numpy_numbers():
    import numpy as np
    assert Acceptance.from_length(np.int64(2), 3).alpha == Acceptance.from_length(2.0, 3).alpha
