"""Does routing that is not uniform remove the predicted rise of DeepSeek-R1 MTP speedups toward 64 requests?

    python tools/routing_sensitivity.py

A two-term model of a decode step on 8x H200 (TP8, SGLang), fitted to InferenceX's measured plain TPOT (rows D095-D098,
V242: 9.7, 12.8, 17.2, 25.6, 34.6 ms at 4-64 requests): step = 5.75 ms fixed + 33.2 ms x the touched fraction of the
256 routed experts (top-8). The speculative step (MTP, k = 2: 3 tokens per sequence verified) is the same step at the
verify's token count plus 1.5 ms of draft passes and 0.5 ms of bookkeeping, and speedup = tau x plain / speculative
at one acceptance length (2.05, what the 1-16-request runs imply). Two departures from uniform top-k routing are
tried, alone and together:

  skew         expert popularity p_e = (k / E) X with X ~ Gamma(kappa, 1 / kappa) (mean 1, coefficient of variation
               1 / sqrt(kappa)): touched fraction 1 - E[(1 - p)^T] ~= 1 - (1 + T k / (E kappa))^-kappa
  correlation  the q tokens of one sequence act as 1 + c (q - 1) independent ones (c = 0.5: Cohere's 2.5x unique
               experts for 4 tokens of one sequence; vLLM RFC #46295 measured 3.2x at K = 4)

Every variant still rises from 8 to 64 sequences (README "Curve shape, held out"): the plain step saturates (all
experts read by 64 sequences), and a verify pass cannot read more than all of them.
"""

import numpy as np

E, K, Q, TAU = 256, 8, 3, 2.05
FIXED_S, EXPERTS_S, DRAFT_S, BOOK_S = 5.75e-3, 33.2e-3, 1.5e-3, 0.5e-3
BATCH = np.array([1, 2, 4, 8, 16, 32, 64])


def touched(tokens: np.ndarray, kappa: float | None) -> np.ndarray:
    """Expected touched fraction of the routed experts for `tokens` independent tokens (kappa None: uniform)."""
    p = K / E
    if kappa is None:
        return 1.0 - (1.0 - p) ** tokens
    return 1.0 - (1.0 + tokens * p / kappa) ** -kappa


def speedups(kappa: float | None, c: float) -> np.ndarray:
    plain = FIXED_S + EXPERTS_S * touched(BATCH, kappa)
    spec = FIXED_S + EXPERTS_S * touched((1.0 + c * (Q - 1)) * BATCH, kappa) + DRAFT_S + BOOK_S
    return TAU * plain / spec


def main() -> None:
    print("popularity          correlation  " + "  ".join(f"B={b:<3d}" for b in BATCH) + "  8->64")
    for kappa in (None, 4.0, 2.0, 1.0):
        for c in (1.0, 0.5):
            s = speedups(kappa, c)
            name = "uniform" if kappa is None else f"gamma cv {1 / np.sqrt(kappa):.2f}"
            print(f"{name:<19} c = {c:<8.1f} " + "  ".join(f"{x:5.2f}" for x in s) + f"  {s[-1] / s[3] - 1:+.0%}")


if __name__ == "__main__":
    main()
