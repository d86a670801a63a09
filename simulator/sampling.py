"""Top-k / top-p filtering of the sampled rows: the time a request that sets top_p < 1 or a top_k adds to a step.

Every forward pass already carries the sampler's two fp32 passes over the vocabulary (workload.SAMPLER_BYTES_PER_VOCAB:
softmax and the draw). A filtered request makes the engine mask each of its logits rows first, and that costs what its
kernel costs, not what the bytes do:

    filter_s = rows x vocabulary x s_per_entry        rows: one per sequence on a plain step, T on a verify pass
                                                      (the busiest attention-DP rank's sequences: experts.dealt)

A plain step samples one row per sequence; a rejection sampler filters every verified row it compares against the
drafts (SGLang's verify renormalises all T rows of a sequence with top_k_renorm_prob / top_p_renorm_prob; vLLM's
rejection_sampler.apply_sampling_constraints filters the B x k draft rows, and its bonus row goes through the plain
sampler: `bonus_row_plain`). Greedy requests (temperature 0) are argmax and mask nothing: `sampling = "greedy"`, the
default, prices no filter.

The seconds per entry are an engine's kernel, measured (engine profile [sampling]): PyTorch's fallback sorts the whole
vocabulary per row, Triton's pivot search and FlashInfer's fused filter-and-draw do not (vLLM PR #40376's table, one
B200, 512 rows x 131072 entries: 6.150, 2.013 and 0.372 ms). The figures of one device are used for every device (an
estimate: no table times the kernels elsewhere). An engine's build dated in its sort window ran the full sort on
plain steps, and on verify passes too before `sort_until` (`TopPFilter.dated`, validation's rows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .data import MONTH_RE, check_fields, figure
from .errors import ScenarioError, SpecError

SAMPLING = ("greedy", "top-p")
_KEYS = ("plain_filter_s_per_entry", "verify_filter_s_per_entry", "sort_s_per_entry")
_MONTHS = ("plain_sort_from", "sort_until")


def check_sampling(name: str, v: Any) -> str:
    """A sampling value normalized ('Top-P' is top-p), or a ScenarioError naming `name`, the value and the choices: the
    one check of the Scenario field, the command line's --sampling and a validation row's column."""
    key = v.strip().lower() if isinstance(v, str) else v
    if key not in SAMPLING:
        raise ScenarioError(f"{name} = {v!r}; expected one of {', '.join(SAMPLING)} (greedy: temperature 0; top-p: "
                            "a top_p below 1 or a top_k)")
    return key


@dataclass(frozen=True, slots=True)
class TopPFilter:
    """An engine's top-k / top-p filter, seconds per row and vocabulary entry: on a plain step's sampled rows
    (`plain_s`), on a verify pass's rows (`verify_s`), and a full-vocabulary sort's (`sort_s`), which builds dated from
    `plain_sort_from` to before `sort_until` ran on plain steps and every build before `sort_until` on verify passes
    ('' : no window); `bonus_plain`: a verify pass's last row a sequence (the bonus token) is sampled by the plain
    sampler, at `plain_s` (vLLM)."""

    plain_s: float = 0.0
    verify_s: float = 0.0
    sort_s: float = 0.0
    plain_sort_from: str = ""
    sort_until: str = ""
    bonus_plain: bool = False

    def dated(self, month: str) -> TopPFilter:
        """The filter a build of `month` ("YYYY-MM") ran: the sort where its window covers the month."""
        if not month or not self.sort_until or month >= self.sort_until:
            return self
        plain = self.sort_s if self.plain_sort_from and month >= self.plain_sort_from else self.plain_s
        return replace(self, plain_s=plain, verify_s=self.sort_s)


def filter_s(f: TopPFilter, sampling: str, seqs: Any, vocab: int, q: float = 1.0, verify: bool = False) -> np.ndarray:
    """Seconds the filter adds over `seqs` sequences of q sampled rows each: rows x vocab x the engine's per-entry
    time, a verify pass's rows at verify_s (its bonus row at plain_s where `bonus_plain`), else plain_s; 0 for greedy
    sampling."""
    if sampling == "greedy":
        return np.zeros(np.shape(seqs))
    b = np.asarray(seqs, dtype=np.float64) * float(vocab)
    if not verify:
        return b * q * f.plain_s
    bonus = 1.0 if f.bonus_plain else 0.0
    return b * ((q - bonus) * f.verify_s + bonus * f.plain_s)


def read_filter(doc: dict[str, Any], path: Path) -> TopPFilter:
    """[sampling] of an engine profile: the three per-entry times (0 where absent), the sort window's months (a window
    needs its end, after its start, and a sort time) and whether the bonus row is sampled by the plain sampler."""
    s: dict[str, Any] = {}
    sec, where = "sampling", f"{path}: [sampling]"
    for key, fld in zip(_KEYS, ("plain_s", "verify_s", "sort_s")):
        v = figure(doc, sec, key, path, required=False, lo=0.0, hi=1e-8, allow_estimate=True)
        s[fld] = 0.0 if v is None else float(v)
    for key in _MONTHS:
        fig = doc.get(sec, {}).get(key)
        if fig is not None:
            check_fields(fig, f"{where} {key}", frozenset(), allow_estimate=False)
            if not isinstance(fig["value"], str) or not MONTH_RE.fullmatch(fig["value"]):
                raise SpecError(f"{where} {key}: value = {fig['value']!r}; expected a month as \"YYYY-MM\"")
        s[key] = fig["value"] if fig is not None else ""
    v = figure(doc, sec, "bonus_row_plain", path, required=False, kind=bool)
    s["bonus_plain"] = bool(v)
    f = TopPFilter(**s)
    _check_window(f, where)
    return f


def _check_window(f: TopPFilter, where: str) -> None:
    if f.plain_sort_from and not f.sort_until:
        raise SpecError(f"{where} plain_sort_from = {f.plain_sort_from!r} without sort_until: the window needs its end")
    if f.plain_sort_from and f.plain_sort_from >= f.sort_until:
        raise SpecError(f"{where} plain_sort_from = {f.plain_sort_from!r} is not before sort_until = "
                        f"{f.sort_until!r}: expected a window that starts before it ends")
    if f.sort_until and not f.sort_s > 0.0:
        raise SpecError(f"{where} sort_until = {f.sort_until!r} without a sort_s_per_entry above 0: a build in the "
                        "window would price its filter at nothing; give the sort's time an entry")


__all__ = ["SAMPLING", "TopPFilter", "check_sampling", "filter_s", "read_filter"]
