"""Does routing that is not uniform remove the predicted rise of DeepSeek-R1 MTP speedups toward 64 requests?

    python tools/routing_sensitivity.py

A two-term model of a decode step on 8x H200 (TP8, SGLang), least-squares fitted to InferenceX's measured plain TPOT
(rows V242, D095-D098: 9.7, 12.8, 17.2, 25.6, 34.6 ms at 4-64 requests): step = a + b x the touched fraction of the
256 routed experts (top-8), a fixed part and the time to read every expert. The speculative step (MTP, k = 2: 3 tokens
per sequence verified) is the same step at the verify's token count plus 1.5 ms of draft passes (specroof's priced MTP
draft passes at 64 sequences: 1.58 ms, `specroof curve --hardware h200-sxm --model deepseek-r1 --tp 8 --method mtp
--precision fp8 --k 2`) and 0.5 ms of bookkeeping (SGLang's sourced prior, PR #11398), and speedup = tau x plain /
speculative at one acceptance length (2.05: the level specroof's priced steps need to meet InferenceX's 1-16-request
H200 runs, README "Curve shape, held out"). The two terms are fitted afresh for each popularity model. Two departures
from uniform top-k routing are tried, alone and together:

  skew         expert popularity p_e = (k / E) X with X ~ Gamma(kappa, 1 / kappa) (mean 1, coefficient of variation
               1 / sqrt(kappa)): touched fraction 1 - E[(1 - p)^T] ~= 1 - (1 + T k / (E kappa))^-kappa
  correlation  the q tokens of one sequence act as 1 + c (q - 1) independent ones: c = SEQ_ROUTING_RHO (0.71, priced
               since 2026-12-07: Cohere's measured union over its independent baseline, simulator/experts.py) and
               c = 0.5 (Cohere's 2.5x unique experts for 4 tokens of one sequence against one token, skew included;
               vLLM RFC #46295 measured 3.2x at K = 4)

Every variant still rises from 8 to 64 sequences (README "Curve shape, held out"): the plain step saturates (all
experts read by 64 sequences), and a verify pass cannot read more than all of them.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.experts import SEQ_ROUTING_RHO, experts_touched_fraction, routed_tokens  # noqa: E402

E, K, Q, TAU = 256, 8, 3, 2.05
DRAFT_S, BOOK_S = 1.5e-3, 0.5e-3
BATCH = np.array([1, 2, 4, 8, 16, 32, 64])
MEASURED = (np.array([4, 8, 16, 32, 64]), np.array([9.7, 12.8, 17.2, 25.6, 34.6]) * 1e-3)   # V242, D095-D098


def touched(tokens: np.ndarray, kappa: float | None) -> np.ndarray:
    """Expected touched fraction of the routed experts for `tokens` independent tokens (kappa None: uniform top-k,
    simulator.experts; else gamma-distributed popularity, E[1 - (1 - p)^T] ~= 1 - (1 + T k / (E kappa))^-kappa)."""
    if kappa is None:
        return experts_touched_fraction(tokens, E, K)
    return 1.0 - (1.0 + np.asarray(tokens, dtype=np.float64) * K / E / kappa) ** -kappa


def fit(kappa: float | None) -> tuple[float, float]:
    """a (fixed) and b (every expert read), least squares on the measured plain steps."""
    b_, t = MEASURED
    a, b = np.linalg.lstsq(np.stack([np.ones(b_.size), touched(b_, kappa)], axis=1), t, rcond=None)[0]
    return float(a), float(b)


def speedups(kappa: float | None, c: float) -> np.ndarray:
    a, b = fit(kappa)
    plain = a + b * touched(BATCH, kappa)
    spec = a + b * touched(routed_tokens(BATCH, Q, c), kappa) + DRAFT_S + BOOK_S
    return TAU * plain / spec


def main() -> None:
    print("popularity       correlation  fixed   experts  " + "  ".join(f"B={b:<3d}" for b in BATCH) + "  8->64")
    for kappa in (None, 4.0, 2.0, 1.0):
        for c in (1.0, SEQ_ROUTING_RHO, 0.5):
            s, (a, b) = speedups(kappa, c), fit(kappa)
            name = "uniform" if kappa is None else f"gamma cv {1 / np.sqrt(kappa):.2f}"
            print(f"{name:<16} c = {c:<8.2f} {a * 1e3:5.2f}ms {b * 1e3:5.1f}ms  " + "  ".join(f"{x:5.2f}" for x in s)
                  + f"  {s[-1] / s[3] - 1:+.0%}")


if __name__ == "__main__":
    main()
