"""Benchmark the pricing that calibration repeats: every headline row of validation/rows.csv (the fit pool) priced
once with its engine profile passed in, as `calibration._Problem` prices it at each trial point (a fit prices the
pool about a hundred times; `specroof validate --cv source` once per source more). Measures, does not assert. The
last line printed is one JSON object:

    rows                 rows in the fit pool
    seconds              median time to price the pool (warm process)
    reference_seconds    the same with the reference searches swapped in, same run: the KV fit limit by doubling
                         and bisection one count at a time (admission.fit_limit before 2026-12-04) and the decode
                         batch of the closed loop by 48 plain halvings (loop.Loop.batch_bisected, as Loop.batch was)
    speedup              reference_seconds / seconds
    max_rel_diff         largest relative difference between the two runs' predictions (the searches find the
                         same edge and the same bracket: expected at rounding level)

Usage: python benchmarks/calibration_bench.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from simulator import admission, loop, serving
from simulator.calibration import usable
from simulator.cross_validation import fit_pool
from simulator.validation import load_rows, predict_prepared


def _fit_limit_reference(dep, w, drafter):  # type: ignore[no-untyped-def]
    cap = admission.running_cap(dep, drafter)

    def fits(n: float) -> bool:
        return bool(admission.memory_held(dep, w, np.array([float(n)]), drafter).fits[0])
    if not fits(1.0):
        return 0.0
    if np.isfinite(cap) and fits(cap):
        return np.inf
    lo, hi = 1, 2
    while hi < admission.MAX_REQUESTS and fits(hi):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return float(lo)


@contextmanager
def _reference() -> Iterator[None]:
    saved = serving.fit_limit, admission.fit_limit, loop.Loop.batch
    serving.fit_limit = admission.fit_limit = _fit_limit_reference
    loop.Loop.batch = loop.Loop.batch_bisected  # type: ignore[method-assign]
    try:
        yield
    finally:
        serving.fit_limit, admission.fit_limit, loop.Loop.batch = saved  # type: ignore[method-assign]


def _price(pool: list) -> tuple[float, list[float]]:  # type: ignore[type-arg]
    t = time.perf_counter()
    out = [predict_prepared(p, p.dep.eng.uncalibrated(), p.dep.hw.kernel_floor_s) for p in pool]
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    pool = fit_pool(usable(load_rows())[0])
    _price(pool[:5])                                            # warm: numba compile, caches
    fast, ref = [], []
    for _ in range(a.repeat):
        t, new = _price(pool)
        fast.append(t)
        with _reference():
            t, old = _price(pool)
        ref.append(t)
    diff = max(abs(x - y) / abs(y) for x, y in zip(new, old))
    s, r = statistics.median(fast), statistics.median(ref)
    print(f"fit pool: {len(pool)} rows priced in {s:.2f} s (reference searches {r:.2f} s)")
    print(json.dumps(dict(rows=len(pool), seconds=s, reference_seconds=r, speedup=r / s, max_rel_diff=diff)))


if __name__ == "__main__":
    main()
