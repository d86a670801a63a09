"""`specroof sweep`: run a sweep spec into a directory of Parquet shards (locally, one shard of a job array, or on a
Dask cluster), and `specroof sweep --merge DIR` to check completeness and join. See simulator/sweep/."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from ..data import read_toml
from ..errors import ScenarioError, SpecroofError
from ..files import check_output, write_bytes
from .args import int_arg, note_same_shape

# A grid of this many points or more is announced on stderr before it starts.
LARGE_POINTS = 10**8


def _shard(s: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in s.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shard {s!r} is not I/N (e.g. 3/8; I counts from 0)") from None
    if n < 1 or not 0 <= i < n:
        raise argparse.ArgumentTypeError(f"shard {s!r}: expected 0 <= I < N")
    return i, n


def _need(*modules: str) -> None:
    """The sweep extra's packages, or a user error naming them (not a traceback)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ScenarioError(f"specroof sweep needs {', '.join(missing)}: pip install 'specroof[sweep]'")


def _merge(a: argparse.Namespace) -> int:
    """`--merge DIR`: check the directory is complete, join its shards and print what was written."""
    from ..sweep.store import merge, merged_state  # lazy: keeps --help free of numba
    if a.spec is not None or a.out is not None or a.shard or a.shards or a.workers or a.scheduler or a.dry_run:
        raise ScenarioError("--merge DIR takes no spec and no run options")
    was = merged_state(a.merge)
    path = merge(a.merge)
    if was.startswith("corrupt"):      # found by review: a damaged merged file was rewritten without a word
        print(f"note: {path.name} was {was}; joined again from the shards", file=sys.stderr)
    import pyarrow.parquet as pq
    md = pq.read_metadata(path)
    d = {"merged": str(path), "rows": md.num_rows, "row_groups": md.num_row_groups}
    print(json.dumps(d) if a.format == "json" else f"merged {md.num_rows} rows into {path}")
    return 0


def _dry_run(spec: Any, a: argparse.Namespace) -> int:
    """`--dry-run`: the checks the run makes before any work (some configuration of the spec resolves, the options
    agree, and with --out the folder's manifest and shard count), then the grid's size, its shards and, with --out,
    which of them the run would skip or compute; no pricing, nothing written (found by review: a spec whose every cell
    has a tp dividing no model's heads passed the dry run; found by user review: --dry-run --out DIR planned an empty
    folder's default shard count beside DIR's own)."""
    from ..sweep.store import plan_dir, shard_path  # lazy: keeps --help free of numba
    _check_run_options(a, need_out=False)
    p = plan_dir(spec, a.out, shard=a.shard, n_shards=a.shards)
    states = p.pop("states")
    todo = {i: st for i, st in states.items() if st != "ok"}
    d = {"dims": dict(zip(spec.dims, spec.shape)), **p, "shards_done": len(states) - len(todo),
         "shards_to_run": len(todo), "recompute": {shard_path(Path(), i, p["n_shards"]).name: st
                                                   for i, st in todo.items() if st != "missing"}}
    if a.format == "json":
        print(json.dumps(d))
        return 0
    what = f"shard {a.shard[0]}/{a.shard[1]}" if a.shard else f"{p['n_shards']} shards"
    print(f"{spec.n_points} points ({' x '.join(f'{k} {v}' for k, v in d['dims'].items()) or 'one point'}), "
          f"{spec.n_cells} cells, {what}, spec hash {spec.spec_hash[:12]}")
    if a.out is not None:
        where = "no sweep there yet" if p["new"] else "a sweep of this spec"
        print(f"{a.out}: {where}: {d['shards_done']} of {len(states)} shard(s) done, {d['shards_to_run']} to run"
              + "".join(f"; {name} {st}, to compute again" for name, st in list(d["recompute"].items())[:5]))
    return 0


def _check_run_options(a: argparse.Namespace, need_out: bool = True) -> None:
    """A user error for a missing --out or contradictory --shard / --shards / --workers / --scheduler."""
    if a.out is None and need_out:
        raise ScenarioError("--out DIR is required (where the shards, manifest and merged file go)")
    if a.out is not None and Path(a.out).suffix.lower() == ".csv" and not Path(a.out).is_dir():
        # found by user review: a batch sweep made a folder named out.csv (a serving sweep writes that file)
        raise ScenarioError(f"--out {a.out}: a batch sweep writes a folder (DIR/shards, DIR/manifest.json, "
                            "DIR/sweep.parquet), not a .csv file; give a folder (a spec with a [serve] table writes "
                            "one .csv or .parquet file)")
    if a.shard and (a.workers or a.scheduler):
        raise ScenarioError("--shard I/N runs one shard in this process; drop --workers / --scheduler")
    if a.shard and a.shards and a.shards != a.shard[1]:
        raise ScenarioError(f"--shards {a.shards} contradicts --shard {a.shard[0]}/{a.shard[1]}")
    if a.workers and a.scheduler:
        raise ScenarioError("give --workers N (a local Dask cluster) or --scheduler ADDRESS, not both")


def _print_summary(r: dict[str, Any], a: argparse.Namespace) -> None:
    """The run's summary: one JSON line, or what ran, what was already there and where it went."""
    if a.format == "json":
        print(json.dumps(r))
        return
    for name, why in r["recomputed"].items():
        print(f"note: {name} was {why}; computed again", file=sys.stderr)
    what = f"shard {a.shard[0]}/{a.shard[1]}" if a.shard else f"{r['n_shards']} shards"
    print(f"sweep {r['spec_hash'][:12]}: {r['n_points']} points in {r['n_cells']} cells, {what}: "
          f"{r['shards_run']} run, {r['shards_skipped']} already there ({r['seconds']:.2f} s) -> {r['out']}")
    if r["merged"]:
        print(f"merged: {r['merged']}")


def _serve(doc: dict[str, Any], a: argparse.Namespace) -> int:
    """A serving sweep ([serve] in the spec): one table, written atomically to --out FILE (.parquet or .csv)."""
    from ..sweep.serving import plan, serve_sweep  # lazy: keeps --help free of numba
    if a.shard or a.shards or a.workers or a.scheduler:
        raise ScenarioError("a serving sweep ([serve]) runs in one process: drop --shard / --shards / --workers / "
                            "--scheduler")
    if a.out is None or Path(a.out).suffix not in (".parquet", ".csv"):
        raise ScenarioError(f"--out = {a.out!r}: a serving sweep writes one table: give a .parquet or .csv file")
    check_output(a.out, "--out")
    if a.dry_run:               # every check of the spec, no pricing (found by review: a typo passed the dry run)
        p = plan(doc)
        print(f"serving sweep: {len(p.combos)} parameter x {len(p.wcombos)} workload combination(s) x "
              f"{len(p.points)} {p.key} point(s) = {p.n_rows} rows; no work done")
        return 0
    df = serve_sweep(doc)
    if a.out.endswith(".csv"):
        write_bytes(a.out, df.to_csv(index=False).encode("utf-8"))
    else:
        import io
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        write_bytes(a.out, buf.getvalue())
    d = {"rows": len(df), "feasible": int(df["feasible"].sum()), "out": a.out}
    print(json.dumps(d) if a.format == "json" else f"serving sweep: {d['rows']} rows ({d['feasible']} feasible) "
          f"-> {a.out}")
    return 0


def run(a: argparse.Namespace) -> int:
    """The sweep, with an error in the spec file named by the file (one line, exit 2, before any work)."""
    try:
        return _run(a)
    except SpecroofError as e:
        if a.spec and str(e).startswith("sweep spec:"):
            raise type(e)(f"{a.spec}: {e}") from None
        raise


def _run(a: argparse.Namespace) -> int:
    from .. import sweep  # lazy: keeps --help free of numba
    _need("pyarrow", "tqdm", *(("distributed",) if a.workers or a.scheduler else ()))
    if a.merge is not None:
        return _merge(a)
    if a.spec is None:
        raise ScenarioError("give a sweep spec (SPEC.toml) and --out DIR, or --merge DIR")
    doc = read_toml(Path(a.spec))
    note_same_shape(_named(doc))        # a same-shape repository anywhere in the spec says which model prices it
    if isinstance(doc, dict) and "serve" in doc:      # a serving sweep
        return _serve(doc, a)
    spec = sweep.load_spec(a.spec)
    if a.dry_run:
        return _dry_run(spec, a)
    _check_run_options(a)
    if spec.n_points >= LARGE_POINTS:      # found by review: 5.4e10 points started without a word
        print(f"note: {spec.n_points:.3g} points in {spec.n_cells} cells: a long run (--dry-run shows the grid; "
              "stopped, a rerun resumes from the finished shards)", file=sys.stderr)
    r = sweep.sweep_to_dir(spec, a.out, shard=a.shard, n_shards=a.shards, workers=a.workers,
                           scheduler=a.scheduler, progress=False if a.no_progress else None)
    _print_summary(r, a)
    return 0


def _named(node: Any) -> list[Any]:
    """Every value under a "model" or "draft" key of a parsed TOML document, however deep (tables, arrays of tables)."""
    if isinstance(node, list):
        return [x for v in node for x in _named(v)]
    if not isinstance(node, dict):
        return []
    out: list[Any] = []
    for k, v in node.items():
        out += (v if isinstance(v, list) else [v]) if k in ("model", "draft") else _named(v)
    return out


def add(sub: Any, name: str) -> None:
    # The grid comes from the spec file, so the per-scenario flags do not apply here.
    s = sub.add_parser("sweep", help="run a parameter sweep spec (TOML) into Parquet shards; --merge joins them",
                       description="Evaluate every point of a sweep spec (see examples/sweep_standard.toml) into "
                                   "DIR/shards/shard-I-of-N.parquet, DIR/manifest.json and DIR/sweep.parquet. "
                                   "Reruns skip finished shards.")
    s.add_argument("spec", nargs="?", default=None, help="sweep spec, a TOML file")
    s.add_argument("--out", default=None, help="output directory")
    s.add_argument("--shard", type=_shard, default=None,
                   help="evaluate only shard I of N (0 <= I < N; for SLURM / Kubernetes job arrays)")
    s.add_argument("--shards", type=int_arg("shards", 1), default=None,
                   help="split the grid into N shards (default: about 2M points each)")
    s.add_argument("--workers", type=int_arg("workers", 1), default=None, help="run shards on a local Dask cluster")
    s.add_argument("--scheduler", default=None, help="run shards on the Dask cluster at this address")
    s.add_argument("--merge", default=None, metavar="DIR", help="check that DIR is complete and join its shards")
    s.add_argument("--dry-run", action="store_true", help="print the grid's size and shards (with --out: "
                   "which are done, which a run would compute); write nothing")
    s.add_argument("--no-progress", action="store_true", help="no progress bar (default: on when stderr is a tty)")
    s.add_argument("--format", choices=("table", "json"), default="table", help="summary format")
    s.set_defaults(func=run)
