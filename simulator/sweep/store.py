"""Sweeps on disk: one Parquet file per shard, a manifest, resume, merge, and Dask.

`sweep_to_dir(spec, DIR)` writes DIR/manifest.json (manifest.py: spec, hash, version, shard count), one Parquet file
per shard DIR/shards/shard-I-of-N.parquet (one row per point) and, when all shards are there, DIR/sweep.parquet.
Shards are contiguous blocks of cells (I counts from 0), so `--shard I/N` job arrays cover the grid exactly once;
every file is written to a temporary name and renamed, and a rerun skips shards whose file exists and validates.
`plan_dir(spec, DIR)` says what a run would do there, doing nothing (`--dry-run`).
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ScenarioError
from ..files import check_output_dir
from .durable import MERGED, atomic_bytes, atomic_with, checksum_path, crashed_writer, os_errors, seal, sha256
from .evaluate import ShardResult, check_some_configuration, evaluate
from .manifest import JOB_ARRAY_SHARDS, check_manifest, check_shard_count, existing_manifest, shard_limit
from .names import FIELD_ORDER, column_doc
from .spec import ACCEPTANCE, PARAMS, STRING_PARAMS, SweepSpec, is_int, load_spec

ROW_GROUP_ROWS = 1 << 19           # rows per Parquet row group (bounds the flattened columns in memory)


def shard_range(n_cells: int, i: int, n: int) -> tuple[int, int]:
    """Cells [c0, c1) of shard i of n: contiguous, disjoint, covering 0..n_cells-1 (some empty when n > n_cells)."""
    if not (is_int(n) and n >= 1 and is_int(i) and 0 <= i < n):
        raise ScenarioError(f"shard {i}/{n}: expected 0 <= I < N")
    return n_cells * i // n, n_cells * (i + 1) // n


def _param_types(spec: SweepSpec, dic: Any) -> list[tuple[str, Any]]:
    """Columns of the cell parameters (swept or fixed) in grid order: names as dictionary strings, the rest int64.
    Acceptance, batch and a k chosen by k = "auto" are not among them."""
    import pyarrow as pa
    cols: list[tuple[str, Any]] = []
    for p in PARAMS:
        if p in ACCEPTANCE or p == "batch" or (p == "k" and spec.auto):
            continue
        if p in spec.scalars or any(p in a.params for a in spec.cell_axes):
            cols.append((p, dic if p in STRING_PARAMS else pa.int64()))
    return cols


def _result_types(dic: Any) -> list[tuple[str, Any]]:
    """Columns of the result fields but k, in FIELD_ORDER."""
    import pyarrow as pa
    return [(name, pa.bool_() if name == "feasible" else dic if name == "message"
             else pa.int64() if name == "verify_tokens" else pa.float64()) for name in FIELD_ORDER if name != "k"]


def _column_types(spec: SweepSpec) -> list[tuple[str, Any]]:
    """(name, Arrow type) of every column: parameters, acceptance, batch, the chosen k (k = "auto"), results."""
    import pyarrow as pa
    dic = pa.dictionary(pa.int32(), pa.string())
    cols = _param_types(spec, dic)
    acc = spec.acceptance_param
    if acc:
        cols.append((acc, pa.float64()))
    cols.append(("batch", pa.int64()))
    if spec.auto:
        cols.append(("k", pa.int64()))
    return cols + _result_types(dic)


def schema(spec: SweepSpec, metadata: dict[str, str] | None = None):
    """Arrow schema of the shard and merged files (one row per point), each column's description in its field
    metadata (names.column_doc: `pyarrow.parquet.read_schema(path).field(name).metadata[b"description"]`)."""
    import pyarrow as pa
    md = {"specroof.spec_hash": spec.spec_hash}
    md.update(metadata or {})
    return pa.schema([pa.field(n, t, metadata={"description": column_doc(n, spec.auto)})
                      for n, t in _column_types(spec)], metadata=md)


def _param_column(spec: SweepSpec, p: str, cells: list[dict[str, Any]], reps: int):
    import pyarrow as pa
    vals = [d[p] for d in cells]
    if p in STRING_PARAMS:
        dictionary = sorted({str(v) for v in vals})
        pos = {v: j for j, v in enumerate(dictionary)}
        idx = np.repeat(np.array([pos[str(v)] for v in vals], dtype=np.int32), reps)
        return pa.DictionaryArray.from_arrays(pa.array(idx), pa.array(dictionary, type=pa.string()))
    mask = np.repeat(np.array([v == "default" for v in vals], dtype=bool), reps)
    arr = np.repeat(np.array([0 if v == "default" else v for v in vals], dtype=np.int64), reps)
    return pa.array(arr, mask=mask if mask.any() else None)


def _per_point(arr: np.ndarray, level: str, s0: int, s1: int, NA: int, NB: int) -> np.ndarray:
    """Cells s0..s1-1 of a result array at `level`, broadcast to one value per point (C-order: cell, acc, batch)."""
    m = s1 - s0
    if level == "point":
        return arr[s0:s1].reshape(-1)
    if level == "cell_batch":
        return np.broadcast_to(arr[s0:s1, None, :], (m, NA, NB)).reshape(-1)
    if level == "cell":
        return np.broadcast_to(arr[s0:s1, None, None], (m, NA, NB)).reshape(-1)
    return np.broadcast_to(arr[s0:s1, :, None], (m, NA, NB)).reshape(-1)


def _result_column(res: ShardResult, name: str, s0: int, s1: int, msg_dict: Any):
    """A result field's column for cells s0..s1-1: messages as a dictionary column, k and verify_tokens as int64.
    A value is null where it was not priced: every number of an infeasible point (as `SpeedupResult.to_dict` gives
    None) but its memory, which says why it does not fit, and any value that is not finite (a configuration that
    `predict` rejects)."""
    import pyarrow as pa
    level, arr = res.fields[name]
    flat = _per_point(arr, level, s0, s1, res.spec.n_acc, len(res.spec.batch))
    if name in ("message", "feasible"):
        return pa.DictionaryArray.from_arrays(pa.array(flat.astype(np.int32)), msg_dict) if name == "message" \
            else pa.array(flat)
    null = ~np.isfinite(flat.astype(np.float64))
    if name != "memory_bytes":
        fl, fa = res.fields["feasible"]
        null |= ~_per_point(fa, fl, s0, s1, res.spec.n_acc, len(res.spec.batch))
    vals = np.where(null, 0, flat).astype(np.int64) if name in ("k", "verify_tokens") else np.where(null, 0.0, flat)
    return pa.array(vals, mask=null if null.any() else None)


def _acceptance_column(spec: SweepSpec, acc: str, cells: list[dict[str, Any]]):
    """The acceptance parameter's column for `cells`: the acceptance axis repeated per cell, or each cell's value."""
    import pyarrow as pa
    NB = len(spec.batch)
    if spec.acc_axis is not None:
        v = np.asarray(spec.acc_axis.values[acc], dtype=np.float64)
        return pa.array(np.tile(np.repeat(v, NB), len(cells)))
    return pa.array(np.repeat(np.array([d[acc] for d in cells], dtype=np.float64), spec.n_acc * NB))


def _tables(res: ShardResult, md: dict[str, str]):
    """Arrow tables of a shard, one per row group of whole cells, one row per point (C-order: cell, acc, batch)."""
    import pyarrow as pa
    spec = res.spec
    NA, NB = spec.n_acc, len(spec.batch)
    per_cell = NA * NB
    n = res.c1 - res.c0
    step = max(1, ROW_GROUP_ROWS // per_cell)
    sch = schema(spec, md)
    types = dict(_column_types(spec))
    cells_all = spec.cell_values(res.c0, res.c1)
    msg_dict = pa.array(res.messages, type=pa.string())
    acc = spec.acceptance_param
    for s0 in range(0, n, step) if n else []:
        s1 = min(n, s0 + step)
        m = s1 - s0
        cells = cells_all[s0:s1]
        cols = {}
        for name in types:
            if name in res.fields or name == "k" and spec.auto:
                cols[name] = _result_column(res, name, s0, s1, msg_dict)
            elif name == "batch":
                cols[name] = pa.array(np.tile(np.asarray(spec.batch, dtype=np.int64), m * NA))
            elif name == acc:
                cols[name] = _acceptance_column(spec, acc, cells)
            else:
                cols[name] = _param_column(spec, name, cells, per_cell)
        yield pa.Table.from_arrays([cols[f.name] for f in sch], schema=sch)


def write_shard(spec: SweepSpec, i: int, n: int, sink: Any, kernel: str = "numba") -> int:
    """Evaluate shard i of n and write it as Parquet to `sink` (a path or a writable binary file); returns rows."""
    import pyarrow.parquet as pq
    c0, c1 = shard_range(spec.n_cells, i, n)
    res = evaluate(spec, c0, c1, kernel)
    md = {"specroof.shard": f"{i}/{n}"}
    rows = 0
    with pq.ParquetWriter(sink, schema(spec, md), compression="zstd") as w:
        for t in _tables(res, md):
            w.write_table(t, row_group_size=t.num_rows)
            rows += t.num_rows
    return rows


def shard_bytes(spec: SweepSpec, i: int, n: int) -> tuple[int, bytes]:
    """Shard i of n as the bytes of its Parquet file (what a Dask worker returns)."""
    buf = io.BytesIO()
    write_shard(spec, i, n, buf)
    return i, buf.getvalue()


def shard_path(out: Path, i: int, n: int) -> Path:
    return Path(out) / "shards" / f"shard-{i}-of-{n}.parquet"


def shard_state(path: Path, spec_hash: str, rows: int) -> str:
    """'ok', 'missing', or why a shard cannot be used ('unsealed', 'corrupt: ...')."""
    import pyarrow.parquet as pq
    if not path.exists():
        return "missing"
    ck = checksum_path(path)
    if not ck.exists():
        return "unsealed (no checksum: its run did not finish)"
    try:
        recorded = ck.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):      # found by review: a garbled checksum file raised UnicodeDecodeError
        return "corrupt: its checksum file is unreadable"
    if recorded != sha256(path):
        return "corrupt: its bytes do not match the checksum written with it"
    try:
        md = pq.read_metadata(path)
    except Exception as e:   # noqa: BLE001 - truncated or not Parquet
        return f"corrupt: unreadable Parquet ({type(e).__name__})"
    meta = md.metadata or {}
    if md.num_rows != rows or meta.get(b"specroof.spec_hash") != spec_hash.encode():
        return "corrupt: another spec or row count"
    return "ok"


def _shard_valid(path: Path, spec_hash: str, rows: int) -> bool:
    return shard_state(path, spec_hash, rows) == "ok"


def _shard_rows(man: dict[str, Any], i: int) -> int:
    c0, c1 = shard_range(man["n_cells"], i, man["n_shards"])
    return (c1 - c0) * man["points_per_cell"]


def _progress(total: int, enabled: bool | None, desc: str):
    from tqdm import tqdm
    on = sys.stderr.isatty() if enabled is None else enabled
    return tqdm(total=total, file=sys.stderr, disable=not on, unit="shard", desc=desc, leave=False)


def _shard_count(s: SweepSpec, shard: tuple[int, int] | None, n_shards: int | None) -> int | None:
    """The shard count asked for (None: the manifest's, else the default), checked, and the shard I/N if given."""
    n = shard[1] if shard else n_shards
    if n is not None and (not is_int(n) or n < 1):
        raise ScenarioError(f"shards = {n!r}; expected an integer >= 1")
    if n is not None and n > shard_limit(s.n_cells):   # found by review: 1e8 shards of 3 cells hung, manifest written
        raise ScenarioError(f"shards = {n}; expected at most {shard_limit(s.n_cells)} (a shard holds whole cells: "
                            f"this spec has {s.n_cells}, and up to {JOB_ARRAY_SHARDS} shards are allowed so that a "
                            "job array of fixed size can run it, the extra shards empty)")
    if shard:
        shard_range(s.n_cells, shard[0], shard[1])
    return n


def _run_shards(s: SweepSpec, out: Path, todo: list[int], n: int, workers: int | None, scheduler: str | None,
                client: Any, progress: bool | None) -> None:
    """Write the shards `todo` of n: on Dask when a client, workers or a scheduler is given, else here in turn."""
    if client is not None or workers is not None or scheduler is not None:
        _run_dask(s, out, todo, n, workers, scheduler, client, progress)
        return
    with _progress(len(todo), progress, "sweep") as bar:
        for i in todo:
            with os_errors(shard_path(out, i, n), "shard"):
                atomic_with(shard_path(out, i, n), lambda tmp, i=i: write_shard(s, i, n, str(tmp)))
                seal(shard_path(out, i, n))
            bar.update(1)


def _checked(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str], shard: tuple[int, int] | None,
             n_shards: int | None) -> tuple[SweepSpec, int | None]:
    """The spec and the shard count asked for, with the checks a run makes before it touches --out."""
    s = load_spec(spec)
    check_some_configuration(s)                 # a spec whose every configuration is rejected: before any output
    return s, _shard_count(s, shard, n_shards)  # before --out is made (review: a refused count left an empty DIR)


def _shard_states(out: Path, s: SweepSpec, man: dict[str, Any], shard: tuple[int, int] | None) -> dict[int, str]:
    """The state (shard_state) of each shard a run looks at: all of the manifest's, or only `shard`'s I."""
    n = man["n_shards"]
    wanted = [shard[0]] if shard else list(range(n))
    return {i: shard_state(shard_path(out, i, n), s.spec_hash, _shard_rows(man, i)) for i in wanted}


def plan_dir(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str], out: str | os.PathLike[str] | None = None,
             shard: tuple[int, int] | None = None, n_shards: int | None = None) -> dict[str, Any]:
    """What sweep_to_dir(spec, out, shard, n_shards) would do, doing none of it (writing and creating nothing): the
    checks it makes first, each refusal the run's (the spec, the shard count, the folder, its manifest), then the
    state of every shard it would look at (`states`, by shard index: 'ok' is skipped, any other is run). Found by user
    review: `--dry-run --out DIR` planned the default shard count of an empty folder beside DIR's own."""
    s, count = _checked(spec, shard, n_shards)
    man = None
    if out is not None:
        out = check_output_dir(out, "--out", create=False)
        man = existing_manifest(out, s)
    if man is None:                             # a new folder (or none): every shard is to run
        n = count or s.default_shards()
        states = {i: "missing" for i in ([shard[0]] if shard else range(n))}
    else:
        check_shard_count(out, man, shard, n_shards)
        n, states = man["n_shards"], _shard_states(out, s, man, shard)
    return {"out": None if out is None else str(out), "new": man is None, "n_points": s.n_points,
            "n_cells": s.n_cells, "n_shards": n, "spec_hash": s.spec_hash, "states": states}


def sweep_to_dir(spec: SweepSpec | dict[str, Any] | str | os.PathLike[str], out: str | os.PathLike[str],
                 shard: tuple[int, int] | None = None, n_shards: int | None = None, workers: int | None = None,
                 scheduler: str | None = None, client: Any = None, progress: bool | None = None,
                 merge_when_done: bool = True) -> dict[str, Any]:
    """Run a sweep into DIR: the shards not yet there (all, or only `shard` = (I, N)), then merge if complete.

    workers: run the shards on a local Dask cluster of that many processes; scheduler: on the Dask cluster at that
    address; client: on an existing dask.distributed Client. Returns a summary dict (seconds: the wall time of the
    shards run and the merge).
    """
    s, count = _checked(spec, shard, n_shards)
    out = check_output_dir(out, "--out")
    man = check_manifest(out, s, count)
    check_shard_count(out, man, shard, n_shards)
    n, states = man["n_shards"], _shard_states(out, s, man, shard)
    wanted = list(states)
    todo = [i for i in wanted if states[i] != "ok"]
    t0 = time.perf_counter()
    if todo:
        with os_errors(out, "--out"):      # found by review: a removed shards folder crashed the recommended rerun
            (out / "shards").mkdir(exist_ok=True)
        _run_shards(s, out, todo, n, workers, scheduler, client, progress)
    summary = {"out": str(out), "n_points": s.n_points, "n_cells": s.n_cells, "n_shards": n,
               "shards_run": len(todo), "shards_skipped": len(wanted) - len(todo),
               "seconds": time.perf_counter() - t0, "spec_hash": s.spec_hash, "merged": None,
               # shards found unusable and computed again, with why (review: a corrupt one was redone unnamed)
               "recomputed": {shard_path(out, i, n).name: states[i] for i in todo if states[i] != "missing"}}
    if merge_when_done and not shard:
        was = merged_state(out)
        summary["merged"] = str(merge(out))
        if was.startswith("corrupt"):          # review: a damaged sweep.parquet was rewritten without a word
            summary["recomputed"][MERGED] = was
    summary["seconds"] = time.perf_counter() - t0     # the shards and the merge (user review: a rerun that only
    return summary                                    # merged 2.9e6 rows said 0.00 s)


def _run_dask(spec: SweepSpec, out: Path, todo: list[int], n: int, workers: int | None, scheduler: str | None,
              client: Any, progress: bool | None) -> None:
    from dask.distributed import Client, LocalCluster, as_completed
    own = []
    if client is None:
        if scheduler is not None:
            try:
                client = Client(scheduler, timeout=30)
            except (ValueError, OSError, TimeoutError) as e:       # found by review: tracebacks
                raise ScenarioError(f"--scheduler {scheduler!r}: no Dask scheduler reached there ({e})") from None
        else:
            if not is_int(workers) or workers < 1:
                raise ScenarioError(f"workers = {workers!r}; expected an integer >= 1")
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address=":0")
            own.append(cluster)
            client = Client(cluster)
        own.insert(0, client)
    try:
        futs = client.map(shard_bytes, [spec] * len(todo), todo, [n] * len(todo), pure=False)
        with _progress(len(todo), progress, "sweep") as bar:
            for fut in as_completed(futs):
                i, data = fut.result()
                with os_errors(shard_path(out, i, n), "shard"):
                    atomic_bytes(shard_path(out, i, n), data)
                    seal(shard_path(out, i, n))
                fut.release()
                bar.update(1)
    finally:
        for o in own:
            o.close()


def merge(out: str | os.PathLike[str]) -> Path:
    """Check that every shard of DIR is there and valid, and join them (in shard order) into DIR/sweep.parquet."""
    import pyarrow.parquet as pq
    out = Path(out)
    man = check_manifest(out, None)
    n, h = man["n_shards"], man["spec_hash"]
    states = {i: shard_state(shard_path(out, i, n), h, _shard_rows(man, i)) for i in range(n)}
    bad = {i: st for i, st in states.items() if st != "ok"}
    if bad:
        shown = "; ".join(f"{shard_path(out, i, n).name}: {st}" for i, st in list(bad.items())[:5])
        raise ScenarioError(f"{out}: incomplete sweep: {len(bad)} of {n} shards not usable ({shown}"
                            f"{'; ...' if len(bad) > 5 else ''}); run `specroof sweep SPEC --out {out}` (or --shard "
                            f"I/{n} for each): it recomputes them")
    dest = out / MERGED
    if _shard_valid(dest, h, man["n_points"]):
        return dest
    md = {"specroof.spec_hash": h, "specroof.version": man["specroof_version"],
          "specroof.manifest": json.dumps(man, sort_keys=True, separators=(",", ":"))}

    def write(tmp: Path) -> None:
        first = pq.ParquetFile(shard_path(out, 0, n))
        sch = first.schema_arrow.with_metadata(md)
        with pq.ParquetWriter(str(tmp), sch, compression="zstd") as w:
            for i in range(n):
                pf = pq.ParquetFile(shard_path(out, i, n))
                for g in range(pf.num_row_groups):
                    t = pf.read_row_group(g)
                    w.write_table(t.replace_schema_metadata(md), row_group_size=max(1, t.num_rows))
    with os_errors(dest, "merged sweep"):
        atomic_with(dest, write)
        seal(dest)             # a later merge or read finds it whole, and a changed byte is named as corruption
    for stale in list(out.glob(".*.tmp")) + list((out / "shards").glob(".*.tmp")):
        if crashed_writer(stale):
            stale.unlink(missing_ok=True)
    return dest


def merged_state(out: str | os.PathLike[str]) -> str:
    """DIR/sweep.parquet's state against DIR's manifest: 'ok', 'missing', 'unsealed ...' or 'corrupt: ...' (a merge
    rewrites all but 'ok'; the CLI names a corrupt one)."""
    man = check_manifest(Path(out), None)
    return shard_state(Path(out) / MERGED, man["spec_hash"], man["n_points"])


def read_sweep(out: str | os.PathLike[str]):
    """The merged results of DIR as a pyarrow Table (merging first if needed)."""
    import pyarrow.parquet as pq
    return pq.read_table(merge(out))

