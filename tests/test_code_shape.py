"""The shape of the code, as the project's style asks (DEVELOPERS.md, issue #10): no module in simulator/ over 500
lines, no function over 60 lines or cyclomatic complexity over 15 (radon), no import of another module's private
name, no function-local import of a sibling module unless it says why (start-up time), ruff clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "simulator"
FILES = sorted(PKG.rglob("*.py"))
MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_COMPLEXITY = 500, 60, 15
# A function-local import of a sibling module must say why on its line: these words name the reasons accepted.
LAZY_REASONS = ("lazy", "start-up", "startup", "--help", "optional", "cycle")


def _rel(p: Path) -> str:
    return str(p.relative_to(REPO))


def test_no_module_over_500_lines():
    long = {_rel(p): n for p in FILES if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, long


def test_no_function_over_60_lines():
    long = []
    for p in FILES:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{_rel(p)}:{node.lineno} {node.name} ({n} lines)")
    assert not long, long


def test_no_function_over_complexity_15():
    radon = pytest.importorskip("radon.complexity")
    from radon.visitors import Class
    bad = []
    for p in FILES:
        for b in radon.cc_visit(p.read_text()):
            for f in [b, *getattr(b, "methods", [])]:
                if f.complexity > MAX_COMPLEXITY and not isinstance(f, Class):
                    bad.append(f"{_rel(p)}:{f.lineno} {f.name} (complexity {f.complexity})")
    assert not bad, bad


def _module_of(p: Path) -> str:
    parts = list(p.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _target(p: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _module_of(p).split(".")
    if p.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def test_no_import_of_another_modules_private_names():
    bad = []
    for p in FILES:
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and _target(p, node).startswith("simulator"):
                for a in node.names:
                    if a.name.startswith("_") and a.name != "__version__":
                        bad.append(f"{_rel(p)}:{node.lineno} imports {_target(p, node)}.{a.name}")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr.startswith("_") \
                    and not node.attr.startswith("__") and node.value.id in {"roofline", "pricing", "speedup"}:
                bad.append(f"{_rel(p)}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not bad, bad


def test_function_local_sibling_imports_say_why():
    bad = []
    for p in FILES:
        src = p.read_text().splitlines()
        tree = ast.parse("\n".join(src))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("simulator")):
                    line = src[node.lineno - 1].lower()
                    if not any(w in line for w in LAZY_REASONS):
                        bad.append(f"{_rel(p)}:{node.lineno} {src[node.lineno - 1].strip()}")
    assert not bad, bad


def test_ruff_clean():
    ruff = shutil.which("ruff") or (Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (pip install '.[test]')")
    r = subprocess.run([str(ruff), "check", "simulator", "tests", "tools", "benchmarks", "notebooks/_build.py"],
                       cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
