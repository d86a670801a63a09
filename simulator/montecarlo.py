"""Monte Carlo check of the acceptance closed forms: a numba kernel over pre-drawn uniforms (QuantEcon pattern), so
it is deterministic and comparable to `acceptance.expected_tokens_positional`. A kernel module (numba lives only in
kernel modules; _jit.py holds their one jit policy)."""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import JIT


@nb.njit(**JIT)
def _mc_accept(u, rates, out):
    """Monte Carlo tokens per step: trial t accepts positions while u[t, j] < rates[j]; +1 bonus token.

    `u` are pre-drawn uniforms (n_trials, k) from the caller's generator, so the kernel is deterministic."""
    n, k = u.shape
    for t in range(n):
        acc = 0
        for j in range(k):
            if u[t, j] < rates[j]:
                acc += 1
            else:
                break
        out[t] = acc + 1.0


def monte_carlo_tokens(rates, n_trials: int, seed: int = 0) -> np.ndarray:
    """Per-trial tokens per step for a chain with per-position conditional `rates` (numba kernel)."""
    r = np.ascontiguousarray(rates, dtype=np.float64)
    u = np.random.default_rng(seed).random((n_trials, r.size))
    out = np.empty(n_trials)
    _mc_accept(u, r, out)
    return out
