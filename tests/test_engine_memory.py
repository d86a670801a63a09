"""SGLang's start-up memory rule (engine_memory.sglang_memory_fraction): the share of each GPU a server started without
--mem-fraction-static gives weights and KV cache, priced per device, layout and drafter."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from simulator import Acceptance
from simulator.engine import load_engine
from simulator.engine_memory import sglang_memory_fraction
from simulator.errors import SpecError
from simulator.scenario import Scenario
from simulator.speedup import predict
from simulator.step import simulate_step

REPO = Path(__file__).resolve().parents[1]


def _reference(gpu_mib, tp, pp, dp, dp_attention, algo, graph_bs=None):
    """server_args.py _handle_gpu_memory_settings (PR #10975), transcribed branch by branch (CUDA, not NPU)."""
    if gpu_mib < 20 * 1024:
        chunk, bs = 2048, 8
    elif gpu_mib < 35 * 1024:
        chunk, bs = 2048, (24 if tp < 4 else 80)
    elif gpu_mib < 60 * 1024:
        chunk, bs = 4096, (32 if tp < 4 else 160)
    elif gpu_mib < 90 * 1024:
        chunk, bs = 8192, (256 if tp < 4 else 512)
    elif gpu_mib < 160 * 1024:
        chunk, bs = 8192, (256 if tp < 4 else 512)
    else:
        chunk, bs = 16384, 512
    bs = graph_bs or bs
    reserved_mem = 512
    reserved_mem += max(chunk, 2048) * 1.5
    reserved_mem += bs * 2
    reserved_mem += tp * pp / 8 * 1024
    if dp_attention:
        reserved_mem += bs * dp * 3
        if bs > 300:
            reserved_mem += bs * dp * 1.5
    if gpu_mib > 60 * 1024:
        reserved_mem = max(reserved_mem, 10 * 1024)
    if algo is not None:
        if algo == "STANDALONE":
            reserved_mem += 6 * 1024
        elif algo != "NGRAM":
            reserved_mem += 2 * 1024
    return round((gpu_mib - reserved_mem) / gpu_mib, 3)


ALGO = {None: None, "ngram": "NGRAM", "draft": "STANDALONE", "eagle": "EAGLE", "eagle3": "EAGLE3", "mtp": "NEXTN"}


@settings(max_examples=200)
@example(gib=141.0, tp=8, pp=1, dp=1, method="mtp", graph=None)           # DeepSeek / Kimi-K2 on 8x H200
@example(gib=80.0, tp=1, pp=1, dp=1, method="eagle3", graph=None)         # H100, one GPU: 0.811
@example(gib=80.0, tp=1, pp=1, dp=16, method="mtp", graph=None)           # DP attention over 16 H100s
@example(gib=192.0, tp=8, pp=1, dp=1, method="draft", graph=None)         # MI300X, a draft model
@example(gib=16.0, tp=1, pp=1, dp=1, method=None, graph=None)             # a T4-class GPU: no 10 GiB floor
@given(gib=st.sampled_from([16.0, 24.0, 40.0, 48.0, 80.0, 94.0, 141.0, 180.0, 192.0, 288.0]),
       tp=st.sampled_from([1, 2, 4, 8, 16]), pp=st.sampled_from([1, 2, 4]), dp=st.sampled_from([1, 2, 4, 8, 16]),
       method=st.sampled_from(sorted(ALGO, key=str)), graph=st.sampled_from([None, 8, 64, 256, 512]))
def test_the_rule_is_sglangs_own(gib, tp, pp, dp, method, graph):
    got = sglang_memory_fraction(gib, tp * dp, pp, dp, method, graph)
    want = _reference(gib * 1024, tp * dp, pp, dp, dp > 1, ALGO[method], graph)
    assert got == max(want, 0.0)
    assert 0.0 <= got < 1.0


@given(gib=st.sampled_from([40.0, 80.0, 141.0, 192.0]), tp=st.sampled_from([1, 2, 4, 8]),
       method=st.sampled_from(sorted(ALGO, key=str)), graph=st.sampled_from([8, 64, 256, 512]))
def test_the_share_falls_with_every_reserve(gib, tp, method, graph):
    f = lambda **kw: sglang_memory_fraction(**{**dict(hbm_gib=gib, tp_size=tp, pp=1, dp_attention=1,  # noqa: E731
                                                    method=method, graph_bs=graph), **kw})
    base = f()
    assert f(pp=2) <= base and f(graph_bs=2 * graph) <= base and f(dp_attention=4, tp_size=4 * tp) <= base
    assert f(method="draft") <= f(method="eagle3") <= f(method=None) == f(method="ngram")


def test_a_deployment_runs_the_rules_share_unless_it_sets_its_own():
    # SpecBundle's Kimi-K2 on 8x H200 under SGLang EAGLE-3 (SpecForge paper, arXiv 2603.18567 section 6.1): at the
    # representative 0.85 it was priced as not fitting (130.5-130.7 GB of FP8 weights per GPU against 128.7 GB);
    # SGLang's own rule there gives 0.883 (16.5 GiB reserved of 141 GiB), and the deployment ran.
    sc = dict(hardware="h200-sxm", model="kimi-k2", tp=8, precision="fp8", method="eagle3", engine="sglang", k=3,
              batch=(1, 8), context=2048)
    dep = Scenario(**sc).resolve()
    assert dep.eng.gpu_memory_fraction == 0.883
    r = predict(Scenario(**sc))
    assert r.feasible.all() and r.to_dict()["scenario"]["memory_fraction"] == 0.883
    no = predict(Scenario(**sc, memory_fraction=0.85))
    assert not no.feasible.any() and "x 0.85 gives" in no.message[0]
    # The message says where the share comes from: the rule, the deployment's own, or a profile's fixed value
    assert no.message[0].endswith("(that share of its memory: your deployment's memory_fraction, --memory-fraction), "
                                  "1.65 GB short")        # the shortfall, where the rounded totals can read equal
    big = predict(Scenario(**{**sc, "tp": 4}))
    assert big.message[0].endswith("x 0.887 gives 134.3 GB (that share of its memory: SGLang's start-up rule for "
                                   "this device, layout and drafter; set your server's own with memory_fraction, "
                                   "--memory-fraction), 125 GB short")
    vl = predict(Scenario(**{**sc, "tp": 4, "engine": "vllm"}))
    assert vl.message[0].endswith("x 0.92 gives 139.3 GB (that share of its memory: the engine profile's; set your "
                                  "server's own with memory_fraction, --memory-fraction), 127 GB short")
    assert "+ the engine's start-up reserve 7.1)" in vl.message[0]     # vLLM's profiling run (engine_memory)
    # A plain step is a server without a drafter: no drafter's 2 GiB reserved (`step` drops the method)
    assert simulate_step(scenario=Scenario(**sc)).scenario["memory_fraction"] == 0.897
    # --cuda-graph-max-batch is what SGLang reserves graph memory for: 2 MiB a slot, 64 in place of 512
    assert Scenario(**sc, cuda_graph_max_batch=64).resolve().eng.gpu_memory_fraction == 0.889
    # Under DP attention SGLang's --tp counts every GPU and each rank's graphs are reserved for
    dpa = dict(sc, model="deepseek-v3", method="mtp", tp=1, dp=8, ep=8)
    assert Scenario(**dpa).resolve().eng.gpu_memory_fraction == 0.755
    # A dense model's dp is replicas of tp GPUs each: no DP attention reserve, --tp its own
    dense = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", dp=4).resolve()
    assert dense.eng.gpu_memory_fraction == 0.811
    # Engines without a rule keep their profile's fixed share
    assert Scenario(**{**sc, "engine": "vllm"}).resolve().eng.gpu_memory_fraction == 0.92


@pytest.mark.parametrize("value", ['"vllm"', '"auto"', '""'])
def test_a_profile_naming_an_unknown_rule_is_refused(value, tmp_path):
    src = (REPO / "engine_profiles" / "sglang.toml").read_text()
    p = tmp_path / "mine.toml"
    p.write_text(src.replace('gpu_memory_fraction = { value = "sglang"', f"gpu_memory_fraction = {{ value = {value}"))
    with pytest.raises(SpecError, match=r"mine\.toml: \[memory\] gpu_memory_fraction: value = .*expected a number "
                                        r"in \[0\.1, 1\.0\] or \"sglang\""):
        load_engine(str(p))


def test_a_profile_may_give_a_fixed_share_in_place_of_the_rule(tmp_path):
    src = (REPO / "engine_profiles" / "sglang.toml").read_text()
    p = tmp_path / "fixed.toml"
    p.write_text(src.replace('gpu_memory_fraction = { value = "sglang"', "gpu_memory_fraction = { value = 0.8"))
    eng = load_engine(str(p))
    assert eng.memory_rule == "" and eng.gpu_memory_fraction == 0.8
    dep = Scenario(hardware="h200-sxm", model="llama-3.1-8b", engine=str(p)).resolve()
    assert dep.eng.gpu_memory_fraction == 0.8


def test_refitting_an_engine_keeps_each_deployments_share():
    # Found by review: calibration and cross-validation swap a freshly loaded profile into each row's deployment
    # (scenario.with_engine), which dropped SGLang's rule and the row's own share: SGLang rows were fitted at 100 % of
    # each GPU (V633: TTFT 14.7 s in the fit against 22.1 s in validate).
    from simulator.validation import load_rows, predict_prepared, prepare_row
    rows = {r["row_id"]: r for r in load_rows()}
    for rid in ("V633", "V730", "S120"):
        p = prepare_row(rows[rid])
        assert predict_prepared(p, load_engine("sglang")) == pytest.approx(predict_prepared(p), rel=1e-12), rid


def test_sglang_on_rocm_scales_its_share_for_long_context_models():
    # server_args.py: on the aiter attention backend (ROCm's default) with context_len > 8192 SGLang multiplies
    # mem_fraction_static by 0.85, given or computed
    sc = dict(hardware="mi300x", model="deepseek-r1", tp=8, precision="fp8", method="mtp", engine="sglang")
    eng = Scenario(**sc).resolve().eng
    assert eng.gpu_memory_fraction == pytest.approx(0.852 * 0.85) and eng.memory_rule == "sglang:rule+aiter"
    asked = Scenario(**sc, memory_fraction=0.8).resolve().eng
    assert asked.gpu_memory_fraction == pytest.approx(0.68) and asked.memory_rule == "sglang:asked+aiter"
    r = predict(Scenario(**sc, memory_fraction=0.3, batch=(1,)))
    assert not r.feasible[0] and r.message[0].endswith(
        "x 0.255 gives 52.6 GB (that share of its memory: your deployment's memory_fraction, --memory-fraction x 0.85, "
        "as SGLang scales any share on ROCm's aiter attention backend for a model of more than 8192 positions), "
        "34 GB short")
    # SGLang's HIP default for MLA is aiter only at 16 or 128 KV heads per rank (else triton, no factor): DeepSeek's
    # 128 at tp 8 is 16 per rank; at tp 4, 32; Kimi-K2's 64 at tp 8, 8
    for kw, rule in ((dict(tp=4), "sglang:rule"), (dict(model="kimi-k2", method="eagle3"), "sglang:rule"),
                     (dict(tp=1, dp=8, ep=8), "sglang:rule+aiter"), (dict(tp=1), "sglang:rule+aiter")):
        assert Scenario(**{**sc, **kw}).resolve().eng.memory_rule == rule, kw
    # A model of at most 8192 positions, an NVIDIA device, or another engine: no factor
    assert Scenario(hardware="mi300x", model="vicuna-7b", method="eagle", engine="sglang").resolve() \
        .eng.memory_rule == "sglang:rule"
    assert Scenario(**{**sc, "hardware": "h200-sxm"}).resolve().eng.gpu_memory_fraction == 0.883
    assert Scenario(**{**sc, "engine": "vllm"}).resolve().eng.gpu_memory_fraction == 0.92


def test_a_plain_server_holds_the_share_sglang_gives_it_without_a_drafter():
    # SGLang's rule reserves 2 GiB for EAGLE drafts: a server without speculation holds more (0.836 against 0.811 on
    # one H100), so the plain side of a comparison fits more sequences than the speculative one's share would allow
    r = predict(Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", batch=(1,)))
    sc = r.to_dict()["scenario"]
    assert (sc["memory_fraction"], sc["memory_fraction_plain"]) == (0.811, 0.836)
    plain = predict(Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", batch=(1,),
                             memory_fraction=0.836))
    assert r.max_batch_base == plain.max_batch_base > predict(Scenario(
        hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", batch=(1,),
        memory_fraction=0.811)).max_batch_base
    # k = 0 is a plain server on both sides; a deployment's own share holds for both
    k0 = predict(Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", k=0,
                          batch=(1,)))
    assert k0.max_batch_spec == k0.max_batch_base == r.max_batch_base
    asked = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang",
                     memory_fraction=0.8).resolve().eng
    assert asked.memory_share(True) == asked.memory_share(False) == 0.8


def test_advise_writes_sglangs_flag_before_its_rocm_factor():
    # SGLang multiplies the --mem-fraction-static it is given by 0.85 on aiter: the line carries the share before it
    # (found by review: 0.7242 was written, SGLang would run 0.616). vLLM's line had carried the share priced, 0.7242;
    # since 2026-12-06 (review: HF-priced advice wrote 1 there) SGLang's own rule is not written into vLLM's flag, a
    # note names it instead
    from simulator.advise import advise
    a = advise(hardware="mi300x", model="deepseek-r1", tp=8, precision="fp8", method="mtp", engine="sglang",
               batch_range=(1, 16), emit=("sglang", "vllm"))
    assert "--mem-fraction-static 0.852" in a.config("sglang").text
    assert any("SGLang multiplies the 0.852 written by 0.85" in n for n in a.config("sglang").notes)
    assert "--gpu-memory-utilization" not in a.config("vllm").text
    assert any("the share priced, 0.7242, is sglang's" in n for n in a.config("vllm").notes)
    h = advise(hardware="h200-sxm", model="deepseek-r1", tp=8, precision="fp8", method="mtp", engine="sglang",
               batch_range=(1, 16), emit=("sglang",))
    assert "--mem-fraction-static 0.883" in h.config("sglang").text


def test_k0_sweeps_and_frontiers_price_the_plain_share():
    # Found by review: the sweep tested k = 0 cells against the drafter's share, and frontier reported it on k = 0's
    # "on" points, where curve prices the plain server's (0.836 on one H100)
    from simulator.frontier import frontier
    from simulator.sweep import run_sweep
    from simulator.traffic import Workload
    base = dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang", k=0, context=8192)
    ds = run_sweep({**base, "acceptance_rate": 0.7, "batch": [48, 49, 50, 51]})
    from simulator.acceptance import Acceptance
    cv = predict(Scenario(**base, acceptance=Acceptance.from_rate(0.7), batch=(48, 49, 50, 51)))
    assert ds["feasible"].values.ravel().tolist() == cv.feasible.tolist()
    r = frontier(Scenario(**{k: v for k, v in base.items() if k != "context"}), Workload(isl=1024, osl=256),
                 gpus=(1,)).to_dict()
    assert {p["memory_fraction"] for p in r["frontier_on"] + r["frontier_off"]} == {0.836}


def test_frontier_points_carry_their_layouts_share():
    from simulator.frontier import frontier
    from simulator.traffic import Workload
    r = frontier(Scenario(hardware="h200-sxm", model="deepseek-r1", method="mtp", precision="fp8", engine="sglang"),
                 Workload(isl=1024, osl=1024), gpus=(8,)).to_dict()
    assert r["scenario"]["memory_fraction"] is None
    got = {(p["layout"], p["mode"]): p["memory_fraction"] for p in r["points"]} if isinstance(r["points"], list) \
        else {(p["layout"], p["mode"]): p["memory_fraction"] for p in r["frontier_on"] + r["frontier_off"]}
    assert got[("tp8 ep8", "on")] == 0.883 and got[("tp8 ep8", "off")] == 0.897
    assert all(v == (0.755 if mode == "on" else 0.770) for (lay, mode), v in got.items() if lay == "tp1xdp8 ep8")


def test_advise_writes_tensorrt_llms_share_of_free_memory_only_where_it_means_that():
    """TensorRT-LLM's kv_cache_config.free_gpu_memory_fraction is a share of the memory the weights and its start-up
    dry run leave (trtllm.toml [memory] share_of_free). advise wrote no share there and noted that it differs (the
    caveat), and wrote a --memory-fraction priced under TensorRT-LLM, a share of the free memory, into vLLM's and
    SGLang's flags, which are shares of the whole GPU (found by review, 2026-12-06: --gpu-memory-utilization 0.85
    'is the share priced'). Now each flag carries the share priced where it means the same, and a note otherwise."""
    from simulator.advise import advise
    kw = dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", acceptance=Acceptance.from_rate(0.7),
              batch_range=(1, 64),
              emit=("trtllm", "vllm", "sglang"))
    for asked, share in ((None, 0.9), (0.85, 0.85)):       # the profile's (trtllm-serve's default) and a deployment's
        a = advise(engine="trtllm", memory_fraction=asked, **kw)
        tr, vl, sg = (a.config(e) for e in ("trtllm", "vllm", "sglang"))
        assert tr.text.splitlines()[-2:] == ["kv_cache_config:", f"  free_gpu_memory_fraction: {share:g}"]
        assert any(n.startswith(f"kv_cache_config.free_gpu_memory_fraction {share:g} is the share priced")
                   for n in tr.notes)
        assert not any("not of the GPU" in n for n in tr.notes)         # the caveat is gone
        assert "--gpu-memory-utilization" not in vl.text and "--mem-fraction-static" not in sg.text
        if asked is not None:
            assert any(n.startswith("--gpu-memory-utilization is a share of the whole GPU, the share priced one of "
                                    "the memory the weights and the engine's start-up reserve leave: 0.85 is not "
                                    "written") for n in vl.notes)
            assert any("--mem-fraction-static is a share of the whole GPU" in n for n in sg.notes)
    v = advise(engine="vllm", memory_fraction=0.85, **kw)
    assert "--gpu-memory-utilization 0.85" in v.config("vllm").text
    assert "--mem-fraction-static 0.85" in v.config("sglang").text           # the same meaning: written
    assert "free_gpu_memory_fraction" not in v.config("trtllm").text
    assert any(n.startswith("kv_cache_config.free_gpu_memory_fraction is a share of the memory the weights and the "
                            "engine's start-up reserve leave, the share priced one of the whole GPU: 0.85 is not "
                            "written") for n in v.config("trtllm").notes)
    assert v.result.to_dict()["scenario"]["memory_share_of_free"] is False
    assert a.result.to_dict()["scenario"]["memory_share_of_free"] is True
