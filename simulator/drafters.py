"""Drafters: what each speculative method runs per step, priced with the same forward-pass op builder.

Every autoregressive drafter (draft model, EAGLE, EAGLE-3, MTP, self-sparse) runs, per step, one catch-up pass over
the k + 1 tokens the last verify may have accepted (the draft must ingest them: vLLM/SGLang "draft extend", padded to
a static k + 1 for CUDA graphs) which also yields the first draft token, then k - 1 passes of q = w tokens per
sequence (w = 1 for a chain, the top-w frontier for a tree). Medusa runs its heads once (q = 1); DFlash drafts a
block of k tokens in one pass (q = k); n-gram / suffix lookups cost host time only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .acceptance import Acceptance, tree_widths
from .data import data_dir, read_toml
from .errors import ScenarioError
from .fusion import FusionRule
from .memory import kv_bytes_per_rank, weight_bytes_per_rank
from .model import ModelShape, load_model, load_model_and_record, read_config, shape_from_config
from .workload import INF_WINDOW, OpSet, Parallelism, Precision, forward_pass

METHODS: tuple[str, ...] = ("draft", "eagle", "eagle3", "medusa", "mtp", "ngram", "suffix", "dflash", "self-sparse")
TREE_METHODS = frozenset({"eagle", "eagle3", "medusa", "draft", "mtp"})
HEAD_KIND = {"eagle": "eagle-head", "eagle3": "eagle3-head", "medusa": "medusa-head"}
GPU_FREE = frozenset({"ngram", "suffix"})

# EAGLE-3's reduced draft vocabulary when a head is synthesized (draft_vocab_size in the EAGLE-3 training config,
# SafeAILab/EAGLE eagle/traineagle3/config.json; models/yuhuili__EAGLE3-LLaMA3.1-Instruct-8B.json).
EAGLE3_DRAFT_VOCAB = 32000
# Medusa: 5 heads of 1 ResBlock (FasterDecoding/Medusa medusa_model.py forces medusa_num_heads = 5), verifying its
# default sparse tree of 63 candidates plus the root (mc_sim_7b_63 in medusa/model/medusa_choices.py), which has
# 13 candidates at its widest depth.
MEDUSA_HEADS = 5
MEDUSA_TREE_TOKENS = 64
MAX_DEPTH = 64            # the deepest draft priced (k, k_max): check_drafting
MEDUSA_TREE_BRANCHING = 13
# DFlash drafter depth when no drafter config is given: an estimate (a "lightweight" few-layer block-diffusion
# drafter conditioned on target features; z-lab/dflash README, arXiv 2602.06036). Pass --draft to override.
DFLASH_LAYERS_ESTIMATE = 5
# Self-speculation KV budget when --draft-kv-window is not given: MagicDec's StreamingLLM draft budget
# (Chen et al. 2024, "MagicDec", §5 uses 256-512 token budgets); an estimate of the common setting.
SELF_SPARSE_WINDOW = 512
# Default separate draft models per target family (same tokenizer): Llama-3.2-1B drafts Llama-3.x (vLLM
# draft_model examples); llama-68m drafts Vicuna/Llama-2 (Spec-Bench SpS, Miao et al. SpecInfer).
DEFAULT_DRAFT = {"llama-3.1-8b": "llama-3.2-1b", "llama-3.1-70b": "llama-3.2-1b", "llama-3.3-70b": "llama-3.2-1b",
                 "llama-3.1-405b": "llama-3.2-1b", "vicuna-7b": "llama-68m", "vicuna-13b": "llama-68m",
                 "vicuna-33b": "llama-68m", "llama-2-7b": "llama-68m", "llama-2-70b": "llama-68m",
                 "qwen3-8b": "qwen3-0.6b", "qwen3-32b": "qwen3-0.6b"}
DEFAULT_HEAD = {("eagle3", "llama-3.1-8b"): "eagle3-llama3.1-8b", ("eagle", "llama-3.1-8b"): "eagle-llama3-8b",
                ("eagle3", "kimi-k2"): "eagle3-kimi-k2", ("eagle3", "gpt-oss-120b"): "eagle3-gpt-oss-120b",
                ("medusa", "vicuna-7b"): "medusa-vicuna-7b", ("medusa", "vicuna-13b"): "medusa-vicuna-13b",
                ("medusa", "vicuna-33b"): "medusa-vicuna-33b"}


def method_key(v: object, name: str = "method") -> str:
    """A speculative method's name as specroof spells it: case-insensitive, surrounding spaces ignored; a name that
    is no method is refused, naming `name` (one rule for the Scenario, default_decay and verified_tree)."""
    key = v.strip().lower() if isinstance(v, str) else v
    if key not in METHODS:
        raise ScenarioError(f"{name} = {v!r}; expected one of {', '.join(METHODS)}")
    return key


def default_decay(method: str | None) -> float:
    """The per-position acceptance decay d of `method` fitted on published per-k tables (acceptance/decay.toml,
    written by tools/fit_acceptance_decay.py); 1 (i.i.d.) for methods without such a table. The name is read as a
    Scenario reads it (case-insensitive); a name that is no method is refused (review: "MTP" gave d = 1, not 0.72,
    and `--method MTP --acceptance-length` priced 17-23 % above `--method mtp`)."""
    if method is None:
        return 1.0
    key = method_key(method)
    doc = read_toml(data_dir("acceptance") / "decay.toml")
    entry = doc.get(key)
    return float(entry["decay"]) if isinstance(entry, dict) and "decay" in entry else 1.0


PUBLISHED_ACCEPTANCE = ("eagle3", "eagle", "medusa", "mtp")   # the methods default_acceptance knows


def verified_tree(method: str | None, tree_tokens: int | None, tree_branching: int | None
                  ) -> tuple[int | None, int | None]:
    """(tokens, branching) of the tree a method verifies: Medusa's default tree unless a tree size is given, else
    the given tree (None: a chain). A measured acceptance length is read on this tree, as the step is priced on it
    (found by review: --acceptance-length on Medusa's default tree was read as a chain's, tau 2.32 at k = 5 priced
    2.98 tokens per step; and again for "MEDUSA", which the Scenario reads as medusa: names are case-insensitive)."""
    if method is not None and method_key(method) == "medusa" and tree_tokens is None:
        return MEDUSA_TREE_TOKENS, MEDUSA_TREE_BRANCHING if tree_branching is None else tree_branching
    return tree_tokens, tree_branching


def default_acceptance(method: str) -> Acceptance:
    """Published acceptance for methods that have one; others must be given (no invented defaults). A measured
    length extrapolates to other k with the method's per-position decay (`default_decay`).

    eagle3: mean acceptance length 2.79 at K = 3, Llama-3.1-8B-Instruct on H100 (vLLM issue #20780).
    eagle:  per-position rates 0.71, 0.68, 0.66, 0.66, 0.65 (EAGLE, Li et al. 2024, Table 2 n-alpha, Vicuna-7B).
    medusa: tau 2.32 for Medusa's 64-token tree of depth 5 on Vicuna-7B (Spec-Bench leaderboard, A100).
    mtp:    tau 2.82 at nextn = 3, DeepSeek-R1 on 8x B200 (TensorRT-LLM tech blog 1 MTP table).
    """
    if method == "eagle3":
        return Acceptance.from_length(2.79, 3, default_decay(method))
    if method == "eagle":
        return Acceptance.from_rates([0.71, 0.68, 0.66, 0.66, 0.65])
    if method == "medusa":
        return Acceptance.from_tree_length(2.32, tree_widths(MEDUSA_TREE_TOKENS, MEDUSA_HEADS, MEDUSA_TREE_BRANCHING))
    if method == "mtp":
        return Acceptance.from_length(2.82, 3, default_decay(method))
    raise ScenarioError(f"method {method} has no published default acceptance here; pass --acceptance-rate, "
                        "--acceptance-length (with --acceptance-k) or --acceptance-rates (Python: Scenario("
                        "acceptance=Acceptance.from_rate(a), .from_length(tau, k, default_decay(method)) or "
                        ".from_rates([...])))")


@dataclass(frozen=True)
class DraftPass:
    """One kind of draft forward pass: ops, tokens per sequence, KV window it reads, times per step."""

    ops: OpSet
    q: float
    window: float
    count: float
    label: str


@dataclass(frozen=True)
class Drafter:
    """A priced drafter for one target.

    method : str; shape : ModelShape or None (no GPU work); precision, par : how the drafter runs;
    weights_bytes : per-GPU draft weights, bytes; kv_window : tokens of context the drafter keeps (inf: all);
    n_heads_max : Medusa heads (depth limit); description : what was assumed (e.g. a synthesized head);
    ops_all : its forward pass; ops_step : later draft steps, when they differ (EAGLE-3: no 3d -> d input FC);
    ops_catchup : the catch-up pass, when it differs (logits for the last token of each sequence only: every engine
    but SGLang's SpecV2 worker, EngineProfile.logits_catchup).
    """

    method: str
    shape: ModelShape | None
    precision: Precision
    par: Parallelism
    weights_bytes: float
    kv_window: float
    n_heads_max: int
    description: str
    ops_all: OpSet | None = None
    ops_step: OpSet | None = None
    ops_catchup: OpSet | None = None

    @property
    def gpu_free(self) -> bool:
        return self.shape is None

    def kv_bytes(self, B, q, L):
        """Draft KV per GPU for B sequences of L + q tokens: `kv_bytes_per_rank` of its shape, capped at its window."""
        if self.shape is None:
            return 0.0 * (B * (q + L))
        return kv_bytes_per_rank(self.shape, B, q, L, self.precision, self.par, cap=self.kv_window)

    def passes(self, k: int, width: int = 1) -> list[DraftPass]:
        """Draft passes per speculative step for depth k and tree frontier width `width`."""
        if self.shape is None or k == 0:
            return []
        ops = self.ops_all
        assert ops is not None
        if self.method == "medusa":
            return [DraftPass(ops, 1.0, INF_WINDOW, 1.0, "medusa heads")]
        if self.method == "dflash":
            return [DraftPass(ops, float(k), self.kv_window, 1.0, f"dflash block of {k}")]
        out = [DraftPass(self.ops_catchup or ops, float(k + 1), self.kv_window, 1.0, "catch-up (k+1 tokens)")]
        if k > 1:
            out.append(DraftPass(self.ops_step or ops, float(width), self.kv_window, float(k - 1),
                                 f"draft step (q={width})"))
        return out


def _synth_head(target: ModelShape, kind: str) -> ModelShape:
    """An EAGLE / EAGLE-3 head with the target's hidden size: one Llama decoder layer (GQA, SwiGLU)."""
    h = target.n_heads
    d_head = target.d_model // h
    hkv = min(target.n_kv_heads, 8) if not target.is_mla else 8
    while h % hkv:
        hkv -= 1
    return ModelShape(
        name=f"{kind}-for-{target.name}", model_type="llama", n_layers=1, d_model=target.d_model, n_heads=h,
        n_kv_heads=hkv, d_head=d_head, d_ff=target.d_ff or 4 * target.d_model, gated_mlp=True,
        vocab_size=target.vocab_size, tied_embeddings=False, kind=kind,
        fc_in_factor=2 if kind == "eagle-head" else 3, attn_in_factor=1 if kind == "eagle-head" else 2,
        draft_vocab_size=0 if kind == "eagle-head" else min(EAGLE3_DRAFT_VOCAB, target.vocab_size),
        shares_embedding=True, shares_lm_head=kind == "eagle-head")


def _synth_medusa(target: ModelShape) -> ModelShape:
    return ModelShape(name=f"medusa-for-{target.name}", model_type="medusa", n_layers=0, d_model=target.d_model,
                      n_heads=1, n_kv_heads=1, d_head=target.d_model, d_ff=0, gated_mlp=False,
                      vocab_size=target.vocab_size, tied_embeddings=False, n_medusa_heads=MEDUSA_HEADS,
                      n_medusa_layers=1, shares_embedding=True, kind="medusa-head")


def _mtp_module(target: ModelShape) -> ModelShape:
    """DeepSeek-V3 MTP module (tech report §2.2, Fig. 3): eh_proj (2d -> d) over [hidden; embedding], one full
    transformer block of the target's own kind (MLA + MoE on DeepSeek-V3; GQA + MoE on GLM-4.5, SGLang
    glm4_moe_nextn.py: a Glm4MoeDecoderLayer), the shared embedding and output head."""
    return replace(target, name=f"{target.name}-mtp", n_layers=1, n_moe_layers=1 if target.is_moe else 0,
                   n_window_layers=0, n_linear_layers=0, n_mtp_layers=0, fc_in_factor=2, shares_embedding=True,
                   shares_lm_head=True, kind="mtp-module")


def _as_head(path: str, kind: str) -> ModelShape:
    """A config file given as an EAGLE method's draft, read as that head: EAGLE's published head configs name
    LlamaForCausalLM with one decoder layer (yuhuili/EAGLE-LLaMA3-Instruct-8B), which a path alone reads as a model
    (API review: by path the bundled head was refused, by its repository id accepted)."""
    p = Path(path)
    return shape_from_config(read_config(p), name=p.stem, source=str(p), kind=kind)


def _load_draft(name: str) -> tuple[ModelShape, str | None]:
    shape, rec = load_model_and_record(name)
    return shape, (rec.target or None) if rec is not None else None


def _self_shape(method: str, target: ModelShape, draft: object, window: int | None) -> tuple[ModelShape, str, float]:
    """MTP modules or the target itself (self-sparse): (shape, description, KV window)."""
    if draft is not None:
        raise ScenarioError(f"method {method} drafts with the target itself; drop --draft")
    if method == "mtp":
        if target.n_mtp_layers == 0:
            raise ScenarioError(f"{target.name} ships no MTP modules (num_nextn_predict_layers = 0); "
                                "method mtp needs a DeepSeek-V3-style model")
        return (_mtp_module(target), f"mtp: the model's {target.n_mtp_layers} MTP module(s), run k times "
                "autoregressively (the module is reused beyond its depth)", float(window or INF_WINDOW))
    if target.n_linear_layers:      # found by review: its linear layers' states were priced twice, as a draft KV
        raise ScenarioError(f"method self-sparse drafts with a KV window over the target's own layers, but "
                            f"{target.name}'s {target.n_linear_layers} linear-attention layers keep no KV cache to "
                            "window (MagicDec is defined for softmax attention)")
    win = float(window or SELF_SPARSE_WINDOW)
    return target, f"self-sparse: the target drafts with a {int(win)}-token StreamingLLM KV window (MagicDec)", win


def _head_shape(method: str, target: ModelShape, draft: str | ModelShape | None) -> tuple[ModelShape, str]:
    """An EAGLE / EAGLE-3 / Medusa head: given, bundled for the target, or synthesized with the target's shapes."""
    want = HEAD_KIND[method]
    trained_for = None
    if draft is not None:
        shape, trained_for = (draft, None) if isinstance(draft, ModelShape) else _load_draft(str(draft))
        desc = f"{method}: head {shape.name}"
        # EAGLE-1 heads only: an EAGLE-3 head is known by draft_vocab_size or its architecture (review: a one-layer
        # EAGLE-1 config was read as an EAGLE-3 head by path, refused by its id)
        if shape.kind == "target" and method == "eagle" and shape.n_layers == 1 and not isinstance(draft, ModelShape):
            shape = _as_head(str(draft), want)
            desc += f" (a one-decoder-layer config, read as an {want})"
    elif (hid := DEFAULT_HEAD.get((method, target.name))) is not None:
        shape, trained_for = _load_draft(hid)
        desc = f"{method}: bundled head {hid}"
    elif method == "medusa":
        shape = _synth_medusa(target)
        desc = f"medusa: synthesized {MEDUSA_HEADS} heads x 1 ResBlock with the target's shapes"
    else:
        shape = _synth_head(target, want)
        desc = f"{method}: synthesized head (1 decoder layer with {target.name}'s hidden size" + \
            (f", draft vocab {shape.draft_vocab_size})" if method == "eagle3" else ")")
    if shape.kind != want:
        raise ScenarioError(f"draft {shape.name} is of kind {shape.kind}, but method {method} needs kind {want}")
    for what, mine, theirs in (("hidden size", shape.d_model, target.d_model),
                               ("vocabulary", shape.vocab_size, target.vocab_size)):
        if mine != theirs:
            raise ScenarioError(f"{method} head {shape.name} has {what} {mine}, but target {target.name} has "
                                f"{theirs}: the head was trained for another model")
    if trained_for and trained_for != target.name:
        raise ScenarioError(f"{method} head {shape.name} was trained for {trained_for}, not {target.name}")
    return shape, desc


def _model_shape(method: str, target: ModelShape, draft: str | ModelShape | None) -> tuple[ModelShape, str]:
    """A standalone draft model (method draft) or a DFlash block drafter."""
    if draft is not None:
        shape = draft if isinstance(draft, ModelShape) else load_model(str(draft))
        desc = f"{method}: {shape.name}"
    elif method == "dflash":
        shape = replace(target, name=f"dflash-for-{target.name}", n_layers=DFLASH_LAYERS_ESTIMATE, n_moe_layers=0,
                        n_experts=0, top_k=0, n_window_layers=0, n_linear_layers=0, n_mtp_layers=0,
                        attn_output_gate=False, shared_expert_gate=False,
                        d_ff=target.d_ff or 4 * target.d_model, fc_in_factor=2, shares_embedding=True,
                        shares_lm_head=True, kind="target")
        desc = (f"dflash: synthesized {DFLASH_LAYERS_ESTIMATE}-layer block drafter with {target.name}'s layer "
                "shapes (estimate; pass --draft for a real drafter config)")
    else:
        did = DEFAULT_DRAFT.get(target.name)
        if not did:
            raise ScenarioError(f"method draft needs --draft for {target.name} (no bundled default draft model "
                                "with its tokenizer)")
        shape, _ = _load_draft(did)
        desc = f"draft: {did} (default draft for {target.name})"
    if shape.kind != "target":
        raise ScenarioError(f"draft {shape.name} is of kind {shape.kind}; method {method} needs a standalone model")
    if shape.vocab_size != target.vocab_size:
        raise ScenarioError(f"draft {shape.name} has vocabulary {shape.vocab_size}, target {target.name} has "
                            f"{target.vocab_size}: draft and target must share a tokenizer")
    if method == "draft" and shape.n_params >= target.n_params:     # review: accepted, refused only by memory
        raise ScenarioError(f"draft {shape.name} ({shape.n_params / 1e9:.1f}B parameters) is no smaller than target "
                            f"{target.name} ({target.n_params / 1e9:.1f}B): each draft token would cost a target "
                            "step or more; expected a smaller draft model (--draft)")
    if method == "dflash":
        desc += "; one forward pass drafts the whole block (q = k)"
    return shape, desc


def _gpu_shape(method: str, target: ModelShape, draft: str | ModelShape | None, draft_kv_window: int | None
               ) -> tuple[ModelShape, str, float]:
    """Shape, description and draft KV window of a drafter that runs on the GPU (every method but the GPU-free
    ones): the target itself (mtp, self-sparse), a head, or a standalone model."""
    if method in ("mtp", "self-sparse"):
        return _self_shape(method, target, draft, draft_kv_window)
    win = float(draft_kv_window) if draft_kv_window else INF_WINDOW
    if method in HEAD_KIND:
        return (*_head_shape(method, target, draft), win)
    return (*_model_shape(method, target, draft), win)


def _weight_bytes(method: str, target: ModelShape, shape: ModelShape, p: Precision, par: Parallelism) -> float:
    """Weight bytes per rank the drafter adds: the MTP modules for mtp, nothing for self-sparse (it is the target),
    else the draft's own weights."""
    if method == "mtp":
        return weight_bytes_per_rank(target, p, par, include_mtp=True) - weight_bytes_per_rank(target, p, par)
    if method == "self-sparse":
        return 0.0
    return weight_bytes_per_rank(shape, p, par)


def check_drafting(method: str | None, draft_precision: str | None, k: int | str = 0, k_max: int = 1,
                   draft_kv_window: int | None = None) -> None:
    """A drafter weight format only where the drafter has weights of its own: not with speculation off, a host-side
    lookup (ngram, suffix) or the target drafting itself (self-sparse), where it would be ignored or, for self-sparse,
    priced as the target's own weights in another format (found by review). And a draft depth (k, k_max) of at most
    MAX_DEPTH, checked before any pricing (found by review: k_max 30000 took 107 s, the time growing as its square)."""
    deepest = max(k_max, k if isinstance(k, int) else 0)
    if deepest > MAX_DEPTH:
        raise ScenarioError(f"{'k (--k)' if deepest == k else 'k_max (--k-max)'} = {deepest}; expected at most "
                            f"{MAX_DEPTH} draft "
                            "tokens per step (DFlash drafts blocks of 16, EAGLE chains and trees run under 10 deep, "
                            "and the acceptance of deeper positions is extrapolated far past any published table)")
    if draft_precision is not None and (method is None or method in GPU_FREE or method == "self-sparse"):
        what = "speculation is off" if method is None else f"method {method} drafts without weights of its own"
        raise ScenarioError(f"draft_precision (--draft-precision) = {draft_precision} but {what}: leave it out (the "
                            "weight format of a draft model, head or MTP module)")
    if draft_kv_window is not None and (method is None or method in GPU_FREE or method == "medusa"):
        # found by review: a window was accepted there and changed nothing
        what = "speculation is off" if method is None else f"method {method} drafts without a KV cache of its own" \
            + (" (its heads read the target's last hidden state)" if method == "medusa" else " (a host-side lookup)")
        raise ScenarioError(f"draft_kv_window (--draft-kv-window) = {draft_kv_window} but {what}: leave it out (the "
                            "window of a drafter's KV cache)")


def make_drafter(method: str, target: ModelShape, draft: str | ModelShape | None = None,
                 precision: Precision | None = None, par: Parallelism | None = None,
                 draft_kv_window: int | None = None, scaleup_domain: int = 1 << 30,
                 fusions: FusionRule | None = None, catchup_logits: str = "last", sparse_heads: int = 0) -> Drafter:
    """Resolve and check the drafter for `method` against `target`; errors for a head trained for another model.
    `fusions`: the engine's kernel fusions (`fusion.FusionRule.of_engine`; None: none), applied to the drafter's
    shape. `catchup_logits`: the logit rows of its catch-up pass, 'all' k + 1 tokens or the 'last' of each sequence
    (SGLang's draft_extend_v2 keeps every row, logits_processor.py _get_pruned_states in v0.5.12; its V1
    draft-extend, vLLM's EAGLE proposer (last_token_indices) and TensorRT-LLM's MTP head (the last tokens) one).
    `par` is the target's layout: the drafter runs on the same GPUs, tensor- and data-parallel like the target's
    attention, its experts (an MTP module's MoE layer) on the target's expert layout. `sparse_heads`: the heads the
    engine's sparse-MLA kernel pads a DSA layer's to (`EngineProfile.sparse_mla_heads`), for a DSA target's MTP."""
    if method not in METHODS:
        raise ScenarioError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    p = precision or Precision()
    par = par or Parallelism()
    if draft_kv_window is not None and (isinstance(draft_kv_window, bool) or draft_kv_window < 1):
        raise ScenarioError(f"draft KV window = {draft_kv_window!r}; expected a positive integer")
    if method in GPU_FREE:
        if draft is not None:
            raise ScenarioError(f"method {method} uses no draft model; drop --draft")
        return Drafter(method, None, p, par, 0.0, INF_WINDOW, 10**6, f"{method}: host-side lookup, no GPU work, "
                       "no memory")
    shape, desc, win = _gpu_shape(method, target, draft, draft_kv_window)
    # The drafter runs on one pipeline stage's GPUs (the last: vLLM and SGLang put MTP there), never pipelined.
    par = replace(par, pp=1) if shape.is_moe else Parallelism(tp=par.tp, dp=par.dp)
    wbytes = _weight_bytes(method, target, shape, p, par)
    # EAGLE-3 fuses the target's three feature layers (FC 3d -> d) only where target features exist: the catch-up
    # pass. Later steps feed the head its own hidden state (Li et al. 2025, §3.2, Fig. 5).
    # An MTP module's input norm follows its eh_proj, not an all-reduce: only the post-attention norm rides on one.
    fu = replace((fusions or FusionRule()).of(shape, par.tp, par.dp, scaleup_domain), ar_norm_next=False)
    ops = lambda sh, lg="all": forward_pass(sh, p, par, lg, scaleup_domain=scaleup_domain, fusion=fu,  # noqa: E731
                                            sparse_heads=sparse_heads)
    step_ops = ops(replace(shape, fc_in_factor=0)) if shape.kind == "eagle3-head" else None
    catchup = ops(shape, catchup_logits) if catchup_logits != "all" else None
    return Drafter(method, shape, p, par, wbytes, win, shape.n_medusa_heads if method == "medusa" else 10**6, desc,
                   ops(shape), step_ops, catchup)
