"""`specroof` command line: an explicit command table, one module per command, shared argument and formatting
helpers (args.py, fmt.py). Every user-facing failure is a SpecroofError, printed as one `error:` line, exit 2.

Each command module adds its parser at import (cheap) and imports the pricing modules inside its `run` function, so
that `specroof --help` and argument errors never import numba.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ..errors import SpecroofError
from ..version import __version__
from . import advise, curve, frontier, info, serve, step, sweep, validate
from .args import Parser

# (command, module): each module has add(subparsers) and run(namespace) -> exit code.
COMMANDS = (("hardware", info), ("models", info), ("step", step), ("curve", curve), ("advise", advise),
            ("serve", serve), ("frontier", frontier), ("validate", validate), ("calibrate", validate),
            ("sweep", sweep))


def build_parser() -> Parser:
    ap = Parser(prog="specroof", description="Predict when speculative decoding pays off, from datasheets and model "
                                             "configs (a prediction, not a measurement).")
    ap.add_argument("--version", action="version", version=f"specroof {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser, metavar="COMMAND")
    for name, mod in COMMANDS:
        mod.add(sub, name)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        return int(a.func(a) or 0)
    except SpecroofError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - `specroof ... | head`
        return 0
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback (a sweep resumes from its finished shards)
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
