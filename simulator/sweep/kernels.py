"""Numba kernels that combine priced passes into speedups over a whole sweep shard, plus their numpy reference.

Nothing here prices a pass or derives a FLOP: `simulator.sweep.evaluate` prices every (configuration, candidate,
context) cell through `simulator.pricing`, once over the batch axis, and these kernels only run what
`simulator.speedup.predict` does per batch after that, for every acceptance value at once:

    speedup[cell, a, b] = tokens[cell, a, c] * base[cell, b] / spec[cell, c, b]      (same operation order)
    chosen c: candidates in order, c replaces the best one when (ok and the best is not) or (ok equals the best's ok
              and its speedup is strictly larger)                                       (pricing.better)
    ok already holds each candidate's position limit (context + T <= max_position_embeddings: T <= row_tmax),
              as speedup_curve's candidates do, so a narrower verify is chosen where a wider one passes the limit
    invalid cells (a configuration `speedup_curve` rejects) are NaN and infeasible.

Shapes: base (n_cell, NB); spec, ok (n_cell, C, NB); tokens (n_cell, NA, C); T, pos_code (n_cell, C); n_cand,
row_tmax, invalid, mem_code, inv_code (n_cell,). Outputs are (n_cell, NA, NB). Message codes index the shard's table
of messages (0 = feasible): pos_code[cell, c] when the chosen candidate c passes max_position_embeddings (row_tmax),
else mem_code when it does not fit in memory; inv_code for an invalid configuration.
This module, roofline.py and montecarlo.py import numba; _jit.py holds their one jit policy.
"""

from __future__ import annotations

import functools

import numba as nb
import numpy as np

from .._jit import JIT


def pool_threads() -> int:
    """Python threads that may launch numba kernels at the same time: numba's thread count when its threading layer
    is thread safe (omp, tbb), else 1 (the workqueue layer aborts on concurrent launches)."""
    return int(nb.get_num_threads()) if _threading_layer() in ("omp", "tbb") else 1


@functools.cache
def _threading_layer() -> str:
    """The layer numba picked, known once a parallel kernel has run (numba fixes it for the process)."""
    out = np.empty((1, 1, 1))
    speedup_fixed(np.ones((1, 1)), np.ones((1, 1, 1)), np.ones((1, 1, 1)), out)   # starts the thread pool
    return str(nb.threading_layer())


@nb.njit(parallel=True, **JIT)
def speedup_fixed(base, tokens, spec, out):
    """One candidate per cell (a fixed k): out[cell, a, b] = tokens[cell, a, 0] * base[cell, b] / spec[cell, 0, b]."""
    n_cell, n_acc, n_b = out.shape
    for r in nb.prange(n_cell * n_acc):
        cell = r // n_acc
        a = r - cell * n_acc
        t = tokens[cell, a, 0]
        for b in range(n_b):
            out[cell, a, b] = t * base[cell, b] / spec[cell, 0, b]


@nb.njit(parallel=True, **JIT)
def speedup_choose(base, tokens, spec, ok, T, n_cand, row_tmax, invalid, mem_code, pos_code, inv_code,
                   out_s, out_c, out_ok, out_code):
    """k = "auto": the best candidate per point (speedup_curve's rule), its speedup, feasibility and message code."""
    n_cell, n_acc, n_b = out_s.shape
    for r in nb.prange(n_cell * n_acc):
        cell = r // n_acc
        a = r - cell * n_acc
        if invalid[cell]:
            for b in range(n_b):
                out_s[cell, a, b] = np.nan
                out_c[cell, a, b] = 0
                out_ok[cell, a, b] = False
                out_code[cell, a, b] = inv_code[cell]
            continue
        for b in range(n_b):
            best_c = 0
            best_s = tokens[cell, a, 0] * base[cell, b] / spec[cell, 0, b]
            best_ok = ok[cell, 0, b]
            for c in range(1, n_cand[cell]):
                s = tokens[cell, a, c] * base[cell, b] / spec[cell, c, b]
                okc = ok[cell, c, b]
                if (okc and not best_ok) or (okc == best_ok and s > best_s):
                    best_c = c
                    best_s = s
                    best_ok = okc
            out_s[cell, a, b] = best_s
            out_c[cell, a, b] = best_c
            out_ok[cell, a, b] = best_ok
            if best_ok:
                out_code[cell, a, b] = 0
            elif T[cell, best_c] > row_tmax[cell]:
                out_code[cell, a, b] = pos_code[cell, best_c]
            else:
                out_code[cell, a, b] = mem_code[cell]


@nb.njit(parallel=True, **JIT)
def gather(choice, src, out):
    """out[cell, a, b] = src[cell, choice[cell, a, b], b] (a chosen candidate's per-batch field)."""
    n_cell, n_acc, n_b = out.shape
    for r in nb.prange(n_cell * n_acc):
        cell = r // n_acc
        a = r - cell * n_acc
        for b in range(n_b):
            out[cell, a, b] = src[cell, choice[cell, a, b], b]


@nb.njit(parallel=True, **JIT)
def gather_acc(choice, src, out):
    """out[cell, a, b] = src[cell, a, choice[cell, a, b]] (a chosen candidate's per-acceptance field: tokens)."""
    n_cell, n_acc, n_b = out.shape
    for r in nb.prange(n_cell * n_acc):
        cell = r // n_acc
        a = r - cell * n_acc
        for b in range(n_b):
            out[cell, a, b] = src[cell, a, choice[cell, a, b]]


# ---- plain numpy reference (the tests' oracle; `kernel="reference"` in simulator.sweep) -----------------------------

def speedup_fixed_reference(base, tokens, spec, out):
    out[...] = tokens[:, :, 0:1] * base[:, None, :] / spec[:, 0:1, :]


def speedup_choose_reference(base, tokens, spec, ok, T, n_cand, row_tmax, invalid, mem_code, pos_code, inv_code,
                             out_s, out_c, out_ok, out_code):
    n_cell, n_acc, n_b = out_s.shape
    best_s = tokens[:, :, 0:1] * base[:, None, :] / spec[:, None, 0, :]
    best_ok = np.broadcast_to(ok[:, None, 0, :], best_s.shape).copy()
    best_c = np.zeros(best_s.shape, dtype=np.intp)
    for c in range(1, tokens.shape[2]):
        s = tokens[:, :, c:c + 1] * base[:, None, :] / spec[:, None, c, :]
        okc = ok[:, None, c, :]
        better = ((okc & ~best_ok) | ((okc == best_ok) & (s > best_s))) & (c < n_cand)[:, None, None]
        best_s = np.where(better, s, best_s)
        best_ok = np.where(better, okc, best_ok)
        best_c = np.where(better, c, best_c)
    t_chosen = np.take_along_axis(np.broadcast_to(T[:, None, :], (n_cell, n_acc, T.shape[1])), best_c, axis=2)
    pos = np.take_along_axis(np.broadcast_to(pos_code[:, None, :], (n_cell, n_acc, T.shape[1])), best_c, axis=2)
    code = np.where(best_ok, 0, np.where(t_chosen > row_tmax[:, None, None], pos, mem_code[:, None, None]))
    inv = invalid[:, None, None]
    out_s[...] = np.where(inv, np.nan, best_s)
    out_c[...] = np.where(inv, 0, best_c)
    out_ok[...] = best_ok & ~inv
    out_code[...] = np.where(inv, inv_code[:, None, None], code)


def gather_reference(choice, src, out):
    out[...] = np.take_along_axis(src, choice.astype(np.intp), axis=1)


def gather_acc_reference(choice, src, out):
    out[...] = np.take_along_axis(src, choice.astype(np.intp), axis=2)


KERNELS = {"numba": (speedup_fixed, speedup_choose, gather, gather_acc),
           "reference": (speedup_fixed_reference, speedup_choose_reference, gather_reference, gather_acc_reference)}
