"""Every command in the README's Commands block runs and prints no NaN (a newcomer's first check)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from simulator.cli import main

ROOT = Path(__file__).resolve().parent.parent
# Left out, each for a stated reason: the placeholder for the user's own trace, and the held-out validation run
# (10-20 min; tests/test_validate.py runs the cross-validation on a subset).
SKIP = ("YOUR_TRACE.csv", "validate --cv source")


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Commands\n\n```bash\n(.*?)```", text, flags=re.S).group(1)
    cmds, cur = [], ""
    for line in block.splitlines():
        line = line.split("  #")[0].rstrip()
        cur += " " + line.rstrip("\\").strip()
        if not line.endswith("\\"):
            cmds.append(cur.strip())
            cur = ""
    return [c for c in cmds if c]


def test_the_block_is_found():
    cmds = readme_commands()
    assert len(cmds) >= 15 and all(c.startswith("specroof ") for c in cmds)


@pytest.mark.parametrize("cmd", [c for c in readme_commands() if not any(s in c for s in SKIP)])
def test_readme_command_runs(cmd, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)                     # outputs (frontier.png, results/, serve.csv) land here
    args = [a.replace("examples/", f"{ROOT}/examples/") for a in shlex.split(cmd)[1:]]
    rc = main(args)
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "Traceback" not in err and not re.search(r"\bnan\b", out, flags=re.I), out[-2000:]


def test_readme_python_block_runs_and_prices_as_the_cli(capsys):
    """The README's Python block runs as written, and its acceptance (a length at k = 4 with EAGLE-3's decay)
    prices the curve `specroof curve --acceptance-length 3.2 --acceptance-k 4` prints (audit: the block built an
    i.i.d. acceptance, 1.817x at batch 1 where the CLI gives 1.769x)."""
    import json
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Python\n\n```python\n(.*?)```", text, flags=re.S).group(1)
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert main(["curve", "--acceptance-length", "3.2", "--acceptance-k", "4", "--batch", "1,8,64,256",
                 "--format", "json"]) == 0
    pts = json.loads(capsys.readouterr().out)["points"]
    assert [p["speedup"] for p in pts] == pytest.approx(list(ns["r"].speedup), rel=1e-12)


# The README's prose quotes what some commands print: "`specroof curve ...`: 1.82, 1.64, ..." or "`specroof serve
# ...` gives 1.80, 1.62, ...". Each such quote is run as written and its numbers checked to the digits printed (found
# stale on 2026-12-06: six of these figures had drifted with refits, and one quoted `serve` with `curve`'s --context).
# A curve quote lists its points' speedups; a serve quote its points' E2E speedups, or, where the numbers are followed
# by "output tokens/s per GPU", the plain runs' tokens/s per GPU.
QUOTE = re.compile(r"`(specroof (curve|serve) [^`]+)`(?: \([^)]*\))?(?::| gives) "
                   r"(\d+\.\d+(?:(?:,| and|, and) \d+\.\d+)*)( output tokens/s per GPU)?")


def readme_quotes() -> list[tuple[str, str, list[str], bool]]:
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    return [(m.group(1), m.group(2), re.findall(r"\d+\.\d+", m.group(3)), bool(m.group(4)))
            for m in QUOTE.finditer(text)]


def test_the_quoted_figures_are_found():
    assert len(readme_quotes()) >= 5


@pytest.mark.parametrize("cmd, sub, quoted, plain_per_gpu", readme_quotes(), ids=lambda x: str(x)[:60])
def test_readme_quoted_figures_are_what_the_command_prints(cmd, sub, quoted, plain_per_gpu, capsys):
    import json
    assert main(shlex.split(cmd)[1:] + ["--format", "json"]) == 0, capsys.readouterr().err
    pts = json.loads(capsys.readouterr().out)["points"]
    if sub == "curve":
        got = [p["speedup"] for p in pts]
    else:
        got = [p["base"]["tokens_per_s_per_gpu"] if plain_per_gpu else p["e2e_speedup"] for p in pts]
    assert len(got) == len(quoted), (cmd, got)
    for q, g in zip(quoted, got):
        digits = len(q.split(".")[1])
        assert abs(g - float(q)) <= 0.5 * 10 ** -digits + 1e-9, (cmd, quoted, [round(x, digits) for x in got])


def test_readme_blind_test_figures_are_blind_test_md():
    """The README's blind-test summary and band coverage are the last lines tools/blind_test.py wrote into
    validation/BLIND_TEST.md (tests/test_validate.py keeps that table current): the README had said 9 of 9 rows inside
    their bands after round 9 made it 11 of 11."""
    doc = (ROOT / "validation" / "BLIND_TEST.md").read_text(encoding="utf-8")
    med, k, n = re.search(r"Median absolute error (\d+\.\d)% over (\d+) rows; (\d+) of \2 within 20 %", doc).group(
        1, 3, 2)
    hit, cov = re.search(r"(\d+) of the (\d+) speedup rows a band covers", doc).groups()
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"{n} published measurements" in readme and f"miss by {med} % (median; {k} of {n} within 20 %)" in readme
    assert f"of the {cov} blind speedup rows a band covers" in readme and f"{hit} measured inside it" in readme
    assert hit != cov or f"held all {cov} blind speedup rows they cover" in readme
    signed = re.search(r"by kind: speedups ([+-]\d+\.\d)% \((\d+) rows\), times ([+-]\d+\.\d)% \((\d+) rows\), rates "
                       r"([+-]\d+\.\d)% \((\d+) rows\)", doc).groups()
    assert (f"speedups {signed[0]} % ({signed[1]} rows), times {signed[2]} % ({signed[3]} rows) and rates "
            f"{signed[4]} % ({signed[5]} rows)") in readme


def test_readme_held_out_bands_are_calibration_heldout_toml():
    """Every interval the README lists where it describes calibration/heldout.toml is one of the file's bands, and every
    band of the file is listed (five had drifted when the bands were last rewritten)."""
    from simulator.heldout import load_bands
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    para = text.split("`calibration/heldout.toml` holds the intervals", 1)[1].split("A point no regime covers", 1)[0]
    bands = {f"{b.lo:.2f}-{b.hi:.2f}x" for b in load_bands()}
    listed = set(re.findall(r"\d\.\d\d-\d\.\d\dx", para))
    assert listed == bands, (sorted(listed - bands), sorted(bands - listed))
