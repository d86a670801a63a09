"""Speculative decoding end to end: drafters, acceptance, engine overheads and the speedup curve."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator.acceptance import Acceptance
from simulator.data import data_dir, read_toml
from simulator.drafters import METHODS, make_drafter
from simulator.errors import ScenarioError
from simulator.model import load_model
from simulator.scenario import Scenario
from simulator.speedup import predict, speedup_curve
from simulator.toml_out import dump_toml
from simulator.workload import Parallelism, Precision

from .strategies import engine_for

B_ALL = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]


def test_every_method_prices():
    acc = Acceptance.from_rate(0.7)
    for m in METHODS:
        model = {"mtp": "deepseek-v3", "medusa": "vicuna-7b"}.get(m, "llama-3.1-8b")
        hw, tp = ("b200", 8) if m == "mtp" else ("h100-sxm", 1)
        r = speedup_curve(hw, model, m, acceptance=acc, k=3, batch=[1, 16], tp=tp, engine=engine_for(m))
        assert np.all(np.isfinite(r.speedup)) and np.all(r.speedup > 0), m
        assert np.all(r.spec_step_s >= r.verify_s), m


@pytest.mark.parametrize("method", ["eagle3", "draft", "ngram", "mtp"])
def test_k0_or_zero_acceptance_never_pays(method):
    model, hw, tp = ("deepseek-v3", "b200", 8) if method == "mtp" else ("llama-3.1-8b", "h100-sxm", 1)
    for acc, k in ((Acceptance.from_rate(0.8), 0), (Acceptance.from_rate(0.0), 3)):
        for eng in ("ideal", "sglang", "vllm"):
            r = speedup_curve(hw, model, method, acceptance=acc, k=k, batch=B_ALL[:6], tp=tp, engine=eng)
            assert np.all(r.speedup <= 1.0 + 1e-12), (method, k, eng, r.speedup)


def test_free_drafter_gives_tokens_per_step(tmp_path):
    # n-gram has no GPU work; with no overheads and a memory-bound verify whose math hides under its memory traffic
    # (gemm_overlap = 1: the roofline max), speedup -> tokens per step.
    spec = tmp_path / "h100-max.toml"
    doc = read_toml(data_dir("hardware_specs") / "h100-sxm.toml")
    doc["achievable"]["gemm_overlap"] = {"value": 1.0, "source": "estimate", "note": "Estimate: the roofline max"}
    spec.write_text(dump_toml(doc))
    r = speedup_curve(str(spec), "llama-3.1-8b", "ngram", acceptance=Acceptance.from_rate(0.6), k=3,
                      batch=[1, 2, 4], engine="ideal")
    assert np.allclose(r.speedup, r.tokens_per_step, rtol=0.01)
    assert np.all(r.speedup <= r.tokens_per_step)
    # on the shipped H100 (gemm_overlap 0.60) the verify of 4 x B tokens pays 0.4 of its GEMM math: a few % less
    d = speedup_curve("h100-sxm", "llama-3.1-8b", "ngram", acceptance=Acceptance.from_rate(0.6), k=3,
                      batch=[1, 2, 4], engine="ideal")
    assert np.all(d.speedup < r.speedup) and np.all(d.speedup > 0.95 * d.tokens_per_step)


@settings(max_examples=25)
@given(st.floats(0.0, 0.98), st.floats(0.0, 0.98), st.sampled_from(["eagle3", "draft", "ngram", "medusa"]))
def test_speedup_non_decreasing_in_acceptance(a, b, method):
    lo, hi = sorted((a, b))
    model = "vicuna-7b" if method == "medusa" else "llama-3.1-8b"
    kw = dict(k=3, batch=[1, 32, 256], engine=engine_for(method))
    r1 = speedup_curve("h100-sxm", model, method, acceptance=Acceptance.from_rate(lo), **kw)
    r2 = speedup_curve("h100-sxm", model, method, acceptance=Acceptance.from_rate(hi), **kw)
    assert np.all(r1.speedup <= r2.speedup + 1e-12)


def test_dense_speedup_non_increasing_past_compute_ridge():
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_rate(0.8), k=3,
                      batch=[128, 192, 256, 320, 384, 512], engine="ideal")
    assert r.verify_bound[0] == "compute"          # past the ridge: the verify pass is compute-bound
    assert np.all(np.diff(r.speedup) <= 1e-12), r.speedup


def test_moe_verify_grows_faster_than_dense():
    # Qwen3-30B-A3B (3.3B active) vs Llama-3.2-3B (3.2B): verify(k=4)/verify(k=1) at small batch.
    def ratio(model):
        a = Acceptance.from_rate(0.7)
        r4 = speedup_curve("h100-sxm", model, "ngram", acceptance=a, k=4, batch=[1, 2, 4], engine="ideal")
        r1 = speedup_curve("h100-sxm", model, "ngram", acceptance=a, k=1, batch=[1, 2, 4], engine="ideal")
        return r4.verify_s / r1.verify_s
    assert np.all(ratio("qwen3-30b-a3b") > ratio("llama-3.2-3b") * 1.2)


@pytest.mark.parametrize("tau", [4.25, 5.0])
def test_eagle3_h100_llama8b_batch1_between_2x_and_4x(tau):
    # Seed claim: EAGLE-3 gives 3-6.5x at batch 1 in the paper (Li et al. 2025, abstract) on HF baselines, and
    # SGLang's docs measure 158 -> 373 tok/s (2.36x) for Llama-3.1-8B on one H100. At tau 4.25-5 measured on a chain
    # of 5 (a chain of k averages fewer than k + 1 tokens) the shipped sglang profile must land between 2x and 4x.
    # At tau 3.5 it predicts ~1.7x: the shipped calibration puts ~5.8 ms of non-overlapped host work on every SGLang
    # speculative step (fitted on the Qwen3-30B-A3B EAGLE-3 reports at TP4; PR #11398 measured ~1.1 ms for a chain
    # at TP1), a finding recorded in validation/ACCURACY.md, not a tuned constant.
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_length(tau, 5), k=5,
                      batch=[1])
    assert 2.0 <= r.speedup[0] <= 4.0, r.speedup


def test_eagle3_speedup_rises_with_tau_at_fixed_cost():
    rs = [speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_length(t, 5), k=5,
                        batch=[1]).speedup[0] for t in (3.5, 4.25, 5.0)]
    assert rs[0] < rs[1] < rs[2] and rs[0] > 1.0


def test_medusa_64_token_tree_drops_below_1_before_batch_64():
    # Seed claim: a Medusa-style 64-token tree verifies 64 tokens per sequence, a prefill-sized pass at batch > 1
    # (SGLang docs / SafeAILab/EAGLE #269: "not using the tree" for bs > 1).
    r = speedup_curve("h100-sxm", "vicuna-7b", "medusa", tree_tokens=64, k=5, batch=[1, 2, 4, 8, 16, 32, 64],
                      engine=engine_for("medusa"))
    assert r.speedup[0] > 1.0
    assert r.crossover_batch is not None and r.crossover_batch < 64
    assert r.speedup[-1] < 1.0


def test_ngram_adds_no_memory():
    tgt = load_model("llama-3.1-8b")
    d = make_drafter("ngram", tgt)
    assert d.weights_bytes == 0.0 and d.kv_bytes(64, 4, 4096) == 0.0 and d.passes(5) == []
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "ngram", acceptance=Acceptance.from_rate(0.5), k=1, batch=[1])
    e = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_rate(0.5), k=1, batch=[1])
    assert r.memory_bytes[0] < e.memory_bytes[0]


def test_fp8_target_bf16_draft_priced_per_tensor():
    # The draft's format is its own: its passes differ, the target's verify does not. Which is faster depends on the
    # shard: on one GPU the fp8 draft's halved bytes win; on TP8 shards of a 1B draft (2-30 MB per GEMM) its activation
    # quantisation kernels cost more than the bytes save (measured on an H200: an fp8 linear takes 1.1-1.9x the bf16
    # GEMM at decode, validation/device/h200_fp8_linear.csv).
    tgt = load_model("llama-3.1-70b")
    d16 = make_drafter("draft", tgt, "llama-3.2-1b", Precision("bf16"), Parallelism(8))
    d8 = make_drafter("draft", tgt, "llama-3.2-1b", Precision("fp8"), Parallelism(8))
    assert set(d16.ops_all.dtype) == {"bf16"}
    assert "fp8" in set(d8.ops_all.dtype)
    assert d16.weights_bytes > 1.5 * d8.weights_bytes
    a = Acceptance.from_rate(0.7)
    r_mixed = speedup_curve("h100-sxm", "llama-3.1-70b", "draft", acceptance=a, k=3, tp=8, precision="fp8",
                            draft_precision="bf16", batch=[1])
    r_all8 = speedup_curve("h100-sxm", "llama-3.1-70b", "draft", acceptance=a, k=3, tp=8, precision="fp8",
                           draft_precision="fp8", batch=[1])
    assert r_mixed.scenario["precision"] == "fp8" and r_mixed.scenario["draft_precision"] == "bf16"
    assert r_mixed.draft_s[0] < r_all8.draft_s[0]                # TP8 shards: the quantisations outweigh the bytes
    assert r_mixed.verify_s[0] == pytest.approx(r_all8.verify_s[0])
    one = [speedup_curve("h100-sxm", "llama-3.1-8b", "draft", acceptance=a, k=3, precision="fp8", draft_precision=d,
                         batch=[1, 64]) for d in ("bf16", "fp8")]
    assert np.all(one[0].draft_s > one[1].draft_s)                  # one GPU: the halved bytes win
    assert one[0].verify_s == pytest.approx(one[1].verify_s)


def test_auto_k_is_best_and_crossover_consistent():
    a = Acceptance.from_rate(0.75)
    auto = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k="auto", batch=B_ALL, k_max=6)
    for kk in range(1, 7):
        fixed = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k=kk, batch=B_ALL)
        assert np.all(auto.speedup >= fixed.speedup - 1e-12)
    if auto.crossover_batch is not None:
        assert auto.speedup[list(auto.batch).index(auto.crossover_batch)] >= 1.0


def test_break_even_acceptance_gives_unit_speedup():
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_rate(0.7), k=3,
                      batch=[1, 64])
    for i, b in enumerate(r.batch):
        be = r.break_even_acceptance[i]
        assert np.isfinite(be)
        r2 = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=Acceptance.from_rate(be), k=3,
                           batch=[int(b)])
        assert r2.speedup[0] == pytest.approx(1.0, abs=1e-6)


def test_memory_max_batch_and_infeasible_points():
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "draft", acceptance=Acceptance.from_rate(0.6), k=4,
                      batch=[1, 4096], context=8192)
    assert r.max_batch_spec < r.max_batch_base
    assert not r.feasible[1] and "does not fit" in r.message[1]
    d = r.to_dict()
    assert d["points"][1]["speedup"] is None and d["points"][1]["feasible"] is False


def test_long_context_self_sparse_beats_full_draft():
    a = Acceptance.from_rate(0.8)
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "self-sparse", acceptance=a, k=3, batch=[32], context=32768,
                      engine="ideal", draft_kv_window=512)
    assert r.scenario["draft_kv_window"] == 512
    assert r.draft_s[0] < 3 * r.base_step_s[0]


def test_tree_and_input_errors():
    a = Acceptance.from_rate(0.7)
    with pytest.raises(ScenarioError, match="smaller than k"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k=5, tree_tokens=4)
    with pytest.raises(ScenarioError, match="k = -1"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k=-1)
    with pytest.raises(ScenarioError, match="verifies a chain"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "ngram", acceptance=a, k=3, tree_tokens=8)
    with pytest.raises(ScenarioError, match="no published default acceptance"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "ngram", k=3)
    with pytest.raises(ScenarioError, match=r"Python: Scenario\(acceptance=Acceptance.from_rate"):   # not flags only
        speedup_curve("h100-sxm", "llama-3.1-8b", "ngram", k=3)
    with pytest.raises(ScenarioError, match="unknown method"):
        make_drafter("lookahead", load_model("llama-3.1-8b"))


def test_drafter_mismatch_errors():
    a = Acceptance.from_rate(0.7)
    with pytest.raises(ScenarioError, match="hidden size 4096.*trained for another model"):
        speedup_curve("h100-sxm", "llama-3.1-70b", "eagle3", draft="eagle3-llama3.1-8b", acceptance=a, k=3, tp=8)
    with pytest.raises(ScenarioError, match="vocabulary"):
        speedup_curve("h100-sxm", "qwen3-8b", "eagle3", draft="eagle3-llama3.1-8b", acceptance=a, k=3)
    with pytest.raises(ScenarioError, match="trained for llama-3.1-8b, not llama-3.1-70b|hidden size"):
        speedup_curve("h100-sxm", "llama-3.1-70b", "eagle", draft="eagle-llama3-8b", acceptance=a, k=3, tp=8)
    with pytest.raises(ScenarioError, match="share a tokenizer"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "draft", draft="qwen3-0.6b", acceptance=a, k=3)
    with pytest.raises(ScenarioError, match="needs kind eagle3-head"):
        speedup_curve("h100-sxm", "vicuna-7b", "eagle3", draft="medusa-vicuna-7b", acceptance=a, k=3)
    with pytest.raises(ScenarioError, match="ships no MTP"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "mtp", acceptance=a, k=3)
    with pytest.raises(ScenarioError, match="needs --draft"):
        speedup_curve("h100-sxm", "mixtral-8x7b", "draft", acceptance=a, k=3, tp=2)
    with pytest.raises(ScenarioError, match="exceeds the 5 Medusa heads"):
        speedup_curve("h100-sxm", "vicuna-7b", "medusa", acceptance=a, k=6, engine=engine_for("medusa"))


def test_result_dataframe_and_json_views():
    pd = pytest.importorskip("pandas")
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k="auto", batch=[1, 64, 100000])
    df = r.to_dataframe()
    assert isinstance(df, pd.DataFrame) and list(df["batch"]) == [1, 64, 100000]
    assert df["feasible"].tolist() == [True, True, False]
    assert df["speedup"].iloc[:2].tolist() == pytest.approx(r.speedup[:2].tolist())
    assert df["speedup"].iloc[2] is None or pd.isna(df["speedup"].iloc[2])   # infeasible: no number
    d = r.to_dict()
    assert set(d) >= {"scenario", "points", "crossover_batch", "break_even_acceptance"}
    assert all(np.isfinite(r.speedup[:2]))


def test_review_fixes_tree_window_fc():
    from simulator.acceptance import expected_tokens_tree, tree_widths
    from simulator.features import causal_pairs
    from simulator.model import read_config, shape_from_config
    # Backbone tree: reaching depth j needs the top-1 path; a 64-token Medusa tree calibrated at tau 2.32 must not
    # yield more tokens from a reshaped tree of the same size at the same alpha than a generous bound allows.
    a = Acceptance.from_tree_length(2.32, tree_widths(64, 5, 13))
    assert a.expected_tokens_tree(tree_widths(64, 3, 21)) < 2.32 * 1.1
    assert expected_tokens_tree([0.5] * 3, [1, 1, 1]) == pytest.approx(1 + 0.5 + 0.25 + 0.125)
    # causal pairs among new tokens are capped at the sliding window
    assert float(causal_pairs(1, 8192, 128)) == 128 * 129 / 2 + (8192 - 128) * 128
    assert float(causal_pairs(2, 4, 1e300)) == 2 * 10
    # Qwen2 sliding layers are those with index >= max_window_layers (HF Qwen2Attention)
    cfg = read_config(__import__("simulator").data.data_dir("models") / "Qwen__Qwen2.5-7B-Instruct.json")
    cfg = dict(cfg, use_sliding_window=True, max_window_layers=21, sliding_window=4096)
    assert shape_from_config(cfg).n_window_layers == cfg["num_hidden_layers"] - 21
    # EAGLE-3's 3d -> d FC runs in the catch-up pass only
    d = make_drafter("eagle3", load_model("llama-3.1-8b"))
    passes = d.passes(4)
    assert "fc" in passes[0].ops.names and "fc" not in passes[1].ops.names
    e1 = make_drafter("eagle", load_model("llama-3.1-8b")).passes(4)
    assert "fc" in e1[1].ops.names            # EAGLE-1 feeds [feature; embedding] through its FC every step


def test_tree_that_cannot_be_built_is_an_error():
    a = Acceptance.from_rate(0.6)
    # depth 2 with frontier width 3 holds 3 + 3 x 3 = 12 draft nodes (EAGLE-2 / SGLang: topk x topk per later step)
    with pytest.raises(ScenarioError, match=r"a tree of 16 tokens needs 15 draft nodes; depth 2 with branching 3 "
                                            r"holds at most 12 \(3 \+ 1 x 3\^2\)"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k=2, tree_tokens=16, tree_branching=3)
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", acceptance=a, k="auto", tree_tokens=16,
                      tree_branching=3, batch=[1, 64])
    assert np.all(r.tree_tokens - 1 <= 3 + (r.k - 1) * 9)
    assert np.all(r.feasible)


def test_k0_is_plain_decoding_in_memory_too():
    """Audit bug: with k = 0 the drafter's weights and KV were still counted, so a batch that fits plain decoding
    was reported infeasible 'with speculation' (llama-3.1-8b on one H100: batch 422 fits, 403 did with k = 0, at the
    0.85 share of then; SGLang's start-up rule gives a server without a drafter 0.836, where 413 fit)."""
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k=0, batch=(1, 400, 413, 420))
    assert list(r.feasible) == list(r.base_feasible) == [True, True, True, False]
    assert r.max_batch_spec == r.max_batch_base == 413
    assert "+ draft" not in r.message[-1]                 # no drafter's weights or KV counted


def test_k0_has_no_crossover_and_each_verify_keeps_its_own_position_limit():
    """Reviews: at k = 0 crossover_batch was the largest batch (speedup 1.0 counted as paying); near
    max_position_embeddings (131072) the whole curve was refused because the widest verify passes the limit, though
    plain decoding needs one new token and a shallow depth fits."""
    assert speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k=0, batch=(1, 64)).crossover_batch is None
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", context=131069, batch=(1, 2))
    assert r.feasible.all() and r.base_feasible.all() and (r.tree_tokens <= 3).all() and (r.speedup > 1).all()
    np.testing.assert_array_equal(r.speedup, speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", context=131069,
                                                           batch=(1, 2), k=int(r.k[0])).speedup)
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", context=131071, batch=(1,))
    assert not r.feasible[0] and r.base_feasible[0] and "max_position_embeddings" in r.message[0]
    with pytest.raises(ScenarioError, match="context .* = 131072 leaves no position .* max_position_embeddings is "
                       "131072"):      # not even plain decoding fits: refused, no rows and no capacity figure
        speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", context=131072, batch=(1,))


def test_overhead_is_never_negative_zero():
    # Found by a CLI audit: the ideal engine (no host work) printed overhead_ms -0.000 on Llama-3.1-70B TP8, a float
    # round-off of spec - draft - verify; max(gpu, host) >= draft + verify, so the overhead is clipped at 0.
    r = speedup_curve("h100-sxm", "llama-3.1-70b", "eagle3", tp=8, engine="ideal", batch=[1, 8, 64])
    assert np.all(r.overhead_s >= 0.0) and not np.any(np.signbit(r.overhead_s))


def test_a_curve_says_where_speculating_batches_exceed_the_engines_running_cap():
    # SGLang runs at most 48 requests at once while speculating unless --max-running-requests is set
    # (server_args._handle_speculative_decoding; engine profile spec.max_running_requests). A fixed batch above the cap
    # is what a deployment that raises it runs (advise writes the flag), so the curve prices it and says so once.
    def cap_notes(s):
        return [n for n in predict(s).notes if "requests at once" in n]
    s = Scenario(engine="sglang", batch=[1, 32, 48, 56, 64])
    (note,) = cap_notes(s)
    assert note.startswith("sglang runs at most 48 requests at once (its default while speculating, unless "
                           "--max-running-requests is set): the speculative point(s) at batch 56, 64 price")
    (user,) = cap_notes(s.replace(max_running_requests=32))
    assert "at most 32 requests at once (--max-running-requests 32)" in user and "batch 48, 56, 64 price" in user
    assert cap_notes(s.replace(batch=[1, 48])) == [] and cap_notes(s.replace(max_running_requests=64)) == []
    assert cap_notes(s.replace(engine="vllm")) == []                # no cap of its own while speculating


def test_plain_step_reported_where_only_speculation_does_not_fit():
    """Found by review (2026-12-05): at a batch where plain decoding fits and speculation does not, base_ms was '-'."""
    r = speedup_curve(batch=[385, 10_000])
    d = r.to_dict()["points"]
    assert not r.feasible[0] and 385 <= r.max_batch_base and d[0]["base_step_s"] == pytest.approx(r.base_step_s[0])
    assert d[0]["speedup"] is None and d[1]["base_step_s"] is None


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 16), st.integers(1, 8), st.sampled_from(["eagle3", "eagle", "medusa"]))
@example(budget=4, k_max=8, method="eagle3")   # the review's case: k 6, 7 tokens verified
def test_auto_never_verifies_more_than_the_tree_budget(budget, k_max, method):
    """k = "auto" with a tree budget tries only shapes within it: a chain of k + 1 where k + 1 fits, and trees up to
    the budget (API review: tree_tokens = 4 chose k = 6 and verified 7 tokens, a shape a fixed k = 6 refuses)."""
    model, engine = ("vicuna-7b", "trtllm") if method == "medusa" else ("llama-3.1-8b", "sglang")
    r = predict(Scenario(model=model, method=method, engine=engine, tree_tokens=budget, k_max=k_max, batch=(1, 64)))
    ok = r.feasible
    assert (r.tree_tokens[ok] <= budget).all() and (r.k[ok] <= k_max).all()


def test_an_eagle_head_config_given_by_path_prices_as_by_its_id():
    """EAGLE's published head configs name LlamaForCausalLM with one decoder layer: given by path for an EAGLE method
    the head is read as one, priced as the bundled id prices it (API review: by path it was refused as a target
    model, with no way to say otherwise); a many-layer model is still refused as a head."""
    path = str(data_dir("models") / "yuhuili__EAGLE-LLaMA3-Instruct-8B.json")
    by_id = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle", draft="yuhuili/EAGLE-LLaMA3-Instruct-8B", batch=[1, 8])
    by_path = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle", draft=path, batch=[1, 8])
    np.testing.assert_allclose(by_path.speedup, by_id.speedup, rtol=1e-12)
    assert "read as an eagle-head" in by_path.scenario["drafter"]
    with pytest.raises(ScenarioError, match="is of kind target, but method eagle needs kind eagle-head"):
        speedup_curve("h100-sxm", "llama-3.1-8b", "eagle", draft=str(data_dir("models") /
                      "meta-llama__Llama-3.2-1B-Instruct.json"), batch=[1])
    # an EAGLE-3 method is not given an EAGLE-1 config by path, as by its id (review: it was read as an EAGLE-3 head)
    for d in (path, "eagle-llama3-8b"):
        with pytest.raises(ScenarioError, match="but method eagle3 needs kind eagle3-head"):
            speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", draft=d, batch=[1])


def test_medusas_default_tree_keeps_its_own_branching_at_every_depth():
    """Medusa's default 64-token tree is priced with the branching its acceptance is read with (13 candidates per
    depth): spread evenly over depth 1 it held 63 candidates, accepted with certainty (2.0 tokens per step at k = 1,
    API review). Depth 1 cannot hold it, so k = 1 is refused naming the fix; k = auto starts at a depth that can."""
    from simulator.drafters import MEDUSA_TREE_BRANCHING
    kw = dict(model="vicuna-7b", method="medusa", engine="trtllm", batch=(1, 8))
    assert Scenario(**kw).branching == MEDUSA_TREE_BRANCHING and Scenario(**kw, tree_branching=4).branching == 4
    assert Scenario(**kw, tree_tokens=16).branching is None          # a given tree spreads evenly, as before
    with pytest.raises(ScenarioError, match=r"depth 1 with branching 13 holds at most 13 .*raise k or tree_branching"):
        predict(Scenario(**kw, k=1))
    r = predict(Scenario(**kw, k="auto"))
    assert (r.k >= 2).all() and (r.tokens_per_step < r.k + 1).all()
    for k in range(2, 9):
        assert Scenario(**kw, k=k).verify(k).w == MEDUSA_TREE_BRANCHING


def test_auto_past_the_position_limit_says_no_depth_fits():
    """k = auto one position short of the limit: every depth is past it, and the message says so and that only k = 0
    remains (API review: it named 'context 131071 + 7 tokens', k = 6, an arbitrary depth); a fixed k names its own."""
    r = predict(Scenario(context=131071, batch=(1,)))
    assert not r.feasible[0] and r.message[0].startswith("no speculative depth fits: context 131071 + 2 tokens")
    assert "only k = 0" in r.message[0]
    f = predict(Scenario(context=131071, k=3, batch=(1,)))
    assert f.message[0] == "context 131071 + 4 tokens exceeds llama-3.1-8b's max_position_embeddings 131072"
