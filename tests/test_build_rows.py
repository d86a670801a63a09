"""tools/build_rows.py: validation/rows.csv is what the staged sources map to, and the launch facts of InferenceX's
single-node SGLang MTP scripts land on the rows of their runs only."""

from __future__ import annotations

import sys

import pytest

from simulator.validation import load_rows

from .helpers import load_tool


@pytest.fixture(scope="module")
def br():
    return load_tool("build_rows")


def test_rows_csv_is_what_the_sources_map_to(br):
    built, _ = br.build()
    shipped = load_rows()
    assert len(built) == len(shipped)
    for b, s in zip(built, shipped):
        assert {c: str(b.get(c, "")) for c in br.COLS} == {c: s.get(c, "") for c in br.COLS}, b["row_id"]


def _out(**kw):
    base = dict(engine="sglang", method="mtp", model="deepseek-r1", hardware="h200-sxm", isl="1024", osl="1024",
                concurrency="64", expert_precision="", overlap_scheduler="", spec_max_running="", notes="")
    return {**base, **kw}


@pytest.mark.parametrize("kw,cap,v2", [
    ({}, "512", "true"),                                                  # H200 1k/1k (PR #1523)
    ({"isl": "8192"}, "256", "true"),                                     # H200 otherwise
    ({"hardware": "b200"}, "512", ""),                                    # B200: SpecV2 not exported (PR #626)
    ({"hardware": "mi355x"}, "64", "true"),                               # MI355X FP8: the concurrency
    ({"hardware": "mi355x", "expert_precision": "mxfp4"}, "", "true"),    # MI355X FP4: SGLang's 48 stays
])
def test_each_script_sets_its_own_facts(br, kw, cap, v2):
    out = _out(**kw)
    br.ix_sglang_mtp(out, disagg=False)
    assert (out["spec_max_running"], out["overlap_scheduler"]) == (cap, v2)
    assert "InferenceX" in out["notes"] or "created 2026-05-20" in out["notes"]


@pytest.mark.parametrize("kw,disagg", [({}, True), ({"method": ""}, False), ({"model": "gpt-oss-120b"}, False),
                                       ({"engine": "trtllm"}, False), ({"hardware": "h100-sxm"}, False)])
def test_no_facts_on_other_runs(br, kw, disagg):
    out = _out(**kw)
    before = dict(out)
    br.ix_sglang_mtp(out, disagg=disagg)
    assert out == before


@pytest.mark.parametrize("kw,disagg,share", [
    ({}, False, "0.82"),                                                  # dsr1_fp8_h200(_mtp).sh
    ({"method": ""}, False, "0.82"),                                      # the plain script of the pair
    ({"hardware": "b200", "tp": "4", "method": ""}, False, "0.95"),       # dsr1_fp8_b200.sh at TP4
    ({"hardware": "b200", "expert_precision": "fp4"}, False, "0.85"),
    ({"hardware": "mi355x", "expert_precision": "mxfp4"}, False, "0.8"),
    ({}, True, ""),                                                       # disaggregated: the recipe's, not these
    ({"hardware": "h100-sxm"}, False, ""),                                # no such script
    ({"engine": "trtllm"}, False, ""),
])
def test_single_node_sglang_rows_carry_their_scripts_memory_share(br, kw, disagg, share):
    out = dict(_out(**kw), memory_fraction="", tp=kw.get("tp", "8"))
    br.ix_sglang_memory(out, disagg=disagg)
    assert out["memory_fraction"] == share and (("--mem-fraction-static " + share) in out["notes"]) == bool(share)


def test_srt_slurm_decode_rows_carry_the_decode_instances_memory_share(br):
    out = dict(_out(), memory_fraction="")
    recipe = "recipes/h100/1k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml"
    br.srt_slurm_decode(out, [f"MTP k source: NVIDIA/srt-slurm HEAD {recipe}"])
    assert (out["spec_max_running"], out["memory_fraction"]) == ("64", "0.85")
    assert "mem-fraction-static 0.85" in out["notes"]


def test_inferencex_rows_carry_the_kv_format_of_their_runs_launch_flags():
    # sources/inferencex_kv.csv: every entry lands on a row, with its evidence in the notes; Hopper SGLang runs kept
    # the KV cache in bf16 (no --kv-cache-dtype in their scripts and recipes), the others stored it in fp8.
    import csv

    from simulator.rows import default_rows_path
    with open(default_rows_path().parent / "sources" / "inferencex_kv.csv", encoding="utf-8") as f:
        table = {(r["source_id"], r["locator"]): r for r in csv.DictReader(f)}
    rows = load_rows()
    keyed = {(r["source_id"], r["locator"]) for r in rows}
    assert set(table) <= keyed                                                      # none dangles
    for r in rows:
        t = table.get((r["source_id"], r["locator"]))
        if t is None:
            assert "KV cache fp8:" not in r["notes"] and "KV cache bf16:" not in r["notes"]
            continue
        assert r["kv_precision"] == t["kv_precision"] and f"KV cache {t['kv_precision']}: {t['evidence']}" in r["notes"]
    ix = [r for r in rows if r["source_id"] == "inferencex" and r["kv_precision"]]
    assert len(ix) > 700
    assert {r["kv_precision"] for r in ix if r["engine"] == "sglang" and r["hardware"] in ("h100-sxm", "h200-sxm")} \
        == {"bf16"}
    assert {r["kv_precision"] for r in ix if r["engine"] == "trtllm"} == {"fp8"}


def test_amd_eagle3_blog_maps_minimax_as_its_inferencex_run_and_leaves_kimi_out():
    # AMD's EAGLE3 blog (MI355X, vLLM ROCm): the MiniMax-M2.5 rows are InferenceX's minimaxm2.5-fp8-mi355x-vllm-eagle3
    # run (FP8 target, TP4 + EP4, KV fp8, range ratio 0.8); the blog's "BF16" is the draft. Kimi-K2.5 states no k.
    from tools.rowmap.common import Skip
    from tools.rowmap.speculative import s_amd_eagle3
    r = {"model": "MiniMaxAI/MiniMax-M2.5", "metric": "speedup"}
    out = {"model": r["model"], "precision": "bf16", "expert_precision": "bf16", "attention_precision": "",
           "kv_precision": "", "ep": "", "length_ratio": "", "metric": "speedup", "notes": ""}
    s_amd_eagle3(r, out)
    assert (out["model"], out["precision"], out["kv_precision"], out["ep"], out["length_ratio"], out["metric"]) == \
        ("minimax-m2.5", "fp8", "fp8", "4", "0.8", "throughput_ratio")
    assert out["expert_precision"] == out["attention_precision"] == ""     # all FP8: the collector's BF16 goes
    assert "63cd9a387" in out["notes"] and "acceptance length not reported" in out["notes"]
    with pytest.raises(Skip, match="Kimi-K2.5 not bundled"):
        s_amd_eagle3({"model": "amd/Kimi-K2.5-MXFP4", "metric": "speedup"}, dict(out))
    rows = [r for r in load_rows() if r["source_id"] == "vllm-rocm-eagle3-mi355x"]
    assert len(rows) == 15 and {r["model"] for r in rows} == {"minimax-m2.5"}
    assert sorted({r["metric"] for r in rows}) == ["throughput_ratio", "tokens_per_s_per_gpu"]


def test_ids_stay_with_their_rows_when_a_source_is_added(br):
    # Found by review (2026-12-05): a new source id that sorts before others renumbered their rows (S092-S119 had
    # become S389-S416, stale in examples/ and SOURCES.md). A row keeps the id the committed rows.csv gave it; a new
    # row takes the next number of its prefix, after the first 44 for S.
    rows = [{"row_id": "S000", "published_row": f"sources/speculative.csv:{i}"} for i in (1, 2, 3)] + \
        [{"row_id": "D000", "published_row": "sources/decode.csv:7"}]
    br.keep_ids(rows, {"sources/speculative.csv:2": "S050", "sources/decode.csv:7": "D003"}, floor=44)
    assert [r["row_id"] for r in rows] == ["S051", "S050", "S052", "D003"]
    fresh = [{"row_id": "S000", "published_row": "x"}, {"row_id": "V000", "published_row": "y"}]
    br.keep_ids(fresh, {}, floor=44)
    assert [r["row_id"] for r in fresh] == ["S045", "V001"]
    shipped = {r["row_id"]: r["source_id"] for r in load_rows()}
    assert shipped["S107"] == "vllm-rocm-eagle3-mi355x" and shipped["S120"] == "specbundle-dashboard"


def test_the_first_files_later_rows_keep_their_ids_when_a_staged_row_is_added(br, tmp_path):
    # Found by review (2026-12-07): previous_ids kept only staged rows, so the Spec-Bench RTX 3090 rows (published_row
    # R0556 ..., after the first 44) took new numbers after any new staged speculative row.
    shipped = {r["published_row"]: r["row_id"] for r in load_rows()}
    assert [shipped[p] for p in ("R0556", "R0558", "R0559", "R0560")] == ["S417", "S418", "S419", "S420"]
    prev = br.previous_ids(br.VAL / "rows.csv")
    assert prev["R0556"] == "S417" and "R0163" not in prev          # the first 44's ids are their position
    staged = [{"row_id": "S001", "published_row": p} for p, i in prev.items() if i.startswith("S") and p[0] != "R"]
    late = [{"row_id": "S045", "published_row": p} for p in ("R0556", "R0558", "R0559", "R0560")]
    new = [{"row_id": "S001", "published_row": "sources/speculative.csv:9999"}]
    br.keep_ids(staged + new + late, prev, floor=44)
    assert [r["row_id"] for r in late] == ["S417", "S418", "S419", "S420"]
    assert new[0]["row_id"] not in set(shipped.values())


def test_specbundle_rows_carry_the_papers_layout_and_leave_out_what_cannot_be_compared():
    from tools.rowmap.common import Skip
    from tools.rowmap.speculative import s_specbundle

    rows = [r for r in load_rows() if r["source_id"] == "specbundle-dashboard"]
    assert len(rows) == 377 and sum(r["metric"] == "speedup" for r in rows) == 370
    tp = {(r["locator"].split(" / ")[0], r["model"], r["tp"]) for r in rows}
    assert tp == {("Llama-3.1-8B-Instruct", "llama-3.1-8b", "1"), ("Llama-3.3-70B-Instruct", "llama-3.3-70b", "4"),
                  ("Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b", "4"), ("Kimi-K2-Instruct", "kimi-k2", "8"),
                  ("Qwen3-Coder-30B-A3B-Instruct", "qwen3-30b-a3b", "4"),
                  ("Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b", "8"),
                  ("Qwen3-Next-80B-A3B-Instruct-FP8", "qwen3-next-80b-a3b", "4"),
                  ("Ling-flash-2.0", "ling-flash-2.0", "8"),
                  ("Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b", "8")}
    # what the dashboard leaves out is inferred from the checkpoint, and the row says how
    ling = [r for r in rows if r["model"] == "ling-flash-2.0"]
    assert {r["precision"] for r in ling} == {"bf16"} and all("BF16 102,889,697,280" in r["notes"] for r in ling)
    coder = [r for r in rows if r["model"] == "qwen3-coder-480b-a35b"]
    assert {r["n_gpus"] for r in coder} == {"8"} and all("TP8 inferred (not stated)" in r["notes"] for r in coder)
    assert {r["draft"] for r in rows if "lmsys/sglang-EAGLE3-LLaMA3.1" in r["locator"]} == {"sglang-eagle3-llama3.1-8b"}
    chain = next(r for r in rows if "steps 3, topk 1, num_draft_tokens 4" in r["locator"])
    tree = next(r for r in rows if "steps 7, topk 4, num_draft_tokens 8" in r["locator"])
    assert (chain["k"], chain["tree_tokens"], chain["tau_k"]) == ("3", "", "3")
    assert (tree["k"], tree["tree_tokens"], tree["tree_branching"]) == ("7", "8", "4")
    assert {r["engine_date"] for r in rows} == {"2025-12"} and {r["precision"] for r in rows} == {"bf16", "fp8"}
    scout = {"model": "meta-llama/Llama-4-Scout-17B-16E-Instruct", "metric": "speedup"}
    with pytest.raises(Skip, match="25 of its 70 speculative runs measure a speedup above their own acceptance"):
        s_specbundle(scout, {})


def test_disaggregated_sglang_rows_take_their_recipes_decode_share_where_the_candidates_agree(br):
    # The KV evidence of a disaggregated SGLang row names the srt-slurm recipes its configuration could have run;
    # their decode instance's mem-fraction-static (sources/srt_slurm_shares.csv) is the row's where they agree.
    from rowmap.common import srt_slurm_share  # importable once the br fixture has loaded build_rows
    kv = ("KV cache bf16: srt-slurm recipes/h200/8k1k/bs128-1p1d-dep.yaml@838acc8c,5063eb43: (none) || srt-slurm "
          "recipes/h200/8k1k/bs128-agg-tp.yaml@961c9f82,5063eb43: (none)")
    out = dict(engine="sglang", dp="8", memory_fraction="", notes="disaggregated: 8 prefill + 8 decode GPUs; " + kv)
    srt_slurm_share(out)              # the aggregated recipe is not a disaggregated run's: the DEP8 recipe's 0.88
    assert out["memory_fraction"] == "0.88" and "bs128-1p1d-dep.yaml@838acc8c" in out["notes"]
    tp = ("srt-slurm recipes/h200/1k1k/bs256-1p6d-dep.yaml@838acc8c: x || srt-slurm "
          "recipes/h200/1k1k/bs256-1p6d-tp.yaml@838acc8c: x")
    for dp, want in (("8", "0.82"), ("1", "0.82")):
        o = dict(engine="sglang", dp=dp, memory_fraction="", notes="disaggregated: 8 + 48; " + tp)
        srt_slurm_share(o)
        assert o["memory_fraction"] == want
    # "max-tpt" is a recipe's throughput tier, not TP attention (found by review: the DEP rows of GB200 lost theirs)
    gb = dict(engine="sglang", dp="32", memory_fraction="",
              notes="disaggregated: 4 + 32; srt-slurm recipes/gb200-fp8/1k1k/max-tpt.yaml@686df21e: x")
    srt_slurm_share(gb)
    assert gb["memory_fraction"] == "0.82"
    # A row with its own share, another engine, a single-node run, or candidates that disagree: left as it is
    mixed = ("srt-slurm recipes/h200/8k1k/bs128-1p1d-dep.yaml@838acc8c: x || srt-slurm "
             "recipes/h200/1k1k/bs256-1p6d-dep.yaml@838acc8c: x")
    for o in (dict(engine="sglang", dp="8", memory_fraction="0.7", notes="disaggregated: " + kv),
              dict(engine="trtllm", dp="8", memory_fraction="", notes="disaggregated: " + kv),
              dict(engine="sglang", dp="8", memory_fraction="", notes=kv),
              dict(engine="sglang", dp="8", memory_fraction="", notes="disaggregated: " + mixed)):
        before = dict(o)
        srt_slurm_share(o)
        assert o == before


@pytest.mark.parametrize("notes, want", [
    ("decode max_batch_size 16 per rank (recipe); disaggregated: 8 prefill + 32 decode GPUs", "16"),   # staged
    ("disaggregated: 16 prefill + 48 decode GPUs; srt-slurm recipes/trtllm/h100-fp8/1k1k/stp/"
     "ctx1_gen3_tep16_batch8_eplb0_mtp0.yaml@5063eb43,4a22a181: x", "8"),                           # one recipe
    ("disaggregated: 8 prefill + 72 decode GPUs; srt-slurm recipes/trtllm/h200/1k1k/stp/c16_ctx1_gen9_tep8_"
     "batch256_eplb0_mtp0.yaml@75f6e32a: x || srt-slurm recipes/trtllm/h200/1k1k/stp/c1_ctx1_gen9_tep8_batch1_"
     "eplb0_mtp0.yaml@5063eb43: x", ""),                                                          # they disagree
    ("srt-slurm recipes/trtllm/h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0.yaml@5063eb43: x", ""),  # agg
])
def test_disaggregated_trtllm_rows_take_their_decode_recipes_batch_cap(br, notes, want):
    cap = sys.modules["rowmap.common"].trt_decode_cap          # tools/rowmap, on the path once build_rows loads
    out = dict(_out(engine="trtllm", method=""), max_running_requests="", notes=notes)
    cap(out)
    assert out["max_running_requests"] == want and ("max_running_requests" in out["notes"]) == bool(want)
    sg = dict(_out(), max_running_requests="", notes=notes)                   # an SGLang row: not its recipe's cap
    cap(sg)
    assert sg["max_running_requests"] == ""


def test_mori_mtp_rows_without_dp_attention_carry_their_recipes_decode_cap():
    # V311: MI355X MoRI, decode tp 8 / ep 8 without DP attention, MTP at 128 requests: the recipe's
    # --max-running-requests 256 (sglang_disagg_server.sh), not SGLang's 48 (which had queued 80 of them: 23.1 s
    # of TTFT priced, 0.44 s measured).
    rows = {x["row_id"]: x for x in load_rows()}
    assert rows["V311"]["spec_max_running"] == "256" and "spec_max_running" in rows["V311"]["notes"]
    assert rows["V306"]["spec_max_running"] == ""            # the plain run of the pair: no speculation cap


def test_not_mapped_reason_table_adds_up_to_the_file():
    """validation/README.md's 'Not mapped' header counts not_mapped.csv, and its reason table sums to that count (found
    by review on 2026-12-07: the table had summed 17 short of the header since an earlier session)."""
    import csv
    import re
    from pathlib import Path

    val = Path(__file__).resolve().parents[1] / "validation"
    with open(val / "not_mapped.csv", encoding="utf-8") as f:
        n = len(list(csv.DictReader(f)))
    sec = (val / "README.md").read_text(encoding="utf-8").split("## Not mapped", 1)[1].split("\n## ", 1)[0]
    assert f"{n} staged rows (`not_mapped.csv`" in sec
    assert sum(int(m.group(1)) for m in re.finditer(r"^\| [^|]+ \| (\d+) \|", sec, re.M)) == n
