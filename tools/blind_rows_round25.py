"""Round 25 (2026-12-07) of the blind test (tools/blind_test.py): Qwen's own speed benchmark of the Qwen3 series on
one to eight H20s, one request at a time, under SGLang 0.4.6.post1 and Hugging Face Transformers 4.51.3. Round 21 left
open whether specroof prices the H20 (a Hopper part with 4.0 TB/s of HBM and 148 TFLOPS of BF16 tensor math, a
seventh of an H100's) well: no H20 row could be priced then. Each entry is a Row's keyword arguments; its `csv` entry is
a row in validation/rows.csv's columns, priced by simulator.validation.predict_row exactly as validation prices such a
row (a serving metric: one request in flight, its prompt's prefill and 2048 decode steps). The rules below were fixed,
and the rows written, before any was priced through this file. Disclosed: while judging whether the source was worth
a round, the author priced `specroof step --hardware h20 --engine sglang --batch 1 --context 1024` for Qwen3-0.6B,
-8B, -32B and -30B-A3B in BF16 and FP8 (a decode step, not these rows' metric) and saw it within about 16 % of the
source's input-length-1 rates; the rules were written after that and take every row of the tables that the formats
specroof prices allow, so that look chose no row.

Search (2026-12-07, a research helper's; its brief listed every URL already in the repository): the QwenLM
documentation "Speed Benchmark" of the Qwen3 series (docs/source/getting_started/speed_benchmark.md, read at
QwenLM/Qwen2.5@ac727245, the repository since renamed QwenLM/Qwen3; not the Qwen2.5 benchmark already in
validation/sources/decode.csv). Setup as the page states it: NVIDIA H20 96GB; SGLang 0.4.6.post1, sgl-kernel 0.1.0,
PyTorch 2.6.0+cu124, mem_fraction_static=0.85, context_length=140000, enable_mixed_chunk=True, skip_tokenizer_init=True;
Transformers 4.51.3, PyTorch 2.6.0, Flash Attention 2.7.4; batch size 1 and the fewest GPUs; 2048 tokens generated
after inputs of 1, 6144, 14336, 30720, 63488 and 129024 tokens (the tables print the last as 129042); "Speed =
(tokens_prompt + tokens_generation) / time".

Inclusion rules, fixed before any prediction of these rows was run:
- Every BF16 and FP8 row of the SGLang tables and every BF16 row of the Transformers tables. Not taken: GPTQ-Int8,
  GPTQ-INT4 and AWQ-INT4 rows (integer weight formats specroof does not price) and Transformers' FP8 rows (the page
  itself: "The inference speed of Transformers in FP8 mode is currently not optimal").
- The metric is the request's time, E2E = (input + 2048) / Speed (e2e_s, one request in flight: concurrency 1,
  isl = the input length, osl = 2048), so the prefill is priced, not read off. The last input is 129024 (the notes'
  length, 131072 - 2048; the tables' 129042 read as a typo).
- Layout: the table's GPU count as TP (its notes say TP=2, TP=4, TP=8 where more than one). Precision bf16, or fp8
  for the Qwen3-*-FP8 checkpoints (fine-grained block FP8); KV cache BF16 (neither engine's default was changed).
  SGLang rows carry memory_fraction 0.85 (the page's mem_fraction_static); Transformers rows the hf profile's.
- Engine dates: SGLang 0.4.6.post1 (PyPI, 2025-04-30) and Transformers 4.51.3 (2025-04-14), both 2025-04.
- A row specroof refuses (it does not fit in memory, or its prompt is past the model's 40960 positions: the page ran
  SGLang with context_length=140000, presumably with YaRN, which the bundled configs do not enable) is listed with its
  reason, not scored.
- Nothing is tuned: the h20 device, the models and the SGLang and HF profiles as shipped.
"""

from __future__ import annotations

from blind_rows_common import print_rows, split

URL = ("https://github.com/QwenLM/Qwen2.5/blob/ac7272455d45483d2f579a88295e81586d60ff6f/docs/source/getting_started/"
       "speed_benchmark.md")
OSL = 2048
LENGTHS = (1, 6144, 14336, 30720, 63488, 129024)
ASSUMED = {"sglang": ("SGLang 0.4.6.post1 (sgl-kernel 0.1.0, PyTorch 2.6.0+cu124), mem_fraction_static 0.85, "
                      "context_length 140000, enable_mixed_chunk (one request: nothing to mix); one request of the "
                      "input length and 2048 generated tokens, E2E = (input + 2048) / Speed; KV cache BF16"),
           "hf": ("Transformers 4.51.3 generate() (PyTorch 2.6.0, Flash Attention 2.7.4), batch 1; one request of the "
                  "input length and 2048 generated tokens, E2E = (input + 2048) / Speed; KV cache BF16")}
VERSION = {"sglang": "0.4.6.post1", "hf": "transformers 4.51.3"}

# (engine, bundled model, precision, GPUs by input length (one value: all), Speed tokens/s per input length in
# LENGTHS order, None where the table has no row), as the page prints them.
_TABLES = (
    ("sglang", "qwen3-0.6b", "bf16", 1, (414.17, 1426.46, 2478.02, 3577.42, None, None)),
    ("sglang", "qwen3-0.6b", "fp8", 1, (458.03, 1572.95, 2689.08, 3819.86, None, None)),
    ("sglang", "qwen3-1.7b", "bf16", 1, (227.80, 838.28, 1525.71, 2439.03, None, None)),
    ("sglang", "qwen3-1.7b", "fp8", 1, (333.90, 1198.20, 2095.61, 3165.32, None, None)),
    ("sglang", "qwen3-4b", "bf16", 1, (133.13, 466.19, 789.25, 1165.75, 1423.98, 1371.04)),
    ("sglang", "qwen3-4b", "fp8", 1, (200.61, 662.26, 1066.23, 1467.71, 1660.67, 1497.27)),
    ("sglang", "qwen3-8b", "bf16", 1, (81.73, 296.25, 524.70, 832.67, 1112.78, 1173.32)),
    ("sglang", "qwen3-8b", "fp8", 1, (150.25, 516.64, 859.92, 1242.24, 1476.46, 1393.21)),
    ("sglang", "qwen3-14b", "bf16", 1, (47.10, 174.85, 317.56, 525.80, 742.36, 826.15)),
    ("sglang", "qwen3-14b", "fp8", 1, (97.11, 342.95, 587.33, 880.72, 1089.04, 1049.64)),
    ("sglang", "qwen3-32b", "bf16", (1, 1, 1, 1, 1, 2), (20.72, 77.82, 143.08, 240.75, 342.96, 711.40)),
    ("sglang", "qwen3-32b", "fp8", 1, (46.17, 165.71, 287.60, 436.59, 532.18, 491.45)),
    ("sglang", "qwen3-30b-a3b", "bf16", 1, (137.18, 490.10, 849.62, 1283.94, 1538.79, 1385.65)),
    ("sglang", "qwen3-30b-a3b", "fp8", 1, (155.55, 551.34, 945.13, 1405.91, 1647.89, 1442.14)),
    ("sglang", "qwen3-235b-a22b", "bf16", 8, (74.50, 289.03, 546.73, 979.41, 1493.91, 1639.54)),
    ("sglang", "qwen3-235b-a22b", "fp8", 4, (71.65, 275.16, 514.23, 887.90, 1269.34, 1319.66)),
    ("hf", "qwen3-0.6b", "bf16", 1, (58.57, 154.82, 168.48, 175.93, None, None)),
    ("hf", "qwen3-1.7b", "bf16", 1, (59.83, 238.53, 352.59, 418.13, None, None)),
    ("hf", "qwen3-4b", "bf16", 1, (45.94, 159.95, 195.31, 217.97, None, None)),
    ("hf", "qwen3-8b", "bf16", 1, (45.32, 146.12, 183.29, 208.98, None, None)),
    ("hf", "qwen3-14b", "bf16", 1, (40.66, 108.52, 136.36, 155.38, None, None)),
    ("hf", "qwen3-32b", "bf16", 1, (26.24, 51.41, 62.41, 69.16, None, None)),
    ("hf", "qwen3-30b-a3b", "bf16", 1, (1.89, 7.45, 14.47, 27.03, None, None)),
)


def _rows() -> list[dict]:
    rows = []
    for eng, model, prec, gpus, speeds in _TABLES:
        for i, (isl, speed) in enumerate(zip(LENGTHS, speeds, strict=True)):
            if speed is None:
                continue
            n = gpus if isinstance(gpus, int) else gpus[i]
            csv = dict(hardware="h20", n_gpus=str(n), tp=str(n), engine=eng, engine_version=VERSION[eng],
                       engine_date="2025-04", model=model, precision=prec, kv_precision="bf16", concurrency="1",
                       isl=str(isl), osl=str(OSL), memory_fraction="0.85" if eng == "sglang" else "")
            label = "Transformers" if eng == "hf" else "SGLang"
            rows.append(dict(
                name=f"Qwen3 {model[6:].upper()} {prec.upper()}, {n}x h20 TP{n}, {label}, 1 request, {isl}/{OSL}",
                url=URL, locator=f"'{model.replace('qwen3', 'Qwen3').replace('b-a', 'B-A').replace('b', 'B')} "
                                 f"({label})' table: Input Length {isl if isl != 129024 else 129042}, {prec.upper()}, "
                                 f"GPU Num {n}, Speed {speed:g} tokens/s",
                metric="e2e_s", measured=(isl + OSL) / speed, csv=csv, assumed=ASSUMED[eng]))
    return rows


ROUND25 = tuple(_rows())


def triage(rows: tuple[dict, ...]) -> tuple[tuple[dict, ...], tuple[tuple[str, str], ...]]:
    """(rows scored, (name, reason) of each row refused: one that does not fit in memory or whose prompt is past the
    model's positions, the rules' two refusals)."""
    return split(list(rows), also=("max_position_embeddings",))


def main() -> int:
    """Print the round's rows (name and measured value; nothing priced)."""
    return print_rows(f"round 25: {len(ROUND25)} rows collected", ROUND25, ())


if __name__ == "__main__":
    raise SystemExit(main())
