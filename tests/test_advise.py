"""`specroof advise` and simulator/advise.py: the per-batch k schedule built from `speedup_curve` results, the
switch-off batch, one config per engine in its own format, hazards and assumptions, and clean errors."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest

from simulator import Acceptance, Scenario, predict, speedup_curve
from simulator.acceptance import default_tree_branching
from simulator.advise import EMIT_ENGINES, MAX_POINTS, Advice, advise, advise_batches
from simulator.config_plan import ranges_text as _ranges
from simulator.errors import ScenarioError, SpecError

from .helpers import run


def no_nan(name):
    raise AssertionError(f"JSON contains {name}")


def vllm_json(text: str) -> dict:
    return json.loads(re.search(r"--speculative-config '(.*?)'", text).group(1))


def covers(schedule, lo, hi):
    assert schedule[0].start == lo and schedule[-1].end == hi
    for a, b in zip(schedule, schedule[1:]):
        assert b.start == a.end + 1 and (a.k, a.tree_tokens) != (b.k, b.tree_tokens)


@pytest.fixture(scope="module")
def eagle_vllm() -> Advice:
    """Pays over the whole range 1..256 with several k (the README's default scenario under vLLM)."""
    return advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm", batch_range=(1, 256),
                  emit=EMIT_ENGINES)


@pytest.fixture(scope="module")
def draft_off() -> Advice:
    """A separate draft model at alpha 0.7 on short contexts (128 tokens): the verify pass turns compute-bound and
    speculation stops paying inside 1..256 (at long contexts the KV reads keep it memory-bound: MagicDec)."""
    return advise(hardware="h100-sxm", model="llama-3.1-8b", method="draft", engine="vllm",
                  acceptance=Acceptance.from_rate(0.7), context=128,
                  batch_range=(1, 256), emit=["vllm", "sglang", "trtllm", "hf"])


# ---- batches ---------------------------------------------------------------------------------------------------

def test_advise_batches():
    assert advise_batches(3, 7).tolist() == [3, 4, 5, 6, 7]
    assert advise_batches(5, 5).tolist() == [5]
    assert advise_batches(1, 100, max_points=10).tolist() == [1, 2, 4, 8, 16, 32, 64, 100]
    assert advise_batches(3, 20, max_points=4).tolist() == [3, 4, 8, 16, 20]
    assert advise_batches(1, MAX_POINTS).size == MAX_POINTS


@pytest.mark.parametrize("args, msg", [
    ((0, 5), "smallest batch = 0"), ((5, 1), "batch range 5..1 is empty"), ((True, 4), "smallest batch = True"),
    ((1, 4.0), "largest batch = 4.0"), ((1, 8, 1), "max_points = 1"),
])
def test_advise_batches_errors(args, msg):
    with pytest.raises(ScenarioError, match=re.escape(msg)):
        advise_batches(*args)


def test_ranges_helper():
    assert _ranges([9, 3, 4, 5]) == "3-5, 9" and _ranges([]) == "" and _ranges([2]) == "2"


# ---- the schedule -----------------------------------------------------------------------------------------------

def test_schedule_is_the_best_k_where_it_pays(eagle_vllm):
    # The best k, or a smaller one within K_TOLERANCE of its speedup where that spares a range (the argmax flips on
    # tile rounding); k = 0 where speculation does not pay. The ranges report the scheduled depth's speedup.
    from simulator.advise import K_TOLERANCE
    a = eagle_vllm
    r = a.result
    assert r.batch.tolist() == list(range(1, 257)) and r.scenario["k"] == "auto"
    on = r.feasible & (r.speedup >= 1)
    assert np.array_equal(a.scheduled_k > 0, on)
    assert np.all(a.scheduled_speedup[on] >= r.speedup[on] * (1.0 - K_TOLERANCE) - 1e-12)
    assert np.array_equal(a.scheduled_speedup[on] == r.speedup[on], a.scheduled_k[on] == r.k[on])
    covers(a.schedule, 1, 256)
    for rng in a.schedule:
        idx = (r.batch >= rng.start) & (r.batch <= rng.end)
        assert set(a.scheduled_k[idx]) == {rng.k}
        assert rng.speedup_min == pytest.approx(a.scheduled_speedup[idx].min())
    assert a.pays and a.off_above is None and r.crossover_batch == 256 and a.dynamic
    assert a.interior_off == ()
    # The curve itself, same inputs: advise adds no model of its own.
    ref = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", engine="vllm", k="auto", batch=[1, 64, 256])
    assert np.allclose(r.speedup[[0, 63, 255]], ref.speedup)


def test_fixed_k_is_the_best_single_depth(eagle_vllm):
    a = eagle_vllm
    ks = [rng.k for rng in a.schedule if rng.k]
    assert min(ks) <= a.fixed_k <= max(ks) and a.fixed_tree_tokens == a.fixed_k + 1
    rel = a.fixed_speedup / a.result.speedup
    assert a.fixed_worst_ratio == pytest.approx(np.nanmin(rel)) and 0.5 < a.fixed_worst_ratio <= 1.0
    for k in {min(ks), max(ks)} - {a.fixed_k}:
        other = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", engine="vllm", k=k, batch=a.result.batch)
        assert np.min(other.speedup / a.result.speedup) <= a.fixed_worst_ratio + 1e-12


def test_switch_off_above_the_crossover(draft_off):
    a = draft_off
    r = a.result
    assert a.pays and a.off_above == r.crossover_batch and a.off_above < 256
    covers(a.schedule, 1, 256)
    last = a.schedule[-1]
    assert last.k == 0 and last.start == a.off_above + 1 and last.end == 256 and last.speedup_max < 1
    assert (a.scheduled_k[r.batch > a.off_above] == 0).all()


def test_sparse_grid_ends_the_on_range_at_the_crossover():
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="draft", engine="vllm",
               acceptance=Acceptance.from_rate(0.7), context=128,
               batch_range=(1, 300), max_points=8, emit=["vllm"])
    assert a.result.batch.tolist() == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]
    covers(a.schedule, 1, 300)
    cb = a.result.crossover_batch
    ends = {rng.end for rng in a.schedule}
    assert cb in ends and any(rng.start == cb + 1 and rng.k == 0 for rng in a.schedule)
    assert any("powers of two" in x for x in a.assumptions)


def test_moe_small_batch_is_switched_off_below_the_crossover():
    # alpha 0.3: at small batch the verify pass touches several times the experts of a decode step (alpha 0.5 until
    # 2026-12-07, when the routing locality of a sequence's verify tokens priced batch 1 at 1.015x; 0.45 until
    # 2026-12-08, when SGLang's bookkeeping refitted 2.12 -> 1.51 ms priced it at 1.083x: the scenario keeps a batch-1
    # loss so that the switch-off logic stays tested)
    a = advise(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", engine="sglang",
               acceptance=Acceptance.from_rate(0.3),
               batch_range=(1, 64), emit=["trtllm", "sglang"])
    r = a.result
    assert a.pays and r.speedup[0] < 1 and a.scheduled_k[0] == 0 and 1 in a.interior_off
    assert a.schedule[0].k == 0 and any("below the crossover too" in x for x in a.assumptions)
    # TensorRT-LLM refuses a draft_len_schedule whose smallest key is not max_draft_len (review, 2026-12-05: this
    # test had pinned the refused {9: 0, ...}), so a schedule that starts off is written as the one k, and says so
    text, notes = a.config("trtllm").text, a.config("trtllm").notes
    assert "draft_len_schedule:" not in text and f"max_draft_len: {a.fixed_k}" in text
    assert any("smallest batch key" in n and "also predicted to lose at batch(es) 1-" in n for n in notes)
    assert any("also predicted to lose at batch(es) 1-" in n for n in a.config("sglang").notes)


def test_never_pays():
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="sglang",
               acceptance=Acceptance.from_rate(0.02),
               batch_range=(1, 16), emit=["vllm", "sglang", "trtllm"])
    assert not a.pays and a.off_above is None and a.fixed_k == 0 and np.isnan(a.fixed_worst_ratio)
    assert len(a.schedule) == 1 and a.schedule[0].k == 0 and (a.scheduled_k == 0).all()
    for c in a.configs:
        assert c.supported and c.text == "" and "predicted not to pay" in c.notes[0]
    assert any("no engine config" in x for x in a.assumptions)
    json.loads(json.dumps(a.to_dict()), parse_constant=no_nan)


# ---- engine configs ---------------------------------------------------------------------------------------------

def test_vllm_config(eagle_vllm):
    """Several k over 1..256, none off, on a dense target: vLLM runs it on Model Runner V2 (its default for dense
    models from PR #44443), where the per-batch table keeps full CUDA graphs (PR #45953), so the table is written
    (review, 2026-12-05: the V1 runner's 14 % had withheld it); the note says what it costs on older builds."""
    c = eagle_vllm.config("vllm")
    assert c.supported and c.kind == "shell" and c.text.startswith("vllm serve meta-llama/Llama-3.1-8B-Instruct")
    cfg = vllm_json(c.text)
    assert cfg["method"] == "eagle3" and cfg["model"] == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    assert eagle_vllm.dynamic and eagle_vllm.fixed_worst_ratio >= 1.0 - 0.14
    assert cfg["num_speculative_tokens_per_batch_size"] == [[r.start, r.end, r.k] for r in eagle_vllm.schedule]
    assert cfg["num_speculative_tokens"] == max(r.k for r in eagle_vllm.schedule)
    assert any("#44443" in n and "#45953" in n and "PIECEWISE" in n for n in c.notes)
    assert "--max-num-seqs 256" in c.text


def test_vllm_config_of_an_moe_target_weighs_the_v1_graph_cost():
    """An MoE target still runs Model Runner V1, where the table costs 14 % by itself (PIECEWISE graphs, vLLM #49548):
    one k where the table would gain less, naming the table it left out (found by review: an eight-range table beside
    advise's own warning of that cost)."""
    a = advise(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", engine="vllm", batch_range=(1, 256),
               acceptance=Acceptance.from_rate(0.75), emit="vllm")
    ks = {r.k for r in a.schedule}
    cfg = vllm_json(a.config("vllm").text)
    if len(ks) > 1 and 0 not in ks and a.fixed_worst_ratio >= 1.0 - 0.14:
        assert "num_speculative_tokens_per_batch_size" not in cfg and cfg["num_speculative_tokens"] == a.fixed_k
        assert any(n.startswith("one k:") and "MoE models still run" in n for n in a.config("vllm").notes)
    else:      # the schedule at hand does not reach the gate: its rule, checked directly
        from simulator.config_plan import KRange
        from simulator.engine_configs import vllm_table_pays
        two = (KRange(1, 8, 4, 5, 2.0, 2.2), KRange(9, 64, 3, 4, 1.5, 1.9))
        assert not vllm_table_pays(two, 0.9, moe=True) and vllm_table_pays(two, 0.9, moe=False)


def test_vllm_table_pays_only_past_its_graph_cost():
    from simulator.config_plan import KRange
    from simulator.engine_configs import DSD_GRAPH_COST, vllm_table_pays

    two = (KRange(1, 8, 4, 5, 2.0, 2.2), KRange(9, 64, 3, 4, 1.5, 1.9))
    off = (KRange(1, 8, 3, 4, 2.0, 2.2), KRange(9, 64, 0, 0, 0.8, 0.9))
    moe = {"moe": True}                    # an MoE target: Model Runner V1, the table costs DSD_GRAPH_COST
    assert not vllm_table_pays(two[:1], 0.5, **moe)                          # one k: no table
    assert not vllm_table_pays(two, 1.0 - DSD_GRAPH_COST, **moe)             # the table's 14 % exactly: a tie
    assert vllm_table_pays(two, 1.0 - DSD_GRAPH_COST - 1e-9, **moe)          # the one k falls further below
    assert not vllm_table_pays(two, 0.87, **moe)   # review: 0.87 x 1.14 < 1 wrote a table losing by its own cost model
    assert vllm_table_pays(off, 0.99, **moe) and vllm_table_pays(off, float("nan"), **moe)  # speculation off
    assert vllm_table_pays(two, 0.99, moe=False)       # a dense target on Model Runner V2: the table costs nothing
    assert not vllm_table_pays(two[:1], 0.5, moe=False)                      # one k: no table there either


def test_vllm_table_gate_names_the_target_kind():
    """The gate's cost depends on whether the target routes to experts, so neither gate guesses it: `moe` is a
    required keyword (it had defaulted to True, an MoE target, which every caller overrode)."""
    from simulator.config_plan import KRange
    from simulator.engine_configs import vllm_table_pays, vllm_writes_table

    two = (KRange(1, 8, 4, 5, 2.0, 2.2), KRange(9, 64, 3, 4, 1.5, 1.9))
    for call, why in ((lambda: vllm_table_pays(two, 0.5), "keyword-only argument: 'moe'"),
                      (lambda: vllm_table_pays(two, 0.5, True), "positional"),
                      (lambda: vllm_writes_table(two, 0.5, 1, "eagle3"), "keyword-only argument: 'moe'"),
                      (lambda: vllm_writes_table(two, 0.5, 1, "eagle3", True), "positional")):
        with pytest.raises(TypeError, match=why):
            call()
    assert vllm_writes_table(two, 0.5, 1, "eagle3", moe=True) and not vllm_writes_table(two, 0.5, 2, "eagle3", moe=True)


def test_vllm_config_single_k_has_no_table():
    # a range over which the best k does not change (asserted): one k, no per-batch table
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", batch_range=(2, 4),
               tp=2, emit="vllm")
    assert len({r.k for r in a.schedule}) == 1, a.schedule
    cfg = vllm_json(a.config("vllm").text)
    assert "num_speculative_tokens_per_batch_size" not in cfg and not a.dynamic
    assert "--tensor-parallel-size 2" in a.config("vllm").text
    assert "vllm-dsd-piecewise-graphs" not in [h.id for h in a.hazards]


def test_vllm_config_with_off_range(draft_off):
    cfg = vllm_json(draft_off.config("vllm").text)
    assert cfg["method"] == "draft_model" and cfg["model"] == "meta-llama/Llama-3.2-1B-Instruct"
    table = cfg["num_speculative_tokens_per_batch_size"]
    assert table[-1] == [draft_off.off_above + 1, 256, 0]


def test_sglang_config(eagle_vllm, draft_off):
    c = eagle_vllm.config("sglang")
    k = eagle_vllm.fixed_k
    assert c.text.startswith("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct")
    for flag in ("--speculative-algorithm EAGLE3", "--speculative-draft-model-path yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
                 f"--speculative-num-steps {k}", "--speculative-eagle-topk 1",
                 f"--speculative-num-draft-tokens {k + 1}",
                 "--cuda-graph-max-bs 256"):
        assert flag in c.text, flag
    assert any("PR #22246" in n and "unmerged" in n for n in c.notes)
    d = draft_off.config("sglang")
    assert "--speculative-algorithm STANDALONE" in d.text
    assert any(f"lose above batch {draft_off.off_above}" in n for n in d.notes)


def test_trtllm_config(eagle_vllm, draft_off):
    c = eagle_vllm.config("trtllm")
    assert c.kind == "yaml" and "decoding_type: Eagle3" in c.text and "draft_len_schedule:" in c.text
    keys = re.findall(r"^    (\d+): (\d+)$", c.text, flags=re.M)
    # key 1 first (the first builds with draft_len_schedule require it; review 2026-12-05), then each range's end
    first = eagle_vllm.schedule[0]
    assert [(int(a), int(b)) for a, b in keys] == [(1, first.k)] * (first.end > 1) + \
        [(r.end, r.k) for r in eagle_vllm.schedule]
    assert "enable_padding: true" in c.text
    assert f"max_draft_len: {max(r.k for r in eagle_vllm.schedule)}" in c.text      # the smallest key's k
    d = draft_off.config("trtllm")
    assert "decoding_type: DraftTarget" in d.text
    assert "speculative_model_dir: meta-llama/Llama-3.2-1B-Instruct" in d.text
    # DraftTarget runs one-model by default and takes a per-step draft length (support_dynamic_draft_len; review
    # 2026-12-05: it had been written as a two-model drafter with one k), with a note for builds before that
    assert "draft_len_schedule:" in d.text and "max_concurrency" not in d.text
    assert any("support_dynamic_draft_len lists it" in n for n in d.notes)
    # NGram stays a drafter without one: one k, and speculation off above the crossover by max_concurrency
    n = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="trtllm", batch_range=(1, 256),
               acceptance=Acceptance.from_rate(0.5), emit="trtllm").config("trtllm")
    assert "draft_len_schedule" not in n.text


def test_trtllm_max_concurrency_with_one_k():
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="trtllm",
               acceptance=Acceptance.from_rate(0.5),
               batch_range=(1, 512), max_points=16, k_max=1)
    # one k (1) up to where speculation stops fitting, then off (the batches that fit only without it, then none)
    assert a.off_above is not None and [r.k for r in a.schedule] == [1, 0, 0]
    assert [r.fits for r in a.schedule] == ["yes", "without speculation", "no"] and a.off_fits
    text = a.config("trtllm").text
    assert f"max_concurrency: {a.off_above}" in text and "draft_len_schedule" not in text
    assert "decoding_type: NGram" in text and "speculative_model_dir" not in text
    assert "trtllm-schedule-off-stale-drafter" not in [h.id for h in a.hazards]   # ngram keeps no drafter state


def test_trtllm_stale_drafter_hazard_needs_a_switch_off():
    kw = dict(acceptance=Acceptance.from_rate(0.7), engine="trtllm", max_points=12)
    off = advise(hardware="h100-sxm", model="llama-3.1-8b", method="draft", batch_range=(1, 512), **kw)
    assert off.off_above is not None and off.options["batch_off"] is True
    assert "trtllm-schedule-off-stale-drafter" in [h.id for h in off.hazards]
    on = advise(hardware="h100-sxm", model="llama-3.1-8b", method="draft", batch_range=(1, 16), **kw)
    assert on.options["batch_off"] is False
    assert "trtllm-schedule-off-stale-drafter" not in [h.id for h in on.hazards]


def test_hf_config(draft_off):
    c = draft_off.config("hf")
    assert c.kind == "python" and 'assistant_model=AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B' \
        in c.text and f"num_assistant_tokens={draft_off.schedule[0].k}" in c.text
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="hf",
               acceptance=Acceptance.from_rate(0.6),
               batch_range=(1, 2))
    assert [c.engine for c in a.configs] == ["hf"] and "prompt_lookup_num_tokens=" in a.configs[0].text
    assert "hf-assisted-batch-1-only" in [h.id for h in a.hazards]
    b = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="hf",
               acceptance=Acceptance.from_rate(0.6),
               batch_range=(2, 3))
    assert b.configs[0].text == "" and "outside this range" in b.configs[0].notes[0]


def test_hf_no_pay_at_batch_1():
    a = advise(hardware="h100-sxm", model="qwen3-30b-a3b", method="draft", draft="qwen3-0.6b", engine="hf",
               acceptance=Acceptance.from_rate(0.3), batch_range=(1, 2))
    assert a.schedule[0].k == 0 and a.configs[0].supported
    assert a.configs[0].text == "" and "not predicted to pay at batch 1" in a.configs[0].notes[0]


@pytest.mark.parametrize("engine, method, kw, needle", [
    ("sglang", "suffix", {"acceptance": Acceptance.from_rate(0.6)}, "PR #13553"),
    ("sglang", "medusa", {"model": "vicuna-7b"}, "no Medusa"),
    ("trtllm", "medusa", {"model": "vicuna-7b"}, "legacy TensorRT engine flow"),
    ("hf", "eagle3", {}, "assistant_model"),
    ("vllm", "self-sparse", {"acceptance": Acceptance.from_rate(0.8)}, "self-speculation"),
])
def test_engines_without_the_method_say_so(engine, method, kw, needle):
    kw = {"model": "llama-3.1-8b", **kw}
    # no engine's profile runs self-sparse (the bound prices it); vLLM drafts Medusa only as a chain (the hf profile
    # runs its tree)
    priced = {"self-sparse": "ideal", "medusa": "hf"}.get(method, "vllm")
    a = advise(hardware="h100-sxm", method=method, engine=priced, batch_range=(1, 2), emit=[engine], **kw)
    c = a.config(engine)
    assert not c.supported and c.text == "" and needle in c.notes[0]


def test_mtp_configs_and_relaxed_acceptance():
    a = advise(hardware="b200", model="deepseek-r1", method="mtp", engine="trtllm", tp=8, precision="fp8",
               batch_range=(1, 8),
               options={"relaxed_acceptance": True}, emit=["trtllm", "sglang", "vllm"])
    t = a.config("trtllm").text
    assert "decoding_type: MTP" in t and "num_nextn_predict_layers:" in t and "tensor_parallel_size: 8" in t
    assert "use_relaxed_acceptance_for_thinking: true" in t and "speculative_model_dir" not in t
    # review: with the defaults relaxed_topk 1 and relaxed_delta 0 the switch relaxes nothing; NVIDIA's recipe values
    assert "relaxed_topk: 10" in t and "relaxed_delta: 0.6" in t
    assert "--speculative-algorithm NEXTN" in a.config("sglang").text
    assert "--speculative-draft-model-path" not in a.config("sglang").text
    assert vllm_json(a.config("vllm").text)["method"] == "mtp"
    assert [h.id for h in a.hazards][:1] == ["trtllm-relaxed-acceptance-lossy"]
    assert a.options["moe"] is True and "moe-speculation-under-load-overpredicted" not in [h.id for h in a.hazards]


def test_moe_load_miss_warned_from_the_model_up_to_the_range():
    # The option moe comes from the target: DeepSeek-R1 advised up to 64 sequences carries the measured miss of MoE
    # speedups under load (the range above, up to 8, does not); a dense target over the same range does not.
    kw = dict(hardware="b200", method="mtp", tp=8, precision="fp8", batch_range=(1, 64), max_points=6)
    a = advise(model="deepseek-r1", engine="sglang", **kw)
    assert a.options["moe"] is True and "moe-speculation-under-load-overpredicted" in [h.id for h in a.hazards]
    d = advise(model="llama-3.1-8b", method="eagle3", hardware="b200", batch_range=(1, 64), max_points=6)
    assert d.options["moe"] is False and "moe-speculation-under-load-overpredicted" not in [h.id for h in d.hazards]
    # The option is the model's: a Scenario that says otherwise is refused before any pricing, naming both.
    for model, say in (("llama-3.1-8b", True), ("deepseek-r1", False)):
        with pytest.raises(ScenarioError, match=f"options moe = {str(say).lower()} but model"):
            predict(Scenario(hardware="b200", model=model, method="mtp" if "deepseek" in model else "eagle3",
                             tp=8, batch=(1,), options={"moe": say}))
    assert advise(model="llama-3.1-8b", method="eagle3", hardware="b200", batch_range=(1, 4), max_points=2,
                  options={"moe": False}).options["moe"] is False          # agreeing with the model: accepted


def test_tree_overlap_and_hazards():
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", tree_tokens=16,
               batch_range=(1, 4),
               options={"overlap_scheduler": True, "prefix_caching": True}, emit=["sglang", "vllm", "trtllm"])
    assert any("speculative_token_tree" in n for n in a.config("vllm").notes)
    assert any("use_dynamic_tree" in n for n in a.config("trtllm").notes)
    c = a.config("sglang")      # a tree: SpecV2's variable does not apply to it (second review), the note says so
    assert not c.text.startswith("SGLANG_ENABLE_SPEC_V2") and any("a tree runs it only after v0.5.14" in n
                                                                  for n in c.notes)
    assert a.fixed_tree_tokens > a.fixed_k + 1
    w = default_tree_branching(a.fixed_tree_tokens, a.fixed_k)
    assert f"--speculative-num-draft-tokens {a.fixed_tree_tokens}" in c.text
    assert f"--speculative-eagle-topk {w}" in c.text and w > 1
    assert "sglang-overlap-needs-topk-1" in [h.id for h in a.hazards]
    assert "sglang-eagle-radix-reuse" in [h.id for h in a.hazards]
    assert a.options["prefix_caching"] is True and a.options["max_batch"] == 4


def test_advice_topk_reads_the_shape_priced_under_auto():
    # advise runs k = "auto": a k + 1 candidate of a budget with a branching is a chain (priced_shape), so its SGLang
    # line writes top-k 1 with SpecV2 and no top-k-1 warning; a tree the advice picks writes its width (second review:
    # dropping the auto flag wrote --speculative-eagle-topk 3 for a chain of 4)
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", tree_tokens=4,
               tree_branching=3, batch_range=(1, 8), spec_overlap=True, emit=["sglang"])
    c, chain = a.config("sglang"), a.fixed_tree_tokens == a.fixed_k + 1
    w = 1 if chain else min(3, a.fixed_tree_tokens - 1)
    assert f"--speculative-eagle-topk {w}" in c.text
    assert c.text.startswith("SGLANG_ENABLE_SPEC_V2") == chain
    assert ("sglang-overlap-needs-topk-1" in [h.id for h in a.hazards]) == (not chain)


def test_default_emit_and_placeholders():
    a = advise(hardware="h100-sxm", model="qwen3-8b", method="eagle3", engine="ideal",
               acceptance=Acceptance.from_rate(0.7),
               batch_range=(1, 2))
    assert [c.engine for c in a.configs] == ["vllm", "sglang", "trtllm"]
    assert "<path to eagle3-head-for-qwen3-8b>" in a.config("vllm").text
    assert "Qwen/Qwen3-8B" in a.config("vllm").text


def test_to_dict_is_strict_json(draft_off):
    d = json.loads(json.dumps(draft_off.to_dict()), parse_constant=no_nan)
    assert d["prediction"] is True and d["off_above"] == draft_off.off_above and len(d["points"]) == 256
    assert {c["engine"] for c in d["configs"]} == set(EMIT_ENGINES) and d["assumptions"]
    assert d["points"][0]["scheduled_k"] == draft_off.schedule[0].k


def test_assumptions_mark_a_prediction(eagle_vllm):
    text = " ".join(eagle_vllm.assumptions)
    assert "prediction, not a measurement" in text and "tau 2.79 at k=3" in text and "1024 tokens" in text


def test_infeasible_batches_are_reported():
    a = advise(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", engine="vllm",
               acceptance=Acceptance.from_rate(0.7),
               batch_range=(64, 200), max_points=8)
    assert not a.result.feasible[-1] and a.schedule[-1].k == 0
    assert any("does not fit" in x for x in a.assumptions)
    assert any("do not fit even without speculation" in x for x in a.assumptions)


# ---- errors -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, err, msg", [
    ({"batch_range": (1,)}, ScenarioError, "batch_range = (1,)"),
    ({"batch_range": "1-8"}, ScenarioError, "batch_range = '1-8'"),
    ({"batch_range": (0, 8)}, ScenarioError, "smallest batch = 0"),
    ({"batch_range": (8, 2)}, ScenarioError, "batch range 8..2 is empty"),
    ({"emit": ["tgi"]}, ScenarioError, "emit = ['tgi']"),
    ({"emit": []}, ScenarioError, "emit = []"),
    ({"emit": "tgi"}, ScenarioError, "emit = ['tgi']"),
    ({"options": {"prefix_cache": True}}, ScenarioError, "unknown deployment option 'prefix_cache'"),
    ({"hazard_files": ["/nonexistent.toml"]}, SpecError, "file not found"),
    ({"method": "ngram"}, ScenarioError, "has no published default acceptance"),
])
def test_advise_errors(kw, err, msg):
    with pytest.raises(err, match=re.escape(msg)):
        advise(**{"batch_range": (1, 2), **kw})


def test_config_lookup_error(eagle_vllm):
    a = advise(batch_range=(1, 2), emit=["vllm"])
    with pytest.raises(ScenarioError, match="no config for engine 'sglang'"):
        a.config("sglang")


# ---- CLI ------------------------------------------------------------------------------------------------------

ADV = ["advise", "--engine", "vllm", "--max-batch", "64"]


def test_cli_table(capsys):
    rc, out, err = run(capsys, *ADV)
    assert rc == 0 and err == ""
    assert out.startswith("specroof advise: a PREDICTION")
    for needle in ("best k per batch", "switch speculation off above batch:", "vllm:", "vllm serve ",
                   "--speculative-config", "assumptions:", "batches 1..64"):
        assert needle in out, needle


def test_cli_table_with_warnings_and_all_engines(capsys):
    rc, out, _ = run(capsys, "advise", "--method", "draft", "--acceptance-rate", "0.7", "--engine", "vllm",
                     "--batch", "1,512", "--max-points", "12", "--emit", "all", "--prefix-caching", "--dp", "2",
                     "--context", "128")
    assert rc == 0
    # Under DP 2 vLLM drops a per-batch table, so the config holds one k and says why in a note; the hazard about
    # that table (vllm-dsd-off-with-dp) no longer fires for a table advise did not write (review, 2026-12-05).
    for needle in ("vllm:", "sglang:", "trtllm:", "hf:", "switch speculation off above batch: ",
                   "one k: vLLM drops a per-batch table under data parallelism"):
        assert needle in out, needle
    assert "vllm-dsd-off-with-dp" not in out
    assert re.search(r"^\s*\d+-512\s+0\s+-\s+\d\.\d\d if on$", out, flags=re.M)   # the off range


def test_cli_json_and_csv(capsys):
    rc, out, _ = run(capsys, *ADV, "--format", "json", "--emit", "vllm,trtllm")
    d = json.loads(out, parse_constant=no_nan)
    assert rc == 0 and d["batch_range"] == [1, 64] and [c["engine"] for c in d["configs"]] == ["vllm", "trtllm"]
    rc, out, err = run(capsys, "advise", "--engine", "hf", "--method", "draft", "--acceptance-rate", "0.7",
                       "--batch", "1,3", "--format", "csv")
    lines = out.splitlines()
    assert rc == 0 and lines[0] == ("batch,best_k,tree_tokens,speedup,scheduled_k,scheduled_speedup,fixed_k_speedup,"
                                    "feasible")
    assert len(lines) == 4 and "hf-assisted-batch-1-only" in err
    rows = list(csv.DictReader(io.StringIO(out)))          # the JSON's scheduled speedups (review: CSV lacked them)
    sched = [p["scheduled_speedup"] for p in adv_json(capsys, "--engine", "hf", "--method", "draft",
                                                       "--acceptance-rate", "0.7", "--batch", "1,3")["points"]]
    assert [r["scheduled_speedup"] for r in rows] == ["" if x is None else f"{x:.4f}" for x in sched]


def test_cli_plot(capsys, tmp_path):
    png = tmp_path / "advice.png"
    rc, _, _ = run(capsys, *ADV, "--max-batch", "16", "--plot", str(png))
    assert rc == 0 and png.stat().st_size > 1000


def test_cli_never_pays_and_unsupported(capsys):
    rc, out, _ = run(capsys, "advise", "--method", "ngram", "--acceptance-rate", "0.02", "--max-batch", "4")
    assert rc == 0 and "switch speculation off: everywhere" in out and "one k for" not in out
    rc, out, _ = run(capsys, "advise", "--method", "suffix", "--acceptance-rate", "0.6", "--max-batch", "2",
                     "--engine", "vllm", "--emit", "vllm,sglang")
    assert rc == 0 and "sglang: no configuration" in out and "PR #13553" in out
    # priced on SGLang itself (the default engine), suffix is refused: SGLang's profile does not list it
    rc, out, err = run(capsys, "advise", "--method", "suffix", "--acceptance-rate", "0.6", "--max-batch", "2")
    assert rc == 2 and out == "" and "engine sglang does not run suffix" in err


def test_cli_tree(capsys):
    rc, out, _ = run(capsys, "advise", "--tree-tokens", "16", "--max-batch", "2", "--format", "table")
    assert rc == 0 and "--speculative-eagle-topk" in out


@pytest.mark.parametrize("args, needle", [
    (["--emit", "tgi"], "--emit 'tgi'"),
    (["--max-batch", "0"], "max-batch 0 must be >= 1"),
    (["--max-batch", "x"], "max-batch 'x' is not an integer"),
    (["--max-points", "0"], "max-points 0 must be >= 2"),
    (["--batch", "8", "--max-batch", "4"], "batch range 8..4 is empty"),
    (["--max-points", "1", "--batch", "1,4"], "argument --max-points: max-points 1 must be >= 2"),   # review
    (["--acceptance-length", "2.5", "--acceptance-k", "100000"], "acceptance-k 100000 must be <= 64"),    # review
    (["--hazards", "/nonexistent/x.toml"], "file not found"),
    (["--method", "ngram"], "no published default acceptance"),
    (["--acceptance-length", "2.5"], "--acceptance-length needs the k it was measured at"),
    (["--plot", "/nonexistent/dir/a.png", "--max-batch", "2"],
     "--plot /nonexistent/dir/a.png: folder /nonexistent/dir does not exist"),
])
def test_cli_errors(capsys, args, needle):
    rc, out, err = run(capsys, "advise", *args)
    assert rc == 2 and "Traceback" not in err and "Traceback" not in out
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and needle in last, last


def test_spec_overlap_is_priced_and_asks_sglang_for_specv2():
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", batch_range=(1, 8),
              emit=["sglang", "vllm"])
    v1, v2 = (advise(engine="sglang", spec_overlap=on, **kw) for on in (False, True))
    assert not v1.config("sglang").text.startswith("SGLANG_ENABLE_SPEC_V2")
    assert any("priced with the V1 worker" in n for n in v1.config("sglang").notes)
    assert v2.config("sglang").text.startswith("SGLANG_ENABLE_SPEC_V2=True ")         # a chain: the variable counts
    assert np.all(v2.result.spec_step_s <= v1.result.spec_step_s) and np.any(
        v2.result.spec_step_s < v1.result.spec_step_s)           # the advice prices the mode it tells SGLang to run
    assert v2.options["overlap_scheduler"] is True and v1.options["overlap_scheduler"] is False
    # vLLM overlaps its own speculative steps (async scheduling): that does not ask SGLang for SpecV2, even when
    # the scenario asks for the overlap (the SGLang hazards, e.g. SpecV2 with a tree, were not checked).
    for on in (None, True):
        v = advise(engine="vllm", spec_overlap=on, tree_tokens=16, **kw)
        assert v.result.scenario["spec_overlap"] is True and v.options["overlap_scheduler"] is True
        assert not v.config("sglang").text.startswith("SGLANG_ENABLE_SPEC_V2")
        # review (2026-12-05): the SGLang section said "priced with the V1 worker" of a prediction priced with vLLM's
        notes = " ".join(v.config("sglang").notes)
        assert "priced with another engine's profile, not SGLang's" in notes and "priced with the V1" not in notes
    # with pipeline stages too (second review): the PP note had claimed SGLang's own pricing ("as priced")
    v = advise(engine="vllm", method="eagle", pp=2, hardware="h100-sxm", model="llama-3.1-8b", batch_range=(1, 8),
               emit=["sglang"])
    notes = " ".join(v.config("sglang").notes)
    assert "priced with another engine's profile" in notes
    assert "as priced (host.overlap_with_spec_under_pp)" not in notes


def test_memory_limit_is_not_a_loss():
    """Audit bug: over 1..1e8 (powers of two) the first point past batch 256 did not fit, so advise said speculation
    loses above 256 and wrote --max-running-requests 100000000. The batches where memory runs out are priced too:
    it pays up to the last batch that fits with speculation, the configs admit at most what fits without it, and
    no note says it loses."""
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang")
    a = advise(**kw, batch_range=(1, 100_000_000))
    r = a.result
    # the edge is where the narrowest verify tried stops fitting (review: the widest one's edge called 394-401
    # infeasible though k = 1..3 fit there); every integer evaluated around it agrees
    dense = advise(**kw, batch_range=(370, 430))
    assert a.off_fits and a.off_above == r.narrowest[1] == dense.off_above == int(r.batch[r.feasible].max())
    assert a.off_above > 256 and a.to_dict()["off_reason"] == "does not fit"
    assert [x.fits for x in a.schedule[-2:]] == ["without speculation", "no"]
    assert a.schedule[-2].start == a.off_above + 1 and a.schedule[-1].start == r.max_batch_base + 1
    # an engine configured to speculate holds the drafter at every batch; SGLang runs its one k, so its cap is where
    # that k's verify stops fitting (review: it was the narrowest verify's edge)
    edge = r.edge(a.fixed_k, a.fixed_tree_tokens)
    assert 0 < edge <= r.narrowest[1]
    cfg = a.config("sglang")
    assert f"--max-running-requests {edge}" in cfg.text and "100000000" not in cfg.text
    assert not any("predicted to lose" in n for n in cfg.notes)
    assert any(f"above batch {edge} the verify of k = {a.fixed_k} does not fit" in n and
               f"hold up to {r.max_batch_base}" in n for n in cfg.notes)
    # a batch at the memory edge that the chosen k does not fit counts as served without speculation (1 / the best
    # speedup there), not 0, and the reported worst ratio is exactly that definition over the on-range
    on = r.feasible & (r.speedup >= 1)
    bs = tuple(int(b) for b in r.batch[on])
    kf = speedup_curve(**kw, k=a.fixed_k, batch=bs)
    rel = np.where(kf.feasible, kf.speedup, 1.0) / r.speedup[on]
    assert (~kf.feasible).any() and a.fixed_worst_ratio == pytest.approx(float(rel.min()), rel=1e-9)
    # the edge batches do not decide the depth (advise._fixed_k): where every candidate depth fits, none of them has
    # a better worst ratio than the one chosen (the shallowest, k = 1, included)
    runs = [speedup_curve(**kw, k=kk, batch=bs) for kk in range(int(r.k[on].min()), int(r.k[on].max()) + 1)]
    common = np.logical_and.reduce([c.feasible for c in runs])
    assert common.any() and int(r.k[on].min()) == 1
    assert all(float((kf.speedup / r.speedup[on])[common].min()) >=
               float((c.speedup / r.speedup[on])[common].min()) - 1e-12 for c in runs)


def test_nothing_feasible_writes_no_config():
    """Audit bug: a context past the model's positions made every point infeasible, yet advise said speculation
    'does not pay' and to serve without it. That context is now refused up front; a model too large for the GPU
    leaves every point infeasible the same way."""
    with pytest.raises(ScenarioError, match="max_position_embeddings is 131072"):
        advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", context=100_000_000,
               batch_range=(1, 8))
    a = advise(hardware="h100-sxm", model="llama-3.1-405b", method="eagle3", engine="sglang", batch_range=(1, 8))
    assert not a.pays and not a.result.feasible.any()
    note = a.config("sglang").notes[0]
    assert "with or without speculation" in note and "does not fit" in note
    assert "serve without it" not in note


def test_assumptions_name_the_acceptance_model_priced():
    """Audit: the assumptions said other depths extrapolate 'for an i.i.d. rate' where the method's per-position
    decay was priced."""
    dec = advise(Scenario(method="eagle3", engine="vllm", batch=[1, 8]))
    iid = advise(Scenario(method="eagle3", engine="vllm", batch=[1, 8], acceptance=Acceptance.from_rate(0.7)))
    assert any("per-position decay d = 0.9736" in a for a in dec.assumptions)
    assert any("i.i.d. (Leviathan et al. 2023 eq. 1)" in a for a in iid.assumptions)


def test_a_memory_edge_does_not_decide_the_one_k():
    """Audit: over 1..512 on one H100 only k = 1 fits at batches 399-401, which scored every deeper depth at
    1 / 1.21 there and let the mean pick k = 2 (worst case 82 %), where 1..300 picked k = 4 (95 %). With SGLang's
    refit draft-pass cost (0.54 ms, 2026-12-04) both ranges picked k = 3 (97 % over 1..300); with the measured 0.1 ms
    (PR #4247, 2026-12-05) both pick k = 4 (95 %)."""
    short, long = advise(Scenario(), batch_range=(1, 300)), advise(Scenario(), batch_range=(1, 512))
    assert short.fixed_k == long.fixed_k == 4 and short.fixed_worst_ratio > 0.9
    # The depth is chosen where every depth fits; its reported worst case still counts the edge batches it does not
    # fit at (review: the chosen depth's worst was reported over the compared batches only)
    edge = ~np.isnan(long.fixed_speedup)
    assert long.fixed_worst_ratio < short.fixed_worst_ratio and not edge.all()
    assert advise(Scenario(model="qwen3-30b-a3b"), batch_range=(1, 256)).fixed_k >= 4   # not k = 2 (1.94x at 64)


def test_dp_attention_configs_name_the_layout_and_per_rank_limits():
    """Review: a DP-attention layout (tp 1, dp 8, ep 8) was written as '--tp 1' or no parallelism at all, with the
    instance's batch as every limit. SGLang's --tp counts all GPUs and its cuda-graph cap is one rank's batch
    (CudaGraphRunner.can_run) while --max-running-requests is the instance's; vLLM runs one engine core per DP rank;
    TensorRT-LLM's max_batch_size is one attention-DP rank's. The deployment's memory share is written where the
    engine's flag means the same."""
    a = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method="mtp",
               engine="sglang", batch_range=(1, 256), memory_fraction=0.88, emit=("sglang", "vllm", "trtllm"))
    sg, vl, tr = (a.config(e).text for e in ("sglang", "vllm", "trtllm"))
    for flag in ("--tp 8", "--dp 8", "--enable-dp-attention", "--ep-size 8", "--cuda-graph-max-bs 32",
                 "--max-running-requests 256", "--mem-fraction-static 0.88"):
        assert flag in sg, flag
    for flag in ("--data-parallel-size 8", "--enable-expert-parallel", "--max-num-seqs 32",
                 "--gpu-memory-utilization 0.88"):
        assert flag in vl, flag
    assert "--tensor-parallel-size" not in vl
    table = vllm_json(vl).get("num_speculative_tokens_per_batch_size", [[1, 32, 0]])
    assert table[0][0] == 1 and table[-1][1] == 32        # one DP engine core's batch, as --max-num-seqs
    assert all(a[1] + 1 == b[0] for a, b in zip(table, table[1:]))
    for line in ("max_batch_size: 32", "tensor_parallel_size: 8", "enable_attention_dp: true",
                 "moe_expert_parallel_size: 8", "  max_batch_size: 32"):
        assert line in tr.splitlines(), line
    assert "free_gpu_memory_fraction" not in tr and any("0.88 is not written" in n for n in a.config("trtllm").notes)
    one = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=8, method="mtp", engine="sglang",
                 batch_range=(1, 64), emit=("sglang",))
    assert "--tp 8" in one.config("sglang").text and "--dp" not in one.config("sglang").text
    # the share priced, SGLang's start-up rule for 8x H200 with MTP (written: the --cuda-graph-max-bs written would
    # change what SGLang's rule reserves)
    assert "--mem-fraction-static 0.883" in one.config("sglang").text


def test_layouts_an_engine_cannot_run_get_no_config_and_limits_follow_the_engine():
    """Review: SGLang refuses NGRAM (and STANDALONE) with --enable-dp-attention; TensorRT-LLM's attention DP has one
    attention rank per GPU, so tp 2 x dp 4 is not one server; a dense model's dp runs replicas (no DP attention);
    a --cuda-graph-max-batch priced is the cap written; TensorRT-LLM's max_batch_size is one micro-batch (the executor
    admits pp x of it) and its schedule counts one rank's requests."""
    ng = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method="ngram",
                engine="sglang", batch_range=(1, 64), acceptance=Acceptance.from_rate(0.6), emit=("sglang",))
    assert not ng.config("sglang").supported and "enable-dp-attention" in ng.config("sglang").notes[0]
    t2 = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=2, dp=4, ep=8, method="mtp",
                engine="sglang", batch_range=(1, 64), emit=("trtllm", "sglang"))
    assert not t2.config("trtllm").supported and "separate servers" in t2.config("trtllm").notes[0]
    assert "--tp 8" in t2.config("sglang").text and "--dp 4" in t2.config("sglang").text
    dense = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", tp=1, dp=4,
                   batch_range=(1, 64), emit=("sglang", "trtllm"))
    sg = dense.config("sglang").text
    assert "--dp 4" in sg and "--enable-dp-attention" not in sg and "--max-running-requests 16" in sg
    assert not dense.config("trtllm").supported
    cap = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method="mtp",
                 engine="sglang", batch_range=(1, 256), cuda_graph_max_batch=8, emit=("sglang", "trtllm"))
    assert "--cuda-graph-max-bs 8" in cap.config("sglang").text
    assert "  max_batch_size: 8" in cap.config("trtllm").text.splitlines()
    sched = [ln for ln in cap.config("trtllm").text.splitlines() if ln.startswith("    ")]
    assert all(int(ln.split(":")[0]) <= 32 for ln in sched)                 # keys count one rank's 32 at most
    pp = advise(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle3",
                engine="vllm", batch_range=(1, 32), emit=("trtllm",))
    assert "max_batch_size: 16" in pp.config("trtllm").text.splitlines()


def test_pipeline_stages_are_written_for_each_engine():
    a = advise(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle3",
               engine="vllm", batch_range=(1, 32), emit=("sglang", "vllm", "trtllm"))
    assert "--pipeline-parallel-size 2" in a.config("vllm").text
    assert "pipeline_parallel_size: 2" in a.config("trtllm").text.splitlines()
    assert any("#57755" in n for n in a.config("vllm").notes)
    # SGLang's PP checks take only a single-layer EAGLE / NEXTN chain, without DP attention (review, 2026-12-05)
    assert not a.config("sglang").supported and "EAGLE3 is refused" in a.config("sglang").notes[0]
    e = advise(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle",
               engine="sglang", batch_range=(1, 32), emit=("sglang",)).config("sglang")
    assert e.text.startswith("SGLANG_ENABLE_PP_SPEC=1 ") and "SPEC_V2" not in e.text
    assert "--pp-size 2" in e.text and "--disable-overlap-schedule" in e.text
    assert any("#30775" in n for n in e.notes) and any("as priced (host.overlap_with_spec_under_pp)" in n
                                                       for n in e.notes)
    m = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, pp=2, method="mtp",
               engine="sglang", batch_range=(1, 64), emit=("sglang",)).config("sglang")
    assert not m.supported and "with DP attention is refused" in m.notes[0]
    df = advise(hardware="h200-sxm", model="deepseek-r1", precision="fp8", tp=1, dp=8, ep=8, method="dflash",
                engine="sglang", batch_range=(1, 64), acceptance=Acceptance.from_rate(0.7),
                emit=("sglang",)).config("sglang")
    assert not df.supported and "DFLASH" in df.notes[0]


def _argmax_ranges(a) -> int:
    """Ranges the per-batch argmax k would split the table into (equal neighbours merged)."""
    k = [int(x) if ok and x else 0 for x, ok in zip(a.result.k, a.result.feasible & (a.result.speedup >= 1.0))]
    return 1 + sum(x != y for x, y in zip(k, k[1:]))


def _fewest_ranges(a) -> int:
    """The fewest ranges of one depth each covering the on-batches, every batch within K_TOLERANCE of its best,
    priced here apart from advise: every chain depth up to the deepest best at every on-batch, then the least
    number of runs of consecutive batches sharing an admissible depth (a dynamic programme over the batches)."""
    from simulator.advise import K_TOLERANCE
    on = a.result.feasible & (a.result.speedup >= 1.0)
    B, best = a.result.batch[on], a.result.speedup[on]
    ks = range(1, int(a.result.k[on].max()) + 1)
    S = np.array([np.where(r.feasible, r.speedup, -np.inf)
                  for r in (predict(Scenario(k=k, batch=tuple(int(b) for b in B))) for k in ks)])
    ok = (S >= best * (1.0 - K_TOLERANCE)) | (np.array(ks)[:, None] == a.result.k[on][None, :])
    n = B.size
    f = [0] + [n + 1] * n                                    # f[j]: fewest ranges covering the first j batches
    for j in range(1, n + 1):
        common = np.ones(len(ks), dtype=bool)
        for i in range(j - 1, -1, -1):                       # the last range is batches i..j-1
            common &= ok[:, i]
            if not common.any():
                break
            f[j] = min(f[j], f[i] + 1)
    return f[n]


@pytest.mark.parametrize("kw", [
    {},                                                                     # the default: 22 argmax ranges on 1..256
    {"model": "llama-3.1-70b", "tp": 4, "engine": "vllm"},
    {"hardware": "b200", "model": "deepseek-r1", "tp": 8, "precision": "fp8", "method": "mtp", "engine": "trtllm"},
])
def test_the_table_keeps_every_batch_within_the_tolerance_in_fewer_ranges(kw):
    # The argmax flipped between neighbouring depths on GEMM tile rounding (differences of 1-3 %, below the model's
    # resolution): 21 ranges for Llama-3.1-8B EAGLE-3 on one H100 over batches 1..256, none gaining anything real.
    from simulator.advise import K_TOLERANCE
    a = advise(batch_range=(1, 256), **kw)
    on = a.scheduled_k > 0
    assert np.all(a.scheduled_speedup[on] >= a.result.speedup[on] * (1.0 - K_TOLERANCE) - 1e-12)
    assert np.all(a.scheduled_k[on] <= a.result.k[on].max())                  # no depth deeper than the best tried
    assert len(a.schedule) <= _argmax_ranges(a)
    if not kw:     # 19 argmax ranges (21 before the refit of 2026-12-04 that prices runs of N prompts, 22 with the
        # measured draft-pass cost of 2026-12-05, 23 with SpecBundle's rows in the fit, 22 with the refit after the
        # routing locality of 2026-12-07, 26 with the refit of 2026-12-08 without the Qwen3-30B-A3B user reports);
        # 5 scheduled with the calibration of 2026-12-03, 6 with the refits of 12-04, 5 with that of 12-05, 7 with
        # SpecBundle's, 3 since 2026-12-07's
        assert _argmax_ranges(a) == 26 and len(a.schedule) == _fewest_ranges(a), [(r.start, r.end, r.k)
                                                                                  for r in a.schedule]
    d = a.to_dict()
    assert all(p["scheduled_speedup"] is None or p["scheduled_speedup"] >= p["speedup"] * (1 - K_TOLERANCE) - 1e-12
               for p in d["points"])


def _trt_schedule(text: str) -> tuple[int, list[int]]:
    """max_draft_len (or MTP's layers) and the draft_len_schedule values of a spec.yaml."""
    depth = int(re.search(r"(?:max_draft_len|num_nextn_predict_layers): (\d+)", text).group(1))
    return depth, [int(k) for k in re.findall(r"^    \d+: (\d+)$", text, flags=re.M)]


@pytest.mark.parametrize("kw", [
    dict(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", acceptance=Acceptance.from_rate(0.7)),
    dict(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", acceptance=Acceptance.from_rate(0.5)),
    dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3"),
    dict(hardware="b200", model="deepseek-r1", tp=8, precision="fp8", method="mtp"),
    dict(hardware="h100-sxm", model="llama-4-scout", tp=4, method="eagle3"),
])
def test_trtllm_schedules_pass_its_validator(kw):
    """Review (2026-12-05): TensorRT-LLM's validate_draft_len_schedule_and_sort refuses a schedule whose smallest key
    is not max_draft_len, or with a value above it; advise had written {5: 3, 128: 7} under max_draft_len 7."""
    a = advise(engine="trtllm", batch_range=(1, 128), emit=("trtllm",), **kw)
    c = a.config("trtllm")
    if not c.text:
        return
    depth, values = _trt_schedule(c.text)
    assert not values or (values[0] == depth and max(values) <= depth)
    if not values and len({r.k for r in a.schedule if r.k}) > 1:
        assert depth == a.fixed_k and any("smallest batch key" in n for n in c.notes)


def test_vllm_table_only_where_vllm_runs_it():
    """Review (2026-12-05): vLLM drops the per-batch table under data parallelism and runs num_speculative_tokens
    (VllmConfig._maybe_disable_dynamic_sd_for_data_parallel), so the one k is written, not the table's largest k;
    the CPU n-gram proposer gets one k too; a table that switches K to 0 names issue #49548."""
    dp = advise(hardware="h200-sxm", model="llama-3.1-70b", tp=2, dp=2, method="eagle3", engine="vllm",
                batch_range=(1, 256), emit=("vllm",))
    cfg = vllm_json(dp.config("vllm").text)
    assert "num_speculative_tokens_per_batch_size" not in cfg and cfg["num_speculative_tokens"] == dp.fixed_k
    assert any("data parallelism" in n for n in dp.config("vllm").notes)
    ng = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="vllm", context=128,
                acceptance=Acceptance.from_rate(0.7), batch_range=(1, 256), emit=("vllm",))
    assert "num_speculative_tokens_per_batch_size" not in vllm_json(ng.config("vllm").text)


def test_vllm_off_table_warns_of_49548(draft_off):
    cfg = vllm_json(draft_off.config("vllm").text)
    assert cfg["num_speculative_tokens_per_batch_size"][-1][2] == 0
    notes = draft_off.config("vllm").notes
    assert any("#49548" in n and "prefills included" in n for n in notes)
    assert any("untested there" in n for n in notes)                     # draft_model: not in vLLM's tested list


def test_sglang_ngram_is_written_as_the_chain_priced():
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="sglang",
               acceptance=Acceptance.from_rate(0.6), batch_range=(1, 64), emit=("sglang",))
    assert "--speculative-ngram-max-bfs-breadth 1" in a.config("sglang").text


def test_trtllm_ngram_runs_without_the_overlap_scheduler():
    """TensorRT-LLM's support_overlap_scheduler excludes NGram: its host work per step is priced exposed."""
    from simulator.errors import ScenarioError
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="trtllm",
              acceptance=Acceptance.from_rate(0.6), batch=(1,), k=3)
    with pytest.raises(ScenarioError, match="runs ngram without its overlap scheduler"):
        predict(Scenario(spec_overlap=True, **kw))
    eng = Scenario(**kw).resolve().eng
    assert not eng.overlaps("ngram") and eng.overlaps("eagle3")


def test_sglang_prices_speculation_under_pipeline_stages_without_overlap():
    """SGLang's PP speculation runs only with --disable-overlap-schedule (host.overlap_with_spec_under_pp false): the
    speculative step is priced as the V1 worker's, equal to asking --no-spec-overlap, and spec_overlap = true is
    refused with pp > 1; pp = 1 keeps the overlap."""
    from simulator.errors import ScenarioError
    kw = dict(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, method="eagle", engine="sglang",
              batch=(1, 16), k=3)
    pp = predict(Scenario(pp=2, **kw))
    assert np.allclose(pp.speedup, predict(Scenario(pp=2, spec_overlap=False, **kw)).speedup)
    assert Scenario(pp=2, **kw).resolve().eng.overlap_with_spec is False
    assert Scenario(pp=1, **kw).resolve().eng.overlap_with_spec is True
    with pytest.raises(ScenarioError, match="pipeline stages only without its overlap scheduler"):
        Scenario(pp=2, spec_overlap=True, **kw).resolve()


def test_advise_takes_a_tree_budget_with_its_branching():
    """Found by review (2026-12-05): advise priced each chain depth with the tree's branching kept, which a chain
    refuses, so `advise --tree-tokens 16 --tree-branching 4` failed; a smaller tree takes at most its draft tokens
    per depth (verify_shape), and a branching above the budget's own draft tokens is refused by name."""
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", tree_tokens=16,
               tree_branching=4, batch_range=(1, 64), emit=("sglang",))
    assert a.pays and any(r.tree_tokens > r.k + 1 for r in a.schedule) and any(r.tree_tokens == r.k + 1
                                                                                for r in a.schedule)
    with pytest.raises(ScenarioError, match="tree_branching = 1000 is more candidates per depth than the tree's 9"):
        advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", tree_tokens=10,
               tree_branching=1000, batch_range=(1, 64), emit=("sglang",))


def adv_json(capsys, *args: str) -> dict:
    rc, out, _ = run(capsys, "advise", *args, "--format", "json")
    assert rc == 0
    return json.loads(out, parse_constant=no_nan)


def test_cli_one_k_line_names_the_batches_it_loses_at(capsys):
    """Found by review (2026-12-05): 'worst case 100% of the per-batch best' beside a loss at batches 1-16 where the
    table switches speculation off and one k cannot. (Acceptance rate 0.35 then; 0.30 since the refit with SpecBundle's
    rows, whose lower SGLang bookkeeping makes 0.35 pay at batch 1; on Qwen3-30B-A3B EAGLE-3 since 2026-12-08, when the
    refit without the Qwen3-30B-A3B user reports (bookkeeping 2.12 -> 1.51 ms) left Llama-3.1-8B's curve at k = 1 with
    no small-batch loss: it pays from batch 1 at 0.22 and nowhere at 0.20; Qwen3-30B-A3B's verify touches more experts
    than its plain step, so it loses at batches 1-14 at 0.30.)"""
    rc, out, _ = run(capsys, "advise", "--model", "qwen3-30b-a3b", "--method", "eagle3", "--acceptance-rate", "0.30",
                     "--k-max", "1", "--batch", "1..256")
    line = next(ln for ln in out.splitlines() if ln.startswith("one k for engines"))
    assert rc == 0 and "where speculation is on; speculation is predicted to lose at batch(es) 1-" in line


def test_advise_prices_a_medusa_chain_as_a_chain():
    """Found by review (2026-12-05, pre-existing): advise priced each Medusa chain depth with no tree size, which is
    Medusa's default 64-token tree, so the schedule printed 0.74x where the curve priced 2.67x."""
    # priced on HF's profile: vLLM drafts Medusa only as a chain, so a 4-token tree at depths 1-2 is refused there
    a = advise(hardware="h100-sxm", model="vicuna-7b", method="medusa", engine="hf", tree_tokens=4,
               acceptance=Acceptance.from_rate(0.8), batch_range=(100, 256), emit=("vllm",))
    on = [r for r in a.schedule if r.k > 0]
    assert on and all(r.speedup_min > 1.0 for r in on)
    r = a.result
    for rng in on:
        i = [j for j, b in enumerate(r.batch) if rng.start <= b <= rng.end and r.feasible[j]]
        assert rng.speedup_max <= max(r.speedup[i]) * (1 + 1e-9)


def test_a_table_starting_above_batch_1_keeps_the_first_k_below_it():
    """Found by review (2026-12-05): --batch 8..512 wrote [1, 7, 0] into vLLM's table, switching speculation off at the
    batches never evaluated and where it pays most; TensorRT-LLM then fell back to one k for a schedule 5 -> 4 -> 3."""
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm", batch_range=(8, 512),
               acceptance=Acceptance.from_rate(0.6), context=128, emit=("vllm", "trtllm"))
    table = vllm_json(a.config("vllm").text)["num_speculative_tokens_per_batch_size"]
    assert table[0][0] == 1 and table[0][2] == a.schedule[0].k > 0
    assert any("batches 1-7, below the range, were not evaluated" in n for n in a.config("vllm").notes)
    t = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="trtllm", batch_range=(4, 256),
               emit=("trtllm",)).config("trtllm")
    depth, values = _trt_schedule(t.text)
    assert values and values[0] == depth == max(values)


def test_trtllm_depth_is_the_rank_tables_largest_k():
    """Found by review (2026-12-05): under attention DP the rank table starts at instance batch dp, so the instance's
    largest k (at batches below dp) need not be in it; max_draft_len must be the table's own largest k."""
    from simulator.config_plan import ConfigPlan, KRange
    from simulator.engine_configs import engine_configs
    sched = (KRange(1, 3, 5, 6, 2.0, 2.1), KRange(4, 64, 4, 5, 1.8, 2.0), KRange(65, 256, 3, 4, 1.2, 1.8))
    p = ConfigPlan(method="eagle3", target="x", draft="d", tp=1, ep=8, lo=1, hi=256, schedule=sched, off_above=None,
                   pays=True, fixed_k=4, fixed_T=5, fixed_ratio=0.9, topk=1, options={}, dp=4, moe=True)
    depth, values = _trt_schedule(engine_configs(p, ("trtllm",))[0].text)
    assert values and values[0] == depth == max(values)


def test_vllm_one_k_says_where_speculation_loses():
    """Found by review (2026-12-05): with one k (n-gram) the table's switch-off above the crossover went unsaid."""
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="ngram", engine="vllm", context=128,
               acceptance=Acceptance.from_rate(0.6), batch_range=(1, 256), emit=("vllm",))
    assert a.off_above is not None
    assert any(f"cap --max-num-seqs {a.off_above} for latency-bound serving" in n for n in a.config("vllm").notes)


def test_sglang_pipeline_check_reads_the_one_k_it_runs():
    """Found by review (2026-12-05): a tree budget with a chain as the one k was refused as 'EAGLE as a tree'."""
    a = advise(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle",
               engine="sglang", tree_tokens=8, batch_range=(1, 256), emit=("sglang",))
    c = a.config("sglang")
    assert c.supported == (a.fixed_tree_tokens == a.fixed_k + 1)


def test_sglang_pipeline_stages_where_speculation_never_pays_is_not_refused():
    """Found by review (2026-12-05): with nothing paying the one k is (0, 0), which the pipeline check read as a tree
    and refused, hiding 'serve without it'."""
    a = advise(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle",
               engine="sglang", acceptance=Acceptance.from_rate(0.05), batch_range=(64, 256), emit=("sglang",))
    c = a.config("sglang")
    assert not a.pays and c.supported and "not to pay" in c.notes[0]


def test_sglang_hazards_read_the_one_k_sglang_runs(capsys):
    """Found by review (2026-12-05): a chain config for SGLang beside an [unsupported] 'refuses draft trees' warning
    (the hazard read the schedule's widest shape); serve had no topk, so the tree warning never fired there."""
    kw = dict(hardware="h100-sxm", model="llama-3.1-405b", precision="fp8", tp=8, pp=2, method="eagle",
              engine="sglang", tree_tokens=8, batch_range=(1, 256), emit=("sglang",))
    a = advise(**kw)
    assert a.fixed_tree_tokens == a.fixed_k + 1
    assert "sglang-pp-spec-tree-or-dp-attention" not in [h.id for h in a.hazards]
    rc, out, _ = run(capsys, "serve", "--model", "llama-3.1-405b", "--precision", "fp8", "--tp", "8", "--pp", "2",
                     "--method", "eagle", "--tree-tokens", "8", "--engine", "sglang", "--format", "json")
    d = json.loads(out)
    assert rc == 0 and any(p["spec"]["verify_tokens"] > p["spec"]["k"] + 1 for p in d["points"] if p["spec"]["k"])
    assert "sglang-pp-spec-tree-or-dp-attention" in [h["id"] for h in d["hazards"]]


def test_hazards_see_the_table_only_where_the_vllm_config_holds_one():
    """Found by review (2026-12-05): under DP 2 advise wrote one k (vLLM drops a per-batch table there) yet set
    dynamic_k and warned vllm-dsd-piecewise-graphs and vllm-dsd-off-with-dp about a table it had not written."""
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm", dp=2, batch_range=(1, 1024),
               emit=("vllm",))
    assert "num_speculative_tokens_per_batch_size" not in a.config("vllm").text
    assert a.options["dynamic_k"] is False
    assert not {"vllm-dsd-piecewise-graphs", "vllm-dsd-off-with-dp"} & {h.id for h in a.hazards}


def test_vllm_suffix_config_names_the_package_it_needs():
    # review (2026-12-05): vLLM refuses to start suffix decoding without Arctic Inference
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="suffix", engine="vllm", batch_range=(1, 64),
               acceptance=Acceptance.from_rate(0.6), emit="vllm")
    c = a.config("vllm")
    assert vllm_json(c.text)["method"] == "suffix" and any("pip install arctic-inference" in n for n in c.notes)


def test_sglang_eagle1_config_says_how_sglang_reads_the_head():
    # review (2026-12-05): SGLang's model_config renames a draft's LlamaForCausalLM to its EAGLE-3 class
    a = advise(hardware="h100-sxm", model="llama-3.1-8b", method="eagle", engine="sglang", batch_range=(1, 16),
               emit="sglang")
    assert any("LlamaForCausalLMEagle3" in n and "LlamaForCausalLMEagle," in n for n in a.config("sglang").notes)


def test_vllms_reserve_is_sized_by_the_max_num_seqs_advise_writes():
    """Review (2026-12-06): advise priced vLLM's start-up reserve at its default 1024 sampler rows (5.7 GB on
    Llama-3.1-70B at TP2) while it wrote --max-num-seqs 6: speculation was switched off above batch 6 as not fitting,
    where the server it configures fits 34. The memory edges are now those of the range's top per DP rank at most,
    the most the written cap can be; a cap the user sets is kept."""
    s = Scenario(hardware="h100-sxm", model="llama-3.1-70b", tp=2, engine="vllm", method="eagle3")
    a = advise(s, batch_range=(1, 64))
    seqs = int(re.search(r"--max-num-seqs (\d+)", a.config("vllm").text).group(1))
    assert seqs == a.off_above > 6 and a.off_fits
    served = predict(s.replace(max_running_requests=seqs, batch=(seqs, seqs + 1)))
    assert served.feasible.tolist() == [True, False]
    assert a.result.max_batch_spec == predict(s.replace(max_running_requests=64, batch=(1,))).max_batch_spec
    kept = advise(s.replace(max_running_requests=1024), batch_range=(1, 64))
    assert kept.off_above == 6                                 # vLLM's default reserve, as the user asked
    dp = advise(Scenario(model="llama-3.1-8b", engine="vllm", method="eagle3", dp=2), batch_range=(1, 512))
    per_rank = Scenario(model="llama-3.1-8b", engine="vllm", method="eagle3", dp=2, batch=(1,))
    assert dp.result.max_batch_base == predict(per_rank.replace(max_running_requests=256)).max_batch_base \
        > predict(per_rank).max_batch_base                   # 512 over 2 ranks: 256 rows each, not 1024


def test_another_engines_memory_share_is_not_written_into_a_flag():
    """Review (2026-12-06): advise priced under HF (its profile's share, 1.0) wrote --gpu-memory-utilization 1 into
    vLLM's line, and a vLLM prediction wrote vLLM's 0.92 as SGLang's --mem-fraction-static: a share is an engine's own
    start-up rule or profile value, so another engine's flag gets a note instead. A share the deployment asks for
    (memory_fraction) is the deployment's, written for every engine whose flag means the same."""
    hf = advise(model="llama-3.1-8b", method="eagle3", engine="hf", batch_range=(1, 16), emit=("vllm", "sglang"))
    assert "--gpu-memory-utilization" not in hf.config("vllm").text
    assert "--mem-fraction-static" not in hf.config("sglang").text
    assert any("is hf's" in n for n in hf.config("vllm").notes + hf.config("sglang").notes)
    vl = advise(model="llama-3.1-8b", method="eagle3", engine="vllm", batch_range=(1, 16), emit=("vllm", "sglang"))
    assert "--gpu-memory-utilization 0.92" in vl.config("vllm").text
    assert "--mem-fraction-static" not in vl.config("sglang").text
    asked = advise(model="llama-3.1-8b", method="eagle3", engine="hf", batch_range=(1, 16), memory_fraction=0.8,
                   emit=("vllm", "sglang"))
    assert "--gpu-memory-utilization 0.8" in asked.config("vllm").text
    assert "--mem-fraction-static 0.8" in asked.config("sglang").text


def test_vllm_refuses_expert_parallelism_over_part_of_the_instance():
    """Review: --ep 2 on 4 GPUs wrote --enable-expert-parallel, which vLLM runs over every GPU (EP size = TP x DP;
    FusedMoEParallelConfig.make sets ep_size to the flattened tp x dp, no EP size flag exists), not the priced
    layout of experts split 2 ways inside; SGLang (--ep-size) and TensorRT-LLM (moe_expert_parallel_size) take it."""
    kw = dict(hardware="h100-sxm", model="qwen3-30b-a3b", method="eagle3", batch_range=(1, 16),
              emit=("vllm", "sglang", "trtllm"))
    part = advise(tp=4, ep=2, **kw)
    vl = part.config("vllm")
    assert not vl.supported and "EP size = TP x DP = 4" in vl.notes[0] and "--ep 4" in vl.notes[0]
    assert "--ep-size 2" in part.config("sglang").text
    assert "moe_expert_parallel_size: 2" in part.config("trtllm").text.splitlines()
    whole = advise(tp=4, ep=4, **kw).config("vllm")
    assert whole.supported and "--enable-expert-parallel" in whole.text


def test_sglang_ngram_and_dflash_name_their_overlap_not_the_eagle_worker():
    """Review: NGRAM's SGLang section said 'priced with the V1 worker ... SGLANG_ENABLE_SPEC_V2=0', and DFLASH's was
    prefixed SGLANG_ENABLE_SPEC_V2=True as 'SGLang's default from v0.5.11'; neither reads the variable: v0.5.11
    turns the overlap scheduler off for both (server_args.py _handle_speculative_decoding), later builds keep it."""
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", engine="sglang", batch_range=(1, 16), emit=("sglang",),
              acceptance=Acceptance.from_rate(0.6))
    ng = advise(method="ngram", **kw).config("sglang")
    df = advise(method="dflash", **kw).config("sglang")
    for c, alg in ((ng, "NGRAM"), (df, "DFLASH")):
        notes = " ".join(c.notes)
        assert not c.text.startswith("SGLANG_ENABLE_SPEC_V2") and "SGLANG_ENABLE_SPEC_V2" not in notes
        assert f"SGLang v0.5.11 turns it off for {alg}" in notes and "V1 worker" not in notes
    assert "priced without the overlap scheduler" in " ".join(ng.notes)
    assert "priced with the overlap scheduler" in " ".join(df.notes) and "--no-spec-overlap" in " ".join(df.notes)
    eagle = advise(method="eagle3", **{**kw, "acceptance": None}).config("sglang")
    assert eagle.text.startswith("SGLANG_ENABLE_SPEC_V2=True ")          # the EAGLE family still reads it
