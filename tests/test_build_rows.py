"""tools/build_rows.py: validation/rows.csv is what the staged sources map to, and the launch facts of InferenceX's
single-node SGLang MTP scripts land on the rows of their runs only."""

from __future__ import annotations

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


def test_inferencex_rows_carry_the_kv_format_of_their_runs_launch_flags():
    # sources/inferencex_kv.csv: every entry lands on a row, with its evidence in the notes; Hopper SGLang runs kept
    # the KV cache in bf16 (no --kv-cache-dtype in their scripts and recipes), the others stored it in fp8.
    import csv

    from simulator.validation import default_rows_path
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
