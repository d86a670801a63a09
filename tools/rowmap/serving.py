"""Rule set 5: validation/sources/serving.csv."""

from __future__ import annotations

import re

from .common import MT_BENCH_CONTEXT, Row, Skip, d_skip, formats, ix_lengths, note

# ----------------------------------------------------------------------------------------------------------------
# 5. serving.csv.
# ----------------------------------------------------------------------------------------------------------------

# Launch flags of InferenceX's single-node SGLang MTP scripts, as of the runs' dates (InferenceX repository,
# benchmarks/single_node/): script (as the 'MTP k source' note names it) -> (SpecV2 overlap on, requests run at once
# while speculating: by (isl, osl), 'conc' for the run's concurrency, None for SGLang's speculative default of 48;
# the note). SGLang's SpecV2 worker needs SGLANG_ENABLE_SPEC_V2 in the server's environment.
IX_SGLANG_MTP = {
    "dsr1_*_h200_mtp.sh": (True, {(1024, 1024): "512", None: "256"},
                           "dsr1_fp8_h200_mtp.sh (InferenceX PR #1523, 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                           "(SpecV2 overlap: overlap_scheduler true); --max-running-requests 512 at 1k/1k, else 256"),
    "dsr1_*_b200_mtp.sh": (False, {None: "512"},
                           "dsr1_fp8_b200_mtp.sh (InferenceX PR #626, 2026-02-05): SGLANG_ENABLE_SPEC_V2=1 is set "
                           "without export, so the server runs the V1 worker; --max-running-requests 512; "
                           "its client passes --use-chat-template and the server --chunked-prefill-size 16384, "
                           "where the plain dsr1_fp8_b200 scripts of the paired runs (2025-12-31, 2026-01-13) "
                           "sent the random prompt tokens without the template and prefilled 32768 tokens per "
                           "chunk: the pair differs in more than MTP"),
    "dsr1_*_mi355x_mtp.sh fp8": (True, {None: "conc"},
                                 "dsr1_fp8_mi355x_mtp.sh (created 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                                 "(overlap_scheduler true); --max-running-requests = the concurrency"),
    "dsr1_*_mi355x_mtp.sh fp4": (True, {None: None},
                                 "dsr1_fp4_mi355x_mtp.sh (created 2026-05-20): export SGLANG_ENABLE_SPEC_V2=1 "
                                 "(overlap_scheduler true); no --max-running-requests (SGLang's 48 for speculation)"),
}


# Decode instances of the NVIDIA/srt-slurm recipes a disaggregated InferenceX SGLang MTP row's 'MTP k source' note
# names (the recipes at srt-slurm HEAD c88ef731, 2026-08-21, where the rows' k was read): recipe -> (decode
# --max-running-requests, SGLANG_ENABLE_SPEC_V2 in the decode environment, the decode instance's mem-fraction-static
# under backend.sglang_config.decode). SGLang caps a whole instance at the flag:
# with DP attention each of the dp schedulers runs max_running_requests // dp_size (model_runner.py), so the
# instance runs the flag's value, as `spec_max_running` prices one decode instance.
SRT_SLURM_DECODE = {
    "recipes/h100/1k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml": (64, False, "0.85"),
    "recipes/h100/1k1k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml": (128, True, "0.9"),
    "recipes/h100/1k8k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml": (64, True, "0.85"),
    "recipes/h100/1k8k/mtp/h100-fp8-1p2d-max-tp-mtp.yaml": (64, True, "0.9"),
    "recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-dep-mtp.yaml": (64, True, "0.85"),
    "recipes/h100/8k1k/mtp/h100-fp8-1p1d-max-tp-mtp.yaml": (128, True, "0.9"),
    "recipes/h200/1k1k/bs256-1p6d-dep-mtp.yaml": (128, True, "0.75"),
    "recipes/h200/1k1k/low-latency-1p9d-mtp.yaml": (64, True, "0.75"),
    "recipes/h200/8k1k/bs128-1p1d-dep-mtp.yaml": (192, True, "0.85"),
    "recipes/h200/8k1k/bs16-1p3d-mtp.yaml": (32, True, "0.82"),
    "recipes/h200/8k1k/bs4-1p7d-mtp.yaml": (2, True, "0.75"),
    "recipes/h200/8k1k/bs8-1p6d-mtp.yaml": (16, True, "0.82"),
}
_SRT_SLURM = re.compile(r"NVIDIA/srt-slurm HEAD (recipes/\S+\.yaml)")


def srt_slurm_decode(out: Row, ksrc: list[str]) -> None:
    """A disaggregated SGLang MTP row's decode-instance facts from the srt-slurm recipe its k came from
    (SRT_SLURM_DECODE): the requests one decode instance runs while speculating and the SpecV2 overlap."""
    m = _SRT_SLURM.search(" ".join(ksrc))
    if m is None or m.group(1) not in SRT_SLURM_DECODE:
        return
    cap, v2, mem = SRT_SLURM_DECODE[m.group(1)]
    out["spec_max_running"], out["memory_fraction"] = str(cap), mem
    if v2:
        out["overlap_scheduler"] = "true"
    note(out, f"decode instance of {m.group(1)} at srt-slurm HEAD: --max-running-requests {cap}, "
              f"mem-fraction-static {mem}; "
              + ("SGLANG_ENABLE_SPEC_V2=1 in decode_environment (SpecV2 overlap: overlap_scheduler true)" if v2
                 else "no SGLANG_ENABLE_SPEC_V2 (V1 worker)"))


# InferenceX's MoRI-disaggregated SGLang DeepSeek-R1 runs on MI355X at concurrency 2048: the decode worker the
# fixture writes as tp1/ep16/dpattn=True over 16 GPUs is the config's "1 decode worker at DEP16" (DP attention 16 x
# EP 16, DECODE_NODES=2 of 8 GPUs), and its MTP depth is the config's DECODE_MTP_SIZE (--speculative-num-steps), read
# from .github/configs/amd-master.yaml, dsr1-fp8-mi355x-sglang-disagg, at the last commit before each run's date:
# (isl, osl, run date) -> (k, commit).
IX_MORI_DEP16 = {
    (1024, 8192, "2026-02-06"): (2, "6f6afc1cb"),
    (1024, 1024, "2026-02-12"): (1, "78d48618f"),
    (8192, 1024, "2026-02-16"): (1, "6e97ccc73"),
    (1024, 1024, "2026-02-23"): (1, "e6852f5fc"),
}
# The decode instance's --max-running-requests under DP attention in the MoRI recipe the runs clone
# (billishyahao/sglang_disagg sglang_disagg_server.sh: decode_max_running_requests=8192 where DECODE_ENABLE_DP is
# true, in every version mirrored, 2025-12-19..2026-01-05).
MORI_DECODE_MAX_RUNNING = 8192
_DECODE_WORKERS = re.compile(r"decode (\d+) worker\(s\) x \(tp(\d+)/ep(\d+)/dpattn=True\) = (\d+) GPUs")


def ix_mori_dep16(r: Row, out: Row) -> None:
    """A MoRI-disaggregated row's decode layout and MTP depth (IX_MORI_DEP16): DP attention over the worker's GPUs
    where the fixture's tp x dp covers fewer of them."""
    m = _DECODE_WORKERS.search(r["notes"])
    if m is None or not r["engine"].startswith("sglang (MoRI"):
        return
    workers, tp, ep, gpus = (int(x) for x in m.groups())
    if int(out["tp"]) * int(out["dp"] or 1) >= gpus // workers:
        return
    out["dp"] = str(gpus // workers // int(out["tp"]))
    date = re.search(r"date=(\S+)", r["locator"]).group(1)
    k, commit = IX_MORI_DEP16[(int(r["isl"]), int(r["osl"]), date)]
    why = (f"decode worker DEP{gpus // workers} (InferenceX .github/configs/amd-master.yaml @{commit}, "
           f"dsr1-fp8-mi355x-sglang-disagg: '1 decode worker at DEP16', DECODE_NODES=2): dp {out['dp']}, ep {ep}")
    if out["method"] == "mtp":
        out["k"] = str(k)
        out["spec_max_running"] = str(MORI_DECODE_MAX_RUNNING)
        why += (f"; DECODE_MTP_SIZE={k} there (--speculative-num-steps {k}): k = {k}; decode --max-running-requests "
                f"{MORI_DECODE_MAX_RUNNING} (DP attention) in every mirrored version of billishyahao/sglang_disagg "
                "sglang_disagg_server.sh, 2025-12-19..2026-01-05 (the pinned commit is not mirrored), not SGLang's "
                "48 for speculation; k uncertain: those mirrored versions pass --speculative-num-steps 1 "
                "--speculative-num-draft-tokens ${DECODE_MTP_SIZE} (which one SGLang honours with topk 1 is not "
                "checked here), the later in-tree port (amd_utils) --speculative-num-steps ${DECODE_MTP_SIZE}")
    note(out, why)


# The decode instance's --max-running-requests without DP attention in the same MoRI recipe: 256 where the decode
# enables EP (billishyahao/sglang_disagg sglang_disagg_server.sh, decode_max_running_requests=256 in the non-DP
# branch, e.g. versions 00a869bc ('elif DECODE_ENABLE_EP ... 256', else 128) and the indexed copy that sets 256 for
# every non-DP decode), not SGLang's 48 for speculation.
MORI_DECODE_MAX_RUNNING_NO_DP = 256


def ix_mori_decode_cap(r: Row, out: Row) -> None:
    """A MoRI-disaggregated MTP row whose decode instance runs without DP attention (tp 8, ep 8): its recipe's
    --max-running-requests (MORI_DECODE_MAX_RUNNING_NO_DP; review, 2026-12-06: SGLang's 48 for speculation was
    priced, so V311's 128 requests queued for a slot: 23.1 s of TTFT priced, 0.44 s measured)."""
    if not r["engine"].startswith("sglang (MoRI") or out["method"] != "mtp" or out["spec_max_running"]:
        return
    if int(out["dp"] or 1) != 1 or int(out["ep"] or 1) == 1:
        return
    out["spec_max_running"] = str(MORI_DECODE_MAX_RUNNING_NO_DP)
    note(out, f"decode --max-running-requests {MORI_DECODE_MAX_RUNNING_NO_DP} without DP attention, with EP, in the "
              "MoRI recipe (billishyahao/sglang_disagg sglang_disagg_server.sh, e.g. version 00a869bc; the pinned "
              "commit is not mirrored), not SGLang's 48 for speculation: spec_max_running")


# --mem-fraction-static of InferenceX's single-node SGLang DeepSeek-R1 scripts (SemiAnalysisAI/InferenceX HEAD
# 843c6254, 2026-08-22, benchmarks/single_node/fixed_seq_len/; the versions the runs used are not checked):
# (hardware, fp4 experts, tp) -> (value, script and line). The plain and MTP script of a pair set the same value.
IX_SGLANG_MEMORY = {
    ("h200-sxm", False, 8): ("0.82", "dsr1_fp8_h200.sh L40/L49, dsr1_fp8_h200_mtp.sh L69"),
    ("b200", False, 8): ("0.82", "dsr1_fp8_b200.sh L40 (TP8), dsr1_fp8_b200_mtp.sh L45"),
    ("b200", False, 4): ("0.95", "dsr1_fp8_b200.sh L54 (TP4)"),
    ("b200", True, 8): ("0.85", "dsr1_fp4_b200.sh L77, dsr1_fp4_b200_mtp.sh L86"),
    ("b200", True, 4): ("0.85", "dsr1_fp4_b200.sh L77, dsr1_fp4_b200_mtp.sh L86"),
    ("mi355x", False, 8): ("0.8", "dsr1_fp8_mi355x.sh L45, dsr1_fp8_mi355x_mtp.sh L55"),
    ("mi355x", True, 8): ("0.8", "dsr1_fp4_mi355x.sh L45, dsr1_fp4_mi355x_mtp.sh L51"),
}


def ix_sglang_memory(out: Row, disagg: bool) -> None:
    """A single-node InferenceX SGLang DeepSeek-R1 row's --mem-fraction-static from its script (IX_SGLANG_MEMORY)."""
    if disagg or (out["engine"], out["model"]) != ("sglang", "deepseek-r1"):
        return
    key = (out["hardware"], out["expert_precision"] in ("fp4", "mxfp4"), int(out["tp"] or 1))
    if key in IX_SGLANG_MEMORY:
        out["memory_fraction"], where = IX_SGLANG_MEMORY[key]
        note(out, f"--mem-fraction-static {out['memory_fraction']} (InferenceX HEAD 843c6254 {where}): "
                  "memory_fraction")


def ix_trt_balance(out: Row, disagg: bool) -> None:
    """A single-node InferenceX TensorRT-LLM run under attention DP schedules its ranks' prompts together: the
    scripts append attention_dp_config (batching_wait_iters 0, enable_balance true, timeout_iters 60) whenever
    DP_ATTENTION is true, since InferenceX PR #22 (2025-09-18: dsr1_fp4_b200_trt_slurm.sh, dsr1_fp8_b200_trt_slurm.sh,
    dsr1_fp8_h200_trt_slurm.sh; HEAD 843c6254 benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_trt.sh L61-67), before
    every run mapped here. TensorRT-LLM's own default is off (llm_args.py AttentionDpConfig)."""
    if disagg or out["engine"] != "trtllm" or int(out["dp"] or 1) == 1:
        return
    out["dp_balance"] = "true"
    note(out, "attention_dp_config enable_balance true under DP attention (InferenceX PR #22, 2025-09-18; HEAD "
              "843c6254 dsr1_fp4_b200_trt.sh L61-67): dp_balance")


def ix_sglang_mtp(out: Row, disagg: bool) -> None:
    """A single-node InferenceX SGLang DeepSeek-R1 MTP run's scheduler facts from its script (IX_SGLANG_MTP): every
    row of the run, its speedup included (whose notes do not name the script). The scripts were added on the dates
    they name, before the runs mapped here (runs from 2026-02 on B200, 2026-05 on H200 and MI355X)."""
    if disagg or (out["engine"], out["method"], out["model"]) != ("sglang", "mtp", "deepseek-r1"):
        return
    script = f"dsr1_*_{out['hardware'].removesuffix('-sxm')}_mtp.sh"
    if "mi355x" in script:
        script += " fp4" if out["expert_precision"] in ("mxfp4", "fp4") else " fp8"
    if script not in IX_SGLANG_MTP:
        return
    v2, cap, why = IX_SGLANG_MTP[script]
    n = cap.get((int(float(out["isl"] or 0)), int(float(out["osl"] or 0))), cap.get(None))
    out["spec_max_running"] = out["concurrency"] if n == "conc" else (n or "")
    if v2:
        out["overlap_scheduler"] = "true"
    note(out, why)


def v_fixture(r: Row, out: Row) -> None:
    eng = r["engine"].strip().lower()
    if eng == "atom":
        raise Skip("engine not bundled (AMD ATOM)")
    if r["metric"] == "throughput_ratio_same_concurrency":
        raise Skip("same pair as the mapped speedup (median tok/s/user ratio): one ratio per pair")
    disagg = r["pd_disaggregated"] == "yes"
    out["source"] = "InferenceX dashboard (" + ("disaggregated" if disagg else "single node") + ")"
    formats(out)
    if r["metric"] == "interactivity_ratio_same_concurrency":
        out["metric"] = "speedup"
        note(out, "speedup = MTP / plain median tok/s/user at the same concurrency and layout (derived by the "
                  "collector; runs of different dates)")
    if r["per_rank_batch"]:
        note(out, f"decode max_batch_size {r['per_rank_batch']} per rank (recipe)")
    if disagg:
        note(out, f"disaggregated: {r['prefill_gpus']} prefill + {r['decode_gpus']} decode GPUs; tp/dp/ep = one "
                  "decode instance; throughput per GPU is output tokens/s per decode GPU (InferenceX "
                  "utils/process_result.py: output_tput_per_gpu = output throughput / decode GPUs)")
    ix_mori_dep16(r, out)
    ix_mori_decode_cap(r, out)
    if out["method"] == "mtp" and not out["k"]:
        note(out, "MTP depth not resolved from the run's config: specroof's default k is priced")
    if out["metric"] == "tokens_per_s_per_user":
        note(out, "median interactivity (tok/s/user)")
    ksrc = [s for s in r["notes"].split("; ") if s.startswith("MTP k source") and not (out["k"] and "not determ" in s)]
    ix_sglang_mtp(out, disagg)
    ix_sglang_memory(out, disagg)
    ix_trt_balance(out, disagg)
    if disagg and out["engine"] == "sglang" and out["method"] == "mtp":
        srt_slurm_decode(out, ksrc)
    pair = re.search(r"matched pair pair\d+ \(.*\)$", r["notes"])
    note(out, *ksrc, "InferenceX CI (random isl/osl, 10 x concurrency prompts)",
         pair.group(0) if pair else r["notes"].split("; ")[-1])
    ix_lengths(out)
    ix_num_prompts(r, out)


# The prompts of an InferenceX run: 10 x its concurrency, all sent at --request-rate inf under --max-concurrency.
# Single node: benchmarks/single_node/fixed_seq_len/dsr1_*.sh --num-prompts $((CONC * 10)) into benchmark_lib.sh
# run_benchmark_serving (--request-rate inf; HEAD 843c6254). NVIDIA disaggregated: srt-slurm sa-bench bench.sh
# num_prompts=$((concurrency * NUM_PROMPTS_MULT)), NUM_PROMPTS_MULT default 10 (NVIDIA/srt-slurm 024aa2dc; an
# earlier ishandhanani/srt-slurm version, 09211b64, ran concurrency x 5: the runs' own version is not pinned here).
# AMD MoRI disaggregated: benchmarks/multi_node/amd_utils/bench.sh num_prompts_multiplier 10, at least 16.
IX_PROMPTS_PER_SLOT, IX_MORI_MIN_PROMPTS = 10, 16


def ix_num_prompts(r: Row, out: Row) -> None:
    """An InferenceX TTFT or E2E row's run length (IX_PROMPTS_PER_SLOT), whose start-up burst its mean includes
    (simulator/burst.py): the other metrics of the run are priced at the steady state and carry none."""
    if out["metric"] not in ("ttft_s", "e2e_s") or not out["concurrency"] or not out["isl"]:
        return
    n = IX_PROMPTS_PER_SLOT * int(float(out["concurrency"]))
    if r["engine"].startswith("sglang (MoRI"):
        n = max(n, IX_MORI_MIN_PROMPTS)
    out["num_prompts"] = str(n)
    note(out, f"num_prompts {n}: {IX_PROMPTS_PER_SLOT} x concurrency, sent at once up to the concurrency "
              "(--request-rate inf; benchmark_lib.sh run_benchmark_serving, srt-slurm sa-bench NUM_PROMPTS_MULT, "
              "amd_utils/bench.sh)")


def v_compare(r: Row, out: Row) -> None:
    if out["model"] != "deepseek-r1":
        raise Skip("model not bundled (" + out["model"].split(" (")[0] + ")")
    if r["metric"] != "throughput_ratio":
        raise Skip("absolute tok/s/GPU of a compare page: unit (output or input+output) not defined on the page; "
                   "the page's MTP/Off ratio is mapped")
    out["source"] = "InferenceX compare pages (iso-interactivity)"
    formats(out)
    m = re.search(r"at (\d+) tok/s/user", r["locator"])
    note(out, f"WEAKEST ROWS: MTP / Off tok/s/GPU read from Pareto frontiers interpolated across engines, layouts "
              f"and concurrencies at matched interactivity {m.group(1) if m else '?'} tok/s/user; engine, layout, "
              "k unknown; frontier edges may be extrapolated")


def v_ix_blog(r: Row, out: Row) -> None:
    out["source"] = "InferenceX v2 blog"
    out["metric"] = "throughput_ratio"
    formats(out)
    note(out, "throughput_ratio = $2.35 / $0.11 per M tokens (no MTP / MTP) at 150 tok/s/user on the same GB300 "
              "frontier: equal $/GPU-hour, so the cost ratio is the tok/s/GPU ratio (derived; $0.11 has two digits, "
              "+-5%); Dynamo TRT-LLM, layouts not given")


def v_amd_mtp(r: Row, out: Row) -> None:
    out["isl"], out["osl"] = "", ""
    note(out, "lossy: --speculative-accept-threshold-single=0.001 (relaxed acceptance); k = 2 (steps 2, topk 1, "
              "3 draft tokens); tau not reported")
    if r["locator"].startswith("Table 1") or "Table 1" in r["locator"]:
        note(out, "random dataset: isl/osl not stated next to the table (the ROCm blog's client command shows "
                  "3200/800, the LMSYS copy 1024/1024, without range ratio and with --request-rate 1)")
    else:
        note(out, "ShareGPT dataset")
    note(out, "mean E2E latency per request at a max concurrency; the LMSYS copy of this blog names SGLang "
              "v0.4.10.post1, the ROCm blog v0.5.0rc0")


LARGE_EP_SKIPS = {"57674": "prefill throughput (input tok/s per node): no schema metric",
                  "54543": "prefill throughput (input tok/s per node): no schema metric",
                  "50302": "prefill throughput (input tok/s per node): no schema metric",
                  "52300": "prefill throughput headline: no schema metric",
                  "17373": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "17552": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "12929": "'simulated MTP' (doubled batch, dummy kernels): not an MTP measurement",
                  "22310": "TBO ablation point: per-node unit assumed, same decode configuration as the mapped 22,282",
                  "22300": "headline over 12 nodes: prefill/decode split not stated"}


def v_large_ep(r: Row, out: Row) -> None:
    if r["measured"] in LARGE_EP_SKIPS:
        raise Skip(LARGE_EP_SKIPS[r["measured"]])
    assert r["measured"] == "22282" and r["metric"] == "tokens_per_s_per_node", r
    out.update(metric="tokens_per_s_per_gpu", measured=repr(22282 / 8), batch=str(256 * 72), context="2000",
               memory_fraction="0.835")
    note(out, "decode-only test on 9 nodes: 22,282 tok/s per node / 8 GPUs (derived); DP attention DP72 (attention "
              "TP1), dense FFN DP, experts EP72 (DeepEP, EPLB, TBO); 256 sequences per device x 72 = batch 18432 "
              "(derived); context = KV length 2000; decode --mem-fraction-static 0.835 in the reproduction "
              "commands of sglang issue #6017 as copied in ai-dynamo/dynamo examples/sglang/utils/wideep/"
              "run_sgl_servers.sh @bb5ca1e3 and NVIDIA/srt-slurm recipes/h100/blog-post.yaml (earlier versions of "
              "the issue: 0.846, 0.81)")


def v_bestperf(r: Row, out: Row) -> None:
    formats(out)
    note(out, f"'Expected Result Format' sample of the max-throughput command: --tp 8 --ep 8 with attention DP "
              f"(attention TP1, DP8), max_batch_size {r['per_rank_batch']} per rank, concurrency = 8 x "
              f"max_batch_size; no MTP; synthetic 1K/2K")


def v_specdrift(r: Row, out: Row) -> None:
    if r["metric"] != "throughput_ratio_same_concurrency":
        raise Skip("absolute tok/s of the table: GPU count not stated; the spec/plain ratio is mapped")
    out.update(metric="speedup", tp="1", method="eagle3", k="3", tau_k="3", concurrency="")
    out["precision"], out["expert_precision"] = "bf16", "mxfp4"
    note(out, "speedup = SpecDrift EAGLE-3 / plain tok/s at the same batch (derived); third-party mirror of the HF "
              "card; SpecDrift-trained head (standard EAGLE-3 shape); TP1, steps 3 / topk 1 / 4 draft tokens and "
              "SpecV2 overlap from the card's launch command (table setup not stated); MT-Bench, temperature 0.7",
         "gpt-oss checkpoint: MoE experts MXFP4, attention and the rest bf16 (model card)", MT_BENCH_CONTEXT)
    out["context"] = "512"
    out["overlap_scheduler"] = "true"
    out["num_prompts"] = "80"
    note(out, "the card's 80 MT-Bench prompts at the batch as concurrency: priced as such a run of equal requests, "
              "n // batch waves at the batch and one of the rest (at batch 64: 64, then 16; speedup.waves)")


SERVING_SKIPS = {
    "lmsys_mtp_h200": ("lmsys-blog-sglang-mtp", "decode layout (attention DP / EP) not stated"),
    "lmsys_gb300_longctx": ("lmsys-blog-gb300-longctx", "per-point layouts and concurrency not stated (MTP and "
                            "non-MTP read in different interactivity bands)"),
    "vllm_specdecode_blog_2024": ("vllm-blog-2024-spec-decode", "load given as QPS (Llama-3-70B is bundled as "
                                  "llama-3-70b)"),
    "baseten_gptoss_eagle3": ("baseten-gptoss", "production API measured by a third party: load and layout unknown, "
                              "approximate values"),
    "redhat_gptoss_eagle3_h200": ("redhat-gptoss-eagle3", "only summary ranges retrieved; TP and concurrency per "
                                  "value not stated"),
    "aqmedai_kimi_k2_eagle3": ("aqmedai-kimi-k2-eagle3", "hardware and TP not stated"),
    "inferencemax_v1_blog": ("inferencex", "a range ('2-3x'): a single value would be invented"),
    "deepseek_official_via_lmsys": ("deepseek-official", "DeepSeek's production per-node totals on H800 (bundled as "
                                    "h800; recorded as h100-sxm by the collector): layouts and load not stated beside "
                                    "them; secondary quote"),
    "lmsys_gb200_part1": ("lmsys-blog-gb200", "no batch or concurrency; decode layout assumed by the collector"),
    "lmsys_gb200_part2": ("lmsys-blog-gb200", "batch 1408 per rank or global not stated; layout assumed"),
    "lmsys_kimi_k2_h200": ("lmsys-blog-kimi-k2", "decode batch 480 per rank or global not stated; EP degree assumed"),
    "trtllm_dsr1_b200_throughput": ("trtllm-tech-blog-3", "no batch or concurrency given for the 4600 / 2000 TPS/GPU"),
    "vllm_wide_ep_h200": ("vllm-blog-wide-ep", "headline: GPU counts, isl/osl and load not stated"),
    "trtllm_blog5_disagg": ("trtllm-tech-blog-5", "disaggregated-over-aggregated speedup on rate-matched curves: no "
                            "schema metric"),
    "inferencex_blog_gb200_vs_b200": ("inferencex", "input+output tok/s/GPU of two MTP deployments: no schema "
                                      "metric"),
    "gpustack_gptoss_h100": ("gpustack-gptoss-h100", "1000 prompts offered at once: running batch set by the "
                             "engine's limits, not stated"),
    "gpustack_dsr1_h200": ("gpustack-dsr1-h200", "1000 prompts offered at once: running batch set by the engine's "
                           "limits, not stated"),
    "gpustack_qwen3_235b_h100": ("gpustack-qwen3-235b-h100", "1000 prompts offered at once: running batch set by "
                                 "the engine's limits, not stated"),
}


def v_gptoss(r: Row, out: Row) -> None:
    if out["hardware"] == "mi350x":
        raise Skip("hardware not stated exactly: the table's 'AMD MI350' is an MI350X or an MI355X (mi350x and "
                   "mi355x are both bundled; their clocks and GEMM rates differ)")
    if out["method"]:
        raise Skip("EAGLE3 speedups: batch and speedup definition not stated")
    raise Skip("duplicate: the bs-1 decode figures are mapped from decode.csv")


SERVING = {
    "inferencex_fixture_pairs": ("inferencex", "", v_fixture),
    "inferencex_fixture_disagg": ("inferencex", "", v_fixture),
    "inferencex_compare_pages": ("inferencex", "", v_compare),
    "inferencex_v2_blog": ("inferencex", "", v_ix_blog),
    "rocm_mtp_dsv3_mi300x": ("amd-rocm-blog-dsv3-mtp-mi300x", "AMD ROCm blog: DeepSeek-V3 MTP on 8x MI300X (SGLang)",
                             v_amd_mtp),
    "lmsys_large_scale_ep_h100": ("lmsys-blog-large-scale-ep", "LMSYS blog: large-scale EP on 96 H100 (decode)",
                                  v_large_ep),
    "trtllm_best_perf_dsr1": ("trtllm-best-perf-dsr1", "TRT-LLM DeepSeek-R1 best-perf doc (max throughput)",
                              v_bestperf),
    "specdrift_gptoss_h100": ("specdrift-gptoss-h100", "SpecDrift card: gpt-oss-120b EAGLE-3 (SGLang, H100)",
                              v_specdrift),
    "lmsys_gptoss": ("lmsys-blog-sglang-gptoss", "", v_gptoss),
    **{k: (sid, "", d_skip(why)) for k, (sid, why) in SERVING_SKIPS.items()},
}


