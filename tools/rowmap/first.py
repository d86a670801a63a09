"""Rule set 1: the first 44 rows (published_measurements.csv and vLLM issue #20780), mapping and values unchanged, then
later rows of the same file (FIRST_FIXED: the first 44 keep ids S001-S044; build_rows.keep_ids numbers the rest)."""

from __future__ import annotations

import csv

from .common import COLS, VAL, Row

FIRST_FIXED = 44   # rows whose ids S001-S044 are their position in first_rows()

# ----------------------------------------------------------------------------------------------------------------
# 1. The first 44 rows (published_measurements.csv and vLLM issue #20780): mapping and values unchanged.
# ----------------------------------------------------------------------------------------------------------------

def first_rows() -> list[Row]:
    with open(VAL / "published_measurements.csv", encoding="utf-8") as f:
        pub = {r["row_id"]: r for r in csv.DictReader(f)}
    out: list[Row] = []

    def add(rid, sid, src, **kw):
        r = pub[rid]
        row = dict(row_id=f"S{len(out) + 1:03d}", source_id=sid, source=src, source_url=r["source_url"],
                   locator=r["source_locator"], published_row=rid, tp=1, ep=1, precision="bf16",
                   expert_precision="", kv_precision="bf16", draft="", tree_tokens="", tree_branching="", tau="",
                   tau_k="", overlap_scheduler="", metric="speedup", measured=r["speedup"], notes="")
        row.update(kw)
        out.append(row)

    # 1. SGLang v0.4.4 on one H100, Llama-3.1-8B-Instruct, chain of 3, MT-Bench (EAGLE-3 paper Table 3).
    #    tau is not published: the method's default acceptance (simulator.speedup.default_acceptance) is used.
    for rid in [f"R0{n}" for n in range(163, 181)]:
        r = pub[rid]
        method = "eagle3" if r["method"] == "EAGLE-3" else "eagle"
        add(rid, "eagle3-paper", "EAGLE-3 paper Table 3 (SGLang, H100)", hardware="h100-sxm", engine="sglang",
            model="llama-3.1-8b", method=method, batch=r["batch_size"], context=512, k=3,
            notes="tau not published: method default acceptance; context 512 = MT-Bench prompt (~100) plus half "
                  "of a ~800-token answer (estimate); bf16 assumed (precision not stated)")
    # 2. SGLang batch 1 (EAGLE-3 paper Table 4), config not stated: SGLang's Llama defaults steps 5 / topk 4 /
    #    8 draft tokens (SGLang docs, speculative_decoding.md).
    for rid, method in (("R0182", "eagle"), ("R0183", "eagle3")):
        add(rid, "eagle3-paper", "EAGLE-3 paper Table 4 (SGLang, H100, bs 1)", hardware="h100-sxm", engine="sglang",
            model="llama-3.1-8b", method=method, batch=1, context=512, k=5, tree_tokens=8, tree_branching=4,
            notes="tree config not stated: SGLang Llama defaults (steps 5, topk 4, 8 draft tokens); tau not "
                  "published: method default acceptance; EAGLE-2 priced as an EAGLE-1 head with a tree")
    # 3. TensorRT-LLM, DeepSeek-R1 on 8x B200, min-latency, MTP nextn 1..5 with measured tau (tech blog 1).
    for rid in ("R0760", "R0761", "R0762", "R0763", "R0764"):
        r = pub[rid]
        k = int(r["spec_config"].split("=")[1].split()[0])
        add(rid, "trtllm-tech-blog-1", "TensorRT-LLM tech blog 1 (DeepSeek-R1, 8x B200)", hardware="b200", tp=8,
            engine="trtllm", model="deepseek-r1", precision="bf16", expert_precision="fp4", method="mtp", batch=1,
            context=2048, k=k, tau=r["tau_mean_accept_len"], tau_k=k,
            notes="attention bf16, MoE FFN NVFP4 (blog precision table; the 3 dense FFN layers priced bf16); "
                  "context 2048 = ISL 1k + half of OSL 2k; TP8, attention and experts TP-split")
    # 4. Spec-Bench leaderboard, one A100 80GB, HF Transformers baselines, FP16, batch 1: overall rows only
    #    (per-task tau is not published).
    cfg = {"EAGLE": dict(method="eagle", k=5, tree_tokens=26, tree_branching=5,
                         n="EAGLE-1 static tree of 26 tokens, depth 5 (EAGLE repo defaults, assumption)"),
           "Medusa": dict(method="medusa", k=5, tree_tokens=64, tree_branching=13,
                          n="Medusa-1 64-token tree over 5 heads (mc_sim_7b_63, assumption)"),
           "PLD": dict(method="ngram", k=10, n="prompt lookup, 10 tokens proposed (HF prompt_lookup_num_tokens=10)"),
           "SpS": dict(method="draft", k=5, draft="llama-68m",
                       n="Vicuna-68M draft priced as llama-68m (same shapes); 5 assistant tokens (HF default then)")}
    models = {"Vicuna-7B-v1.3": "vicuna-7b", "Vicuna-13B-v1.3": "vicuna-13b", "Vicuna-33B-v1.3": "vicuna-33b"}

    def spec_bench(gpu: str, hardware: str, title: str, where: str) -> None:
        for rid, r in pub.items():
            if "Spec-Bench" not in r["source_title"] or gpu not in r["hardware"] or "overall" not in r["dataset"]:
                continue
            c = cfg.get(r["method"])
            if c is None or r["target_model"] not in models:
                continue
            kw = {k: v for k, v in c.items() if k != "n"}
            add(rid, "spec-bench", title, hardware=hardware, engine="hf",
                model=models[r["target_model"]], precision="fp16", kv_precision="fp16", batch=1, context=512,
                tau=r["tau_mean_accept_len"].split()[0], tau_k=kw["k"], **kw,
                notes=c["n"] + f"; {where}; context 512 (estimate)")

    spec_bench("A100", "a100-sxm-80gb", "Spec-Bench leaderboard (A100, HF)",
               "A100 80GB form factor not stated (SXM assumed)")
    # 5. vLLM V1 on one H100, Llama-3.1-8B, batch 1, EAGLE-3 chain K = 2..7 (vLLM issue #20780, as collected in the
    #    project's engine reference): vanilla TPOT 7.07 ms; acceptance length per K; step time per K = TPOT x AL
    #    (derived there). These rows are not in published_measurements.csv; their source is the issue itself.
    url = "https://github.com/vllm-project/vllm/issues/20780"
    base = dict(source_id="vllm-issue-20780", source="vLLM issue #20780 (H100, bs 1)", source_url=url,
                published_row="", tp=1, ep=1, precision="bf16", expert_precision="", kv_precision="bf16", draft="",
                tree_tokens="", tree_branching="", hardware="h100-sxm", engine="vllm", model="llama-3.1-8b",
                method="eagle3", batch=1, context=512, overlap_scheduler="false")
    out.append(dict(base, row_id=f"S{len(out) + 1:03d}", locator="issue body: vanilla TPOT", k=1, tau="", tau_k="",
                    metric="base_step_s", measured=7.07e-3,
                    notes="plain decode TPOT (no speculation); context 512 (estimate); k unused for this metric; "
                          "vLLM V1 of mid-2025 ran without async scheduling (default only since PR #27614)"))
    for K, al, step in ((2, 2.36, 10.2), (3, 2.79, 11.4), (4, 3.08, 12.5), (5, 3.32, 13.7), (6, 3.46, 14.5),
                        (7, 3.54, 15.2)):
        out.append(dict(base, row_id=f"S{len(out) + 1:03d}", locator=f"issue body: EAGLE-3 K={K}", k=K, tau=al,
                        tau_k=K, metric="spec_step_s", measured=step * 1e-3,
                        notes="speculative step time = TPOT x acceptance length (derived from the issue's figures); "
                              "no async scheduling (see the base row)"))
    # 6. Spec-Bench's RTX 3090 table (one card, the same harness, methods' defaults and greedy decoding), mapped on
    #    2026-12-07 when rtx-3090 was bundled; after the first 44 so their ids stay (build_rows.keep_ids numbers these).
    spec_bench("RTX 3090", "rtx-3090", "Spec-Bench leaderboard (RTX 3090, HF)", "one RTX 3090 24GB")
    return [{c: str(r.get(c, "")) for c in COLS} for r in out]


