"""Small helpers shared by the test modules (one copy each)."""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from simulator.cli import main
from simulator.engine import load_engine
from simulator.errors import SpecError
from simulator.model import load_model
from simulator.workload import Parallelism, Precision, forward_pass


def run(capsys, *args: str) -> tuple[int, str, str]:
    """Run the CLI in-process: (exit code, stdout, stderr); argparse's SystemExit becomes the code."""
    try:
        rc = main(list(args))
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


@functools.cache
def model(mid):
    """A bundled model, loaded once per test session."""
    return load_model(mid)


@functools.cache
def ops_for(mid, tp=1, ep=1, weights="bf16", logits="all", domain=1 << 30):
    """Forward-pass ops of a bundled model (collectives over more than `domain` GPUs on the scale-out link)."""
    return forward_pass(model(mid), Precision(weights=weights), Parallelism(tp, ep), logits, scaleup_domain=domain)


def load_tool(name: str) -> ModuleType:
    """A script of tools/ imported as a module (tools/ is not a package)."""
    path = Path(__file__).resolve().parents[1] / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod          # a dataclass in the script looks its module up while it is being defined
    spec.loader.exec_module(mod)
    return mod


def refuse_profile_value(capsys, tmp_path, engine: str, key: str, value: str, needle: str, *argv: str) -> None:
    """A copy of bundled profile `engine` with [attention] `key` set to `value` is refused: load_engine raises a
    SpecError naming the file, the key and `needle`, and the CLI run `argv --engine COPY` exits 2 with that key on
    stderr and no traceback."""
    src = (Path(__file__).resolve().parents[1] / "engine_profiles" / f"{engine}.toml").read_text()
    p = tmp_path / "mine.toml"
    head = re.search(rf"{key} = {{ value = [^,]+", src).group(0)
    p.write_text(src.replace(head, f"{key} = {{ value = {value}", 1))
    with pytest.raises(SpecError, match=rf"mine\.toml: \[attention\] {key}.*{needle}"):
        load_engine(str(p))
    rc, _, err = run(capsys, *argv, "--engine", str(p))
    assert rc == 2 and key in err and "Traceback" not in err
