"""Engine overhead profiles: `engine_profiles/*.toml` (each setting with its source) -> frozen `EngineProfile` (SI)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from .attention_path import KEYS as ATTENTION_PATH_KEYS
from .attention_path import AttentionPath, read_attention_path
from .data import MONTH_RE, check_fields, data_dir, figure, name_list, prior, read_spec, suggest
from .drafters import METHODS
from .errors import ScenarioError, SpecError
from .fitted import engine_values
from .fusion import FUSIONS, read_kernels
from .hardware import ARCHITECTURES, VENDORS
from .hf_config import SUPPORTED_MODEL_TYPES
from .sampling import TopPFilter, read_filter

_ALLOWED: dict[str, set[str] | None] = {
    "schema": None, "name": None, "display_name": None, "version_note": None,
    "host": {"step_overhead_s", "per_seq_s", "overlap_scheduler", "overlap_with_spec", "overlap_with_spec_from",
             "no_overlap_methods", "overlap_with_spec_under_pp"},
    "spec": {"bookkeeping_s", "flashinfer_step_s", "bookkeeping_on_host", "host_bookkeeping_s",
             "draft_step_overhead_s", "ngram_host_s", "ngram_host_per_seq_s", "max_running_requests", "methods",
             "chain_methods", "catchup_logits_all", "linear_state_commit"},
    "launch": {"kernel_launch_s", "graph_kernel_floor"},
    "cuda_graphs": {"target", "target_max_batch", "draft", "draft_max_batch", "verify", "verify_max_batch"},
    "memory": {"gpu_memory_fraction", "reserve", "share_of_free"}, "collectives": {"allreduce_latency_s"},
    "efficiency": {"hbm_fraction", "gemm_fraction", "overlap_efficiency"}, "scope": {"valid_from", "vendors"},
    "schedule": {"mixed_prefill", "cap_per_instance_under_dp_attention", "dp_prompt_balance"},
    "parallel": {"ep_spans_instance"},
    "attention": {"mla_verify_kv_reread_blackwell", "sparse_mla_min_heads_hopper", "linear_state_bytes",
                  *ATTENTION_PATH_KEYS},
    "kernels": {"fused", "allreduce_norm_min_hidden", "fused_from", "fused_on"},
    "sampling": {"plain_filter_s_per_entry", "verify_filter_s_per_entry", "sort_s_per_entry", "plain_sort_from",
                 "sort_until", "bonus_row_plain"},
}


@dataclass(frozen=True, slots=True)
class EngineProfile:
    """Per-step costs an engine adds to the GPU roofline time, in seconds.

    Attributes
    ----------
    name : str
    host_step_s : float             fixed host work per decode step (scheduling, sampling, input prep)
    overlap : bool                  host work overlapped with the GPU for plain decode (step = max(gpu, host))
    overlap_with_spec : bool        the same while speculating
    overlap_with_spec_from : str    the month ("YYYY-MM") from which the engine's default build overlaps speculative
                                    steps: a measurement of an older build is priced without (validation's rows;
                                    '' when the default did not change)
    no_overlap_methods : tuple[str]  methods for which the engine turns that overlap off (CPU proposers)
    overlap_with_spec_under_pp : bool  whether speculative steps keep that overlap with pipeline stages (SGLang's PP
                                    speculation requires --disable-overlap-schedule: false)
    methods : tuple[str]            the speculative methods the engine runs ([spec] methods); () when the profile
                                    lists none: every method is priced. A scenario pairing it with another is refused
    chain_methods : tuple[str]      methods the engine drafts only as a chain ([spec] chain_methods: vLLM's Medusa
                                    proposer takes each head's argmax); a tree for one of them is refused
    vendors : tuple[str]            the GPU vendors the engine runs on ([scope] vendors); () when the profile lists
                                    none: any. A scenario on another vendor's device is refused
    host_per_seq_s : float          host work per running sequence per step (batch building, input prep, outputs)
    spec_bookkeeping_s : float      per speculative step (rejection sampling, tree build, draft-extend prep)
    bookkeeping_on_host : bool      that bookkeeping is host (CPU) work, so it hides behind the GPU with the rest of
                                    the host work when the engine overlaps a speculative step; False: GPU kernels
    spec_host_bookkeeping_s : float or None   the most of that bookkeeping that is host work (None: all of it);
                                    the rest adds to an overlapped step like GPU work (`hidden_bookkeeping_s`)
    draft_step_overhead_s : float   host/scheduling work per draft forward pass (the drafter's Python loop)
    catchup_logits_all : bool       an overlapped speculative step's draft-extend pass computes logits for all its
                                    k + 1 tokens (SGLang's SpecV2 worker); else one per sequence (`logits_catchup`)
    linear_state_commit : bool      after a verify, the accepted token's linear-attention state is copied from the
                                    per-draft-token cache into the sequence's live slot (SGLang: 1 + q states a
                                    speculating sequence); else the next step starts from the accepted slot (vLLM: q)
    ngram_host_s, ngram_host_per_seq_s : float   n-gram / suffix proposer host cost per step, and per sequence
    kernel_launch_s : float         per kernel when a pass runs eager
    graph_kernel_floor : bool       every kernel, graph-replayed or launched eagerly, costs the device's per-kernel
                                    floor (False: bare roofline)
    graphs_target, graphs_draft, graphs_verify : bool   CUDA graphs captured for that pass
    target_max_batch, draft_max_batch, verify_max_batch : float   largest captured batch; eager above
    gpu_memory_fraction : float     share of usable HBM the engine gives weights + KV + activations
    memory_reserve_rule : str       what the engine sets aside at start-up beside the weights and the KV cache,
                                    the peak of its profiling run ([memory] reserve), by rule: 'vllm' (its
                                    sampler's buffers, `engine_memory.reserve_bytes`) or '' (none, or the figure)
    memory_reserve_gib : float      that reserve as a figure, GiB, where the profile gives one ('' rule)
    share_of_free : bool            the share is of the memory the weights and that reserve leave (TensorRT-LLM's
                                    free_gpu_memory_fraction), not of the whole GPU
    plain_memory_fraction : float or None   the share of the same deployment's server without speculation, where it
                                    differs (SGLang's rule reserves no drafter memory: 2 GiB more); None: the same
    memory_rule : str               where that share comes from: SGLang's rules ('sglang' as loaded, from [memory]
                                    gpu_memory_fraction = { value = "sglang" }; once resolved 'sglang:rule' for its
                                    start-up rule, `sglang_memory_fraction`, or 'sglang:asked' for a deployment's own
                                    share, each '+aiter' where ROCm's aiter factor applies), the profile's fixed value
                                    (''), or another engine's deployment share ('asked'); `with_memory`
    allreduce_latency_s : float or None   engine's all-reduce latency (custom all-reduce), None: the hardware's
    hbm_fraction, gemm_fraction : float or None   calibrated overrides of the hardware's achievable fractions
    overlap_efficiency : float or None   calibrated share of min(math, memory) time hidden, one for every op
                                         (1 = roofline max); None: the measured mode (GEMMs at the device's
                                         gemm_overlap, other ops at the max)
    mla_verify_kv_reread_blackwell : float   on Blackwell, share of the per-query re-reads of an MLA target's KV
                                    cache that reach HBM in the engine's verify attention kernel (0: read once per
                                    sequence, as a kernel that folds the queries into the heads does)
    linear_state_bytes : int        bytes an element of a hybrid target's linear-attention state is kept in (4: fp32,
                                    SGLang's default; 2: the model's bf16, vLLM's)
    sparse_mla_min_heads_hopper : int  on Hopper, the query heads per rank the engine's sparse-MLA kernel of a DSA
                                    target computes at least (it pads fewer to it: `sparse_mla_heads`; 0: none)
    fused : tuple[str]              kernels the engine fuses on a target's decode path (fusion.FUSIONS); ()
                                    none, the unfused layer `workload` counts; allreduce_norm_min_hidden : int, the
                                    hidden size above which the all-reduce fusion applies (`fusion.FusionRule.of`);
                                    fused_from / fused_on : ((name, "YYYY-MM"), ...) the month the default build
                                    began to run a fusion (validation) / ((name, (generation, ...)), ...) the chip
                                    generations it runs on (`fusion.read_kernels`)
    topp : TopPFilter               top-k / top-p filtering per row and vocabulary entry ([sampling], `sampling`)
    valid_from : str                "YYYY-MM" the modelled mechanisms shipped ('' not stated); older builds differ
    priors : ((field, value), ...)  the sourced values calibrated fields started from (`uncalibrated()`)
    spec_max_running : float        requests the engine runs at once when speculating (the rest queue); 1e9: no cap
    mixed_prefill : bool            prompt chunks ride on the decode steps (one batch carries both); False: a step
                                    runs prompts or decodes, never both, so each prefill pass pauses every decode
    cap_per_instance_under_dp_attention : bool  the running cap binds the whole instance of an MoE under attention
                                    DP (SGLang divides it among the DP schedulers); False: each DP rank runs the cap
                                    (vLLM's engine cores, TensorRT-LLM's per-rank max_batch_size); a dense model's dp
                                    runs replicas, each with the cap, in every engine
    dp_prompt_balance : bool        an MoE's attention-DP ranks, which step in lockstep, schedule their prompts'
                                    chunks into the same steps (TensorRT-LLM's attention_dp_config.enable_balance);
                                    False: each rank mixes its own prompts in as they come, and a step waits for
                                    the rank that carries one (`prompts.straggler_load`)
    ep_spans_instance : bool        expert parallelism has no size of its own: on, it spreads the experts over every
                                    GPU of the instance (vLLM: EP size = TP x DP), so 1 < ep < tp x dp cannot run
    path : str                      the file a profile loaded by path was read from ('' by bundled name): it is used
                                    as written, without the shipped calibration (provenance: equality ignores it;
                                    results report it as engine_file)
    """

    name: str
    host_step_s: float = 0.0
    overlap: bool = True
    overlap_with_spec: bool = True
    no_overlap_methods: tuple[str, ...] = ()
    overlap_with_spec_under_pp: bool = True
    methods: tuple[str, ...] = ()
    chain_methods: tuple[str, ...] = ()
    vendors: tuple[str, ...] = ()
    host_per_seq_s: float = 0.0
    spec_bookkeeping_s: float = 0.0
    flashinfer_spec_step_s: float = 0.0
    attention_path: AttentionPath = AttentionPath()
    bookkeeping_on_host: bool = False
    spec_host_bookkeeping_s: float | None = None
    draft_step_overhead_s: float = 0.0
    catchup_logits_all: bool = False
    linear_state_commit: bool = False
    ngram_host_s: float = 0.0
    ngram_host_per_seq_s: float = 0.0
    kernel_launch_s: float = 0.0
    graph_kernel_floor: bool = True
    graphs_target: bool = True
    graphs_draft: bool = True
    graphs_verify: bool = True
    target_max_batch: float = 1e9
    draft_max_batch: float = 1e9
    verify_max_batch: float = 1e9
    gpu_memory_fraction: float = 1.0
    memory_reserve_rule: str = ""
    memory_reserve_gib: float = 0.0
    share_of_free: bool = False
    plain_memory_fraction: float | None = None
    memory_rule: str = ""
    allreduce_latency_s: float | None = None
    hbm_fraction: float | None = None
    gemm_fraction: float | None = None
    overlap_efficiency: float | None = None
    mla_verify_kv_reread_blackwell: float = 0.0
    sparse_mla_min_heads_hopper: int = 0
    linear_state_bytes: int = 4
    fused: tuple[str, ...] = ()
    allreduce_norm_min_hidden: int = 0
    fused_from: tuple[tuple[str, str], ...] = ()
    fused_on: tuple[tuple[str, tuple[str, ...]], ...] = ()
    topp: TopPFilter = TopPFilter()
    display_name: str = ""
    sources: tuple[str, ...] = ()
    valid_from: str = ""
    overlap_with_spec_from: str = ""
    priors: tuple[tuple[str, float], ...] = ()
    spec_max_running: float = 1e9
    mixed_prefill: bool = True
    cap_per_instance_under_dp_attention: bool = False
    dp_prompt_balance: bool = False
    ep_spans_instance: bool = False
    path: str = field(default="", compare=False)

    def graphed(self, pass_kind: str, batch, max_batch: float | None = None):
        """Whether a pass ('target', 'draft', 'verify') replays a CUDA graph at `batch` sequences (array ok): the
        engine captures it and the batch is within `max_batch` (None: every batch is captured, as a deployment
        sized to its load configures)."""
        on = {"target": self.graphs_target, "draft": self.graphs_draft, "verify": self.graphs_verify}[pass_kind]
        b = np.asarray(batch, dtype=np.float64)
        return on & (b <= (np.inf if max_batch is None else max_batch))

    def verify_kv_reread(self, architecture: str, mla: bool) -> float:
        """Share of the verify kernel's per-query KV-cache re-reads that reach HBM for a target on a device of
        `architecture` (0 unless the profile names one for MLA on Blackwell)."""
        return self.mla_verify_kv_reread_blackwell if mla and architecture == "blackwell" else 0.0

    def sparse_mla_heads(self, architecture: str) -> int:
        """The query heads per rank a DSA target's sparse-MLA kernel computes at least on a device of `architecture`
        (the engine pads fewer to it; 0: the rank's own heads)."""
        return self.sparse_mla_min_heads_hopper if architecture == "hopper" else 0

    def check_layout(self, tp: int, dp: int, ep: int) -> None:
        """Refuse a layout the engine cannot express: a partial expert parallelism where its EP spans the whole
        instance (ep_spans_instance; found by review: advise wrote vLLM's --enable-expert-parallel for ep 2 of 4
        GPUs, which runs EP over all 4, and curve priced that layout without a word)."""
        n = tp * dp
        if self.ep_spans_instance and 1 < ep < n:
            raise ScenarioError(f"ep = {ep} (--ep) with engine (--engine) = {self.name}: its expert parallelism has "
                                f"no size of its own and spreads the experts over every GPU of the instance (EP size "
                                f"= TP x DP = {n}; [parallel] ep_spans_instance), so ep = {ep}, each expert split "
                                f"{n // ep} ways, does not run there; expected ep = 1 or {n} (--ep 1 or --ep {n})")

    def overlaps(self, method: str | None) -> bool:
        """Whether host work hides behind the GPU for a step of `method` (None: plain decode)."""
        if method is None:
            return self.overlap
        return self.overlap_with_spec and method not in self.no_overlap_methods

    def logits_catchup(self, method: str | None) -> str:
        """Logit rows of the drafter's catch-up pass: 'all' k + 1 tokens or the 'last' per sequence."""
        return "all" if self.catchup_logits_all and self.overlaps(method) else "last"

    def uncalibrated(self) -> EngineProfile:
        """The profile with every calibrated field back at its sourced prior (what cross-validation fits from)."""
        return replace(self, **dict(self.priors), priors=()) if self.priors else self

    @property
    def hidden_bookkeeping_s(self) -> float:
        """The part of the per-step bookkeeping that is host work and hides behind the GPU when a speculative step
        overlaps: all of it, or at most spec_host_bookkeeping_s of it, where the bookkeeping is on the host; none
        where it is GPU work."""
        if not self.bookkeeping_on_host:
            return 0.0
        cap = self.spec_host_bookkeeping_s
        return self.spec_bookkeeping_s if cap is None else min(self.spec_bookkeeping_s, cap)

    @property
    def running_cap(self) -> float | None:
        """spec_max_running as reported: None where the profile sets no cap (its 1e9 sentinel)."""
        return float(self.spec_max_running) if self.spec_max_running < 1e9 else None

    @property
    def gpu_key(self) -> tuple[Any, ...]:
        """The fields a pass's GPU time depends on (all but host work, bookkeeping and names): a cache key."""
        return tuple(getattr(self, f.name) for f in fields(self) if f.name not in HOST_FIELDS)

    def memory_share(self, drafter: bool) -> float:
        """The share of each GPU's memory the server holds: with its drafter loaded, or plain (k = 0, speculation
        off), whose server SGLang's rule gives more."""
        return self.gpu_memory_fraction if drafter or self.plain_memory_fraction is None else \
            self.plain_memory_fraction

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = list(self.sources)
        return d


# Fields that price work around the passes (host work, the sampler's filter), not the passes themselves.
HOST_FIELDS = frozenset({"name", "display_name", "sources", "host_step_s", "host_per_seq_s", "overlap",
                         "overlap_with_spec", "no_overlap_methods", "overlap_with_spec_under_pp", "methods",
                         "chain_methods", "spec_bookkeeping_s", "flashinfer_spec_step_s", "attention_path",
                         "bookkeeping_on_host", "spec_host_bookkeeping_s", "draft_step_overhead_s",
                         "ngram_host_s", "ngram_host_per_seq_s", "gpu_memory_fraction", "plain_memory_fraction",
                         "memory_rule", "valid_from", "overlap_with_spec_from", "priors", "spec_max_running",
                         "mixed_prefill", "cap_per_instance_under_dp_attention", "dp_prompt_balance",
                         "ep_spans_instance", "path", "fused_from", "topp"})

_MAP = {  # (section, key) -> (field, kind, lo, hi)
    ("host", "step_overhead_s"): ("host_step_s", float, 0.0, 0.1),
    ("host", "overlap_scheduler"): ("overlap", bool, None, None),
    ("host", "overlap_with_spec"): ("overlap_with_spec", bool, None, None),
    ("host", "per_seq_s"): ("host_per_seq_s", float, 0.0, 1e-3),
    ("host", "overlap_with_spec_under_pp"): ("overlap_with_spec_under_pp", bool, None, None),
    ("spec", "bookkeeping_s"): ("spec_bookkeeping_s", float, 0.0, 0.1),
    ("spec", "flashinfer_step_s"): ("flashinfer_spec_step_s", float, 0.0, 0.1),
    ("spec", "bookkeeping_on_host"): ("bookkeeping_on_host", bool, None, None),
    ("spec", "host_bookkeeping_s"): ("spec_host_bookkeeping_s", float, 0.0, 0.1),
    ("spec", "draft_step_overhead_s"): ("draft_step_overhead_s", float, 0.0, 0.02),
    ("spec", "catchup_logits_all"): ("catchup_logits_all", bool, None, None),
    ("spec", "linear_state_commit"): ("linear_state_commit", bool, None, None),
    ("spec", "ngram_host_s"): ("ngram_host_s", float, 0.0, 0.1),
    ("spec", "ngram_host_per_seq_s"): ("ngram_host_per_seq_s", float, 0.0, 0.01),
    ("launch", "kernel_launch_s"): ("kernel_launch_s", float, 0.0, 1e-3),
    ("launch", "graph_kernel_floor"): ("graph_kernel_floor", bool, None, None),
    ("cuda_graphs", "target"): ("graphs_target", bool, None, None),
    ("cuda_graphs", "draft"): ("graphs_draft", bool, None, None),
    ("cuda_graphs", "verify"): ("graphs_verify", bool, None, None),
    ("cuda_graphs", "target_max_batch"): ("target_max_batch", int, 0, 10**12),
    ("cuda_graphs", "draft_max_batch"): ("draft_max_batch", int, 0, 10**12),
    ("cuda_graphs", "verify_max_batch"): ("verify_max_batch", int, 0, 10**12),
    ("memory", "gpu_memory_fraction"): ("gpu_memory_fraction", float, 0.1, 1.0),
    ("memory", "share_of_free"): ("share_of_free", bool, None, None),
    ("spec", "max_running_requests"): ("spec_max_running", int, 1, 10**9),
    ("schedule", "mixed_prefill"): ("mixed_prefill", bool, None, None),
    ("schedule", "cap_per_instance_under_dp_attention"): ("cap_per_instance_under_dp_attention", bool, None, None),
    ("schedule", "dp_prompt_balance"): ("dp_prompt_balance", bool, None, None),
    ("parallel", "ep_spans_instance"): ("ep_spans_instance", bool, None, None),
    ("collectives", "allreduce_latency_s"): ("allreduce_latency_s", float, 1e-7, 1e-3),
    ("efficiency", "hbm_fraction"): ("hbm_fraction", float, 0.2, 1.0),
    ("efficiency", "gemm_fraction"): ("gemm_fraction", float, 0.1, 1.0),
    ("efficiency", "overlap_efficiency"): ("overlap_efficiency", float, 0.0, 1.0),
    ("attention", "mla_verify_kv_reread_blackwell"): ("mla_verify_kv_reread_blackwell", float, 0.0, 1.0),
    ("attention", "sparse_mla_min_heads_hopper"): ("sparse_mla_min_heads_hopper", int, 0, 1024),
    ("attention", "linear_state_bytes"): ("linear_state_bytes", int, 1, 4),
    ("kernels", "allreduce_norm_min_hidden"): ("allreduce_norm_min_hidden", int, 0, 10**6),
}
REQUIRED = {("host", "step_overhead_s"), ("spec", "bookkeeping_s"), ("launch", "kernel_launch_s"),
            ("memory", "gpu_memory_fraction")}


def read_profile(path: Path) -> EngineProfile:
    """Read one engine profile TOML (the schema in engine_profiles/README.md)."""
    doc, name = read_spec(path, _ALLOWED)
    kw: dict[str, Any] = {"name": name, "display_name": str(doc.get("display_name", name))}
    sources, priors = [], []
    for (sec, key), (fld, kind, lo, hi) in _MAP.items():
        if (sec, key) == ("memory", "gpu_memory_fraction") and _rule(doc, path):
            kw["memory_rule"] = "sglang"
            sources.append(doc[sec][key]["source"])
            continue
        v = figure(doc, sec, key, path, required=(sec, key) in REQUIRED, kind=kind, lo=lo, hi=hi,
                   allow_estimate=True)   # "estimate" or "calibrated" (written by specroof calibrate) allowed
        if v is not None:
            kw[fld] = v
            src = doc[sec][key]["source"]
            if src not in ("estimate", "calibrated"):
                sources.append(src)
            if src == "calibrated":
                priors.append((fld, kind(prior(doc, sec, key))))
    kw["priors"] = tuple(priors)
    kw["memory_reserve_rule"], kw["memory_reserve_gib"], src = _reserve(doc, path)
    sources += [src] if src else []
    kw["no_overlap_methods"] = name_list(doc, path, "host", "no_overlap_methods", METHODS, at_least_one=False)
    kw["methods"] = name_list(doc, path, "spec", "methods", METHODS)
    kw["chain_methods"] = name_list(doc, path, "spec", "chain_methods", METHODS)
    kw["attention_path"] = read_attention_path(doc, path, ARCHITECTURES["nvidia"], SUPPORTED_MODEL_TYPES)
    kw["vendors"] = name_list(doc, path, "scope", "vendors", VENDORS)
    kw["fused"] = name_list(doc, path, "kernels", "fused", tuple(sorted(FUSIONS)))
    kw["valid_from"] = _month(doc, path, "scope", "valid_from")
    kw["overlap_with_spec_from"] = _month(doc, path, "host", "overlap_with_spec_from")
    kw.update(read_kernels(doc, path, kw["fused"]))
    kw["topp"] = read_filter(doc, path)
    kw["sources"] = tuple(dict.fromkeys(sources))
    return EngineProfile(**kw)


def _rule(doc: dict[str, Any], path: Path) -> bool:
    """Whether [memory] gpu_memory_fraction names a start-up rule ({ value = "sglang", source = ... }) in place of a
    number; a string that names none is refused."""
    fig = doc.get("memory", {}).get("gpu_memory_fraction")
    v = fig.get("value") if isinstance(fig, dict) else None
    if not isinstance(v, str):
        return False
    where = f"{path}: [memory] gpu_memory_fraction"
    if v != "sglang":
        raise SpecError(f"{where}: value = {v!r}; expected a number in [0.1, 1.0] or \"sglang\" (SGLang's start-up "
                        "rule)")
    check_fields(fig, where, frozenset(), allow_estimate=False)       # a source URL, no unknown fields
    return True


def _reserve(doc: dict[str, Any], path: Path) -> tuple[str, float, str]:
    """[memory] reserve: a start-up rule by name ("vllm") or a figure in GiB (0-64), and its source."""
    fig = doc.get("memory", {}).get("reserve")
    if fig is None:
        return "", 0.0, ""
    where = f"{path}: [memory] reserve"
    check_fields(fig, where, frozenset(), allow_estimate=True)
    v = fig["value"]
    if v != "vllm" and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 64.0):
        raise SpecError(f"{where}: value = {v!r}; expected a figure in GiB from 0 to 64 or \"vllm\" (vLLM's "
                        "profiling run)")
    src = "" if fig["source"] == "estimate" else fig["source"]
    return ("vllm", 0.0, src) if v == "vllm" else ("", float(v), src)


def _month(doc: dict[str, Any], path: Path, sec: str, key: str) -> str:
    """A month, { value = "YYYY-MM", source = ... } ('' when not stated): [scope] valid_from, the month the
    mechanisms the profile models shipped (measurements of older builds are reported apart by `specroof validate`),
    or [host] overlap_with_spec_from, the month the default build began to overlap speculative steps."""
    entry = doc.get(sec, {}).get(key)
    if entry is None:
        return ""
    where = f"{path}: [{sec}] {key}"
    if not isinstance(entry, dict) or not isinstance(entry.get("source"), str) or "value" not in entry:
        raise SpecError(f"{where}: expected {{ value = \"YYYY-MM\", source = \"https://...\" }}")
    v = entry["value"]
    if not isinstance(v, str) or not MONTH_RE.fullmatch(v):
        raise SpecError(f"{where}: value = {v!r}; expected a month as \"YYYY-MM\"")
    return v


def is_profile_path(name_or_path: str) -> bool:
    """Whether load_engine reads `name_or_path` as a file (a .toml name or a path with a separator), not a bundled
    name: the one rule, which calibrate's write_profile follows too."""
    return name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path


def list_engines() -> list[str]:
    """Names of the bundled engine profiles."""
    return [p.stem for p in sorted(data_dir("engine_profiles").glob("*.toml"))]


def load_engine(name_or_path: str | Path) -> EngineProfile:
    """Load a bundled profile by name or a user's TOML by path."""
    s = str(name_or_path)
    if is_profile_path(s):
        return replace(read_profile(Path(s)), path=s)
    names = list_engines()
    s = s.strip().lower() if s.strip().lower() in names else s      # names are case-insensitive
    if s not in names:
        raise SpecError(f"unknown engine {s!r}{suggest(s, names)}; bundled: {', '.join(names)} "
                        "(or pass a path to a .toml profile)")
    prof = read_profile(data_dir("engine_profiles") / f"{s}.toml")
    fit = engine_values(s)      # the shipped calibration (calibration/fit.toml), over the sourced values
    if not fit:
        return prof
    return replace(prof, **fit, priors=tuple((k, getattr(prof, k)) for k in fit))


def check_engine_method(eng: EngineProfile, method: str | None, tree: int | None = None, k: int | str = 0,
                        branching: int | None = None) -> None:
    """A speculative method the engine's profile does not list ([spec] methods) is refused: it would be priced with
    host costs of an engine that cannot run it (no method, or a profile without the list, always passes); so is a
    tree of `tree` tokens at depth k for a method the engine drafts only as a chain ([spec] chain_methods), unless k
    is 0, speculation off, where no tree runs (found by review: vLLM Medusa at --k 0 was refused for its tree), and
    a k + 1 tree with a branching above 1, which pricing runs as a tree (acceptance.priced_shape; second review)."""
    wide = (branching or 1) > 1                         # a k + 1 tree drafting wider than a chain
    if method in eng.chain_methods and tree is not None and k != 0 and (k == "auto" or tree != k + 1 or wide):
        raise ScenarioError(f"method (--method) = {method} with engine (--engine) = {eng.name}: engine {eng.name} "
                            f"drafts {method} as a chain, one token per head ([spec] chain_methods), so the "
                            f"{tree}-token tree cannot run there; pass a depth and a chain, --k N --tree-tokens N+1 "
                            "(branching 1; tree_tokens = k + 1: curve, serve, frontier; advise tries every depth with "
                            "one tree, so it has no such chain), or another engine")
    if method is None or not eng.methods or method in eng.methods:
        return
    raise ScenarioError(f"method (--method) = {method} with engine (--engine) = {eng.name}: engine {eng.name} does "
                        f"not run {method}; its profile ([spec] methods) lists {', '.join(eng.methods)}: pick one of "
                        "those, or another engine")


def spec_overlapped(eng: EngineProfile, on: bool | None, method: str | None = None) -> EngineProfile:
    """The profile with speculative steps overlapping host work or not (`on`; None keeps the profile's). An engine
    without an overlap scheduler, or one that runs `method` without it (host.no_overlap_methods), is refused."""
    if on and not eng.overlap:
        raise ScenarioError(f"spec_overlap = true: engine {eng.name} has no overlap scheduler (its profile: "
                            "host.overlap_scheduler = false), so its speculative steps cannot hide host work; use "
                            "--no-spec-overlap or leave it unset")
    if on and method in eng.no_overlap_methods:
        raise ScenarioError(f"spec_overlap = true: engine {eng.name} runs {method} without its overlap scheduler "
                            f"(host.no_overlap_methods = {list(eng.no_overlap_methods)}); use --no-spec-overlap or "
                            "leave it unset")
    if on is None or on == eng.overlap_with_spec:
        return eng
    return replace(eng, overlap_with_spec=on)


def pp_overlapped(eng: EngineProfile, pp: int, on: bool | None, method: str | None) -> EngineProfile:
    """The profile under pipeline stages: an engine whose speculative steps lose their overlap there
    (host.overlap_with_spec_under_pp false) prices them without it, and refuses spec_overlap = true."""
    if pp == 1 or method is None or eng.overlap_with_spec_under_pp or not eng.overlap_with_spec:
        return eng
    if on:
        raise ScenarioError(f"spec_overlap = true with pp = {pp}: engine {eng.name} runs speculation with "
                            "pipeline stages only without its overlap scheduler (host.overlap_with_spec_under_pp = "
                            "false); use --no-spec-overlap or leave it unset")
    return replace(eng, overlap_with_spec=False)


def check_engine_vendor(eng: EngineProfile, vendor: str, device: str) -> None:
    """Refuse a device of a vendor the engine does not run on ([scope] vendors), naming both."""
    if eng.vendors and vendor not in eng.vendors:
        raise ScenarioError(f"engine {eng.name} runs on {' or '.join(eng.vendors)} GPUs only ([scope] vendors); "
                            f"hardware {device} is {vendor}: choose another engine or device")
