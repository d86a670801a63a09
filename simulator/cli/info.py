"""`specroof hardware` and `specroof models`: the bundled devices and models."""

from __future__ import annotations

import argparse
from dataclasses import asdict
from typing import Any

from ..hardware import list_hardware, load_hardware
from ..model import load_model_and_record
from ..registry import list_models
from . import fmt
from .args import add_format, note_same_shape


def add(sub: Any, name: str) -> None:
    if name == "hardware":
        p = sub.add_parser("hardware", help="list bundled devices or show one")
        p.add_argument("name", nargs="?", help="device name or alias (case-insensitive), or a .toml path")
        add_format(p)
        p.set_defaults(func=run_hardware)
    else:
        p = sub.add_parser("models", help="list bundled models or show one (id or path to config.json)")
        p.add_argument("name", nargs="?")
        add_format(p)
        p.set_defaults(func=run_models)


def _peak(h: Any, k: str) -> str:
    v = getattr(h, f"peak_{k}_flops_per_s")
    return "-" if v is None else f"{v / 1e12:g}"


def run_hardware(a: argparse.Namespace) -> int:
    hws = [load_hardware(n) for n in ([a.name] if a.name else list_hardware())]
    if a.format == "json":
        print(fmt.dumps([h.to_dict() for h in hws] if not a.name else hws[0].to_dict()))
        return 0
    rows = [[h.name, _peak(h, "bf16"), _peak(h, "fp8"), _peak(h, "fp4"), fmt.gb(h.hbm_capacity_bytes),
             f"{h.hbm_bandwidth_bytes_per_s / 1e12:g}", f"{h.scaleup_bytes_per_s / 1e9:g}",
             "-" if h.scaleup_peer_bytes_per_s is None else f"{h.scaleup_peer_bytes_per_s / 1e9:g}", h.scaleup_domain,
             f"{h.hbm_fraction:.2f}", f"{h.gemm_bf16_fraction:.2f}", f"{h.gemm_overlap:.2f}"] for h in hws]
    hdr = ["name", "bf16_TF", "fp8_TF", "fp4_TF", "HBM_GB", "HBM_TB/s", "link_GB/s/dir", "peer_GB/s", "domain",
           "hbm_frac",
           "gemm_frac", "gemm_overlap"]
    print(fmt.rows_out(a.format, hdr, rows))
    if a.name and a.format == "table":
        print("\ndense peaks (no 2:4 sparsity); link bandwidth per direction (peer: the one link to each peer of a "
              "fully connected board, '-' behind a switch); GB = 1e9 bytes; gemm_overlap: share of "
              "a GEMM's smaller time (math or memory) its larger one hides, in the default overlap mode (measured on "
              "bf16 cuBLAS GEMMs on H100 and B200; elsewhere an extrapolation)")
        h = hws[0]
        if h.scaleup_peer_bytes_per_s is not None:      # review: the TP2/TP4 rate could not be seen
            ns = (2, 4, h.scaleup_domain)
            bws = ", ".join(f"{h.scaleup_group_bytes_per_s(n) / 1e9:g}" for n in ns)
            print(f"fully connected: one {h.scaleup_peer_bytes_per_s / 1e9:g} GB/s link to each peer (no switch), so a "
                  f"group of n GPUs reaches (n - 1) x that: {bws} GB/s/dir at {ns[0]}, {ns[1]} and {ns[2]}")
        if not h.p2p_allreduce:                         # review: the PCIe pricing could not be seen
            print(f"all-reduce: NCCL's ring over PCIe (p2p_allreduce = 0: no one-shot / two-shot engine all-reduce, "
                  f"no all-reduce fusion) at {h.allreduce_latency_s * 1e6:g} us and link_fraction "
                  f"{h.link_fraction:g}, at any TP (vLLM would keep its custom all-reduce on two P2P-capable cards)")
        for s in hws[0].assumptions:
            print(f"assumption: {s}")
        for s in hws[0].sources:
            print(f"source: {s}")
    return 0


def run_models(a: argparse.Namespace) -> int:
    out = []
    note_same_shape([a.name])
    for n in [a.name] if a.name else list_models():
        m, rec = load_model_and_record(n)
        out.append((m, m.param_counts(), rec))
    if a.format == "json":
        js = [{"shape": m.to_dict(), "params": c, "record": None if r is None else asdict(r)} for m, c, r in out]
        print(fmt.dumps(js if not a.name else js[0]))
        return 0
    hdr = ["id", "type", "kind", "layers", "d_model", "heads", "kv_heads", "experts", "params_B", "active_B"]
    rows = [[m.name, m.model_type, m.kind, m.n_layers, m.d_model, m.n_heads, m.n_kv_heads,
             f"{m.n_experts}/{m.top_k}" if m.is_moe else "-", f"{c['total'] / 1e9:.2f}", f"{c['active'] / 1e9:.2f}"]
            for m, c, r in out]
    print(fmt.rows_out(a.format, hdr, rows))
    return 0
