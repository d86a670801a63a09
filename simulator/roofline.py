"""Roofline pricing of op tables over whole (B, q, L) grids: numba kernels plus a plain numpy reference.

Per op (Williams et al. 2009, "Roofline"; scaling-book roofline.md for the overlap bounds):
    t_op = max(FLOPs / (peak * gemm_fraction), bytes / (HBM bandwidth * hbm_fraction))   overlap = "max"
    t_op = FLOPs / (...) + bytes / (...)                                                   overlap = "sum"
    t_op = max(tc, tm) + (1 - eta) * min(tc, tm)                                          overlap = eta in [0, 1]
The two bounds differ by at most 2x; "max" (eta = 1) assumes math and memory overlap perfectly, "sum" (eta = 0) not
at all. A calibrated engine profile may carry eta (`[efficiency] overlap_efficiency`): the share of the smaller of
math and memory time that its kernels hide under the larger at decode/verify shapes.
Collectives: t = latency + wire_bytes / (per-direction link bandwidth * link_fraction), where the builder already
folded the algorithm's factor into wire_bytes (ring all-reduce 2(n-1)/n; Patarasuk & Yuan 2009).
Launch overhead (CUDA graphs off): kernels * launch_s per op repetition.

This module, sweep/kernels.py and montecarlo.py are the only numba importers; _jit.py holds their one jit policy.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import numba as nb
import numpy as np

from ._jit import JIT
from .errors import ScenarioError
from .hardware import Hardware
from .workload import F_B, F_BL, F_CAUSAL, F_ONE, F_T, F_TL, F_U, FAM, FAMILIES, N_FEAT, OpSet, features

BOUNDS: tuple[str, ...] = ("memory", "compute", "communication")
_NF = len(FAMILIES)
_FAM_COLL = FAM["collective"]
_FAM_OVER = FAM["overhead"]


@nb.njit(**JIT)
def _op_time(cf, cb, cc, i, B, q, L, window, logq, moe_e, peak, bw, link_bw, lat, is_coll, eta):
    """Time of one repetition of op i at one point, and its bound class (0 mem, 1 compute, 2 comm)."""
    T = B * q
    Lw = L if L < window else window
    f0 = 1.0
    f1 = B
    f2 = T
    f3 = B * Lw
    f4 = T * Lw
    qw = q if q < window else window   # each new token sees at most `window` of the new tokens before it
    f5 = B * (qw * (qw + 1.0) * 0.5 + (q - qw) * qw)
    f6 = 0.0
    if moe_e > 0.0 and T > 0.0:   # T = 0 with k = E would give 0 * -inf
        f6 = -np.expm1(T * logq)
    if is_coll:
        wire = (cc[i, 0] * f0 + cc[i, 1] * f1 + cc[i, 2] * f2 + cc[i, 3] * f3 + cc[i, 4] * f4
                + cc[i, 5] * f5 + cc[i, 6] * f6)
        return lat + wire / link_bw, 2
    fl = cf[i, 0] * f0 + cf[i, 1] * f1 + cf[i, 2] * f2 + cf[i, 3] * f3 + cf[i, 4] * f4 + cf[i, 5] * f5 + cf[i, 6] * f6
    by = cb[i, 0] * f0 + cb[i, 1] * f1 + cb[i, 2] * f2 + cb[i, 3] * f3 + cb[i, 4] * f4 + cb[i, 5] * f5 + cb[i, 6] * f6
    tc = fl / peak
    tm = by / bw
    if tc > tm:
        return tc + (1.0 - eta) * tm, 1
    return tm + (1.0 - eta) * tc, 0


def _step_grid_body(B, q, L, launch_s, cf, cb, cc, window, logq, moe_e, peak, repeat, kernels, fam, coll, lat,
               bw, link_bw, eta, out_total, out_fam, out_bound):
    """Price every point (B[p], q[p], L[p]) of a grid: total, per family and per bound class, in seconds."""
    n_ops = cf.shape[0]
    for p in nb.prange(B.shape[0]):
        tot = 0.0
        for j in range(out_fam.shape[1]):
            out_fam[p, j] = 0.0
        for j in range(3):
            out_bound[p, j] = 0.0
        for i in range(n_ops):
            t, cls = _op_time(cf, cb, cc, i, B[p], q[p], L[p], window[i], logq[i], moe_e[i], peak[i], bw,
                              link_bw, lat[i], coll[i] > 0.0, eta)
            t *= repeat[i]
            out_fam[p, int(fam[i])] += t
            out_bound[p, cls] += t
            tot += t
            lo = repeat[i] * kernels[i] * launch_s[p]
            out_fam[p, _FAM_OVER] += lo
            tot += lo
        out_total[p] = tot


def _named(f: types.FunctionType, name: str) -> types.FunctionType:
    """A copy of function f under another name. numba's on-disk cache is keyed by qualified name and line, so two
    compilations of one function share one cache file and a new process loads whichever was written last for both
    (the grid then ran serially); a named copy gives each compilation its own file."""
    g = types.FunctionType(f.__code__.replace(co_name=name, co_qualname=name), f.__globals__, name, f.__defaults__,
                           f.__closure__)
    g.__qualname__ = name
    g.__doc__ = f.__doc__
    return g


# One body, two compilations: threads (prange) for grids, serial for the few-point calls of a single curve, where
# starting the thread pool costs more than the work.
_step_grid = nb.njit(parallel=True, **JIT)(_named(_step_grid_body, "_step_grid"))
_step_grid_serial = nb.njit(**JIT)(_named(_step_grid_body, "_step_grid_serial"))
_PARALLEL_MIN_POINTS = 4096


@dataclass(frozen=True)
class StepTimes:
    """Priced grid points.

    total_s : (P,) step time of one forward pass, s; by_family_s : (P, 6) split over FAMILIES;
    by_bound_s : (P, 3) time of memory-bound, compute-bound and communication ops, s;
    bound : (P,) index into BOUNDS of the largest of those.
    """

    total_s: np.ndarray
    by_family_s: np.ndarray
    by_bound_s: np.ndarray

    @property
    def bound(self) -> np.ndarray:
        return np.argmax(self.by_bound_s, axis=-1)


@dataclass(frozen=True)
class Rates:
    """Effective rates one op table is priced at (hardware peaks times achievable fractions)."""

    peak: np.ndarray        # (n_ops,) FLOP/s per op
    bw: float               # HBM bytes/s
    link_bw: float          # bytes/s per direction on the link the instance uses
    lat: np.ndarray         # (n_ops,) collective latency per call, s (0 for non-collectives)


def rates(hw: Hardware, ops: OpSet, hbm_fraction: float | None = None, gemm_fraction: float | None = None) -> Rates:
    """Effective FLOP/s per op from its dtype, HBM and link bandwidth; the scale-out NIC when tp exceeds the
    scale-up domain. `hbm_fraction` / `gemm_fraction` override the hardware's measured fractions (calibration)."""
    peak = np.empty(len(ops))
    for i, dt in enumerate(ops.dtype):
        frac = gemm_fraction if gemm_fraction is not None else hw.gemm_fraction(dt)
        peak[i] = hw.peak_flops_per_s(dt) * frac
    link = hw.scaleup_bytes_per_s
    if ops.tp > hw.scaleup_domain:
        if hw.scaleout_bytes_per_s is None:
            raise ScenarioError(f"tp = {ops.tp} spans more than one {hw.scaleup_domain}-GPU scale-up domain of "
                                f"{hw.name}, whose scale-out bandwidth is not published")
        link = hw.scaleout_bytes_per_s
    lat = np.where(ops.coll > 0, hw.allreduce_latency_s, 0.0)
    return Rates(peak=peak, bw=hw.hbm_bandwidth_bytes_per_s * (hbm_fraction or hw.hbm_fraction),
                 link_bw=link * hw.link_fraction, lat=lat)


def _points(B, q, L, launch_s):
    arrs = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (B, q, L, launch_s)))
    return [np.array(a, dtype=np.float64, order="C").ravel() for a in arrs], arrs[0].shape


def _check_points(B: np.ndarray, q: np.ndarray, L: np.ndarray) -> None:
    if B.size and (not np.all(np.isfinite(B)) or B.min() < 0 or q.min() < 0 or L.min() < 0):
        raise ScenarioError("batch, query tokens and context must be finite and non-negative")


def overlap_eta(overlap: str | float) -> float:
    """Overlap efficiency eta from "max" (1), "sum" (0) or a number in [0, 1]."""
    if overlap == "max":
        return 1.0
    if overlap == "sum":
        return 0.0
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float, np.floating)) or not 0.0 <= overlap <= 1.0:
        raise ScenarioError(f"overlap = {overlap!r}; expected 'max', 'sum' or a number in [0, 1]")
    return float(overlap)


def step_times(ops: OpSet, r: Rates, B, q, L, launch_s=0.0, overlap: str | float = "max") -> StepTimes:
    """Price `ops` at every broadcast point of (B, q, L) with the numba kernel. Output shapes follow the broadcast."""
    (Bf, qf, Lf, lf), shape = _points(B, q, L, launch_s)
    _check_points(Bf, qf, Lf)
    eta = overlap_eta(overlap)
    n = Bf.shape[0]
    tot, fam, bnd = np.empty(n), np.empty((n, _NF)), np.empty((n, 3))
    logq = np.array([np.log1p(-k / e) if 0 < k < e else (-np.inf if e > 0 else 0.0)
                     for e, k in zip(ops.moe_e, ops.moe_k)])
    c = np.ascontiguousarray
    kernel = _step_grid if n >= _PARALLEL_MIN_POINTS else _step_grid_serial
    kernel(Bf, qf, Lf, lf, c(ops.cf), c(ops.cb), c(ops.cc), c(ops.window, dtype=np.float64), c(logq),
               c(ops.moe_e, dtype=np.float64), c(r.peak), c(ops.repeat, dtype=np.float64),
               c(ops.kernels, dtype=np.float64), c(ops.family, dtype=np.float64), c(ops.coll, dtype=np.float64),
               c(r.lat, dtype=np.float64), float(r.bw), float(r.link_bw), eta, tot, fam, bnd)
    return StepTimes(tot.reshape(shape), fam.reshape(shape + (_NF,)), bnd.reshape(shape + (3,)))


def step_times_reference(ops: OpSet, r: Rates, B, q, L, launch_s=0.0, overlap: str | float = "max") -> StepTimes:
    """The same formula in plain numpy, vectorised over points, looping over ops; the tests' oracle."""
    (Bf, qf, Lf, lf), shape = _points(B, q, L, launch_s)
    eta = overlap_eta(overlap)
    n = Bf.shape[0]
    tot, fam, bnd = np.zeros(n), np.zeros((n, _NF)), np.zeros((n, 3))
    for i in range(len(ops)):
        f = features(Bf, qf, Lf, ops.window[i], ops.moe_e[i], ops.moe_k[i])
        if ops.coll[i]:
            t, cls = r.lat[i] + (f @ ops.cc[i]) / r.link_bw, np.full(n, 2)
        else:
            tc, tm = (f @ ops.cf[i]) / r.peak[i], (f @ ops.cb[i]) / r.bw
            t = np.maximum(tc, tm) + (1.0 - eta) * np.minimum(tc, tm)
            cls = (tc > tm).astype(int)
        t = t * ops.repeat[i]
        fam[:, ops.family[i]] += t
        bnd[np.arange(n), cls] += t
        lo = ops.repeat[i] * ops.kernels[i] * lf
        fam[:, _FAM_OVER] += lo
        tot += t + lo
    return StepTimes(tot.reshape(shape), fam.reshape(shape + (_NF,)), bnd.reshape(shape + (3,)))


__all__ = ["BOUNDS", "overlap_eta", "Rates", "StepTimes", "rates", "step_times", "step_times_reference",
           "F_B", "F_BL", "F_CAUSAL", "F_ONE", "F_T", "F_TL", "F_U", "N_FEAT"]
