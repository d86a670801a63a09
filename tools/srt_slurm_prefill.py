"""Write validation/sources/srt_slurm_prefill.csv: the PREFILL instance of every disaggregated srt-slurm recipe
(NVIDIA/srt-slurm, recipe path @ the commit it was read at) that validation/rows.csv's disaggregated rows cite: its
layout in specroof's terms (tp, dp, ep of one prefill instance), its prompt-token budget per attention-DP rank (chunk)
and its prefill instances. Run by hand, `python tools/srt_slurm_prefill.py GIT_DIR` (GIT_DIR: a clone or mirror of
NVIDIA/srt-slurm with those commits); the output is committed, so that mapping it into validation/rows.csv (which no
tool does yet: the rows carry no prefill layout, README "Findings") needs no network or snapshot. Needs PyYAML (not a
dependency of specroof: this tool is run by hand).

SGLang (backend.sglang_config.prefill): tp-size / tensor-parallel-size is the instance's GPUs; with
enable-dp-attention its dp-size ranks each run attention on tp / dp GPUs (specroof tp = tp-size / dp-size, dp =
dp-size), and SGLang divides chunked-prefill-size by dp-size (python/sglang/srt/server_args.py,
ServerArgs.__post_init__ in older builds, _handle_data_parallelism in current ones: under enable_dp_attention,
`self.chunked_prefill_size = self.chunked_prefill_size // self.dp_size`), so the chunk per rank is
chunked-prefill-size // dp. TensorRT-LLM (backend.trtllm_config.prefill): tensor_parallel_size GPUs; with
enable_attention_dp each is an attention-DP rank (specroof tp 1, dp = tensor_parallel_size), else tp =
tensor_parallel_size; ep = moe_expert_parallel_size; chunk = max_num_tokens (the tokens one rank's batch holds).
Instances: resources.prefill_workers."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1] / "validation"
CITED = re.compile(r"srt-slurm (recipes/[A-Za-z0-9_./-]+\.yaml)@([0-9a-f]+)")
COLS = ["recipe", "commit", "prefill_tp", "prefill_dp", "prefill_ep", "prefill_chunk", "prefill_workers"]


def _get(d: dict[str, Any], *keys: str) -> Any:
    return next((d[k] for k in keys if d.get(k) is not None), None)


def _sglang(p: dict[str, Any]) -> tuple[int, int, int, str]:
    n = int(_get(p, "tp-size", "tensor-parallel-size") or 1)
    dp = int(_get(p, "dp-size", "data-parallel-size") or 1)
    ep = int(_get(p, "ep-size", "expert-parallel-size") or 1)
    chunk = _get(p, "chunked-prefill-size")
    if p.get("enable-dp-attention") and dp > 1:
        return n // dp, dp, ep, "" if chunk is None else str(int(chunk) // dp)
    return n, 1, ep, "" if chunk is None else str(int(chunk))


def _trtllm(p: dict[str, Any]) -> tuple[int, int, int, str]:
    n = int(p.get("tensor_parallel_size") or 1)
    ep = int(p.get("moe_expert_parallel_size") or 1)
    chunk = "" if p.get("max_num_tokens") is None else str(int(p["max_num_tokens"]))
    return (1, n, ep, chunk) if p.get("enable_attention_dp") else (n, 1, ep, chunk)


def prefill(git_dir: str, path: str, commit: str) -> list[str]:
    """One recipe's row of COLS ('' where the recipe has no prefill instance or does not say)."""
    txt = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, text=True,
                         check=True).stdout
    doc = yaml.safe_load(txt)
    be, res = doc.get("backend") or {}, doc.get("resources") or {}
    sg, trt = (be.get("sglang_config") or {}).get("prefill"), (be.get("trtllm_config") or {}).get("prefill")
    if sg is None and trt is None:
        return [path, commit, "", "", "", "", ""]
    tp, dp, ep, chunk = _sglang(sg) if sg is not None else _trtllm(trt)
    return [path, commit, str(tp), str(dp), str(ep), chunk, str(res.get("prefill_workers") or "")]


def main(git_dir: str) -> int:
    with open(ROOT / "rows.csv", encoding="utf-8") as f:
        cited = sorted({m for r in csv.DictReader(f) if "disaggregated:" in r["notes"]
                        for m in CITED.findall(r["notes"])})
    with open(ROOT / "sources" / "srt_slurm_prefill.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLS)
        for path, commit in cited:
            w.writerow(prefill(git_dir, path, commit))
    print(f"wrote {ROOT / 'sources' / 'srt_slurm_prefill.csv'}: {len(cited)} recipes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/work/.mirror/NVIDIA+srt-slurm/repo"))
