"""Derive the GEMM overlap (Hardware.gemm_overlap, hardware.DEFAULT_GEMM_OVERLAP) from published GEMM kernel timings.
Run by hand; the value it prints is the one written into simulator/hardware.py and the specs' notes:

    python tools/fit_gemm_overlap.py [validation/sources/gemm_kernels.csv]
    python tools/fit_gemm_overlap.py --probe OUT/probe.csv --gpu h200-sxm   # add tools/gpu_probe.py's GEMM rows

Data: cuBLAS bf16 GEMMs (torch F.linear) of LLM weight shapes N x K at M = 1..4096 tokens, timed under CUDA graphs
(triton do_bench_cudagraph, median) on H100 and B200, from vLLM pull requests (URLs per row in the CSV). Each timing
is priced as specroof prices a projection (workload.gemm: one matmul op through roofline.step_times at the device's
sourced HBM and GEMM fractions), with two unknowns fitted by least squares on log time:
    eta  the share of the smaller of math and memory time the larger one hides (1: roofline max, 0: their sum)
    t0   a fixed time per kernel (a replayed kernel's launch gap and ramp; a nuisance parameter here)
over the rows at M >= 16 (at M = 1 the math time is nil and a row says nothing about eta directly; those rows are
printed as a check of the fixed time). eta and t0 are correlated, so which rows fix t0 moves eta: over every M, with
the M = 1 rows pinning t0, it is 0.68 +- 0.08. The uncertainty printed is the least-squares standard error (residual
variance times (J^T J)^-1); the residuals follow the weight shape (narrow GEMMs overlap less than wide ones), so the
spread over devices and M ranges, also printed, is the better measure (about +- 0.15 around 0.60). `--probe`
adds the `gemm` rows of a tools/gpu_probe.py run (bf16 x @ w under CUDA graphs) as tables of the device `--gpu` names
(a bundled spec), so a session lent a GPU fits that device's value beside the published ones.
"""

from __future__ import annotations

import argparse
import csv
import functools
import signal
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.errors import SpecError  # noqa: E402
from simulator.hardware import load_hardware  # noqa: E402
from simulator.roofline import rates, step_times  # noqa: E402
from simulator.workload import gemm  # noqa: E402

CSV = ROOT / "validation" / "sources" / "gemm_kernels.csv"
M_MIN = 16


def load(path: Path) -> dict[tuple[str, int, int], list[tuple[int, float]]]:
    """(gpu, N, K) -> [(M, measured seconds)], from TFLOP/s = 2 M N K / t."""
    tables: dict[tuple[str, int, int], list[tuple[int, float]]] = defaultdict(list)
    with open(path, newline="") as fh:
        for r in csv.DictReader(fh):
            n, k, m = int(r["n"]), int(r["k"]), int(r["m"])
            tables[(r["gpu"], n, k)].append((m, 2.0 * m * n * k / (float(r["tflops"]) * 1e12)))
    return tables


def load_probe(path: Path, gpu: str) -> dict[tuple[str, int, int], list[tuple[int, float]]]:
    """(gpu, N, K) -> [(M, measured seconds)] from the `gemm` rows of a tools/gpu_probe.py probe.csv (case
    "<model> <name> <K>x<N>", time_us per call)."""
    tables: dict[tuple[str, int, int], list[tuple[int, float]]] = defaultdict(list)
    with open(path, newline="") as fh:
        for i, r in enumerate(csv.DictReader(fh), start=2):
            if r.get("probe") != "gemm":
                continue
            try:
                k, n = (int(x) for x in r["case"].rsplit(" ", 1)[-1].split("x"))
                tables[(gpu, n, k)].append((int(r["m"]), float(r["time_us"]) * 1e-6))
            except (KeyError, ValueError) as e:
                raise ValueError(f"{path}:{i}: a gemm row needs case '<model> <name> <K>x<N>', integer m and "
                                 f"numeric time_us ({e})") from None
    if not tables:
        raise ValueError(f"{path}: no gemm rows (is it a tools/gpu_probe.py probe.csv?)")
    return tables


@functools.cache
def _device(gpu: str):
    """The bundled device at its sourced values, read once (the fit prices every row at every iteration)."""
    return load_hardware(gpu).uncalibrated()


def priced(gpu: str, n: int, k: int, M: np.ndarray, eta: float, t0: float) -> np.ndarray:
    """specroof's time for one GEMM at M tokens on `gpu` with GEMM overlap eta and a fixed time t0 per kernel."""
    hw = replace(_device(gpu), gemm_overlap=eta, kernel_floor_s=t0)
    ops = gemm(n, k)
    return step_times(ops, rates(hw, ops), M.astype(float), 1.0, 0.0).total_s


def residuals(p: np.ndarray, tables, m_min: int, m_max: float = np.inf) -> np.ndarray:
    out = []
    for (gpu, n, k), rows in tables.items():
        M = np.array([m for m, _ in rows if m_min <= m <= m_max])
        t = np.array([s for m, s in rows if m_min <= m <= m_max])
        if len(M):
            out.append(np.log(priced(gpu, n, k, M, p[0], p[1]) / t))
    return np.concatenate(out)


def fit(tables, m_min: int, m_max: float = np.inf):
    """(eta, t0), their standard errors, the RMS log residual, the number of rows of M in [m_min, m_max] and the
    correlation of eta and t0 in the fit."""
    r = least_squares(residuals, [0.7, 1e-6], args=(tables, m_min, m_max), bounds=([0.0, 0.0], [1.0, 2e-5]))
    n = len(r.fun)
    cov = np.linalg.inv(r.jac.T @ r.jac) * float(r.fun @ r.fun) / max(n - 2, 1)
    se = np.sqrt(np.diag(cov))
    return r.x, se, float(np.sqrt(np.mean(r.fun ** 2))), n, float(cov[0, 1] / (se[0] * se[1]))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description="Fit the GEMM overlap on published (and probed) GEMM kernel timings.")
    ap.add_argument("csv", nargs="?", type=Path, default=CSV, help="published timings (default: the shipped CSV)")
    ap.add_argument("--probe", type=Path, help="a tools/gpu_probe.py probe.csv whose gemm rows to add")
    ap.add_argument("--gpu", help="the bundled device the probe ran on (e.g. h200-sxm)")
    a = ap.parse_args(argv)
    if (a.probe is None) != (a.gpu is None):
        ap.error("--probe and --gpu go together")
    try:
        tables = load(a.csv)
        if a.probe:
            load_hardware(a.gpu)
            tables.update(load_probe(a.probe, a.gpu))
    except (OSError, ValueError, SpecError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    groups = {"all devices": tables}
    for gpu in sorted({g for g, _, _ in tables}):
        groups[gpu] = {key: v for key, v in tables.items() if key[0] == gpu}
    print(f"fit over M >= {M_MIN} (the shipped value) and, as a sensitivity, over every M")
    print("devices        rows  eta            t0 (us)      RMS log  | every M: eta, t0 (us)")
    fits = {name: fit(tab, M_MIN) for name, tab in groups.items()}
    for name, tab in groups.items():
        x, se, rms, n, _ = fits[name]
        xa, sea, *_ = fit(tab, 1)
        print(f"{name:13s}  {n:4d}  {x[0]:.2f} +- {se[0]:.2f}  {x[1] * 1e6:.2f} +- {se[1] * 1e6:.2f}  {rms:.3f}    "
              f"|  {xa[0]:.2f} +- {sea[0]:.2f}, {xa[1] * 1e6:.2f} +- {sea[1] * 1e6:.2f}")
    (eta, t0), rho = fits["all devices"][0], fits["all devices"][4]
    small, large = fit(tables, M_MIN, 128)[0][0], fit(tables, 256)[0][0]
    print(f"eta and t0 correlate ({rho:.2f}): the value moves with what fixes t0. By M: {small:.2f} over M = 16..128, "
          f"{large:.2f} over M >= 256 (the shortfall is near the ridge point); the residuals follow the shape, so "
          "the standard error understates the spread")
    r1 = least_squares(lambda p: residuals(np.array([1.0, p[0]]), tables, M_MIN), [1e-6], bounds=([0.0], [2e-5]))
    print(f"with eta = 1 (the roofline max; t0 refitted, {r1.x[0] * 1e6:.2f} us) the RMS log residual is "
          f"{np.sqrt(np.mean(r1.fun ** 2)):.3f}")
    print(f"\npriced / measured at eta = {eta:.2f}, t0 = {t0 * 1e6:.2f} us (and at eta = 1, the roofline max):")
    for (gpu, n, k), rows in tables.items():
        M = np.array([m for m, _ in rows])
        t = np.array([s for _, s in rows])
        a, b = priced(gpu, n, k, M, eta, t0) / t, priced(gpu, n, k, M, 1.0, t0) / t
        print(f"{gpu} N={n} K={k}: " + "  ".join(f"{m}: {x:.2f} ({y:.2f})" for m, x, y in zip(M, a, b)))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # piped into head: end quietly, as a shell tool does
    sys.exit(main(sys.argv[1:]))
