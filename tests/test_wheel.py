"""The data folders are found from a non-editable wheel installed elsewhere (no checkout on sys.path)."""

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import simulator, json
from simulator.hardware import list_hardware, load_hardware
from simulator.model import load_model
from simulator.registry import list_models
from simulator.engine import list_engines, load_engine
assert 'site-packages' in simulator.__file__, simulator.__file__
hw = [load_hardware(n).name for n in list_hardware()]
ms = [load_model(n).name for n in list_models()]
es = [load_engine(n).name for n in list_engines()]
from simulator.hazards import load_hazards
from simulator.validation import load_rows
hz = len(load_hazards())
rows = len(load_rows())
print(json.dumps({"file": simulator.__file__, "hardware": hw, "models": ms, "engines": es, "hazards": hz,
                  "rows": rows}))
"""


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    """Run a child; on failure the assertion shows its stderr (not just the exit code)."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} exited {r.returncode}:\n{r.stderr[-3000:]}"
    return r


@pytest.mark.slow
def test_wheel_loads_every_bundled_spec(tmp_path):
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist),
          str(ROOT)], cwd=tmp_path)
    wheel = next(dist.glob("specroof-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # The dependencies (numba, scipy, ...) come from the environment running the tests, which may itself be a venv
    # (a nested venv's system site-packages would be the base interpreter's): a plain path in a .pth file adds that
    # environment's site-packages after the new venv's own, without running its .pth hooks (so an editable specroof
    # there does not shadow the wheel).
    purelib = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    Path(purelib, "outer-env.pth").write_text("\n".join(sorted({sysconfig.get_paths()["purelib"],
                                                                  sysconfig.get_paths()["platlib"]})) + "\n")
    # --ignore-installed: a non-editable specroof in the outer environment (CI installs one) must not satisfy it
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)], cwd=tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPECROOF_DATA_DIR")}
    out = _run([str(py), "-c", SCRIPT], cwd=away, env=env)
    got = json.loads(out.stdout)
    assert str(env_dir) in got["file"]
    assert len(got["hardware"]) == len(list((ROOT / "hardware_specs").glob("*.toml")))
    assert "llama-3.1-8b" in got["models"] and "deepseek-v3" in got["models"]
    assert set(got["engines"]) >= {"ideal", "vllm", "sglang", "trtllm", "hf"}
    assert got["hazards"] > 0 and got["rows"] > 0
    cli = _run([str(env_dir / "bin" / "specroof"), "curve", "--format", "json", "--batch", "1,64"], cwd=away, env=env)
    assert json.loads(cli.stdout)["points"][0]["feasible"] is True
    adv = _run([str(env_dir / "bin" / "specroof"), "advise", "--batch", "1,4"], cwd=away, env=env)
    assert "best k per batch" in adv.stdout
