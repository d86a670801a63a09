"""A blind test: published measurements that no profile was fitted on and that are not in validation/rows.csv,
predicted as shipped (no tuning) and compared. Run: python tools/blind_test.py (a few seconds); the table and its
reading are in validation/BLIND_TEST.md.

Each row states what the source published and what the mapping assumed. Found on 2026-12-03 by three searches of
engine blogs, vendor blogs and papers for measurements not already in validation/sources/*.csv or
validation/not_mapped.csv, and on 2026-12-05 by a fourth (round 4: every row it found that a bundled model and
profile can express). Rows the search found but no profile or bundled model can express (gpt-fast in MagicDec,
Kimi-K2.6, A100-40GB, figure-only results) are listed in BLIND_TEST.md, not here. Round 9's rows (2026-12-06) are in
tools/blind_rows_round9.py, round 10's in tools/blind_rows_round10.py, round 11's in tools/blind_rows_round11.py,
round 12's in tools/blind_rows_round12.py, round 13's in tools/blind_rows_round13.py, round 14's in
tools/blind_rows_round14.py, round 15's in tools/blind_rows_round15.py, round 16's (none qualified) in
tools/blind_rows_round16.py, round 17's in tools/blind_rows_round17.py, round 18's (none qualified) in
tools/blind_rows_round18.py, round 19's (none qualified) in tools/blind_rows_round19.py, round 20's (devices and
models being added on 2026-12-06; a row whose device or model this tree cannot load is skipped and listed, not priced)
in tools/blind_rows_round20.py, round 21's (the devices and models added on 2026-12-07: H20 and MI300X serving rows; a
row specroof refuses is listed, not scored) in tools/blind_rows_round21.py, round 22's (ML.ENERGY's plain decode of
the bundled 128- and 160-expert Qwen3 targets) in tools/blind_rows_round22.py, round 23's (ML.ENERGY's other text
runs of bundled models) in tools/blind_rows_round23.py, round 24's (ML.ENERGY's attention-DP runs of
Qwen3-Coder-480B-FP8) in tools/blind_rows_round24.py, round 25's (Qwen's Qwen3 speed benchmark on H20, one request
under SGLang and Transformers) in tools/blind_rows_round25.py.
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

from simulator import Acceptance, band_for, load_bands, load_model, simulate_step, speedup_curve
from simulator.drafters import default_decay
from simulator.engine import load_engine
from simulator.fusion import without
from simulator.heldout import speedup_ceiling
from simulator.scenario import Scenario
from simulator.serving import Workload, serve
from simulator.validation import RATIO_METRICS, predict_row

sys.path.insert(0, str(Path(__file__).resolve().parent))
from blind_rows_common import triage  # noqa: E402
from blind_rows_round9 import ROUND9  # noqa: E402
from blind_rows_round10 import ROUND10  # noqa: E402
from blind_rows_round11 import ROUND11  # noqa: E402
from blind_rows_round12 import ROUND12  # noqa: E402
from blind_rows_round13 import ROUND13  # noqa: E402
from blind_rows_round14 import ROUND14  # noqa: E402
from blind_rows_round15 import ROUND15  # noqa: E402
from blind_rows_round16 import ROUND16  # noqa: E402
from blind_rows_round17 import ROUND17  # noqa: E402
from blind_rows_round18 import ROUND18  # noqa: E402
from blind_rows_round19 import ROUND19  # noqa: E402
from blind_rows_round20 import ROUND20  # noqa: E402
from blind_rows_round21 import ROUND21  # noqa: E402
from blind_rows_round21 import triage as triage21  # noqa: E402
from blind_rows_round22 import ROUND22  # noqa: E402
from blind_rows_round22 import triage as triage22  # noqa: E402   (rounds 23 and 24 take this rule from round 22)
from blind_rows_round23 import ROUND23  # noqa: E402
from blind_rows_round24 import ROUND24  # noqa: E402
from blind_rows_round25 import ROUND25  # noqa: E402
from blind_rows_round25 import triage as triage25  # noqa: E402

NV_SPEC_3X = ("https://developer.nvidia.com/blog/"
              "boost-llama-3-3-70b-inference-throughput-3x-with-nvidia-tensorrt-llm-speculative-decoding/")
NV_MEDUSA = ("https://developer.nvidia.com/blog/low-latency-inference-chapter-1-up-to-1-9x-higher-llama-3-1-"
             "performance-with-medusa-on-nvidia-hgx-h200-with-nvlink-switch/")
NV_MAVERICK = "https://developer.nvidia.com/blog/blackwell-breaks-the-1000-tps-user-barrier-with-metas-llama-4-maverick/"
TRT_5146 = "https://github.com/NVIDIA/TensorRT-LLM/pull/5146"
VLLM_PEAGLE = "https://blog.vllm.ai/2026/03/13/p-eagle.html"
# Round 2 (2026-12-03): SGLang's SpecBundle dashboard data (SpecForge #382) and "Speculative Decoding: Performance
# or Illusion?" (arXiv 2601.11580, its site's text). SpecBundle's eight rows left this table on 2026-12-05, when the
# whole dashboard (round 5, BLIND_TEST.md) went into validation/rows.csv as source specbundle-dashboard.
SDBENCH = "https://specdecode-bench.github.io"
# SpecDecode-Bench ran SGLang v0.5.9, before SpecV2 became the default (v0.5.11, PR #21062): its speculative steps are
# priced with the V1 worker (spec_overlap False), as the profile's overlap_with_spec_from prices validation rows of
# such builds.
SB = dict(hardware="h200-sxm", engine="sglang", precision="bf16", context=1024, spec_overlap=False)
# Round 4 (2026-12-05), a research helper's search for measurements absent from the repository; every SGLang build
# here predates SpecV2 as the default (2026-05), so the speculative steps are priced with the V1 worker. None of the
# three states an acceptance length: the method's default stands in (the held-out bands are then the wider ones).
TENGYUNW = "https://github.com/SafeAILab/EAGLE/issues/228"
EAGLE_173 = "https://github.com/SafeAILab/EAGLE/pull/173"
TW_MINIMAX = "https://huggingface.co/blog/lujangusface/tw-eagle3-minimax"
TW = dict(hardware="h200-sxm", engine="sglang", model="minimax-m2.5", precision="fp8", tp=4, context=1024,
          spec_overlap=False)
# Round 7 (2026-12-05), a search for TensorRT-LLM batch-1 decode rates of dense Llama models absent from the
# repository, after specroof began to price TensorRT-LLM's kernel fusions (engine_profiles/trtllm.toml [kernels]).
MODELOPT = "https://github.com/NVIDIA/TensorRT-Model-Optimizer/blob/main/examples/benchmark.md"
# v0.15 predates the all-reduce + norm fusion's default (2025-07): priced without it, as validation prices such rows.
_TRT = load_engine("trtllm")
_SGL = load_engine("sglang")
MO = dict(hardware="h200-sxm", method=None,
          engine=without(_TRT, {"allreduce_norm_llama"}))
MO_ASSUMED = ("TensorRT-LLM v0.15 (its TensorRT-engine backend) priced with the profile's fusions but the all-reduce "
              "one (a build before 2025-07); the 'Tokens/sec' "
              "of trtllm-bench's latency run at batch 1 read as 128 output tokens over the request's latency, its "
              "2048-token prefill included; KV cache BF16 (not stated)")
# Round 8 (2026-12-06), found after SGLang's DeepSeek kernel fusions went in (engine_profiles/sglang.toml [kernels]):
# SGLang's own bench_one_batch (model forward under CUDA graphs, no scheduler) in the PR that turned the all-reduce +
# RMSNorm fusion on by default on SM90. Counted since 2026-12-06 (sglang.toml [kernels] allreduce_norm_mla, after the
# round was found): the run without it is priced with the profile less that fusion, the run with it as shipped.
SGL_14764 = "https://github.com/sgl-project/sglang/pull/14764"
B1B = dict(hardware="h200-sxm", model="deepseek-v3", engine="sglang", precision="fp8", tp=8, method=None,
           batch=[16], context=514)
B1B_ASSUMED = ("DeepSeek-V3.1 priced as DeepSeek-V3 (the same DeepseekV3ForCausalLM shapes); FP8 weights (the "
               "checkpoint's format), BF16 KV cache (the default); the mean of the first five decode steps of a "
               "512 + 512 run, so a context of about 514")
TW_ASSUMED = ("one TP4 server of the 8x H200 node, FP8 (the checkpoint's format; its non-expert formats not stated), "
              "a fork of SGLang of April 2026 (tails-mpt/sglang) priced as SGLang's V1 worker; context 1024")

# round -> (rows scored, (name, reason) of each row refused). Round 20's rows need devices and models being added on
# 2026-12-06: a row whose device or model does not load here is skipped, and one that does not fit in memory refused.
# Round 21's: the same, and a row whose layout specroof cannot price on its device is refused too (its rules). Rounds
# 22-24: a row that does not fit in memory is refused; round 25: that, or a prompt past the model's positions.
# Each refused row is listed with its reason, not scored.
TRIAGED = {20: triage(ROUND20), 21: triage21(ROUND21), 22: triage22(ROUND22), 23: triage22(ROUND23),
           24: triage22(ROUND24), 25: triage25(ROUND25)}


@dataclass(frozen=True)
class Row:
    """One published figure, the metric it is, the scenario it maps to and what the mapping assumed."""

    name: str
    url: str
    locator: str
    metric: str                   # speedup, tokens_per_s_per_user, step_s (plain decode, batch 1 unless the
    #                               scenario names one) or
    #                               request_tokens_per_s (osl / E2E of one request alone, its prefill included)
    measured: float
    scenario: dict = field(default_factory=dict)
    tau: float | None = None      # published acceptance length at scenario['k'] (None: the method's default)
    assumed: str = ""
    lengths: tuple[int, int] = (0, 0)   # (isl, osl) of a one-request run scored by request_tokens_per_s
    csv: dict = field(default_factory=dict)  # a row in validation/rows.csv's columns, priced as validation prices it


ROWS = (
    Row("Llama-3.3-70B FP8, 1x H200, plain decode, batch 1", NV_SPEC_3X, "Table 1 text: 51.14 tokens/s without "
        "speculation", "step_s", 1 / 51.14,
        dict(hardware="h200-sxm", model="llama-3.3-70b", engine="trtllm", precision="fp8", tp=1),
        assumed="one H200, batch 1 and FP8 as secondary reports of the blog state them; context 1024"),
    Row("Llama-3.1-70B Medusa, 8x H200, batch 1", NV_MEDUSA, "summary: 268 tokens/s/user", "tokens_per_s_per_user",
        268.0, dict(hardware="h200-sxm", model="llama-3.1-70b", engine="trtllm", precision="fp8", tp=8,
                    method="medusa"),
        assumed="TP8, FP8; acceptance not published (Medusa default: tau 2.32 on its 64-token tree)"),
    Row("Llama-3.1-405B Medusa, 8x H200, batch 1", NV_MEDUSA, "summary: 108 tokens/s/user",
        "tokens_per_s_per_user", 108.0,
        dict(hardware="h200-sxm", model="llama-3.1-405b", engine="trtllm", precision="fp8", tp=8, method="medusa"),
        assumed="TP8, FP8; acceptance not published (Medusa default)"),
    Row("Llama-3.1-405B Medusa speedup, 8x H200, batch 1", NV_MEDUSA, "summary: 1.9x", "speedup", 1.9,
        dict(hardware="h200-sxm", model="llama-3.1-405b", engine="trtllm", precision="fp8", tp=8, method="medusa"),
        assumed="as above"),
    Row("Llama-4-Maverick EAGLE-3, 8x B200, batch 1", NV_MAVERICK, "over 1,000 TPS/user (1,038, Artificial "
        "Analysis)", "tokens_per_s_per_user", 1038.0,
        dict(hardware="b200", model="llama-4-maverick", engine="trtllm", precision="fp8", tp=8, method="eagle3",
             k=3),
        assumed="TP8 EP1, FP8, max_draft_len 3 (TensorRT-LLM tech blog 6); acceptance not published (EAGLE-3 "
                "default, tau 2.79 at k = 3)"),
    Row("Llama-3.3-70B BF16 EAGLE-3, 8x H200, 4 requests", TRT_5146, "description: acceptance length 1.83 / 4, "
        "1.26x tps/user", "speedup", 1.26,
        dict(hardware="h200-sxm", model="llama-3.3-70b", engine="trtllm", precision="bf16", tp=8, method="eagle3",
             k=3, batch=[4]), tau=1.83,
        assumed="'1.83 / 4' read as tau at k = 3 (k = 4 gives a 4 % lower prediction); context 1024; a bug-fix PR"),
    Row("Llama-4-Maverick FP8 + BF16 EAGLE-3, 8x H200, 4 requests", TRT_5146, "description: acceptance length "
        "2.90 / 4, 1.67x tps/user", "speedup", 1.67,
        dict(hardware="h200-sxm", model="llama-4-maverick", engine="trtllm", precision="fp8", draft_precision="bf16",
             tp=8, method="eagle3", k=3, batch=[4]), tau=2.90,
        assumed="as above (k = 4 gives 8 % lower)"),
    Row("gpt-oss-20b EAGLE-3, 1x B200, 1 request", VLLM_PEAGLE, "Figure 1 (SPEED-Bench): 456 tokens/s without "
        "speculation, 507 with EAGLE-3 (tau 2.24 at K = 3)", "speedup", 507 / 456,
        dict(hardware="b200", model="gpt-oss-20b", engine="vllm", precision="bf16", expert_precision="mxfp4",
             kv_precision="fp8", method="eagle3", k=3, context=1536), tau=2.24,
        assumed="context 1536 (512-token prompts assumed, half of the 2048 output)"),
    Row("Qwen3-8B BF16, 1x H200, SGLang, plain decode, batch 1", TENGYUNW, "comment by jiahe7ay, 2025-07-02: "
        "'Qwen3-8B with Eagle3 achieves a performance boost from 186 tokens/second to 365' (model card: 187)",
        "step_s", 1 / 187.0, dict(SB, model="qwen3-8b", tp=1),
        assumed="TP1 and BF16 from the model card's launch command; the card's 187 tokens/s; context 1024"),
    Row("Qwen3-8B EAGLE-3 tree of 32, 1x H200, SGLang, batch 1", TENGYUNW, "as above: 187 -> 365 tokens/s with "
        "--speculative-num-steps 6 --speculative-eagle-topk 10 --speculative-num-draft-tokens 32 (model card)",
        "speedup", 365 / 187, dict(SB, model="qwen3-8b", tp=1, method="eagle3", k=6, tree_tokens=32,
                                   tree_branching=10),
        assumed="acceptance not published (EAGLE-3 default: 3.87 tokens per step on this tree); SGLang of mid-2025 "
                "with the card's patched qwen3.py; dataset not stated; context 1024"),
    Row("Qwen3-30B-A3B BF16, 1x H200, SGLang, plain decode, batch 1", TENGYUNW, "as above: 'Qwen3-30B-A3B with "
        "Eagle3 improves from 147 tokens/second to 231'", "step_s", 1 / 147.0,
        dict(SB, model="qwen3-30b-a3b", tp=1),
        assumed="TP1 and BF16 as for the Qwen3-8B card (the 30B-A3B launch is not published; its speculative flags "
                "neither, so its 1.57x is not scored); context 1024"),
    Row("Llama-2-7B FP16, 1x H100, SGLang, plain decode, batch 1", EAGLE_173, "description by zhyncs, 2025-01-02: "
        "'Normal decoding speed (SGLang): 156 token/s'", "step_s", 1 / 156.0,
        dict(hardware="h100-sxm", engine="sglang", model="llama-2-7b", precision="fp16", tp=1, context=1024),
        assumed="H100 SXM (form factor not stated); the PR's one FastAPI prompt; SGLang of January 2025; context "
                "1024"),
    Row("Llama-2-7B EAGLE-2 tree of 64, 1x H100, SGLang, batch 1", EAGLE_173, "as above: 'Eagle decoding speed "
        "(SGLang): 297 token/s' with --speculative-num-steps 5 --speculative-eagle-topk 8 "
        "--speculative-num-draft-tokens 64", "speedup", 297 / 156,
        dict(hardware="h100-sxm", engine="sglang", model="llama-2-7b", precision="fp16", tp=1, context=1024,
             method="eagle", k=5, tree_tokens=64, tree_branching=8, spec_overlap=False),
        assumed="acceptance not published (EAGLE default: 3.38 tokens per step on this tree); the torch.compile "
                "run (316 tokens/s) not scored; as above"),
    Row("MiniMax-M2.5 FP8, 4x H200, SGLang fork, plain decode, batch 1", TW_MINIMAX, "Results, 'B=1' table, "
        "MT-Bench: baseline 109.9 tokens/s (109.3-110.0 over seven datasets)", "step_s", 1 / 109.9, TW,
        assumed=TW_ASSUMED),
    Row("MiniMax-M2.5 FP8 EAGLE-3 tree of 8, 4x H200, SGLang fork, batch 1", TW_MINIMAX, "as above, MT-Bench: "
        "195.6 tokens/s, 1.78x (1.55-2.11x over seven datasets), steps 3, topk 4, 8 draft tokens", "speedup",
        195.6 / 109.9, dict(TW, method="eagle3", k=3, tree_tokens=8, tree_branching=4),
        assumed="acceptance not published (EAGLE-3 default: 3.16 tokens per step on this tree); the Thoughtworks "
                "draft head (about 464 MB) priced as a one-layer EAGLE-3 head of the target's width; MT-Bench "
                "taken as the one row of seven; " + TW_ASSUMED),
    Row("Qwen3-8B EAGLE-3 chain, 1x H100, SGLang v0.5.9, batch 1, k = 3", SDBENCH, "Tree vs. Chain Verification: "
        "'1.65x -> 1.85x for EAGLE on Qwen3-8B/GSM8K going from chain k=3 to tree k=21'; accepted length 2.25 -> 2.92",
        "speedup", 1.65, dict(hardware="h100-sxm", model="qwen3-8b", engine="sglang", precision="bf16", tp=1,
                              method="eagle3", k=3, context=256, spec_overlap=False), tau=2.25,
        assumed="'EAGLE' on Qwen3-8B read as an EAGLE-3 drafter (EAGLE-1 gives 1.21); BF16; context 256 (GSM8K); "
                "the accepted lengths taken as batch 1's"),
    Row("Qwen3-8B EAGLE-3 tree of 21 drafts, 1x H100, SGLang v0.5.9, batch 1", SDBENCH, "as above: tree k=21 (depth "
        "3, branching factor 4), 1.85x at accepted length 2.92", "speedup", 1.85,
        dict(hardware="h100-sxm", model="qwen3-8b", engine="sglang", precision="bf16", tp=1, method="eagle3", k=3,
             tree_tokens=22, tree_branching=4, context=256, spec_overlap=False), tau=2.92,
        assumed="as above; 21 drafts and the root verified (22 tokens, widths 4, 16, 1)"),
    Row("Llama-3.1-8B BF16, 1x H200, TensorRT-LLM v0.15, 1 request, 2048/128", MODELOPT, "Llama3.1-8B, batch size 1, "
        "BF16: 173.80 tokens/sec (trtllm-bench, input 2048, output 128)", "request_tokens_per_s", 173.80,
        dict(MO, model="llama-3.1-8b", precision="bf16", tp=1), lengths=(2048, 128), assumed=MO_ASSUMED),
    Row("Llama-3.1-8B FP8, 1x H200, TensorRT-LLM v0.15, 1 request, 2048/128", MODELOPT, "as above, FP8: 245.03 "
        "tokens/sec", "request_tokens_per_s", 245.03, dict(MO, model="llama-3.1-8b", precision="fp8", tp=1),
        lengths=(2048, 128), assumed=MO_ASSUMED),
    Row("Llama-3.1-70B BF16, 2x H200 TP2, TensorRT-LLM v0.15, 1 request, 2048/128", MODELOPT, "Llama3.1-70B, batch "
        "size 1, BF16 (TP2): 45.81 tokens/sec", "request_tokens_per_s", 45.81,
        dict(MO, model="llama-3.1-70b", precision="bf16", tp=2), lengths=(2048, 128),
        assumed=MO_ASSUMED),
    Row("Llama-3.1-70B FP8, 1x H200, TensorRT-LLM v0.15, 1 request, 2048/128", MODELOPT, "as above, FP8 (TP1): 43.46 "
        "tokens/sec", "request_tokens_per_s", 43.46, dict(MO, model="llama-3.1-70b", precision="fp8", tp=1),
        lengths=(2048, 128), assumed=MO_ASSUMED),
    Row("Llama-3.1-8B EAGLE, 1x H100, vLLM v0.10.1, batch 128, k = 3", SDBENCH, "End-to-End Performance: 'By batch "
        "size 128, this drops to 1.21x for Llama-3.1-8B on GSM8K'", "speedup", 1.21,
        dict(hardware="h100-sxm", model="llama-3.1-8b", engine="vllm", precision="bf16", tp=1, method="eagle", k=3,
             batch=[128], context=180), tau=2.39,
        assumed="tau 2.39 from the authors' released acceptance traces (SpecDecode-Bench/simulator "
                "data/llama3.1-8B/combined_gsm8k.jsonl, acc_eagle, min(acc, 4) per step); context 180 ~ mean prompt "
                "94 + half the mean output 166 (177.6) of the same traces"),
    Row("DeepSeek-V3.1 FP8, 8x H200 TP8, SGLang bench_one_batch, batch 16, no all-reduce fusion", SGL_14764,
        "description, 'w/o': decode steps 0-4 of 16.32, 15.82, 16.84, 16.15, 15.65 ms (mean 16.16 ms)", "step_s",
        0.016156, dict(B1B, engine=without(_SGL, {"allreduce_norm_mla"})),
        assumed=B1B_ASSUMED + "; priced with SGLang's profile less the all-reduce fusion the run turned off"),
    Row("DeepSeek-V3.1 FP8, 8x H200 TP8, SGLang bench_one_batch, batch 16, all-reduce fusion on", SGL_14764,
        "description, '--enable-flashinfer-allreduce-fusion': decode steps 0-4 of 15.17, 15.19, 15.21, 15.32, 15.39 ms "
        "(mean 15.26 ms)", "step_s", 0.015256, dict(B1B),
        assumed=B1B_ASSUMED + "; the all-reduce fusion, default from v0.5.7 on SM90, counted (allreduce_norm_mla)"),
    *(Row(**r) for r in ROUND9),     # round 9 (2026-12-06): tools/blind_rows_round9.py
    *(Row(**r) for r in ROUND10),    # round 10 (2026-12-06): tools/blind_rows_round10.py
    *(Row(**r) for r in ROUND11),    # round 11 (2026-12-06): tools/blind_rows_round11.py
    *(Row(**r) for r in ROUND12),    # round 12 (2026-12-06): tools/blind_rows_round12.py
    *(Row(**r) for r in ROUND13),    # round 13 (2026-12-06): tools/blind_rows_round13.py
    *(Row(**r) for r in ROUND14),    # round 14 (2026-12-06): tools/blind_rows_round14.py
    *(Row(**r) for r in ROUND15),    # round 15 (2026-12-06): tools/blind_rows_round15.py
    *(Row(**r) for r in ROUND16),    # round 16 (2026-12-06): tools/blind_rows_round16.py (no row qualified)
    *(Row(**r) for r in ROUND17),    # round 17 (2026-12-06): tools/blind_rows_round17.py
    *(Row(**r) for r in ROUND18),    # round 18 (2026-12-06): tools/blind_rows_round18.py (no row qualified)
    *(Row(**r) for r in ROUND19),    # round 19 (2026-12-06): tools/blind_rows_round19.py (no row qualified)
    # rounds 20 (2026-12-06) to 25 (2026-12-07): tools/blind_rows_round20.py .. round25.py, the rows priced
    *(Row(**r) for n in sorted(TRIAGED) for r in TRIAGED[n][0]),
)


def predict(r: Row) -> float:
    """The shipped prediction of row `r`'s metric at batch 1 (or the row's batch)."""
    if r.csv:       # priced by validation's own route (serving, plain step or speculative step), engine_date applied
        return predict_row({"row_id": "blind", **r.csv, "metric": r.metric, "measured": repr(r.measured)})
    s = dict(r.scenario)
    if r.metric == "step_s":
        return float(simulate_step(**{"batch": [1], **s}).step_s[0])
    if r.metric == "request_tokens_per_s":     # trtllm-bench's tokens/s of one request: output over its latency
        isl, osl = r.lengths
        res = serve(Scenario(**s), Workload(isl=isl, osl=osl, concurrency=(1,)))
        return osl / float(res.base.e2e_s[0])
    s.setdefault("batch", [1])
    if r.tau is not None:    # on the tree the run verified, as the CLI's --acceptance-length reads it
        s["acceptance"] = Acceptance.from_measurement(r.tau, s["k"], s.get("tree_tokens"), s.get("tree_branching"),
                                                      default_decay(s["method"]))
    res = speedup_curve(**s)
    return float(getattr(res, r.metric)[0])


DOC = Path(__file__).resolve().parents[1] / "validation" / "BLIND_TEST.md"
BEGIN, END = "<!-- blind_test.py: begin -->", "<!-- blind_test.py: end -->"


def inside_band(r: Row, predicted: float, bands: tuple) -> bool | None:
    """Whether a speedup row measured inside the held-out band of its regime (calibration/heldout.toml); None for
    another metric or where no band covers the row."""
    if r.metric != "speedup":
        return None
    if r.csv:
        model, tau, k = r.csv["model"], float(r.csv["tau"]) if r.csv.get("tau") else None, int(r.csv["k"])
        batch = int(r.csv.get("batch") or r.csv.get("concurrency") or 1)
    else:
        model, tau, k, batch = r.scenario["model"], r.tau, r.scenario.get("k"), r.scenario.get("batch", [1])[0]
    b = band_for(bands, load_model(model).is_moe, batch, tau is not None)
    if b is None:
        return None
    lo, hi = b.speedup_range(predicted, speedup_ceiling(tau, k))      # as curve caps it
    return bool(lo <= r.measured <= hi)


def _coverage(inside: list[bool | None]) -> str:
    n, hit = sum(x is not None for x in inside), sum(bool(x) for x in inside if x is not None)
    bare = sum(1 for r, x in zip(ROWS, inside) if r.metric == "speedup" and x is None)
    return (f"Held-out bands (calibration/heldout.toml, the heldout_80% column of `specroof curve`): {hit} of the {n} "
            f"speedup rows a band covers measured inside its 80 % prediction interval; {bare} speedup rows no band "
            "covers.")


def table() -> list[str]:
    """The markdown table of every row (measured, predicted, signed error), its summary line, and how many speedup
    rows measured inside their regime's held-out band (an independent check of the bands: no blind row made them)."""
    out = ["| row | source | metric | measured | predicted | error | in band |", "|---|---|---|---|---|---|---|"]
    errs, inside, bands = [], [], load_bands()
    for r in ROWS:
        p = predict(r)
        errs.append(p / r.measured - 1.0)
        inside.append(inside_band(r, p, bands))
        mark = {None: "", True: "yes", False: "no"}[inside[-1]]
        out.append(f"| {r.name} | [{r.locator}]({r.url}) | {r.metric} | {r.measured:.4g} | {p:.4g} | "
                   f"{errs[-1]:+.1%} | {mark} |")
    out.append("")
    out.append(f"Median absolute error {statistics.median(abs(e) for e in errs):.1%} over {len(errs)} rows; "
               f"{sum(abs(e) <= 0.2 for e in errs)} of {len(errs)} within 20 %.")
    out.append(_coverage(inside))
    out.append(_signed(errs))
    out.append(_sampled(errs))
    return out


def _sampled(errs: list[float]) -> str:
    """The rows whose requests sample with top-p (a row's `sampling`), as priced and as priced greedily: what the
    sampling filter (simulator/sampling.py) moved, all of them and the dense targets apart."""
    rows = [(r, e) for r, e in zip(ROWS, errs) if r.csv.get("sampling") == "top-p"]
    greedy = [predict(replace(r, csv={**r.csv, "sampling": ""})) / r.measured - 1.0 for r, _ in rows]

    def part(idx: list[int]) -> str:
        now, was = [abs(rows[i][1]) for i in idx], [abs(greedy[i]) for i in idx]
        return (f"{len(idx)} rows, {statistics.median(now):.1%} median ({sum(e <= 0.2 for e in now)} within 20 %), "
                f"{statistics.median(was):.1%} ({sum(e <= 0.2 for e in was)}) priced greedy")
    dense = [i for i, (r, _) in enumerate(rows) if not load_model(r.csv["model"]).is_moe]
    return (f"Rows whose requests sample with top-p (`sampling = top-p`): {part(list(range(len(rows))))}; the dense "
            f"targets' {part(dense)}.")


def _kind(metric: str) -> str:
    """A blind row's kind for the signed summary: a ratio of speculation on to off (validation.RATIO_METRICS), a
    time in seconds, or a rate (tokens per second): every metric falls in one, a new one included."""
    if metric in RATIO_METRICS:
        return "speedups"
    return "rates" if "per_s" in metric else "times"


def _signed(errs: list[float]) -> str:
    """The signed median error (predicted / measured - 1) of each kind of metric: a time priced fast and a rate priced
    slow are both negative; a bias, not a scatter, is what a user can read off before trusting an absolute figure."""
    parts = []
    for kind in ("speedups", "times", "rates"):
        e = [x for r, x in zip(ROWS, errs) if _kind(r.metric) == kind]
        if e:
            parts.append(f"{kind} {statistics.median(e):+.1%} ({len(e)} rows)")
    return "Signed median error (predicted / measured - 1) by kind: " + ", ".join(parts) + "."


def main(argv: list[str] | None = None) -> int:
    """Print the table, or with --write put it between the markers of validation/BLIND_TEST.md."""
    lines = table()
    skipped = [f"skipped (round {n}): {name}: {why}" for n in sorted(TRIAGED) for name, why in TRIAGED[n][1]]
    if "--write" not in (argv if argv is not None else sys.argv[1:]):
        print("\n".join(lines + ([""] if skipped else []) + skipped))
        return 0
    if skipped:         # the table written is the scored rows'; what was skipped goes to stderr
        print("\n".join(skipped), file=sys.stderr)
    doc = DOC.read_text(encoding="utf-8")
    head, rest = doc.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    tmp = DOC.with_suffix(".tmp")
    tmp.write_text(head + BEGIN + "\n" + "\n".join(lines) + "\n" + END + tail, encoding="utf-8")
    tmp.replace(DOC)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
