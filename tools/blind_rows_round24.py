"""Round 24 (2026-12-07) of the blind test (tools/blind_test.py): the ten attention-DP runs round 22 left out. ML.ENERGY
ran the FP8 Qwen3-Coder-480B-A35B on 4 and 8 B200s with 'DP for attention, EP for MLP experts'; round 22's rules left
those runs out because its author could not tell whether their batch counts per DP rank or over all ranks, and its
review found the benchmark states both as global. Each entry is a Row's keyword arguments; its `csv` entry is a row in
validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as validation prices such a row.
The rules below were fixed, and the rows written, before any was priced.

Search (2026-12-07): the data file round 22 read (ml-energy/leaderboard public/data/models/ at round 22's commit),
its configurations labelled parallelization {tensor_parallel 1, data_parallel n, expert_parallel n, 'DP for attention,
EP for MLP experts'}; the benchmark's launch config for them (ml-energy/benchmark @c1d6557f,
configs/vllm/sourcegraph-fim/Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8/B200/monolithic.config.yaml: async-scheduling,
enable-expert-parallel, data-parallel-size, dtype auto, max-num-batched-tokens 8192; num_gpus.txt 4 and 8) and its
driver (mlenergy/benchmark/llm/benchmark.py: a config naming data-parallel-size launches --data-parallel-size with the
GPU count and max_num_seqs // GPUs per replica, and the mean batch sums vllm:num_requests_running over the engines).

Inclusion rules, fixed before any prediction was run (round 22's, for these runs):
- Every labelled configuration whose batch over mean output length is under ln 2 (the median inter-token latency is a
  plain decode step); larger batches left out.
- The median ITL is one plain decode step (base_step_s) at the run's mean batch over all replicas, rounded once from
  the file's value (round 22's table carries it to 0.1, and rounding that again moved three of its rows one sequence);
  context = 256 + half the run's mean output length (prompt length not published: 256 assumed, as in round 22).
- Layout: vLLM's data-parallel MoE deployment on n GPUs: TP1 attention on each of n DP ranks (the batch dealt over
  them), the routed experts EP over all n (tp 1, dp n, ep n). FP8 block-quantised checkpoint (precision fp8), KV cache
  BF16 (vLLM's default).
- A row specroof refuses is listed with its reason, not scored.
- Nothing is tuned: devices, the model and the vLLM profile as shipped.
"""

from __future__ import annotations

import math

from blind_rows_common import print_rows
from blind_rows_round22 import GPU, MLE, triage  # noqa: F401  (the same data file, device names and refusal rule)

FILE = "Qwen__Qwen3-Coder-480B-A35B-Instruct-FP8__sourcegraph-fim.json"
ASSUMED = ("vLLM v0.11.1 (the benchmark's server image vllm/vllm-openai:v0.11.1; ml-energy/benchmark config: "
           "--async-scheduling, --enable-expert-parallel, --data-parallel-size = GPUs, max-num-batched-tokens 8192); "
           "the median ITL read as one plain decode step at the run's mean batch over all DP replicas (max_num_seqs "
           "requests kept in flight, steady state); prompt length not published: 256 tokens assumed, context = 256 + "
           "half the run's mean output length; FP8 block-quantised checkpoint; KV cache BF16 (vLLM's default); TP1 "
           "attention on each DP rank, EP over all GPUs")
ASSUMED += ("; sampling top-p: the harness sends every request temperature 0.8 and top_p 0.95 "
            "(ml-energy/benchmark mlenergy/benchmark/llm/benchmark.py, the LLMBenchmark defaults; added "
            "2026-12-07 with the sampling input, after these rows were first priced)")

# (GPUs, configurations index, max_num_seqs, mean batch, median ITL ms, mean output tokens): the labelled
# configurations that pass the ln 2 rule, as the file gives them (4 decimals).
_RUNS = ((4, 0, 8, 7.4532, 36.1660, 260.9), (4, 1, 16, 15.0101, 37.5766, 247.2),
         (4, 2, 32, 31.2114, 40.5544, 249.2), (4, 3, 64, 62.7976, 42.3419, 264.4),
         (4, 4, 128, 126.1644, 63.5127, 249.1), (8, 6, 8, 8.0000, 25.7865, 257.8),
         (8, 7, 16, 14.3041, 28.5296, 244.7), (8, 8, 32, 29.6129, 29.7038, 256.1),
         (8, 9, 64, 60.5831, 32.0229, 239.2), (8, 10, 128, 125.0984, 107.9823, 240.9))


def _rows() -> list[dict]:
    rows = []
    for n, idx, mns, mean_b, itl_ms, osl in _RUNS:
        assert mns / osl < math.log(2)          # the inclusion rule above
        batch = round(mean_b)
        csv = dict(hardware=GPU["B200"], n_gpus=str(n), tp="1", dp=str(n), ep=str(n), engine="vllm",
                   engine_version="0.11.1", engine_date="2025-11", overlap_scheduler="true", sampling="top-p",
                   model="qwen3-coder-480b-a35b", precision="fp8", batch=str(batch), context=str(256 + round(osl) // 2))
        rows.append(dict(
            name=f"Qwen3-Coder-480B FP8 FIM, {n}x b200 DP{n} EP{n}, vLLM v0.11.1, batch {batch} (ML.ENERGY)",
            url=MLE + FILE,
            locator=f"configurations[{idx}]: gpu_model B200, num_gpus {n}, parallelization data_parallel {n} "
                    f"expert_parallel {n} tensor_parallel 1, max_num_seqs {mns}, avg_batch_size {mean_b:g}, "
                    f"median_itl_ms {itl_ms:g} (avg_output_len {osl:g})",
            metric="base_step_s", measured=itl_ms / 1000.0, csv=csv, assumed=ASSUMED))
    return rows


ROUND24 = tuple(_rows())


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced)."""
    return print_rows(f"round 24: {len(ROUND24)} rows collected", ROUND24, ())


if __name__ == "__main__":
    raise SystemExit(main())
