"""Time, on one GPU, the kernels specroof prices from datasheets: a prepared script for a session lent a device.

    python tools/gpu_probe.py --out OUT          # on the device machine (CUDA, PyTorch): a few minutes on an H200
    python tools/gpu_probe.py --out OUT --quick  # anywhere with PyTorch, CPU included: tiny sizes, a smoke test

It writes OUT/probe.csv (one row per timed shape) and OUT/meta.json (device, PyTorch, CUDA, probes that failed). Every
timed op on a GPU replays inside a CUDA graph (graphed repeats, timed with CUDA events after warm-ups), so launch
overhead is left out as engines leave it out; the kernel-floor probe measures what a replayed kernel costs anyway.
Random weights, shapes of the shipped models (models/*.json); what each probe stands for:

  floor      per-kernel cost of a graph replay: N one-element in-place adds (`kernel_floor_s`), and eager launches
  copy       device-to-device copies from 64 KiB to 1 GiB: bandwidth reached against bytes per kernel
  gemm       bf16 GEMMs of Llama-3.1-8B and DeepSeek-V3 (TP8) projection shapes at M = 1..512 (tile quantisation)
  moe        routed experts of DeepSeek-V3 at TP8 (256 experts of 7168 x 256 per GPU, top-8) and Qwen3-30B-A3B at TP1
             (128 x 2048 x 768, top-8), bf16, uniform routing, torch grouped GEMM, at M = 1..512 tokens: the expert
             saturation behind the DeepSeek MTP curve (issue 11) measured on a real grouped-GEMM kernel
  attention  SDPA of Llama-3.1-8B (32 heads, 8 KV heads, d 128) with q = 1, 2, 4, 8 query tokens per sequence
             (decode and verify shapes), batch 1..64, context 1024 and 4096
  layer      one GPU's share of a DeepSeek-V3 MoE layer at TP8 (absorbed MLA over a 576-wide latent cache, 16 heads;
             router, shared expert, 256 routed experts of 7168 x 256, top-8), bf16, at batch 1..256 with q = 1
             (decode), 2 and 3 (an MTP k = 2 verify) at context 1536: whether a verify of B x 3 tokens costs what a
             decode of 3 B tokens costs (specroof: about that, experts saturating) or about twice a decode of B
             (what InferenceX's MTP runs at 64 requests imply; README "How accurate is it")
  fp8        DeepSeek-V3's TP8 projections as fp8 GEMMs (torch._scaled_mm, per-tensor scales) at M = 1..512
  gqa        one layer of Llama-3.1-8B (dense), Qwen3-30B-A3B (128 experts, top-8) and gpt-oss-120b (128 experts,
             top-4; its full-attention layer) at TP1, shapes read from models/*.json, bf16: GQA attention over a
             1024-token cache, twice (PyTorch's SDPA; and the query heads of a KV group packed into one product with
             its cache, as FlashInfer and FlashAttention-3 do), and the MLP, batch 1..256 with q = 1, 2, 4, 8: the
             decode and verify passes that EAGLE and draft-model speculation price on these targets

Not here: collectives (one GPU; the layer probe leaves out its two all-reduces), engine kernels (vLLM / SGLang
fused MoE, FlashMLA) that the machine does not have; the MoE and layer rows time PyTorch's grouped GEMM and SDPA, not
an engine's. Each row names its device and library versions, so the figures can become validation rows that say what
measured them.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

MODELS = Path(__file__).resolve().parent.parent / "models"

COLUMNS = ("probe", "case", "m", "q", "batch", "context", "bytes", "flops", "time_us", "note")
GEMMS = {   # (name, K, N): Llama-3.1-8B at TP1 and DeepSeek-V3 at TP8 (models/*.json)
    "llama-3.1-8b": (("qkv_proj", 4096, 6144), ("o_proj", 4096, 4096), ("gate_up", 4096, 28672),
                     ("down", 14336, 4096)),
    "deepseek-v3-tp8": (("q_a+kv_a", 7168, 2112), ("q_b", 1536, 3072), ("o_proj", 2048, 7168)),
}
MOE = {"deepseek-v3-tp8": (256, 8, 7168, 256), "qwen3-30b-a3b-tp1": (128, 8, 2048, 768),   # E, top-k, d, inter
       "qwen3-30b-a3b-tp2": (128, 8, 2048, 384), "qwen3-30b-a3b-tp4": (128, 8, 2048, 192)}   # per GPU
M_SET = (1, 2, 4, 8, 16, 32, 64, 128, 192, 256, 512)


class Timer:
    """Mean time of one call of `fn`: replayed in a CUDA graph on a GPU, plain wall-clock on a CPU."""

    def __init__(self, torch, cuda: bool, reps: int):
        self.torch, self.cuda, self.reps = torch, cuda, reps
        self.eager: list[str] = []        # calls that could not be captured in a graph (timed eagerly instead)

    def __call__(self, fn: Callable[[], object], inner: int = 10) -> float:
        t = self.torch
        if not self.cuda:
            fn()
            t0 = time.perf_counter()
            for _ in range(self.reps):
                fn()
            return (time.perf_counter() - t0) / self.reps
        s = t.cuda.Stream()
        s.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(s):            # warm up outside the graph (allocations, autotuning)
            for _ in range(3):
                fn()
        t.cuda.current_stream().wait_stream(s)
        g = t.cuda.CUDAGraph()
        try:
            with t.cuda.graph(g):
                for _ in range(inner):
                    fn()
            run = g.replay
        except RuntimeError as e:        # not capturable: time it eagerly, and say so in meta.json
            self.eager.append(f"{getattr(fn, '__qualname__', fn)}: {_first_line(e, 120)}")

            def run():
                for _ in range(inner):
                    fn()
        run()
        t.cuda.synchronize()
        a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(self.reps):
            run()
        b.record()
        t.cuda.synchronize()
        return a.elapsed_time(b) / 1e3 / (self.reps * inner)


def _first_line(e: BaseException, n: int) -> str:
    """The first line of an exception's message (its type when the message is empty), at most n characters."""
    return (str(e).splitlines() or [type(e).__name__])[0][:n]


def _row(probe: str, case: str, sec: float, **kw: object) -> dict[str, object]:
    r = {c: "" for c in COLUMNS}
    r.update(probe=probe, case=case, time_us=f"{sec * 1e6:.3f}", **kw)
    return r


def floor_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    x = torch.zeros(1, device=dev)
    n = 50 if quick else 2000
    how = ("graph replay, one-element add", f"{n} kernels per graph, time per kernel") if dev == "cuda" else \
        ("cpu wall clock, one-element add", "time per call")
    out = [_row("floor", how[0], timer(lambda: x.add_(1.0), inner=n), m=1, note=how[1])]
    if dev == "cuda":             # eager: the host launches each kernel (kernel_launch_s)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1.0)
        torch.cuda.synchronize()
        out.append(_row("floor", "eager launch, one-element add", (time.perf_counter() - t0) / n, m=1,
                        note=f"{n} kernels launched back to back, time per kernel"))
    return out


def copy_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out = []
    for kib in ((64, 1024) if quick else (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)):
        n = kib * 1024 // 2
        a, b = torch.empty(n, dtype=torch.bfloat16, device=dev), torch.empty(n, dtype=torch.bfloat16, device=dev)
        sec = timer(lambda a=a, b=b: b.copy_(a))
        out.append(_row("copy", f"{kib} KiB", sec, bytes=2 * kib * 1024,
                        note=f"bytes read + written; {2 * kib * 1024 / sec / 1e12:.3f} TB/s"))
    return out


def gemm_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out = []
    for model, shapes in GEMMS.items():
        for name, k, n in (shapes[:1] if quick else shapes):
            if quick:
                k, n = k // 32, n // 32
            w = torch.randn(k, n, dtype=torch.bfloat16, device=dev)
            for m in ((1, 64) if quick else M_SET):
                x = torch.randn(m, k, dtype=torch.bfloat16, device=dev)
                sec = timer(lambda x=x, w=w: x @ w)
                out.append(_row("gemm", f"{model} {name} {k}x{n}", sec, m=m, bytes=2 * (k * n + m * k + m * n),
                                flops=2 * m * k * n))
    return out


def _experts(torch, m: int, e: int, k: int, dev: str):
    """Uniform top-k routing of m tokens: the token order sorted by expert and the cumulative offsets per expert."""
    choice = torch.stack([torch.randperm(e, device=dev)[:k] for _ in range(m)]).flatten()
    order = torch.argsort(choice)
    counts = torch.bincount(choice, minlength=e)
    return order // k, torch.cumsum(counts, 0).to(torch.int32), int((counts > 0).sum())


def _moe_fn(torch, xs, w13, w2, offs) -> tuple[Callable[[object], object], str]:
    """SwiGLU experts over tokens sorted by expert (weights stored [E, N, K], used as column-major [E, K, N]): torch
    grouped GEMM where it runs (Hopper), else one GEMM per touched expert. Returns the call (sorted tokens -> their
    outputs; `xs` tries it) and which one it is."""
    grouped = getattr(torch, "_grouped_mm", None)
    a, b = w13.transpose(-2, -1), w2.transpose(-2, -1)
    if grouped is not None and xs.is_cuda:
        def run(x):
            h = grouped(x, a, offs=offs)
            g, u = h.chunk(2, dim=-1)
            return grouped(torch.nn.functional.silu(g) * u, b, offs=offs)
        try:
            run(xs)
            return run, "torch._grouped_mm"
        except (RuntimeError, TypeError) as e:       # an unsupported shape or build: say so, time the loop
            why = f"per-expert loop (torch._grouped_mm failed: {_first_line(e, 80)})"
    else:
        why = "per-expert loop"
    bounds = [0, *offs.tolist()]

    def loop(x):
        outs = []
        for i in range(len(bounds) - 1):
            if bounds[i + 1] > bounds[i]:
                h = x[bounds[i]:bounds[i + 1]] @ a[i]
                g, u = h.chunk(2, dim=-1)
                outs.append((torch.nn.functional.silu(g) * u) @ b[i])
        return torch.cat(outs)
    return loop, why


def moe_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out = []
    for model, (e, k, d, f) in MOE.items():
        if quick:
            e, d, f = 16, 128, 32
        w13 = torch.randn(e, 2 * f, d, dtype=torch.bfloat16, device=dev) * 0.02
        w2 = torch.randn(e, d, f, dtype=torch.bfloat16, device=dev) * 0.02
        for m in ((1, 8) if quick else M_SET):
            x = torch.randn(m, d, dtype=torch.bfloat16, device=dev)
            tok, offs, touched = _experts(torch, m, e, k, dev)
            xs = x[tok]                                # sorted by expert outside the timed call: the GEMMs alone
            run, how = _moe_fn(torch, xs, w13, w2, offs)
            sec = timer(lambda run=run, xs=xs: run(xs), inner=1 if quick else 10)
            out.append(_row("moe", f"{model} E{e} top{k} {d}x{f}", sec, m=m,
                            bytes=touched * 3 * d * f * 2, flops=2 * m * k * 3 * d * f,
                            note=f"{how}; {touched} experts touched (uniform routing, this draw)"))
    return out


def attention_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out, sdpa = [], torch.nn.functional.scaled_dot_product_attention
    h, hkv, dh = (4, 1, 64) if quick else (32, 8, 128)
    for ctx in ((256,) if quick else (1024, 4096)):
        for b in ((1, 2) if quick else (1, 8, 64)):
            kv = [torch.randn(b, hkv, ctx, dh, dtype=torch.bfloat16, device=dev) for _ in range(2)]
            for q in ((1, 4) if quick else (1, 2, 4, 8)):
                xq = torch.randn(b, h, q, dh, dtype=torch.bfloat16, device=dev)
                sec = timer(lambda xq=xq, kv=kv: sdpa(xq, kv[0], kv[1], enable_gqa=True))
                out.append(_row("attention", f"llama-3.1-8b h{h} kv{hkv} d{dh}", sec, q=q, batch=b, context=ctx,
                                bytes=2 * b * hkv * ctx * dh * 2, flops=4 * b * h * q * ctx * dh,
                                note="q query tokens per sequence attend to the whole context (no mask)"))
    return out


# DeepSeek-V3 at TP8, per GPU (models/deepseek-ai__DeepSeek-V3.json): hidden, q LoRA rank, latent (kv LoRA rank),
# rope and nope head dims, v head dim, heads per GPU (128 / 8), routed experts, top-k, expert and shared-expert width
# per GPU (2048 / 8).
DSV3_TP8 = {"d": 7168, "q_rank": 1536, "lat": 512, "rope": 64, "nope": 128, "v": 128, "h": 16, "e": 256, "k": 8,
            "f": 256, "shared": 256}
DSV3_QUICK = {"d": 128, "q_rank": 64, "lat": 32, "rope": 8, "nope": 16, "v": 16, "h": 2, "e": 16, "k": 4, "f": 16,
              "shared": 16}


def _mla_attention(torch, qq, cache, lat: int, scale: float):
    """Absorbed MLA attention of one sequence's query rows over its latent cache, read once: qq [b, rows, lat + rope],
    cache [b, L, lat + rope] (keys; its first `lat` columns are the values) -> [b, rows, lat]."""
    p = torch.softmax(torch.bmm(qq, cache.transpose(1, 2)).float() * scale, dim=-1).to(qq.dtype)
    return torch.bmm(p, cache[..., :lat])


def _mla_layer(torch, c: dict[str, int], b: int, q: int, ctx: int, dev: str) -> tuple[Callable[[], object], str, int]:
    """One decode (q = 1) or verify (q > 1) pass of the layer for b sequences: the call, how its experts run and how
    many experts this draw of the routing touches.
    Attention is absorbed MLA (DeepSeek-V2 paper §2.1, weight absorption) as FlashMLA computes it: the h heads x q
    tokens of a sequence are the rows of one product with its latent cache, read once, which is both the keys (with
    the rope part) and the values. Left out (small): the kv_a norm, rope, the cache write and the verify's causal
    mask among its q tokens. The experts gather their tokens and combine their weighted outputs inside the call."""
    bf, t, h, lat = torch.bfloat16, b * q, c["h"], c["lat"]
    f = torch.nn.functional
    w = {n: torch.randn(*sh, dtype=bf, device=dev) * 0.02 for n, sh in {
        "a": (c["d"], c["q_rank"] + lat + c["rope"]), "qb": (c["q_rank"], h * (c["nope"] + c["rope"])),
        "uk": (h, c["nope"], lat), "uv": (h, lat, c["v"]), "o": (h * c["v"], c["d"]),
        "gate": (c["d"], c["e"]), "s13": (c["d"], 2 * c["shared"]), "s2": (c["shared"], c["d"])}.items()}
    w13 = torch.randn(c["e"], 2 * c["f"], c["d"], dtype=bf, device=dev) * 0.02
    w2 = torch.randn(c["e"], c["d"], c["f"], dtype=bf, device=dev) * 0.02
    cache = torch.randn(b, ctx, lat + c["rope"], dtype=bf, device=dev)
    x = torch.randn(t, c["d"], dtype=bf, device=dev)
    tok, offs, touched = _experts(torch, t, c["e"], c["k"], dev)
    gates = torch.rand(t * c["k"], 1, dtype=bf, device=dev)
    experts, how = _moe_fn(torch, x[tok], w13, w2, offs)
    nr, scale = c["nope"] + c["rope"], (c["nope"] + c["rope"]) ** -0.5      # softmax scale of the 192-wide q.k

    def layer():
        a = f.rms_norm(x, (c["d"],)) @ w["a"]
        qs = (f.rms_norm(a[:, :c["q_rank"]], (c["q_rank"],)) @ w["qb"]).view(t, h, nr)
        q_lat = torch.bmm(qs[..., :c["nope"]].transpose(0, 1), w["uk"]).transpose(0, 1)     # [t, h, lat]
        qq = torch.cat([q_lat, qs[..., c["nope"]:]], -1).view(b, q * h, lat + c["rope"])   # rows (q, h)
        o = _mla_attention(torch, qq, cache, lat, scale).view(t, h, lat)                   # [t, h, lat]
        o = torch.bmm(o.transpose(0, 1), w["uv"]).transpose(0, 1).reshape(t, -1)
        y = x + o @ w["o"]
        hn = f.rms_norm(y, (c["d"],))
        torch.topk(hn @ w["gate"], c["k"], dim=-1)           # routing is drawn uniformly beforehand (`_experts`)
        g, u = (hn @ w["s13"]).chunk(2, dim=-1)
        y = y + (f.silu(g) * u) @ w["s2"]
        return y.index_add_(0, tok, experts(hn[tok]) * gates)
    return layer, how, touched


def _layer_work(c: dict[str, int], b: int, q: int, ctx: int, touched: int) -> tuple[float, float]:
    """(bytes, FLOPs) of one layer pass in bf16: dense weights, the touched experts and the latent cache read once;
    2 FLOPs per multiply-add over the tokens, the k experts of each and the attention products."""
    t, h, lat, r = b * q, c["h"], c["lat"], c["rope"]
    dense = (c["d"] * (c["q_rank"] + lat + r) + c["q_rank"] * h * (c["nope"] + r) + h * c["nope"] * lat
             + h * lat * c["v"] + h * c["v"] * c["d"] + c["d"] * c["e"] + 3 * c["d"] * c["shared"])
    expert = 3 * c["d"] * c["f"]
    nbytes = 2 * (dense + touched * expert + b * ctx * (lat + r))
    flops = 2 * t * (dense + c["k"] * expert) + 2 * t * h * ctx * (2 * lat + r)
    return nbytes, flops


def layer_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out, c = [], (DSV3_QUICK if quick else DSV3_TP8)
    ctx = 64 if quick else 1536
    for b in ((1, 4) if quick else (1, 4, 16, 32, 64, 128, 192, 256)):
        for q in ((1, 3) if quick else (1, 2, 3)):
            try:
                fn, how, touched = _mla_layer(torch, c, b, q, ctx, dev)
                sec = timer(fn, inner=1 if quick else 5)
            except (RuntimeError, TypeError) as e:        # a shape this build cannot run: a row that says so
                out.append(_row("layer", "deepseek-v3-tp8 moe layer", 0.0, m=b * q, q=q, batch=b, context=ctx,
                                note=f"not timed: {_first_line(e, 100)}"))
                continue
            nbytes, flops = _layer_work(c, b, q, ctx, touched)
            out.append(_row("layer", "deepseek-v3-tp8 moe layer", sec, m=b * q, q=q, batch=b, context=ctx,
                            bytes=f"{nbytes:.0f}", flops=f"{flops:.0f}",
                            note=f"bf16; {how}; no all-reduce; {'decode' if q == 1 else 'verify'}; {touched} experts "
                                 "touched (uniform routing, this draw)"))
    return out


# Targets of EAGLE and draft-model speculation at TP1 (models/*.json): one layer each, the full-attention layer of
# gpt-oss (its sliding-window layers read at most 128 cached tokens).
GQA = ("meta-llama__Llama-3.1-8B-Instruct", "Qwen__Qwen3-30B-A3B", "openai__gpt-oss-120b")
GQA_QUICK = {"d": 64, "h": 4, "kv": 2, "dh": 16, "e": 8, "k": 2, "f": 32}


def gqa_shape(name: str) -> dict[str, int]:
    """A model's layer shape from its HF config: hidden, heads, KV heads, head dim, experts (0: dense), top-k and
    the FFN width (an expert's, for MoE)."""
    c = json.loads((MODELS / f"{name}.json").read_text())
    e = c.get("num_experts") or c.get("num_local_experts") or 0
    return {"d": c["hidden_size"], "h": c["num_attention_heads"], "kv": c["num_key_value_heads"],
            "dh": c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"], "e": e,
            "k": c.get("num_experts_per_tok") or 0,
            "f": (c.get("moe_intermediate_size") or c["intermediate_size"]) if e else c["intermediate_size"]}


def _sdpa_backend(torch, xq, k, v):
    """The first SDPA backend that runs GQA at this shape (flash, memory-efficient, cuDNN, math) and its name."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION,
               SDPBackend.MATH):
        try:
            with sdpa_kernel(be):
                sdpa(xq, k, v, enable_gqa=True)
            return be, be.name.lower()
        except RuntimeError:
            continue
    raise RuntimeError("no SDPA backend runs this shape")


def _packed_attention(torch, xq, k, v):
    """GQA attention with the query heads of a KV group packed as the rows of one product with its cache, read once
    (what FlashInfer's and FlashAttention-3's GQA packing do; PyTorch's SDPA reads a KV head once per query head when
    q > 1): xq [b, h, q, dh], k and v [b, kv, L, dh] -> [b, h, q, dh]."""
    b, h, q, dh = xq.shape
    kv = k.shape[1]
    qq = xq.reshape(b, kv, h // kv * q, dh)         # query head i reads KV head i // (h / kv): a group is contiguous
    p = torch.softmax(torch.matmul(qq, k.transpose(-1, -2)).float() * dh ** -0.5, dim=-1).to(xq.dtype)
    return torch.matmul(p, v).reshape(b, h, q, dh)


def _gqa_layer(torch, c: dict[str, int], w: dict, b: int, q: int, ctx: int, dev: str, packed: bool):
    """One decode (q = 1) or verify (q > 1) pass of a GQA layer for b sequences over ctx cached tokens: the call,
    how attention and the experts run, and the experts this draw touches. Attention is PyTorch's SDPA or, `packed`,
    `_packed_attention`. Left out (small): rope, the cache write and the verify's causal mask among its q tokens."""
    from torch.nn.attention import sdpa_kernel
    bf, t, f = torch.bfloat16, b * q, torch.nn.functional
    h, kv, dh, d = c["h"], c["kv"], c["dh"], c["d"]
    x = torch.randn(t, d, dtype=bf, device=dev)
    cache = [torch.randn(b, kv, ctx, dh, dtype=bf, device=dev) for _ in range(2)]
    if packed:
        be, att = None, "packed GQA (matmul)"
    else:
        be, att = _sdpa_backend(torch, torch.randn(b, h, q, dh, dtype=bf, device=dev), *cache)
        att = f"sdpa {att}"
    if c["e"]:
        tok, offs, touched = _experts(torch, t, c["e"], c["k"], dev)
        gates = torch.rand(t * c["k"], 1, dtype=bf, device=dev)
        experts, how = _moe_fn(torch, x[tok], w["w13"], w["w2"], offs)
    else:
        touched, how = 0, "dense"

    def layer():
        hn = f.rms_norm(x, (d,))
        xq = (hn @ w["q"]).view(b, q, h, dh).transpose(1, 2)
        hn @ w["kv"]                                   # the new tokens' keys and values (written to the cache)
        if packed:
            o = _packed_attention(torch, xq, *cache)
        else:
            with sdpa_kernel(be):
                o = f.scaled_dot_product_attention(xq, *cache, enable_gqa=True)
        y = x + o.transpose(1, 2).reshape(t, h * dh) @ w["o"]
        hn = f.rms_norm(y, (d,))
        if not c["e"]:
            g, u = (hn @ w["13"]).chunk(2, dim=-1)
            return y + (f.silu(g) * u) @ w["2"]
        torch.topk(hn @ w["gate"], c["k"], dim=-1)      # routing is drawn uniformly beforehand (`_experts`)
        return y.index_add_(0, tok, experts(hn[tok]) * gates)
    return layer, f"{att}; {how}", touched


def _gqa_weights(torch, c: dict[str, int], dev: str) -> dict:
    bf, d, h, kv, dh, f = torch.bfloat16, c["d"], c["h"], c["kv"], c["dh"], c["f"]
    sh = {"q": (d, h * dh), "kv": (d, 2 * kv * dh), "o": (h * dh, d)}
    sh |= {"gate": (d, c["e"]), "w13": (c["e"], 2 * f, d), "w2": (c["e"], d, f)} if c["e"] else \
        {"13": (d, 2 * f), "2": (f, d)}
    return {n: torch.randn(*s, dtype=bf, device=dev) * 0.02 for n, s in sh.items()}


def _gqa_work(c: dict[str, int], b: int, q: int, ctx: int, touched: int) -> tuple[float, float]:
    """(bytes, FLOPs) of one GQA layer pass in bf16: weights (the touched experts), the KV cache read once."""
    t, d, h, kv, dh, f = b * q, c["d"], c["h"], c["kv"], c["dh"], c["f"]
    attn = d * (h + 2 * kv) * dh + h * dh * d
    mlp, active = (3 * d * f * touched + d * c["e"], 3 * d * f * c["k"] + d * c["e"]) if c["e"] else \
        (3 * d * f, 3 * d * f)
    nbytes = 2 * (attn + mlp + 2 * b * kv * ctx * dh)
    return nbytes, 2 * t * (attn + active) + 4 * t * h * ctx * dh


def gqa_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    out, ctx = [], 64 if quick else 1024
    for name in GQA[1:2] if quick else GQA:
        c = GQA_QUICK if quick else gqa_shape(name)
        w = _gqa_weights(torch, c, dev)
        for b, q, packed in itertools.product((1, 4) if quick else (1, 2, 4, 8, 16, 32, 64, 128, 256),
                                              (1, 4) if quick else (1, 2, 4, 8), (True, False)):
            row, case = dict(m=b * q, q=q, batch=b, context=ctx), f"{name} layer, {'packed' if packed else 'sdpa'}"
            try:
                fn, how, touched = _gqa_layer(torch, c, w, b, q, ctx, dev, packed)
                sec = timer(fn, inner=1 if quick else 5)
            except (RuntimeError, TypeError) as e:
                out.append(_row("gqa", case, 0.0, **row, note=f"not timed: {_first_line(e, 100)}"))
                continue
            nbytes, flops = _gqa_work(c, b, q, ctx, touched)
            out.append(_row("gqa", case, sec, **row, bytes=f"{nbytes:.0f}", flops=f"{flops:.0f}",
                            note=f"bf16; {how}; {'decode' if q == 1 else 'verify'}"
                                 + (f"; {touched} experts touched (uniform routing, this draw)" if c["e"] else "")))
        del w
        if dev == "cuda":
            torch.cuda.empty_cache()
    return out


def fp8_rows(torch, dev: str, timer: Timer, quick: bool) -> list[dict[str, object]]:
    """The DeepSeek-V3 TP8 projections as fp8 (e4m3) GEMMs with per-tensor scales (torch._scaled_mm, bf16 out):
    what its fp8 checkpoint runs; rows that cannot run (no fp8 on this device, a size it refuses) say so."""
    out, mm = [], getattr(torch, "_scaled_mm", None)
    one = torch.ones((), device=dev)
    for name, k, n in GEMMS["deepseek-v3-tp8"][:1] if quick else GEMMS["deepseek-v3-tp8"]:
        w = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn).t()        # column-major [K, N]
        for m in ((16,) if quick else M_SET):
            x = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
            row = dict(m=m, bytes=k * n + m * k + 2 * m * n, flops=2 * m * k * n)
            try:
                if mm is None:
                    raise RuntimeError("torch._scaled_mm is missing")
                sec = timer(lambda x=x, w=w: mm(x, w, one, one, out_dtype=torch.bfloat16))
                out.append(_row("fp8", f"deepseek-v3-tp8 {name} {k}x{n}", sec, **row, note="e4m3, per-tensor"))
            except (RuntimeError, TypeError) as e:
                out.append(_row("fp8", f"deepseek-v3-tp8 {name} {k}x{n}", 0.0, **row,
                                note=f"not timed: {_first_line(e, 100)}"))
    return out


def meta(torch, cuda: bool) -> dict[str, object]:
    m = {"torch": torch.__version__, "python": platform.python_version(), "cuda": torch.version.cuda,
         "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if cuda:
        p = torch.cuda.get_device_properties(0)
        m.update(device=p.name, sms=p.multi_processor_count, memory_bytes=p.total_memory)
    else:
        m.update(device=f"cpu ({platform.processor() or platform.machine()})")
    return m


def prepare(names: tuple[str, ...], tool: str, quick: bool, load: Callable[[], object] | None = None):
    """(the modules a device script needs, imported; its device (pick_device); what `load` returns, e.g. a kernel read
    from an engine's source file), or None after one line on stderr where a module is missing, a full run has no GPU
    or `load` fails (tools/hf_probe.py and the kernel probes share it)."""
    import importlib
    try:
        mods = [importlib.import_module(n) for n in names]
    except ImportError as e:
        print(f"error: {tool} needs {' and '.join(names)} ({e})", file=sys.stderr)
        return None
    dev = pick_device(mods[0], quick)
    if dev is None:
        return None
    try:
        return mods, dev, (load() if load else None)
    except (OSError, ValueError, SyntaxError, ImportError) as e:
        print(f"error: {_first_line(e, 200)}", file=sys.stderr)
        return None


def load_triton(path: Path, names: tuple[str, ...], what: str) -> dict[str, object]:
    """The Triton functions `names` compiled from an engine's source file at `path` (the kernel probes': no engine
    code lives in this repository), each at the lines it has there: Triton reads a kernel's source back through
    inspect, by file and line. ValueError naming what is missing where the file lacks one (`what`: the file meant)."""
    import ast

    import triton
    import triton.language as tl
    src = path.read_text()
    ns: dict[str, object] = {"triton": triton, "tl": tl, "__name__": f"engine_{path.stem}"}   # Triton needs a module
    found = {n.name: n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name in names}
    if set(found) != set(names):
        raise ValueError(f"{path}: no {' / '.join(sorted(set(names) - set(found)))} (is it {what}?)")
    lines = src.splitlines(keepends=True)
    for name in names:
        node = found[name]
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        code = "\n" * (first - 1) + "".join(lines[first - 1:node.end_lineno])
        exec(compile(code, str(path), "exec"), ns)      # noqa: S102 - the user's own engine source file
    return {n: ns[n] for n in names}


def kernel_probe(tool: str, stem: str, source: Path, out: str, quick: bool, load: Callable[[], object],
                 cases: Callable[[bool], list[tuple[str, Callable]]]) -> int:
    """The run the engine-kernel probes share: import torch and triton, load the engine's kernel (`load`; one line
    on stderr and 2 where that fails), then time each case of `cases(cuda)`, (label, rows(torch, kernel, dev, timer,
    device)), writing OUT/<stem>.csv and its metadata after each, so a run cut off keeps what it timed."""
    ready = prepare(("torch", "triton"), tool, quick, load)
    if ready is None:
        return 2
    (torch, triton), dev, kernel = ready
    cuda = dev == "cuda"
    device = torch.cuda.get_device_name(0) if cuda else "cpu"
    torch.manual_seed(0)
    t0, rows, folder = time.perf_counter(), [], Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    timer = Timer(torch, cuda, reps=2 if quick else 20)
    for label, run in cases(cuda):
        rows += run(torch, kernel, dev, timer, device)
        info = {"device": device, "torch": torch.__version__, "triton": triton.__version__, "source": str(source),
                "seconds": round(time.perf_counter() - t0, 1)}
        write(folder, rows, info, stem)
        print(f"{label}: {len(rows)} rows, {info['seconds']} s", file=sys.stderr, flush=True)
    print(f"wrote {folder / (stem + '.csv')} ({len(rows)} rows, columns {', '.join(COLUMNS)})", file=sys.stderr)
    return 0


def pick_device(torch, quick: bool) -> str | None:
    """'cuda' where PyTorch sees a GPU, 'cpu' for a quick run; None, after one line on stderr, for a full run
    without one (tools/hf_probe.py shares it)."""
    if torch.cuda.is_available():
        return "cuda"
    if quick:
        return "cpu"
    print("error: no CUDA device: run it on the device machine, or pass --quick for a CPU smoke test", file=sys.stderr)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for probe.csv and meta.json")
    ap.add_argument("--quick", action="store_true", help="tiny sizes, a few repeats: a smoke test (CPU works)")
    ap.add_argument("--only", nargs="+", choices=[f.__name__.removesuffix("_rows") for f in PROBES],
                    help="run these probes alone (default: all)")
    a = ap.parse_args(argv)
    ready = prepare(("torch",), "tools/gpu_probe.py", a.quick)
    if ready is None:
        return 2
    (torch,), dev, _ = ready
    cuda = dev == "cuda"
    torch.manual_seed(0)
    timer = Timer(torch, cuda, reps=3 if a.quick else 20)
    rows, failed, out, t0 = [], [], Path(a.out), time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for probe in PROBES:
        if a.only and probe.__name__.removesuffix("_rows") not in a.only:
            continue
        try:
            rows += probe(torch, dev, timer, a.quick)
        except Exception as e:          # noqa: BLE001 - one probe's failure (a shape, a missing op) spares the rest
            failed.append(f"{probe.__name__}: {type(e).__name__}: {_first_line(e, 160)}")
            print(f"{probe.__name__} failed: {failed[-1]}", file=sys.stderr, flush=True)
        info = meta(torch, cuda) | {"timed_eagerly": timer.eager, "failed": failed}
        write(out, rows, info)                          # after each probe: a run cut off keeps what it timed
        print(f"{probe.__name__}: {len(rows)} rows, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(f"wrote {out / 'probe.csv'} ({len(rows)} rows) and {out / 'meta.json'}", file=sys.stderr)
    return 1 if failed else 0


PROBES = (floor_rows, copy_rows, gemm_rows, moe_rows, attention_rows, layer_rows, gqa_rows, fp8_rows)


def write(out: Path, rows: list[dict[str, object]], info: dict[str, object], stem: str = "probe") -> None:
    """OUT/<stem>.csv and its metadata (OUT/meta.json for the probe, else OUT/<stem>_meta.json), each written whole
    to a temporary name and renamed into place."""
    meta_name = "meta.json" if stem == "probe" else f"{stem}_meta.json"
    tmp = out / f"{stem}.csv.tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=("device", *COLUMNS))
        w.writeheader()
        w.writerows({"device": info["device"], **r} for r in rows)
    tmp.replace(out / f"{stem}.csv")
    (out / f"{meta_name}.tmp").write_text(json.dumps(info, indent=1) + "\n")
    (out / f"{meta_name}.tmp").replace(out / meta_name)


if __name__ == "__main__":
    sys.exit(main())
