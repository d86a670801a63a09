"""Known-hazards check (simulator/hazards.py, hazards/known_hazards.toml): the bundled list, data-driven matching,
user files, every loader error (naming file, key and value), and the warnings in `specroof curve`."""

from __future__ import annotations

import json
import textwrap

import pytest

from simulator.drafters import METHODS
from simulator.errors import ScenarioError, SpecError
from simulator.hazards import OPTIONS, SEVERITIES, Hazard, bundled_files, check, load_hazards, resolve_options

from .helpers import run


def ids(hs):
    return [h.id for h in hs]


def write(tmp_path, body: str, name: str = "h.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


GOOD = """
schema = 1
[[hazard]]
id = "my-hazard"
title = "A problem"
severity = "throughput"
engines = ["vllm"]
methods = ["eagle3"]
conditions = { context_gt = 4096 }
links = ["https://example.com/1"]
detail = "Long contexts hurt."
"""


# ---- the bundled list ------------------------------------------------------------------------------------------

def test_bundled_list_is_well_formed():
    hs = load_hazards()
    assert len(hs) >= 10 and len(set(ids(hs))) == len(hs)
    assert [p.name for p in bundled_files()] == ["known_hazards.toml"]
    for h in hs:
        assert h.severity in SEVERITIES and h.links and h.detail and h.title
        assert all(u.startswith("https://") for u in h.links)
        assert all(m == "*" or m in METHODS for m in h.methods)
        assert all(o in OPTIONS for o, _, _ in h.conditions)


@pytest.mark.parametrize("engine, method, opts, want, link", [
    ("vllm", "mtp", {"prefix_caching": True, "hybrid_model": True}, "vllm-prefix-caching-mtp-hybrid-corruption",
     "vllm-project/vllm/issues/43559"),
    ("vllm", "mtp", {"prefix_caching": True, "hybrid_model": True}, "vllm-prefix-caching-mtp-hybrid-corruption",
     "vllm-project/vllm/issues/53912"),
    ("vllm", "eagle3", {"prefix_caching": True, "hybrid_model": True}, "vllm-eagle-mtp-prefix-last-block-drop",
     "vllm-project/vllm/issues/53670"),
    ("sglang", "dflash", {"pd_disaggregation": True}, "sglang-dflash-pd-disaggregation",
     "sgl-project/sglang/issues/36140"),
    ("sglang", "eagle3", {"overlap_scheduler": True, "topk": 4}, "sglang-overlap-needs-topk-1",
     "sgl-project/sglang/issues/11762"),
    ("hf", "draft", {"max_batch": 8}, "hf-assisted-batch-1-only", "huggingface/transformers"),
    ("trtllm", "mtp", {"relaxed_acceptance": True}, "trtllm-relaxed-acceptance-lossy", "NVIDIA/TensorRT-LLM"),
    ("sglang", "mtp", {"moe": True, "max_batch": 16}, "moe-speculation-under-load-overpredicted", "InferenceX-app"),
    ("vllm", "eagle3", {"moe": True, "max_batch": 256}, "moe-speculation-under-load-overpredicted",
     "rocm.blogs.amd.com"),
    # review (2026-12-05): layouts the engines refuse, which curve and serve priced without a word
    ("sglang", "eagle3", {"pp": 2}, "sglang-pp-spec-eagle-chain-only", "sgl-project/sglang/pull/30775"),
    ("sglang", "eagle", {"pp": 2, "topk": 4}, "sglang-pp-spec-tree-or-dp-attention", "validation_hook.py"),
    ("sglang", "mtp", {"pp": 2, "dp": 8, "moe": True}, "sglang-pp-spec-no-dp-attention", "validation_hook.py"),
    ("sglang", "dflash", {"dp": 8, "moe": True}, "sglang-dflash-no-dp-attention", "speculative_hook.py"),
    ("trtllm", "eagle", {}, "trtllm-eagle1-head-on-pytorch-backend", "llm_args.py"),
    ("sglang", "mtp", {"cross_node": True}, "tensor-parallel-across-nodes-underpriced",
     "tt-inference-server/issues/356"),
    # blind test round 9 (2026-12-06): the SGLang cookbook's DeepSeek-V3.1 on MI300X, about 2.5x the priced step
    ("sglang", "mtp", {"mla": True, "architecture": "cdna3"}, "sglang-deepseek-cdna3-decode-underpriced",
     "sgl-cookbook"),
    # held out (2026-12-06): vLLM's gpt-oss-120b (InferenceX PR #1061) and DeepSeek-R1 (dstack) on MI300X
    ("vllm", "eagle3", {"moe": True, "architecture": "cdna3"}, "vllm-moe-cdna3-decode-underpriced",
     "InferenceX/pull/1061"),
])
def test_issue_hazards_match_with_links(engine, method, opts, want, link):
    hs = check(engine, method, opts)
    assert want in ids(hs)
    assert any(link in u for u in next(h for h in hs if h.id == want).links)


@pytest.mark.parametrize("engine, method, opts, absent", [
    ("vllm", "mtp", {"prefix_caching": True}, "vllm-prefix-caching-mtp-hybrid-corruption"),   # not hybrid
    ("vllm", "mtp", {"hybrid_model": True}, "vllm-prefix-caching-mtp-hybrid-corruption"),     # no prefix caching
    ("sglang", "mtp", {"prefix_caching": True, "hybrid_model": True},
     "vllm-prefix-caching-mtp-hybrid-corruption"),                                             # other engine
    ("sglang", "eagle3", {"pd_disaggregation": True}, "sglang-dflash-pd-disaggregation"),     # other method
    ("sglang", "eagle3", {"overlap_scheduler": True, "topk": 1}, "sglang-overlap-needs-topk-1"),
    ("sglang", "eagle3", {"overlap_scheduler": True}, "sglang-overlap-needs-topk-1"),          # topk unknown
    ("hf", "draft", {"max_batch": 1}, "hf-assisted-batch-1-only"),
    ("trtllm", "mtp", {}, "trtllm-relaxed-acceptance-lossy"),
    ("sglang", "mtp", {"moe": True, "max_batch": 15}, "moe-speculation-under-load-overpredicted"),   # low load
    ("sglang", "mtp", {"max_batch": 64}, "moe-speculation-under-load-overpredicted"),                # dense
    ("sglang", "mtp", {"moe": True}, "moe-speculation-under-load-overpredicted"),                    # load unknown
    ("sglang", "eagle", {"pp": 2, "topk": 1}, "sglang-pp-spec-tree-or-dp-attention"),         # a chain runs
    ("sglang", "eagle3", {"pp": 1}, "sglang-pp-spec-eagle-chain-only"),
    ("sglang", "dflash", {"dp": 8}, "sglang-dflash-no-dp-attention"),                         # dense: replicas
    ("sglang", "mtp", {"mla": True, "architecture": "cdna4"}, "sglang-deepseek-cdna3-decode-underpriced"),   # MI355X
    ("sglang", "eagle3", {"architecture": "cdna3"}, "sglang-deepseek-cdna3-decode-underpriced"),    # not MLA
    ("vllm", "mtp", {"mla": True, "architecture": "cdna3"}, "sglang-deepseek-cdna3-decode-underpriced"),  # vLLM
    ("vllm", "eagle3", {"moe": True, "architecture": "cdna4"}, "vllm-moe-cdna3-decode-underpriced"),   # MI355X
    ("vllm", "eagle3", {"architecture": "cdna3"}, "vllm-moe-cdna3-decode-underpriced"),   # dense: priced within 8 %
    ("sglang", "eagle3", {"moe": True, "architecture": "cdna3"}, "vllm-moe-cdna3-decode-underpriced"),  # SGLang
])
def test_conditions_must_all_hold(engine, method, opts, absent):
    assert absent not in ids(check(engine, method, opts))


def test_plain_defaults_warn_nothing_and_severity_orders_results():
    assert check("vllm", "eagle3") == [] and check("sglang", "eagle3", {}) == []
    hs = check("vllm", "mtp", {"prefix_caching": True, "hybrid_model": True, "pd_disaggregation": True})
    ranks = [SEVERITIES.index(h.severity) for h in hs]
    assert ranks == sorted(ranks) and hs[0].severity == "corruption" and len(hs) >= 3


def test_check_accepts_an_engine_profile():
    from simulator import load_engine
    assert "sglang-ngram-disables-overlap" in ids(check(load_engine("sglang"), "ngram"))


def test_wildcards_and_comparisons(tmp_path):
    p = write(tmp_path, """
        schema = 1
        [[hazard]]
        id = "any"
        title = "t"
        severity = "lossy"
        engines = ["*"]
        methods = ["*"]
        conditions = { temperature_ge = 0.5, temperature_lt = 1.5, tp_le = 8, dp = 2 }
        links = ["http://example.com"]
        detail = "d"
        """)
    hs = load_hazards([p], bundled=False)
    assert ids(check("anything", "suffix", {"temperature": 0.5, "tp": 8, "dp": 2}, hs)) == ["any"]
    assert check("anything", "suffix", {"temperature": 1.5, "tp": 8, "dp": 2}, hs) == []
    assert check("anything", "suffix", {"temperature": 0.7, "tp": 16, "dp": 2}, hs) == []
    assert check("anything", "suffix", {"temperature": 0.7, "tp": 8, "dp": 1}, hs) == []
    d = hs[0].to_dict()
    assert d["conditions"] == {"temperature_ge": 0.5, "temperature_lt": 1.5, "tp_le": 8, "dp": 2}
    assert d["links"] == ["http://example.com"] and json.loads(json.dumps(d)) == d


def test_user_file_adds_and_replaces_by_id(tmp_path):
    p = write(tmp_path, GOOD)
    assert ids(check("vllm", "eagle3", {"context": 8192}, files=[p])) == ["my-hazard"]
    assert check("vllm", "eagle3", {"context": 1024}, files=[p]) == []
    over = write(tmp_path, """
        schema = 1
        [[hazard]]
        id = "hf-assisted-batch-1-only"
        title = "replaced"
        severity = "throughput"
        engines = ["hf"]
        methods = ["*"]
        conditions = { max_batch_gt = 64 }
        links = ["https://example.com/2"]
        detail = "d"
        """, "over.toml")
    hs = load_hazards([over])
    assert len(hs) == len(load_hazards()) and next(h for h in hs if h.id == "hf-assisted-batch-1-only").title == \
        "replaced"
    assert check("hf", "draft", {"max_batch": 8}, hs) == []


def test_hazard_is_frozen():
    h = load_hazards()[0]
    assert isinstance(h, Hazard)
    with pytest.raises(AttributeError):
        h.id = "x"   # type: ignore[misc]


# ---- options -------------------------------------------------------------------------------------------------

def test_resolve_options_defaults_and_types():
    o = resolve_options(None)
    assert set(o) == set(OPTIONS) and o["prefix_caching"] is False and o["temperature"] is None
    o = resolve_options({"tp": 4.0, "temperature": 1, "prefix_caching": None, "dp": None})
    assert o["tp"] == 4 and isinstance(o["tp"], int) and o["temperature"] == 1.0 and o["prefix_caching"] is False
    assert o["dp"] is None


@pytest.mark.parametrize("opts, msg", [
    ({"prefix_cache": True}, "unknown deployment option 'prefix_cache'; did you mean prefix_caching"),
    ({"prefix_caching": 1}, "prefix_caching = 1; expected True or False"),
    ({"temperature": "hot"}, "temperature = 'hot'; expected a number"),
    ({"temperature": True}, "temperature = True; expected a number"),
    ({"temperature": float("nan")}, "temperature = nan; expected a number"),
    ({"tp": 2.5}, "tp = 2.5; expected an integer"),
    ({"architecture": 3}, "architecture = 3; expected a name"),
])
def test_bad_options(opts, msg):
    with pytest.raises(ScenarioError, match=msg.replace("(", r"\(")):
        check("vllm", "eagle3", opts)


def test_bad_engine_and_method():
    with pytest.raises(ScenarioError, match="engine = 3"):
        check(3, "eagle3")
    with pytest.raises(ScenarioError, match="engine = ''"):
        check("", "eagle3")
    with pytest.raises(ScenarioError, match="unknown method 'eagle4'"):
        check("vllm", "eagle4")


# ---- loader errors ------------------------------------------------------------------------------------------

FIELDS = dict(id='"x"', title='"t"', severity='"lossy"', engines='["vllm"]', methods='["*"]', conditions="{}",
              links='["https://e.com"]', detail='"d"')


def hazard(**over):
    f = {**FIELDS, **over}
    body = "\n".join(f"{k} = {v}" for k, v in f.items() if v is not None)
    return f"schema = 1\n[[hazard]]\n{body}\n"


@pytest.mark.parametrize("body, msg", [
    ("schema = 1\nhazards = []\n", "unknown key(s) ['hazards']"),
    ("schema = 2\n", "schema = 2, expected 1"),
    ("[[hazard]]\nid = 'x'\n", "schema = None, expected 1"),
    ("schema = 1\nhazard = 3\n", "hazard must be an array of tables"),
    ("schema = 1\nhazard = [1, 2]\n", "hazard must be an array of tables"),
    (hazard(url='"u"'), "hazard[0] (x): unknown key(s) ['url']"),
    (hazard(detail=None), "hazard[0] (x): missing key(s) ['detail']"),
    (hazard(id='"Bad Id"'), "hazard[0] (Bad Id): id = 'Bad Id', expected lowercase"),
    (hazard(id="3"), "hazard[0]: id = 3, expected lowercase"),
    (hazard() + hazard().replace("schema = 1\n", ""), "hazard[1] (x): duplicate id 'x'"),
    (hazard(title='""'), "title = '', expected a non-empty string"),
    (hazard(detail="5"), "detail = 5, expected a non-empty string"),
    (hazard(severity='"bad"'), "severity = 'bad', expected one of corruption, lossy, unsupported, throughput"),
    (hazard(engines="[]"), "engines = [], expected a non-empty list of strings"),
    (hazard(engines='"vllm"'), "engines = 'vllm', expected a non-empty list of strings"),
    (hazard(methods='["egale3"]'), "methods entry 'egale3' is not one of"),
    (hazard(links='["ftp://x"]'), "link 'ftp://x' is not an http(s) URL"),
    (hazard(conditions="3"), "conditions = 3, expected a table"),
    (hazard(conditions="{ prefix_cache = true }"), "unknown condition 'prefix_cache'; did you mean prefix_caching"),
    (hazard(conditions="{ max_batch_between = 3 }"), "unknown condition 'max_batch_between'"),
    (hazard(conditions="{ prefix_caching_gt = 1 }"), "prefix_caching_gt compares a true/false option"),
    (hazard(conditions='{ prefix_caching = "yes" }'), "prefix_caching = 'yes', expected true or false"),
    (hazard(conditions="{ topk_gt = true }"), "topk_gt = True, expected a number"),
    (hazard(conditions='{ temperature = "0" }'), "temperature = '0', expected a number"),
    (hazard(conditions="{ architecture = 3 }"), "architecture = 3, expected architecture = \"name\""),
    (hazard(conditions='{ architecture_gt = "cdna3" }'), "architecture_gt = 'cdna3', expected architecture = "),
    ("schema = 1\n[[hazard]\n", "malformed TOML"),
])
def test_loader_errors_name_file_and_key(tmp_path, body, msg):
    p = tmp_path / "bad.toml"
    p.write_text(body)
    with pytest.raises(SpecError) as e:
        load_hazards([p])
    assert str(p) in str(e.value) and msg in str(e.value), str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(SpecError, match="file not found"):
        load_hazards([tmp_path / "none.toml"])


# ---- curve output --------------------------------------------------------------------------------------------

CURVE = ["curve", "--engine", "vllm", "--batch", "1,8"]


def test_curve_prints_warnings_with_links(capsys):
    rc, out, err = run(capsys, *CURVE, "--prefix-caching", "--hybrid-model")
    assert rc == 0 and err == ""
    tail = out.split("warnings:", 1)[1]
    assert "https://github.com/vllm-project/vllm/issues/53670" in tail
    assert "(vllm-eagle-mtp-prefix-last-block-drop)" in tail and "[throughput]" in tail


def test_curve_without_hazards_prints_no_warnings(capsys):
    rc, out, _ = run(capsys, *CURVE)
    assert rc == 0 and "warnings:" not in out


def test_curve_json_adds_only_hazards(capsys):
    rc, out, _ = run(capsys, *CURVE, "--format", "json")
    plain = json.loads(out)
    rc2, out2, _ = run(capsys, *CURVE, "--format", "json", "--pd-disaggregation", "--method", "dflash",
                       "--acceptance-rate", "0.6")
    d = json.loads(out2)
    assert rc == rc2 == 0 and plain["hazards"] == []
    assert set(d) == set(plain) == {"scenario", "points", "crossover_batch", "break_even_acceptance",
                                    "max_batch_base", "max_batch_spec", "fit_edges", "notes", "hazards"}
    assert [h["id"] for h in d["hazards"]] == ["vllm-mtp-pd-draft-kv-not-transferred"]
    assert d["hazards"][0]["links"][0].startswith("https://")


def test_curve_csv_sends_warnings_to_stderr(capsys):
    rc, out, err = run(capsys, "curve", "--engine", "hf", "--method", "draft", "--acceptance-rate", "0.6",
                       "--batch", "1,2", "--format", "csv")
    assert rc == 0 and out.splitlines()[0].startswith("batch,")
    assert "warning: [unsupported]" in err and "hf-assisted-batch-1-only" in err


def test_curve_topk_from_tree_triggers_overlap_hazard(capsys):
    # --spec-overlap (SGLang SpecV2) is priced and sets the hazard option overlap_scheduler (the old hazard-only
    # flag --overlap-scheduler is gone: one flag says it).
    rc, out, _ = run(capsys, "curve", "--batch", "1,4", "--tree-tokens", "16", "--k", "3", "--spec-overlap")
    assert rc == 0 and "sglang-overlap-needs-topk-1" in out
    rc, out, _ = run(capsys, "curve", "--batch", "1,4", "--k", "3", "--spec-overlap")
    assert rc == 0 and "sglang-overlap-needs-topk-1" not in out
    rc, out, _ = run(capsys, "curve", "--batch", "1,4", "--k", "3")
    assert rc == 0 and "sglang-overlap-needs-topk-1" not in out
    rc, _, err = run(capsys, "curve", "--batch", "1", "--overlap-scheduler")
    assert rc == 2 and "--overlap-scheduler" in err
    # a fixed tree of k + 1 tokens at top-k 3 is priced as a tree (pricing runs width 3): the warning reads that width
    # (found by review: it read a chain, width 1, where pricing ran the tree)
    rc, out, _ = run(capsys, "curve", "--batch", "1,4", "--k", "3", "--tree-tokens", "4", "--tree-branching", "3",
                     "--spec-overlap")
    assert rc == 0 and "sglang-overlap-needs-topk-1" in out
    # under k = "auto" the same budget prices chains of k + 1 (and trees below it): a k + 1 candidate is a chain (second
    # review: dropping the auto flag warned here)
    rc, out, _ = run(capsys, "curve", "--batch", "1,4", "--tree-tokens", "4", "--tree-branching", "3", "--spec-overlap",
                     "--format", "json")
    ks = {(p["k"], p["tree_tokens"]) for p in json.loads(out)["points"] if p["feasible"]}
    assert rc == 0 and all(T == k + 1 for k, T in ks)
    assert "sglang-overlap-needs-topk-1" not in [h["id"] for h in json.loads(out)["hazards"]]


def test_frontier_topk_is_the_priced_shape(capsys):
    # found by review: frontier read the budget's tree at every depth (Scenario.verify(k)) where k = "auto" priced a
    # chain of k + 1; each point now carries its verify tokens and the warning reads the shape priced
    args = ("frontier", "--gpus", "1", "--tree-tokens", "4", "--tree-branching", "3", "--spec-overlap", "--format",
            "json")
    rc, out, _ = run(capsys, *args)
    d = json.loads(out)
    assert rc == 0 and d["frontier_on"] and all(p["verify_tokens"] == p["k"] + 1 for p in d["frontier_on"])
    assert "sglang-overlap-needs-topk-1" not in [h["id"] for h in d["hazards"]]
    rc, out, _ = run(capsys, *args, "--k", "3")                      # a fixed tree of k + 1 at top-k 3: it warns
    assert rc == 0 and "sglang-overlap-needs-topk-1" in [h["id"] for h in json.loads(out)["hazards"]]


def test_curve_warns_of_the_moe_load_miss_from_the_model(capsys):
    # moe is filled in from the target (not a flag): DeepSeek-R1's curve up to 64 sequences carries the measured miss
    # of MoE speedups under load; the same curve stopping at 8, and a dense target at 64, do not.
    moe = ["curve", "--hardware", "b200", "--model", "deepseek-r1", "--method", "mtp", "--tp", "8", "--k", "2",
           "--precision", "fp8"]                # bf16 fits at no batch, and then no load is priced to warn of
    rc, out, _ = run(capsys, *moe, "--batch", "1,64")
    assert rc == 0 and "(moe-speculation-under-load-overpredicted)" in out and "[throughput]" in out
    rc, out, _ = run(capsys, *moe, "--batch", "1,8", "--format", "json")
    d = json.loads(out)
    assert rc == 0 and d["scenario"]["moe"] is True and d["hazards"] == []
    rc, out, _ = run(capsys, "curve", "--batch", "1,64", "--format", "json")
    d = json.loads(out)
    assert rc == 0 and d["scenario"]["moe"] is False and d["hazards"] == []
    rc, _, err = run(capsys, *moe, "--batch", "1", "--moe")
    assert rc == 2 and "--moe" in err


def test_curve_and_serve_warn_of_a_group_across_nodes_from_the_deployment(capsys):
    """cross_node is filled in from the deployment (a collective other than the EP all-to-all priced on the network),
    not a flag: TP16, TP8 x PP2, TP8 x DP2 with TP experts and TP4 x DP2 x PP2 on 8-GPU H100 nodes warn; TP16 inside
    a GB200 NVL72 domain, TP8 on one node and DP16 x EP16 do not."""
    base = ["--model", "deepseek-r1", "--method", "mtp", "--precision", "fp8", "--k", "2", "--format", "json"]
    for hw, lay, warns in (("h100-sxm", ["--tp", "16"], True), ("h100-sxm", ["--tp", "8", "--pp", "2"], True),
                           ("gb200-nvl72", ["--tp", "16"], False), ("h200-sxm", ["--tp", "8"], False),
                           # review: experts split over two boards' DP ranks, and stage sends between boards
                           ("h100-sxm", ["--tp", "8", "--dp", "2"], True),
                           ("h100-sxm", ["--tp", "4", "--dp", "2", "--pp", "2"], True),
                           ("h100-sxm", ["--tp", "1", "--dp", "16", "--ep", "16"], False)):   # EP all-to-all only
        rc, out, _ = run(capsys, "curve", "--hardware", hw, *lay, *base, "--batch", "1")
        d = json.loads(out)
        assert rc == 0 and d["scenario"]["cross_node"] is warns, (hw, lay)
        assert ("tensor-parallel-across-nodes-underpriced" in [h["id"] for h in d["hazards"]]) is warns, (hw, lay)
    rc, out, _ = run(capsys, "serve", "--hardware", "h100-sxm", "--tp", "16", *base, "--concurrency", "1")
    assert rc == 0 and "tensor-parallel-across-nodes-underpriced" in [h["id"] for h in json.loads(out)["hazards"]]
    rc, _, err = run(capsys, "curve", *base, "--cross-node")
    assert rc == 2 and "--cross-node" in err
    # frontier: its notes name the frontier layouts across nodes (third review: it recommended TP16 on two H100
    # boards without a word), and it warns as curve and serve do (it had printed no hazard at all)
    rc, out, _ = run(capsys, "frontier", "--hardware", "h100-sxm", "--gpus", "16", "--max-tp", "16", *base)
    d = json.loads(out)
    note = next((n for n in d["notes"] if n.startswith("frontier layout(s)")), "")
    assert rc == 0 and "tp16" in note and "tensor-parallel-across-nodes-underpriced" in note
    ids = [h["id"] for h in d["hazards"]]
    assert "tensor-parallel-across-nodes-underpriced" in ids and len(ids) == len(set(ids))   # each hazard once
    rc, out, _ = run(capsys, "frontier", "--hardware", "h200-sxm", "--gpus", "8", *base)
    d = json.loads(out)
    assert rc == 0 and not any(n.startswith("frontier layout(s)") for n in d["notes"])
    assert "tensor-parallel-across-nodes-underpriced" not in [h["id"] for h in d["hazards"]]
    # tree hazards too (review: frontier passed no topk, so SGLang's overlap-needs-topk-1 never fired there)
    rc, out, _ = run(capsys, "frontier", "--engine", "sglang", "--method", "eagle3", "--tree-tokens", "16", "--k",
                     "4", "--gpus", "1", "--format", "json")
    assert rc == 0 and "sglang-overlap-needs-topk-1" in [h["id"] for h in json.loads(out)["hazards"]]
    # the MoE-under-load warning reaches frontier's table and CSV too (its frontier runs at 16 and more requests)
    rc, out, err = run(capsys, "frontier", "--hardware", "h200-sxm", "--gpus", "8", *base[:-2], "--format", "csv")
    assert rc == 0 and "moe-speculation-under-load-overpredicted" in err
    rc, out, _ = run(capsys, "frontier", "--hardware", "h200-sxm", "--gpus", "8", *base[:-2])
    assert rc == 0 and "warnings:" in out and "(moe-speculation-under-load-overpredicted)" in out


def test_curve_user_hazards_file(capsys, tmp_path):
    p = write(tmp_path, GOOD)
    rc, out, _ = run(capsys, "curve", "--engine", "vllm", "--batch", "1", "--context", "8192", "--hazards", str(p))
    assert rc == 0 and "(my-hazard)" in out and "https://example.com/1" in out


def test_curve_and_serve_warn_of_sglang_deepseek_on_cdna3_from_the_deployment(capsys):
    """Blind test round 9 (2026-12-06): the device's generation and the target's attention are filled in from the
    deployment, not asked for: MI300X + DeepSeek-V3 under SGLang warns, MI355X and a dense target do not."""
    base = ["--model", "deepseek-v3", "--tp", "8", "--precision", "fp8", "--method", "mtp", "--k", "2"]
    for cmd, extra in (("curve", ["--batch", "1,8"]), ("serve", ["--concurrency", "4"])):
        rc, out, _ = run(capsys, cmd, "--hardware", "mi300x", *base, *extra)
        assert rc == 0 and "sglang-deepseek-cdna3-decode-underpriced" in out
        rc, out, _ = run(capsys, cmd, "--hardware", "mi355x", *base, *extra)
        assert rc == 0 and "sglang-deepseek-cdna3-decode-underpriced" not in out
    rc, out, _ = run(capsys, "curve", "--hardware", "mi300x", "--model", "llama-3.1-8b", "--batch", "1")
    assert rc == 0 and "cdna3-decode" not in out


@pytest.mark.parametrize("args, needle", [
    (["--hazards", "/nonexistent/h.toml"], "/nonexistent/h.toml: file not found"),
    (["--temperature", "-1"], "temperature -1.0 must be >= 0"),
    (["--temperature", "warm"], "temperature 'warm' is not a number"),
    (["--accept-threshold", "1.5"], "accept threshold 1.5 must be in (0, 1]"),
    (["--accept-threshold", "x"], "accept threshold 'x' is not a number"),
    (["--dp", "0"], "dp 0 must be >= 1"),
    (["--dp", "two"], "dp 'two' is not an integer"),
])
def test_curve_deployment_flag_errors(capsys, args, needle):
    rc, out, err = run(capsys, *CURVE, *args)
    assert rc == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("error: ") and needle in err


def test_curve_bad_user_file_is_a_clean_error(capsys, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text(hazard(severity='"meh"'))
    rc, out, err = run(capsys, *CURVE, "--hazards", str(p))
    assert rc == 2 and err.startswith("error: ") and "severity = 'meh'" in err and "Traceback" not in err


def test_a_hybrid_target_sets_hybrid_model_itself(capsys):
    """Qwen3-Next has Gated DeltaNet layers: the hybrid-model hazards apply without --hybrid-model (which still marks
    a target priced without its linear layers); a dense target with the flag still draws them."""
    base = ["curve", "--engine", "vllm", "--batch", "1,8", "--method", "mtp", "--prefix-caching"]
    rc, out, _ = run(capsys, *base, "--model", "qwen3-next-80b-a3b", "--tp", "4", "--hardware", "h200-sxm",
                     "--precision", "fp8")
    assert rc == 0 and "(vllm-prefix-caching-mtp-hybrid-corruption)" in out
    rc, out, _ = run(capsys, *base, "--model", "deepseek-v3", "--tp", "8", "--hardware", "h200-sxm",
                     "--precision", "fp8")
    assert rc == 0 and "hybrid-corruption" not in out
    rc, out, _ = run(capsys, *base, "--model", "deepseek-v3", "--tp", "8", "--hardware", "h200-sxm",
                     "--precision", "fp8", "--hybrid-model")
    assert rc == 0 and "(vllm-prefix-caching-mtp-hybrid-corruption)" in out
    from simulator import known_hazards, speedup_curve
    r = speedup_curve(hardware="h200-sxm", model="qwen3-next-80b-a3b", tp=4, precision="fp8", engine="vllm",
                      method="mtp", batch=(1, 8))
    assert r.scenario["hybrid_model"] is True
    ids = {h.id for h in known_hazards(r, {"prefix_caching": True, "hybrid_model": False})}
    assert "vllm-prefix-caching-mtp-hybrid-corruption" in ids
