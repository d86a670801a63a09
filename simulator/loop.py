"""The closed loop `serving.serve` solves for each mode: the decode step priced on a grid of batches, the loop of R
running requests as a function of its decode batch B (TTFT with the prefill of the prompts waiting beside a request,
the prompt load of its decode steps), and the batch a disaggregated prefill instance feeds. The formulas are
serving's module docstring."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .acceptance import Verify
from .pricing import base_step, best_spec_step, spec_step
from .prompts import PromptSide, prefill_wait, prompt_load
from .scenario import Deployment
from .traffic import Workload

# The smallest decode batch priced when a prefill instance feeds it: one sequence, the fewest a step that runs
# carries (`step_batch`), however small the time-average batch the prefill rate feeds.
FED_FLOOR = 1.0

# Loop.batch takes bisection's halvings this many at a time (48 / SECTION_BITS rounds of 2^SECTION_BITS - 1 points).
SECTION_BITS = 3


def decode(dep: Deployment, B: np.ndarray, L: float, spec: bool) -> tuple[np.ndarray, ...]:
    """(step_s, tokens per step, k, bound) of a decode step at (fractional) batch B: the plain step, or the best
    speculative one (pricing.best_spec_step)."""
    return _decode(dep, B, L, spec)[:4]


def _decode(dep: Deployment, B: np.ndarray, L: float, spec: bool, most: float = np.inf) -> tuple:
    """`decode` and the verify shape it takes at each batch (None plain); `most` bounds the tokens per step
    (pricing.best_spec_step)."""
    base, st = base_step(dep, B, L)
    if not spec:
        return base, np.ones_like(base), np.zeros(B.size, dtype=int), st.bound, None
    best = best_spec_step(dep, dep.acceptance, B, L, base, most)
    return best.step.step_s, best.tokens, np.array([v.k for v in best.v]), best.step.bound, tuple(best.v)


def step_batch(B: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Sequences in the steps a decoding request takes when B of R running requests are in the decode stage on
    average: itself and each of the R - 1 others with its share B / R of a lifetime spent decoding (slots independent,
    the estimate `ttft` makes), 1 + (R - 1) B / R: the size-biased batch, which sets the request's TPOT (the mean of
    the steps it is in), not the time average B, which counts the time none decodes (found by review: one request of a
    100k-token prompt decodes at batch 1, not at its 0.1 of a lifetime spent decoding, and was priced a TPOT 30 %
    under a one-sequence step). 1 for one request, R when every slot decodes; 0 where none decodes (B = 0)."""
    B, R = np.asarray(B, dtype=np.float64), np.asarray(R, dtype=np.float64)
    return np.where(B > 0.0, 1.0 + np.maximum(R - 1.0, 0.0) * B / np.maximum(R, 1e-300), B * 0.0)


GRID_PER_DECADE = 24
# The fewest sequences a decoding request's step carries (step_batch: itself), where the batch grid starts.
STEP_FLOOR = 1.0


def _lattice(lo: float, hi: float) -> np.ndarray:
    """The points 10^(j / GRID_PER_DECADE) that cover [lo, hi]: the same points whatever else is priced."""
    j0, j1 = np.floor(GRID_PER_DECADE * np.log10(lo)), np.ceil(GRID_PER_DECADE * np.log10(hi))
    return 10.0 ** (np.arange(j0, j1 + 1.0) / GRID_PER_DECADE)


def batch_grid(C: np.ndarray, floor: float | None = None, tile: float = 0.0) -> np.ndarray:
    """Decode batches the steady state is solved on: the fixed lattice of GRID_PER_DECADE points per decade
    (10^(j / 24)) that covers STEP_FLOOR to C_max (a decoding request's step carries 1 + (R - 1) B / R sequences,
    `step_batch`, from one to its R <= C; between grid points the step is interpolated in log B); with `floor` below
    it, down to `floor`. Anchored, so a point's price does not depend on the others priced beside it (found by a
    hypothesis test: 69 requests were priced an E2E of 1.738 s alone, 1.746 s beside 68 and 1.736 s beside 64, when the
    grid ran from the smallest to the largest and held each concurrency). With `tile` (sequences per GEMM tile edge of
    a plain step, the device's tile height x dp x pp), each edge n x tile and n x tile + 1 too, up to the lattice's top
    point: the step jumps there, and the lattice alone had priced 256 sequences 1.2 % slow, between 237 and 261 across
    the 256-row edge (review). The lattice had started at C_min / 4 and the edges stopped at C_max, so a point's
    bracket depended on the list: 183 requests were priced 0.7 % slower alone than beside 295, whose grid held the
    192-row edge below the lattice point 196, and a step of fewer than C_min / 4 sequences was priced at C_min / 4
    (review, 2026-12-06)."""
    lo = min(STEP_FLOOR, floor) if floor else STEP_FLOOR
    lattice = _lattice(lo, max(float(C.max()), lo))
    parts = [lattice]
    if tile > 0.0:
        top = float(lattice[-1])
        edge = tile * np.arange(np.ceil(lo / tile), np.floor(top / tile) + 1.0)
        parts += [edge, edge[edge + 1.0 <= top] + 1.0]
    return np.unique(np.concatenate(parts))


@dataclass(frozen=True)
class Curve:
    """A decode step priced on the batch grid at one context: step, tokens per step, k, bound and verify shape (None
    plain) per grid point."""

    grid: np.ndarray
    step: np.ndarray
    tau: np.ndarray
    k: np.ndarray
    bound: np.ndarray
    v: tuple[Verify, ...] | None = None

    def at(self, B: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(step, tau) interpolated in log B; (k, bound) of the nearest grid point at or above B. Between grid points
        of two verify shapes (k "auto" changes depth) the tokens per step are that point's, and the step is what
        gives the interpolated rate tau / step: the best shape's rate is continuous where the shape changes, its
        step and tau are not, and blending them paired one depth with another's tokens per step (found by review:
        k = 3 reported with 2.8173 tokens per step, above k = 3's 2.79)."""
        x = np.log(np.clip(B, self.grid[0], self.grid[-1]))
        lg = np.log(self.grid)
        i = self._above(B)
        step, tau = np.interp(x, lg, self.step), np.interp(x, lg, self.tau)
        same = self.tau[np.maximum(i - 1, 0)] == self.tau[i]
        if not same.all():
            rate = np.interp(x, lg, self.tau / self.step)
            tau = np.where(same, tau, self.tau[i])
            step = np.where(same, step, tau / rate)
        return step, tau, self.k[i], self.bound[i]

    def verify_tokens(self, B: np.ndarray) -> np.ndarray:
        """Tokens verified per sequence (k + 1 for a chain, the tree's size for a tree; 1 plain) of the verify shape
        `at` reports at batch B: the nearest grid point's at or above B, as its k."""
        T = np.ones(self.grid.size, dtype=int) if self.v is None else np.array([v.T for v in self.v])
        return T[self._above(B)]

    def _above(self, B: np.ndarray) -> np.ndarray:
        """Index of the nearest grid point at or above each B (the last point past the grid): whose k, bound and
        verify shape a load at B reports."""
        return np.minimum(np.searchsorted(self.grid, B), self.grid.size - 1)


def curve(dep: Deployment, grid: np.ndarray, L: float, spec: bool, most: float = np.inf) -> Curve:
    """The decode step on the batch grid at context L; with speculation, tokens per step at most `most` (the decode
    tokens a request has left: a short output cannot take more per step than it has, found by review: an output of
    2 tokens was priced at 2.05x the plain TPOT)."""
    return Curve(grid, *_decode(dep, grid, L, spec, most))


def curve_with(dep: Deployment, c: Curve, L: float) -> Curve:
    """Curve `c`'s verify shapes priced at context L: the configuration a load runs with, at another stage of its
    requests (TPOT of the first and the last token). Re-choosing the depth there let a context where no shape fits
    take the fastest that does not (found by review: a last-token TPOT below the mean)."""
    if c.v is None:
        return curve(dep, c.grid, L, False)
    step, bound = np.empty_like(c.step), np.empty_like(c.bound)
    for v in set(c.v):
        j = np.array([n for n, u in enumerate(c.v) if u == v])
        st = spec_step(dep, v, c.grid[j], L)
        step[j], bound[j] = st.step_s, st.bound
    return replace(c, step=step, bound=bound)


@dataclass(frozen=True)
class Loop:
    """The closed loop of R running requests of one mode, as a function of its decode batch B (module docstring)."""

    mid: Curve
    pf: PromptSide
    w: Workload
    R: np.ndarray
    tokens_s: float
    osl: float

    def arrivals(self, n: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Prompts of the other slots per step of a decoding request whose steps carry n = step_batch(B, R)
        sequences: the n - 1 others finish tau / (osl - 1) requests each per step (each decodes its osl - 1 tokens
        after the first) and are replaced, (R - 1) B / R others' prompts over its (osl - 1) / tau steps; a request's
        own prompt is prefilled before it decodes, and the (R - 1)(1 - B / R) waiting beside it are in TTFT, so a
        lifetime holds R - 1 others' prompts (found by review: n (R - 1) / R had counted up to 2.4 prompts a lifetime
        for 2 slots, and throughput fell from 1 to 2 requests at 8192 / 2 tokens). With osl 1 no request decodes: no
        step carries a prompt, every prompt waits for a pass (ttft)."""
        if self.osl <= 1.0:
            return np.zeros(np.shape(n))
        return np.maximum(n - 1.0, 0.0) * tau / (self.osl - 1.0)

    def at(self, B: np.ndarray) -> tuple[np.ndarray, ...]:
        """(step, tau, k, bound, prompt load per step, T = step + load, TTFT) at decode batch B."""
        n = step_batch(B, self.R)                       # a step's sequences: B counts time when none decodes
        step, tau, k, bound = self.mid.at(n)
        load = prompt_load(self.pf, self.arrivals(n, tau), self.tokens_s)[0]
        T = step + load
        return step, tau, k, bound, load, T, ttft(self.pf, self.w, step, T, self.tokens_s, B, self.R,
                                                     self.osl > 1.0)

    def batch(self) -> np.ndarray:
        """B of Little's law on the decode stage, B = R (osl - 1) TPOT(B) / E2E(B), found on [0, R] (the right side is
        positive at B = 0 and at most R) by bisection's 48 halvings taken SECTION_BITS at a time: each round prices
        the 2^SECTION_BITS - 1 inner points of the bracket at once and walks the halvings through them, so where k
        "auto" gives several roots (a depth switch makes the tokens per step jump) it keeps the one bisection keeps
        (`batch_bisected`, the reference), in fewer passes. 0 at osl 1."""
        lo, hi = np.zeros(self.R.size), self.R.copy()
        if self.osl <= 1.0:
            return lo
        n = 2 ** SECTION_BITS
        j = np.arange(1.0, n)[:, None] / n
        cols = np.arange(self.R.size)
        for _ in range(48 // SECTION_BITS):
            B = lo + (hi - lo) * j
            _, tau, _, _, _, T, ttft = self.at(B)
            dec = (self.osl - 1.0) * T / tau
            up = B < self.R * dec / (ttft + dec)                 # (n - 1, R.size): below the root at each point
            a, b = np.zeros(self.R.size, dtype=int), np.full(self.R.size, n)
            for _ in range(SECTION_BITS):                        # the halvings, on the points already priced
                mid = (a + b) // 2
                u = up[mid - 1, cols]
                a, b = np.where(u, mid, a), np.where(u, b, mid)
            lo, hi = lo + (hi - lo) * a / n, lo + (hi - lo) * b / n
        return (lo + hi) / 2.0

    def batch_bisected(self) -> np.ndarray:
        """`batch` by 48 plain halvings of [0, R]: the reference its sections are checked against (tests,
        benchmarks/calibration_bench.py): one point per pass."""
        lo, hi = np.zeros(self.R.size), self.R.copy()
        if self.osl <= 1.0:
            return lo
        for _ in range(48):
            B = (lo + hi) / 2.0
            _, tau, _, _, _, T, ttft = self.at(B)
            dec = (self.osl - 1.0) * T / tau
            up = B < self.R * dec / (ttft + dec)
            lo, hi = np.where(up, B, lo), np.where(up, hi, B)
        return (lo + hi) / 2.0


def ttft(pf: PromptSide, w: Workload, step: np.ndarray, T: np.ndarray, tokens_s: float, B: np.ndarray,
          R: np.ndarray, decodes: bool) -> np.ndarray:
    """TTFT of the running requests (module docstring): the prefill instance's pass under disaggregation; else the
    prefill of its prompt with those of the (R - 1)(1 - B / R) other slots waiting for their first token beside it
    (each slot's prompt is prefilled once in a request's lifetime: the rest arrive while it decodes, in its steps'
    load), in passes as full as they fill (prompts.prefill_wait); where prompts do not mix into decode steps, after
    the rest of a step in flight where another slot decodes (each of the R - 1 others with probability B / R; on
    replicas that step apart, pf.apart, only one on its own replica's step: B / (R dp))."""
    if w.pd:
        return pf.pass_s * np.ones_like(T)
    waiting = 1.0 + np.maximum(R - 1.0, 0.0) * (1.0 - B / R)
    prefill = prefill_wait(pf, waiting, tokens_s, step, decodes)
    if not pf.alone_s:
        return prefill
    mine = B / R / (pf.ranks if pf.apart else 1.0)
    b = 1.0 - np.power(np.clip(1.0 - mine, 0.0, 1.0), np.maximum(R - 1.0, 0.0))
    return b * T / 2.0 + prefill


def fed_batch(mid: Curve, R: np.ndarray, osl: float, cap: float) -> np.ndarray:
    """The decode batch a prefill instance serving `cap` requests/s feeds (disaggregated, prefill-bound): B with
    B = cap x (osl - 1) TPOT(step_batch(B, R)) (Little's law on the decode stage; the other R - B requests queue for
    prefill, so TTFT = (R - B) / cap and E2E = R / cap). The right side rises slower than B (a step grows slower than
    its batch), so the root in (0, R] is found by bisection in log B: from three decades below the grid to R, a
    bracket under 40 wide that 48 halvings narrow below 1e-12."""
    lo, hi = np.full(R.shape, np.log(mid.grid[0] * 1e-3)), np.log(R)
    for _ in range(48):
        x = (lo + hi) / 2.0
        B = np.exp(x)
        step, tau = mid.at(step_batch(B, R))[:2]
        over = B > cap * (osl - 1) * step / tau
        lo, hi = np.where(over, lo, x), np.where(over, x, hi)
    return np.exp(hi)


__all__ = ["FED_FLOOR", "STEP_FLOOR", "Curve", "Loop", "batch_grid", "curve", "curve_with", "decode", "fed_batch",
           "step_batch", "ttft"]
