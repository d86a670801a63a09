"""A serving workload: prompt and output lengths (one pair, or samples of a distribution), the load (requests in
flight, or an arrival rate), chunked prefill, prefix-cache hits and prefill/decode disaggregation. Data only: the
pricing is `serving.serve`."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from .data import read_text
from .errors import ScenarioError

# Chunked-prefill size when none is given: SGLang's and vLLM's default on 80 GB-class GPUs is 8192 prompt tokens per
# step (SGLang server_args chunked_prefill_size; vLLM max_num_batched_tokens 8192 for online serving). It is priced
# per attention-DP rank: under DP attention SGLang divides its --chunked-prefill-size by the DP size
# (server_args._handle_data_parallelism), so pass SGLang's value / dp there.
DEFAULT_CHUNK = 8192


def pos_int(name: str, v: Any, lo: int = 1) -> int:
    """v as an int when it is an integer (not a bool) >= lo; else one ScenarioError naming `name` and the value."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < lo:
        raise ScenarioError(f"{name} = {v!r}; expected an integer >= {lo}")
    return int(v)


def _lengths(v: Any) -> tuple[tuple[int, int], ...]:
    """(isl, osl) samples: a sequence of integer pairs, each at least 1."""
    if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
        raise ScenarioError(f"lengths = {v!r}; expected a list of (isl, osl) pairs")
    out = []
    for i, pair in enumerate(v):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ScenarioError(f"lengths[{i}] = {pair!r}; expected an (isl, osl) pair of integers >= 1")
        out.append((pos_int(f"lengths[{i}] isl", pair[0]), pos_int(f"lengths[{i}] osl", pair[1])))
    return tuple(out)



def _check_prefill_gpus(pg: Any, pd: bool) -> None:
    """prefill_gpus: a positive number, and only under prefill/decode disaggregation."""
    if pg is None:
        return
    if not _is_num(pg) or not pg > 0 or not np.isfinite(pg):
        raise ScenarioError(f"prefill_gpus = {pg!r}; expected a positive number (the GPUs that prefill for "
                            "this decode instance)")
    if not pd:
        raise ScenarioError(f"prefill_gpus = {pg!r} without pd: a prefill instance exists only under prefill/decode "
                            "disaggregation (pass --pd, or leave --prefill-gpus out)")


def _check_prefill_layout(layout: Any, pd: bool) -> tuple[int, int, int] | None:
    """prefill_layout: (tp, dp, ep) of one prefill instance, whole numbers >= 1, and only under prefill/decode
    disaggregation; None: the decode instance's layout."""
    if layout is None:
        return None
    if not isinstance(layout, (tuple, list)) or len(layout) != 3 or \
            not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in layout):
        raise ScenarioError(f"prefill_layout = {layout!r}; expected (tp, dp, ep) of one prefill instance, three "
                            "whole numbers >= 1")
    if not pd:
        raise ScenarioError(f"prefill_layout = {tuple(layout)!r} without pd: a prefill instance exists only under "
                            "prefill/decode disaggregation (pass --pd, or leave --prefill-tp/--prefill-dp/"
                            "--prefill-ep out)")
    return (int(layout[0]), int(layout[1]), int(layout[2]))


PREFILL_LAYOUT_KEYS = ("prefill_tp", "prefill_dp", "prefill_ep")


def prefill_layout_of(values: tuple[Any, Any, Any], names: tuple[str, str, str] = PREFILL_LAYOUT_KEYS) -> Any:
    """One prefill instance's (tp, dp, ep) from its three inputs as a CLI, a rows file or a sweep names them: None
    where none is given, the three where all are; one or two of them are refused, naming those given. The values are
    checked by Workload (`_check_prefill_layout`)."""
    given = [n for n, v in zip(names, values) if v is not None]
    if not given:
        return None
    if len(given) < 3:
        raise ScenarioError(f"{', '.join(given)} given without the rest of {', '.join(names)}; give all three (one "
                            "prefill instance's layout) or none")
    return tuple(values)


def _is_num(v: Any) -> bool:
    """A real number, numpy's included (review: rate=np.arange(1, 4) was refused as not 'a positive number')."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _rates(v: Any) -> tuple[float, ...]:
    r = (v,) if _is_num(v) else v
    if isinstance(r, (str, bytes)) or not hasattr(r, "__iter__"):
        raise ScenarioError(f"rate = {v!r}; expected arrival rates in requests/s (positive numbers)")
    out = tuple(r)
    for x in out:
        if not _is_num(x) or not (np.isfinite(x) and x > 0):
            raise ScenarioError(f"rate = {x!r}; expected a positive number of requests/s")
    return tuple(float(x) for x in out)


def read_lengths(path: str) -> tuple[tuple[int, int], ...]:
    """(isl, osl) samples from a CSV file with an `isl` and an `osl` column (one request per row; other columns
    ignored), e.g. the prompt and output token counts of a trace or a benchmark dataset."""
    text = read_text(path, "lengths CSV", ScenarioError).removeprefix("\ufeff")    # a spreadsheet's byte-order mark
    reader = csv.reader(io.StringIO(text))
    head = [c.strip() for c in next(reader, [])]
    if not {"isl", "osl"} <= set(head) or len(set(head)) < len(head):
        raise ScenarioError(f"{path}: header {','.join(head)!r}; expected a CSV whose header names the columns isl "
                            "and osl once each, and one row per request")
    out = []
    for r in reader:
        if not r:
            continue
        n = reader.line_num
        if len(r) != len(head):
            raise ScenarioError(f"{path}: line {n}: {len(r)} fields under a header of {len(head)}; expected one value "
                                "per column")
        row = dict(zip(head, r))
        try:
            out.append((int(row["isl"]), int(row["osl"])))
        except ValueError:
            raise ScenarioError(f"{path}: line {n}: isl = {row['isl']!r}, osl = {row['osl']!r}; expected integers "
                                ">= 1") from None
        if min(out[-1]) < 1:
            raise ScenarioError(f"{path}: line {n}: isl = {row['isl']}, osl = {row['osl']}; expected integers >= 1")
    if not out:
        raise ScenarioError(f"{path}: no rows under the header; expected one row per request")
    return tuple(out)


LENGTH_BINS = 4   # equally likely values per length in `uniform_lengths`: 4 x 4 (isl, osl) pairs


def length_ratio(v: Any) -> float:
    """v as a float when it is a number in [0, 1] (not a bool); else one ScenarioError naming the value and what the
    ratio means."""
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0.0 <= v <= 1.0:
        raise ScenarioError(f"length_ratio = {v!r}; expected a number in [0, 1] (each length drawn uniformly from "
                            "[ratio x length, length])")
    return float(v)


def uniform_lengths(isl: int, osl: int, ratio: float, bins: int = LENGTH_BINS) -> tuple[tuple[int, int], ...]:
    """(isl, osl) samples of a benchmark client that draws each request's prompt and output lengths independently and
    uniformly from [int(ratio x isl), isl] and [int(ratio x osl), osl]: SGLang bench_serving's random dataset with
    --random-range-ratio (https://github.com/sgl-project/sglang/issues/7253: default 0; its prompts have at least 1
    token, its outputs may have 0, here at least 1), and InferenceX's client (utils/bench_serving/
    benchmark_serving.py, sample_uniform; its CI sets RANDOM_RANGE_RATIO 0.8). vLLM's bench serve draws from
    [L (1 - ratio), L (1 + ratio)] instead, whose mean is L: there the fixed lengths are the right input. Each length
    becomes `bins` equally likely values, the midpoints of equal-probability bins, paired every way (independent
    draws): their mean is the draw's; the spread within a bin is dropped, so `Workload.mean_context`, which weighs
    the output length by itself, comes out low: by 0.6 % at isl = osl and at most 1.6 % (osl >> isl, where it tends
    to the bins' mean square over the uniform's, (84 / 256) / (1 / 3)) at ratio 0; at most 0.03 % at 0.8 (against
    the continuous draw's E[o (i + o / 2)] / E[o]). Ratio 1: the one pair."""
    i, o = pos_int("isl", isl), pos_int("osl", osl)
    r = length_ratio(ratio)
    pos_int("bins", bins)

    def values(n: int) -> list[int]:
        lo = max(1, int(n * r))
        return [max(1, round(lo + (n - lo) * (j + 0.5) / bins)) for j in range(bins)] if lo < n else [n]
    return tuple((a, b) for a in values(i) for b in values(o))


@dataclass(frozen=True)
class Workload:
    """A serving workload: prompt and output lengths (tokens), the concurrencies to evaluate (requests in flight),
    the chunked-prefill size (prompt tokens per step on each attention-DP rank), the share of prompt tokens found in
    the prefix cache, and prefill/decode disaggregation (`prefill_gpus`: the GPUs that prefill for this decode
    instance, a prefill instance's GPUs or, where m decode instances share P prefill GPUs, their share P / m;
    default as many as the decode instance has; `prefill_layout`: one prefill instance's (tp, dp, ep), whose passes
    price the prefill, default the decode instance's layout).

    lengths : (isl, osl) samples of a length distribution (a trace); when given, `isl` and `osl` become their
        rounded means and every formula uses the per-request means (see `serve`).
    length_ratio : below 1, each request's lengths are drawn uniformly from [ratio x isl, isl] and [ratio x osl,
        osl], as benchmark clients do (`uniform_lengths`): `isl` and `osl` stay the draw's upper ends (the longest
        request, what must fit in the model's positions) and `samples` is the draw.
    rate : arrival rates in requests/s; when given, the requests in flight of each mode are solved from Little's law
        (rate = in-flight / E2E) instead of taken from `concurrency`.
    max_concurrency : with `rate`, the benchmark client's cap on requests in flight (vLLM bench serve's and SGLang
        bench_serving's --max-concurrency beside --request-rate): arrivals beyond it wait at the client, outside
        every latency (both clients time a request from its send), so a rate the cap binds is served closed-loop at
        the cap (`serve`); None: no cap.
    num_prompts : the prompts of one benchmark run at a concurrency (the clients' --num-prompts with
        --request-rate inf): the first C start at once, and TTFT and E2E are the means over the run, its start-up
        burst included (`burst.start_up_s`); at least every concurrency, not with `rate`. None: the steady state
        alone (a run long enough that its start-up does not count).
    prompts_per_slot : num_prompts as a whole multiple m of each concurrency, m C prompts at C (InferenceX runs
        10 x C: benchmarks/benchmark_lib.sh callers pass --num-prompts $((CONC * 10))), for a list of
        concurrencies; not with num_prompts nor `rate`. None: num_prompts as given.
    """

    isl: int = 1024
    osl: int = 1024
    concurrency: tuple[int, ...] = (1, 4, 16, 64)
    chunk: int = DEFAULT_CHUNK
    prefix_hit: float = 0.0
    pd: bool = False
    prefill_gpus: float | None = None
    prefill_layout: tuple[int, int, int] | None = None
    lengths: tuple[tuple[int, int], ...] = ()
    rate: tuple[float, ...] = ()
    length_ratio: float = 1.0
    max_concurrency: int | None = None
    num_prompts: int | None = None
    prompts_per_slot: int | None = None

    def __post_init__(self) -> None:
        pos_int("isl", self.isl)
        pos_int("osl", self.osl)
        pos_int("chunk", self.chunk)
        conc = (self.concurrency,) if isinstance(self.concurrency, (int, np.integer)) else tuple(self.concurrency)
        if not conc:
            raise ScenarioError("concurrency: the list is empty; expected at least one")
        object.__setattr__(self, "concurrency", tuple(pos_int("concurrency", c) for c in conc))
        hit = self.prefix_hit
        if not _is_num(hit) or not 0.0 <= hit < 1.0:
            raise ScenarioError(f"prefix_hit = {hit!r}; expected a share in [0, 1)")
        object.__setattr__(self, "prefix_hit", float(hit))
        if not isinstance(self.pd, bool):
            raise ScenarioError(f"pd = {self.pd!r}; expected True or False")
        _check_prefill_gpus(self.prefill_gpus, self.pd)
        object.__setattr__(self, "prefill_layout", _check_prefill_layout(self.prefill_layout, self.pd))
        object.__setattr__(self, "rate", _rates(self.rate))
        self._check_cap()
        self._check_prompts()
        object.__setattr__(self, "length_ratio", length_ratio(self.length_ratio))
        if self.length_ratio < 1.0 and self.lengths:
            raise ScenarioError(f"length_ratio = {self.length_ratio:g} with lengths given: a draw around isl and osl "
                                "or a length distribution, not both")
        self._set_lengths()

    def _check_cap(self) -> None:
        if self.max_concurrency is None:
            return
        object.__setattr__(self, "max_concurrency", pos_int("max_concurrency", self.max_concurrency))
        if not self.rate:
            raise ScenarioError(f"max_concurrency = {self.max_concurrency} without a rate: it caps the requests in "
                                "flight at an arrival rate; without one, concurrency is the requests in flight")

    def _check_prompts(self) -> None:
        """num_prompts: a whole number of prompts per run, at least every concurrency, and only at a concurrency;
        prompts_per_slot: a whole multiple of each concurrency, in its place."""
        if self.prompts_per_slot is not None:
            m = pos_int("prompts_per_slot", self.prompts_per_slot)
            object.__setattr__(self, "prompts_per_slot", m)
            if self.num_prompts is not None:
                raise ScenarioError(f"prompts_per_slot = {m} with num_prompts = {self.num_prompts}: a run's prompts "
                                    "as a multiple of each concurrency or as one number, not both")
            if self.rate:
                raise ScenarioError(f"prompts_per_slot = {m} with a rate: a run's start-up burst is that of a "
                                    "closed loop (--request-rate inf) at a concurrency; at a rate leave it out")
        if self.num_prompts is None:
            return
        n = pos_int("num_prompts", self.num_prompts)
        object.__setattr__(self, "num_prompts", n)
        if self.rate:
            raise ScenarioError(f"num_prompts = {n} with a rate: a run's start-up burst is that of a closed loop "
                                "(--request-rate inf) at a concurrency; at an arrival rate leave num_prompts out")
        if n < max(self.concurrency):
            raise ScenarioError(f"num_prompts = {n} below concurrency {max(self.concurrency)}: a run of {n} prompts "
                                "never has more in flight; expected num_prompts >= every concurrency")

    def run_prompts(self, conc: np.ndarray) -> np.ndarray | None:
        """The prompts of one benchmark run at each concurrency in `conc`: num_prompts, or prompts_per_slot x C;
        None where neither is given (the steady state alone)."""
        if self.num_prompts is not None:
            return np.full(np.shape(conc), float(self.num_prompts))
        if self.prompts_per_slot is not None:
            return self.prompts_per_slot * np.asarray(conc, dtype=np.float64)
        return None

    def _set_lengths(self) -> None:
        ln = _lengths(self.lengths)
        object.__setattr__(self, "lengths", ln)
        if not ln:
            return
        mi, mo = self.mean_lengths
        for name, given, default, mean in (("isl", self.isl, 1024, mi), ("osl", self.osl, 1024, mo)):
            if given not in (default, mean):
                raise ScenarioError(f"{name} = {given} with lengths given: {name} is the samples' mean ({mean}); "
                                    f"give one or the other")
        object.__setattr__(self, "isl", mi)
        object.__setattr__(self, "osl", mo)

    @cached_property
    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(isl, osl) per request class as read-only float arrays: the samples, the length_ratio draw, or the one
        (isl, osl). Computed once per workload (admission and serving read it in every priced pass)."""
        ln = self.lengths or uniform_lengths(self.isl, self.osl, self.length_ratio)
        out = (np.array([p[0] for p in ln], dtype=np.float64), np.array([p[1] for p in ln], dtype=np.float64))
        for a in out:
            a.setflags(write=False)
        return out

    @property
    def mean_lengths(self) -> tuple[int, int]:
        """(isl, osl) averaged over requests, rounded, at least 1 (the lengths themselves when fixed)."""
        i, o = self.samples
        return max(1, round(float(i.mean()))), max(1, round(float(o.mean())))

    @property
    def prompts(self) -> np.ndarray:
        """Prompt tokens to prefill per request class (those not found in the prefix cache), at least one."""
        return np.maximum(1.0, np.round(self.samples[0] * (1.0 - self.prefix_hit)))

    @property
    def prompt(self) -> int:
        """Mean prompt tokens to prefill, rounded, at least one."""
        return max(1, round(float(self.prompts.mean())))

    @property
    def mean_osl(self) -> float:
        return float(self.samples[1].mean())

    @property
    def mean_context(self) -> float:
        """Context of a decoding request averaged over every output token: sum osl (isl + osl / 2) / sum osl (long
        outputs hold more of the decode steps); isl + osl / 2 for one length."""
        i, o = self.samples
        return float((o * (i + o / 2.0)).sum() / o.sum())

    @property
    def longest_prompt(self) -> int:
        """The longest prompt a client sends: a length_ratio draw's upper end, else the longest sample's."""
        return self.isl if self.length_ratio < 1.0 else int(self.samples[0].max())

    def fitting(self, max_position: int | None) -> tuple[Workload, int]:
        """This workload without the samples of a length distribution (`lengths`) whose prompt and output need more
        than `max_position` positions, and how many were left out. An engine rejects such a request rather than serve
        it (vLLM when prompt + max_tokens exceeds max_model_len; SGLang's tokenizer manager, 'Requested token count
        exceeds the model's maximum context length', https://github.com/sgl-project/sglang/blob/main/python/sglang/
        srt/managers/tokenizer_manager.py), so a trace prices the requests a server runs, at their share of any arrival
        rate (a rejected request costs the server next to nothing). A fixed (isl, osl), a
        length_ratio draw (its upper ends are what was asked for), no limit, or no sample that fits: unchanged, 0
        (the caller refuses or marks the points infeasible)."""
        if not self.lengths or not max_position:
            return self, 0
        kept = tuple(p for p in self.lengths if p[0] + p[1] <= max_position)
        if not kept or len(kept) == len(self.lengths):
            return self, 0
        share = len(kept) / len(self.lengths)      # arrival rates: the served requests' share of them (review)
        return (replace(self, lengths=kept, isl=1024, osl=1024, rate=tuple(r * share for r in self.rate)),
                len(self.lengths) - len(kept))

    def longest(self) -> tuple[int, int]:
        """The (isl, osl) sample with the longest total context (what must fit in the model's positions); under a
        length_ratio draw, (isl, osl), its upper ends."""
        if self.length_ratio < 1.0:
            return self.isl, self.osl
        i, o = self.samples
        j = int(np.argmax(i + o))
        return int(i[j]), int(o[j])


__all__ = ["DEFAULT_CHUNK", "LENGTH_BINS", "PREFILL_LAYOUT_KEYS", "Workload", "length_ratio", "pos_int",
           "prefill_layout_of", "read_lengths", "uniform_lengths"]
