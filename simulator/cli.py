"""`specroof` command line: hardware, models, step, curve. Formatting lives here and nowhere else."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from typing import Any, Sequence

from .errors import ModelConfigError, ScenarioError, SpecError

_USER_ERRORS = (SpecError, ModelConfigError, ScenarioError)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own errors: stderr, exit 2, no traceback
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def _int_list(s: str) -> list[int]:
    out = []
    for tok in s.split(","):
        tok = tok.strip()
        try:
            v = int(tok)
        except ValueError:
            raise argparse.ArgumentTypeError(f"batch {tok!r} is not an integer (expected e.g. 1,2,4,8)") from None
        if v <= 0:
            raise argparse.ArgumentTypeError(f"batch {v} must be a positive integer")
        out.append(v)
    if not out:
        raise argparse.ArgumentTypeError("empty batch list")
    return out


def _float_list(s: str) -> list[float]:
    try:
        return [float(t) for t in s.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{s!r} is not a comma-separated list of numbers") from None


def int_arg(name: str, lo: int):
    """argparse type: an integer >= lo; the error names the option and the value."""
    def f(s: str) -> int:
        try:
            v = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {s!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{name} {v} must be >= {lo}")
        return v
    return f


def float_arg(name: str, lo: float, hi: float = float("inf"), lo_open: bool = False):
    """argparse type: a number in [lo, hi] ((lo, hi] with lo_open); the error names the option and the value."""
    def f(s: str) -> float:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} {s!r} is not a number") from None
        if not ((v > lo) if lo_open else (v >= lo)) or not v <= hi:
            rng = f"in ({lo:g}, {hi:g}]" if lo_open else (f"in [{lo:g}, {hi:g}]" if hi != float("inf") else f">= {lo:g}")
            raise argparse.ArgumentTypeError(f"{name} {v} must be {rng}")
        return v
    return f


def _pos_int(name: str):
    return int_arg(name, 1)


def _nonneg_int(name: str):
    return int_arg(name, 0)


def _overlap(s: str) -> str | float:
    if s in ("max", "sum"):
        return s
    try:
        v = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"overlap {s!r}: expected max, sum or a number in [0, 1]") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"overlap {v} outside [0, 1]")
    return v


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    w = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.rjust(w[i]) for i, c in enumerate(r)) for r in cells]
    lines.insert(1, "  ".join("-" * x for x in w))
    return "\n".join(lines)


def _csv(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    buf = io.StringIO()
    wr = csv.writer(buf, lineterminator="\n")
    wr.writerow(headers)
    wr.writerows(rows)
    return buf.getvalue().rstrip("\n")


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.3f}"


# ---- hardware / models -------------------------------------------------------------------------------------------

def cmd_hardware(a: argparse.Namespace) -> int:
    from .hardware import list_hardware, load_hardware
    names = [a.name] if a.name else list_hardware()
    hws = [load_hardware(n) for n in names]
    if a.format == "json":
        print(json.dumps([h.to_dict() for h in hws] if not a.name else hws[0].to_dict(), indent=2))
        return 0
    rows = []
    for h in hws:
        pk = lambda k: "-" if getattr(h, f"peak_{k}_flops_per_s") is None else f"{getattr(h, f'peak_{k}_flops_per_s') / 1e12:g}"  # noqa: E731
        rows.append([h.name, pk("bf16"), pk("fp8"), pk("fp4"), f"{h.hbm_capacity_bytes / 2**30:g}",
                     f"{h.hbm_bandwidth_bytes_per_s / 1e12:g}", f"{h.scaleup_bytes_per_s / 1e9:g}", h.scaleup_domain,
                     f"{h.hbm_fraction:.2f}", f"{h.gemm_bf16_fraction:.2f}"])
    hdr = ["name", "bf16_TF", "fp8_TF", "fp4_TF", "HBM_GiB", "HBM_TB/s", "link_GB/s/dir", "domain",
           "hbm_frac", "gemm_frac"]
    print(_csv(hdr, rows) if a.format == "csv" else _table(hdr, rows))
    if a.name and a.format == "table":
        print("\ndense peaks (no 2:4 sparsity); link bandwidth per direction")
        for s in hws[0].assumptions:
            print(f"assumption: {s}")
        for s in hws[0].sources:
            print(f"source: {s}")
    return 0


def cmd_models(a: argparse.Namespace) -> int:
    from .model import list_models, load_model_and_record
    names = [a.name] if a.name else list_models()
    out = []
    for n in names:
        m, rec = load_model_and_record(n)
        out.append((m, m.param_counts(), rec))
    if a.format == "json":
        from dataclasses import asdict
        js = [{"shape": m.to_dict(), "params": c, "record": None if r is None else asdict(r)} for m, c, r in out]
        print(json.dumps(js if not a.name else js[0], indent=2))
        return 0
    hdr = ["id", "type", "kind", "layers", "d_model", "heads", "kv_heads", "experts", "params_B", "active_B"]
    rows = [[m.name, m.model_type, m.kind, m.n_layers, m.d_model, m.n_heads, m.n_kv_heads,
             f"{m.n_experts}/{m.top_k}" if m.is_moe else "-", f"{c['total'] / 1e9:.2f}", f"{c['active'] / 1e9:.2f}"]
            for m, c, r in out]
    print(_csv(hdr, rows) if a.format == "csv" else _table(hdr, rows))
    return 0


# ---- step -------------------------------------------------------------------------------------------------------

def cmd_step(a: argparse.Namespace) -> int:
    from .step import simulate_step
    from .workload import FAMILIES
    r = simulate_step(a.hardware, a.model, a.batch, a.query_tokens, a.context, a.tp, a.ep, a.precision,
                      a.kv_precision, a.engine, a.overlap)
    d = r.to_dict()
    if a.format == "json":
        print(json.dumps(d, indent=2))
        return 0
    hdr = ["batch", "step_ms", "bound"] + [f"{f}_ms" for f in FAMILIES] + ["mem_GB", "feasible"]
    rows = []
    for p in d["points"]:
        bd = p["breakdown_s"] or {}
        rows.append([p["batch"], _ms(p["step_s"]), p["bound"] or "-"] + [_ms(bd.get(f)) for f in FAMILIES]
                    + [f"{p['memory_bytes'] / 1e9:.1f}", "yes" if p["feasible"] else "no"])
    if a.format == "csv":
        print(_csv(hdr, rows))
        return 0
    s = d["scenario"]
    print(f"{s['model']} on {s['tp']}x {s['hardware']} (tp={s['tp']}, ep={s['ep']}), weights {s['precision']}, "
          f"KV {s['kv_precision']}, q={s['query_tokens']} new tokens/seq, context {s['context']}, engine {s['engine']}")
    print(_table(hdr, rows))
    for p in d["points"]:
        if not p["feasible"]:
            print(f"batch {p['batch']}: infeasible: {p['message']}")
    return 0


def _add_common(sp: argparse.ArgumentParser, default_batch: str) -> None:
    sp.add_argument("--hardware", default="h100-sxm", help="device name, alias or path to a .toml spec")
    sp.add_argument("--tp", type=_pos_int("tp"), default=1, help="tensor-parallel GPUs")
    sp.add_argument("--ep", type=_pos_int("ep"), default=1, help="expert parallelism: 1 or equal to tp")
    sp.add_argument("--precision", default="bf16", help="weight format: bf16, fp8, fp4 (NVFP4), mxfp4, fp6")
    sp.add_argument("--kv-precision", default=None, help="KV-cache format (default bf16)")
    sp.add_argument("--batch", type=_int_list, default=_int_list(default_batch), help="comma-separated batch sizes")
    sp.add_argument("--context", type=_nonneg_int("context"), default=1024, help="tokens already in the KV cache")
    sp.add_argument("--format", choices=("table", "json", "csv"), default="table")
    sp.add_argument("--overlap", type=_overlap, default=None,
                    help="max: math and memory overlap (roofline), sum: no overlap, or an efficiency in [0, 1]; "
                         "default: the engine profile's calibrated value, else max")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="specroof", description="Predict when speculative decoding pays off, from datasheets "
                                             "and model configs.")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    h = sub.add_parser("hardware", help="list bundled devices or show one")
    h.add_argument("name", nargs="?")
    h.add_argument("--format", choices=("table", "json", "csv"), default="table")
    h.set_defaults(func=cmd_hardware)
    m = sub.add_parser("models", help="list bundled models or show one (id or path to config.json)")
    m.add_argument("name", nargs="?")
    m.add_argument("--format", choices=("table", "json", "csv"), default="table")
    m.set_defaults(func=cmd_models)
    s = sub.add_parser("step", help="price one forward pass per batch size")
    _add_common(s, "1,8,32,128")
    s.add_argument("--model", default="llama-3.1-8b", help="model id or path to an HF config.json")
    s.add_argument("--query-tokens", type=_pos_int("query-tokens"), default=1,
                   help="new tokens per sequence: 1 decode, k+1 verify, prompt length prefill")
    s.add_argument("--engine", default="ideal", help="engine profile name or path (overheads)")
    s.set_defaults(func=cmd_step)
    import importlib
    for mod, fn in (("cli_curve", "add_curve"), ("cli_advise", "add_advise"), ("cli_validate", "add_validate"),
                    ("cli_sweep", "add_sweep")):
        try:
            m = importlib.import_module(f"simulator.{mod}")
        except ModuleNotFoundError as e:  # a subcommand module not present in this tree
            if e.name != f"simulator.{mod}":
                raise
            continue
        getattr(m, fn)(sub, _add_common)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    a = ap.parse_args(argv)
    try:
        return int(a.func(a) or 0)
    except _USER_ERRORS as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
