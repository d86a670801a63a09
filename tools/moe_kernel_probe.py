"""Time an engine's own fused-MoE kernel (vLLM's Triton `fused_moe_kernel`) on one GPU, at the routed-expert shapes
that tools/gpu_probe.py times in PyTorch's grouped GEMM:

    python tools/moe_kernel_probe.py --fused-moe VLLM/model_executor/layers/fused_moe/fused_moe.py --out OUT
    python tools/moe_kernel_probe.py --fused-moe ... --out OUT --cases qwen3-30b-a3b-tp2 qwen3-30b-a3b-tp4   # some
    TRITON_INTERPRET=1 python tools/moe_kernel_probe.py --fused-moe ... --out OUT --quick   # CPU smoke test

The kernel is read from the vLLM source file named (an installed vLLM's, or one unpacked from its wheel; written
against vLLM 0.9.2's signature): its `fused_moe_kernel` and `write_zeros_to_output` Triton functions are taken from
that file at run time, so no vLLM code lives in this repository. The launch follows vLLM's `fused_experts_impl`
for bf16 weights: tokens aligned to the block size per expert (done once, outside the timed call, as the routing is
fixed), the w13 GEMM, SiLU-and-mul, the w2 GEMM with the routing weights, the sum over the top-k; block sizes from
vLLM's tuned config for the device where the configs folder beside the file has one (`E=<E>,N=<f>,device_name=...`,
the entry nearest M, as `try_get_optimal_moe_config` picks), else its default rule (`get_default_config`).
It writes OUT/moe_kernel.csv in tools/gpu_probe.py's columns (probe `fused_moe`, and `fused_moe_gemms` for the two
GEMM kernels alone; on a GPU also `fused_moe_fp8` and `fused_moe_fp8_gemms`: fp8 weights in 128 x 128 blocks and
activations quantised per token and 128 columns, vLLM's path for DeepSeek-V3's and Qwen3-FP8's checkpoints) and
OUT/moe_kernel_meta.json. Uniform routing, random weights, CUDA-graph replay.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_probe import M_SET, MOE, Timer, _row, kernel_probe, load_triton  # noqa: E402

KERNELS = ("write_zeros_to_output", "fused_moe_kernel")


def load_kernel(path: Path):
    """vLLM's `fused_moe_kernel` (with the helper it calls), compiled from the source file at `path`."""
    return load_triton(path, KERNELS, "vLLM's fused_moe.py")["fused_moe_kernel"]


FP8_BLOCK = 128          # DeepSeek-V3's and Qwen3-FP8's quantisation: 128 x 128 weight blocks, 1 x 128 activations


def blocks_fit(case: str) -> bool:
    """Whether a case's expert shard is whole 128 x 128 fp8 blocks (Qwen3-30B-A3B's 192 columns at TP4 are not: the
    fp8 checkpoint's block scales cannot split there), so that its fp8 rows can be timed."""
    _, _, d, f = MOE[case]
    return d % FP8_BLOCK == 0 and f % FP8_BLOCK == 0


def config_for(cfg_dir: Path | None, device: str, e: int, f: int, m: int, fp8: bool = False) -> tuple[dict, str]:
    """vLLM's block sizes for M tokens: its tuned file for (E, N = f, device[, fp8 blocks]), the entry nearest M;
    else its default rule (get_default_config). Returns the config and where it came from."""
    quant = f",dtype=fp8_w8a8,block_shape=[{FP8_BLOCK},{FP8_BLOCK}]" if fp8 else ""
    name = f"E={e},N={f},device_name={device.replace(' ', '_')}{quant}.json"
    path = cfg_dir / name if cfg_dir else None
    if path is not None and path.exists():
        table = {int(k): v for k, v in json.loads(path.read_text()).items()}
        return dict(table[min(table, key=lambda x: abs(x - m))]), f"tuned {name}"
    if fp8:
        return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": FP8_BLOCK, "BLOCK_SIZE_K": FP8_BLOCK, "GROUP_SIZE_M": 32,
                "num_warps": 4, "num_stages": 3}, "vLLM default"
    if m <= e:
        return {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 1}, "vLLM default"
    return {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, "vLLM default"


def quant_tokens(torch, x):
    """Per-token, per-128-column fp8 (e4m3) quantisation of activations, as vLLM's per_token_group_quant_fp8:
    (values [M, K], float32 scales [M, K / 128])."""
    g = x.float().view(x.shape[0], -1, FP8_BLOCK)
    s = g.abs().amax(-1).clamp_min(1e-10) / 448.0
    return (g / s[..., None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn).view(x.shape), s


def quant_blocks(torch, w):
    """128 x 128 block fp8 (e4m3) quantisation of expert weights [E, N, K]: (values, float32 scales
    [E, N / 128, K / 128]), as DeepSeek-V3's checkpoint stores them."""
    e, n, k = w.shape
    b = w.float().view(e, n // FP8_BLOCK, FP8_BLOCK, k // FP8_BLOCK, FP8_BLOCK)
    s = b.abs().amax(dim=(2, 4)).clamp_min(1e-10) / 448.0
    q = (b / s[:, :, None, :, None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.view(e, n, k), s


def align(torch, topk_ids, e: int, block: int):
    """vLLM's moe_align_block_size: the (token, k) slots sorted by expert, each expert's run padded to a multiple of
    the block with the sentinel M * top_k; the expert of each block; the padded length."""
    flat = topk_ids.flatten()
    n = flat.numel()
    counts = torch.bincount(flat, minlength=e).tolist()
    order = torch.argsort(flat, stable=True).tolist()
    ids, experts, at = [], [], 0
    for ex, c in enumerate(counts):
        pad = -(-c // block) * block
        ids += order[at:at + c] + [n] * (pad - c)
        experts += [ex] * (pad // block)
        at += c
    dev = topk_ids.device
    return (torch.tensor(ids, dtype=torch.int32, device=dev), torch.tensor(experts, dtype=torch.int32, device=dev),
            torch.tensor([len(ids)], dtype=torch.int32, device=dev))


def _launch(kernel, tl, a, b, c, weights, aligned, top_k: int, routed: bool, cfg: dict, scales=None) -> None:
    """One call of the kernel as vLLM's invoke_fused_moe_kernel makes it: bf16 / fp16, or fp8 with 128 x 128 block
    scales (`scales` = (activation scales [M, K / 128], weight scales [E, N / 128, K / 128]))."""
    import triton
    sorted_ids, expert_ids, npad = aligned
    cfg = dict(cfg)
    em = sorted_ids.shape[0]
    if a.shape[0] < cfg["BLOCK_SIZE_M"]:         # vLLM: at small M, skip blocks that cannot hold a token
        em = min(em, a.shape[0] * top_k * cfg["BLOCK_SIZE_M"])
    grid = (triton.cdiv(em, cfg["BLOCK_SIZE_M"]) * triton.cdiv(b.shape[1], cfg["BLOCK_SIZE_N"]),)
    sa, sb = scales if scales is not None else (None, None)
    st = (sa.stride(0), sa.stride(1), sb.stride(0), sb.stride(2), sb.stride(1)) if scales else (0,) * 5
    group = FP8_BLOCK if scales else 0
    if scales:
        cfg["BLOCK_SIZE_K"] = min(cfg["BLOCK_SIZE_K"], FP8_BLOCK)
    kernel[grid](a, b, c, sa, sb, weights, sorted_ids, expert_ids, npad, b.shape[1], b.shape[2], em,
                 a.shape[0] * top_k, a.stride(0), a.stride(1), b.stride(0), b.stride(2), b.stride(1), c.stride(1),
                 c.stride(2), *st, group, group, MUL_ROUTED_WEIGHT=routed, top_k=top_k,
                 compute_type=tl.float16 if str(c.dtype) == "torch.float16" else tl.bfloat16,
                 use_fp8_w8a8=scales is not None, use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False,
                 **cfg)


def experts_call(torch, kernel, x, w13, w2, topk_ids, topk_w, cfg: dict, fp8: tuple | None = None):
    """fused_experts as vLLM runs it: (the whole call, the two GEMM kernels alone). `fp8` = (w13 scales, w2 scales)
    for fp8 weights: the activations are quantised per token and 128 columns before each GEMM, as vLLM does."""
    import triton.language as tl
    m, k = topk_ids.shape
    f = w2.shape[2]
    out_dt = torch.bfloat16 if fp8 else x.dtype
    aligned = align(torch, topk_ids, w13.shape[0], cfg["BLOCK_SIZE_M"])
    c1 = torch.empty(m, k, 2 * f, dtype=out_dt, device=x.device)
    c2 = torch.empty(m * k, f, dtype=out_dt, device=x.device)
    c3 = torch.empty(m, k, w2.shape[1], dtype=out_dt, device=x.device)
    silu = torch.nn.functional.silu
    q = quant_tokens if fp8 else (lambda _, a: (a, None))
    s13, s2 = fp8 if fp8 else (None, None)
    xq, xs = q(torch, x)
    c2q, c2s = q(torch, c2)

    def gemm(a, a_s, w, w_s, c, top, routed):
        _launch(kernel, tl, a, w, c, topk_w, aligned, top, routed, cfg, (a_s, w_s) if fp8 else None)

    def gemms():
        gemm(xq, xs, w13, s13, c1, k, False)
        gemm(c2q, c2s, w2, s2, c3, 1, True)

    def whole():
        a, a_s = q(torch, x)
        gemm(a, a_s, w13, s13, c1, k, False)
        g, u = c1.view(-1, 2 * f).chunk(2, dim=-1)
        torch.mul(silu(g), u, out=c2)
        a, a_s = q(torch, c2)
        gemm(a, a_s, w2, s2, c3, 1, True)
        return c3.sum(dim=1)
    return whole, gemms


def check(torch, whole, x, w13, w2, topk_ids, topk_w) -> float:
    """Largest error of the kernel's output against a plain per-token PyTorch reference (float32, from the weights
    as given: dequantised for fp8), relative to the reference's largest value."""
    f = w2.shape[2]
    ref = torch.zeros(x.shape[0], w2.shape[1], dtype=torch.float32, device=x.device)
    for i in range(x.shape[0]):
        for j in range(topk_ids.shape[1]):
            ex = int(topk_ids[i, j])
            h = x[i].float() @ w13[ex].float().t()
            h = torch.nn.functional.silu(h[:f]) * h[f:]
            ref[i] += topk_w[i, j].float() * (h @ w2[ex].float().t())
    got = whole().float()
    return float((got - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def _dequant(torch, q, s):
    e, n, k = q.shape
    return (q.float().view(e, n // FP8_BLOCK, FP8_BLOCK, k // FP8_BLOCK, FP8_BLOCK)
            * s[:, :, None, :, None]).view(e, n, k)


def rows_for(torch, kernel, dev: str, timer: Timer, quick: bool, cfg_dir: Path | None, device: str,
             model: str, fp8: bool = False) -> list[dict]:
    out, (e, k, d, f) = [], MOE[model]
    dt = torch.float16 if quick else torch.bfloat16     # Triton's CPU interpreter misreads bf16 (fp16 is exact there)
    if quick:
        e, d, f = 16, 64, 32
    w13 = torch.randn(e, 2 * f, d, dtype=dt, device=dev) * 0.05
    w2 = torch.randn(e, d, f, dtype=dt, device=dev) * 0.05
    scales, ref_w = None, (w13, w2)
    if fp8:
        (w13, s13), (w2, s2) = quant_blocks(torch, w13), quant_blocks(torch, w2)
        scales, ref_w = (s13, s2), (_dequant(torch, w13, s13), _dequant(torch, w2, s2))
    kind, wbytes = ("fused_moe_fp8", 1) if fp8 else ("fused_moe", 2)
    for m in (1, 8) if quick else M_SET:
        x = torch.randn(m, d, dtype=dt, device=dev)
        topk_ids = torch.stack([torch.randperm(e, device=dev)[:k] for _ in range(m)]).to(torch.int32)
        touched = int(torch.unique(topk_ids).numel())       # uniform routing, as the grouped-GEMM rows
        topk_w = torch.rand(m, k, dtype=torch.float32, device=dev)
        cfg, src = config_for(cfg_dir, device, e, f, m, fp8)
        whole, gemms = experts_call(torch, kernel, x, w13, w2, topk_ids, topk_w, cfg, scales)
        err = check(torch, whole, x, *ref_w, topk_ids, topk_w) if m <= 8 else None
        case = f"{model} E{e} top{k} {d}x{f}"
        what = "fp8 e4m3, 128 x 128 blocks" if fp8 else str(dt).removeprefix("torch.")
        note = f"vLLM fused_moe_kernel, {what}; {src}; {touched} experts touched" + (
            f"; max rel. error vs PyTorch {err:.1e}" if err is not None else "")
        work = dict(m=m, bytes=touched * 3 * d * f * wbytes, flops=2 * m * k * 3 * d * f)
        out.append(_row(kind, case, timer(whole, inner=1 if quick else 10), **work, note=note))
        out.append(_row(f"{kind}_gemms", case, timer(gemms, inner=1 if quick else 10), **work,
                        note=note + "; the two GEMM kernels alone"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fused-moe", type=Path, required=True, help="vLLM's model_executor/layers/fused_moe/fused_moe.py")
    ap.add_argument("--out", required=True, help="folder for moe_kernel.csv and moe_kernel_meta.json")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (with TRITON_INTERPRET=1 it runs on a CPU)")
    ap.add_argument("--cases", nargs="+", choices=list(MOE), default=list(MOE), help="expert shapes (default: all)")
    a = ap.parse_args(argv)
    cfg_dir = a.fused_moe.parent / "configs"

    def case(model: str, fp8: bool):
        return lambda torch, kernel, dev, timer, device: rows_for(
            torch, kernel, dev, timer, a.quick, cfg_dir if cfg_dir.is_dir() else None, device, model, fp8)
    return kernel_probe("tools/moe_kernel_probe.py", "moe_kernel", a.fused_moe, a.out, a.quick,
                        lambda: load_kernel(a.fused_moe),
                        lambda cuda: [(m, case(m, fp8)) for m, fp8 in itertools.product(
                            a.cases, (False, True) if cuda else (False,))         # no fp8 in the interpreter
                                      if not fp8 or blocks_fit(m)])


if __name__ == "__main__":
    sys.exit(main())
