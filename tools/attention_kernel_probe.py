"""Time an engine's own attention kernel (vLLM V1's Triton `unified_attention`) at decode and verify shapes:

    python tools/attention_kernel_probe.py --unified-attention VLLM/attention/ops/triton_unified_attention.py --out OUT
    TRITON_INTERPRET=1 python tools/attention_kernel_probe.py --unified-attention ... --out OUT --quick   # CPU

The kernel is vLLM's (the file named: an installed vLLM's, or one unpacked from its wheel; written against vLLM
0.9.2), loaded at run time, so no vLLM code lives in this repository. It is vLLM V1's Triton attention backend: one
launch serves a batch of sequences with q new tokens each over a paged KV cache (16-token blocks), the query heads of a
KV group packed into the rows of one tile, and q > 1 (a speculative verify) causal among the new tokens. Shapes: the
GQA layers of Llama-3.1-8B (32 query / 8 KV heads of 128) and Qwen3-30B-A3B (32 / 4 of 128) at TP1, bf16, batch
1..256, q = 1, 2, 4, 8, 1024 and 4096 cached tokens. It writes OUT/attention_kernel.csv in tools/gpu_probe.py's
columns (probe `unified_attention`) and OUT/attention_kernel_meta.json; CUDA-graph replay, random cache.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import logging
import sys
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_probe import Timer, _row, gqa_shape, kernel_probe  # noqa: E402

MODELS = ("meta-llama__Llama-3.1-8B-Instruct", "Qwen__Qwen3-30B-A3B")
BLOCK = 16                # vLLM's default KV-cache block size (tokens per page)


def load_attention(path: Path):
    """vLLM's `unified_attention` from the file at `path` (its one vLLM import, the logger, stood in for)."""
    if "vllm.logger" not in sys.modules:
        sys.modules.setdefault("vllm", types.ModuleType("vllm"))
        stub = types.ModuleType("vllm.logger")
        stub.init_logger = logging.getLogger
        sys.modules["vllm.logger"] = stub
    spec = importlib.util.spec_from_file_location("vllm_triton_unified_attention", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, "unified_attention"):
        raise ValueError(f"{path}: no unified_attention (is it vLLM's triton_unified_attention.py?)")
    return mod.unified_attention


def call(torch, attend, dev: str, dt, h: int, kv: int, dh: int, b: int, q: int, ctx: int):
    """One attention launch for b sequences of q new tokens after ctx cached ones, over a paged cache: the call, and
    its queries, key and value pages and page table (for `check`)."""
    pages = -(-(ctx + q) // BLOCK)
    k = torch.randn(b * pages, BLOCK, kv, dh, dtype=dt, device=dev)
    v = torch.randn(b * pages, BLOCK, kv, dh, dtype=dt, device=dev)
    table = torch.randperm(b * pages, device=dev).to(torch.int32).view(b, pages)     # scattered pages
    x = torch.randn(b * q, h, dh, dtype=dt, device=dev)
    out = torch.empty_like(x)
    cu = torch.arange(0, b * q + 1, q, dtype=torch.int32, device=dev)
    used = torch.full((b,), ctx + q, dtype=torch.int32, device=dev)

    def run():
        attend(x, k, v, out, cu, q, used, ctx + q, dh ** -0.5, True, (-1, -1), table, 0.0, None, None, None)
        return out
    return run, (x, k, v, table)


def check(torch, run, tensors, b: int, q: int, h: int, kv: int, dh: int, ctx: int) -> float:
    """Largest error of the kernel's output against a float32 reference, relative to the reference's largest value."""
    out = run().float()
    x, k, v, table = tensors
    worst = 0.0
    for s in range(b):
        keys = k[table[s]].reshape(-1, kv, dh)[:ctx + q].float()
        vals = v[table[s]].reshape(-1, kv, dh)[:ctx + q].float()
        qs = x[s * q:(s + 1) * q].float()                               # [q, h, dh]
        rep = h // kv
        sc = torch.einsum("qhd,lhd->hql", qs, keys.repeat_interleave(rep, 1)) * dh ** -0.5
        mask = torch.arange(ctx + q, device=x.device)[None, :] > (ctx + torch.arange(q, device=x.device))[:, None]
        p = torch.softmax(sc.masked_fill(mask, float("-inf")), -1)
        ref = torch.einsum("hql,lhd->qhd", p, vals.repeat_interleave(rep, 1))
        worst = max(worst, float((out[s * q:(s + 1) * q] - ref).abs().max() / ref.abs().max()))
    return worst


def rows_for(torch, attend, dev: str, timer: Timer, quick: bool, model: str) -> list[dict]:
    c = {"h": 4, "kv": 2, "dh": 32} if quick else gqa_shape(model)
    dt = torch.float16 if quick else torch.bfloat16     # Triton's CPU interpreter misreads bf16
    out = []
    grid = itertools.product((32,) if quick else (1024, 4096), (1, 2) if quick else (1, 4, 16, 64, 256),
                             (1, 4) if quick else (1, 2, 4, 8))
    for ctx, b, q in grid:
        run, tensors = call(torch, attend, dev, dt, c["h"], c["kv"], c["dh"], b, q, ctx)
        err = check(torch, run, tensors, b, q, c["h"], c["kv"], c["dh"], ctx) if b <= 4 else None
        kv_bytes = 2 * b * (ctx + q) * c["kv"] * c["dh"] * 2
        note = f"vLLM unified_attention, {str(dt).removeprefix('torch.')}, {BLOCK}-token pages" + (
            f"; max rel. error vs PyTorch {err:.1e}" if err is not None else "")
        out.append(_row("unified_attention", f"{model} h{c['h']} kv{c['kv']} d{c['dh']}",
                        timer(run, inner=1 if quick else 10), q=q, batch=b, context=ctx, bytes=kv_bytes,
                        flops=4 * b * q * c["h"] * (ctx + q) * c["dh"], note=note))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--unified-attention", type=Path, required=True,
                    help="vLLM's attention/ops/triton_unified_attention.py")
    ap.add_argument("--out", required=True, help="folder for attention_kernel.csv and attention_kernel_meta.json")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (with TRITON_INTERPRET=1 it runs on a CPU)")
    a = ap.parse_args(argv)

    def case(model: str):
        return lambda torch, attend, dev, timer, device: rows_for(torch, attend, dev, timer, a.quick, model)
    return kernel_probe("tools/attention_kernel_probe.py", "attention_kernel", a.unified_attention, a.out, a.quick,
                        lambda: load_attention(a.unified_attention),
                        lambda cuda: [(m, case(m)) for m in (MODELS[:1] if a.quick else MODELS)])


if __name__ == "__main__":
    sys.exit(main())
