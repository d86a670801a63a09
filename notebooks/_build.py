"""Regenerate notebooks 01-08 from the cell sources below (outputs stripped): python notebooks/_build.py

The notebooks use the public API only (simulator, simulator.plots, simulator.advise) and compute no FLOPs; every
number they show is a prediction. tests/test_notebooks.py runs each one top to bottom.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

NB01 = [
    ("md", """# 01 Quickstart: when does speculative decoding pay?

specroof predicts, without a GPU, the speedup of speculative decoding over plain decoding at each batch size: a
roofline of every draft and verify pass from datasheet figures (`hardware_specs/`) and HF `config.json` files
(`models/`), priced with an engine's overheads (`engine_profiles/`) and combined with an acceptance model.

Every number below is a **prediction**. The scenario: Llama-3.1-8B-Instruct with its EAGLE-3 head under vLLM, with
the published acceptance (mean acceptance length 2.79 at k = 3, vLLM issue #20780), on one H100 SXM, one B300 and
one GB200 NVL72 GPU."""),
    ("md", """Every input of a prediction is one `Scenario` (hardware, model, drafter, engine, precisions, parallelism,
acceptance, k, context, batches), checked when it is made; `predict(scenario)` prices it. `speedup_curve(...)` is
the same with the Scenario's fields as keywords."""),
    ("code", """import numpy as np
import simulator
from simulator import Acceptance, Scenario, predict, speedup_curve
from simulator import plots

BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
s = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm", k="auto", batch=BATCH)
r = predict(s)
r.to_dataframe()[["batch", "k", "speedup", "tokens_per_step", "verify_bound", "tokens_per_s_per_gpu", "feasible"]]"""),
    ("md", """`k="auto"` picks the best draft depth at each batch. The speedup at a fixed batch is both the per-token
latency ratio and the throughput ratio. The **crossover** is the largest batch where speculation still pays
(speedup >= 1); `feasible` is False where the batch does not fit in the GPU's memory."""),
    ("code", """print("crossover batch:", r.crossover_batch)
print("break-even acceptance rate per batch:", np.round(r.break_even_acceptance, 3))
plots.speedup_vs_batch([r]);"""),
    ("md", """## H100 vs B300 vs GB200 NVL72

The same deployment on three devices. A faster memory system shortens the plain decode step, and more FLOP/s moves
the point where the verify pass of k + 1 tokens per sequence turns compute-bound."""),
    ("code", """DEVICES = ["h100-sxm", "b300", "gb200-nvl72"]
by_hw = [predict(s.replace(hardware=hw)) for hw in DEVICES]
for hw, res in zip(DEVICES, by_hw):
    print(f"{hw:12s} crossover {res.crossover_batch}, speedup at batch 1 {res.speedup[0]:.2f}, "
          f"largest batch that fits {res.max_batch_base}")
plots.hardware_comparison(by_hw);"""),
    ("code", """plots.throughput_tradeoff(by_hw, labels=DEVICES);"""),
    ("md", """## How much acceptance does it need?

The acceptance rate depends on the workload (code, chat, RAG) and the temperature, so it is the most uncertain
input. The heatmap sweeps the i.i.d. acceptance rate alpha at each batch (k chosen per point); the black contour is
break-even (speedup = 1)."""),
    ("code", """grid = plots.speedup_over_acceptance(np.linspace(0.1, 0.9, 9), hardware="h100-sxm",
                                     model="llama-3.1-8b", method="eagle3", engine="vllm", k="auto",
                                     batch=BATCH)
plots.speedup_heatmap(grid);"""),
    ("md", """## What to paste into the engine

`simulator.advise.advise` turns the prediction into a per-batch k table, the batch above which to switch speculation
off, and the engine's own configuration (here vLLM's `--speculative-config`: its
`num_speculative_tokens_per_batch_size` table where the table pays past the PIECEWISE CUDA graphs it forces,
else one k). `specroof advise` on the command line prints the same."""),
    ("code", """from simulator.advise import advise

adv = advise(s, batch_range=(1, 256))
for rng in adv.schedule:
    print(f"batches {rng.start:>3}-{rng.end:<3} k = {rng.k}")
print("switch off above:", adv.off_above)
print(adv.config("vllm").text)
for h in adv.hazards:
    print(f"warning [{h.severity}] {h.title}: {h.links[0]}")"""),
    ("code", """plots.advice(adv);"""),
]

NB02 = [
    ("md", """# 02 Drafters compared: n-gram, draft model, EAGLE, EAGLE-3, DFlash, Medusa, MTP

Each drafter costs something different per step: n-gram lookup costs host time only, a separate draft model runs k
forward passes, EAGLE heads run one decoder layer k times on the target's features, DFlash drafts a whole block in
one pass, Medusa runs its heads once, and MTP reuses the model's own next-token module. specroof prices each with
the same roofline, so the differences below come from the draft cost and the acceptance.

**Acceptance is an input.** EAGLE, EAGLE-3, Medusa and MTP use published values (see
`simulator.speedup.default_acceptance`); n-gram, draft-model and DFlash acceptance depend on the workload and are
set here by assumption (alpha below). All numbers are predictions."""),
    ("code", """import simulator
from simulator import Acceptance, speedup_curve
from simulator import plots

BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256]
ASSUMED = {"ngram": Acceptance.from_rate(0.5), "draft": Acceptance.from_rate(0.7), "dflash": Acceptance.from_rate(0.7)}
llama = {}
for m in ["ngram", "draft", "eagle", "eagle3", "dflash"]:
    llama[m] = speedup_curve("h100-sxm", "llama-3.1-8b", m, acceptance=ASSUMED.get(m), engine="vllm", k="auto",
                             batch=BATCH)
for m, res in llama.items():
    print(f"{m:7s} {res.scenario['drafter'][:70]:70s} crossover {res.crossover_batch}")"""),
    ("code", """plots.speedup_vs_batch(list(llama.values()), labels=list(llama),
                       title="Llama-3.1-8B on H100, vLLM (prediction)");"""),
    ("md", """The best depth falls as the batch grows: each extra draft token adds a verified token per sequence,
which is free while the verify pass is memory-bound and costs compute once it is not."""),
    ("code", """plots.best_k(list(llama.values()), labels=list(llama));"""),
    ("code", """import matplotlib.pyplot as plt
fig, axs = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
plots.time_breakdown(llama["draft"], ax=axs[0], title="separate draft model (Llama-3.2-1B)")
plots.time_breakdown(llama["eagle3"], ax=axs[1], title="EAGLE-3 head");"""),
    ("md", """## Medusa and MTP

Medusa heads exist for Vicuna, and MTP modules for DeepSeek-V3/R1, so these run on their own targets: Vicuna-7B with
Medusa's 64-token tree on an H100 (priced with the `hf` profile, Spec-Bench's research implementations: vLLM drafts
Medusa only as a chain, one token per head), and DeepSeek-R1 in FP8 on eight B200s (tensor parallel 8) under
TensorRT-LLM."""),
    ("code", """medusa = speedup_curve("h100-sxm", "vicuna-7b", "medusa", tree_tokens=64, engine="hf", k="auto",
                       batch=BATCH)
mtp = speedup_curve("b200", "deepseek-r1", "mtp", tp=8, precision="fp8", engine="trtllm", k="auto", batch=BATCH)
plots.speedup_vs_batch([medusa, mtp], labels=["Medusa, Vicuna-7B, H100", "MTP, DeepSeek-R1, 8x B200"]);"""),
    ("code", """plots.throughput_tradeoff([llama["eagle3"], medusa, mtp],
                          labels=["EAGLE-3 Llama-3.1-8B", "Medusa Vicuna-7B", "MTP DeepSeek-R1"]);"""),
]

NB03 = [
    ("md", """# 03 MoE vs dense: the experts a verify pass touches

A dense model reads all its weights once per step whatever the number of tokens, so verifying k + 1 tokens per
sequence is nearly free while decode is memory-bound. A mixture-of-experts model reads only the experts its tokens
are routed to: with E experts and top-k routing, N independent tokens touch about E*(1 - (1 - top_k/E)^N) of them
(uniform routing). The q tokens of one sequence route partly alike, so B sequences of q tokens count as
N = B*(1 + 0.71*(q - 1)) (measured routing locality: `simulator.experts.SEQ_ROUTING_RHO`). A verify pass of k + 1
tokens per sequence still reads many more expert weights than a decode step at small batch, and speculation can
lose. At large batch every expert is touched anyway and the verify pass is cheap again.

Here: Qwen3-30B-A3B (128 experts, top-8) against the dense Qwen3-8B, both with a synthesized EAGLE-3 head and the
same assumed acceptance (alpha = 0.7), on one H100 under vLLM. Predictions."""),
    ("code", """import numpy as np
import simulator
from simulator import Acceptance, simulate_step, speedup_curve
from simulator import plots

BATCH = [1, 2, 4, 8, 16, 32, 64, 128]
ACC = Acceptance.from_rate(0.7)
MODELS = {"Qwen3-8B (dense)": "qwen3-8b", "Qwen3-30B-A3B (MoE)": "qwen3-30b-a3b"}"""),
    ("md", """## The verify pass relative to a decode step

`simulate_step` prices one forward pass. The ratio of a verify pass of 4 tokens per sequence (k = 3) to a decode
step of 1 token shows the cost of verification; for the MoE model its expert (moe) time is shown separately."""),
    ("code", """for name, mid in MODELS.items():
    dec = simulate_step("h100-sxm", mid, BATCH, query_tokens=1, engine="vllm")
    ver = simulate_step("h100-sxm", mid, BATCH, query_tokens=4, engine="vllm")
    print(name)
    print("  verify(k=3) / decode step time:", np.round(ver.step_s / dec.step_s, 2))
    if dec.breakdown_s["moe"].max() > 0:
        print("  verify / decode expert time:  ", np.round(ver.breakdown_s["moe"] / dec.breakdown_s["moe"], 2))"""),
    ("code", """curves = {name: speedup_curve("h100-sxm", mid, "eagle3", acceptance=ACC, engine="vllm", k="auto",
                              batch=BATCH)
          for name, mid in MODELS.items()}
plots.speedup_vs_batch(list(curves.values()), labels=list(curves),
                       title="EAGLE-3, alpha 0.7, H100, vLLM (prediction)");"""),
    ("md", """The MoE model prefers a short draft at small batch, where each extra token pulls in new experts, and a
long one once the batch already touches every expert."""),
    ("code", """plots.best_k(list(curves.values()), labels=list(curves));"""),
    ("code", """plots.time_breakdown(curves["Qwen3-30B-A3B (MoE)"], title="Qwen3-30B-A3B: step time split");"""),
    ("md", """The same acceptance sweep as in notebook 01, for the MoE model: at small batch it needs a higher
acceptance to break even than at mid batch."""),
    ("code", """grid = plots.speedup_over_acceptance(np.linspace(0.3, 0.9, 7), hardware="h100-sxm",
                                     model="qwen3-30b-a3b", method="eagle3", engine="vllm", k="auto",
                                     batch=BATCH)
plots.speedup_heatmap(grid);"""),
]

NB04 = [
    ("md", """# 04 Long context: the sparse-KV drafter regime

At long context the KV cache, not the weights, dominates the bytes a decode step reads, and it grows with the batch.
The verify pass reads the KV once for all k + 1 query tokens, so it stays memory-bound at larger batches and
speculation keeps paying (MagicDec, Chen et al. 2024). A drafter that reads only a window of the KV (self-speculation
with a StreamingLLM budget, here 512 tokens) drafts cheaply however long the context is.

Llama-3.1-8B on one H100: EAGLE-3 under vLLM with its published acceptance, and self-speculation with a 512-token
draft KV window at an **assumed** acceptance alpha = 0.8. No engine ships sparse-KV self-speculation, so specroof
prices it only on the idealised profile (`engine="ideal"`: no host work, no launch cost): read it as the bound a
future implementation could approach, not as a vLLM figure. Predictions; points that do not fit in memory are left
out."""),
    ("code", """import simulator
from simulator import Acceptance, speedup_curve
from simulator import plots

BATCH = [1, 2, 4, 8, 16, 32, 64, 128, 256]
CONTEXTS = [1024, 8192, 32768, 100000]
eagle = {L: speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", engine="vllm", k="auto", context=L, batch=BATCH)
         for L in CONTEXTS}
for L, res in eagle.items():
    print(f"context {L:>6}: crossover {res.crossover_batch}, largest batch that fits {res.max_batch_base}")"""),
    ("md", """At long context the crossover printed above is set by memory, not by the verify pass turning
compute-bound: the KV cache of a few long sequences fills the GPU, and speculation pays at every batch that fits.
The longer the context, the larger the speedup at a given batch."""),
    ("code", """plots.speedup_vs_batch(list(eagle.values()), labels=[f"context {L}" for L in CONTEXTS],
                       title="EAGLE-3, Llama-3.1-8B, H100 (prediction)");"""),
    ("code", """sparse = {L: speedup_curve("h100-sxm", "llama-3.1-8b", "self-sparse",
                          acceptance=Acceptance.from_rate(0.8), draft_kv_window=512, engine="ideal", k="auto",
                          context=L, batch=BATCH)
          for L in CONTEXTS}
plots.speedup_vs_batch(list(sparse.values()), labels=[f"context {L}" for L in CONTEXTS],
                       title="Self-speculation, 512-token draft KV window (ideal engine: a bound)");"""),
    ("md", """Where the time goes at 32k tokens of context: the verify pass is dominated by reading the KV cache,
and the windowed drafter's cost does not grow with the context."""),
    ("code", """import matplotlib.pyplot as plt
fig, axs = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
plots.time_breakdown(eagle[32768], ax=axs[0], title="EAGLE-3, context 32768")
plots.time_breakdown(sparse[32768], ax=axs[1], title="self-sparse (W = 512, ideal engine), context 32768");"""),
    ("code", """plots.throughput_tradeoff([eagle[32768], sparse[32768]], labels=["EAGLE-3", "self-sparse W=512"]);"""),
]


NB05 = [
    ("md", """# 05 Calibrate to your cluster, and check it held out

The shipped profiles carry sourced values plus a few fitted ones (`calibration/fit.toml`: host work per engine and the
per-kernel graph cost per chip architecture, fitted jointly on the headline validation rows). Your stack (driver,
engine version, CPU, attention backend) is yours. Measure a few configurations with and without speculation, write
them in the `validation/rows.csv` schema, and fit the profile's host mechanisms with `simulator.calibrate` (bounded
least squares on log(predicted / measured)). Every fitted value comes with its 1-sigma and a verdict: a parameter
that ends on a bound or whose 1-sigma exceeds its value is **not determined** by your data and keeps the profile's
value.

Here the "cluster" is played by published numbers: vLLM issue #20780 (one H100, Llama-3.1-8B, batch 1, EAGLE-3 at
k = 2..7, run without async scheduling). We fit on k = 2, 4, 6 and check k = 3, 5, 7, which the fit never saw."""),
    ("code", """import numpy as np
from simulator import calibrate, load_engine, load_rows
from simulator.validation import predict_row

steps = ("base_step_s", "spec_step_s")
rows = [r for r in load_rows() if r["source_id"] == "vllm-issue-20780" and r["metric"] in steps]
fit = [r for r in rows if r["k"] in ("", "2", "4", "6")]
held = [r for r in rows if r["k"] in ("3", "5", "7")]
[(r["metric"], r["k"], r["measured"]) for r in rows]"""),
    ("md", """Start from the *sourced* vLLM values (`uncalibrated()` drops the shipped calibration) and fit the host
work per step, the speculative bookkeeping per step and the host work per draft pass."""),
    ("code", """base = load_engine("vllm").uncalibrated()
res = calibrate(fit, base, ("host_step_s", "spec_bookkeeping_s", "draft_step_overhead_s"))
for p in res.params:
    print(p.line())
print(f"RMS log residual {res.rms_before:.3f} -> {res.rms_after:.3f}; every parameter determined: {res.ok}")"""),
    ("code", """mine = res.engines["vllm"]
for r in held:
    before, after = predict_row(r, base), predict_row(r, mine)
    print(f"k = {r['k']}: measured {float(r['measured']) * 1e3:.2f} ms, sourced {before * 1e3:.2f} ms, "
          f"calibrated {after * 1e3:.2f} ms ({after / float(r['measured']) - 1:+.1%})")"""),
    ("md", """The fitted profile is an ordinary engine profile: `simulator.write_profile` writes it as TOML (each fitted
value marked `source = "calibrated"` with its prior and uncertainty), and `specroof curve --engine mine.toml` uses
it. From the command line: `specroof calibrate my_runs.csv --engine vllm --out mine.toml` (it refuses a fit that
leaves a parameter undetermined unless `--force`).

## Held-out accuracy of the shipped calibration

In-sample error is not accuracy. `simulator.crossval` refits every calibrated parameter without each source in turn
and predicts that source (leave-one-source-out); `specroof validate --cv source` does it on all shipped rows
(minutes; the result is `validation/ACCURACY.md`). Here on three sources, to keep the notebook quick."""),
    ("code", """from simulator import crossval
keep = {"vllm-issue-20780", "vllm-pr-16937", "nvidia-nim-llama-3.3-70b"}
cv = crossval([r for r in load_rows() if r["source_id"] in keep], params=("host_step_s", "draft_step_overhead_s"))
for kind, by in cv.report.summary["headline"].items():
    for src, v in by.items():
        print(f"{kind:8s} {src:28s} rows {v['n']:3d}  median |error| {v['median_abs_error']:.1%}")"""),
    ("code", """print(cv.params_table())"""),
    ("md", """What the calibration changes in a prediction: the same EAGLE-3 curve with the sourced and the calibrated
vLLM profile, and where the time of a speculative step goes."""),
    ("code", """from simulator import speedup_curve
from simulator import plots
B = [1, 2, 4, 8, 16, 32, 64, 128]
r0 = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k=3, batch=B, engine=base)
r1 = speedup_curve("h100-sxm", "llama-3.1-8b", "eagle3", k=3, batch=B, engine=mine)
plots.speedup_vs_batch([r0, r1], labels=["sourced vllm", "calibrated on #20780 (k = 2, 4, 6)"]);"""),
    ("code", """plots.time_breakdown(r0, title="sourced vllm");"""),
    ("code", """plots.time_breakdown(r1, title="calibrated vllm");"""),
]


NB07 = [
    ("md", """# 07 Deployments as they run: the NVL72 rack, Kimi-K2 with an EAGLE-3 head, gpt-oss on one H100

Three deployments the engines document (recipes quoted in `validation/sources/recipes.md`), priced as they run:
attention data parallelism with wide expert parallelism across the NVLink domain, FP4 experts with BF16 attention,
MXFP4 weights on a GPU without FP4 tensor cores. Every number is a **prediction**.

Layout flags (`Scenario` fields, also CLI flags): `tp` attention tensor parallelism, `dp` attention data-parallel
groups (the instance has tp x dp GPUs, the busiest group serving ceil(batch/dp) sequences), `ep` GPUs the routed
experts spread over (DP attention at tp 1 + EP replaces every tensor-parallel all-reduce with a dispatch/combine
all-to-all; EP under TP attention moves no tokens and keeps one MoE all-reduce);
`precision`, `expert_precision`, `attention_precision` the weight formats."""),
    ("md", """## 1. DeepSeek-R1 NVFP4 with MTP on GB200 NVL72: DP attention + EP 8, 16, 32, 72

NVIDIA's srt-slurm recipe `ctx3_gen1_dep32_batch4_eplb0_mtp3` (InferenceX, GB200 FP4 8k/1k) decodes on a DEP32
worker: attention DP 32 + MoE EP 32, `num_nextn_predict_layers: 3`, FP8 KV. EP 72 does not divide the 256 experts:
each rank then holds 4 slots (288, the surplus holding redundant copies, as EPLB does). The x axis is the batch per
attention-DP rank."""),
    ("code", """import numpy as np
from simulator import Scenario, predict, serve, Workload
from simulator import plots
from simulator.advise import advise

rack = Scenario(hardware="gb200-nvl72", model="deepseek-r1", method="mtp", engine="trtllm", precision="bf16",
                expert_precision="fp4", kv_precision="fp8", tp=1, k="auto")
per_rank = [1, 2, 4, 8, 16, 32, 64, 128]
curves = {ep: predict(rack.replace(dp=ep, ep=ep, batch=tuple(ep * b for b in per_rank))) for ep in (8, 16, 32, 72)}
for ep, r in curves.items():
    print(f"DEP{ep}: speedup at 1 and 128 per rank {r.speedup[0]:.2f} / {r.speedup[-1]:.2f}, best k {list(r.k)}, "
          f"largest batch {r.max_batch_spec} ({r.max_batch_spec // ep} per rank)")"""),
    ("code", """import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4))
for ep, r in curves.items():
    ax.plot(per_rank, r.speedup, marker="o", label=f"DEP{ep}")
ax.axhline(1.0, color="grey", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xlabel("batch per attention-DP rank")
ax.set_ylabel("speedup of MTP (prediction)")
ax.legend();"""),
    ("md", """The same layout on four HGX nodes of 8x B200 (InfiniBand between them) pays for the dispatch/combine
crossing the NICs: only the collective time grows."""),
    ("code", """from simulator import simulate_step
for hw in ("gb200-nvl72", "b200"):
    st = simulate_step(scenario=rack.replace(hardware=hw, dp=32, ep=32, method=None, batch=(32, 1024)))
    coll = st.breakdown_s["collective"]
    print(f"{hw:12s} step {np.round(st.step_s * 1e3, 2)} ms, collectives {np.round(coll * 1e3, 2)} ms")"""),
    ("md", """Serving the 8k/1k workload on the rack, and the frontier over layouts (DEP 8..72, TP8) with MTP on and
off: where speculation's frontier dominates is the production pattern (on for interactive traffic)."""),
    ("code", """from simulator.frontier import frontier
f = frontier(rack, Workload(isl=8192, osl=1024), gpus=(8, 16, 32, 72))
for t in f.targets:
    print(f"{t.tokens_per_s_per_user:5.0f} tok/s/user: MTP {t.on and t.on.layout.label()} vs off "
          f"{t.off and t.off.layout.label()}, throughput ratio {t.ratio and round(t.ratio, 2)}")
plots.frontier(f);"""),
    ("md", """## 2. Kimi-K2 on B300 with its EAGLE-3 head

`AQ-MedAI/Kimi-K2-Instruct-eagle3` (bundled as `eagle3-kimi-k2`: one Llama layer, hidden 7168, draft
vocabulary 32000); its card recommends SGLang `--speculative-num-steps 3 --speculative-eagle-topk 1
--speculative-num-draft-tokens 4` and reports up to 1.8x peak throughput at bs 8. Kimi-K2 (1T parameters,
384 experts) in FP8 on 8x B300, TP8 attention and EP8 experts."""),
    ("code", """kimi = Scenario(hardware="b300", model="kimi-k2", method="eagle3", engine="sglang", precision="fp8",
                tp=8, ep=8, k="auto", batch=(1, 2, 4, 8, 16, 32, 64, 128))
rk = predict(kimi)
print("drafter:", rk.scenario["drafter"])
print("speedup", np.round(rk.speedup, 2), "k", rk.k)
a = advise(kimi, batch_range=(1, 128), emit=["sglang", "vllm"])
print(a.config("sglang").text)
plots.speedup_vs_batch([rk]);"""),
    ("md", """## 3. gpt-oss-120b MXFP4 on one H100 with EAGLE-3

H100 has no FP4 tensor cores: the MXFP4 experts are read as 4-bit weights and multiplied in BF16 (weight-only,
Marlin-style), attention stays BF16. The vLLM recipe (`GPT-OSS_EAGLE3_Hopper.yaml`) runs
`nvidia/gpt-oss-120b-Eagle3-v2` with `num_speculative_tokens: 3` at `--tensor-parallel-size 1`; the bundled head is
the SpecForge template (`eagle3-gpt-oss-120b`)."""),
    ("code", """oss = Scenario(hardware="h100-sxm", model="gpt-oss-120b", method="eagle3", engine="vllm",
               precision="bf16", expert_precision="mxfp4", k="auto", batch=(1, 2, 4, 8, 16, 32, 64, 128, 256))
ro = predict(oss)
print("fits:", ro.feasible.all(), "largest batch", ro.max_batch_spec)
print("speedup", np.round(ro.speedup, 2), "k", ro.k)
print(advise(oss, batch_range=(1, 256), emit=["vllm"]).config("vllm").text)
plots.time_breakdown(ro, title="gpt-oss-120b MXFP4 on one H100 (EAGLE-3)");"""),
]


NB08 = [
    ("md", """# 08 Serving: TTFT, TPOT and the throughput-interactivity frontier, speculation on and off

Operators run workloads, not fixed batches: prompts of `isl` tokens, answers of `osl`, a number of requests in
flight, a latency target. `serve` prices a steady-state closed loop (continuous batching, prefill chunks sharing the
decode steps) with and without speculation; `frontier` searches layouts and concurrencies for the Pareto frontier of
output tokens/s per GPU against tokens/s per user. All numbers are **predictions**.

The production pattern it explains: speculation on for latency-sensitive traffic, off for throughput. Where the
speculative frontier lies above the plain one, speculation buys throughput at that interactivity; where the two
meet, it buys nothing."""),
    ("code", """import numpy as np
from simulator import Scenario, Workload, serve
from simulator import plots
from simulator.frontier import frontier

s = Scenario(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm", k="auto")
r = serve(s, Workload(isl=1024, osl=1024, concurrency=(1, 4, 16, 64, 256)))
ok = r.feasible & r.base_feasible      # the arrays hold numbers only where both modes fit (as to_dict's nulls)
for i, c in enumerate(r.concurrency):
    if not ok[i]:
        print(f"C={c:4d}: infeasible: {r.message[i] or r.base_message[i]}")
        continue
    print(f"C={c:4d}: TTFT {r.spec.ttft_s[i] * 1e3:6.1f} / {r.base.ttft_s[i] * 1e3:6.1f} ms, TPOT "
          f"{r.spec.tpot_s[i] * 1e3:5.2f} / {r.base.tpot_s[i] * 1e3:5.2f} ms, E2E speedup {r.e2e_speedup[i]:.2f}, "
          f"throughput ratio {r.throughput_ratio[i]:.2f}")"""),
    ("code", """import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(r.concurrency[ok], r.e2e_speedup[ok], marker="o", label="E2E speedup")
ax.plot(r.concurrency[ok], r.throughput_ratio[ok], marker="s", label="throughput ratio (on / off)")
ax.axhline(1.0, color="grey", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xlabel("requests in flight")
ax.legend();"""),
    ("md", """## Llama-3.1-70B (FP8, EAGLE-3) on 8 GPUs: H100, B300 and GB200 NVL72

The frontier over TP 1..8 (one instance per TP group; throughput per GPU counts every GPU) and concurrencies, for a
chat-like workload (1k in, 1k out). The ratio at each interactivity target is speculation-on over off."""),
    ("code", """fronts = {}
for hw in ("h100-sxm", "b300", "gb200-nvl72"):
    fronts[hw] = frontier(Scenario(hardware=hw, model="llama-3.1-70b", method="eagle3", engine="vllm",
                                   precision="fp8", k="auto"), Workload(isl=1024, osl=1024), gpus=(8,),
                          targets=(20, 50, 100, 150))
    print(hw, [(t.tokens_per_s_per_user, t.ratio and round(t.ratio, 2)) for t in fronts[hw].targets])"""),
    ("code", """fig, axs = plt.subplots(1, 3, figsize=(15, 4))
for ax, (hw, f) in zip(axs, fronts.items()):
    plots.frontier(f, ax=ax, title=hw)"""),
    ("md", """A long-prompt workload (8k in, 1k out) moves work to prefill, which speculation does not shorten: the
end-to-end gain shrinks as the prompt share of a request grows."""),
    ("code", """long = frontier(Scenario(hardware="b300", model="llama-3.1-70b", method="eagle3", engine="vllm",
                        precision="fp8", k="auto"), Workload(isl=8192, osl=1024), gpus=(8,), targets=(20, 50, 100))
print([(t.tokens_per_s_per_user, None if t.ratio is None else round(t.ratio, 2)) for t in long.targets])
plots.frontier(long, title="b300, 8k in / 1k out");"""),
]


NB06 = [
    ("md", """# 06 A batch sweep and its analysis

`simulator.sweep` prices a whole parameter grid at once: every (configuration, k, context) cell through the roofline
once over the batch axis, then one numba kernel combines it with every acceptance value. The same spec runs as
sharded, resumable batch jobs (`specroof sweep SPEC.toml --out DIR --shard I/N`, then `--merge DIR`) or on Dask.

Here: Llama-3.1-8B with its EAGLE-3 head on one H100 and one B200 under SGLang, every depth k = 1..8, acceptance
0.50..0.95, contexts 1k..32k and batches 1..256. All numbers are predictions."""),
    ("code", """import time
import numpy as np
from simulator import sweep
from simulator import plots

spec = {
    "hardware": ["h100-sxm", "b200"], "model": "llama-3.1-8b", "method": "eagle3", "engine": "sglang",
    "k": {"start": 1, "stop": 8},
    "acceptance_rate": {"start": 0.50, "stop": 0.95, "step": 0.05},
    "context": {"start": 1024, "stop": 32768, "mul": 2},
    "batch": {"start": 1, "stop": 256},
}
t = time.perf_counter()
ds = sweep.run_sweep(spec)
print(f"{ds.speedup.size:,} points in {time.perf_counter() - t:.2f} s")
ds"""),
    ("md",
     """Best depth per point: the maximum over k. Where even the best k is below 1, speculation should be off."""),
    ("code", """best = ds.speedup.where(ds.feasible).max("k")
best_k = ds.speedup.where(ds.feasible).fillna(0).argmax("k") + 1
h100 = best.sel(hardware="h100-sxm", context=4096)
print("H100, 4k context: largest batch that pays at each acceptance rate")
for a in h100.acceptance_rate.values[::2]:
    row = h100.sel(acceptance_rate=a)
    pays = row.batch.values[(row >= 1.0).values]
    print(f"  alpha {a:.2f}: {pays.max() if pays.size else 'never'}")"""),
    ("code", """import matplotlib.pyplot as plt
fig, axs = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
for ax, hw in zip(axs, ["h100-sxm", "b200"]):
    z = best.sel(hardware=hw, context=4096).transpose("acceptance_rate", "batch")
    m = ax.pcolormesh(z.batch, z.acceptance_rate, z, shading="auto", cmap="viridis")
    ax.contour(z.batch, z.acceptance_rate, z, levels=[1.0], colors="k")
    ax.set_xscale("log", base=2)
    ax.set_title(f"{hw}, context 4096: best-k speedup (prediction)")
    ax.set_xlabel("batch")
axs[0].set_ylabel("acceptance rate")
fig.colorbar(m, ax=axs);"""),
    ("md",
     """Long context moves the crossover: at 32k tokens the plain decode step is dominated by reading the KV cache,
which the verify pass reads once for all k + 1 tokens, so speculation keeps paying to larger batches."""),
    ("code", """fig, ax = plt.subplots(figsize=(7, 4))
for L in [1024, 4096, 16384, 32768]:
    curve = best.sel(hardware="h100-sxm", context=L, acceptance_rate=0.75)
    ax.plot(curve.batch, curve, label=f"context {L}")
ax.axhline(1.0, color="k", lw=0.8)
ax.set_xscale("log", base=2)
ax.set_xlabel("batch")
ax.set_ylabel("best-k speedup at alpha 0.75")
ax.legend();"""),
    ("code", """fig, ax = plt.subplots(figsize=(7, 4))
kk = best_k.sel(hardware="h100-sxm", context=4096, acceptance_rate=[0.6, 0.75, 0.9])
for a in kk.acceptance_rate.values:
    ax.step(kk.batch, kk.sel(acceptance_rate=a), where="mid", label=f"alpha {a:.2f}")
ax.set_xscale("log", base=2)
ax.set_xlabel("batch")
ax.set_ylabel("best k")
ax.legend();"""),
    ("md", """As a table (one row per point) for pandas users:"""),
    ("code", """df = ds.sel(hardware="h100-sxm", context=4096, acceptance_rate=0.75).to_dataframe().reset_index()
df[df.batch.isin([1, 8, 64, 256])][["k", "batch", "speedup", "base_step_s", "spec_step_s", "feasible"]].head(12)"""),
]


def build(cells, path: Path) -> None:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    for i, c in enumerate(nb.cells):
        c["id"] = f"{path.stem[:2]}-cell-{i:02d}"     # stable ids: regenerating does not churn the diff
    nbformat.validate(nb)
    nbformat.write(nb, str(path))


NOTEBOOKS = (("01_quickstart", NB01), ("02_drafters_compared", NB02), ("03_moe_vs_dense", NB03),
             ("04_long_context", NB04), ("05_calibrate", NB05), ("06_sweep", NB06), ("07_deployments", NB07),
             ("08_serving", NB08))


if __name__ == "__main__":
    for name, cells in NOTEBOOKS:
        build(cells, HERE / f"{name}.ipynb")
        print(f"wrote notebooks/{name}.ipynb")
