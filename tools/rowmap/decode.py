"""Rule set 3: validation/sources/decode.csv (plain decode)."""

from __future__ import annotations

from .common import MT_BENCH_CONTEXT, VLLM_SYNC, Row, Skip, d_skip, formats, ix_lengths, note

# ----------------------------------------------------------------------------------------------------------------
# 3. decode.csv (plain decode).
# ----------------------------------------------------------------------------------------------------------------

def d_amd_latency(r: Row, out: Row) -> None:
    """AMD MI300X static-batch latency tables (ROCm blog, ROCm/vllm dev-docker README)."""
    note(out, "E2E latency of one static batch (prefill of isl tokens + osl decode steps); not converted to a decode "
              "step: the tables vary the input length, not the output length, so prefill cannot be separated")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, VLLM_SYNC)
    else:
        note(out, "TRT-LLM 0.16 C++ runtime, emulated static batching (the trtllm profile is the 1.x PyTorch "
                  "backend); H100 SXM per the blog's spec table")
    if r["source_id"].startswith("rocm-vllm-dev"):
        note(out, "KV dtype not stated (latency command has no --kv-cache-dtype: auto)")


def d_dstack(r: Row, out: Row) -> None:
    note(out, "mean TPOT of a serving run (random 3200/800, 500 prompts, max concurrency as given): continuous "
              "batching mixes prefill chunks into decode steps; KV dtype engine default")
    if out["engine"] == "sglang" and "dp-attention" in r["notes"] and out["hardware"] == "h200-sxm":
        out["tp"], out["dp"] = "1", "8"
        note(out, "--tp 8 --enable-dp-attention: SGLang 0.4.x server_args sets dp_size = tp_size, so attention DP8 "
                  "(attention TP1) with MoE TP8")
    if out["engine"] == "trtllm":
        note(out, "trtllm-serve --tp_size 8 --ep_size 4: attention TP8, experts EP4 x TP2")
    if out["engine"] == "vllm":
        out["overlap_scheduler"] = "false"
        note(out, VLLM_SYNC)


def d_nim(r: Row, out: Row) -> None:
    if int(out["concurrency"]) >= 100:
        raise Skip("ITL plateau at ~93 ms from concurrency 100: the running batch is below the concurrency")
    out["engine"] = "trtllm"
    note(out, "NIM backend not stated: an fp8 TP2 NIM profile on H100 is a TensorRT-LLM engine (assumption); "
              "H100 80G form factor not stated (SXM assumed); ITL = mean inter-token latency (AIPerf)")


def d_oracle(r: Row, out: Row) -> None:
    note(out, "average latency of one static batch (prefill 128 + 128 decode steps), vllm benchmark_latency; TP8 "
              "from 'all eight GPUs' (single instance); vLLM version and KV dtype not stated")


def d_ix_issue(r: Row, out: Row) -> None:
    out["source"] = "InferenceX issue #870 (CI sweeps)"
    if out["hardware"] == "b200" and int(out["concurrency"]) >= 64:
        raise Skip("queueing at concurrency 64 (mean TTFT 5.7 s): the running batch is below the concurrency")
    formats(out)
    note(out, "posted by the InferenceX CI agent in an issue, not on the dashboard; same harness as the dashboard "
              "(random 1k/1k)")
    ix_lengths(out)
    if out["metric"] == "tokens_per_s_per_gpu":
        note(out, "output tokens/s per GPU, including the time spent in prefill")


def d_ix_pr(r: Row, out: Row) -> None:
    out["source"] = "InferenceX PR #1061 (MI300X gpt-oss TP1)"
    formats(out, "gpt-oss")
    note(out, "MEDIAN TPOT (not mean); posted by the PR contributor with the InferenceX harness; vLLM 0.17 "
              "(async scheduling on by default)")
    ix_lengths(out, " (the CI's value, assumed for a contributor's run)")


def d_buildkite(r: Row, out: Row) -> None:
    out["overlap_scheduler"] = "false"
    note(out, "mean E2E latency of one static batch (8 x 32 prompt tokens + 128 decode steps, benchmark_latency); "
              "dtype not stated (bf16 default assumed); vLLM main of 2024 (V0): overlap_scheduler false")
    if out["hardware"] == "h100-sxm":
        note(out, "'8xH100' CI node: SXM assumed")


def d_gptoss(r: Row, out: Row) -> None:
    formats(out, "gpt-oss")
    note(out, "bench_one_batch_server --batch-size 1 --input-len 1024 --output-len 512; whether the figure excludes "
              "prefill is not stated (decode assumed); blog file carries a draft banner")
    if out["hardware"] == "h100-sxm":
        note(out, "H100 with triton attention; form factor not stated (SXM assumed)")


def d_pr16937(r: Row, out: Row) -> None:
    out["overlap_scheduler"] = "false"
    out["context"] = "512"
    note(out, "offline output tok/s with --max_num_seqs 1 over 80 MT-Bench prompts (includes the short prefills); "
              "bf16 and SXM assumed (not stated)", MT_BENCH_CONTEXT, VLLM_SYNC)


def d_qwen25(r: Row, out: Row) -> None:
    if out["isl"] != "1":
        raise Skip("speed definition (with or without the prefill of the long input) not stated; only the input-1 "
                   "row is free of prefill")
    out["context"] = ""
    out["overlap_scheduler"] = "false"
    note(out, "2048 tokens generated after a 1-token input: prefill negligible; A100 80GB form factor not stated "
              "(SXM assumed)", VLLM_SYNC)


def d_cookbook(r: Row, out: Row) -> None:
    """SGLang cookbook model pages (section 5.1): bench_serving runs of a stock `--tp 8` server."""
    note(out, "priced as a steady closed loop at the max concurrency (the runs of 80-500 prompts reached a mean of "
              "13-14 of 16 and 57-92 of 64-100 requests in flight, the notes say which); KV cache in the model's "
              "format (SGLang's default, not stated)")
    if out["hardware"] == "a100-sxm-80gb":
        note(out, "the page says 'NVIDIA A100 GPU (8x)': the 80 GB SXM part assumed (not stated; the 40 GB part reads "
                  "its HBM at 1.56 TB/s, not 2.04); its model is the base Llama-3.1-70B, the same shapes")


DECODE = {
    "sgl-cookbook-speed": ("sgl-cookbook", "SGLang cookbook: model pages' speed benchmarks (bench_serving)",
                           d_cookbook),
    "amd-rocm-blog-mi300x-best-practices-2025-01": ("amd-rocm-blog-mi300x-best-practices",
                                                    "AMD ROCm blog: MI300X best practices (static-batch latency)",
                                                    d_amd_latency),
    "rocm-vllm-dev-docker-readme-v0.10.0": ("rocm-vllm-dev-docker-v0.10.0", "ROCm/vllm dev-docker README v0.10.0 "
                                            "(MI300X static-batch latency)", d_amd_latency),
    "dstack-deepseek-r1-h200-mi300x-2025-03": ("dstack-deepseek-r1-h200-mi300x",
                                               "dstack: DeepSeek-R1 on 8x H200 vs 8x MI300X", d_dstack),
    "nvidia-nim-benchmarking-perf-llama33-70b": ("nvidia-nim-llama-3.3-70b", "NVIDIA NIM benchmarking: "
                                                 "Llama-3.3-70B on 2x H100", d_nim),
    "oracle-oci-blog-llama31-405b-mi300x": ("oracle-oci-mi300x-llama-405b", "Oracle OCI blog: Llama-3.1-405B "
                                            "on 8x MI300X", d_oracle),
    "inferencex-issue-870-sweeps": ("inferencex", "InferenceX issue #870 (CI sweeps)", d_ix_issue),
    "inferencex-pr-1061-gptoss-mi300x-tp1": ("inferencex", "InferenceX PR #1061", d_ix_pr),
    "lmsys-amd-dsv3-mtp-mi300x-2025-09": ("amd-rocm-blog-dsv3-mtp-mi300x", "", d_skip(
        "duplicate: the same 'Without MTP' E2E column of the AMD DeepSeek-V3 MTP blog is mapped from serving.csv")),
    "vllm-buildkite-perf-benchmark-2024": ("vllm-ci-perf-benchmark-2024", "vLLM CI performance benchmark (2024, "
                                           "static-batch latency)", d_buildkite),
    "lmsys-sglang-gptoss-blog-2025-08": ("lmsys-blog-sglang-gptoss", "LMSYS blog: SGLang for gpt-oss (bs 1)",
                                         d_gptoss),
    "vllm-pr-16937-eagle3-h100-bs1": ("vllm-pr-16937", "vLLM PR #16937 (EAGLE on H100, bs 1)", d_pr16937),
    "tenstorrent-ttis-356-dsr1-16xh100": ("tenstorrent-dsr1-16xh100", "", d_skip(
        "16 H100 over two nodes; parallel layout (TP16 or TP8 x PP2/DP2) not stated")),
    "qwen25-speed-benchmark-vllm-a100": ("qwen2.5-speed-benchmark", "Qwen2.5 speed benchmark (vLLM, A100, bs 1)",
                                         d_qwen25),
}


