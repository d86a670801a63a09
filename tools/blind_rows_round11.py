"""Round 11 (2026-12-06) of the blind test (tools/blind_test.py): a hypothesis test on plain decode against batch with
the lengths stated. Round 9's ML.ENERGY rows (vLLM v0.11.1, dense Llama on H100 / B200) were priced increasingly too
fast as the batch grew, but ML.ENERGY publishes no prompt lengths; these rows state them (fixed-length static batches),
so a batch-dependent cost the roofline misses would show here as errors falling with the batch at a fixed length.
Each entry is a Row's keyword arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by
simulator.validation.predict_row exactly as validation prices such a row (the static-batch route: one batch of
`batch` prompts of isl tokens prefilled, then osl decode steps, metric e2e_s). Kept apart from blind_test.py, as
rounds 9 and 10 are.

Search (2026-12-06, the search tool's issues, pages, code and docs corpora, then the sources' repositories): plain
decode TPOT / ITL / throughput at several batch sizes or concurrencies for bundled dense models on bundled devices
under vLLM, SGLang or TensorRT-LLM, with input and output lengths stated, absent from validation/sources/*.csv,
validation/not_mapped.csv and BLIND_TEST.md. What was found but not scored is in the helper's report (round 11).

Inclusion rules, fixed before any prediction was run:
- TensorRT-LLM's performance page (docs/source/performance.md at the commit below, "updated for v0.6.1"): every
  LLaMA 7B and LLaMA 70B row of its "Peak Throughput" tables on H100 (FP8) and A100 (FP16), 15 rows. The L40S rows
  (not a bundled device, and v0.5 data) and the batch-1 first-token tables (prefill only) are out. Each row's
  'Throughput (out tok/s/GPU)' is read back to the end-to-end latency of the static batch: batch x osl /
  (throughput x TP) (gptSessionBenchmark, --duration 0 --num_runs 5: output tokens of one static batch over its
  generation time, prefill included).
- Argonne's LLM-Inference-Bench (All_results.csv at the commit below): every row whose Framework is vLLM or
  TensorRT-LLM, Hardware 'Nvidia H100 GPU' or 'AMD MI300X GPU', Model Llama-2-7b-hf on 1 GPU or Llama-2-70b-hf on
  4 GPUs (the one 70B layout run on both devices), and 'Input Output Length' 128 or 1024 (short and long, input =
  output), at every batch the file gives: 57 rows (the file lists H100 vLLM 7B batch 32 / 1024 twice; both are
  scored). 'Latency' is the seconds of one static batch (vLLM benchmark_latency with ignore_eos; TensorRT-LLM run.py
  --run_profiling), prefill included. A100 rows are out: the paper's A100 system (ALCF Polaris) carries 40 GB A100s,
  not the bundled 80 GB part, and the file does not say which.
- A row specroof refuses (a static batch that does not fit in memory) is listed with its reason, not scored; the
  rule is on the refusal, not on any error.
- Nothing is tuned; the engine profiles, models and devices are the shipped ones. Every build here predates the
  profiles' valid_from (legacy scope): TensorRT-LLM's TensorRT-engine runtime and vLLM's V0 engine of 2023-2024.
"""

from __future__ import annotations

from blind_rows_common import split

# --- TensorRT-LLM performance page (v0.6.1 numbers) ----------------------------------------------------------------
TRT_PERF_COMMIT = "77d24b5fa178f11ed7fafdd9833b7245e075f721"
TRT_PERF = f"https://github.com/NVIDIA/TensorRT-LLM/blob/{TRT_PERF_COMMIT}/docs/source/performance.md"
TRT_PERF_ASSUMED = (
    "TensorRT-LLM v0.6.1 (the page: 'This data has been updated for v0.6.1'; engine_date 2023-12), its TensorRT-engine "
    "C++ runtime with a static batch (gptSessionBenchmark --batch_size B --input_output_len isl,osl); 'LLaMA 7B' / "
    "'LLaMA 70B' are Llama-2-7B / Llama-2-70B (the page's methodology: 'the GPT-J, Llama2-7b, and Llama2-70b "
    "benchmarks'); H100 rows FP8 weights and FP8 KV cache (the page's build commands: --enable_fp8 --fp8_kv_cache), "
    "H100 read as the page's 'H100-HBM3-80GB system' (h100-sxm); A100 rows FP16 weights and KV cache (the page: remove "
    "the FP8 options on A100), A100 read as the 80 GB SXM part (not stated); measured = batch x osl / (out tok/s/GPU "
    "x TP), the seconds of one static batch with its prefill")

# (device, model, batch, tp, isl, osl, out tok/s/GPU)
_TRT = (
    ("H100", "llama-2-7b", 768, 1, 128, 128, 19694), ("H100", "llama-2-7b", 112, 1, 128, 2048, 6818),
    ("H100", "llama-2-7b", 80, 1, 2048, 128, 2244), ("H100", "llama-2-7b", 48, 1, 2048, 2048, 2740),
    ("H100", "llama-2-70b", 1024, 2, 128, 128, 2657), ("H100", "llama-2-70b", 480, 4, 128, 2048, 1486),
    ("H100", "llama-2-70b", 96, 2, 2048, 128, 306), ("H100", "llama-2-70b", 64, 2, 2048, 2048, 547),
    ("A100", "llama-2-7b", 384, 1, 128, 128, 5586), ("A100", "llama-2-7b", 60, 1, 128, 2048, 1928),
    ("A100", "llama-2-7b", 52, 1, 2048, 128, 591), ("A100", "llama-2-7b", 64, 2, 2048, 2048, 782),
    ("A100", "llama-2-70b", 1280, 4, 128, 128, 670), ("A100", "llama-2-70b", 240, 4, 128, 2048, 525),
    ("A100", "llama-2-70b", 120, 4, 2048, 128, 79),
)


def _trt_rows() -> list[dict]:
    rows = []
    for dev, model, b, tp, isl, osl, thr in _TRT:
        h100 = dev == "H100"
        label = "LLaMA 7B" if model == "llama-2-7b" else "LLaMA 70B"
        prec = "fp8" if h100 else "fp16"
        rows.append(dict(
            name=f"{model} {prec.upper()}, {tp}x {dev} TP{tp}, TensorRT-LLM v0.6.1, static batch {b}, {isl}/{osl} "
                 "(TRT-LLM perf page)",
            url=TRT_PERF,
            locator=f"Peak Throughput, '{dev} GPUs ({'FP8' if h100 else 'FP16'})' table, row {label}, batch {b}, TP "
                    f"{tp}, input {isl}, output {osl}: {thr:,} out tok/s/GPU",
            metric="e2e_s", measured=b * osl / (thr * tp), assumed=TRT_PERF_ASSUMED,
            csv=dict(hardware="h100-sxm" if h100 else "a100-sxm-80gb", n_gpus=str(tp), tp=str(tp), engine="trtllm",
                     engine_version="0.6.1", engine_date="2023-12", model=model, precision=prec,
                     kv_precision=prec, batch=str(b), isl=str(isl), osl=str(osl))))
    return rows


# --- Argonne LLM-Inference-Bench ------------------------------------------------------------------------------------
ANL_COMMIT = "4211f5d4e9bc0145ed541b6d372d5d8223b44235"
ANL = f"https://github.com/argonne-lcf/LLM-Inference-Bench/blob/{ANL_COMMIT}/Plots/All_results.csv"
ANL_ASSUMED = (
    "LLM-Inference-Bench (arXiv 2411.00136, Argonne); one static batch of `batch` random prompts of L tokens "
    "generating L tokens (input = output = the file's 'Input Output Length'), 'Latency' its seconds, prefill "
    "included; FP16 weights and KV cache (the scripts' --dtype float16 / TensorRT-LLM --dtype float16); TP = the "
    "file's 'Num of Hardware'")
ANL_H100_VLLM = ("; vLLM on H100 (vLLM/H100: 'pip install vllm', CUDA 12.3, benchmark_latency with ignore_eos), "
                 "version not stated: mid-2024 assumed (engine_date 2024-06, V0 engine, no async scheduling); the "
                 "JLSE H100 read as the 80 GB SXM part (h100-sxm; form factor not stated)")
ANL_H100_TRT = ("; TensorRT-LLM on H100 (TensorRT-LLM/H100: cloned main, trtllm-build --gemm_plugin float16, run.py "
                "--run_profiling), version not stated: mid-2024 assumed (engine_date 2024-06, TensorRT-engine "
                "runtime); the JLSE H100 read as the 80 GB SXM part (h100-sxm)")
ANL_MI300X = ("; vLLM v0.6.1 on MI300X (vLLM/MI300X: 'git checkout v0.6.1', Dockerfile.rocm, benchmark_throughput.py "
              "with the latency loop; engine_date 2024-09, V0 engine, no async scheduling)")

# (CSV line, device, framework, model, GPUs, batch, L, latency s) as the file gives them
_ANL = (
    (1196, "H100", "TensorRT-LLM", "llama-2-7b", 1, 1, 128, 0.8444228172302246),
    (1197, "H100", "TensorRT-LLM", "llama-2-7b", 1, 16, 128, 0.9887202024459839),
    (1198, "H100", "TensorRT-LLM", "llama-2-7b", 1, 32, 128, 1.0865108251571656),
    (1199, "H100", "TensorRT-LLM", "llama-2-7b", 1, 64, 128, 1.3719992160797119),
    (1208, "H100", "TensorRT-LLM", "llama-2-7b", 1, 1, 1024, 7.188259768486023),
    (1209, "H100", "TensorRT-LLM", "llama-2-7b", 1, 16, 1024, 11.6332617521286),
    (1210, "H100", "TensorRT-LLM", "llama-2-7b", 1, 32, 1024, 15.931466126441956),
    (1211, "H100", "TensorRT-LLM", "llama-2-7b", 1, 64, 1024, 32.58724129199982),
    (1256, "H100", "TensorRT-LLM", "llama-2-70b", 4, 1, 128, 2.3088122606277466),
    (1257, "H100", "TensorRT-LLM", "llama-2-70b", 4, 16, 128, 2.6241427421569825),
    (1258, "H100", "TensorRT-LLM", "llama-2-70b", 4, 32, 128, 3.1021173000335693),
    (1259, "H100", "TensorRT-LLM", "llama-2-70b", 4, 64, 128, 3.532482886314392),
    (1268, "H100", "TensorRT-LLM", "llama-2-70b", 4, 1, 1024, 19.740791463851927),
    (1269, "H100", "TensorRT-LLM", "llama-2-70b", 4, 16, 1024, 23.58228623867035),
    (1270, "H100", "TensorRT-LLM", "llama-2-70b", 4, 32, 1024, 26.71548488140106),
    (1271, "H100", "TensorRT-LLM", "llama-2-70b", 4, 64, 1024, 32.01539030075073),
    (1475, "H100", "vLLM", "llama-2-7b", 1, 1, 128, 0.9326443687983555),
    (1476, "H100", "vLLM", "llama-2-7b", 1, 16, 128, 1.1352025307355993),
    (1477, "H100", "vLLM", "llama-2-7b", 1, 32, 128, 1.3743209601331425),
    (1478, "H100", "vLLM", "llama-2-7b", 1, 64, 128, 1.8452401912315206),
    (1487, "H100", "vLLM", "llama-2-7b", 1, 1, 1024, 7.838529322932785),
    (1488, "H100", "vLLM", "llama-2-7b", 1, 16, 1024, 13.168710388265511),
    (1489, "H100", "vLLM", "llama-2-7b", 1, 32, 1024, 18.988406570702015),
    (1490, "H100", "vLLM", "llama-2-7b", 1, 64, 1024, 32.64119966746366),
    (1535, "H100", "vLLM", "llama-2-70b", 4, 1, 128, 2.37026520420089),
    (1536, "H100", "vLLM", "llama-2-70b", 4, 16, 128, 2.7917186753669134),
    (1537, "H100", "vLLM", "llama-2-70b", 4, 32, 128, 3.239108285633847),
    (1538, "H100", "vLLM", "llama-2-70b", 4, 64, 128, 3.7581216053988706),
    (1547, "H100", "vLLM", "llama-2-70b", 4, 1, 1024, 18.91847685233127),
    (1548, "H100", "vLLM", "llama-2-70b", 4, 16, 1024, 23.850443689534828),
    (1549, "H100", "vLLM", "llama-2-70b", 4, 32, 1024, 28.854511220098356),
    (1550, "H100", "vLLM", "llama-2-70b", 4, 64, 1024, 35.13620936707108),
    (3380, "H100", "vLLM", "llama-2-7b", 1, 32, 1024, 19.292556937318295),
    (3619, "MI300X", "vLLM", "llama-2-70b", 4, 1, 128, 4.628225221000321),
    (3622, "MI300X", "vLLM", "llama-2-70b", 4, 1, 1024, 28.744659080999554),
    (3624, "MI300X", "vLLM", "llama-2-70b", 4, 16, 128, 4.906446450004296),
    (3627, "MI300X", "vLLM", "llama-2-70b", 4, 16, 1024, 42.411645440006396),
    (3629, "MI300X", "vLLM", "llama-2-70b", 4, 32, 128, 7.10834490799607),
    (3632, "MI300X", "vLLM", "llama-2-70b", 4, 32, 1024, 62.57317530200089),
    (3634, "MI300X", "vLLM", "llama-2-70b", 4, 64, 128, 12.143052163002721),
    (3637, "MI300X", "vLLM", "llama-2-70b", 4, 64, 1024, 119.4529100380023),
    (3639, "MI300X", "vLLM", "llama-2-70b", 4, 128, 128, 22.553263536996383),
    (3642, "MI300X", "vLLM", "llama-2-70b", 4, 128, 1024, 213.21179701200163),
    (3644, "MI300X", "vLLM", "llama-2-70b", 4, 256, 128, 42.38726026399672),
    (3647, "MI300X", "vLLM", "llama-2-70b", 4, 256, 1024, 397.5956474009945),
    (3799, "MI300X", "vLLM", "llama-2-7b", 1, 1, 128, 2.1483222539973212),
    (3802, "MI300X", "vLLM", "llama-2-7b", 1, 1, 1024, 10.227421112998854),
    (3804, "MI300X", "vLLM", "llama-2-7b", 1, 16, 128, 1.4503554410039214),
    (3807, "MI300X", "vLLM", "llama-2-7b", 1, 16, 1024, 14.616763864003588),
    (3809, "MI300X", "vLLM", "llama-2-7b", 1, 32, 128, 2.0984664389980026),
    (3812, "MI300X", "vLLM", "llama-2-7b", 1, 32, 1024, 28.078189432002546),
    (3814, "MI300X", "vLLM", "llama-2-7b", 1, 64, 128, 3.3637410000010277),
    (3817, "MI300X", "vLLM", "llama-2-7b", 1, 64, 1024, 45.29586544400081),
    (3819, "MI300X", "vLLM", "llama-2-7b", 1, 128, 128, 6.196863867997308),
    (3822, "MI300X", "vLLM", "llama-2-7b", 1, 128, 1024, 82.49157727700367),
    (3824, "MI300X", "vLLM", "llama-2-7b", 1, 256, 128, 12.3043746129988),
    (3827, "MI300X", "vLLM", "llama-2-7b", 1, 256, 1024, 254.1289162289977),
)


def _anl_rows() -> list[dict]:
    rows = []
    for line, dev, fw, model, n, b, L, lat in _ANL:
        vllm = fw == "vLLM"
        if dev == "MI300X":
            csv = dict(hardware="mi300x", engine="vllm", engine_version="0.6.1", engine_date="2024-09",
                       overlap_scheduler="false")
            extra = ANL_MI300X
        elif vllm:
            csv = dict(hardware="h100-sxm", engine="vllm", engine_version="pip, mid-2024 (not stated)",
                       engine_date="2024-06", overlap_scheduler="false")
            extra = ANL_H100_VLLM
        else:
            csv = dict(hardware="h100-sxm", engine="trtllm", engine_version="main, mid-2024 (not stated)",
                       engine_date="2024-06")
            extra = ANL_H100_TRT
        csv.update(n_gpus=str(n), tp=str(n), model=model, precision="fp16", kv_precision="fp16", batch=str(b),
                   isl=str(L), osl=str(L))
        rows.append(dict(
            name=f"{model} FP16, {n}x {dev} TP{n}, {fw}, static batch {b}, {L}/{L} (LLM-Inference-Bench)",
            url=ANL,
            locator=f"line {line}: '{'Nvidia H100 GPU' if dev == 'H100' else 'AMD MI300X GPU'},{n},{fw},"
                    f"meta-llama/{'Llama-2-7b-hf' if model == 'llama-2-7b' else 'Llama-2-70b-hf'},{L},{b},"
                    f"{lat:.4f}...' (Latency, s)",
            metric="e2e_s", measured=lat, assumed=ANL_ASSUMED + extra, csv=csv))
    return rows


ROUND11, REFUSED = split(_trt_rows() + _anl_rows())   # REFUSED: (name, reason), listed, not scored
