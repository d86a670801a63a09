"""Roofline pricing of op tables over whole (B, q, L) grids: numba kernels plus a plain numpy reference.

Per op repetition (Williams et al. 2009, "Roofline"; scaling-book roofline.md for the overlap bounds):
    t_op = max(tc, tm) + (1 - eta) * min(tc*, tm) + kernels * t_kernel + quant * t_quant
    tc = FLOPs / (peak * gemm_fraction),  tm = bytes / (HBM bandwidth * hbm_fraction)
eta = 1 is the roofline max, 0 the sum (the two differ by at most 2x), set by the overlap mode
(workload.OVERLAP_MODES): "max", "sum" or a number set one eta for every op, with tc* = tc. "measured", the default,
prices a GEMM (a matmul or the routed experts) at the device's measured GEMM overlap, eta = gemm_eta
(Hardware.gemm_overlap: cuBLAS bf16 GEMMs at M = 16..4096 on H100 and B200 sit between the max and the sum, most
visibly near the ridge point, where math and memory times are alike; tools/fit_gemm_overlap.py), with tc* the real
tokens' math, not the tile-padded rows', which the tensor cores compute alongside the real ones (a GEMM at M = 16
costs what it costs at M = 1, measured); every other op at the max. t_kernel is the per-kernel cost of a replayed
CUDA / HIP graph node (launch gap plus ramp and tail, a device figure): with t = t_kernel + bytes / BW per kernel the
bandwidth a kernel reaches grows with the bytes it moves, as measured (the project's physics notes: H100 decode
attention 1.2 TB/s at 34 MB, 1.85 TB/s at 1 GB). t_quant is the measured cost of an activation-quantisation
kernel (the `quant` kernels before W8A8 / NVFP4 GEMMs, units.ACT_QUANT), a device figure that is not fitted: 1.3-1.8
us on an H200 at decode sizes, where the fitted t_kernel, an engine step's mean per kernel, is about 5 us. GEMM FLOPs
use the tokens rounded up to the tensor-core tile height (F_TPAD: M = 1..64 cost the same on Hopper's 64-row wgmma;
DeepGEMM #60, CUTLASS #1483).
Collectives, by kind, over a group of n GPUs on one link (bandwidth per direction, latency per call):
    all-reduce   min(lat + (n-1) S / bw,  2 lat + 2 (n-1)/n S / bw)   one-shot or two-shot, whichever is faster, as
                 custom / symmetric-memory all-reduce kernels switch by size (vLLM custom_all_reduce.cuh thresholds);
                 the ring form lat + 2 (n-1)/n S / bw (Patarasuk & Yuan 2009) when one-shot is off
    all-to-all   lat + S / bw            S = bytes this rank sends (dispatch or combine)
    all-gather   lat + (n-1)/n S / bw    S = the gathered buffer (also reduce-scatter)
    send         lat + S / bw            S = one pipeline stage's hidden states to the next, at the all-reduce's latency
A collective whose group spans several scale-up domains is hierarchical: NVLink inside each domain, the scale-out
NIC across (hierarchical_bandwidth), with the scale-out latency added to the in-domain one.
Eager launch (no CUDA graph): the host issues each kernel (launch_s per kernel: framework dispatch and the launch call)
and CUDA launches are asynchronous (CUDA C++ Programming Guide, "Asynchronous Concurrent Execution"), so the host runs
ahead of a busy GPU and a pass takes the longer of the two: max(sum of the ops' times, sum of (kernels + quant) *
launch_s * repetitions), the excess in the "overhead" family. Launch-bound at small batch (a small model's eager step
is about its launch count times launch_s, whatever the model's size), GPU-bound at large batch (an eager pass then
costs what a graphed one does). Eager kernels pay the device's per-kernel floor like replayed ones (the GPU-side cost
of a kernel boundary does not depend on who launched it).

This module, sweep/kernels.py and montecarlo.py are the only numba importers; _jit.py holds their one jit policy.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import numba as nb
import numpy as np

from ._jit import JIT
from .errors import ScenarioError
from .experts import head_runs
from .features import features
from .hardware import Hardware
from .workload import (
    COLL_ALLGATHER,
    COLL_ALLREDUCE,
    COLL_ALLTOALL,
    COLL_SEND,
    F_B,
    F_BL,
    F_CAUSAL,
    F_ONE,
    F_T,
    F_TL,
    F_TPAD,
    F_U,
    FAM,
    FAMILIES,
    LINK_SCALEOUT,
    N_FEAT,
    OpSet,
)

BOUNDS: tuple[str, ...] = ("memory", "compute", "communication", "launch")   # launch: an eager pass whose launches
#                                                                            outlast its GPU work (module doc)
_NF = len(FAMILIES)
_FAM_OVER = FAM["overhead"]
_LAUNCH = BOUNDS.index("launch")


@nb.njit(**JIT)
def _busiest(u, table, i, E):
    """The busiest rank's touched fraction: row i of the table at D = E u (workload.busiest_rank_fraction)."""
    x = u * E
    lo = int(x)
    if lo >= E:
        return table[i, E]
    w = x - lo
    return table[i, lo] * (1.0 - w) + table[i, lo + 1] * w


@nb.njit(**JIT)
def _dealt(B, n):
    """The busiest of n ranks' sequences (experts.dealt): ceil(B / n) at whole B, linear between."""
    if n <= 1.0:
        return B
    lo = np.floor(B)
    c = np.ceil(lo / n)
    return c + (B - lo) * (np.ceil((lo + 1.0) / n) - c)


@nb.njit(**JIT)
def _feats(B, q, L, window, logq, moe_e, rho, table, i, side, dp, pp, tile, f):
    """The features of one op at one point, into f (features.features; b is experts.rank_batch, the experts' tokens
    experts.routed_tokens)."""
    b = _dealt(B, dp) / pp
    if pp > 1.0:                       # a single token crosses every pipeline stage in turn
        one = B if B < 1.0 else 1.0
        b = b if b > one else one
    if side == 0.0:                    # every DP rank's micro-batch reaches the op
        b = B if B < dp * b else dp * b
    T = b * q
    Lw = L if L < window else window
    qw = q if q < window else window   # each new token sees at most `window` of the new tokens before it
    f[0] = 1.0
    f[1] = b
    f[2] = T
    f[3] = b * Lw
    f[4] = T * Lw
    f[5] = b * (qw * (qw + 1.0) * 0.5 + (q - qw) * qw)
    f[6] = 0.0
    if moe_e > 0.0 and T > 0.0:   # T = 0 with k = E would give 0 * -inf
        Tr = b * (1.0 + rho * (q - 1.0)) if q > 1.0 else T
        f[6] = _busiest(-np.expm1(Tr * logq), table, i, int(moe_e + 0.5))
    f[7] = np.ceil(T / tile) * tile if tile > 0.0 else T


@nb.njit(**JIT)
def _coll_time(kind, n, S, lat, bw, one_shot):
    """Time of one collective of payload S bytes over n GPUs (see the module docstring)."""
    if kind == 2 or kind == 4:         # all-to-all (S: what this rank sends) or a point-to-point send of S
        return lat + S / bw
    if kind == 3:                      # all-gather / reduce-scatter
        return lat + (n - 1.0) / n * S / bw
    two = 2.0 * lat + 2.0 * (n - 1.0) / n * S / bw
    if one_shot:
        one = lat + (n - 1.0) * S / bw
        return one if one < two else two
    return lat + 2.0 * (n - 1.0) / n * S / bw


@nb.njit(**JIT)
def _dot(c, i, f):
    s = 0.0
    for j in range(f.shape[0]):
        s += c[i, j] * f[j]
    return s


@nb.njit(**JIT)
def _op_time(i, f, cf, cb, peak, eta, real, bw, floor):
    """One repetition of a compute op at features f: its time and bound class (module docstring)."""
    tc = _dot(cf, i, f) / peak[i]
    tm = _dot(cb, i, f) / bw
    tr = tc
    if real[i] > 0.0:         # tc*: the real tokens' math, not the tile-padded rows'
        tr = tc + cf[i, F_TPAD] * (f[F_T] - f[F_TPAD]) / peak[i]
    cls = 1 if tc > tm else 0
    t = (tc if tc > tm else tm) + (1.0 - eta[i]) * min(tr, tm)
    return t + floor, cls


def _step_grid_body(B, q, L, launch_s, floor_s, quant_s, cf, cb, cc, window, logq, moe_e, rho, table, side, micro, dp,
                    pp, peak, repeat, kernels, quant, fam, coll, group, eta, real, lat, bw_op, bw, tiles, one_shot,
                    out_total, out_fam, out_bound):
    """Price every point (B[p], q[p], L[p]) of a grid: total, per family and per bound class, in seconds."""
    n_ops = cf.shape[0]
    for p in nb.prange(B.shape[0]):
        f = np.empty(cf.shape[1])
        tot = 0.0
        lot = 0.0
        for j in range(out_fam.shape[1]):
            out_fam[p, j] = 0.0
        for j in range(out_bound.shape[1]):
            out_bound[p, j] = 0.0
        for i in range(n_ops):
            _feats(B[p], q[p], L[p], window[i], logq[i], moe_e[i], rho[i], table, i, side[i], dp, pp, tiles[i], f)
            if coll[i] > 0.0:
                t = _coll_time(coll[i], group[i], _dot(cc, i, f), lat[i], bw_op[i], one_shot)
                cls = 2
            else:
                t, cls = _op_time(i, f, cf, cb, peak, eta, real, bw, kernels[i] * floor_s[p] + quant[i] * quant_s[p])
            n = repeat[i]
            if pp > 1.0:              # experts.head_runs: the path, or a full pipeline's cycle (OpSet.micro)
                m = _dealt(B[p], dp) - pp + 1.0
                n *= 1.0 + (micro[i] - 1.0) * (0.0 if m < 0.0 else (1.0 if m > 1.0 else m))
            t *= n
            out_fam[p, int(fam[i])] += t
            out_bound[p, cls] += t
            lot += n * (kernels[i] + quant[i]) * launch_s[p]
            tot += t
        if lot > tot:                # eager: the host's launches outlast the GPU's work (module doc)
            out_fam[p, _FAM_OVER] += lot - tot
            out_bound[p, _LAUNCH] = lot - tot
            tot = lot                # the max itself, so that two launch-bound points price the same to the ulp
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
    by_bound_s : (P, 4) time of memory-bound, compute-bound and communication ops, and the launches' excess over them
                 (an eager pass that is launch-bound; 0 elsewhere), s: they sum to total_s;
    bound : (P,) index into BOUNDS: "launch" where that excess is positive, else the largest of the other three.
    """

    total_s: np.ndarray
    by_family_s: np.ndarray
    by_bound_s: np.ndarray

    @property
    def bound(self) -> np.ndarray:
        b = self.by_bound_s
        return np.where(b[..., _LAUNCH] > 0.0, _LAUNCH, np.argmax(b[..., :_LAUNCH], axis=-1))


@dataclass(frozen=True)
class Rates:
    """Effective rates one op table is priced at (hardware peaks times achievable fractions) and the mechanisms.

    peak : (n_ops,) FLOP/s per op; bw : HBM bytes/s; lat, bw_op : (n_ops,) collective latency per call (s) and link
    bandwidth per direction (bytes/s) of each collective (0 elsewhere); kernel_s : per-kernel cost of a graph-replayed
    kernel, s (0: off); quant_s : the measured cost of an activation-quantisation kernel, s (0: off); tile : GEMM
    tile height in tokens (0: off); one_shot : all-reduce picks one-shot or two-shot;
    gemm_eta : share of a GEMM's smaller time its larger one hides (the device's gemm_overlap; 1: roofline max);
    quant_on : (n_ops,) 1 where the op's GEMM computes in its weight format and so quantises its activations first,
    0 where the device runs that format weight-only (W4A16 / W8A16: no quantisation kernel; None: every op); the
    op's bytes keep the quantised copy of x (workload.matmul), under 1 % of a step there (found by review);
    tiles : (n_ops,) GEMM tile height per op (a weight-only GEMM's own, Hardware.weight_only_tile_m; None: `tile`).
    """

    peak: np.ndarray
    bw: float
    lat: np.ndarray
    bw_op: np.ndarray
    kernel_s: float = 0.0
    quant_s: float = 0.0
    tile: float = 0.0
    one_shot: bool = False
    gemm_eta: float = 1.0
    quant_on: np.ndarray | None = None
    tiles: np.ndarray | None = None

    def tile_of(self, n_ops: int) -> np.ndarray:
        """The GEMM tile height per op: `tiles` (a weight-only GEMM's own), else `tile` for every op."""
        return np.full(n_ops, float(self.tile)) if self.tiles is None else np.asarray(self.tiles, dtype=np.float64)

    def quant(self, ops: OpSet) -> np.ndarray:
        """Activation-quantisation kernels per op repetition on this device (ops.quant where quant_on)."""
        q = np.asarray(ops.quant, dtype=np.float64)
        return q if self.quant_on is None else q * self.quant_on


def hierarchical_bandwidth(kind: int, n: float, g: float, bw_in: float, bw_out: float) -> float:
    """Effective bandwidth of a collective over n GPUs spanning n / g scale-up domains of g GPUs (NVLink inside,
    the scale-out NIC of each GPU across), in the form the collective formulas take (module docstring):
    all-reduce   reduce-scatter in the domain, all-reduce of 1/g of the data across domains, all-gather in the domain
                 (NCCL's hierarchical tree/ring): 2(g-1)/g S/bw_in + 2(m-1)/m (S/g)/bw_out, m = n/g
    all-to-all   of the bytes a rank sends, (g-1)/(n-1) stay in the domain and (n-g)/(n-1) cross it, in parallel
    all-gather   likewise: (g-1)/n and (n-g)/n of the buffer, in parallel."""
    m = n / g
    if kind == COLL_ALLREDUCE:
        t = 2.0 * (g - 1.0) / g / bw_in + 2.0 * (m - 1.0) / m / (g * bw_out)
        return 2.0 * (n - 1.0) / n / t
    if kind == COLL_ALLTOALL:
        return 1.0 / max((g - 1.0) / (n - 1.0) / bw_in, (n - g) / (n - 1.0) / bw_out)
    return (n - 1.0) / n / max((g - 1.0) / n / bw_in, (n - g) / n / bw_out)


def _collective_rates(hw: Hardware, ops: OpSet, allreduce_latency_s: float | None) -> tuple[np.ndarray, np.ndarray]:
    lat, bw = np.zeros(len(ops)), np.zeros(len(ops))
    ar = allreduce_latency_s if allreduce_latency_s is not None else hw.allreduce_latency_s
    bw_in = hw.scaleup_bytes_per_s * hw.link_fraction      # a whole domain's (the hierarchical path's inner step)
    for i in np.flatnonzero(ops.coll > 0):
        # a pipeline stage's send is one hop of the small-message path whose latency the all-reduce's measures (an
        # estimate; it had taken the expert all-to-all's, found by review), the EP all-to-alls their own
        in_lat = hw.alltoall_latency_s if ops.coll[i] == COLL_ALLTOALL else ar
        if ops.link[i] == LINK_SCALEOUT:
            if hw.scaleout_bytes_per_s is None:
                raise ScenarioError(f"a {int(ops.group[i])}-GPU collective spans more than one "
                                    f"{hw.scaleup_domain}-GPU scale-up domain of {hw.name}, whose scale-out bandwidth "
                                    "is not published")
            bw_out = hw.scaleout_bytes_per_s * hw.link_fraction
            lat[i] = hw.scaleout_latency_s + in_lat
            n = float(ops.group[i])
            # a point-to-point send between domains (pipeline stages) crosses the NIC whole
            bw[i] = bw_out if n <= hw.scaleup_domain else hierarchical_bandwidth(int(ops.coll[i]), n,
                                                                                 float(hw.scaleup_domain), bw_in,
                                                                                 bw_out)
            continue
        lat[i], bw[i] = in_lat, hw.scaleup_group_bytes_per_s(float(ops.group[i])) * hw.link_fraction
    return lat, bw


def rates(hw: Hardware, ops: OpSet, hbm_fraction: float | None = None, gemm_fraction: float | None = None,
          allreduce_latency_s: float | None = None, mechanisms: bool = True) -> Rates:
    """Effective FLOP/s per op from its dtype, HBM bandwidth, and each collective's link. `hbm_fraction` /
    `gemm_fraction` override the hardware's measured fractions, `allreduce_latency_s` its all-reduce latency (an
    engine's own implementation). `mechanisms=False` prices the bare roofline (no per-kernel cost, no tile rounding,
    ring all-reduce, GEMMs at the roofline max); a device without peer-to-peer all-reduce (PCIe only:
    Hardware.p2p_allreduce) prices the ring too, NCCL's, as vLLM turns its custom all-reduce off there."""
    peak, act, tiles = np.empty(len(ops)), np.empty(len(ops)), np.empty(len(ops))
    for i, dt in enumerate(ops.dtype):
        ct = hw.compute_format(dt)     # weight-only formats (MXFP4 on Hopper) compute in bf16
        frac = gemm_fraction if gemm_fraction is not None else hw.gemm_fraction(ct)
        peak[i] = hw.peak_flops_per_s(ct) * frac
        act[i] = float(ct == dt)       # and quantise no activations (found by review: NVFP4 on H100 paid 128 kernels)
        wo = hw.weight_only_tile_m if ct != dt and hw.weight_only_tile_m else hw.gemm_tile_m
        tiles[i] = float(wo) if mechanisms else 0.0   # a weight-only GEMM on its own kernel's tile (Marlin: 16 rows)
    lat, bw_op = _collective_rates(hw, ops, allreduce_latency_s)
    return Rates(peak=peak, bw=hw.hbm_bandwidth_bytes_per_s * (hbm_fraction or hw.hbm_fraction), lat=lat,
                 bw_op=bw_op, kernel_s=hw.kernel_floor_s if mechanisms else 0.0,
                 quant_s=hw.quant_kernel_s if mechanisms else 0.0,
                 tile=float(hw.gemm_tile_m) if mechanisms else 0.0, one_shot=mechanisms and hw.p2p_allreduce,
                 gemm_eta=hw.gemm_overlap if mechanisms else 1.0, quant_on=act, tiles=tiles)


def _points(r: Rates, B, q, L, launch_s, graphed):
    """The grid flattened: (B, q, L, launch cost, per-kernel floor, quantisation-kernel cost) per point (the floor and
    the quantisation-kernel cost 0 where `graphed`, which says whether they apply, is false), and the broadcast
    shape."""
    g = np.asarray(graphed)
    arrs = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (
        B, q, L, launch_s, np.where(g, r.kernel_s, 0.0), np.where(g, r.quant_s, 0.0))))
    return [np.array(a, dtype=np.float64, order="C").ravel() for a in arrs], arrs[0].shape


def _check_points(B: np.ndarray, q: np.ndarray, L: np.ndarray) -> None:
    if B.size and (not np.all(np.isfinite(B)) or B.min() < 0 or q.min() < 0 or L.min() < 0):
        raise ScenarioError("batch, query tokens and context must be finite and non-negative")


def op_overlap(ops: OpSet, r: Rates, overlap: str | float) -> tuple[np.ndarray, np.ndarray]:
    """Per op, the overlap efficiency eta and whether its unhidden math counts real tokens (1) or tile-padded rows
    (0): "measured" gives GEMMs the device's gemm_eta and real tokens, every other op the max; any other mode one eta
    for every op (overlap_eta)."""
    if overlap == "measured":
        gemm = np.asarray(ops.gemm, dtype=np.float64)
        return np.where(gemm > 0.0, r.gemm_eta, 1.0), gemm
    return np.full(len(ops), overlap_eta(overlap)), np.zeros(len(ops))


def overlap_eta(overlap: str | float) -> float:
    """Overlap efficiency eta from "max" (1), "sum" (0) or a number in [0, 1] ("measured": one per op, op_overlap)."""
    if overlap == "measured":
        raise ScenarioError("overlap = 'measured' gives each op its own eta (roofline.op_overlap), not one value")
    if overlap == "max":
        return 1.0
    if overlap == "sum":
        return 0.0
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float, np.floating)) or not 0.0 <= overlap <= 1.0:
        raise ScenarioError(f"overlap = {overlap!r}; expected 'measured', 'max', 'sum' or a number in [0, 1]")
    return float(overlap)


def _logq(ops: OpSet) -> np.ndarray:
    return np.array([np.log1p(-k / e) if 0 < k < e else (-np.inf if e > 0 else 0.0)
                     for e, k in zip(ops.moe_e, ops.moe_k)])


def _side(ops: OpSet) -> np.ndarray:
    """1.0 for an attention-side op (its share of the batch is a DP rank's: share < 1), else 0.0."""
    return (np.asarray(ops.share, dtype=np.float64) < 1.0).astype(np.float64)


def step_times(ops: OpSet, r: Rates, B, q, L, launch_s=0.0, overlap: str | float = "measured",
               graphed=True) -> StepTimes:
    """Price `ops` at every broadcast point of (B, q, L) with the numba kernel. Output shapes follow the broadcast.
    launch_s: eager launch cost per kernel (0 where graphed); graphed: whether the per-kernel floor applies (it does to
    every kernel of a real engine, replayed or launched: the module doc);
    overlap: a mode of workload.OVERLAP_MODES or a number (op_overlap)."""
    (Bf, qf, Lf, lf, ff, qq), shape = _points(r, B, q, L, launch_s, graphed)
    _check_points(Bf, qf, Lf)
    eta, real = op_overlap(ops, r, overlap)
    n = Bf.shape[0]
    tot, fam, bnd = np.empty(n), np.empty((n, _NF)), np.empty((n, len(BOUNDS)))
    c = np.ascontiguousarray
    kernel = _step_grid if n >= _PARALLEL_MIN_POINTS else _step_grid_serial
    kernel(Bf, qf, Lf, lf, ff, qq, c(ops.cf), c(ops.cb), c(ops.cc), c(ops.window, dtype=np.float64), c(_logq(ops)),
           c(ops.moe_e, dtype=np.float64), c(ops.moe_rho, dtype=np.float64), c(ops.moe_table, dtype=np.float64),
           _side(ops),
           c(ops.micro, dtype=np.float64), float(ops.dp), float(ops.pp), c(r.peak), c(ops.repeat, dtype=np.float64),
           c(ops.kernels, dtype=np.float64), c(r.quant(ops)), c(ops.family, dtype=np.float64),
           c(ops.coll, dtype=np.float64),
           c(ops.group, dtype=np.float64), c(eta), c(real), c(r.lat, dtype=np.float64), c(r.bw_op, dtype=np.float64),
           float(r.bw), c(r.tile_of(len(ops))), bool(r.one_shot), tot, fam, bnd)
    return StepTimes(tot.reshape(shape), fam.reshape(shape + (_NF,)), bnd.reshape(shape + (len(BOUNDS),)))


def _coll_reference(kind: int, n: float, S: np.ndarray, lat: float, bw: float, one_shot: bool) -> np.ndarray:
    if kind in (COLL_ALLTOALL, COLL_SEND):
        return lat + S / bw
    if kind == COLL_ALLGATHER:
        return lat + (n - 1.0) / n * S / bw
    assert kind == COLL_ALLREDUCE
    two = 2.0 * lat + 2.0 * (n - 1.0) / n * S / bw
    return np.minimum(lat + (n - 1.0) * S / bw, two) if one_shot else lat + 2.0 * (n - 1.0) / n * S / bw


def step_times_reference(ops: OpSet, r: Rates, B, q, L, launch_s=0.0, overlap: str | float = "measured",
                         graphed=True) -> StepTimes:
    """The same formula in plain numpy, vectorised over points, looping over ops; the tests' oracle."""
    (Bf, qf, Lf, lf, ff, qq), shape = _points(r, B, q, L, launch_s, graphed)
    eta, real_op = op_overlap(ops, r, overlap)
    quant, tiles = r.quant(ops), r.tile_of(len(ops))
    n = Bf.shape[0]
    tot, lot, fam, bnd = np.zeros(n), np.zeros(n), np.zeros((n, _NF)), np.zeros((n, len(BOUNDS)))
    for i in range(len(ops)):
        f = features(Bf, qf, Lf, ops.window[i], ops.moe_e[i], ops.moe_k[i], ops.moe_table[i], ops.share[i], tiles[i],
                     ops.pp, ops.dp, ops.moe_rho[i])
        if ops.coll[i]:
            t = _coll_reference(int(ops.coll[i]), ops.group[i], f @ ops.cc[i], r.lat[i], r.bw_op[i], r.one_shot)
            cls = np.full(n, 2)
        else:
            tc, tm = (f @ ops.cf[i]) / r.peak[i], (f @ ops.cb[i]) / r.bw
            real = f.copy()
            if real_op[i]:
                real[:, F_TPAD] = f[:, F_T]              # tc*: the real tokens' math
            tr = (real @ ops.cf[i]) / r.peak[i]
            t = np.maximum(tc, tm) + (1.0 - eta[i]) * np.minimum(tr, tm) + ops.kernels[i] * ff + quant[i] * qq
            cls = (tc > tm).astype(int)
        rep = ops.repeat[i] * (head_runs(Bf, ops.dp, ops.pp, ops.micro[i]) if ops.pp > 1 else 1.0)
        t = t * rep
        fam[:, ops.family[i]] += t
        bnd[np.arange(n), cls] += t
        lot += rep * (ops.kernels[i] + quant[i]) * lf
        tot += t
    fam[:, _FAM_OVER] += np.maximum(lot - tot, 0.0)
    bnd[:, _LAUNCH] = np.maximum(lot - tot, 0.0)
    tot = np.maximum(tot, lot)
    return StepTimes(tot.reshape(shape), fam.reshape(shape + (_NF,)), bnd.reshape(shape + (len(BOUNDS),)))


__all__ = ["BOUNDS", "op_overlap", "overlap_eta", "Rates", "StepTimes", "rates", "step_times", "step_times_reference",
           "F_B", "F_BL", "F_CAUSAL", "F_ONE", "F_T", "F_TL", "F_TPAD", "F_U", "N_FEAT"]
