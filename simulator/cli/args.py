"""Argument handling shared by every subcommand: the parser class (one-line errors), value types, the Scenario flags
(generated from the Scenario field table, so a new field is a new flag with no edit here) and the hazard options.

Nothing here imports numba: `specroof --help` and argument errors stay fast.
"""

from __future__ import annotations

import argparse
import functools
import math
import sys
from collections.abc import Callable, Iterable
from typing import Any

from ..acceptance import Acceptance
from ..drafters import MAX_DEPTH, default_decay, verified_tree
from ..errors import ScenarioError
from ..hazards import DEPLOYMENT_OPTIONS, OPTIONS
from ..registry import same_shape_note
from ..sampling import check_sampling
from ..scenario import Scenario, scenario_fields
from ..workload import OVERLAP_MODES


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default once: not where the help text already states it, nor for None / off flags."""

    def _get_help_string(self, action: argparse.Action) -> str:
        h = action.help or ""
        d = action.default   # identity, not ==: a default of 0.0 or 0 equals False and must still be shown
        if "(default" in h or d is None or d is False or d is argparse.SUPPRESS:
            return h
        if isinstance(d, (tuple, list)):   # a list default as it is typed: 20,50,100, not (20.0, 50.0, 100.0);
            if not d:                        # none for an empty one (a repeatable flag given no value)
                return h
            return f"{h} (default: {','.join(f'{v:g}' if isinstance(v, float) else str(v) for v in d)})"
        return super()._get_help_string(action) or h


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `error: ...` with a hint, on stderr, exit 2 (no 20-line usage dump)."""

    def __init__(self, *args: Any, command: bool = False, **kw: Any) -> None:
        self.command = command                   # a command's parser (specroof curve), not the root
        kw.setdefault("formatter_class", _Formatter)
        kw.setdefault("allow_abbrev", False)     # --k must not silently mean --k-max or --kv-precision
        super().__init__(*args, **kw)

    def error(self, message: str) -> None:  # type: ignore[override]
        if message.endswith("expected one argument"):   # argparse reads a value such as -1,5 as an option (review)
            message += " (a value that starts with '-' is given as --option=VALUE)"
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")

    def add_subparsers(self, **kw: Any) -> Any:
        """Each command's parser refuses the arguments it does not take itself (`Parser(command=True)`)."""
        kw["parser_class"] = functools.partial(kw.get("parser_class", type(self)), command=True)
        return super().add_subparsers(**kw)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        """A command's parser reports an argument it does not take, so the hint names its help (`specroof curve
        --help`); argparse leaves such arguments for the root parser, whose hint named `specroof --help`."""
        a, extra = super().parse_known_args(args, namespace)
        if extra and self.command:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return a, extra


def int_arg(name: str, lo: int, hi: int | None = None) -> Callable[[str], int]:
    """argparse type: an integer >= lo (and <= hi); the error names the option and the value."""
    def f(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {s!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{name} {v} must be >= {lo}")
        if hi is not None and v > hi:
            raise argparse.ArgumentTypeError(f"{name} {v} must be <= {hi}")
        return v
    return f


def float_arg(name: str, lo: float, hi: float = float("inf"), lo_open: bool = False,
              hi_open: bool = False) -> Callable[[str], float]:
    """argparse type: a number in [lo, hi] (open ends on request); the error names the option and the value."""
    def f(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {s!r} is not a number") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"{name} {s!r} is not a finite number")
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok and hi == float("inf"):
            raise argparse.ArgumentTypeError(f"{name} {v} must be {'>' if lo_open else '>='} {lo:g}")
        if not ok:
            raise argparse.ArgumentTypeError(f"{name} {v} must be in {'(' if lo_open else '['}{lo:g}, {hi:g}"
                                             f"{')' if hi_open else ']'}")
        return v
    return f


def counts_arg(name: str):
    """argparse type for batch sizes or concurrencies: a list `1,8,64` or an inclusive range `1..256` (every power of
    two in it and both ends), ascending and each once. The same syntax for every subcommand; the error names the
    option's quantity."""
    def f(s: str) -> tuple[int, ...]:
        s = s.strip()
        if ".." in s:
            lo_s, _, hi_s = s.partition("..")
            lo, hi = int_arg(name, 1)(lo_s.strip()), int_arg(name, 1)(hi_s.strip())
            if hi < lo:
                raise argparse.ArgumentTypeError(f"{name} range {s!r} is empty (largest < smallest)")
            pw = [1 << j for j in range(hi.bit_length() + 1) if lo <= (1 << j) <= hi]
            return tuple(sorted({lo, hi, *pw}))
        if not s:
            raise argparse.ArgumentTypeError(f"empty {name} list (expected e.g. 1,8,64 or 1..256)")
        # ascending, each once (review: `--batch 256,1,8,8` printed the rows in that order, one twice)
        return tuple(sorted({int_arg(name, 1)(t.strip()) for t in s.split(",")}))
    return f


batch_arg = counts_arg("batch")


def k_arg(s: str) -> int | str:
    return "auto" if s.strip().lower() == "auto" else int_arg("k", 0)(s)


def overlap_arg(s: str) -> str | float:
    if s in OVERLAP_MODES:
        return s
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"overlap {s!r}: expected measured, max, sum or a number in [0, 1]") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"overlap {v} outside [0, 1]")
    return v


def rates_arg(s: str) -> list[float]:
    parts = s.split(",")
    if not s.strip() or any(not t.strip() for t in parts):
        raise argparse.ArgumentTypeError(f"acceptance rates {s!r} has an empty element (expected e.g. 0.8,0.7,0.6)")
    return [float_arg("acceptance rate", 0.0, 1.0, hi_open=True)(t) for t in parts]


def sampling_arg(s: str) -> str:
    try:
        return check_sampling("sampling", s)
    except ScenarioError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _kind_type(kind: str, flag: str) -> Callable[[str], Any] | None:
    return {"int>=1": int_arg(flag, 1), "int>=0": int_arg(flag, 0), "int>=1?": int_arg(flag, 1),
            "int>=2?": int_arg(flag, 2), "k": k_arg, "batch": batch_arg, "overlap": overlap_arg,
            "fraction?": float_arg(flag, 0.0, 1.0, lo_open=True), "locality?": float_arg(flag, 0.0, 1.0),
            "sampling": sampling_arg}.get(kind)


def add_scenario_args(p: argparse.ArgumentParser, skip: tuple[str, ...] = (), **defaults: Any) -> None:
    """One flag per Scenario field marked `cli` (name, kind, help and default from the field table)."""
    for f in scenario_fields("cli"):
        if f.name in skip:
            continue
        flag = "--" + f.name.replace("_", "-")
        default = defaults.get(f.name, f.default)
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        h = f.metadata["help"]
        if "(default" not in h and default is not None:
            h = f"{h} (default: {shown})"
        if f.metadata["kind"] == "bool?":      # --name / --no-name; absent: None (the engine profile's)
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, dest=f.name,
                           help=h.replace("%", "%%"))
            continue
        p.add_argument(flag, type=_kind_type(f.metadata["kind"], f.name), default=default, dest=f.name,
                       help=h.replace("%", "%%"))


# serve and frontier price each request's decode at its own lengths, not at a --context.
CONTEXT_FROM_LENGTHS = ("does not apply here: each request's context is its prompt (--isl) plus the tokens it has "
                        "decoded (decode steps are priced at isl + osl/2); set --isl and --osl")


def refuse_arg(p: argparse.ArgumentParser, flag: str, why: str) -> None:
    """A scenario flag a command does not use: given, it is refused with `why`, not silently ignored."""
    def refuse(v: str) -> None:
        raise argparse.ArgumentTypeError(f"{v}: {why}")
    p.add_argument(flag, type=refuse, default=None, dest="refused_" + flag.strip("-").replace("-", "_"),
                   help=argparse.SUPPRESS)


def add_acceptance_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("acceptance (default: the method's published value)")
    x = g.add_mutually_exclusive_group()
    x.add_argument("--acceptance-rate", type=float_arg("acceptance rate", 0.0, 1.0, hi_open=True), default=None,
                   help="i.i.d. per-token acceptance alpha in [0, 1)")
    x.add_argument("--acceptance-length", type=float_arg("acceptance length", 1.0), default=None,
                   help="mean acceptance length tau (tokens per step, bonus included) measured at --acceptance-k")
    x.add_argument("--acceptance-rates", type=rates_arg, default=None, help="per-position conditional rates a1,a2,...")
    g.add_argument("--acceptance-k", type=int_arg("acceptance-k", 1, MAX_DEPTH), default=None,
                   help="the k at which --acceptance-length was measured (default: --k when numeric)")


# Ranges of the numeric hazard options: temperature >= 0, SGLang's accept threshold in (0, 1].
_OPTION_TYPES: dict[str, Callable[[str], Any]] = {"accept_threshold": float_arg("accept threshold", 0.0, 1.0, True)}


def add_option_args(p: argparse.ArgumentParser) -> None:
    """Deployment options: they change no number, only which known hazards are reported."""
    d = p.add_argument_group("deployment options (checked against known hazards only: they change no number)")
    for name, (kind, _, meaning) in OPTIONS.items():
        if name in ("dynamic_k", "batch_off", "topk", "tp", "ep", "dp", "pp", "max_batch", "max_k", "verify_tokens",
                    "context", "overlap_scheduler", *DEPLOYMENT_OPTIONS):
            continue       # filled in from the scenario and the prediction (overlap_scheduler: --spec-overlap)
        flag = "--" + name.replace("_", "-")
        if kind is bool:
            d.add_argument(flag, action=argparse.BooleanOptionalAction, default=False, dest=f"opt_{name}",
                           help=meaning)
        else:
            typ = _OPTION_TYPES.get(name) or (int_arg(name, 1) if kind is int else float_arg(name, 0.0))
            d.add_argument(flag, type=typ, default=None, dest=f"opt_{name}", help=meaning)
    d.add_argument("--hazards", action="append", default=[], metavar="FILE.toml",
                   help="extra known-hazards file (repeatable); same schema as hazards/known_hazards.toml")


def acceptance_from(a: argparse.Namespace) -> Any:
    """The Acceptance the flags describe, or None for the method's published default."""
    if a.acceptance_k is not None and a.acceptance_length is None:    # found by review: ignored beside a rate
        raise ScenarioError("--acceptance-k applies only with --acceptance-length")
    if a.acceptance_rate is not None:
        return Acceptance.from_rate(a.acceptance_rate)
    if a.acceptance_rates is not None:
        return Acceptance.from_rates(a.acceptance_rates)
    if a.acceptance_length is not None:
        k0 = a.acceptance_k if a.acceptance_k is not None else (a.k if a.k != "auto" else None)
        if k0 is None:
            raise ScenarioError("--acceptance-length needs the k it was measured at: pass --acceptance-k K "
                                "(or a numeric --k)")
        method = getattr(a, "method", None)     # on the tree the run verifies (Medusa's default one included)
        return Acceptance.from_measurement(a.acceptance_length, k0, *verified_tree(method, a.tree_tokens,
                                                                                   a.tree_branching),
                                           default_decay(method))
    return None


def options_from(a: argparse.Namespace) -> dict[str, Any]:
    return {k[4:]: v for k, v in vars(a).items() if k.startswith("opt_") and v is not None}


def scenario_from(a: argparse.Namespace, **over: Any) -> Scenario:
    """The Scenario the flags give (checked: a bad value raises ScenarioError naming the field)."""
    kw = {f.name: getattr(a, f.name) for f in scenario_fields("cli") if hasattr(a, f.name)}
    if hasattr(a, "acceptance_rate"):
        kw["acceptance"] = acceptance_from(a)
    if any(k.startswith("opt_") for k in vars(a)):
        kw["options"] = options_from(a)
    kw.update(over)
    note_same_shape((kw.get("model"), kw.get("draft")))
    return Scenario(**kw)


def note_same_shape(names: Iterable[Any]) -> None:
    """Never silently: each distinct same-shape repository among `names` says on stderr which bundled model prices it
    (registry.same_shape_note); ids, paths and unknown names say nothing here (the loader reports those)."""
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):
        if note := same_shape_note(name):
            stderr(f"note: {note}")


def add_format(p: argparse.ArgumentParser, choices: tuple[str, ...] = ("table", "json", "csv")) -> None:
    p.add_argument("--format", choices=choices, default="table", help="output format")


def stderr(msg: str) -> None:
    print(msg, file=sys.stderr)
