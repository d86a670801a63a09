"""Acceptance models: how many tokens one speculative step yields.

Symbols: k draft tokens per step (gamma in Leviathan et al.), alpha the per-token acceptance rate, tau the mean
acceptance length engines report (tokens per target step, bonus token included; SGLang/vLLM "accept length",
Spec-Bench "#Mean Accepted Tokens", the "Acceptance Rate" column of TensorRT-LLM's DeepSeek-R1 MTP table).

- i.i.d.:    E = (1 - alpha^(k+1)) / (1 - alpha)                 Leviathan et al. 2023, eq. 1 (bonus included)
- positional: E = 1 + sum_i prod_{j<=i} a_j, with a_j the rate at position j given positions < j were accepted
             (conditional rates; vLLM per-position acceptance metrics). Beyond the last given position the last rate
             repeats; that is the documented rule for a longer k.
- decay:     a_j = a_1 * d^(j-1), the conditional rate falling geometrically with draft position (d = 1 is i.i.d.);
             d per method is fitted on published tables of tau at several k (acceptance/decay.toml,
             tools/fit_acceptance_decay.py): a drafter conditioned on its own earlier guesses drifts (EAGLE-1
             d = 0.88, DeepSeek's one MTP module reused beyond depth 1 d = 0.71) or barely does (EAGLE-3 0.97).
- tau:       a_1 solved from E(a_1, d, k0) = tau (scipy brentq); other k follow the decay model (d = 1: i.i.d.).
- trees:     a backbone chain (the top-1 draft at each depth) with w_j - 1 sibling candidates at depth j, all children
             of the backbone node above. Depth j is reached only through the backbone (probability prod_{i<j} a_i),
             and one of its w_j candidates is accepted with 1 - (1 - a_j)^{w_j} (independent candidates):
             E = 1 + sum_j prod_{i<j} a_i * (1 - (1 - a_j)^{w_j}). A chain is w_j = 1. It is conservative next to
             dynamic trees that also expand siblings (EAGLE-2, Li et al. 2024b; Sequoia, Chen et al. 2024 §3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .errors import ScenarioError

ALPHA_MAX = 1.0 - 1e-12


def _check_alpha(alpha: float, what: str = "acceptance rate") -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not (0.0 <= alpha < 1.0):
        raise ScenarioError(f"{what} = {alpha!r}; expected a number in [0, 1)")
    return float(alpha)


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ScenarioError(f"k = {k!r}; expected an integer >= 0")
    return int(k)


def expected_tokens_iid(alpha, k):
    """Leviathan et al. 2023, eq. 1: expected tokens per step, (1 - alpha^(k+1)) / (1 - alpha); arrays broadcast."""
    a = np.asarray(alpha, dtype=np.float64)
    kk = np.asarray(k, dtype=np.float64)
    e = np.where(a == 0.0, 1.0, -np.expm1((kk + 1.0) * np.log(np.where(a > 0, a, 0.5))) / (1.0 - a))
    return np.clip(e, 1.0, kk + 1.0)   # the closed form lies in [1, k+1]; clip rounding (found by hypothesis)


def expected_tokens_positional(rates, k: int) -> float:
    """1 + sum_{i<=k} prod_{j<=i} a_j; positions past the given ones reuse the last rate."""
    r = np.asarray(rates, dtype=np.float64)
    if k == 0:
        return 1.0
    ext = np.concatenate([r, np.full(max(0, k - r.size), r[-1])])[:k]
    return float(1.0 + np.cumprod(ext).sum())


def depth_capacity(j: int, branching: int) -> int:
    """Most candidates a draft tree can keep at depth j (0-based) with frontier width `branching`: the first draft
    pass proposes `branching` tokens, every later one `branching` children for each of the `branching` frontier nodes
    (EAGLE-2 reranks all expanded nodes, Li et al. 2024b §4.2; SGLang's topk x topk candidates per step)."""
    return branching if j == 0 else branching * branching


def tree_widths(tree_tokens: int, depth: int, branching: int) -> list[int]:
    """Candidates kept at each depth of a draft tree of `tree_tokens` verified tokens (root included): a chain
    backbone of `depth` nodes, the remaining nodes added to the shallowest depths, at most `depth_capacity` per
    depth (EAGLE-2's reranked tree keeps its mass near the root, Li et al. 2024b §4)."""
    nodes = tree_tokens - 1
    d = min(depth, nodes)
    w = [1] * d
    extra = nodes - d
    for j in range(d):
        add = min(depth_capacity(j, branching) - 1, extra)
        w[j] += add
        extra -= add
    return w


def default_tree_branching(tree_tokens: int, depth: int) -> int:
    """Frontier width when a tree size is given without a branching: nodes spread evenly over the depths."""
    return max(1, math.ceil((tree_tokens - 1) / max(depth, 1)))


class Verify(NamedTuple):
    """The verify shape of one speculative step: draft depth k, tokens verified per sequence T (k + 1 for a chain,
    the tree size for a tree) and the tree's frontier width w (1 for a chain)."""

    k: int
    T: int
    w: int

    @property
    def is_chain(self) -> bool:
        return self.T == self.k + 1

    @property
    def widths(self) -> list[int]:
        return tree_widths(self.T, self.k, self.w)


def verify_shape(k: int, tree_tokens: int | None = None, tree_branching: int | None = None) -> Verify:
    """The one rule for a verify shape: a chain of k + 1 without a tree (or at k = 0, a plain one-token step), else
    the tree of `tree_tokens` with `tree_branching` candidates per depth (default: spread evenly over the depths)."""
    if tree_tokens is None or k == 0:
        return Verify(k, k + 1, 1)
    for name, v in (("tree_tokens", tree_tokens), ("tree_branching", tree_branching)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise ScenarioError(f"{name} = {v!r}; expected an integer >= 1")
    if tree_branching is not None:      # no more candidates per depth than the tree has draft tokens: a budget's
        return Verify(k, tree_tokens, min(tree_branching, max(tree_tokens - 1, 1)))   # smaller trees (k = "auto")
    return Verify(k, tree_tokens, default_tree_branching(tree_tokens, k))


def priced_shape(k: int, T: int, branching: int | None, auto: bool) -> Verify:
    """The verify shape priced for T tokens at depth k: a chain of k + 1, unless a fixed tree of k + 1 names a
    branching above 1 (SGLang's top-k 3 at 6 draft tokens verifies 6 tokens, but drafts 3 wide and runs the tree's
    attention path); under k = "auto" (`auto`) a k + 1 candidate is the chain and the branching shapes the trees."""
    if T == k + 1 and (auto or (branching or 1) == 1):
        return Verify(k, T, 1)
    return verify_shape(k, T, branching)


def tree_width(k: int, T: int, branching: int | None, auto: bool) -> int:
    """Widest level (top-k per depth) of the shape pricing runs (`priced_shape`): what an engine's topk must be set
    to; 1 for a chain. A fixed tree of k + 1 with a branching above 1 is as wide as its branching (found by review:
    the warnings and configs read it as a chain where pricing ran its tree). `auto` has no default: under k = "auto"
    the same (k, T) is a chain, so every caller says which it read (second review)."""
    return priced_shape(k, T, branching, auto).w


def check_branching(tree_tokens: int, tree_branching: int | None) -> None:
    """A tree's branching is at most its draft tokens, tree_tokens - 1 (found by review: 1000 candidates per depth
    on a tree of 9 draft tokens priced a 141 ms draft pass)."""
    top = max(tree_tokens - 1, 1)
    if tree_branching is not None and tree_branching > top:
        raise ScenarioError(f"tree_branching = {tree_branching} is more candidates per depth than the tree's "
                            f"{tree_tokens - 1} draft tokens (tree_tokens - 1); expected 1 to {top}")


def tree_holds(v: Verify) -> bool:
    """A tree of T tokens needs T - 1 draft nodes; depth k with frontier width w holds w + (k - 1) w^2
    (`depth_capacity`)."""
    return v.T - 1 <= sum(depth_capacity(j, v.w) for j in range(v.k))


def expected_tokens_tree(rate_at_depth, widths) -> float:
    """1 + sum_j prod_{i<j} a_i * (1 - (1 - a_j)^{w_j}) for per-depth rates a_j and widths w_j (backbone tree)."""
    a = np.asarray(rate_at_depth, dtype=np.float64)
    w = np.asarray(widths, dtype=np.float64)
    if w.size == 0:
        return 1.0
    reach = np.concatenate([[1.0], np.cumprod(a)[:-1]])
    return float(1.0 + (reach * (1.0 - (1.0 - a) ** w)).sum())


@dataclass(frozen=True, slots=True)
class Acceptance:
    """Acceptance model. Build with `from_rate`, `from_rates`, `from_length` or `from_measurement`.

    kind : "iid" | "positional" | "decay"; alpha : the i.i.d. rate, or the first position's; rates : per-position
    conditional rates; decay : d of the decay model (1: i.i.d.); source : how it was given (for reports), e.g.
    "tau 2.79 at k=3"; hold : under a rising decay (d > 1), the deepest position measured: deeper positions take its
    rate (0: none). A rate that rises with depth is data only as deep as it was measured (n-gram's d = 1.02 comes from
    tables to depth 23): grown past a tau measured at k = 3 it reached 1 - 1e-12 and a 34x speedup (found by review).
    """

    kind: str
    alpha: float = 0.0
    rates: tuple[float, ...] = ()
    source: str = ""
    decay: float = 1.0
    hold: int = 0

    def __post_init__(self) -> None:
        """Every field checked where it is set (the constructors, with_alpha, or by hand): no NaN reaches a result."""
        if self.kind not in ("iid", "positional", "decay"):
            raise ScenarioError(f"acceptance kind = {self.kind!r}; expected iid, positional or decay")
        _check_alpha(self.alpha)
        for r in self.rates:
            _check_alpha(r, "per-position acceptance rate")
        d = self.decay
        if isinstance(d, bool) or not isinstance(d, (int, float, np.floating)) or not (math.isfinite(d) and d > 0):
            raise ScenarioError(f"acceptance decay = {d!r}; expected a positive number")
        if isinstance(self.hold, bool) or not isinstance(self.hold, (int, np.integer)) or self.hold < 0:
            raise ScenarioError(f"acceptance hold = {self.hold!r}; expected a position >= 0 (0: none)")

    @property
    def model(self) -> str:
        """Which model extrapolates to other depths k (for reports)."""
        if self.kind == "decay":
            held = f", held beyond position {self.hold}" if self.held else ""
            return f"per-position decay d = {self.decay:g} (a_j = a_1 d^(j-1){held})"
        return {"iid": "i.i.d. (Leviathan et al. 2023 eq. 1)",
                "positional": "given per-position rates, the last one repeated"}[self.kind]

    @classmethod
    def from_rate(cls, alpha: float) -> Acceptance:
        return cls("iid", alpha=_check_alpha(alpha), source=f"alpha {alpha:g}")

    @classmethod
    def from_rates(cls, rates) -> Acceptance:
        if isinstance(rates, (str, bytes)) or not isinstance(rates, (list, tuple, np.ndarray)):
            raise ScenarioError(f"per-position acceptance rates = {rates!r}; expected a list of rates in [0, 1)")
        rs = tuple(float(_check_alpha(r, "per-position acceptance rate")) for r in rates)
        if not rs:
            raise ScenarioError("per-position acceptance rates: expected at least one rate")
        return cls("positional", rates=rs, alpha=rs[0], source="rates " + ",".join(f"{r:g}" for r in rs))

    @classmethod
    def from_length(cls, tau: float, k: int, decay: float = 1.0) -> Acceptance:
        """Invert tau = E(a_1, d, k) for the first-position rate a_1 (d = `decay`; d = 1 is the i.i.d. alpha).
        tau must be below k + 1: k + 1 would need every draft accepted (a rate of 1), which no rate is. The CLI's
        --acceptance-length and the sweep pass the method's fitted decay (`simulator.default_decay(method)`)."""
        k = _check_k(k)
        if k == 0:
            raise ScenarioError("an acceptance length needs the k it was measured at (k >= 1)")
        if isinstance(tau, bool) or not isinstance(tau, (int, float, np.number)) or not (1.0 <= tau < k + 1):
            raise ScenarioError(f"acceptance length tau = {tau!r}; expected a number in [1, k+1) = [1, {k + 1}) "
                                f"for k = {k} (k + 1 would mean every draft is always accepted)")
        d = _check_decay(decay)
        E = lambda x, dd: cls("decay", alpha=x, decay=dd).expected_tokens(k)  # noqa: E731
        return cls._reach(E, lambda x: float(expected_tokens_iid(x, k)), tau, d, f"tau {tau:g} at k={k}", k)

    @classmethod
    def _reach(cls, E, E_iid, tau: float, d: float, src: str, depth: int) -> Acceptance:
        """The first-position rate that reproduces a measured tau at its own shape under decay d (E(rate, d): the
        tokens per step there; E_iid(rate) the i.i.d. ones). Past what d reaches (every rate below 1 gives fewer
        tokens), the decay is raised instead, with the rate at its ceiling: the smallest d' >= d that reaches tau,
        continuous in tau at the edge, so other depths k move smoothly with it (the source says so). A rising rate is
        held beyond the measured `depth` (Acceptance.hold)."""
        if d == 1.0:
            return cls("iid", alpha=_solve(lambda x: E_iid(x) - tau, tau), source=src)
        if E(ALPHA_MAX, d) >= tau:
            return cls("decay", alpha=_solve(lambda x: E(x, d) - tau, tau), decay=d, source=src, hold=depth)
        from scipy.optimize import brentq  # lazy, as in _solve
        top = max(d, 1.0)
        d2 = top if E(ALPHA_MAX, top) <= tau else float(brentq(lambda dd: E(ALPHA_MAX, dd) - tau, d, top,
                                                                xtol=1e-14, rtol=1e-14))
        note = f" (above the {E(ALPHA_MAX, d):.3f} that decay {d:g} reaches: decay {d2:.4g})" if d2 > d else ""
        return cls("decay", alpha=ALPHA_MAX, decay=d2, source=src + note, hold=depth)

    @classmethod
    def from_tree_length(cls, tau: float, widths, decay: float = 1.0) -> Acceptance:
        """Invert a tree's mean acceptance length for the first-position rate (per-depth candidates accepted with
        1 - (1 - a_j)^{w_j}, a_j = a_1 d^(j-1))."""
        w = list(widths) if isinstance(widths, (list, tuple, np.ndarray)) else None
        if not w or any(isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1 for x in w):
            raise ScenarioError(f"tree widths = {widths!r}; expected a list of candidates per depth, each >= 1")
        top = 1.0 + len(w)
        if isinstance(tau, bool) or not isinstance(tau, (int, float, np.floating)) or not (1.0 <= tau < top):
            raise ScenarioError(f"tree acceptance length tau = {tau!r}; expected a number in [1, {top:g}) "
                                f"for a tree of depth {len(w)}")
        d = _check_decay(decay)
        E = lambda x, dd: cls("decay", alpha=x, decay=dd).expected_tokens_tree(w)  # noqa: E731
        E_iid = lambda x: cls("iid", alpha=x).expected_tokens_tree(w)  # noqa: E731
        return cls._reach(E, E_iid, tau, d, f"tree tau {tau:g} over widths {w}", len(w))

    @classmethod
    def from_measurement(cls, tau: float, k: int, tree_tokens: int | None = None,
                         tree_branching: int | None = None, decay: float = 1.0) -> Acceptance:
        """A mean acceptance length measured at depth k: on a chain of k + 1, or on the tree the run verified."""
        v = verify_shape(_check_k(k), tree_tokens, tree_branching)
        return cls.from_length(tau, k, decay) if v.is_chain else cls.from_tree_length(tau, v.widths, decay)

    def rate(self, position: int) -> float:
        """Conditional rate at 1-based `position`."""
        if self.kind == "positional":
            return self.rates[min(position, len(self.rates)) - 1]
        if self.kind == "decay":
            j = min(position, self.hold) if self.held else position
            return min(self.alpha * self.decay ** (j - 1), ALPHA_MAX)
        return self.alpha

    @property
    def held(self) -> bool:
        """Whether a rising rate stops at `hold` (decay above 1 and a measured depth)."""
        return self.kind == "decay" and self.decay > 1.0 and self.hold > 0

    def beyond(self, depth: int) -> str:
        """'' when per-position rates cover draft positions 1..depth (or the model is not positional), else which
        positions the documented rule prices with the last given rate: what a report must say it extrapolated."""
        if self.held and depth > self.hold:
            where = f"position {depth}" if depth == self.hold + 1 else f"positions {self.hold + 1}-{depth}"
            return (f"a rate rising with depth (decay {self.decay:g}) is measured to position {self.hold} only; "
                    f"{where} take its rate, {self.rate(self.hold):.3g}")
        n = len(self.rates)
        if self.kind != "positional" or depth <= n:
            return ""
        where = f"position {n + 1} repeats" if depth == n + 1 else f"positions {n + 1}-{depth} repeat"
        return f"rates are given for positions 1-{n} only; {where} the last one, {self.rates[-1]:g}"

    def expected_tokens(self, k: int) -> float:
        """Tokens per step of a chain of k drafts, bonus token included."""
        k = _check_k(k)
        if self.kind == "positional":
            return expected_tokens_positional(self.rates, k)
        if self.kind == "decay":
            return expected_tokens_positional([self.rate(j) for j in range(1, k + 1)] or [0.0], k)
        return float(expected_tokens_iid(self.alpha, k))

    def expected_tokens_tree(self, widths) -> float:
        return expected_tokens_tree([self.rate(j + 1) for j in range(len(widths))], widths)

    def tokens(self, v: Verify) -> float:
        """Tokens per step for a verify shape: the chain formula when T = k + 1, else the tree's."""
        if v.is_chain:
            return self.expected_tokens(v.k)
        return self.expected_tokens_tree(v.widths)

    def with_alpha(self, alpha: float) -> Acceptance:
        """Same shape, scaled so the first-position rate is `alpha` (used for break-even searches)."""
        if self.kind == "positional" and self.rates[0] > 0:
            s = alpha / self.rates[0]
            return Acceptance("positional", alpha=alpha, rates=tuple(min(ALPHA_MAX, r * s) for r in self.rates))
        if self.kind == "decay":
            return Acceptance("decay", alpha=alpha, decay=self.decay, hold=self.hold)
        return Acceptance("iid", alpha=alpha)


def extrapolation_note(acc: Acceptance, what: str, xs, ks, ok) -> tuple[str, ...]:
    """A report's note when some of its feasible points (batch or concurrency xs, depth ks, feasible ok) draft
    deeper than the per-position rates given (`Acceptance.beyond`); () when none does."""
    pts = [(int(x), int(k)) for x, k, f in zip(xs, ks, ok) if f]
    deep = [(x, k) for x, k in pts if acc.beyond(k)]
    if not deep:
        return ()
    used = sorted({k for _, k in deep})
    at = f"every {what} reported" if len(deep) == len(pts) else f"{what} {', '.join(str(x) for x, _ in deep)}"
    return (f"acceptance extrapolated: {acc.beyond(used[-1])}, at k {', '.join(map(str, used))} ({at})",)


def _check_decay(d: float) -> float:
    if isinstance(d, bool) or not isinstance(d, (int, float, np.floating)) or not 0.0 < d <= 1.5:
        raise ScenarioError(f"acceptance decay = {d!r}; expected a number in (0, 1.5]")
    return float(d)


def _solve(f, tau: float) -> float:
    """The rate in [0, ALPHA_MAX) where the increasing f crosses 0 (tau reached), ALPHA_MAX when it never does."""
    from scipy.optimize import brentq  # lazy: keeps `import simulator` fast (warm start of batch jobs)
    if tau == 1.0:
        return 0.0
    if f(ALPHA_MAX) <= 0:
        return ALPHA_MAX
    return float(brentq(f, 0.0, ALPHA_MAX, xtol=1e-14, rtol=1e-14))
