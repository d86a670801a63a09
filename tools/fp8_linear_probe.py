"""Time an engine's own fp8 linear layer (vLLM's Triton per-token-group activation quantisation and its w8a8 block-fp8
GEMM) against a bf16 GEMM on one GPU, at DeepSeek-V3's TP8 projection shapes:

    python tools/fp8_linear_probe.py --fp8-utils VLLM/model_executor/layers/quantization/utils/fp8_utils.py --out OUT
    TRITON_INTERPRET=1 python tools/fp8_linear_probe.py --fp8-utils ... --out OUT --quick   # CPU smoke test

The question it answers: what does the activation quantisation that precedes every fp8 GEMM cost at decode shapes,
and what does the fp8 GEMM itself cost against the bf16 one. vLLM's `apply_w8a8_block_fp8_linear` runs
`per_token_group_quant_fp8` (one kernel: bf16 activations to e4m3 in groups of 128 columns, float32 scales) and then
`w8a8_block_fp8_matmul` (the Triton `_w8a8_block_fp8_matmul`), block sizes from vLLM's tuned file for (N, K, device)
in the configs folder beside the source file, the entry nearest M, else its default. Both Triton kernels are read from
the vLLM source file named (an installed vLLM's, or one unpacked from its wheel; written against vLLM 0.9.2), so no
vLLM code lives in this repository.

Rows (tools/gpu_probe.py's columns), per shape and M = 1..256 tokens: `fp8_quant` the quantisation kernel alone,
`fp8_gemm` the GEMM kernel alone, `fp8_linear` both, `bf16_gemm` PyTorch's bf16 GEMM of the same shape. Each timed
call cycles through enough copies of its weights (at least 256 MiB in all) that they stream from HBM, as a decode
step's distinct layers do, not from L2. Random weights, CUDA-graph replay, mean per call.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_probe import Timer, _row, kernel_probe, load_triton  # noqa: E402

KERNELS = ("_per_token_group_quant_fp8", "_w8a8_block_fp8_matmul")
BLOCK = 128            # DeepSeek-V3's checkpoint: 128 x 128 weight blocks, activations in groups of 128 columns
# DeepSeek-V3 at TP8 (per GPU), (name, N, K): fused q_a + kv_a, q_b, o_proj, shared expert up and down.
SHAPES = (("q_a+kv_a", 2112, 7168), ("q_b", 3072, 1536), ("o_proj", 7168, 2048), ("shared_up", 512, 7168),
          ("shared_down", 7168, 256))
M_SET = (1, 2, 4, 8, 16, 32, 64, 128, 256)
STREAM_BYTES = 256 << 20        # weights cycled per timed call: well beyond an H100 / H200 / B200 L2


def load_kernels(path: Path) -> dict[str, object]:
    """vLLM's two Triton kernels, compiled from the source file at `path`."""
    return load_triton(path, KERNELS, "vLLM's fp8_utils.py")


def config_for(cfg_dir: Path | None, device: str, n: int, k: int, m: int) -> tuple[dict, str]:
    """vLLM's block sizes for M tokens (get_w8a8_block_fp8_configs): its tuned file, the entry nearest M; else its
    default. Returns the config and where it came from."""
    name = f"N={n},K={k},device_name={device.replace(' ', '_')},dtype=fp8_w8a8,block_shape=[{BLOCK},{BLOCK}].json"
    path = cfg_dir / name if cfg_dir else None
    if path is not None and path.exists():
        table = {int(x): v for x, v in json.loads(path.read_text()).items()}
        return dict(table[min(table, key=lambda x: abs(x - m))]), f"tuned {name}"
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": BLOCK, "BLOCK_SIZE_K": BLOCK, "GROUP_SIZE_M": 32, "num_warps": 4,
            "num_stages": 2}, "vLLM default"


def quant(torch, kern, x, xq, xs) -> None:
    """per_token_group_quant_fp8 into preallocated outputs, launched as vLLM launches it."""
    import triton
    fi = torch.finfo(xq.dtype)
    kern[(x.numel() // BLOCK,)](x, xq, xs, BLOCK, x.shape[1], x.stride(0), 1e-10, fp8_min=fi.min, fp8_max=fi.max,
                                BLOCK=triton.next_power_of_2(BLOCK), num_warps=1, num_stages=1)


def gemm(kern, a, b, c, a_s, b_s, cfg: dict) -> None:
    """w8a8_block_fp8_matmul into a preallocated output, launched as vLLM launches it (weights [N, K])."""
    import triton
    m, n, k = a.shape[0], b.shape[0], b.shape[1]
    grid = (triton.cdiv(m, cfg["BLOCK_SIZE_M"]) * triton.cdiv(n, cfg["BLOCK_SIZE_N"]),)
    kern[grid](a, b, c, a_s, b_s, m, n, k, BLOCK, BLOCK, a.stride(-2), a.stride(-1), b.stride(1), b.stride(0),
               c.stride(-2), c.stride(-1), a_s.stride(-2), a_s.stride(-1), b_s.stride(1), b_s.stride(0), **cfg)


def _weights(torch, n: int, k: int, copies: int, dev: str, fp8: bool):
    if not fp8:
        return [torch.randn(k, n, device=dev).to(torch.bfloat16) * 0.05 for _ in range(copies)], None
    dt = torch.float8_e4m3fn
    w = [(torch.randn(n, k, device=dev) * 0.05).to(dt) for _ in range(copies)]
    s = [torch.rand(-(-n // BLOCK), k // BLOCK, device=dev) * 1e-2 + 1e-3 for _ in range(copies)]
    return w, s


def _check(torch, kerns, cfg, x, w, ws) -> float:
    """The fp8 linear's output against float32 on the dequantised weights and the quantised activations, relative
    to the reference's largest value."""
    m, k, n = x.shape[0], x.shape[1], w.shape[0]
    xq = torch.empty(m, k, dtype=w.dtype, device=x.device)
    xs = torch.empty(m, k // BLOCK, dtype=torch.float32, device=x.device)
    c = torch.empty(m, n, dtype=torch.bfloat16, device=x.device)
    quant(torch, kerns[KERNELS[0]], x, xq, xs)
    gemm(kerns[KERNELS[1]], xq, w, c, xs, ws, cfg)
    a = (xq.float().view(m, -1, BLOCK) * xs[..., None]).view(m, k)
    wd = w.float() * ws.repeat_interleave(BLOCK, 0)[:n].repeat_interleave(BLOCK, 1)      # N need not be whole blocks
    ref = a @ wd.t()
    return float((c.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def _calls(torch, kerns, x, w8, s8, cfg: dict):
    """The three timed calls at one M: (quantisation alone, GEMM alone, both). Each GEMM call takes the next weight
    copy, so a graph of len(w8) calls streams every copy once."""
    m, k, n = x.shape[0], x.shape[1], w8[0].shape[0]
    xq = torch.empty(m, k, dtype=w8[0].dtype, device=x.device)
    xs = torch.empty(m, k // BLOCK, dtype=torch.float32, device=x.device)
    c = torch.empty(m, n, dtype=x.dtype, device=x.device)
    qk, gk, turn = kerns[KERNELS[0]], kerns[KERNELS[1]], iter(range(1 << 30))

    def q_only():
        quant(torch, qk, x, xq, xs)

    def g_only():
        i = next(turn) % len(w8)
        gemm(gk, xq, w8[i], c, xs, s8[i], cfg)

    def linear():
        q_only()
        g_only()
    q_only()                       # the GEMM alone reads quantised activations
    return q_only, g_only, linear


def _bf16_call(x, w16):
    turn = iter(range(1 << 30))
    return lambda: x @ w16[next(turn) % len(w16)]


def _copies(nbytes: int, quick: bool) -> int:
    return 1 if quick else max(4, min(64, -(-STREAM_BYTES // nbytes)))


def shape_rows(torch, kerns, dev: str, timer: Timer, quick: bool, cfg_dir: Path | None, device: str,
               name: str, n: int, k: int) -> list[dict]:
    out, cuda = [], dev == "cuda"
    w8, s8 = _weights(torch, n, k, _copies(n * k, quick), dev, True)
    w16, _ = _weights(torch, n, k, _copies(2 * n * k, quick), dev, False) if cuda else (None, None)
    case = f"deepseek-v3-tp8 {name} {k}x{n}"
    wbytes = n * k + (-(-n // BLOCK)) * (k // BLOCK) * 4
    for m in (1, 16) if quick else M_SET:
        x = torch.randn(m, k, device=dev).to(torch.bfloat16 if cuda else torch.float16)
        cfg, src = config_for(cfg_dir, device, n, k, m)
        err = _check(torch, kerns, cfg, x, w8[0], s8[0]) if m <= 16 else None
        note = f"{src}; {len(w8)} weight copies cycled" + (f"; max rel. error vs float32 {err:.1e}"
                                                            if err is not None else "")
        q_only, g_only, linear = _calls(torch, kerns, x, w8, s8, cfg)
        inner = len(w8)
        out.append(_row("fp8_quant", case, timer(q_only, inner=inner), m=m, bytes=m * k * 3 + m * k // BLOCK * 4,
                        note=f"vLLM per_token_group_quant_fp8 (bf16 in, e4m3 out, groups of {BLOCK})"))
        out.append(_row("fp8_gemm", case, timer(g_only, inner=inner), m=m, bytes=wbytes + m * k + 2 * m * n,
                        flops=2 * m * n * k, note="vLLM _w8a8_block_fp8_matmul; " + note))
        out.append(_row("fp8_linear", case, timer(linear, inner=inner), m=m, bytes=wbytes + 3 * m * k + 2 * m * n,
                        flops=2 * m * n * k, note="quantisation + GEMM, as apply_w8a8_block_fp8_linear; " + note))
        if cuda:
            out.append(_row("bf16_gemm", case, timer(_bf16_call(x, w16), inner=len(w16)), m=m,
                            bytes=2 * (n * k + m * k + m * n), flops=2 * m * n * k,
                            note=f"PyTorch bf16 GEMM; {len(w16)} weight copies cycled"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fp8-utils", type=Path, required=True,
                    help="vLLM's model_executor/layers/quantization/utils/fp8_utils.py")
    ap.add_argument("--out", required=True, help="folder for fp8_linear.csv and fp8_linear_meta.json")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (with TRITON_INTERPRET=1 it runs on a CPU)")
    a = ap.parse_args(argv)
    cfg_dir = a.fp8_utils.parent / "configs"

    def case(name: str, n: int, k: int):
        if a.quick:
            n, k = 320, 256           # N not a whole number of blocks, as q_a+kv_a's 2112
        return lambda torch, kerns, dev, timer, device: shape_rows(
            torch, kerns, dev, timer, a.quick, cfg_dir if cfg_dir.is_dir() else None, device, name, n, k)
    return kernel_probe("tools/fp8_linear_probe.py", "fp8_linear", a.fp8_utils, a.out, a.quick,
                        lambda: load_kernels(a.fp8_utils),
                        lambda cuda: [(name, case(name, n, k)) for name, n, k in (SHAPES[:1] if a.quick else SHAPES)])


if __name__ == "__main__":
    sys.exit(main())
