"""The busiest rank, which sets a step: under uniform top-k routing (a sequence's q tokens counted as fewer independent
ones, `routed_tokens`) the share of experts a batch touches and the busiest expert-parallel rank's share (what a rank
must read), and the sequences the busiest data-parallel rank or pipeline micro-batch processes. Pure numpy; the numba
kernel in roofline.py evaluates the same."""

from __future__ import annotations

import functools
import math

import numpy as np

# Consecutive tokens of one sequence route to overlapping experts (temporal locality), so the q tokens a sequence
# brings to one pass (a verify of k + 1 draft tokens, a prefill chunk) touch fewer experts than q independent tokens.
# Priced as b (1 + rho (q - 1)) independent tokens (`routed_tokens`), rho derived, not fitted, from Cohere's
# measurement on a production MoE of 128 experts, top-8, under vLLM (https://cohere.com/blog/mixture-of-experts-models-
# get-more-from-speculative-decoding, 2026-04; its figures as quoted by a note citing it, the page itself not read):
# a verify of K = 3 drafts (4 tokens of one sequence) touches 20.36 distinct experts where 4 tokens drawn
# independently from the same (skewed) routing touch 25.4, a ratio of 0.80; applied to the uniform model's 29.12 that
# is 23.34 experts, 3.12 independent tokens, rho = 0.707. Its lag-1 overlap, 38.1 % of a token's experts also chosen
# by the previous token against 11.8 % for independent tokens, gives the same: 16 - 8 (0.0625 + 0.263) = 13.40
# experts for 2 tokens, 1.71 independent tokens, rho = 0.713 (the overlap stays 37.7-38.5 % over 13 Spec-Bench
# categories and 38 % over 7 languages; 30 % at lags 3-4). GLM-4.7-Flash (64 experts, top-4; mlx-lm PR #1485,
# https://github.com/ml-explore/mlx-lm/pull/1485, 2026-07) shares 25.7 % of its top-4 between consecutive decode
# positions against 6.25 % by chance: rho = 0.79 against uniform, skew included, so at least 0.79 for the correlation
# alone, a weaker locality than Cohere's; an oMLX thread states that GLM-5.2 (256 experts, DeepSeek-like) shares almost
# none (https://github.com/jundot/omlx/issues/2077, a statement, not a count). Other counts, each against uniform
# chance (skew included), from engine PRs: Qwen3-30B-A3B repeats 45 % of its experts at the next token (rho 0.58;
# https://github.com/kekzl/imp/pull/1359, 3 prompts x 512 tokens, reuse reaching further back than one token);
# gpt-oss-20b's 8-token verify touches about 13 experts where 21 are uniform (rho 0.42;
# https://github.com/aws-neuron/nkipy/pull/63); none found for DeepSeek-V3/R1, Kimi-K2 or Qwen3-235B. The popularity
# skew the independent baseline carries is not priced (tokens of different sequences stay uniform): rho is the
# correlation alone. rho = 1 is the uniform model. Assumptions: one value for every MoE target, whatever its experts,
# top-k or group-limited routing (Cohere's model is the only one counted at a verify's shape against its independent
# baseline); measured on chains of q <= 4 (the overlap falls from 38 % at lag 1 to 30 % at lags 3-4) and applied to
# longer chains, to the siblings of a tree and to prefill chunks; the busiest-rank tables (below) draw a rank's experts
# from i.i.d. tokens, so under EP or group-limited routing the locality's tokens, which share groups, make the busiest
# rank busier than priced.
SEQ_ROUTING_RHO = 0.71


def routed_tokens(b, q, rho: float = SEQ_ROUTING_RHO):
    """Independent tokens whose uniform routing touches as many experts as b sequences of q consecutive tokens each:
    b (1 + rho (q - 1)) (see SEQ_ROUTING_RHO; b q at rho = 1; q below one token is taken as independent)."""
    b, q = np.asarray(b, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return b * np.where(q > 1.0, 1.0 + rho * (q - 1.0), q)


def experts_touched_fraction(n_tokens: np.ndarray | float, n_experts: float, top_k: float) -> np.ndarray:
    """E[distinct experts]/E for N tokens each routed to k of E experts uniformly: 1 - (1 - k/E)^N.

    (Each expert is missed by one token with probability 1 - k/E; vLLM RFC #46295 measures this growth.)
    """
    n = np.asarray(n_tokens, dtype=np.float64)
    if top_k < n_experts:
        return -np.expm1(n * math.log1p(-top_k / n_experts))
    return np.where(n > 0, 1.0, 0.0)   # every expert routed: all touched by any token, none by zero tokens


def busiest_rank_table(E: int, R: int) -> np.ndarray:
    """tab[D] = E[max over R ranks of the touched experts a rank holds] / (E/R), given D touched experts out of E
    spread evenly over R ranks of E/R each.

    By symmetry the touched set is a uniformly random D-subset, so the per-rank counts are multivariate
    hypergeometric and P(max <= m) = [x^D] (sum_{j<=m} C(n, j) x^j)^R / C(E, D) (n = E/R), exact in integers;
    E[max] = sum_{m=0}^{n-1} 1 - P(max <= m). With one rank the fraction is D/E. Pricing evaluates the table at the
    expected D = E u (linear interpolation), within about 1.5 % of a Monte Carlo of exact top-k routing for E >= 32
    (tests/test_workload.py)."""
    n = E // R
    if R <= 1:
        return np.arange(E + 1) / max(E, 1)
    if E > 1000:   # C(E, D) would overflow float64 (C(1030, 515) > 1e308): exact integers
        return _busiest_rank_table_int(E, R)
    ce = np.array([float(math.comb(E, d)) for d in range(E + 1)])
    emax = np.zeros(E + 1)
    for m in range(n):
        base = np.array([float(math.comb(n, j)) for j in range(m + 1)])
        poly = np.ones(1)
        for _ in range(R):
            poly = np.convolve(poly, base)[:E + 1]
        coef = np.zeros(E + 1)
        coef[:poly.size] = poly
        emax += 1.0 - coef / ce
    return emax / n


def _busiest_rank_table_int(E: int, R: int) -> np.ndarray:
    """busiest_rank_table in exact integers (slow; for E > 1000)."""
    n = E // R
    ce = [math.comb(E, d) for d in range(E + 1)]
    emax = np.zeros(E + 1)
    for m in range(n):
        base = [math.comb(n, j) for j in range(m + 1)]
        poly = [1]
        for _ in range(R):
            poly = [sum(poly[i] * base[d - i] for i in range(max(0, d - m), min(d, len(poly) - 1) + 1))
                    for d in range(min(len(poly) + m, E + 1))]
        emax += [1.0 - (poly[d] / ce[d] if d < len(poly) else 0.0) for d in range(E + 1)]
    return emax / n


def grouped_busiest_rank_table(E: int, R: int, k: int, g: int, tg: int) -> np.ndarray:
    """`busiest_rank_table` under DeepSeek's group-limited routing (DeepseekV3TopkRouter; DeepSeek-V3 tech report
    §2.1.2, node-limited routing): a token scores every expert, takes the tg of g equal groups whose two best scores
    sum highest, and its k best experts inside them; on R ranks holding E / R consecutive experts each (the engines'
    placement without EPLB) its experts sit on few ranks, so the busiest rank holds more of the touched experts than
    uniform routing gives at the same count D (DeepSeek-V3 at EP8: 1.17x at one token, 1.07x at 8, 1.01x at 64).
    Scores are drawn i.i.d. per token (random routing, as the uniform table assumes): every expert keeps probability
    k / E, so D at T tokens is E u (experts_touched_fraction) as before. No closed form: a seeded Monte Carlo
    (`_grouped_monte_carlo`), tab[D] read off its mean D and mean busiest share token by token, 1 at D = E. The uniform
    table where the groups do not constrain (g <= 1 or tg >= g), one rank holds everything, or the groups cannot run."""
    if g <= 1 or tg >= g or R <= 1 or E % g or tg * (E // g) < k or E % R:
        return busiest_rank_table(E, R)
    return _grouped_monte_carlo(int(E), int(R), int(k), int(g), int(tg)).copy()


@functools.cache
def _grouped_monte_carlo(E: int, R: int, k: int, g: int, tg: int, seed: int = 0) -> np.ndarray:
    """The table of `grouped_busiest_rank_table` (cached: a pure function of its arguments; about a second at E = 256,
    the routings fewer as E grows so that the work stays near E = 256's)."""
    rng, trials = np.random.default_rng(seed), max(100, 256_000 // E)
    s, n = E // g, E // R
    touched = np.zeros((trials, E), dtype=bool)
    per = np.zeros((trials, R), dtype=np.int64)
    rank_of, rows = np.arange(E) // n, np.arange(trials)[:, None]
    D, busiest = [0.0], [0.0]
    for _ in range(50 * E // k + 1):
        sc = rng.random((trials, g, s))
        top2 = np.partition(sc, s - 2, axis=2)[:, :, s - 2:].sum(axis=2)          # a group's two best scores
        kept = np.zeros((trials, g), dtype=bool)
        np.put_along_axis(kept, np.argpartition(-top2, tg - 1, axis=1)[:, :tg], True, axis=1)
        keys = np.where(kept[:, :, None], sc, -1.0).reshape(trials, E)
        ex = np.argpartition(-keys, k - 1, axis=1)[:, :k]
        new = ~touched[rows, ex]
        touched[rows, ex] = True
        np.add.at(per, (np.broadcast_to(rows, ex.shape)[new], rank_of[ex[new]]), 1)
        D.append(touched.sum() / trials)
        busiest.append(per.max(axis=1).mean() / n)
        if D[-1] >= E - 0.25:
            break
    return np.interp(np.arange(E + 1), np.array(D + [float(E)]), np.array(busiest + [1.0]))


def busiest_rank_fraction(u: np.ndarray | float, table: np.ndarray) -> np.ndarray:
    """The busiest rank's touched fraction at touched fraction u of all experts: `table` (busiest_rank_table) at
    D = E u, interpolated linearly."""
    E = table.size - 1
    return np.interp(np.asarray(u, dtype=np.float64) * E, np.arange(E + 1), table)


def dealt(B, n: int):
    """Sequences the busiest of n ranks holds when B whole sequences are dealt out evenly (SGLang's DP controller
    deals requests round robin by default: server_args.py load_balance_method, "auto" resolving to round robin
    outside prefill-decode disaggregation): ceil(B / n) at whole B (12 on 8 ranks: 2, not the mean 1.5), linear
    between whole B (serving's mean concurrency, where it is a lower bound: ranks drift apart as requests finish), so
    B itself below one sequence."""
    B = np.asarray(B, dtype=np.float64)
    if n <= 1:
        return B
    lo = np.floor(B)
    c = np.ceil(lo / n)
    return c + (B - lo) * (np.ceil((lo + 1.0) / n) - c)


def rank_batch(B, dp: int = 1, pp: int = 1, attention: bool = True):
    """Sequences one op processes in one pipeline micro-batch. On the attention side, the busiest attention-DP
    rank's: dealt(B, dp) / pp, at least min(B, 1) (the rank holding the one sequence of B = 1 reads its whole KV
    cache and runs every layer it owns; a single token crosses every pipeline stage in turn; micro-batches are priced
    at their mean, as a stage's cycle sums them). Elsewhere (an op of share 1, such as the routed experts, which every
    rank's tokens reach), the dp ranks' micro-batches together, at most B: one sequence on each of 8 DP ranks with
    pp = 2 is one micro-batch of 8 tokens, not B / pp = 4."""
    b = dealt(B, dp) / pp
    b = np.maximum(b, np.minimum(B, 1.0)) if pp > 1 else b
    return b if attention else np.minimum(np.asarray(B, dtype=np.float64), dp * b)


def head_runs(B, dp: int = 1, pp: int = 1, full: float | None = None):
    """Times an op counts in a decode step with m = dealt(B, dp) micro-batches in flight on pp stages (GPipe, Huang
    et al. 2019), as a multiple of its count on one micro-batch's path; `full`: the multiple once the pipeline is
    full (pipeline.cycle_runs; default pp, a head op of the end stages). A step is the longer of one micro-batch's
    critical path, every stage's layers L plus the head H once, and the slowest stage's cycle, pp (its layers + H):
    the path while a stage waits (m < pp: H once, as (m - 1) H <= (pp - m) L / pp when the head is light beside a
    stage's layers), the cycle once the pipeline is full (m = pp); linear between pp - 1 and pp, so that a step
    stays affine in every op's time (pricing.price_pass relies on it). A head heavy beside a stage breaks the
    condition: Llama-3.1-8B on 8 H100 stages at B = 7 is priced 7.4 ms under the vLLM profile, 16 % under its last
    stage's 8.9 ms cycle (5.7 against 7.2 ms, 21 %, at the ideal engine)."""
    full = float(pp) if full is None else full
    return 1.0 + (full - 1.0) * np.clip(dealt(B, dp) - (pp - 1.0), 0.0, 1.0)


__all__ = ["busiest_rank_fraction", "busiest_rank_table", "dealt", "experts_touched_fraction",
           "grouped_busiest_rank_table", "head_runs", "rank_batch"]
