"""Benchmark the standard sweep grid (examples/sweep_standard.toml: llama-3.1-70b on h100-sxm TP8 bf16, eagle3,
sglang, k 1..8, acceptance 0.50..0.99 step 0.01, context 1k..128k in 8 powers of two, batch 1..1024: 3,276,800
points). Measures, does not assert. The last line printed is one JSON object:

    points                  grid size
    seconds                 median end-to-end time of `run_sweep(spec file)` (parse, price, combine, build the
                            xarray Dataset) in a warm process; best_seconds the fastest run
    points_per_s            points / seconds
    reference_points_per_s  the same with the plain numpy reference combine (kernel="reference"), same run
    cold_start_s            new process, empty numba cache (NUMBA_CACHE_DIR = a fresh directory), to the first
                            result (the Dataset of the whole grid)
    warm_start_s            new process, the numba cache from the cold start, to the first result (median of 5).
                            Python's own bytecode cache is on in both (PYTHONDONTWRITEBYTECODE is dropped), as for
                            an installed package, whose .pyc files pip writes at install; with it off every start
                            recompiles specroof's modules from source (about 0.04 s)
    cold_start_arrays_s,    the same two, to the evaluated numpy arrays (`evaluate`), before xarray is imported
    warm_start_arrays_s
    peak_rss_bytes          peak resident memory of the warm-start process (ru_maxrss), which ran the whole grid
    disk_seconds            `sweep_to_dir` of the grid into a new directory (Parquet shards, manifest, merge)

Usage: python benchmarks/sweep_bench.py [--repeat 7] [--no-disk]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "sweep_standard.toml"


def child() -> None:
    """Run in a fresh process: import, evaluate the whole grid once (arrays, then the Dataset), report."""
    from simulator.sweep import evaluate, load_spec, to_dataset
    res = evaluate(load_spec(SPEC))
    print("arrays", flush=True)
    ds = to_dataset(res)
    n = int(ds["speedup"].size)
    print(json.dumps({"points": n, "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}),
          flush=True)


def start(cache_dir: str) -> tuple[float, float, dict]:
    """(seconds to the evaluated arrays, seconds to the Dataset, the child's report) of a new process."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=str(REPO) + os.pathsep
               + os.environ.get("PYTHONPATH", ""))
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # an installed package has its bytecode compiled (pip does it)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, __file__, "--child"], stdout=subprocess.PIPE, text=True, env=env,
                         cwd=REPO)
    first = p.stdout.readline()
    t_arrays = time.perf_counter() - t0
    line = p.stdout.readline()
    t = time.perf_counter() - t0
    p.communicate()
    if p.returncode != 0 or first.strip() != "arrays" or not line:
        raise SystemExit(f"child process failed ({p.returncode})")
    return t_arrays, t, json.loads(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-disk", action="store_true", help="skip the Parquet run")
    a = ap.parse_args()
    if a.child:
        child()
        return
    with tempfile.TemporaryDirectory(prefix="specroof-numba-") as cache:
        cold_arrays_s, cold_s, _ = start(cache)
        warm = [start(cache) for _ in range(5)]
        warm_arrays_s = statistics.median(w[0] for w in warm)
        warm_s = statistics.median(w[1] for w in warm)
        info = warm[0][2]

    sys.path.insert(0, str(REPO))
    from simulator.sweep import load_spec, run_sweep, sweep_to_dir
    points = load_spec(SPEC).n_points
    run_sweep(SPEC)                               # load the kernels
    times = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        ds = run_sweep(SPEC)
        times.append(time.perf_counter() - t0)
        assert ds["speedup"].size == points
        del ds
    ref = []
    for _ in range(max(1, a.repeat // 2)):
        t0 = time.perf_counter()
        run_sweep(SPEC, kernel="reference")
        ref.append(time.perf_counter() - t0)
    disk_s = None
    if not a.no_disk:
        with tempfile.TemporaryDirectory(prefix="specroof-sweep-") as out:
            t0 = time.perf_counter()
            sweep_to_dir(SPEC, out, progress=False)
            disk_s = time.perf_counter() - t0
    sec = statistics.median(times)
    res = {"points": points, "seconds": round(sec, 4), "best_seconds": round(min(times), 4),
           "points_per_s": round(points / sec), "reference_points_per_s": round(points / statistics.median(ref)),
           "cold_start_s": round(cold_s, 3), "warm_start_s": round(warm_s, 3),
           "cold_start_arrays_s": round(cold_arrays_s, 3), "warm_start_arrays_s": round(warm_arrays_s, 3),
           "peak_rss_bytes": int(info["peak_rss_bytes"]),
           "disk_seconds": None if disk_s is None else round(disk_s, 3), "cpus": os.cpu_count()}
    print(f"standard grid: {points} points; end to end {sec * 1e3:.1f} ms median of {a.repeat} "
          f"({points / sec:.3g} points/s), numpy reference {statistics.median(ref) * 1e3:.1f} ms; cold start "
          f"{cold_s:.2f} s, warm start {warm_s:.2f} s, peak RSS {info['peak_rss_bytes'] / 2**20:.0f} MiB",
          file=sys.stderr)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
