"""The bad-input catalogue (issue 14): every bad value, file or output path given to the CLI is one `error:` line on
stderr, exit 2, no traceback and nothing on stdout; wrong Python types raise a SpecroofError naming the value."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator import Acceptance, Scenario
from simulator.errors import ScenarioError, SpecroofError

from .helpers import run

REPO = Path(__file__).resolve().parents[1]
EAGLE3_HEAD = str(REPO / "models" / "yuhuili__EAGLE3-LLaMA3.1-Instruct-8B.json")
# An EAGLE-1 head ships as a plain LlamaForCausalLM config with one layer: refused as a target by its layer count.
EAGLE1_HEAD = str(REPO / "models" / "yuhuili__EAGLE-LLaMA3-Instruct-8B.json")
LLAMA = json.loads((REPO / "models" / "meta-llama__Llama-3.1-8B-Instruct.json").read_text())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Bad files of every kind: binary, non-UTF-8, empty, a directory, malformed TOML / JSON / CSV, impossible
    model configs, and an unwritable place."""
    d = tmp_path_factory.mktemp("bad")
    (d / "bin.toml").write_bytes(b"\x00\x01\x02\xff\xfe binary")
    (d / "bin.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (d / "bin.csv").write_bytes(b"\x00\xff\xfe\x00")
    (d / "latin1.csv").write_bytes("row_id,caf\xe9\n".encode("latin-1"))
    (d / "empty.toml").write_text("")
    (d / "empty.json").write_text("")
    (d / "empty.csv").write_text("")
    (d / "dir.toml").mkdir()
    (d / "dir.json").mkdir()
    (d / "dir.csv").mkdir()
    (d / "bad.toml").write_text("schema = 1\nname = [\n")
    (d / "bad.json").write_text("{ not json")
    (d / "list.json").write_text("[1, 2, 3]")
    for name, change in (("zero_layers", {"num_hidden_layers": 0}), ("zero_vocab", {"vocab_size": 0}),
                         ("huge_layers", {"num_hidden_layers": 10 ** 10}), ("neg_hidden", {"hidden_size": -4096}),
                         ("str_heads", {"num_attention_heads": "32"}), ("nan_theta", {"rope_theta": "nan"}),
                         ("huge_vocab", {"vocab_size": 10 ** 12}), ("odd_heads", {"num_attention_heads": 33}),
                         ("str_window", {"sliding_window": "abc", "model_type": "mistral"}),
                         ("neg_window", {"sliding_window": -4096, "model_type": "mistral"})):
        (d / f"{name}.json").write_text(json.dumps({**LLAMA, **change}))
    for name in ("rep.md", "o.dir", "p.png"):
        (d / name).mkdir()
    ro = d / "readonly"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    (d / "afile").write_text("x")
    yield d
    ro.chmod(stat.S_IRWXU)


def _cases(d: Path) -> list[tuple[list[str], str]]:
    """(argv, a needle the error line must contain)."""
    step, curve, serve = ["step"], ["curve"], ["serve"]
    out = []
    # --- values ------------------------------------------------------------------------------------------------
    for cmd in (step, curve, ["advise"], serve):
        out += [
            (cmd + ["--tp", "0"], "tp"), (cmd + ["--tp", "x"], "tp"), (cmd + ["--tp", "1.5"], "tp"),
            (cmd + ["--tp", "3"], "tp = 3 does not divide"), (cmd + ["--ep", "2"], "ep = 2"),
            (cmd + ["--dp", "0"], "dp"), (cmd + ["--precision", "int4"], "int4"),
            (cmd + ["--kv-precision", "fp5"], "fp5"), (cmd + ["--expert-precision", "q8"], "q8"),
            (cmd + ["--attention-precision", "x"], "attention_precision"),
            (cmd + ["--hardware", "h100-sxn"], "unknown hardware"), (cmd + ["--model", "llama-9"], "unknown model"),
            (cmd + ["--engine", "tgi"], "unknown engine"), (cmd + ["--hardware", ""], "hardware"),
            (cmd + ["--model", EAGLE3_HEAD], "not a model that can be served"),
            (cmd + ["--model", EAGLE1_HEAD], "num_hidden_layers = 1"),
            (cmd + ["--model", "eagle3-llama3.1-8b"], "not a model that can be served"),
            (cmd + ["--model", "medusa-vicuna-7b"], "not a model that can be served"),
        ]
    for cmd in (curve, ["advise"], serve):
        out += [
            (cmd + ["--method", "telepathy"], "method"), (cmd + ["--k", "-1"], "k"), (cmd + ["--k", "many"], "k"),
            (cmd + ["--k-max", "0"], "k_max"), (cmd + ["--acceptance-rate", "1"], "acceptance rate"),
            (cmd + ["--acceptance-rate", "-0.1"], "acceptance rate"), (cmd + ["--acceptance-rate", "nan"], "rate"),
            (cmd + ["--acceptance-length", "0.5", "--acceptance-k", "3"], "acceptance length"),
            (cmd + ["--acceptance-length", "4", "--acceptance-k", "3"], "tau"),
            (cmd + ["--acceptance-length", "2.5"], "acceptance-k"),
            (cmd + ["--acceptance-k", "3"], "--acceptance-k applies only"),
            (cmd + ["--acceptance-rate", "0.8", "--acceptance-k", "3"], "--acceptance-k applies only"),
            (cmd + ["--expert-precision", "fp4"], "expert_precision (--expert-precision) = fp4 but model llama-3.1-8b "
                                                  "has no experts"),
            (cmd + ["--acceptance-rates", "0.5,1.2"], "acceptance rate"),
            (cmd + ["--acceptance-rates", ","], "empty"),
            (cmd + ["--tree-tokens", "1"], "tree"), (cmd + ["--tree-branching", "0"], "tree"),
            (cmd + ["--k", "3"] * (cmd != ["advise"]) + ["--tree-tokens", "10", "--tree-branching", "1000"],
             "tree_branching = 1000 is more candidates per depth than the tree's 9 draft tokens"),
            (cmd + ["--method", "medusa", "--engine", "vllm", "--model", "vicuna-7b", "--tree-branching", "1000"],
             "tree_branching = 1000 is more candidates per depth than the tree's 63 draft tokens"),
            (cmd + ["--method", "eagle", "--tree-branching", "4"], "tree_branching (--tree-branching) = 4 without"),
            (cmd + ["--engine", "hf", "--model", "vicuna-7b", "--method", "suffix", "--acceptance-rate", "0.6"],
             "engine hf does not run suffix; its profile ([spec] methods) lists draft, ngram, eagle, eagle3, medusa"),
            (cmd + ["--method", "draft", "--draft", "nonexistent-draft"], "unknown model"),
            # review (2026-12-06): a draft larger than its target was accepted, refused only by memory
            (cmd + ["--method", "draft", "--draft", "llama-3.1-70b"], "draft llama-3.1-70b (70.6B parameters) is no "
             "smaller than target llama-3.1-8b (8.0B): each draft token would cost a target step or more"),
            (cmd + ["--context", "-5"], "context"), (cmd + ["--overlap", "fast"], "overlap"),
            (cmd + ["--overlap", "2"], "overlap"), (cmd + ["--cuda-graph-max-batch", "0"], "cuda"),
            (cmd + ["--engine", "hf", "--model", "vicuna-7b", "--method", "draft", "--draft", "llama-68m",
                    "--spec-overlap"], "no overlap scheduler"),
            # review (2026-12-05): TensorRT-LLM on an AMD device priced a 2.6x speedup
            (cmd + ["--engine", "trtllm", "--hardware", "mi300x"],
             "engine trtllm runs on nvidia GPUs only ([scope] vendors); hardware mi300x is amd"),
            # review (2026-12-05): accepted and ignored for a host-side lookup, priced as the target's own weights
            # in another format for self-sparse
            (cmd + ["--method", "ngram", "--draft-precision", "fp8"],
             "draft_precision (--draft-precision) = fp8 but method ngram drafts without weights of its own"),
            (cmd + ["--method", "self-sparse", "--engine", "ideal", "--draft-precision", "fp8"],
             "but method self-sparse drafts without weights of its own"),
            # review (2026-12-06): a drafter KV window was accepted and changed nothing where no drafter holds a KV
            # cache (a host-side lookup, Medusa's heads)
            (cmd + ["--method", "ngram", "--acceptance-rate", "0.5", "--draft-kv-window", "512"],
             "draft_kv_window (--draft-kv-window) = 512 but method ngram drafts without a KV cache of its own"),
            (cmd + ["--method", "medusa", "--engine", "hf", "--draft-kv-window", "512"],
             "but method medusa drafts without a KV cache of its own"),
            # review (2026-12-05): k_max 30000 took 107 s before any output, the time growing as its square
            (cmd + ["--k-max", "100000"], "k_max (--k-max) = 100000; expected at most 64 draft tokens per step"),
        ]
    for cmd in (step, curve):
        out += [(cmd + ["--batch", "0"], "batch"), (cmd + ["--batch", "1.5"], "batch"),
                (cmd + ["--batch", ""], "batch"), (cmd + ["--batch", "8..1"], "empty"),
                (cmd + ["--batch", "1,,2"], "batch"), (cmd + ["--batch", "x"], "batch"),
                (cmd + ["--context", "1e9"], "context"), (cmd + ["--format", "xml"], "format")]
    for cmd in (curve, serve):
        out.append((cmd + ["--tree-tokens", "64", "--k", "2", "--tree-branching", "2"], "needs 63 draft nodes"))
    for cmd in (curve, ["advise"]):
        out.append((cmd + ["--context", "200000"], "context (--context) = 200000 leaves no position for a new token: "
                    "llama-3.1-8b's max_position_embeddings is 131072"))
    out += [(step + ["--query-tokens", "0"], "query"), (step + ["--logits", "some"], "logits")]
    out += [(serve + ["--isl", "0"], "isl"), (serve + ["--osl", "-1"], "osl"),
            (serve + ["--concurrency", "0"], "concurrency 0"),
            (serve + ["--chunk", "0"], "chunk"), (serve + ["--prefix-hit", "1.5"], "prefix-hit"),
            (serve + ["--prefill-gpus", "0"], "prefill-gpus"), (serve + ["--prefill-gpus", "3"], "without pd"),
            (serve + ["--concurrency", "a,b"], "concurrency 'a'"),
            (serve + ["--rate", "-1"], "rate"), (serve + ["--rate", ""], "rate"), (serve + ["--rate", "inf"], "rate"),
            (serve + ["--lengths", "/nonexistent/trace.csv"], "trace.csv"), (serve + ["--isl", "8,"], "isl"),
            (serve + ["--isl", "1,2", "--osl", "1,2,3"], "samples")]
    out += [(["frontier", "--gpus", "0"], "gpus"), (["frontier", "--gpus", ""], "gpus"),
            (["frontier", "--targets", "-3"], "target"), (["frontier", "--tpot-slo-ms", "0"], "tpot"),
            (["frontier", "--max-tp", "0"], "max-tp"), (["frontier", "--method", "telepathy"], "method"),
            # found by review (2026-12-06): argparse reads -1,5 as an option; the line says how to pass it
            (["frontier", "--targets", "-1,5"], "--option=VALUE"), (["frontier", "--targets=-1,5"], "target -1"),
            # found by review (2026-12-06): an FP4 KV cache on a device without FP4 tensor cores was priced
            (["step", "--kv-precision", "fp4", "--hardware", "h100"], "an fp4 KV cache needs fp4 tensor cores"),
            (["curve", "--kv-precision", "fp6", "--hardware", "mi300x"], "KV-cache precision 'fp6' on mi300x")]
    out += [(["advise", "--batch", "0"], "batch"), (["advise", "--max-points", "1"], "max"),
            (["advise", "--emit", "tgi"], "emit")]
    out += [(["hardware", "nope-gpu"], "unknown hardware"), (["models", "nope-model"], "unknown model"),
            (["nosuchcommand"], "invalid choice"), ([], "required")]
    # --- files -------------------------------------------------------------------------------------------------
    for flag in ("--hardware", "--engine", "--model"):
        ext = ".json" if flag == "--model" else ".toml"
        for stem in ("bin", "empty", "dir", "bad"):
            out.append((step + [flag, str(d / f"{stem}{ext}")], str(d)))
        out.append((step + [flag, str(d / f"missing{ext}")], "not found"))
    for stem in ("zero_layers", "zero_vocab", "huge_layers", "neg_hidden", "str_heads", "huge_vocab", "odd_heads",
                 "list", "str_window", "neg_window"):
        out.append((step + ["--model", str(d / f"{stem}.json")], str(d / stem)))
    out.append((["models", str(d / "huge_layers.json")], "huge_layers"))
    for stem in ("bin", "latin1", "empty", "dir"):
        out.append((["validate", str(d / f"{stem}.csv")], str(d)))
        out.append((["calibrate", str(d / f"{stem}.csv"), "--engine", "vllm", "--out", str(d / "o.toml")], str(d)))
    for stem in ("bin", "dir", "bad"):
        out.append((["sweep", str(d / f"{stem}.toml"), "--out", str(d / "sw")], str(d)))
    for stem in ("bin", "empty", "dir", "bad"):
        out.append((curve + ["--hazards", str(d / f"{stem}.toml")], str(d)))
    # --- outputs (checked before the work) -----------------------------------------------------------------------
    places = [(d / "nodir" / "x", "nodir"), (d / "afile" / "x", "afile")]
    if os.geteuid() != 0:                       # root writes into a read-only directory
        places.append((d / "readonly" / "x", "readonly"))
    for where, why in places:
        out.append((["validate", "--report", str(where)], why))
        out.append((["calibrate", str(REPO / "validation" / "rows.csv"), "--engine", "vllm", "--out",
                     str(where) + ".toml"], why))
        out.append((curve + ["--plot", str(where) + ".png"], why))
        out.append((["frontier", "--plot", str(where) + ".png"], why))
        out.append((["sweep", str(REPO / "examples" / "serve_sweep.toml"), "--out", str(where) + ".csv"], why))
    # an existing directory where a file is written
    out.append((["validate", "--report", str(d / "rep")], "rep.md"))
    out.append((["calibrate", str(REPO / "validation" / "rows.csv"), "--engine", "vllm", "--out", str(d / "o.dir")],
                "o.dir"))
    out.append((curve + ["--plot", str(d / "p.png")], "p.png"))
    out.append((["sweep", str(REPO / "examples" / "sweep_standard.toml"), "--out", str(d / "afile")], "afile"))
    return out


def test_catalogue_has_150_cases(files):
    assert len(_cases(files)) >= 150


N_CASES = len(_cases(Path("/catalogue")))      # the count does not depend on where the bad files are


@pytest.mark.parametrize("i", range(N_CASES))
def test_bad_input_is_one_error_line(i, files, capsys):
    args, needle = _cases(files)[i]
    rc, out, err = run(capsys, *args)
    lines = err.strip().splitlines()
    assert rc == 2, (args, rc, out[:300], err[:300])
    assert out == "", (args, out[:300])
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, (args, err[:500])
    assert needle.lower() in lines[0].lower(), (args, needle, lines[0])


# ---- the Python API: wrong types ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(tp="2"), dict(tp=2.0), dict(tp=True), dict(batch=[[1, 2]]), dict(batch=1.5),
                                dict(batch=[0]), dict(batch=[]), dict(acceptance=0.7), dict(k=-1), dict(k="x"),
                                dict(context=1.5), dict(hardware=3), dict(model=None), dict(engine=1),
                                dict(precision=None), dict(overlap="fast"), dict(k_max=0), dict(ep="8"),
                                dict(tree_tokens=1), dict(tree_branching=0), dict(options=[1]),
                                dict(spec_overlap=1), dict(spec_overlap="true")])
def test_wrong_python_types_raise_a_specroof_error(kw):
    with pytest.raises(SpecroofError):
        Scenario(**kw).resolve()


def test_api_calls_a_notebook_makes_by_mistake():
    # API review: predict without a method raised AttributeError ('NoneType' has no 'description'); simulate_step
    # given a method keyword raised TypeError (its speculative fields are documented as ignored)
    from simulator import predict, simulate_step
    with pytest.raises(ScenarioError, match="predict: method = None; a speedup needs a speculative method"):
        predict(Scenario(method=None, k=0, acceptance=Acceptance.from_rate(0.5), batch=(1,)))
    with pytest.raises(ScenarioError, match="predict: method = None"):
        predict(Scenario(method=None, batch=(1,)))
    plain = simulate_step("h100-sxm", "llama-3.1-8b", (1,))
    assert simulate_step("h100-sxm", "llama-3.1-8b", (1,), method="eagle3").step_s == plain.step_s
    # and a tree or Medusa's branching, which a plain pass has none of (review: refused as a chain's)
    eight = simulate_step("h100-sxm", "llama-3.1-8b", (1,), query_tokens=8)
    for sc in (Scenario(method="eagle3", k=3, tree_tokens=8), Scenario(method="medusa", model="vicuna-7b",
                                                                       tree_branching=4)):
        got = simulate_step(scenario=sc.replace(model="llama-3.1-8b"), batch=(1,), query_tokens=8)
        assert got.step_s == eight.step_s


def test_a_workload_takes_numpy_numbers_as_a_scenario_does():
    # Review: Scenario(batch=np.arange(1, 5)) works, but Workload(rate=np.arange(1, 4)) was refused as
    # "rate = np.int64(1); expected a positive number of requests/s", and so was a float32 prefix_hit or rate.
    from simulator import Workload
    w = Workload(rate=np.arange(1, 4), prefix_hit=np.float32(0.5), pd=True, prefill_gpus=np.int64(4))
    assert w.rate == (1.0, 2.0, 3.0) and w.prefix_hit == 0.5 and w.prefill_gpus == 4
    assert Workload(rate=np.float32(0.5)).rate == (0.5,) == Workload(rate=[np.float32(0.5)]).rate
    for kw, msg in ((dict(rate=[np.bool_(True)]), "rate = "), (dict(rate=np.array([0.0])), "rate = "),
                    (dict(prefix_hit=np.float64(1.0)), "prefix_hit = "), (dict(rate=["2"]), "rate = ")):
        with pytest.raises(ScenarioError, match=msg):
            Workload(**kw)


# ---- malformed files from hypothesis -----------------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(data=st.binary(max_size=200))
def test_any_bytes_as_a_hardware_spec_is_an_error_or_a_device(data, tmp_path_factory):
    p = tmp_path_factory.mktemp("h") / "x.toml"
    p.write_bytes(data)
    from simulator.hardware import load_hardware
    try:
        load_hardware(str(p))
    except SpecroofError as e:
        assert str(p) in str(e)


@settings(max_examples=30, deadline=None)
@given(data=st.text(max_size=300))
def test_any_text_as_a_model_config_is_an_error_or_a_model(data, tmp_path_factory):
    p = tmp_path_factory.mktemp("m") / "x.json"
    p.write_text(data)
    from simulator.model import load_model
    try:
        m = load_model(str(p))
        assert m.n_layers >= 1
    except SpecroofError as e:
        assert str(p) in str(e)


@settings(max_examples=30, deadline=None)
@given(data=st.lists(st.lists(st.text(max_size=12), min_size=1, max_size=6), min_size=1, max_size=6))
def test_any_csv_as_rows_is_an_error_or_rows(data, tmp_path_factory):
    import csv
    p = tmp_path_factory.mktemp("c") / "rows.csv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(data)
    from simulator.validation import load_rows
    try:
        load_rows(p)
    except SpecroofError as e:
        assert str(p) in str(e)


@settings(max_examples=30, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["hardware", "model", "batch", "k", "tp", "serve", "acceptance_rate",
                                            "zip", "context"]),
                           st.one_of(st.integers(-5, 5), st.text(max_size=5), st.lists(st.integers(-2, 3)),
                                     st.floats(allow_nan=True)), max_size=5))
def test_any_sweep_spec_is_an_error_or_a_spec(doc):
    from simulator.sweep import parse_spec
    try:
        parse_spec(doc)
    except SpecroofError:
        pass


def test_no_number_for_an_infeasible_point(capsys):
    rc, out, _ = run(capsys, "curve", "--model", "llama-3.1-70b", "--batch", "1,100000", "--format", "json")
    d = json.loads(out)
    bad = [p for p in d["points"] if not p["feasible"]]
    assert rc == 0 and bad and all(p["speedup"] is None and p["message"] for p in bad)
    assert np.isfinite([p["speedup"] for p in d["points"] if p["feasible"]]).all()


def test_k0_is_speculation_off(capsys):
    rc, out, _ = run(capsys, "curve", "--method", "draft", "--acceptance-rate", "0.6", "--k", "0", "--batch", "1,64",
                     "--format", "json")
    d = json.loads(out)
    assert rc == 0 and all(p["speedup"] == pytest.approx(1.0) for p in d["points"])


def test_tree_branching_alone_is_refused_on_a_chain_and_shapes_medusas_default_tree(capsys):
    # A chain has no branching: --tree-branching without --tree-tokens was ignored (the same numbers as without it).
    for method in ("eagle", "eagle3", "draft", "ngram", None):
        with pytest.raises(SpecroofError, match="without tree_tokens"):
            Scenario(method=method, tree_branching=4)
    rc, out, err = run(capsys, "curve", "--method", "eagle", "--tree-branching", "4", "--batch", "1,8")
    assert rc == 2 and out == "" and "--tree-tokens" in err and "medusa" in err
    # Medusa verifies its default 64-token tree, which the branching reshapes; with a tree size it applies anywhere.
    a, b = (Scenario(method="medusa", tree_branching=w, batch=(1,)) for w in (4, None))
    assert a.verify(5) != b.verify(5)
    assert Scenario(method="eagle", tree_tokens=16, tree_branching=4).verify(4).w == 4


@pytest.mark.parametrize("method", ["mtp", "dflash", "suffix", "self-sparse"])
def test_an_engine_refuses_a_method_its_profile_does_not_list(method):
    # HF Transformers generate() has assisted generation (draft, ngram); hf.toml also prices the EAGLE and Medusa
    # authors' eager loops (the Spec-Bench rows). Other methods were priced with hf's costs though nothing runs them.
    with pytest.raises(SpecroofError, match=f"method \\(--method\\) = {method} with engine \\(--engine\\) = hf: "
                       "engine hf does not run"):
        Scenario(engine="hf", model="deepseek-v3", method=method, acceptance=Acceptance.from_rate(0.6)).resolve()


def test_engine_method_pairs_every_raise_path(tmp_path):
    from dataclasses import replace

    from simulator.engine import load_engine
    from simulator.scenario import with_engine
    for m in ("draft", "ngram", "eagle", "eagle3", "medusa", None):      # what the hf profile lists, and no method
        Scenario(engine="hf", model="vicuna-7b", method=m, acceptance=Acceptance.from_rate(0.6)).resolve()
    assert load_engine("ideal").methods == ()           # no list: every method priced (the idealised bound)
    for eng, lacks in (("sglang", ("medusa", "suffix", "self-sparse")), ("trtllm", ("self-sparse",)),
                       ("vllm", ("self-sparse",))):
        for m in lacks:                                   # engine_configs.ENGINE_MISSING: what the engine lacks
            with pytest.raises(SpecroofError, match=f"engine {eng} does not run {m}"):
                Scenario(engine=eng, model="vicuna-7b", method=m, acceptance=Acceptance.from_rate(0.6)).resolve()
    dep = Scenario(method="suffix", engine="vllm", acceptance=Acceptance.from_rate(0.6)).resolve()
    with pytest.raises(SpecroofError, match="engine vllm does not run suffix; its profile .* lists draft, ngram"):
        with_engine(dep, replace(load_engine("vllm"), methods=("draft", "ngram")))
    src = (REPO / "engine_profiles" / "hf.toml").read_text()
    line = next(ln for ln in src.splitlines() if ln.startswith("methods = "))
    for bad, needle in (('methods = { value = [], source = "https://x" }', "(at least one)"),
                        ('methods = { value = ["telepathy"], source = "https://x" }', "telepathy"),
                        ('methods = { value = "draft", source = "https://x" }', "'draft'"),
                        ('methods = { value = ["draft"] }', "expected { value")):
        p = tmp_path / "hf_bad.toml"
        p.write_text(src.replace(line, bad))
        with pytest.raises(SpecroofError, match=f"{p}: \\[spec\\] methods") as e:
            load_engine(str(p))
        assert needle in str(e.value)
    src = (REPO / "engine_profiles" / "trtllm.toml").read_text()
    line = next(ln for ln in src.splitlines() if ln.startswith("vendors = "))
    p = tmp_path / "trt_bad.toml"
    p.write_text(src.replace(line, 'vendors = { value = ["intel"], source = "https://x" }'))
    with pytest.raises(SpecroofError, match=r"\[scope\] vendors: value = \['intel'\]; expected a list of names from "
                                            "nvidia, amd"):
        load_engine(str(p))
    # SGLang's attention-path rule: an architecture or a model type the file cannot mean is named, not ignored
    src = (REPO / "engine_profiles" / "sglang.toml").read_text()
    for key, bad, needle in (("flashinfer_architectures", '["hoper"]', "ampere, ada, hopper"),
                             ("fa3_model_types", '["llama3"]', "bailing_moe")):
        line = next(ln for ln in src.splitlines() if ln.startswith(f"{key} = "))
        p = tmp_path / f"sglang_bad_{key}.toml"
        p.write_text(src.replace(line, f'{key} = {{ value = {bad}, source = "https://x" }}'))
        with pytest.raises(SpecroofError, match=f"\\[attention\\] {key}: value = ") as e:
            load_engine(str(p))
        assert needle in str(e.value) and str(p) in str(e.value)


def test_a_sweep_rejects_the_cells_an_engine_cannot_run():
    from simulator.sweep import run_sweep
    ds = run_sweep({"model": "vicuna-7b", "engine": "hf", "method": ["draft", "suffix"], "k": 3,
                    "acceptance_rate": 0.6, "batch": [1]}).to_dataframe().reset_index()
    bad = ds[ds["method"] == "suffix"]
    assert bad["message"].str.contains("engine hf does not run suffix").all() and not bad["feasible"].any()
    assert ds[ds["method"] == "draft"]["feasible"].all()


def test_environment_untouched():
    assert "SPECROOF_DATA_DIR" not in os.environ
