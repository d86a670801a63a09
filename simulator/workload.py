"""One forward pass as a table of ops: FLOPs, HBM bytes, kernels and collective payloads, for any (B, q, L).

Every quantity of an op is a linear combination of a few features of the grid point, so one symbolic table (built
once per model, precision and parallelism) prices prefill (q = prompt), decode (q = 1) and verify (q = k + 1 or a tree
of T tokens) at any batch B and cached context L. B is the batch of the whole instance; an op sees one pipeline
micro-batch, on the attention side (`share` = 1/dp) of the busiest DP rank's ceil(B/dp) sequences. Features, per op:

    F_ONE    1
    F_B      b = rank_batch(B, dp, pp, share < 1) sequences this rank processes
    F_T      t = b*q                              tokens in the pass on this rank
    F_BL     b*Lw,  Lw = min(L, window)           cached keys read (KV cache read once per sequence for all q queries)
    F_TL     t*Lw                                 query-key pairs against the cache
    F_CAUSAL causal pairs among the q new tokens  (each capped at the window)
    F_U      touched fraction of the routed experts a rank holds: u = 1 - (1 - k/E)^n (n: routed_tokens); EP over R
             ranks, the busiest rank's expected distinct experts over E/R (it sets the step: a2a synchronises),
             from `grouped_busiest_rank_table` at D = E u touched experts
    F_TPAD   t rounded up to the GEMM tile (tensor-core MMA height, e.g. 64 rows on Hopper wgmma)

`flops = cf @ f`, `hbm_bytes = cb @ f`; for a collective `payload = cc @ f` is the buffer (bytes) each rank holds,
and the roofline prices it by its kind (all-reduce, all-to-all, all-gather), group size and link. Pure Python/numpy
(no numba here); the only place FLOP and byte formulas live. Kernels per op are an unfused decode layer (vLLM's GQA
decode path; kernel count notes, physics/kernel_counts.md of the research set: Llama layer 10 = input RMSNorm, QKV GEMM,
RoPE, KV write, attention, o_proj, post RMSNorm, gate_up, SiLU-mul, down; DeepSeek-V3 MoE layer 24 with its 2
all-reduces = MLA 11 + router 3 + shared expert 3 + fused MoE 5), plus one activation quantisation per W8A8 / NVFP4
GEMM input (`quant`, units.ACT_QUANT; 10 more), less what an engine's profile says it fuses (`fusion.Fusion`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .errors import ScenarioError
from .experts import grouped_busiest_rank_table
from .fusion import Fusion
from .linear_attention import FP32_STATE_BYTES, linear_ops
from .model import ModelShape
from .pipeline import pipeline_ops
from .sparse_attention import indexer_ops
from .units import ACT_QUANT, DTYPE_BYTES

F_ONE, F_B, F_T, F_BL, F_TL, F_CAUSAL, F_U, F_TPAD = range(8)
# How an op's math and memory times combine (roofline.step_times): "measured" (default) prices GEMMs at the device's
# measured GEMM overlap, other ops at the max; "max" all at the max; "sum" their sum; eta in [0, 1]: max + (1-eta) min.
OVERLAP_MODES = ("measured", "max", "sum")
N_FEAT = 8
FAMILIES: tuple[str, ...] = ("dense", "attention", "moe", "lm_head", "collective", "overhead")
FAM = {n: i for i, n in enumerate(FAMILIES)}
COLL_NONE, COLL_ALLREDUCE, COLL_ALLTOALL, COLL_ALLGATHER, COLL_SEND = 0, 1, 2, 3, 4   # SEND: one point-to-point hop
LINK_SCALEUP, LINK_SCALEOUT = 0, 1
EP_ALLTOALL = ("dispatch", "combine")      # expert parallelism's all-to-all ops (DeepEP-style, attention DP)
INF_WINDOW = 1e300
# Sampling reads every scored token's fp32 logits, writes probabilities (softmax / top-k / rejection): two fp32 passes
# (vLLM PR #45369: fp32 target_probs of num_draft_tokens x vocab; FlashInfer reads the logits once); passes estimated.
SAMPLER_BYTES_PER_VOCAB = 2 * 4.0


@dataclass(frozen=True, slots=True)
class Precision:
    """Storage format per tensor family (real deployments mix: DeepSeek-R1 NVFP4 experts with BF16 attention).

    weights: dense-FFN projections (and every family left None); attention: the attention projections (None: same as
    weights); experts: routed and shared experts (None: same as weights); lm_head: embedding and LM head; kv: KV
    cache; activations: activations and collectives. A GEMM runs at the tensor peak of its weight format (W8A8 at
    fp8, NVFP4 at fp4) where the device has one, else in the activation format (Hardware.compute_format).
    """

    weights: str = "bf16"
    experts: str | None = None
    lm_head: str = "bf16"
    kv: str = "bf16"
    activations: str = "bf16"
    attention: str | None = None

    @property
    def expert_dtype(self) -> str:
        return self.experts or self.weights

    @property
    def attention_dtype(self) -> str:
        return self.attention or self.weights

    def check(self) -> None:
        for fam in ("weights", "expert_dtype", "attention_dtype", "lm_head", "kv", "activations"):
            v = getattr(self, fam)
            if v not in DTYPE_BYTES:
                raise ScenarioError(f"precision {fam} = {v!r}; expected one of {', '.join(DTYPE_BYTES)}")


@dataclass(frozen=True, slots=True)
class Parallelism:
    """How one instance spreads a model over its GPUs.

    tp : attention tensor parallelism: heads and dense FFNs split tp ways (Megatron-LM, Shoeybi et al. 2019 §3)
    dp : attention data parallelism: dp groups of tp GPUs each, the busiest serving ceil(B/dp) sequences
    ep : expert parallelism: each GPU holds E/ep whole routed experts; under DP attention tokens are dispatched and
         combined by all-to-all (DeepSeek-V3 tech report §3.2.2), under TP attention (tokens replicated) one
         all-reduce sums the ranks' outputs; the remaining tp*dp/ep ways split each expert (MoE TP)
    pp : pipeline stages of tp * dp GPUs, floor or ceil(n_layers/pp) layers each (pipeline.py), up to pp micro-batches
         in flight (vLLM virtual engines, SGLang PP): a token crosses every stage, so PP saves memory, not latency
    The instance has tp * dp * pp GPUs.
    """

    tp: int = 1
    ep: int = 1
    dp: int = 1
    pp: int = 1

    @property
    def stage_gpus(self) -> int:
        return self.tp * self.dp

    @property
    def n_gpus(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def moe_tp(self) -> int:
        """Ways each routed expert is split (tensor parallel inside an expert)."""
        return self.stage_gpus // self.ep

    def check(self, m: ModelShape) -> None:
        for k in ("tp", "ep", "dp", "pp"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ScenarioError(f"{k} = {v!r}; expected a positive integer")
        if self.pp > max(1, m.n_layers):
            raise ScenarioError(f"pp = {self.pp} exceeds the {m.n_layers} layers of {m.name}")
        if m.n_layers and m.n_heads % self.tp:
            raise ScenarioError(f"tp = {self.tp} does not divide the {m.n_heads} attention heads of {m.name}")
        if m.n_linear_layers and (m.lin_k_heads % self.tp or m.lin_v_heads % self.tp):
            raise ScenarioError(f"tp = {self.tp} does not divide the {m.lin_k_heads} key and {m.lin_v_heads} value "
                                f"heads of {m.name}'s linear-attention layers")
        if self.ep > 1:
            if not m.is_moe:
                raise ScenarioError(f"ep = {self.ep} but {m.name} has no experts")
            if self.stage_gpus % self.ep:
                raise ScenarioError(f"ep = {self.ep} must divide the instance's GPUs, tp x dp = {self.stage_gpus}")
            if self.ep > m.n_experts:
                raise ScenarioError(f"ep = {self.ep} exceeds the {m.n_experts} experts of {m.name}")

    def expert_slots(self, m: ModelShape) -> int:
        """Expert slots over the EP ranks: E, or ep x ceil(E / ep) when ep does not divide E (the surplus slots hold
        redundant copies of hot experts: SGLang --ep-num-redundant-experts, TRT-LLM EPLB; e.g. DeepSeek's 256 experts
        on EP 72 take 4 slots per rank, 288 in all)."""
        return -(-m.n_experts // self.ep) * self.ep


@dataclass(frozen=True)
class OpSet:
    """Symbolic ops of one forward pass on one rank; see the module docstring for the features.

    names : tuple[str]; family : int array (index into FAMILIES); repeat : float array (layers);
    kernels : float array (kernels per repeat, each at the fitted per-kernel cost); quant : float array (activation-
    quantisation kernels per repeat before W8A8 / NVFP4 GEMMs, each at the device's measured cost); dtype : tuple[str];
    cf, cb, cc : float arrays (n_ops, N_FEAT); window : float array; moe_e, moe_k, moe_ranks, moe_rho : float arrays
    (routed experts, experts per token, EP ranks they are spread over, routing locality: experts.routed_tokens);
    share : float array (1/dp on the attention side, whose sequences are dealt over the dp ranks; 1 elsewhere);
    micro : float array (repeats in a full pipeline's cycle over those on one micro-batch's path, pipeline.cycle_runs);
    coll : int array (COLL_*); group : float array (collective group size); link : int array (LINK_SCALEUP or
    LINK_SCALEOUT); gemm : float array (1 for a GEMM: a matmul or the routed experts' grouped GEMM, whose math and
    memory overlap as Rates.gemm_eta says; 0 elsewhere); n_gpus : GPUs of the instance; dp, pp : attention-DP ranks
    and pipeline stages (experts.rank_batch)."""

    names: tuple[str, ...]
    family: np.ndarray
    repeat: np.ndarray
    kernels: np.ndarray
    quant: np.ndarray
    dtype: tuple[str, ...]
    cf: np.ndarray
    cb: np.ndarray
    cc: np.ndarray
    window: np.ndarray
    moe_e: np.ndarray
    moe_k: np.ndarray
    moe_ranks: np.ndarray
    moe_table: np.ndarray
    moe_rho: np.ndarray
    share: np.ndarray
    coll: np.ndarray
    group: np.ndarray
    link: np.ndarray
    gemm: np.ndarray
    micro: np.ndarray
    n_gpus: int = 1
    dp: int = 1
    pp: int = 1

    def __len__(self) -> int:
        return len(self.names)

    @property
    def leaves_domain(self) -> bool:
        """A collective other than the expert-parallel all-to-all (EP_ALLTOALL) runs on the scale-out link."""
        return any(lk == LINK_SCALEOUT and n not in EP_ALLTOALL for n, lk in zip(self.names, self.link))

    @property
    def tp(self) -> int:   # the largest collective group (kept for reports)
        return int(self.group.max()) if len(self) and self.group.max() > 1 else 1


@dataclass
class _Builder:
    share: float = 1.0                       # the attention-side share of the batch on this rank (1/dp)
    rows: list[dict] = field(default_factory=list)

    def op(self, name: str, fam: str, repeat: float, *, dtype: str = "bf16", kernels: float = 1.0, quant: float = 0.0,
           f: dict[int, float] | None = None, b: dict[int, float] | None = None, c: dict[int, float] | None = None,
           window: float = INF_WINDOW, moe: tuple[float, ...] = (0.0, 0.0, 1.0, 1.0, 1.0, 1.0), coll: int = COLL_NONE,
           group: float = 1.0, link: int = LINK_SCALEUP, share: float | None = None, gemm: bool = False) -> None:
        if repeat <= 0:
            return
        row = dict(name=name, fam=FAM[fam], repeat=float(repeat), dtype=dtype, kernels=kernels, quant=quant,
                   cf=np.zeros(N_FEAT), cb=np.zeros(N_FEAT), cc=np.zeros(N_FEAT), window=window, moe=moe,
                   share=self.share if share is None else share, coll=coll, group=float(group), link=link,
                   gemm=float(gemm), micro=1.0)
        for key, dct in (("cf", f), ("cb", b), ("cc", c)):
            for i, v in (dct or {}).items():
                row[key][i] += v
        self.rows.append(row)

    def matmul(self, name: str, fam: str, repeat: float, m: int, n: float, k: float, wdtype: str, adtype: str,
               kernels: float = 1.0, quant: float = 1.0) -> None:
        """y[M, N] = x[M, K] W[K, N]: 2*M*N*K FLOPs (a multiply-add is 2 FLOPs) over M rounded up to the GEMM tile;
        weights read once per pass at their own precision, activations in and out (calculon layers.Linear; Kaplan
        et al. 2020 §2.1). Weights in units.ACT_QUANT: `quant` more kernels quantise x (read; written at wdtype): one,
        two for an op of two GEMMs with their own inputs, none where the kernel producing x writes it quantised."""
        ab, wb, q = DTYPE_BYTES[adtype], DTYPE_BYTES[wdtype], (wdtype in ACT_QUANT) * float(quant)
        self.op(name, fam, repeat, dtype=wdtype, kernels=kernels, quant=q, f={F_TPAD if m == F_T else m: 2.0 * n * k},
                b={F_ONE: n * k * wb, m: (n + k) * ab + q * k * (ab + wb)}, gemm=True)

    def collective(self, name: str, kind: int, repeat: float, payload: dict[int, float], group: int,
                   scaleup_domain: int, share: float | None = None) -> None:
        """A collective over `group` GPUs (none when group is 1); on the scale-out link when the group leaves the
        scale-up domain (the slowest hop sets its time)."""
        if group > 1:
            self.op(name, "collective", repeat, kernels=1, c=payload, coll=kind, group=group,
                    link=LINK_SCALEOUT if group > scaleup_domain else LINK_SCALEUP, share=share)

    def build(self, n_gpus: int, dp: int = 1, pp: int = 1) -> OpSet:
        r = self.rows
        arr = lambda key, dt=float: np.array([x[key] for x in r], dtype=dt)  # noqa: E731
        mat = lambda key: np.array([x[key] for x in r]).reshape(len(r), N_FEAT)  # noqa: E731
        moe = np.array([x["moe"] for x in r], dtype=float).reshape(len(r), 6)   # E, k, ranks, groups, taken, rho
        table = np.zeros((len(r), int(moe[:, 0].max(initial=0)) + 1))
        for i, (E, k, R, ng, tg, _) in enumerate(moe):
            if E > 0:
                table[i, : int(E) + 1] = grouped_busiest_rank_table(int(E), int(R), round(k), int(ng), int(tg))
        return OpSet(names=tuple(x["name"] for x in r), family=arr("fam", np.int64), repeat=arr("repeat"),
                     kernels=arr("kernels"), dtype=tuple(x["dtype"] for x in r), cf=mat("cf"), cb=mat("cb"),
                     cc=mat("cc"), window=arr("window"), moe_e=moe[:, 0], moe_k=moe[:, 1], moe_ranks=moe[:, 2],
                     moe_table=table, moe_rho=moe[:, 5], share=arr("share"), coll=arr("coll", np.int64),
                     group=arr("group"), pp=pp, link=arr("link", np.int64), gemm=arr("gemm"), micro=arr("micro"),
                     n_gpus=n_gpus, dp=dp, quant=arr("quant"))


def make_precision(weights: str, kv: str | None = None, experts: str | None = None,
                   attention: str | None = None) -> Precision:
    """Weights set attention/FFN/expert formats unless given apart; the embedding and LM head stay bf16 (FP8 and NVFP4
    checkpoints keep them in bf16, e.g. DeepSeek-R1 on TensorRT-LLM, tech blog 1 precision table)."""
    p = Precision(weights=weights, experts=experts, attention=attention)
    if kv:
        p = replace(p, kv=kv)
    p.check()
    return p


def kv_heads_per_rank(m: ModelShape, tp: int) -> float:
    """KV heads one rank holds: Hkv/tp, or 1 (replicated) when tp > Hkv (vLLM QKVParallelLinear)."""
    return max(1.0, m.n_kv_heads / tp)


def kv_elems_per_token_layer_rank(m: ModelShape, tp: int) -> float:
    """KV elements per token per layer on one rank. MLA's latent is shared by all heads, so every rank keeps all of
    it."""
    if m.is_mla:
        return float(m.kv_elems_per_token_layer)
    return 2.0 * kv_heads_per_rank(m, tp) * m.d_head


@dataclass(frozen=True)
class _Ctx:
    """What the per-block builders share: model, formats, layout and the scale-up domain the collectives use."""

    m: ModelShape
    p: Precision
    par: Parallelism
    domain: int
    sampler: bool
    kv_reread: float = 0.0
    fusion: Fusion = field(default_factory=Fusion)
    sparse_heads: float = 0.0

    @property
    def ab(self) -> float:
        return DTYPE_BYTES[self.p.activations]


def _attention(g: _Builder, c: _Ctx) -> None:
    """Projections and attention core of every layer (GQA or absorbed MLA), kernels unfused less the engine's."""
    m, tp, L, ab = c.m, c.par.tp, c.m.n_attn_layers, c.ab
    d, hr, wd = m.d_model, m.n_heads / tp, c.p.attention_dtype
    if m.is_mla:
        # DeepSeek-V2 §2.1, weight-absorbed (W_UK in q, W_UV in the output): q_a, kv_a replicated, q_b/kv_b/o split by
        # heads (vLLM MLA). Kernels: input norm + q_a/kv_a GEMM; q_a norm + q_b GEMM; kv_a norm + RoPE; 2 bmm; o_proj.
        qd, fu = m.qk_nope_head_dim + m.qk_rope_head_dim, c.fusion    # the input norm may ride on an all-reduce
        if m.q_lora_rank:
            g.matmul("q_a_proj", "dense", L, F_T, m.q_lora_rank, d, wd, c.p.activations, kernels=2 - fu.ar_norm_next)
            g.matmul("q_b_proj", "dense", L, F_T, hr * qd, m.q_lora_rank, wd, c.p.activations, kernels=2)
        else:
            g.matmul("q_proj", "dense", L, F_T, hr * qd, d, wd, c.p.activations, kernels=2 - fu.ar_norm_next)
        # one input quantisation for the fused q_a / kv_a GEMM; W_UK / W_UV in BF16, unquantised
        g.matmul("kv_a_proj", "dense", L, F_T, m.kv_lora_rank + m.qk_rope_head_dim, d, wd, c.p.activations,
                 kernels=2, quant=not fu.mla_a_quant)
        g.matmul("kv_b_absorbed", "dense", L, F_T, hr * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank,
                 "bf16" if fu.mla_bf16_bmm else wd, c.p.activations, kernels=2, quant=2 * (not fu.mla_bf16_bmm))
        g.matmul("o_proj", "dense", L, F_T, d, hr * m.v_head_dim, wd, c.p.activations)
        # Absorbed scores over the latent (kv_lora + rope), values in it (kv_lora), per head (DSA: padded heads)
        hp = max(hr, c.sparse_heads) if m.index_topk else hr
        flops_pair = 2.0 * hp * (m.kv_lora_rank + m.qk_rope_head_dim) + 2.0 * hp * m.kv_lora_rank
        io_tok = hp * (m.kv_lora_rank + m.qk_rope_head_dim + m.kv_lora_rank) * ab
    else:
        hkv, fu = kv_heads_per_rank(m, tp), c.fusion
        # Kernels: input RMSNorm, QKV GEMM, RoPE (+ per-head q/k RMSNorm on Qwen3), less what the engine fuses.
        # Gated attention (attn_output_gate) widens q_proj by the gate and adds its sigmoid-multiply kernel.
        g.matmul("qkv_proj", "dense", L, F_T, (hr * (1 + m.attn_output_gate) + 2 * hkv) * m.d_head,
                 m.attn_in_factor * d, wd, c.p.activations,
                 kernels=(4 if m.qk_norm else 3) - (fu.rope_kv and not m.qk_norm) - fu.norm_allreduce,
                 quant=not fu.norm_allreduce)
        g.matmul("o_proj", "dense", L, F_T, d, hr * m.d_head, wd, c.p.activations, kernels=1 + m.attn_output_gate,
                 quant=not (fu.act_quant and c.p.kv in ACT_QUANT))
        # QK^T and PV: 2 FLOPs per multiply-add, d_head each, per head (FlashAttention-2, Dao 2023 §3.3).
        flops_pair = 4.0 * hr * m.d_head
        io_tok = 2.0 * hr * m.d_head * ab            # read q, write o
    kv_tok = kv_elems_per_token_layer_rank(m, tp) * DTYPE_BYTES[c.p.kv]
    # The cache is read once per sequence (F_BL) for all its q queries, or, by a verify kernel that runs one query
    # token per CTA, 1 + r (q - 1) times: a fraction r of the q - 1 extra reads reaches HBM (F_TL - F_BL = b (q-1) Lw).
    r = 1.0 if m.index_topk else c.kv_reread    # DSA: each query gathers its own index_topk tokens (sparse_attention)
    # Attention core (KV-cache write + attention kernel): full-context layers and windowed (sliding / chunked) ones.
    for nl, win, tag in ((L - m.n_window_layers, float(m.index_topk or INF_WINDOW), "attention"),
                         (m.n_window_layers, float(m.window or INF_WINDOW), "attention_window")):
        g.op(tag, "attention", nl, dtype="bf16", kernels=2 - c.fusion.rope_kv, window=win,
             f={F_TL: flops_pair, F_CAUSAL: flops_pair},
             b={F_BL: (1.0 - r) * kv_tok, F_TL: r * kv_tok, F_T: kv_tok + io_tok})
    indexer_ops(g, m, c.p.attention_dtype, c.p.activations, c.kv_reread)     # DSA's indexer, where the model has one


def _dense_ffn(g: _Builder, c: _Ctx) -> None:
    """Dense FFN layers (kernels: post-attention RMSNorm + gate_up GEMM + SiLU-mul; down GEMM), less the fused."""
    m, tp, fu = c.m, c.par.tp, c.fusion
    nmat = 2 if m.gated_mlp else 1
    g.matmul("ffn_up", "dense", m.n_dense_layers, F_T, nmat * m.d_ff / tp, m.d_model, c.p.weights,
             c.p.activations, kernels=3 - fu.norm_allreduce, quant=not fu.norm_allreduce)
    g.matmul("ffn_down", "dense", m.n_dense_layers, F_T, m.d_model, m.d_ff / tp, c.p.weights, c.p.activations,
             quant=not fu.act_quant)


def _moe(g: _Builder, c: _Ctx) -> None:
    """MoE layers: router, shared experts (attention-side layout), routed experts on their EP x TP layout."""
    m, par, ab = c.m, c.par, c.ab
    nm, E, k, d = m.n_moe_layers, float(m.n_experts), float(m.top_k), m.d_model
    nmat, ed = (2 if m.gated_mlp else 1), c.p.expert_dtype
    # Router: post-attention RMSNorm, gate GEMM, top-k (grouped top-k on DeepSeek-V3).
    g.matmul("router", "moe", nm, F_T, E, d, "bf16", c.p.activations, kernels=3 - c.fusion.ar_norm)
    if m.n_shared_experts:   # its own kernels, or none where it runs inside (or beside) the routed ones
        sw, own = m.n_shared_experts * m.d_ff_shared / par.tp, not c.fusion.shared_expert
        g.matmul("shared_up", "moe", nm, F_T, nmat * sw, d, ed, c.p.activations, kernels=2 * own, quant=own)
        g.matmul("shared_down", "moe", nm, F_T, d, sw, ed, c.p.activations, kernels=1 * own, quant=own)
    if m.shared_expert_gate:  # sigmoid(x W_g) * shared_out (transformers Qwen3NextSparseMoeBlock, SGLang
        # Qwen2MoeSparseMoeBlock): a GEMV and the sigmoid-multiply, unquantised (vLLM quant_config=None)
        g.matmul("shared_gate", "moe", nm, F_T, 1.0, d, "bf16", c.p.activations, kernels=2, quant=0)
    # Routed experts, priced on the busiest rank: FLOPs follow its share of the T*k assignments (all DP ranks'
    # tokens reach the experts: share 1), weights the distinct experts it holds that are touched (F_U; a sequence's q
    # tokens route together: experts.routed_tokens), each read once, split moe_tp ways. Kernels: align, w13 GEMM,
    # SiLU-mul, w2 GEMM, top-k sum (vLLM fused_moe).
    pe = (nmat + 1) * d * m.d_ff_expert
    spread = par.ep * par.moe_tp
    # With redundant slots (ep not dividing E: EPLB's placement) the busiest-rank table runs over the Es slots, k Es / E
    # touched per token, routing uniform; else DeepSeek's groups put a token's experts on few ranks (experts in order).
    Es = float(par.expert_slots(m))
    grp = (float(m.n_group), float(m.topk_group)) if Es == E else (1.0, 1.0)
    q = (ed in ACT_QUANT) * (ab + DTYPE_BYTES[ed]) * (d + k * m.d_ff_expert / par.moe_tp) / par.ep  # x, w2 input quant
    g.op("experts", "moe", nm, dtype=ed, kernels=5, quant=2 * (ed in ACT_QUANT), share=1.0,
         moe=(Es, k * Es / E, par.ep, *grp, m.routing_locality), gemm=True, f={F_T: 2.0 * k * pe / spread},
         b={F_U: Es / par.ep * pe * DTYPE_BYTES[ed] / par.moe_tp,
            F_T: k * (2 * d + (nmat + 1) * m.d_ff_expert / par.moe_tp) * ab / par.ep + q})


def _layer_collectives(g: _Builder, c: _Ctx) -> None:
    """The collectives each layout implies, per layer (none that the layout does not have)."""
    m, par, ab, dom = c.m, c.par, c.ab, c.domain
    d, tok = m.d_model, {F_T: m.d_model * c.ab}
    # Attention (and dense FFN) tensor parallelism: one all-reduce after attention, one after a dense FFN.
    g.collective("allreduce_attn", COLL_ALLREDUCE, m.n_layers, tok, par.tp, dom)
    g.collective("allreduce_ffn", COLL_ALLREDUCE, m.n_dense_layers, tok, par.tp, dom)
    if m.qk_norm_tp_reduce:
        # vLLM MiniMaxText01RMSNormTP.forward_qk: the q and k sums of squares (2 fp32 per token) of each rank's heads
        # are all-reduced before the norm, once per layer; latency-bound at any batch.
        g.collective("allreduce_qk_norm", COLL_ALLREDUCE, m.n_layers, {F_T: 8.0}, par.tp, dom)
    if not m.is_moe:
        return
    nm = m.n_moe_layers
    if par.dp == 1:
        # Tokens are replicated after the attention all-reduce: each rank runs its share of the experts (a TP slice
        # of each, or whole experts under EP) on every token, and one all-reduce sums the outputs (Megatron). EP
        # under TP attention moves no tokens: TensorRT-LLM enables its MoE all-to-all only with attention DP
        # (modeling_deepseekv3.py, Deepseekv3MoE.should_enable_alltoall), and vLLM / SGLang FusedMoE reduce the
        # EP outputs the same way unless a DP-attention all-to-all backend (DeepEP, pplx) is chosen.
        g.collective("allreduce_moe", COLL_ALLREDUCE, nm, tok, par.tp, dom)
        return
    if par.ep == 1:   # DP attention with TP experts: gather every rank's tokens, reduce-scatter the outputs
        g.collective("allgather_moe", COLL_ALLGATHER, 2 * nm, {F_T: d * ab * par.dp}, par.stage_gpus, dom)
        return
    # DP attention with expert parallelism: dispatch and combine all-to-all of each rank's tokens' k copies,
    # (ep-1)/ep leaving the rank (DeepEP; DeepSeek-V3 tech report §3.2.2). With attention TP inside a DP group the
    # group's tp ranks first reduce-scatter its tokens, so each dispatches 1/tp of them (SGLang LayerScatterModes:
    # SCATTERED MLP mode under an all-to-all backend; a physics audit found every rank sending all the group's tokens,
    # tp copies of each). TP-split experts (moe_tp > 1) reduce their partial sums: one hidden vector per instance
    # token (share 1: the copies a group holds are summed first).
    a2a = {F_T: (par.ep - 1) / par.ep * m.top_k * d * ab / par.tp}
    for name in EP_ALLTOALL:
        g.collective(name, COLL_ALLTOALL, nm, a2a, par.ep, dom)
    g.collective("allreduce_expert_tp", COLL_ALLREDUCE, nm, {F_T: d * ab}, par.moe_tp, dom, share=1.0)


def _heads(g: _Builder, c: _Ctx, lm_tokens: int) -> None:
    """Medusa heads or the LM head (final norm + GEMM), the logits gather and the sampler."""
    m, p, tp, ab = c.m, c.p, c.par.tp, c.ab
    d = m.d_model
    if m.n_medusa_heads:   # Medusa (Cai et al. 2024, §2.1.1): per head ResBlocks and an LM head on the last state
        nh = m.n_medusa_heads
        g.matmul("medusa_resblock", "dense", nh * m.n_medusa_layers, F_T, d / tp, d, p.weights, p.activations,
                 kernels=2)
        g.matmul("medusa_lm_head", "lm_head", nh, lm_tokens, m.vocab_size / tp, d, p.lm_head, p.activations,
                 kernels=2)
        return
    g.matmul("lm_head", "lm_head", 1, lm_tokens, m.lm_vocab / tp, d, p.lm_head, p.activations, kernels=2)
    g.collective("logits_gather", COLL_ALLGATHER, 1, {lm_tokens: m.lm_vocab * ab}, tp, c.domain)
    if c.sampler:
        g.op("sampler", "lm_head", 1, kernels=2, b={lm_tokens: m.lm_vocab * SAMPLER_BYTES_PER_VOCAB})


def forward_pass(m: ModelShape, precision: Precision | None = None, par: Parallelism | None = None,
                 logits: str = "all", scaleup_domain: int = 1 << 30, sampler: bool = True,
                 kv_reread: float = 0.0, fusion: Fusion | None = None, sparse_heads: float = 0.0,
                 state_commit: bool = False, state_bytes: float = FP32_STATE_BYTES) -> OpSet:
    """Ops of one forward pass of `m` on one rank of `par`, for B sequences of q new tokens over L cached ones.
    logits: "all" (an LM-head row for every query token: decode and verify) or "last" (one per sequence: prefill).
    scaleup_domain: GPUs on one NVLink / Infinity Fabric domain (collectives beyond it use the scale-out link).
    sampler: price the vocabulary-sized sampling pass (SAMPLER_BYTES_PER_VOCAB); False gives the bare roofline.
    kv_reread: share of a verify kernel's per-query KV re-reads reaching HBM (0: once per sequence; 1: per query
    token); for the verify op set of an engine whose kernel re-reads, never prefill. fusion: the kernels the engine
    fuses (`FusionRule.of`; none: the unfused layer counted above). sparse_heads: heads per rank a DSA target's
    sparse-MLA kernel computes at least (EngineProfile.sparse_mla_heads; 0: its own). state_commit, state_bytes: a
    hybrid target's linear-attention state, committed after a verify, kept at that many bytes an element
    (EngineProfile.linear_state_commit, linear_state_bytes; linear_attention.linear_ops)."""
    p = precision or Precision()
    par = par or Parallelism()
    p.check()
    par.check(m)
    if logits not in ("all", "last"):
        raise ScenarioError(f"logits = {logits!r}; expected 'all' or 'last'")
    if not 0.0 <= kv_reread <= 1.0:
        raise ScenarioError(f"kv_reread = {kv_reread!r}; expected a share from 0 to 1")
    c = _Ctx(m, p, par, scaleup_domain, sampler, kv_reread, fusion or Fusion(), float(sparse_heads))
    g = _Builder(share=1.0 / par.dp)
    d, tp = m.d_model, par.tp
    # Embedding gather (vocab-parallel: each rank reads the rows it owns) and, for EAGLE heads, the input FC.
    if not m.n_medusa_heads:
        g.op("embedding", "lm_head", 1, dtype=p.lm_head, kernels=1, b={F_T: d * DTYPE_BYTES[p.lm_head] / tp + d * c.ab})
        g.collective("embed_allreduce", COLL_ALLREDUCE, 1, {F_T: d * c.ab}, tp, scaleup_domain)
    if m.fc_in_factor:   # EAGLE fc / NextN eh_proj: a plain nn.Linear in the engines, whole and BF16 on every rank
        g.matmul("fc", "dense", 1, F_T, d, m.fc_in_factor * d, "bf16", p.activations)
    if m.n_layers:
        _attention(g, c)
        linear_ops(g, m, tp, p.attention_dtype, p.activations, c.fusion.norm_allreduce, logits == "all", state_commit,
                   state_bytes)
        _dense_ffn(g, c)
        if m.is_moe:
            _moe(g, c)
        _layer_collectives(g, c)
    _heads(g, c, F_T if logits == "all" else F_B)
    if par.pp > 1:
        pipeline_ops(g, m, par, scaleup_domain, c.ab)
    return g.build(par.n_gpus, par.dp, par.pp)


def gemm(n: int, k: int, weights: str = "bf16", activations: str = "bf16") -> OpSet:
    """One GEMM y[M, N] = x[M, K] W[K, N] (M tokens, B * q) as an op set of one kernel, as a layer's projections are
    priced: what a kernel benchmark times, to check the GEMM mechanisms on kernel timings (tools/fit_gemm_overlap)."""
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 for v in (n, k)):
        raise ScenarioError(f"gemm n = {n}, k = {k}; expected positive integers")
    for name, dt in (("weights", weights), ("activations", activations)):
        if dt not in DTYPE_BYTES:
            raise ScenarioError(f"gemm {name} = {dt!r}; expected one of {sorted(DTYPE_BYTES)}")
    g = _Builder()
    g.matmul("gemm", "dense", 1, F_T, float(n), float(k), weights, activations)
    return g.build(1)
