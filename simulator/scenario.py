"""Every input of a prediction in one frozen `Scenario`: each field carries its default, its check and its help text
(the CLI flags, the sweep's parameters and `speedup_curve`'s keywords are all read from this one table), and
`Scenario.resolve()` loads and checks what it names into a priced `Deployment`.

Adding a scenario parameter is one field here (with its `kind`, which gives the check, `scenario_kinds.CHECKS`, and
the CLI parser) plus its use downstream; the CLI gets a flag, sweeps a parameter and the Python API a keyword
without further edits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .acceptance import Acceptance, Verify, check_branching, verify_shape
from .data import suggest
from .drafters import (
    MEDUSA_TREE_TOKENS,
    METHODS,
    PUBLISHED_ACCEPTANCE,
    TREE_METHODS,
    Drafter,
    check_drafting,
    default_acceptance,
    make_drafter,
    verified_tree,
)
from .engine import EngineProfile, check_engine_method, check_engine_vendor, load_engine, pp_overlapped, spec_overlapped
from .engine_memory import with_memory
from .errors import ScenarioError
from .experts import SEQ_ROUTING_RHO
from .fusion import FusionRule
from .hardware import Hardware, load_hardware
from .model import ModelShape, check_servable, load_model
from .scenario_kinds import CHECKS
from .target_ops import same_ops, target_ops, verify_key, verify_ops
from .units import DTYPE_BYTES
from .workload import OpSet, Parallelism, Precision, make_precision

DEFAULT_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _f(default: Any, kind: str, help: str, *, cli: bool = True, sweep: bool = True) -> Any:
    """A Scenario field: its default, its kind (CHECKS) and help text, and whether the CLI and sweeps expose it."""
    return field(default=default, metadata={"kind": kind, "help": help, "cli": cli, "sweep": sweep})


@dataclass(frozen=True)
class Scenario:
    """Every input of one prediction (defaults: Llama-3.1-8B with an EAGLE-3 head on one H100 SXM under SGLang).

    Names may be bundled ids (case-insensitive) or paths; the loaded objects are accepted too. Each field is checked
    when the Scenario is made (`ScenarioError` names the field, the value and what is allowed); what needs the
    loaded files (tp dividing the heads, a precision the chip lacks) is checked by `resolve()`.
    """

    hardware: str | Hardware = _f("h100-sxm", "hardware", "device name, alias or path to a .toml spec (a path is "
                                  "used as written: the shipped calibration of the per-kernel cost applies to "
                                  "bundled names only)")
    model: str | ModelShape = _f("llama-3.1-8b", "model", "target model id or path to an HF config.json")
    method: str | None = _f("eagle3", "method", f"speculative method: {', '.join(METHODS)}")
    draft: str | ModelShape | None = _f(None, "draft", "draft model / head id or config path (default: the "
                                        "method's bundled or synthesized drafter)")
    engine: str | EngineProfile = _f("sglang", "engine", "engine profile name (ideal, vllm, sglang, trtllm, hf) or "
                                     "path (used as written: calibration/fit.toml applies to bundled names only, so "
                                     "a copy of a bundled profile gives its sourced priors); sglang is the default "
                                     "because its profile is the one validated on published batch sweeps")
    precision: str = _f("bf16", "precision", f"weight format of the target: {', '.join(DTYPE_BYTES)}")
    expert_precision: str | None = _f(None, "precision?", "weight format of MoE experts (default: --precision)")
    attention_precision: str | None = _f(None, "precision?", "weight format of the attention projections "
                                         "(default: --precision), e.g. bf16 attention with fp4 experts")
    draft_precision: str | None = _f(None, "precision?", "weight format of the drafter (default: --precision)")
    kv_precision: str | None = _f(None, "precision?", "KV-cache format (default bf16)")
    tp: int = _f(1, "int>=1", "tensor-parallel GPUs")
    ep: int = _f(1, "int>=1", "expert-parallel GPUs: each holds experts/ep whole routed experts (1: experts split "
                 "like the dense FFN)")
    dp: int = _f(1, "int>=1", "attention data-parallel groups of tp GPUs each (DP attention); the instance has tp x dp "
                 "GPUs and the busiest group serves ceil(batch/dp) sequences")
    pp: int = _f(1, "int>=1", "pipeline stages of tp x dp GPUs, floor or ceil(n_layers/pp) layers each (the engines' "
                 "split), up to pp micro-batches in flight (tp x dp x pp GPUs; PP saves memory, not decode latency)")
    acceptance: Acceptance | None = _f(None, "acceptance", "acceptance model (default: the method's published one)",
                                       cli=False, sweep=False)
    k: int | str = _f("auto", "k", "draft depth, or auto for the best per batch (0: speculation off)")
    k_max: int = _f(8, "int>=1", "largest k tried by k auto")
    tree_tokens: int | None = _f(None, "int>=2?", "verify a draft tree of T tokens per sequence (default: a chain "
                                 "of k + 1; Medusa: its 64-token tree)")
    tree_branching: int | None = _f(None, "int>=1?", "tree frontier width, top-k per depth (default: the nodes "
                                    "spread evenly over the depths); needs --tree-tokens, except for medusa's "
                                    "default tree")
    context: int = _f(1024, "int>=0", "tokens already in the KV cache per sequence")
    batch: tuple[int, ...] = _f(DEFAULT_BATCH, "batch", "batch sizes: a list 1,8,64 or a range 1..256 (every power "
                                "of two in it and both ends)", sweep=False)
    overlap: str | float | None = _f(None, "overlap", "measured: GEMMs hide the device's gemm_overlap of their smaller "
                                     "time, other ops overlap fully; max: every op at the roofline max; sum: no "
                                     "overlap; or an efficiency in [0, 1] for every op; default: the engine "
                                     "profile's value, else measured")
    draft_kv_window: int | None = _f(None, "int>=1?", "drafter KV window W tokens (long-context self-speculation)")
    cuda_graph_max_batch: int | None = _f(None, "int>=1?", "largest batch (of the busiest attention-DP rank) that "
                                          "replays CUDA graphs, above it passes run eager (default: every batch, as "
                                          "a deployment sized to its load captures; engines' own defaults are "
                                          "128-512)")
    max_running_requests: int | None = _f(None, "int>=1?", "requests the engine runs at once, with speculation and "
                                          "without; the rest queue (SGLang's --max-running-requests, vLLM's "
                                          "--max-num-seqs; default: the engine profile's, SGLang 48 while "
                                          "speculating and no cap without, others no cap); under vLLM also the "
                                          "rows its start-up sampler reserves memory for (its default: 1024 on "
                                          "70 GiB GPUs; advise takes the range's top); not a sweep parameter",
                                          sweep=False)
    memory_fraction: float | None = _f(None, "fraction?", "share of each GPU's memory the engine may fill (vLLM "
                                       "--gpu-memory-utilization; SGLang --mem-fraction-static, which leaves "
                                       "activations and CUDA graphs outside it), priced as weights + KV cache + "
                                       "activations; under TensorRT-LLM its kv_cache_config."
                                       "free_gpu_memory_fraction, the KV cache's share of the memory the weights "
                                       "and its start-up dry run leave free (engine profile [memory] share_of_free); "
                                       "default: the engine profile's; not a sweep parameter", sweep=False)
    spec_overlap: bool | None = _f(None, "bool?", "host work of a speculative step hidden behind the GPU (SGLang's "
                                   "SpecV2 worker, its default from v0.5.11; vLLM async scheduling): on or off "
                                   "(off: SGLang's V1 worker); default: the engine profile's (on for SGLang, vLLM, "
                                   "TensorRT-LLM; HF off)")
    dp_balance: bool | None = _f(None, "bool?", "an MoE's attention-DP ranks schedule their prompts into the same "
                                 "steps (TensorRT-LLM attention_dp_config.enable_balance); off, a step waits for the "
                                 "rank carrying a prompt; default: the profile's (off); serve, frontier", sweep=False)
    routing_locality: float | None = _f(None, "locality?", "MoE: rho, the q tokens a sequence brings to one pass (a "
                                        "verify, a prefill chunk) touch the experts of 1 + rho (q - 1) independent "
                                        f"tokens (1: independent; default: {SEQ_ROUTING_RHO:g}, measured on Cohere's "
                                        "128-expert model; README); the target and an MTP module built from it, not "
                                        "a separate draft model; not a sweep, validate or calibrate parameter (they "
                                        "price the default)", sweep=False)
    sampling: str = _f("greedy", "sampling", "how requests draw their tokens: greedy (temperature 0: argmax) or top-p "
                       "(a top_p below 1 or a top_k: the engine filters each sampled row first, every verified row "
                       "of a verify pass; engine profile [sampling]); not a sweep parameter", sweep=False)
    options: tuple[tuple[str, Any], ...] = _f((), "options", "deployment options for the hazard check",
                                              cli=False, sweep=False)

    def __post_init__(self) -> None:
        for f in fields(self):     # each value normalized (lower-case names, tuples): still frozen after
            object.__setattr__(self, f.name, CHECKS[f.metadata["kind"]](f.name, getattr(self, f.name)))
        self._check_tree()
        self._check_spec_overlap()

    def _check_spec_overlap(self) -> None:
        """The hazard option overlap_scheduler says the same as spec_overlap: given both, they agree."""
        opt = dict(self.options).get("overlap_scheduler")
        if opt is not None and self.spec_overlap is not None and opt != self.spec_overlap:
            raise ScenarioError(f"spec_overlap = {str(self.spec_overlap).lower()} but options overlap_scheduler = "
                                f"{str(opt).lower()}: both say whether speculative steps overlap host work; give "
                                "one, or the same value")

    @property
    def spec_overlap_asked(self) -> bool | None:
        """spec_overlap, else the hazard option overlap_scheduler, else None (the engine profile's mode)."""
        return self.spec_overlap if self.spec_overlap is not None else dict(self.options).get("overlap_scheduler")

    def _check_tree(self) -> None:
        if self.tree_tokens is None:
            self._check_branching_alone()
            return
        if self.method not in TREE_METHODS:
            raise ScenarioError(f"method {self.method} verifies a chain; tree_tokens applies to "
                                f"{', '.join(sorted(TREE_METHODS))}")
        check_branching(self.tree_tokens, self.tree_branching)
        if self.k != "auto" and 0 < self.k and self.tree_tokens < self.k + 1:
            raise ScenarioError(f"a tree of {self.tree_tokens} tokens is smaller than k + 1 = {self.k + 1}: it "
                                f"cannot hold a chain of depth {self.k}")

    def _check_branching_alone(self) -> None:
        """tree_branching without tree_tokens shapes only Medusa's default tree; on a chain it would be ignored."""
        if self.tree_branching is None:
            return
        if self.fixed_tree:          # Medusa's default tree: its branching is bounded like a given tree's (review)
            check_branching(MEDUSA_TREE_TOKENS, self.tree_branching)
            return
        what = f"method {self.method} verifies a chain of k + 1 tokens" if self.method else "speculation is off"
        raise ScenarioError(f"tree_branching (--tree-branching) = {self.tree_branching} without tree_tokens: {what}, "
                            "which has no branching to set; give tree_tokens (--tree-tokens) too, for a tree method ("
                            f"{', '.join(sorted(TREE_METHODS))}), or leave it out (only medusa's default "
                            f"{MEDUSA_TREE_TOKENS}-token tree takes it alone)")

    def replace(self, **changes: Any) -> Scenario:
        """A copy with some fields changed (checked again); an unknown field name is an error naming it."""
        check_field_names(changes, "scenario")
        return replace(self, **changes)

    auto = property(lambda self: self.k == "auto")

    @property
    def fixed_tree(self) -> bool:
        """Medusa verifies its default tree unless a tree size is given."""
        return self.method == "medusa" and self.tree_tokens is None

    @property
    def tree(self) -> int | None:
        """Tokens verified per sequence by a tree (None: a chain)."""
        return verified_tree(self.method, self.tree_tokens, self.tree_branching)[0]

    @property
    def branching(self) -> int | None:  # API review: spread evenly, Medusa's depth 1 held 63 candidates, all accepted
        """Candidates per depth of the tree priced: tree_branching, else Medusa's default tree's (its acceptance's)."""
        return verified_tree(self.method, self.tree_tokens, self.tree_branching)[1]

    def verify(self, k: int) -> Verify:
        """The verify shape at depth k (acceptance.verify_shape over this scenario's tree)."""
        return verify_shape(k, self.tree, self.branching)

    def resolve(self, loaded: dict[tuple[str, str], Any] | None = None) -> Deployment:
        """Load and check everything the scenario names; `loaded` caches files read by name across calls."""
        return _resolve(self, loaded)


def scenario_fields(where: str) -> list[Any]:
    """The Scenario fields exposed to "cli" or "sweep", in declaration order."""
    return [f for f in fields(Scenario) if f.metadata[where]]


def field_kind(name: str) -> str:
    return {f.name: f.metadata["kind"] for f in fields(Scenario)}[name]


def as_scenario(v: Any, what: str) -> Scenario:
    """`v` when it is a Scenario, the default Scenario for None; anything else is a ScenarioError naming `what`."""
    if v is None:
        return Scenario()
    if not isinstance(v, Scenario):
        raise ScenarioError(f"{what}: scenario = {v!r}; expected a Scenario (or pass its fields as keywords: "
                            "hardware=..., model=..., method=...)")
    return v


def check_field_names(kw: Mapping[str, Any], what: str) -> None:
    """Raise a ScenarioError naming the first key of `kw` that is not a Scenario field, with the nearest names."""
    names = [f.name for f in fields(Scenario)]
    bad = [k for k in kw if k not in names]
    if bad:
        raise ScenarioError(f"{what}: unknown field {bad[0]!r}{suggest(bad[0], names)}; fields: {', '.join(names)}")


def check_value(name: str, v: Any) -> Any:
    """One field's check (the sweep spec and the rows CSV use it value by value)."""
    return CHECKS[field_kind(name)](name, v)


@dataclass(frozen=True)
class Deployment:
    """A resolved scenario: the device as the engine drives it, the target, the drafter, precisions, parallelism,
    the target's forward-pass ops (tops: logits for every token, decode and verify; lops: for the last token of
    each sequence, prefill; vops: the verify pass where it differs, target_ops.verify_key: the engine's verify kernel
    re-reads the KV cache per query token, or commits a hybrid target's accepted state; else None, and `verify_ops` is
    tops) and the overlap mode. The one input of `pricing`."""

    scenario: Scenario
    hw: Hardware
    eng: EngineProfile
    target: ModelShape
    drafter: Drafter | None
    p: Precision
    dp: Precision
    par: Parallelism
    tops: OpSet
    lops: OpSet
    overlap: str | float
    acc: Acceptance | None = None
    vops: OpSet | None = None
    # Opt-in cache of priced passes (pricing.price_pass), for callers that price one deployment many times with
    # other host overheads (calibration); None: no caching.
    memo: dict[Any, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def acceptance(self) -> Acceptance:
        """The scenario's acceptance, or the method's published one (looked up once, at resolve)."""
        if self.acc is not None:
            return self.acc
        a = self.scenario.acceptance
        return a if a is not None else default_acceptance(self.scenario.method)

    @property
    def verify_ops(self) -> OpSet:
        """The ops of a pass with logits for every token and q > 1 (verify): vops, or tops where they are alike."""
        return self.tops if self.vops is None else self.vops

    @property
    def kmax(self) -> int:
        """Largest depth tried: k_max, capped by the drafter (Medusa's heads); 0 without speculation."""
        return min(self.scenario.k_max, self.drafter.n_heads_max) if self.drafter is not None else 0

    @property
    def n_gpus(self) -> int:
        return self.par.n_gpus

    @property
    def cross_node(self) -> bool:
        """A collective of the target's pass other than the expert-parallel all-to-all is priced on the scale-out
        link (the hazard option), read from the ops workload built: TP all-reduces, stage sends, the all-gather or
        all-reduce of experts split over attention-DP ranks."""
        return self.tops.leaves_domain


def with_engine(dep: Deployment, eng: EngineProfile) -> Deployment:
    """The deployment priced with another engine profile (calibration varies overheads and efficiencies on a
    resolved deployment); a profile with another all-reduce latency changes the device: resolve again; one that fuses
    other kernels is resolved again here (review: validate --engine-override with such a profile priced no row)."""
    if eng.allreduce_latency_s != dep.eng.allreduce_latency_s:
        raise ScenarioError("with_engine: the new profile changes the all-reduce latency; resolve the scenario again")
    if not same_ops(eng, dep.eng, dep.hw):    # its op sets follow the kernels it fuses and its sparse-MLA padding
        return dep.scenario.replace(engine=eng).resolve()
    check_engine_method(eng, dep.scenario.method, dep.scenario.tree, dep.scenario.k, dep.scenario.branching)
    given, s = eng, dep.scenario
    eng = spec_overlapped(eng, s.spec_overlap_asked, s.method)
    eng = pp_overlapped(eng, dep.par.pp, s.spec_overlap_asked, s.method)
    if eng.logits_catchup(s.method) != dep.eng.logits_catchup(s.method):
        return s.replace(engine=given).resolve()              # the drafter's catch-up pass computes other logits
    eng = with_memory(eng, dep.hw, dep.par, dep.target, s.method, s.memory_fraction, s.cuda_graph_max_batch)
    s = replace(s, engine=eng)
    key = (verify_key(e, dep.hw, dep.target) for e in (eng, dep.eng))
    vops = dep.vops if len(set(key)) == 1 else verify_ops(eng, dep.hw, dep.target, dep.p, dep.par)
    return replace(dep, eng=eng, scenario=s, overlap=resolve_overlap(s.overlap, eng), vops=vops)


def _load(kind: str, v: Any, loaded: dict[tuple[str, str], Any] | None) -> Any:
    if not isinstance(v, str):
        return v
    key = (kind, v)
    if loaded is not None and key in loaded:
        return loaded[key]
    obj = {"hardware": load_hardware, "model": load_model, "engine": load_engine}[kind](v)
    if loaded is not None:
        loaded[key] = obj
    return obj


def engine_hardware(hw: Hardware, eng: EngineProfile) -> Hardware:
    """The device as the engine drives it: the engine's all-reduce latency when its profile has one."""
    return hw if eng.allreduce_latency_s is None else replace(hw, allreduce_latency_s=eng.allreduce_latency_s)


def resolve_overlap(overlap: str | float | None, eng: EngineProfile) -> str | float:
    """The overlap mode to price with: the scenario's, else the engine's calibrated efficiency, else "measured"."""
    if overlap is not None:
        return overlap
    return eng.overlap_efficiency if eng.overlap_efficiency is not None else "measured"


def check_stages(par: Parallelism, hw: Hardware) -> None:
    """Pipeline stages that would span scale-up domains of a device without a published scale-out link are refused
    by name (pp, the GPUs and the pp that fit), before the pricing finds the stage-to-stage send it cannot time."""
    if par.pp == 1 or hw.scaleout_bytes_per_s is not None or par.n_gpus <= hw.scaleup_domain \
            or par.stage_gpus > hw.scaleup_domain:      # a stage wider than the domain: its own collectives say so
        return
    most = hw.scaleup_domain // par.stage_gpus
    raise ScenarioError(f"pp = {par.pp} (--pp): tp x dp x pp = {par.stage_gpus} x {par.pp} = {par.n_gpus} GPUs "
                        f"span more than one {hw.scaleup_domain}-GPU scale-up domain of {hw.name}, whose "
                        f"scale-out bandwidth (between stages) is not published; expected pp "
                        f"{'= 1' if most == 1 else f'from 1 to {most}'} at tp x dp = {par.stage_gpus}")


def _resolve(s: Scenario, loaded: dict[tuple[str, str], Any] | None) -> Deployment:
    eng = _load("engine", s.engine, loaded)
    check_engine_method(eng, s.method, s.tree, s.k, s.branching)
    asked = {"spec_max_running": None if s.max_running_requests is None else float(s.max_running_requests),
             "dp_prompt_balance": s.dp_balance}        # the deployment's own, over the engine profile's
    eng = replace(spec_overlapped(eng, s.spec_overlap_asked, s.method),
                  **{f: v for f, v in asked.items() if v is not None})
    hw = engine_hardware(_load("hardware", s.hardware, loaded), eng)
    check_engine_vendor(eng, hw.vendor, hw.name)
    target = _load("model", s.model, loaded)
    check_servable(target, s.model, s.expert_precision, dict(s.options).get("moe"), s.routing_locality)
    target = target if s.routing_locality is None else replace(target, routing_locality=s.routing_locality)
    par = Parallelism(tp=s.tp, ep=s.ep, dp=s.dp, pp=s.pp)
    par.check(target)                     # the target's layout first: its error names the target, not the drafter
    eng.check_layout(par.tp, par.dp, par.ep)
    check_stages(par, hw)
    eng = with_memory(eng, hw, par, target, s.method, s.memory_fraction, s.cuda_graph_max_batch)
    eng = pp_overlapped(eng, par.pp, s.spec_overlap_asked, s.method)
    p = make_precision(s.precision, s.kv_precision, s.expert_precision, s.attention_precision)
    hw.check_kv_format(p.kv)
    check_drafting(s.method, s.draft_precision, s.k, s.k_max, s.draft_kv_window)
    dp = make_precision(s.draft_precision or p.weights, s.kv_precision)
    hw.peak_flops_per_s(p.activations)    # weight formats without tensor cores compute in the activation format
    drafter = None if s.method is None else \
        make_drafter(s.method, target, s.draft, dp, par, s.draft_kv_window, hw.scaleup_domain,
                     FusionRule.on(eng, hw), eng.logits_catchup(s.method), eng.sparse_mla_heads(hw.architecture))
    return Deployment(s, hw, eng, target, drafter, p, dp, par, target_ops(eng, hw, target, p, par, "all"),
                      target_ops(eng, hw, target, p, par, "last"), resolve_overlap(s.overlap, eng),
                      s.acceptance or (default_acceptance(s.method) if s.method in PUBLISHED_ACCEPTANCE else None),
                      verify_ops(eng, hw, target, p, par))


__all__ = ["DEFAULT_BATCH", "Deployment", "Scenario", "as_scenario", "check_field_names",
           "check_stages", "check_value", "engine_hardware", "make_precision", "resolve_overlap", "scenario_fields"]
