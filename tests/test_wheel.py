"""The data folders are found from a non-editable wheel installed elsewhere (no checkout on sys.path)."""

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import simulator, json
from simulator.hardware import list_hardware, load_hardware
from simulator.model import list_models, load_model
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


@pytest.mark.slow
def test_wheel_loads_every_bundled_spec(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
                   check=True, cwd=tmp_path)
    wheel = next(dist.glob("specroof-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # --ignore-installed: a non-editable specroof in the base site-packages (CI installs one) must not satisfy it
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)], check=True,
                   cwd=tmp_path)
    away = tmp_path / "elsewhere"
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPECROOF_DATA_DIR")}
    out = subprocess.run([str(py), "-c", SCRIPT], check=True, cwd=away, env=env, capture_output=True, text=True)
    got = json.loads(out.stdout)
    assert str(env_dir) in got["file"]
    assert len(got["hardware"]) == len(list((ROOT / "hardware_specs").glob("*.toml")))
    assert "llama-3.1-8b" in got["models"] and "deepseek-v3" in got["models"]
    assert set(got["engines"]) >= {"ideal", "vllm", "sglang", "trtllm", "hf"}
    assert got["hazards"] > 0 and got["rows"] > 0
    cli = subprocess.run([str(env_dir / "bin" / "specroof"), "curve", "--format", "json", "--batch", "1,64"],
                         check=True, cwd=away, env=env, capture_output=True, text=True)
    assert json.loads(cli.stdout)["points"][0]["feasible"] is True
    adv = subprocess.run([str(env_dir / "bin" / "specroof"), "advise", "--batch", "1,4"], check=True, cwd=away,
                         env=env, capture_output=True, text=True)
    assert "best k per batch" in adv.stdout
