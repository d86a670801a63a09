"""Round 22 (2026-12-07) of the blind test (tools/blind_test.py): ML.ENERGY's plain decode of the Qwen3 MoE targets,
a test of one finding. SpecBundle's plain steps at batch 8 (README "What is modelled") measured within 4 % of the priced
step for the MoE targets of 128-160 experts under SGLang on H200; round 9 took ML.ENERGY's dense Llama and DeepSeek
runs (vLLM v0.11.1, H100 / B200) and left its Qwen3 MoE runs out of its scope. These are the same harness's runs of
the bundled 128- and 160-expert targets: does a plain step of a 128-160-expert MoE come out as well on another engine,
other devices and expert parallelism? Each entry is a Row's keyword arguments; its `csv` entry is a row in
validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as validation prices such a row.
The rules below were fixed, and the rows written, before any of them was priced.

Search (2026-12-07): the ML.ENERGY leaderboard data files of the mirror (ml-energy/leaderboard public/data/models/ at
the commit below) of the Qwen3 MoE targets, bundled or same-shape releases of them (the dense Qwen3, Llama-3.1-405B,
Llama-4 and gpt-oss files, also bundled, are outside this round's scope: a lead for a later round); the benchmark's
launch configs
(ml-energy/benchmark configs/vllm/<task>/<model>/<GPU>/monolithic.config.yaml: enable-expert-parallel, bfloat16 or
the checkpoint's FP8, async scheduling, max-num-batched-tokens 8192; no data-parallel size except where a run's
label says so).

Inclusion rules, fixed before any prediction was run (round 9's, for these models):
- Every configuration of the files named in _MLE whose median inter-token latency is a plain decode step: the runs
  keep max_num_seqs requests in flight, so a step admits a new prompt with probability about
  1 - exp(-batch / mean output length); where batch / output length < ln 2 fewer than half of the steps carry a
  prefill chunk and the median ITL is a decode step alone. Larger batches are left out.
- The median ITL is one plain decode step (base_step_s) at the run's mean batch, rounded; context = 256 + half the
  run's mean output length (prompt lengths are not published; 256 assumed for the chat and GPQA prompts as in round
  9, and for the Sourcegraph FIM prompts too, an estimate: fill-in-the-middle prompts carry file context and may be
  longer, which moves only the attention term).
- Layout: one GPU is TP1; on more, enable-expert-parallel with no data-parallel size, which the benchmark's driver
  launches as --tensor-parallel-size = num_gpus (round 9's reading of the same driver): TP attention and EP experts
  over all the GPUs. The FP8 Qwen3-Coder-480B runs labelled 'DP for attention, EP for MLP experts' are left out:
  whether their max_num_seqs and mean batch count per DP rank or over all ranks is not stated. (Review, after
  pricing: the reason is wrong. The benchmark states both as global: mlenergy/benchmark/llm/benchmark.py divides
  max_num_seqs by the GPU count for DP and sums vllm:num_requests_running over the engines. The rule stands as fixed;
  the 10 runs are priceable and left for a later round.)
- Models: Qwen3-30B-A3B-Instruct-2507, -Thinking-2507 and Qwen3-Coder-30B-A3B priced as the bundled qwen3-30b-a3b
  (the same layer shapes, as validation prices SpecBundle's Qwen3-Coder-30B); Qwen3-235B-A22B-Instruct- and
  -Thinking-2507 as qwen3-235b-a22b; Qwen3-Coder-480B as qwen3-coder-480b-a35b. The -FP8 releases are block-FP8
  checkpoints (precision fp8); the others BF16 (the configs' dtype). KV cache BF16 (vLLM's default).
- A row specroof refuses (it does not fit in memory) is listed with its reason, not scored.
- Nothing is tuned: devices, models and the vLLM profile as shipped.
"""

from __future__ import annotations

import math

from blind_rows_common import print_rows, split

MLE_COMMIT = "0cd52dab897c5d91a45f4d413038f3b8b4251b0f"
MLE = f"https://github.com/ml-energy/leaderboard/blob/{MLE_COMMIT}/public/data/models/"
MLE_ASSUMED = ("vLLM v0.11.1 (the benchmark's server image vllm/vllm-openai:v0.11.1; ml-energy/benchmark configs: "
               "--async-scheduling, --enable-expert-parallel, max-num-batched-tokens 8192, dtype bfloat16 / the "
               "checkpoint's FP8); the median ITL read as one plain decode step at the run's mean batch "
               "(max_num_seqs requests kept in flight, steady state); prompt length not published: 256 tokens "
               "assumed, context = 256 + half the run's mean output length; KV cache BF16 (vLLM's default); H100 "
               "read as the 80 GB SXM part ('H100 80GB HBM3')")
MLE_ASSUMED += ("; sampling top-p: the harness sends every request temperature 0.8 and top_p 0.95 "
                "(ml-energy/benchmark mlenergy/benchmark/llm/benchmark.py, the LLMBenchmark defaults; added "
                "2026-12-07 with the sampling input, after these rows were first priced)")
GPU = {"H100": "h100-sxm", "B200": "b200", "H200": "h200-sxm"}

# (file, bundled model, precision, name prefix, [(GPU, GPUs, configurations index, max_num_seqs, mean batch,
#  median ITL ms, mean output tokens, data-parallel size of the label)]): the configurations that pass the ln 2 rule,
#  as the file gives them.
_MLE = (
    ('Qwen__Qwen3-30B-A3B-Instruct-2507__lm-arena-chat.json', 'qwen3-30b-a3b', 'bf16',
     'Qwen3-30B-A3B-Instruct-2507 BF16 chat', (
        ('B200', 1, 0, 8, 7.9, 8.242, 915, 1), ('B200', 1, 1, 16, 15.9, 10.813, 911, 1),
        ('B200', 1, 2, 32, 31.9, 14.283, 915, 1), ('B200', 1, 3, 64, 63.8, 19.317, 929, 1),
        ('B200', 1, 4, 96, 95.7, 18.956, 920, 1), ('B200', 1, 5, 128, 127.8, 20.929, 898, 1),
        ('B200', 1, 6, 192, 191.7, 23.712, 901, 1), ('B200', 1, 7, 256, 255.6, 26.268, 914, 1),
        ('B200', 1, 8, 512, 511.1, 38.003, 924, 1), ('H100', 1, 12, 8, 8.0, 12.852, 927, 1),
        ('H100', 1, 13, 16, 16.0, 17.554, 925, 1), ('H100', 1, 14, 32, 31.9, 22.571, 922, 1),
        ('H100', 1, 15, 64, 63.9, 28.939, 919, 1), ('H100', 1, 16, 96, 88.5, 32.067, 931, 1),
        ('H100', 2, 17, 8, 8.0, 9.361, 901, 1), ('H100', 2, 18, 16, 16.0, 12.551, 926, 1),
        ('H100', 2, 19, 32, 32.0, 15.388, 927, 1), ('H100', 2, 20, 64, 63.9, 18.697, 918, 1),
        ('H100', 2, 21, 96, 95.9, 24.592, 921, 1), ('H100', 2, 22, 128, 127.9, 27.419, 919, 1),
        ('H100', 2, 23, 192, 191.8, 31.258, 915, 1), ('H100', 2, 24, 256, 255.8, 34.583, 920, 1),
        ('H100', 2, 25, 256, 255.7, 33.661, 918, 1), ('H100', 2, 26, 384, 383.5, 42.925, 940, 1),
        ('H100', 2, 27, 512, 511.1, 47.386, 927, 1), ('H100', 2, 28, 512, 511.3, 50.202, 926, 1),)),
    ('Qwen__Qwen3-30B-A3B-Thinking-2507__gpqa.json', 'qwen3-30b-a3b', 'bf16',
     'Qwen3-30B-A3B-Thinking-2507 BF16 GPQA', (
        ('B200', 1, 0, 8, 8.0, 35.001, 7972, 1), ('B200', 1, 1, 16, 16.0, 32.462, 8106, 1),
        ('B200', 1, 2, 32, 32.0, 35.127, 8005, 1), ('B200', 1, 3, 64, 64.0, 40.633, 8298, 1),
        ('B200', 1, 4, 128, 128.0, 56.679, 8436, 1), ('B200', 1, 5, 256, 241.5, 70.958, 8262, 1),
        ('B200', 1, 6, 512, 459.5, 86.7, 8143, 1), ('H100', 1, 7, 8, 8.0, 12.309, 8162, 1),
        ('H100', 1, 8, 16, 16.0, 16.749, 8243, 1), ('H100', 2, 9, 8, 8.0, 9.367, 8309, 1),
        ('H100', 2, 10, 16, 16.0, 11.967, 7950, 1), ('H100', 2, 11, 32, 32.0, 16.395, 8110, 1),
        ('H100', 2, 12, 64, 64.0, 21.539, 8117, 1), ('H100', 2, 13, 96, 96.0, 27.715, 8283, 1),
        ('H100', 2, 14, 128, 128.0, 28.595, 8058, 1),)),
    ('Qwen__Qwen3-Coder-30B-A3B-Instruct__sourcegraph-fim.json', 'qwen3-30b-a3b', 'bf16',
     'Qwen3-Coder-30B-A3B BF16 FIM', (
        ('B200', 1, 0, 8, 7.8, 8.401, 250, 1), ('B200', 1, 1, 16, 15.7, 10.456, 258, 1),
        ('B200', 1, 2, 32, 31.6, 12.864, 252, 1), ('B200', 1, 3, 64, 63.5, 15.911, 251, 1),
        ('B200', 1, 4, 128, 127.0, 20.604, 255, 1), ('H100', 1, 8, 8, 7.9, 12.364, 254, 1),
        ('H100', 1, 9, 16, 15.9, 16.882, 262, 1), ('H100', 1, 10, 32, 31.8, 21.845, 230, 1),
        ('H100', 1, 11, 64, 63.7, 27.549, 258, 1), ('H100', 1, 12, 96, 88.9, 30.752, 252, 1),
        ('H100', 2, 13, 8, 8.0, 9.229, 251, 1), ('H100', 2, 14, 16, 15.9, 11.779, 245, 1),
        ('H100', 2, 15, 32, 31.9, 14.731, 256, 1), ('H100', 2, 16, 64, 63.7, 17.927, 241, 1),
        ('H100', 2, 17, 96, 95.5, 22.719, 255, 1), ('H100', 2, 18, 128, 127.6, 24.767, 252, 1),)),
    ('Qwen__Qwen3-235B-A22B-Instruct-2507__lm-arena-chat.json', 'qwen3-235b-a22b', 'bf16',
     'Qwen3-235B-A22B-Instruct-2507 BF16 chat', (
        ('B200', 4, 0, 8, 8.0, 19.667, 865, 1), ('B200', 4, 1, 16, 16.0, 24.542, 869, 1),
        ('B200', 4, 2, 32, 32.0, 29.833, 871, 1), ('B200', 4, 3, 64, 63.9, 40.822, 876, 1),
        ('B200', 4, 4, 128, 127.9, 47.087, 868, 1), ('B200', 4, 5, 256, 255.7, 53.255, 879, 1),
        ('B200', 4, 6, 512, 511.4, 67.116, 880, 1), ('B200', 8, 12, 8, 8.0, 16.562, 883, 1),
        ('B200', 8, 13, 16, 16.0, 18.703, 888, 1), ('B200', 8, 14, 32, 32.0, 28.806, 868, 1),
        ('B200', 8, 15, 64, 63.9, 32.986, 869, 1), ('B200', 8, 16, 128, 127.8, 36.914, 880, 1),
        ('B200', 8, 17, 256, 255.7, 43.469, 873, 1), ('B200', 8, 18, 512, 511.4, 58.895, 864, 1),
        ('H100', 8, 23, 8, 8.0, 20.239, 864, 1), ('H100', 8, 24, 16, 16.0, 25.348, 865, 1),
        ('H100', 8, 25, 32, 32.0, 34.712, 865, 1), ('H100', 8, 26, 64, 63.9, 40.342, 879, 1),
        ('H100', 8, 27, 96, 95.9, 43.68, 872, 1), ('H100', 8, 28, 128, 127.8, 46.64, 863, 1),
        ('H100', 8, 29, 192, 191.8, 52.363, 880, 1), ('H100', 8, 30, 256, 228.5, 55.48, 874, 1),)),
    ('Qwen__Qwen3-235B-A22B-Instruct-2507-FP8__lm-arena-chat.json', 'qwen3-235b-a22b', 'fp8',
     'Qwen3-235B-A22B-Instruct-2507 FP8 chat', (
        ('B200', 2, 0, 8, 8.0, 36.719, 875, 1), ('B200', 2, 1, 16, 16.0, 40.43, 871, 1),
        ('B200', 2, 2, 32, 32.0, 43.224, 882, 1), ('B200', 2, 3, 64, 63.9, 47.81, 869, 1),
        ('B200', 2, 4, 128, 127.9, 53.917, 885, 1), ('B200', 2, 5, 256, 255.7, 64.475, 876, 1),
        ('H100', 4, 6, 8, 8.0, 35.244, 855, 1), ('H100', 4, 7, 16, 16.0, 37.275, 871, 1),
        ('H100', 4, 8, 32, 32.0, 42.754, 889, 1), ('H100', 4, 9, 64, 63.9, 49.003, 863, 1),
        ('H100', 4, 10, 96, 95.9, 52.737, 863, 1), ('H100', 4, 11, 128, 127.9, 53.126, 863, 1),
        ('H100', 4, 12, 192, 191.8, 60.293, 864, 1), ('H100', 8, 13, 8, 8.0, 24.736, 877, 1),
        ('H100', 8, 14, 16, 16.0, 26.786, 873, 1), ('H100', 8, 15, 32, 32.0, 30.158, 872, 1),
        ('H100', 8, 16, 64, 63.9, 34.669, 876, 1), ('H100', 8, 17, 96, 95.9, 38.738, 873, 1),
        ('H100', 8, 18, 128, 127.8, 42.145, 879, 1), ('H100', 8, 19, 192, 191.8, 49.608, 887, 1),
        ('H100', 8, 20, 256, 255.7, 54.935, 862, 1), ('H100', 8, 21, 384, 383.5, 66.646, 874, 1),
        ('H100', 8, 22, 512, 511.2, 75.838, 881, 1),)),
    ('Qwen__Qwen3-235B-A22B-Thinking-2507__gpqa.json', 'qwen3-235b-a22b', 'bf16',
     'Qwen3-235B-A22B-Thinking-2507 BF16 GPQA', (
        ('B200', 4, 0, 8, 8.0, 19.007, 8928, 1), ('B200', 4, 1, 16, 16.0, 23.205, 8978, 1),
        ('B200', 4, 2, 32, 32.0, 28.451, 8994, 1), ('B200', 4, 3, 64, 64.0, 38.865, 9166, 1),
        ('B200', 4, 4, 128, 128.0, 44.259, 8997, 1), ('B200', 4, 5, 256, 225.6, 50.343, 9150, 1),
        ('B200', 8, 6, 8, 8.0, 16.537, 9263, 1), ('B200', 8, 7, 16, 16.0, 18.775, 9379, 1),
        ('B200', 8, 8, 32, 32.0, 28.752, 9471, 1), ('B200', 8, 9, 64, 64.0, 32.187, 9434, 1),
        ('B200', 8, 10, 128, 128.0, 34.684, 9107, 1), ('B200', 8, 11, 256, 256.0, 47.091, 9252, 1),
        ('B200', 8, 12, 384, 384.0, 83.8, 9302, 1), ('B200', 8, 13, 512, 512.0, 81.844, 8950, 1),
        ('B200', 8, 14, 768, 695.1, 124.033, 9062, 1), ('H100', 8, 15, 8, 8.0, 20.236, 9195, 1),
        ('H100', 8, 16, 16, 16.0, 24.881, 9199, 1), ('H100', 8, 17, 32, 32.0, 33.392, 8955, 1),)),
    ('Qwen__Qwen3-235B-A22B-Thinking-2507-FP8__gpqa.json', 'qwen3-235b-a22b', 'fp8',
     'Qwen3-235B-A22B-Thinking-2507 FP8 GPQA', (
        ('B200', 2, 0, 8, 8.0, 36.865, 9525, 1), ('B200', 2, 1, 16, 16.0, 41.161, 9381, 1),
        ('B200', 2, 2, 32, 32.0, 45.455, 9274, 1), ('B200', 2, 3, 64, 64.0, 50.622, 9219, 1),
        ('B200', 4, 4, 8, 8.0, 24.583, 9201, 1), ('B200', 4, 5, 16, 16.0, 27.298, 9179, 1),
        ('B200', 4, 6, 32, 32.0, 29.478, 9203, 1), ('B200', 4, 7, 64, 64.0, 32.74, 9158, 1),
        ('B200', 4, 8, 128, 128.0, 38.305, 9555, 1), ('B200', 4, 9, 256, 256.0, 52.093, 9116, 1),
        ('B200', 4, 10, 384, 384.0, 75.136, 9329, 1), ('B200', 4, 11, 512, 512.0, 82.013, 9123, 1),
        ('B200', 4, 12, 1024, 896.7, 120.104, 8945, 1), ('H100', 4, 13, 8, 8.0, 35.106, 9047, 1),
        ('H100', 4, 14, 16, 16.0, 38.232, 8934, 1), ('H100', 4, 15, 32, 32.0, 43.308, 9024, 1),
        ('H100', 8, 16, 8, 8.0, 25.475, 9289, 1), ('H100', 8, 17, 16, 16.0, 27.767, 9551, 1),
        ('H100', 8, 18, 32, 32.0, 32.201, 9531, 1), ('H100', 8, 19, 64, 64.0, 39.528, 9020, 1),
        ('H100', 8, 20, 96, 96.0, 43.42, 9232, 1), ('H100', 8, 21, 128, 128.0, 45.919, 9297, 1),)),
    ('Qwen__Qwen3-Coder-480B-A35B-Instruct__sourcegraph-fim.json', 'qwen3-coder-480b-a35b', 'bf16',
     'Qwen3-Coder-480B BF16 FIM', (
        ('B200', 8, 0, 8, 8.0, 17.746, 250, 1), ('B200', 8, 1, 16, 15.9, 24.125, 240, 1),
        ('B200', 8, 2, 32, 31.9, 36.23, 265, 1), ('B200', 8, 3, 64, 63.7, 40.417, 260, 1),
        ('B200', 8, 4, 128, 127.4, 44.611, 240, 1),)),
    ('Qwen__Qwen3-Coder-480B-A35B-Instruct-FP8__sourcegraph-fim.json', 'qwen3-coder-480b-a35b', 'fp8',
     'Qwen3-Coder-480B FP8 FIM', (
        ('B200', 4, 0, 8, 7.5, 36.166, 261, 4), ('B200', 4, 1, 16, 15.0, 37.577, 247, 4),
        ('B200', 4, 2, 32, 31.2, 40.554, 249, 4), ('B200', 4, 3, 64, 62.8, 42.342, 264, 4),
        ('B200', 4, 4, 128, 126.2, 63.513, 249, 4), ('B200', 8, 6, 8, 8.0, 25.787, 258, 8),
        ('B200', 8, 7, 16, 14.3, 28.53, 245, 8), ('B200', 8, 8, 32, 29.6, 29.704, 256, 8),
        ('B200', 8, 9, 64, 60.6, 32.023, 239, 8), ('B200', 8, 10, 128, 125.1, 107.982, 241, 8),)),
)

def _rows() -> list[dict]:
    rows = []
    for file, model, prec, label, confs in _MLE:
        for gpu, n, idx, mns, mean_b, itl_ms, osl, dp in confs:
            assert mns / osl < math.log(2)          # the inclusion rule above
            if dp > 1:                               # attention DP: per-rank or global batch not stated
                continue
            batch = round(mean_b)
            csv = dict(hardware=GPU[gpu], n_gpus=str(n), tp=str(n), ep=str(n) if n > 1 else "", engine="vllm",
                       engine_version="0.11.1", engine_date="2025-11", overlap_scheduler="true", sampling="top-p",
                       model=model,
                       precision=prec, batch=str(batch), context=str(256 + osl // 2))
            rows.append(dict(
                name=f"{label}, {n}x {gpu}, vLLM v0.11.1, batch {batch} (ML.ENERGY)", url=MLE + file,
                locator=f"configurations[{idx}]: gpu_model {gpu}, num_gpus {n}, max_num_seqs {mns}, avg_batch_size "
                        f"{mean_b:g}, median_itl_ms {itl_ms:g} (avg_output_len {osl})",
                metric="base_step_s", measured=itl_ms / 1000.0, csv=csv,
                assumed=MLE_ASSUMED + (f"; TP{n} attention, EP{n} experts (--tensor-parallel-size {n} with "
                                       "--enable-expert-parallel)" if n > 1 else "; one GPU")))
    return rows


ROUND22 = tuple(_rows())
LEFT_OUT = tuple((f"{label}, {gpu}, {n} GPUs, max_num_seqs {mns}", "attention DP: per-rank or global batch not stated")
                 for _, _, _, label, confs in _MLE for gpu, n, _, mns, _, _, _, dp in confs if dp > 1)


def triage(rows: tuple[dict, ...]) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(rows scored, (name, reason) of each row refused: one that does not fit in memory)."""
    return split(list(rows))


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced) and the configurations left out."""
    head = f"round 22: {len(ROUND22)} rows collected; {len(LEFT_OUT)} configurations left out by the rules"
    return print_rows(head, ROUND22, tuple((what, "", "", why) for what, why in LEFT_OUT))


if __name__ == "__main__":
    raise SystemExit(main())
