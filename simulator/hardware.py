"""Accelerator specs: `hardware_specs/*.toml` (unit-suffixed keys, a source URL per figure) -> frozen `Hardware` in SI.

The one conversion site from file units (TFLOP/s, GB, TB/s, GB/s, MB, us) to SI is `_from_toml`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from . import units as u
from .data import data_dir, figure, prior, read_spec, read_toml, suggest
from .errors import ScenarioError, SpecError
from .fitted import device_values

# Fallback achievable fractions, used only when a spec file publishes no measurement (recorded in `assumptions`):
#   hbm 0.85: median of STREAM-like measurements, H100 0.87-0.89 and H200 0.83-0.86 (Azure AI-benchmarking-guide,
#             https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_H100_v5_results.md).
#   gemm 0.75: median best-shape dense GEMM over H100/H200/B200/B300/GB200 BF16+FP8, 0.71-0.80 (stas00 MAMF table,
#             https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md).
#   link 0.83: NVLink P2P unidirectional, H100 0.83 and GB200 0.83 (same stas00 source).
#   all-reduce latency 6 us: small-message custom / NVLS all-reduce under CUDA graphs on H100 (NCCL issue #1259;
#             SGLang PR #2904: 5.7-7.8 us up to 64 KB at TP8), the kernels engines run.
DEFAULT_HBM_FRACTION = 0.85
DEFAULT_GEMM_FRACTION = 0.75
DEFAULT_LINK_FRACTION = 0.83
DEFAULT_ALLREDUCE_LATENCY_S = 6e-6
# Expert-parallel dispatch or combine at a few tokens per rank where a spec gives none: the H100 figure
# (hardware_specs/h100-sxm.toml: DeepEP's low-latency dispatch, nixl PR #1749).
DEFAULT_ALLTOALL_LATENCY_S = 26e-6
# Share of a GEMM's smaller (math or memory) time that its larger one hides (the shortfall is largest near the ridge
# point): least squares on log time over published cuBLAS bf16 GEMM timings at M = 16..4096 on H100 (3 shapes) and
# B200 (4 shapes), with a fixed time per kernel (tools/fit_gemm_overlap.py: 0.60 +- 0.06; H100 alone 0.64 +- 0.10,
# B200 alone 0.54 +- 0.09; 0.80 over M = 16..128, 0.56 over M >= 256; over every M, 0.68 +- 0.08: the spread, about
# +- 0.15, is the better uncertainty). Derived from kernel timings, not from the validation rows.
DEFAULT_GEMM_OVERLAP = 0.60

VENDORS = ("nvidia", "amd")        # hardware vendor, as engine profiles name it ([scope] vendors)
# Chip generations by vendor: devices of one share kernels, so the calibration's per-device figures (calibration/
# fit.toml) and the engines' per-generation rules (the Blackwell MLA verify re-read) key on it.
ARCHITECTURES = {"nvidia": ("ampere", "ada", "hopper", "blackwell", "rubin"), "amd": ("cdna2", "cdna3", "cdna4")}
_FIG = frozenset({"vendor_quoted_sparse"})
_ALLOWED: dict[str, set[str] | None] = {
    "schema": None, "name": None, "display_name": None, "vendor": None, "architecture": None, "aliases": None,
    "retrieved": None,
    "notes": None,
    "peak_dense_tflops": set(u.PEAK_KEYS),
    "memory": {"hbm_capacity_gib", "hbm_bandwidth_tb_s", "l2_cache_mb"},
    "interconnect": {"scaleup_gb_s_per_direction", "scaleup_domain_gpus", "scaleout_gb_s_per_direction",
                     "scaleup_peer_gb_s_per_direction", "p2p_allreduce"},
    "power": {"tdp_w"},
    "achievable": {"hbm_fraction", "gemm_bf16_fraction", "gemm_fp8_fraction", "gemm_fp4_fraction",
                   "link_fraction", "allreduce_latency_us", "alltoall_latency_us", "scaleout_latency_us",
                   "gemm_overlap"},
    "kernels": {"graph_kernel_us", "quant_kernel_us", "gemm_tile_m", "weight_only_tile_m"},
}


@dataclass(frozen=True, slots=True)
class Hardware:
    """One accelerator, per-GPU figures in SI units.

    Attributes
    ----------
    name, display_name, vendor : str
    architecture : str                chip generation (hopper, blackwell, cdna3, ...): devices that share kernels
    peak_fp64_flops_per_s ... peak_fp4_flops_per_s : float or None
        Dense (no 2:4 sparsity) tensor peak, FLOP/s; None when the chip lacks the precision.
    hbm_capacity_bytes : float        usable HBM, bytes
    hbm_bandwidth_bytes_per_s : float peak HBM bandwidth, bytes/s
    l2_bytes : float or None          L2 cache, bytes (None when undisclosed)
    scaleup_bytes_per_s : float       scale-up link bandwidth per GPU per direction, bytes/s
    scaleup_domain : int              GPUs in one scale-up (NVLink / Infinity Fabric) domain
    scaleout_bytes_per_s : float or None  NIC bandwidth per GPU per direction, bytes/s (None: not published)
    scaleup_peer_bytes_per_s : float or None  on a fully connected board (no switch: AMD's 8-GPU Infinity Fabric
                                      platforms), the one link to each peer, bytes/s per direction; None behind a
                                      switch (NVLink), where any group reaches the whole scale-up bandwidth
    p2p_allreduce : bool              the scale-up fabric runs the engines' own peer-to-peer all-reduce kernels
                                      (one-shot / two-shot, and the fused all-reduce + norm): NVLink, Infinity
                                      Fabric; False on PCIe-only servers, where NCCL's ring prices the all-reduce
    tdp_w : float                     board power, W
    hbm_fraction, gemm_bf16_fraction, gemm_fp8_fraction, gemm_fp4_fraction, link_fraction : float
        achievable fraction of peak (measured where published, else the documented default)
    gemm_overlap : float              share of a GEMM's smaller time (math or memory) its larger one hides (1: the
                                      roofline max, 0: their sum), measured on cuBLAS bf16 GEMMs on H100 and B200
                                      (DEFAULT_GEMM_OVERLAP; other formats and devices: an extrapolation); used in
                                      the default overlap mode, "measured", only
    allreduce_latency_s : float       small-message all-reduce latency on the scale-up domain under CUDA graphs, s
    alltoall_latency_s : float        expert-parallel dispatch (or combine) latency at a few tokens per rank, s
    scaleout_latency_s : float        small collective latency across nodes (scale-out network), s
    kernel_floor_s : float            cost of one graph-replayed kernel beyond its roofline work, s
    kernel_floor_prior_s : float or None  the sourced value a calibrated kernel_floor_s started from
    quant_kernel_s : float            cost of one graph-replayed activation-quantisation kernel at decode sizes (the
                                      kernel before a W8A8 / NVFP4 GEMM, units.ACT_QUANT), measured, not fitted, s
    path : str                        the file a spec loaded by path was read from ('' by bundled name): such a spec
                                      is used as written, without the shipped calibration (provenance, so equality
                                      ignores it; results report it as hardware_file)
    gemm_tile_m : int                 tensor-core GEMM tile height (tokens are rounded up to it), rows
    weight_only_tile_m : int          the same for a weight-only GEMM, whose weights the device computes in the
                                      activation format (W4A16: Marlin's 16-row mma.sync tiles); else gemm_tile_m
    assumptions : tuple[str, ...]     which figures fell back to defaults
    sources : tuple[str, ...]         every URL cited by the spec file
    """

    name: str
    display_name: str
    vendor: str
    peak_fp64_flops_per_s: float | None
    peak_tf32_flops_per_s: float | None
    peak_bf16_flops_per_s: float | None
    peak_fp8_flops_per_s: float | None
    peak_fp6_flops_per_s: float | None
    peak_fp4_flops_per_s: float | None
    hbm_capacity_bytes: float
    hbm_bandwidth_bytes_per_s: float
    l2_bytes: float | None
    scaleup_bytes_per_s: float
    scaleup_domain: int
    scaleout_bytes_per_s: float | None
    tdp_w: float
    hbm_fraction: float = DEFAULT_HBM_FRACTION
    gemm_bf16_fraction: float = DEFAULT_GEMM_FRACTION
    gemm_fp8_fraction: float = DEFAULT_GEMM_FRACTION
    gemm_fp4_fraction: float = DEFAULT_GEMM_FRACTION
    link_fraction: float = DEFAULT_LINK_FRACTION
    gemm_overlap: float = DEFAULT_GEMM_OVERLAP
    allreduce_latency_s: float = DEFAULT_ALLREDUCE_LATENCY_S
    alltoall_latency_s: float = DEFAULT_ALLTOALL_LATENCY_S
    scaleout_latency_s: float = 20e-6
    kernel_floor_s: float = 3.3e-6
    quant_kernel_s: float = 1.5e-6
    gemm_tile_m: int = 64
    weight_only_tile_m: int | None = None
    assumptions: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    architecture: str = ""
    kernel_floor_prior_s: float | None = None
    path: str = field(default="", compare=False)
    scaleup_peer_bytes_per_s: float | None = None
    p2p_allreduce: bool = True

    def scaleup_group_bytes_per_s(self, n: float) -> float:
        """Scale-up bandwidth per GPU per direction that a collective over n GPUs of one domain reaches: all of it
        behind a switch; on a fully connected board only the links to the other n - 1 members ((n - 1) x the
        per-peer link: MI300X 64, 192, 448 GB/s at 2, 4, 8 GPUs; vLLM PR #39080 states 'Peak busbw = (N-1) x 76.8
        GB/s' for MI355X, and stas00 measured all-reduce busbw 47.7 GB/s on 2 MI300X against 312.9 on 8)."""
        if self.scaleup_peer_bytes_per_s is None or n >= self.scaleup_domain:
            return self.scaleup_bytes_per_s
        return min(self.scaleup_bytes_per_s, max(n - 1.0, 1.0) * self.scaleup_peer_bytes_per_s)

    def uncalibrated(self) -> Hardware:
        """The device with its calibrated kernel floor back at the sourced prior (what cross-validation fits from)."""
        if self.kernel_floor_prior_s is None:
            return self
        return replace(self, kernel_floor_s=self.kernel_floor_prior_s, kernel_floor_prior_s=None)

    def peak_flops_per_s(self, dtype: str) -> float:
        """Dense peak FLOP/s for GEMMs whose weights are stored as `dtype` (bf16, fp8, fp4, ...)."""
        key = u.DTYPE_PEAK.get(dtype)
        if key is None:
            raise ScenarioError(f"unknown precision {dtype!r}; expected one of {sorted(u.DTYPE_PEAK)}")
        v = getattr(self, f"peak_{key}_flops_per_s")
        if v is None:
            have = [k for k in u.PEAK_KEYS if getattr(self, f"peak_{k}_flops_per_s") is not None]
            raise ScenarioError(
                f"{self.name} has no {key} tensor cores (precision {dtype!r}); it supports {', '.join(have)}")
        return float(v)

    def compute_format(self, dtype: str, activations: str = "bf16") -> str:
        """The format a GEMM with `dtype` weights computes in on this device: the weight format when it has tensor
        cores for it, else the activation format (weight-only quantisation: the weights are read in `dtype` and
        dequantised in the kernel, as Marlin / Machete W4A16 and vLLM's MXFP4-on-Hopper path do)."""
        key = u.DTYPE_PEAK.get(dtype)
        if key is None:
            raise ScenarioError(f"unknown precision {dtype!r}; expected one of {sorted(u.DTYPE_PEAK)}")
        return dtype if getattr(self, f"peak_{key}_flops_per_s") is not None else activations

    def check_kv_format(self, kv: str) -> None:
        """A KV cache narrower than 8 bits only on a device with tensor cores in that format, which engines' narrow KV
        caches need (TensorRT-LLM's NVFP4 KV cache on Blackwell): a device check, not an engine's (found by review: an
        fp4 KV cache on an H100 was priced without a word)."""
        if u.DTYPE_BYTES.get(kv, 1.0) < 1.0 and self.compute_format(kv, "") != kv:
            raise ScenarioError(f"KV-cache precision {kv!r} on {self.name}: an {kv} KV cache needs {kv} tensor cores, "
                                f"which it lacks; expected bf16, fp16, fp8 or fp32")

    def gemm_fraction(self, dtype: str) -> float:
        """Achievable fraction of peak for a GEMM at `dtype` (fp6 uses the fp4 figure, tf32 the bf16 one)."""
        key = u.DTYPE_PEAK.get(dtype, "bf16")
        return {"fp8": self.gemm_fp8_fraction, "fp6": self.gemm_fp4_fraction,
                "fp4": self.gemm_fp4_fraction}.get(key, self.gemm_bf16_fraction)

    def supports(self, dtype: str) -> bool:
        """True when the chip has tensor cores for `dtype`."""
        key = u.DTYPE_PEAK.get(dtype)
        return key is not None and getattr(self, f"peak_{key}_flops_per_s") is not None

    def to_dict(self) -> dict[str, Any]:
        """SI-unit dict; `Hardware.from_dict(h.to_dict()) == h`."""
        d = asdict(self)
        d["assumptions"] = list(self.assumptions)
        d["sources"] = list(self.sources)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Hardware:
        """Inverse of `to_dict` (SI units); unknown keys are an error."""
        names = {f.name for f in fields(cls)}
        bad = set(d) - names
        if bad:
            raise SpecError(f"Hardware.from_dict: unknown key(s) {sorted(bad)}")
        kw = dict(d)
        kw["assumptions"] = tuple(kw.get("assumptions", ()))
        kw["sources"] = tuple(kw.get("sources", ()))
        return cls(**kw)

    def scaled(self, s: float) -> Hardware:
        """Copy with every rate (FLOP/s, bytes/s) multiplied by `s` and latencies divided by `s`."""
        d = self.to_dict()
        for k in list(d):
            if (k.endswith("_per_s")) and d[k] is not None:
                d[k] = d[k] * s
        for k in ("allreduce_latency_s", "alltoall_latency_s", "scaleout_latency_s", "kernel_floor_s",
                  "kernel_floor_prior_s", "quant_kernel_s"):
            d[k] = None if getattr(self, k) is None else getattr(self, k) / s
        return Hardware.from_dict(d)


class _Reader:
    """Reads one spec file's figures, collecting the sources cited and the defaults that had to stand in."""

    def __init__(self, path: Path, doc: dict[str, Any], name: str) -> None:
        self.path, self.doc, self.name = path, doc, name
        self.sources: list[str] = []
        self.assumptions: list[str] = []

    def fig(self, section: str, key: str, **kw: Any) -> Any:
        v = figure(self.doc, section, key, self.path, **kw)
        src = self.doc[section][key]["source"] if v is not None else None
        if src == "estimate":
            self.assumptions.append(f"{key} = {v} for {self.name} is an estimate (its note in the spec says how)")
        elif src == "calibrated":
            self.assumptions.append(f"{key} = {v:.3g} for {self.name} is calibrated on the validation rows (prior "
                                    f"{prior(self.doc, section, key)}; its note in the spec gives the fit)")
        elif v is not None:
            self.sources.append(self.doc[section][key]["source"])
        return v

    def default(self, section: str, key: str, default: float, lo: float, hi: float, kind: type = float,
                estimate: bool = False) -> Any:
        """A measured figure, or the documented default (recorded in `assumptions`)."""
        v = self.fig(section, key, required=False, lo=lo, hi=hi, kind=kind, allow_estimate=estimate)
        if v is None:
            self.assumptions.append(f"{key} not measured for {self.name}: default {default}")
            return default
        return v

    def peaks(self) -> dict[str, float | None]:
        peaks: dict[str, float | None] = {}
        table = self.doc.get("peak_dense_tflops", {})
        for k in u.PEAK_KEYS:
            entry = table.get(k) if isinstance(table, dict) else None
            if k in table and (not isinstance(entry, dict) or not isinstance(entry.get("vendor_quoted_sparse"), bool)):
                raise SpecError(f"{self.path}: [peak_dense_tflops] {k}: vendor_quoted_sparse = "
                                f"{entry.get('vendor_quoted_sparse') if isinstance(entry, dict) else entry!r}, "
                                "expected true or false")
            v = self.fig("peak_dense_tflops", k, required=False, lo=0.5, hi=50_000.0, extra_keys=_FIG)
            peaks[k] = None if v is None else v * u.TFLOPS
        if peaks["bf16"] is None:
            raise SpecError(f"{self.path}: [peak_dense_tflops] bf16 is missing (every supported device has it)")
        return peaks

    def efficiencies(self, has_fp4: bool) -> dict[str, Any]:
        a = "achievable"
        bf16 = self.default(a, "gemm_bf16_fraction", DEFAULT_GEMM_FRACTION, 0.2, 1.0)
        fp8 = self.default(a, "gemm_fp8_fraction", DEFAULT_GEMM_FRACTION, 0.2, 1.0)
        return dict(
            hbm_fraction=self.default(a, "hbm_fraction", DEFAULT_HBM_FRACTION, 0.3, 1.0), gemm_bf16_fraction=bf16,
            gemm_fp8_fraction=fp8, gemm_fp4_fraction=self.default(a, "gemm_fp4_fraction", fp8, 0.2, 1.0)
            if has_fp4 else fp8, link_fraction=self.default(a, "link_fraction", DEFAULT_LINK_FRACTION, 0.2, 1.0),
            gemm_overlap=self.default(a, "gemm_overlap", DEFAULT_GEMM_OVERLAP, 0.0, 1.0, estimate=True),
            allreduce_latency_s=self.default(a, "allreduce_latency_us", DEFAULT_ALLREDUCE_LATENCY_S * 1e6, 0.5, 500.0,
                                             estimate=True) * u.US,
            alltoall_latency_s=self.default(a, "alltoall_latency_us", DEFAULT_ALLTOALL_LATENCY_S * 1e6, 1.0, 2000.0,
                                            estimate=True) * u.US,
            scaleout_latency_s=self.default(a, "scaleout_latency_us", 20.0, 1.0, 2000.0, estimate=True) * u.US,
            kernel_floor_s=self.default("kernels", "graph_kernel_us", 3.3, 0.1, 50.0, estimate=True) * u.US,
            kernel_floor_prior_s=None if prior(self.doc, "kernels", "graph_kernel_us") is None else
            prior(self.doc, "kernels", "graph_kernel_us") * u.US,
            quant_kernel_s=self.default("kernels", "quant_kernel_us", 1.5, 0.1, 50.0, estimate=True) * u.US,
            gemm_tile_m=self.default("kernels", "gemm_tile_m", 64, 1, 512, kind=int, estimate=True),
            weight_only_tile_m=self.fig("kernels", "weight_only_tile_m", required=False, lo=1, hi=512, kind=int,
                                        allow_estimate=True))


def _from_toml(path: Path) -> Hardware:
    doc, name = read_spec(path, _ALLOWED)
    aliases = doc.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise SpecError(f"{path}: aliases = {aliases!r}, expected a list of strings")
    if doc.get("vendor") not in VENDORS:      # engines name the vendors they run on (found by review: "NVIDIA")
        raise SpecError(f"{path}: vendor = {doc.get('vendor')!r}, expected one of {', '.join(VENDORS)}")
    arch = ARCHITECTURES[doc["vendor"]]
    if doc.get("architecture") not in arch:   # review: "Blackwell" or none silently dropped a per-generation rule
        raise SpecError(f"{path}: architecture = {doc.get('architecture')!r}, expected one of {', '.join(arch)} "
                        f"({doc['vendor']} chip generations)")
    r = _Reader(path, doc, name)
    peaks = r.peaks()
    l2 = r.fig("memory", "l2_cache_mb", required=False, lo=1.0, hi=1024.0)
    scaleout = r.fig("interconnect", "scaleout_gb_s_per_direction", required=False, lo=1.0, hi=1000.0)
    peer = r.fig("interconnect", "scaleup_peer_gb_s_per_direction", required=False, lo=1.0, hi=10_000.0)
    up = r.fig("interconnect", "scaleup_gb_s_per_direction", lo=10.0, hi=10_000.0)
    if peer is not None and peer > up:
        raise SpecError(f"{path}: [interconnect] scaleup_peer_gb_s_per_direction = {peer:g} exceeds "
                        f"scaleup_gb_s_per_direction = {up:g}; expected one peer's link, at most the whole scale-up "
                        "bandwidth")
    eff = r.efficiencies(peaks["fp4"] is not None)
    return Hardware(
        name=name, display_name=str(doc.get("display_name", name)), vendor=str(doc["vendor"]),
        architecture=str(doc["architecture"]),
        **{f"peak_{k}_flops_per_s": peaks[k] for k in u.PEAK_KEYS},
        hbm_capacity_bytes=r.fig("memory", "hbm_capacity_gib", lo=8.0, hi=2000.0) * u.GiB,
        hbm_bandwidth_bytes_per_s=r.fig("memory", "hbm_bandwidth_tb_s", lo=0.1, hi=50.0) * u.TB,
        l2_bytes=None if l2 is None else l2 * u.MB,
        scaleup_bytes_per_s=up * u.GB,
        scaleup_domain=r.fig("interconnect", "scaleup_domain_gpus", kind=int, lo=1, hi=1024),
        scaleout_bytes_per_s=None if scaleout is None else scaleout * u.GB,
        scaleup_peer_bytes_per_s=None if peer is None else peer * u.GB,
        p2p_allreduce=r.fig("interconnect", "p2p_allreduce", required=False, kind=int, lo=0, hi=1) != 0,
        tdp_w=r.fig("power", "tdp_w", lo=50.0, hi=5000.0), **eff,
        assumptions=tuple(r.assumptions), sources=tuple(dict.fromkeys(r.sources)))


def _bundled() -> dict[str, Path]:
    # by name, not path: "gh200.toml" sorts after "gh200-144gb.toml" ('.' > '-') but "gh200" before "gh200-144gb"
    return {p.stem: p for p in sorted(data_dir("hardware_specs").glob("*.toml"), key=lambda p: p.stem)}


def list_hardware() -> list[str]:
    """Names of the bundled devices (read from the folder at call time)."""
    return list(_bundled())


def _aliases() -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for stem, p in _bundled().items():
        doc = read_toml(p)
        for a in [stem, *doc.get("aliases", [])]:
            table.setdefault(str(a).lower(), [])
            if stem not in table[str(a).lower()]:
                table[str(a).lower()].append(stem)
    return table


def resolve_hardware_name(name: str) -> Path:
    """Map a device name or alias to its bundled spec file; ambiguous or unknown names raise SpecError."""
    bundled = _bundled()
    key = name.strip().lower()
    if key in bundled:
        return bundled[key]
    table = _aliases()
    hits = table.get(key, [])
    if len(hits) == 1:
        return bundled[hits[0]]
    if len(hits) > 1:
        raise SpecError(f"hardware name {name!r} is ambiguous: it fits {', '.join(sorted(hits))}; pass one of them")
    raise SpecError(f"unknown hardware {name!r}{suggest(key, sorted(table))}; "
                    f"bundled: {', '.join(bundled)} (or pass a path to a .toml file)")


def load_hardware(name_or_path: str | Path) -> Hardware:
    """Load a bundled device by name/alias, or a user's TOML file by path."""
    s = str(name_or_path)
    if s.endswith(".toml") or "/" in s or "\\" in s:
        return replace(_from_toml(Path(s)), path=s)
    h = _from_toml(resolve_hardware_name(s))
    fit = device_values(h.architecture)   # the shipped calibration (calibration/fit.toml), over the sourced value
    if "kernel_floor_s" not in fit:
        return h
    return replace(h, kernel_floor_s=fit["kernel_floor_s"], kernel_floor_prior_s=h.kernel_floor_s,
                   assumptions=h.assumptions + (f"graph_kernel_us = {fit['kernel_floor_s'] * 1e6:.3g} for "
                                                f"{h.architecture} is calibrated (calibration/fit.toml; sourced prior "
                                                f"{h.kernel_floor_s * 1e6:.3g})",))
