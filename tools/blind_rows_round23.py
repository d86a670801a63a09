"""Round 23 (2026-12-07) of the blind test (tools/blind_test.py): the rest of ML.ENERGY's text runs of bundled models,
the lead round 22 named. Round 9 took ML.ENERGY's Llama-3.1-8B / 70B, Llama-3.3-70B and DeepSeek runs and round 22
its Qwen3 MoE runs; the dense Qwen3 (8B, 14B, 32B), gpt-oss (120b, 20b), Llama-4 (Scout, Maverick-FP8) and
Llama-3.1-405B (BF16, FP8) files are bundled targets too and were left out of both. Each entry is a Row's keyword
arguments; its `csv` entry is a row in validation/rows.csv's columns, priced by simulator.validation.predict_row
exactly as validation prices such a row. The rules below were fixed, and the rows written, before any was priced.

Search (2026-12-07): the ML.ENERGY leaderboard data files of the mirror (ml-energy/leaderboard public/data/models/ at
the commit below) for those models' text tasks (LMArena chat, GPQA); the benchmark's launch configs
(ml-energy/benchmark configs/vllm/<task>/<model>/<GPU>/monolithic.config.yaml): enable-expert-parallel for the two
Llama-4 models, none for the others (gpt-oss-120b: '# enable-expert-parallel: true  # vLLM recipes recommend TP',
commented out), no data-parallel size in any.

Inclusion rules, fixed before any prediction was run (round 9's and round 22's, for these models):
- Every configuration of the files named in _MLE whose batch over mean output length is under ln 2 (fewer than half
  of the steps carry a prefill chunk, so the median inter-token latency is a plain decode step); larger batches left
  out.
- The median ITL is one plain decode step (base_step_s) at the run's mean batch, rounded; context = 256 + half the
  run's mean output length (prompt lengths not published; 256 assumed, as in rounds 9 and 22).
- Layout: the benchmark's driver passes --tensor-parallel-size = num_gpus where the config sets no data-parallel size
  (round 22's reading of mlenergy/benchmark/llm/benchmark.py): TP over all the GPUs, and EP over them too for the
  Llama-4 models, whose configs enable expert parallelism (the leaderboard labels those runs tensor_parallel 1,
  expert_parallel n; round 9's note on that label).
- Formats: the dense Qwen3 and Llama-4-Scout BF16 (the configs' dtype); gpt-oss with its checkpoint's MXFP4 experts
  and BF16 other weights (as validation prices gpt-oss rows); the -FP8 releases FP8. KV cache BF16 (vLLM's default).
- A row specroof refuses (it does not fit in memory) is listed with its reason, not scored.
- Nothing is tuned: devices, models and the vLLM profile as shipped.
"""

from __future__ import annotations

import math

from blind_rows_common import print_rows
from blind_rows_round22 import GPU, MLE, triage  # noqa: F401  (the same data files, device names and refusal rule)

MLE_ASSUMED = ("vLLM v0.11.1 (the benchmark's server image vllm/vllm-openai:v0.11.1; ml-energy/benchmark configs: "
               "--async-scheduling, max-num-batched-tokens 8192); the median ITL read as one plain decode step at "
               "the run's mean batch (max_num_seqs requests kept in flight, steady state); prompt length not "
               "published: 256 tokens assumed, context = 256 + half the run's mean output length; KV cache BF16 "
               "(vLLM's default); H100 read as the 80 GB SXM part ('H100 80GB HBM3')")
MLE_ASSUMED += ("; sampling top-p: the harness sends every request temperature 0.8 and top_p 0.95 "
                "(ml-energy/benchmark mlenergy/benchmark/llm/benchmark.py, the LLMBenchmark defaults; added "
                "2026-12-07 with the sampling input, after these rows were first priced)")

# (file, bundled model, precision, expert precision, name prefix, [(GPU, GPUs, configurations index, max_num_seqs,
#  mean batch, median ITL ms, mean output tokens, the label's expert_parallel, its data_parallel)]): the
#  configurations that pass the ln 2 rule, as the file gives them.
_MLE = (
    ('Qwen__Qwen3-8B__lm-arena-chat.json', 'qwen3-8b', 'bf16', '',
     'Qwen3-8B BF16 chat', (
        ('B200', 1, 0, 8, 7.9, 4.971, 639, 1, 1), ('B200', 1, 1, 16, 15.9, 5.781, 646, 1, 1),
        ('B200', 1, 2, 32, 31.9, 10.274, 643, 1, 1), ('B200', 1, 3, 64, 63.8, 12.894, 643, 1, 1),
        ('B200', 1, 4, 128, 127.7, 12.078, 658, 1, 1), ('B200', 1, 5, 256, 255.4, 20.05, 654, 1, 1),
        ('H100', 1, 9, 8, 8.0, 8.204, 647, 1, 1), ('H100', 1, 10, 16, 16.0, 8.904, 660, 1, 1),
        ('H100', 1, 11, 32, 31.9, 10.569, 647, 1, 1), ('H100', 1, 12, 64, 63.9, 13.95, 645, 1, 1),
        ('H100', 1, 13, 96, 95.8, 17.803, 642, 1, 1), ('H100', 1, 14, 128, 127.8, 20.701, 641, 1, 1),
        ('H100', 1, 15, 192, 191.7, 26.345, 659, 1, 1), ('H100', 1, 16, 256, 255.5, 31.358, 654, 1, 1),
        ('H100', 1, 17, 384, 383.0, 42.677, 648, 1, 1),)),
    ('Qwen__Qwen3-8B__gpqa.json', 'qwen3-8b', 'bf16', '',
     'Qwen3-8B BF16 GPQA', (
        ('B200', 1, 0, 8, 8.0, 32.499, 8290, 1, 1), ('B200', 1, 1, 16, 16.0, 37.667, 8202, 1, 1),
        ('B200', 1, 2, 32, 32.0, 38.158, 7911, 1, 1), ('B200', 1, 3, 64, 64.0, 41.417, 8368, 1, 1),
        ('B200', 1, 4, 128, 128.0, 47.579, 8074, 1, 1), ('H100', 1, 5, 8, 8.0, 9.704, 7854, 1, 1),
        ('H100', 1, 6, 16, 16.0, 11.912, 7861, 1, 1), ('H100', 1, 7, 32, 32.0, 16.871, 8170, 1, 1),
        ('H100', 1, 8, 64, 63.3, 26.642, 8367, 1, 1), ('H100', 1, 9, 96, 82.0, 27.876, 8052, 1, 1),)),
    ('Qwen__Qwen3-14B__lm-arena-chat.json', 'qwen3-14b', 'bf16', '',
     'Qwen3-14B BF16 chat', (
        ('B200', 1, 0, 8, 7.9, 7.156, 615, 1, 1), ('B200', 1, 1, 16, 15.9, 7.842, 627, 1, 1),
        ('B200', 1, 2, 32, 31.9, 9.417, 605, 1, 1), ('B200', 1, 3, 64, 63.8, 12.727, 609, 1, 1),
        ('B200', 1, 4, 128, 127.7, 19.067, 606, 1, 1), ('B200', 1, 5, 256, 255.6, 21.165, 624, 1, 1),
        ('H100', 1, 9, 8, 8.0, 12.536, 620, 1, 1), ('H100', 1, 10, 16, 16.0, 13.344, 622, 1, 1),
        ('H100', 1, 11, 32, 31.9, 15.014, 611, 1, 1), ('H100', 1, 12, 64, 63.8, 18.936, 617, 1, 1),
        ('H100', 1, 13, 96, 95.9, 23.496, 623, 1, 1), ('H100', 1, 14, 128, 127.7, 26.164, 614, 1, 1),
        ('H100', 1, 15, 192, 191.7, 33.369, 613, 1, 1), ('H100', 1, 16, 256, 253.4, 38.403, 625, 1, 1),)),
    ('Qwen__Qwen3-14B__gpqa.json', 'qwen3-14b', 'bf16', '',
     'Qwen3-14B BF16 GPQA', (
        ('B200', 1, 0, 8, 8.0, 33.628, 7026, 1, 1), ('B200', 1, 1, 16, 16.0, 34.79, 7304, 1, 1),
        ('B200', 1, 2, 32, 32.0, 30.597, 6907, 1, 1), ('B200', 1, 3, 64, 64.0, 36.268, 6989, 1, 1),
        ('B200', 1, 4, 128, 128.0, 48.84, 7327, 1, 1), ('H100', 1, 5, 8, 8.0, 14.423, 6930, 1, 1),
        ('H100', 1, 6, 16, 16.0, 17.341, 7432, 1, 1), ('H100', 1, 7, 32, 32.0, 21.549, 6939, 1, 1),
        ('H100', 1, 8, 64, 59.0, 28.066, 6711, 1, 1),)),
    ('Qwen__Qwen3-32B__lm-arena-chat.json', 'qwen3-32b', 'bf16', '',
     'Qwen3-32B BF16 chat', (
        ('B200', 1, 0, 8, 8.0, 14.127, 646, 1, 1), ('B200', 1, 1, 16, 16.0, 15.11, 629, 1, 1),
        ('B200', 1, 2, 32, 31.9, 16.814, 634, 1, 1), ('B200', 1, 3, 64, 63.9, 19.583, 631, 1, 1),
        ('B200', 1, 4, 96, 95.8, 21.337, 629, 1, 1), ('B200', 1, 5, 128, 127.8, 24.721, 634, 1, 1),
        ('B200', 1, 6, 192, 191.6, 31.635, 635, 1, 1), ('B200', 1, 7, 256, 255.6, 36.023, 627, 1, 1),
        ('B200', 1, 8, 384, 383.3, 50.249, 635, 1, 1), ('H100', 1, 10, 8, 8.0, 25.206, 638, 1, 1),
        ('H100', 1, 11, 16, 16.0, 26.353, 626, 1, 1), ('H100', 1, 12, 32, 29.3, 28.807, 629, 1, 1),
        ('H100', 2, 13, 8, 8.0, 15.06, 631, 1, 1), ('H100', 2, 14, 16, 16.0, 16.037, 626, 1, 1),
        ('H100', 2, 15, 32, 31.9, 17.914, 642, 1, 1), ('H100', 2, 16, 64, 63.9, 22.446, 635, 1, 1),
        ('H100', 2, 17, 96, 95.8, 26.097, 635, 1, 1), ('H100', 2, 18, 128, 127.8, 29.656, 624, 1, 1),
        ('H100', 2, 19, 192, 191.7, 37.016, 632, 1, 1), ('H100', 2, 20, 256, 255.6, 44.452, 634, 1, 1),
        ('H100', 2, 21, 384, 340.2, 54.895, 628, 1, 1),)),
    ('Qwen__Qwen3-32B__gpqa.json', 'qwen3-32b', 'bf16', '',
     'Qwen3-32B BF16 GPQA', (
        ('B200', 1, 0, 8, 8.0, 44.141, 7334, 1, 1), ('B200', 1, 1, 16, 16.0, 36.032, 7041, 1, 1),
        ('B200', 1, 2, 32, 32.0, 36.588, 6858, 1, 1), ('B200', 1, 3, 64, 64.0, 41.312, 7088, 1, 1),
        ('B200', 1, 4, 128, 110.9, 44.816, 7035, 1, 1), ('H100', 2, 5, 8, 8.0, 16.725, 6936, 1, 1),
        ('H100', 2, 6, 16, 16.0, 19.324, 6906, 1, 1), ('H100', 2, 7, 32, 32.0, 25.268, 7176, 1, 1),
        ('H100', 2, 8, 64, 63.8, 32.281, 7058, 1, 1),)),
    ('openai__gpt-oss-120b__gpqa.json', 'gpt-oss-120b', 'bf16', 'mxfp4',
     'gpt-oss-120b MXFP4 GPQA', (
        ('B200', 1, 0, 8, 8.0, 5.454, 1747, 1, 1), ('B200', 1, 1, 16, 16.0, 6.902, 1796, 1, 1),
        ('B200', 1, 2, 32, 32.0, 10.071, 1776, 1, 1), ('B200', 1, 3, 64, 64.0, 13.951, 1739, 1, 1),
        ('B200', 1, 4, 128, 127.9, 16.482, 1815, 1, 1), ('B200', 1, 5, 256, 255.8, 20.717, 1861, 1, 1),
        ('B200', 1, 6, 512, 511.8, 30.294, 1832, 1, 1), ('B200', 1, 7, 1024, 1023.6, 47.406, 1801, 1, 1),
        ('B200', 2, 10, 8, 8.0, 4.657, 1566, 1, 1), ('B200', 2, 11, 16, 16.0, 5.632, 1637, 1, 1),
        ('B200', 2, 12, 32, 31.9, 6.954, 1659, 1, 1), ('B200', 2, 13, 64, 63.9, 8.799, 1560, 1, 1),
        ('B200', 2, 14, 128, 127.9, 12.118, 1760, 1, 1), ('B200', 2, 15, 256, 255.8, 15.68, 1677, 1, 1),
        ('B200', 2, 16, 512, 511.9, 24.378, 1673, 1, 1), ('B200', 2, 17, 1024, 1023.6, 40.836, 1633, 1, 1),
        ('H100', 1, 21, 8, 8.0, 9.857, 1781, 1, 1), ('H100', 1, 22, 16, 16.0, 13.226, 1680, 1, 1),
        ('H100', 1, 23, 32, 32.0, 17.962, 1758, 1, 1), ('H100', 1, 24, 64, 64.0, 24.151, 1739, 1, 1),
        ('H100', 2, 25, 8, 8.0, 7.177, 1760, 1, 1), ('H100', 2, 26, 16, 16.0, 9.206, 1715, 1, 1),
        ('H100', 2, 27, 32, 32.0, 12.075, 1774, 1, 1), ('H100', 2, 28, 64, 63.9, 16.038, 1681, 1, 1),
        ('H100', 2, 29, 96, 95.9, 19.247, 1808, 1, 1), ('H100', 2, 30, 128, 128.0, 22.497, 1756, 1, 1),
        ('H100', 2, 31, 192, 191.9, 29.224, 1733, 1, 1), ('H100', 2, 32, 256, 255.8, 30.521, 1691, 1, 1),
        ('H100', 2, 33, 384, 383.9, 40.181, 1731, 1, 1), ('H100', 2, 34, 512, 511.7, 48.842, 1748, 1, 1),
        ('H100', 2, 35, 768, 767.8, 65.034, 1719, 1, 1), ('H100', 2, 36, 1024, 1023.8, 79.714, 1775, 1, 1),)),
    ('openai__gpt-oss-20b__gpqa.json', 'gpt-oss-20b', 'bf16', 'mxfp4',
     'gpt-oss-20b MXFP4 GPQA', (
        ('B200', 1, 0, 8, 8.0, 3.802, 2117, 1, 1), ('B200', 1, 1, 16, 16.0, 4.51, 2070, 1, 1),
        ('B200', 1, 2, 32, 32.0, 5.728, 1979, 1, 1), ('B200', 1, 3, 64, 63.9, 7.655, 2093, 1, 1),
        ('B200', 1, 4, 128, 127.9, 16.269, 2164, 1, 1), ('B200', 1, 5, 256, 255.8, 28.69, 2112, 1, 1),
        ('B200', 1, 6, 384, 383.9, 23.482, 2149, 1, 1), ('B200', 1, 7, 512, 511.8, 39.734, 2151, 1, 1),
        ('B200', 1, 8, 1024, 1023.7, 44.503, 2159, 1, 1), ('H100', 1, 11, 8, 8.0, 6.647, 2142, 1, 1),
        ('H100', 1, 12, 16, 16.0, 8.021, 2145, 1, 1), ('H100', 1, 13, 32, 32.0, 9.245, 2183, 1, 1),
        ('H100', 1, 14, 64, 63.9, 11.22, 2091, 1, 1), ('H100', 1, 15, 96, 96.0, 13.522, 2599, 1, 1),
        ('H100', 1, 16, 96, 96.0, 14.309, 2286, 1, 1), ('H100', 1, 17, 128, 128.0, 17.092, 2428, 1, 1),
        ('H100', 1, 18, 192, 191.9, 20.807, 2173, 1, 1), ('H100', 1, 19, 256, 255.9, 24.282, 2111, 1, 1),
        ('H100', 1, 20, 384, 383.9, 34.597, 2228, 1, 1), ('H100', 1, 21, 512, 511.9, 36.226, 2235, 1, 1),
        ('H100', 1, 22, 768, 767.7, 57.055, 2174, 1, 1), ('H100', 1, 23, 1024, 1023.9, 65.821, 2102, 1, 1),)),
    ('meta-llama__Llama-4-Scout-17B-16E-Instruct__lm-arena-chat.json', 'llama-4-scout', 'bf16', '',
     'Llama-4-Scout BF16 chat', (
        ('H100', 4, 0, 8, 8.0, 24.153, 396, 4, 1), ('H100', 4, 1, 16, 16.0, 28.984, 403, 4, 1),
        ('H100', 4, 2, 32, 31.9, 32.988, 401, 4, 1), ('H100', 4, 3, 64, 63.9, 36.498, 404, 4, 1),
        ('H100', 4, 4, 96, 95.7, 38.967, 410, 4, 1), ('H100', 4, 5, 128, 127.6, 42.132, 403, 4, 1),
        ('H100', 4, 6, 192, 191.6, 47.566, 414, 4, 1), ('H100', 4, 7, 256, 255.3, 52.119, 398, 4, 1),
        ('H100', 8, 10, 8, 8.0, 20.289, 406, 8, 1), ('H100', 8, 11, 16, 16.0, 21.933, 404, 8, 1),
        ('H100', 8, 12, 32, 31.9, 23.913, 409, 8, 1), ('H100', 8, 13, 64, 63.8, 26.282, 402, 8, 1),
        ('H100', 8, 14, 96, 95.8, 28.284, 415, 8, 1), ('H100', 8, 15, 128, 127.6, 30.286, 397, 8, 1),
        ('H100', 8, 16, 192, 191.5, 34.254, 405, 8, 1), ('H100', 8, 17, 256, 255.4, 37.45, 413, 8, 1),)),
    ('meta-llama__Llama-4-Maverick-17B-128E-Instruct-FP8__lm-arena-chat.json', 'llama-4-maverick', 'fp8', '',
     'Llama-4-Maverick FP8 chat', (
        ('H100', 8, 0, 8, 8.0, 11.49, 415, 8, 1), ('H100', 8, 1, 16, 16.0, 13.284, 418, 8, 1),
        ('H100', 8, 2, 32, 31.9, 16.148, 412, 8, 1), ('H100', 8, 3, 64, 63.9, 20.67, 406, 8, 1),
        ('H100', 8, 4, 96, 95.8, 24.521, 408, 8, 1), ('H100', 8, 5, 128, 127.7, 27.628, 406, 8, 1),
        ('H100', 8, 6, 192, 191.6, 33.209, 415, 8, 1), ('H100', 8, 7, 256, 255.4, 36.98, 409, 8, 1),)),
    ('meta-llama__Llama-3.1-405B-Instruct__lm-arena-chat.json', 'llama-3.1-405b', 'bf16', '',
     'Llama-3.1-405B BF16 chat', (
        ('B200', 8, 0, 8, 8.0, 29.065, 363, 1, 1), ('B200', 8, 1, 16, 15.9, 29.414, 368, 1, 1),
        ('B200', 8, 2, 32, 31.9, 28.006, 364, 1, 1), ('B200', 8, 3, 64, 63.8, 30.75, 365, 1, 1),
        ('B200', 8, 4, 128, 127.6, 36.52, 372, 1, 1),)),
    ('meta-llama__Llama-3.1-405B-Instruct-FP8__lm-arena-chat.json', 'llama-3.1-405b', 'fp8', '',
     'Llama-3.1-405B FP8 chat', (
        ('B200', 4, 0, 8, 8.0, 29.202, 376, 1, 1), ('B200', 4, 1, 16, 15.9, 31.589, 359, 1, 1),
        ('B200', 4, 2, 32, 31.9, 33.715, 362, 1, 1), ('B200', 4, 3, 64, 63.9, 38.192, 372, 1, 1),
        ('B200', 4, 4, 128, 127.7, 45.757, 369, 1, 1), ('B200', 4, 5, 256, 255.4, 63.405, 375, 1, 1),
        ('H100', 8, 7, 8, 8.0, 33.196, 366, 1, 1), ('H100', 8, 8, 16, 15.9, 34.037, 380, 1, 1),
        ('H100', 8, 9, 32, 31.9, 36.331, 372, 1, 1), ('H100', 8, 10, 64, 63.9, 39.317, 360, 1, 1),
        ('H100', 8, 11, 96, 95.7, 44.09, 368, 1, 1), ('H100', 8, 12, 128, 127.7, 48.043, 361, 1, 1),
        ('H100', 8, 13, 192, 191.5, 62.192, 359, 1, 1),)),
)

def _rows() -> list[dict]:
    rows = []
    for file, model, prec, eprec, label, confs in _MLE:
        for gpu, n, idx, mns, mean_b, itl_ms, osl, ep, dp in confs:
            assert mns / osl < math.log(2) and dp == 1          # the inclusion rule above; no run sets DP
            batch = round(mean_b)
            csv = dict(hardware=GPU[gpu], n_gpus=str(n), tp=str(n), ep=str(n) if ep > 1 else "", engine="vllm",
                       engine_version="0.11.1", engine_date="2025-11", overlap_scheduler="true", sampling="top-p",
                       model=model,
                       precision=prec, expert_precision=eprec, batch=str(batch), context=str(256 + osl // 2))
            lay = (f"; TP{n} attention, EP{n} experts (--tensor-parallel-size {n} with --enable-expert-parallel)"
                   if ep > 1 else f"; TP{n} (--tensor-parallel-size {n})" if n > 1 else "; one GPU")
            rows.append(dict(
                name=f"{label}, {n}x {gpu}, vLLM v0.11.1, batch {batch} (ML.ENERGY)", url=MLE + file,
                locator=f"configurations[{idx}]: gpu_model {gpu}, num_gpus {n}, max_num_seqs {mns}, avg_batch_size "
                        f"{mean_b:g}, median_itl_ms {itl_ms:g} (avg_output_len {osl})",
                metric="base_step_s", measured=itl_ms / 1000.0, csv=csv, assumed=MLE_ASSUMED + lay
                + ("; MXFP4 experts, BF16 other weights (the checkpoint's)" if eprec else "")))
    return rows


ROUND23 = tuple(_rows())


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced)."""
    return print_rows(f"round 23: {len(ROUND23)} rows collected", ROUND23, ())


if __name__ == "__main__":
    raise SystemExit(main())
