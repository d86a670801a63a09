"""Build validation/rows.csv: the published measurements mapped to specroof scenario rows.

Run by hand from the repository root, `python tools/build_rows.py`; its output (validation/rows.csv and
validation/not_mapped.csv) is committed. The output is deterministic: the same inputs give the same bytes. The rules
live in tools/rowmap/, one module per staged file (common.py holds what they share and the checks every row passes);
this script reads the files and writes the output.

Inputs (all shipped in validation/):
- published_measurements.csv: the project's first collection; 44 rows were mapped from it (and from vLLM issue
  #20780) before this script read anything else. Their mapping (tools/rowmap/first.py) is unchanged, and so are
  their ids S001-S044.
- sources/decode.csv, sources/speculative.csv, sources/serving.csv: later collections (SOURCES.md says where every
  number comes from). Each staged row is either mapped to one rows.csv row or listed in not_mapped.csv with the
  reason.

Row ids: S001-S044 the first 44 rows; then S045... the rows of speculative.csv, D001... those of decode.csv, V001...
those of serving.csv. An id stays with its row: a row already in the committed rows.csv (the same published_row)
keeps its id, and a new row takes the next free number of its prefix, in (source_id, staged row) order, so adding a
source renumbers nothing (`keep_ids`; a build with no rows.csv numbers every row in that order). Rows are written in
(source_id, staged row) order within each file's block. The first 44 rows stay at the top of the file (tests and
examples read its first rows).

Mapping rules (README "Mapping rules" explains them; every decision a source does not state is written into the row's
`notes`):
1. Bundled names only. hardware, engine and model must be bundled (`specroof models` lists the models); a drafter goes
   into `draft` only when the source's drafter is the bundled one, else `draft` is empty (the method's bundled or
   synthesized head) and the notes say so. Rows that fail are not mapped.
2. A load point. A row needs a fixed batch or a client max concurrency (with isl/osl when published). Rows measured at
   a request rate (QPS), with all prompts offered at once, or where the source shows the running batch below the
   concurrency (queueing, ITL plateau) are not mapped: their decode batch is unknown.
3. Known parallelism. tp = attention tensor-parallel size of one instance, dp = attention data-parallel ranks, ep =
   expert-parallel size, n_gpus = GPUs of the serving unit (prefill + decode for disaggregated serving; InferenceX
   divides a disaggregated run's output throughput by its decode GPUs only, utils/process_result.py, and so does
   specroof validate for such rows). Rows whose layout is not stated are not mapped.
4. Metrics keep their published meaning. An E2E latency (fixed batch or per request) stays e2e_s; a speedup that
   includes prefill is e2e_speedup; ratios at matched interactivity are throughput_ratio. Only unit conversions and
   the arithmetic written in the notes are applied.
5. Settings the scenario needs and the source does not state get a documented default, written in the notes:
   context (isl + osl / 2 when both are published, 512 for MT-Bench as in S001-S018, else specroof's 1024), weight
   formats (NVFP4/MXFP4 MoE checkpoints: experts 4-bit, other weights bf16, as in S021-S025), the engine's scheduler
   mode (vLLM before async scheduling became the default, PR #27614 (~v0.12): overlap_scheduler false), and the
   length draw of InferenceX's harness (length_ratio 0.8: lengths uniform on [0.8 x isl, isl], [0.8 x osl, osl]).
   The KV-cache format of an InferenceX run is its launch flag at the run's date (sources/inferencex_kv.csv, with the
   evidence in the notes); where no source states it, bf16 is priced.
6. Lossy acceptance (SGLang accept threshold < 1, TRT-LLM relaxed acceptance) is kept and marked "lossy" in notes.
7. The same measurement collected twice is mapped once (the copy with the most columns); the other is not mapped.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))   # tools/rowmap, the rules

from rowmap.common import COLS, SRC, VAL, Row, Skip, base_row, check, engine_date, launch_facts  # noqa: E402
from rowmap.decode import DECODE  # noqa: E402
from rowmap.first import FIRST_FIXED, first_rows  # noqa: E402
from rowmap.serving import SERVING, ix_sglang_memory, ix_sglang_mtp, srt_slurm_decode  # noqa: E402,F401  (tests read them)
from rowmap.speculative import SPEC  # noqa: E402


def staged(name: str, table: dict, prefix: str, dropped: list[Row]) -> list[Row]:
    with open(SRC / name, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    mapped = []
    for i, r in enumerate(rows, start=1):
        sid, label, rule = table[r["source_id"]]
        where = f"sources/{name}:{i}"
        out = base_row(r, sid, label or r["source"], where)
        try:
            rule(r, out)
            launch_facts(out)
            check(out)
        except Skip as e:
            dropped.append(dict(published_row=where, staged_source_id=r["source_id"], source_id=sid,
                                metric=r["metric"], measured=r["measured"], reason=str(e)))
            continue
        mapped.append(out)
    mapped.sort(key=lambda o: (o["source_id"], int(o["published_row"].rsplit(":", 1)[1])))
    for n, o in enumerate(mapped, start=1):
        o["row_id"] = f"{prefix}{n:03d}"
    return mapped


def keep_ids(rows: list[Row], previous: dict[str, str], floor: int = 0) -> None:
    """Give each staged row the id `previous` (published_row -> row_id, from the committed rows.csv) gave it, and each
    new one the next number of its prefix after both the largest id kept and `floor` (the first rows' S001-S044)."""
    kept = [previous.get(o["published_row"], "") for o in rows]
    kept = [k if k[:1] == o["row_id"][:1] else "" for k, o in zip(kept, rows)]     # an id of the same file only
    top = Counter({"S": floor})
    for k in filter(None, kept):
        top[k[0]] = max(top[k[0]], int(k[1:]))
    for o, k in zip(rows, kept):
        if not k:
            top[o["row_id"][0]] += 1
            k = f"{o['row_id'][0]}{top[o['row_id'][0]]:03d}"
        o["row_id"] = k


def previous_ids(path: Path) -> dict[str, str]:
    """published_row -> row_id of every row in the committed rows.csv but the first FIRST_FIXED (whose ids are their
    position): the staged rows and the first file's later rows (found by review: the Spec-Bench RTX 3090 rows were
    numbered again after any new staged row). None when there is no file."""
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    fixed = {f"S{n:03d}" for n in range(1, FIRST_FIXED + 1)}
    return {r["published_row"]: r["row_id"] for r in rows if r["row_id"] not in fixed}


def build() -> tuple[list[Row], list[Row]]:
    """Every mapped row (in rows.csv order) and every staged row that is not mapped (with the reason)."""
    dropped: list[Row] = []
    first = first_rows()
    first, late = first[:FIRST_FIXED], first[FIRST_FIXED:]
    spec = staged("speculative.csv", SPEC, "S", dropped)
    decode, serving = staged("decode.csv", DECODE, "D", dropped), staged("serving.csv", SERVING, "V", dropped)
    keep_ids(spec + decode + serving + late, previous_ids(VAL / "rows.csv"), floor=len(first))
    rows = first + late + spec + decode + serving
    assert len({r["row_id"] for r in rows}) == len(rows)
    for r in rows:
        r["engine_date"] = engine_date(r)
    return rows, dropped


def main() -> None:
    rows, dropped = build()
    with open(VAL / "rows.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(VAL / "not_mapped.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(dropped[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(dropped)
    n = Counter(r["row_id"][0] for r in rows)
    print(f"wrote {len(rows)} rows ({n['S']} S, the first 44 included; {n['D']} D, {n['V']} V); "
          f"{len(dropped)} staged rows not mapped")
    for (sid, why), n in sorted(Counter((d["source_id"], d["reason"]) for d in dropped).items()):
        print(f"  not mapped: {sid}: {n} x {why}")


if __name__ == "__main__":
    main()
