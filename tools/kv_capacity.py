"""KV-cache memory the engines logged at start-up (validation/sources/kv_capacity.csv) against specroof's.

    python tools/kv_capacity.py

For each row: the deployment at the logged memory share, one sequence, and specroof's KV budget per GPU (the capacity
its share gives less the weights and the larger of a pass's activations and the engine's start-up reserve,
pricing.memory), beside the logged figure. Nothing is fitted to these rows except trtllm.toml's memory.reserve, which
is derived from the TensorRT-LLM row.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from simulator.pricing import memory  # noqa: E402
from simulator.scenario import Scenario  # noqa: E402

GiB = 2**30
CSV = Path(__file__).resolve().parent.parent / "validation" / "sources" / "kv_capacity.csv"


def rows(path: Path = CSV) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def priced(row: dict[str, str]) -> tuple[float, float, float]:
    """(weights, start-up reserve, KV budget) per GPU in GiB as specroof prices the row's deployment."""
    kw = dict(hardware=row["hardware"], model=row["model"], tp=int(row["tp"]), precision=row["precision"],
              engine=row["engine"], memory_fraction=float(row["memory_fraction"]), method=None, k=0, context=0,
              kv_precision=row["kv_precision"] or None, expert_precision=row["expert_precision"] or None)
    mu = memory(Scenario(**kw).resolve(), np.array([1.0]), 1.0, 0.0)
    kv = float(mu.capacity_bytes - (mu.total_bytes[0] - mu.kv_bytes[0]))
    return mu.weights_bytes / GiB, mu.reserved_bytes / GiB, kv / GiB


def main() -> None:
    print(f"{'engine':7s} {'model':14s} tp {'weights':>15s} {'reserve':>15s} {'KV GiB':>15s}")
    for r in rows():
        w, res, kv = priced(r)
        logged = float(r["peak_activation_gib"] or "nan") + float(r["non_torch_gib"] or "nan")
        print(f"{r['engine']:7s} {r['model']:14s} {r['tp']:>2s} {w:7.2f} / {float(r['weights_gib']):5.2f} "
              f"{res:7.2f} / {logged:5.2f} {kv:7.2f} / {float(r['kv_gib']):5.2f}   (priced / logged)")


if __name__ == "__main__":
    main()
