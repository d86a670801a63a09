"""Write validation/sources/srt_slurm_shares.csv: the decode instance's mem-fraction-static of every SGLang recipe of
NVIDIA/srt-slurm that validation/sources/inferencex_kv.csv cites (recipe path @ the commit it was read at), read from a
snapshot of that repository. Run by hand, `python tools/srt_slurm_shares.py GIT_DIR` (GIT_DIR: a clone or mirror of
NVIDIA/srt-slurm with those commits); the output is committed, so that tools/build_rows.py needs no network or
snapshot. A recipe's share is backend.sglang_config.decode's (aggregated's where it runs one instance). Needs PyYAML
(not a dependency of specroof: this tool is run by hand)."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import yaml

SRC = Path(__file__).resolve().parents[1] / "validation" / "sources"
CITED = re.compile(r"srt-slurm (recipes/[A-Za-z0-9_./-]+\.yaml)@([0-9a-f]+)")


def share(git_dir: str, path: str, commit: str) -> str:
    """The recipe's decode (or aggregated) mem-fraction-static at the commit, '' where it sets none."""
    txt = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, text=True,
                         check=True).stdout
    cfg = (yaml.safe_load(txt).get("backend") or {}).get("sglang_config") or {}
    inst = cfg.get("decode") or cfg.get("aggregated") or {}
    v = inst.get("mem-fraction-static")
    return "" if v is None else repr(float(v))


def main(git_dir: str) -> int:
    with open(SRC / "inferencex_kv.csv", encoding="utf-8") as f:
        cited = sorted({m for r in csv.DictReader(f) for m in CITED.findall(r["evidence"]) if "/trtllm/" not in m[0]})
    with open(SRC / "srt_slurm_shares.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["recipe", "commit", "decode_mem_fraction_static"])
        for path, commit in cited:
            w.writerow([path, commit, share(git_dir, path, commit)])
    print(f"wrote {SRC / 'srt_slurm_shares.csv'}: {len(cited)} recipes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA+srt-slurm/repo"))
