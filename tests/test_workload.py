"""The op table of one forward pass (simulator/workload.py): FLOPs and bytes in closed form, expert coverage,
collectives, memory, and every argument check."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ScenarioError
from simulator.experts import experts_touched_fraction
from simulator.features import features, op_totals
from simulator.memory import activation_bytes_per_rank, kv_bytes_per_rank, weight_bytes_per_rank
from simulator.model import load_model
from simulator.registry import list_models, model_record
from simulator.units import ACT_QUANT, DTYPE_BYTES
from simulator.workload import (
    F_B,
    F_BL,
    F_CAUSAL,
    F_ONE,
    F_T,
    F_TL,
    F_U,
    FAM,
    N_FEAT,
    Parallelism,
    Precision,
    forward_pass,
    kv_elems_per_token_layer_rank,
    kv_heads_per_rank,
)

from .helpers import model, ops_for
from .strategies import model_shapes

REPO = Path(__file__).resolve().parents[1]
IDS = list_models()




def raw_cfg(mid):
    return json.loads((REPO / "models" / model_record(mid).file).read_text())


# ---- distinct experts ---------------------------------------------------------------------------------------------

@st.composite
def experts_and_k(draw):
    E = draw(st.integers(1, 1024))
    k = draw(st.integers(1, E))
    return E, k


@settings(max_examples=200, deadline=None)
@given(ek=experts_and_k(), n=st.integers(1, 10**7), dn=st.integers(0, 10**6))
def test_distinct_experts_between_topk_and_E_and_non_decreasing(ek, n, dn):
    E, k = ek
    touched = float(experts_touched_fraction(n, E, k)) * E
    # [k, E]; the lower end is k/E*E computed as -expm1(log1p(-k/E))*E, which can land one ulp under k
    # (e.g. 8 of 256 at N=1 gives 7.999999999999999), hence the 1e-12 relative slack on that side only
    assert k * (1 - 1e-12) <= touched <= E
    assert experts_touched_fraction(n + dn, E, k) >= experts_touched_fraction(n, E, k)


@settings(max_examples=50, deadline=None)
@given(ek=experts_and_k(), n_max=st.integers(2, 5000))
def test_distinct_experts_vectorised_monotone(ek, n_max):
    E, k = ek
    f = experts_touched_fraction(np.arange(1, n_max + 1), E, k)
    assert f.shape == (n_max,)
    assert np.all(np.diff(f) >= 0)
    assert np.all(f * E >= k * (1 - 1e-12)) and np.all(f <= 1.0)


def test_distinct_experts_known_values():
    assert experts_touched_fraction(1, 8, 2) == pytest.approx(0.25, rel=1e-15)
    assert experts_touched_fraction(2, 8, 2) == pytest.approx(1 - 0.75**2, rel=1e-15)
    assert experts_touched_fraction(10**6, 256, 8) == 1.0
    assert experts_touched_fraction(3, 4, 4) == 1.0


@pytest.mark.parametrize("E, k", [(8, 2), (256, 8), (4, 4), (1, 1)])
def test_zero_tokens_touch_no_experts(E, k):
    """1 - (1 - k/E)^0 = 0 for every k <= E: a pass with no tokens reads no expert weights. (The k == E branch
    returned ones regardless of N.)"""
    assert float(experts_touched_fraction(0, E, k)) == 0.0
    assert np.all(experts_touched_fraction(np.array([0.0, 0.0]), E, k) == 0.0)


@pytest.mark.parametrize("mid", [i for i in IDS if load_model(i).is_moe])
def test_bundled_moe_expert_coverage(mid):
    m = model(mid)
    n = np.arange(1, 4097)
    touched = experts_touched_fraction(n, m.n_experts, m.top_k) * m.n_experts
    assert touched[0] == pytest.approx(m.top_k, rel=1e-12)
    assert np.all(np.diff(touched) >= 0) and touched[-1] <= m.n_experts
    # the op table's E and k; at rho = 1 (independent tokens) features gives the same fraction (the op table's own
    # routing locality: tests/test_routing_locality.py)
    ops = ops_for(mid)
    i = ops.names.index("experts")
    assert (ops.moe_e[i], ops.moe_k[i]) == (m.n_experts, m.top_k)
    f = features(np.array([3.0]), np.array([4.0]), np.array([100.0]), ops.window[i], ops.moe_e[i], ops.moe_k[i],
                 moe_rho=1.0)
    assert f[0, F_U] == pytest.approx(experts_touched_fraction(12, m.n_experts, m.top_k), rel=1e-15)


# ---- features -----------------------------------------------------------------------------------------------------

def test_features_formulae():
    f = features(np.array([2.0, 3.0]), np.array([4.0, 1.0]), np.array([100.0, 10.0]), 50.0, 8.0, 2.0)
    assert f.shape == (2, N_FEAT)
    np.testing.assert_array_equal(f[:, F_ONE], [1, 1])
    np.testing.assert_array_equal(f[:, F_B], [2, 3])
    np.testing.assert_array_equal(f[:, F_T], [8, 3])
    np.testing.assert_array_equal(f[:, F_BL], [2 * 50, 3 * 10])      # window caps the cached keys
    np.testing.assert_array_equal(f[:, F_TL], [8 * 50, 3 * 10])
    np.testing.assert_array_equal(f[:, F_CAUSAL], [2 * 4 * 5 / 2, 3 * 1 * 2 / 2])
    np.testing.assert_allclose(f[:, F_U], [1 - 0.75**8, 1 - 0.75**3], rtol=1e-15)
    g = features(np.array([2.0]), np.array([4.0]), np.array([100.0]), 1e300, 0.0, 0.0)
    assert g[0, F_BL] == 200 and g[0, F_U] == 0.0


# ---- FLOPs in closed form ------------------------------------------------------------------------------------------

def closed_form_flops(mid: str, B: int, q: int, L: int, logits: str = "all") -> float:
    """2 x (active matmul parameters, without the embedding gather, LM head once per logit row) x tokens + attention,
    computed from the raw config.json, not from ModelShape."""
    c = raw_cfg(mid)
    T = B * q
    d, nl, h, V = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"], c["vocab_size"]
    window = c.get("sliding_window") or math.inf
    pairs = T * min(L, window) + B * q * (q + 1) / 2
    if c["model_type"] == "deepseek_v3":
        ql, kvl, rope, nope, vd = (c["q_lora_rank"], c["kv_lora_rank"], c["qk_rope_head_dim"], c["qk_nope_head_dim"],
                                   c["v_head_dim"])
        attn = d * ql + ql * h * (nope + rope) + d * (kvl + rope) + kvl * h * (nope + vd) + h * vd * d
        nd = c["first_k_dense_replace"]
        E, k = c["n_routed_experts"], c["num_experts_per_tok"]
        ns, fe = c["n_shared_experts"], c["moe_intermediate_size"]
        ffn = nd * 3 * d * c["intermediate_size"] + (nl - nd) * (d * E + 3 * d * fe * (ns + k))
        # absorbed MLA (workload.py): scores over the latent + rope dims, values in the latent, 2 FLOPs per MAC
        pair = h * (2 * (kvl + rope) + 2 * kvl)
    else:
        hkv = c["num_key_value_heads"]
        dh = c.get("head_dim") or d // h
        attn = d * (h + 2 * hkv) * dh + h * dh * d
        if "num_local_experts" in c:
            ffn = nl * (d * c["num_local_experts"] + c["num_experts_per_tok"] * 3 * d * c["intermediate_size"])
        else:
            ffn = nl * 3 * d * c["intermediate_size"]
        pair = 4 * h * dh      # QK^T and PV
    lm_rows = T if logits == "all" else B
    return 2.0 * (nl * attn + ffn) * T + 2.0 * V * d * lm_rows + nl * pair * pairs


@settings(max_examples=40, deadline=None)
@given(mid=st.sampled_from(["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"]), B=st.integers(1, 512),
       q=st.integers(1, 64), L=st.integers(0, 131_072), logits=st.sampled_from(["all", "last"]))
def test_total_flops_closed_form(mid, B, q, L, logits):
    got = op_totals(ops_for(mid, logits=logits), B, q, L)["flops"].sum()
    assert got == pytest.approx(closed_form_flops(mid, B, q, L, logits), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(mid=st.sampled_from(["llama-3.1-8b", "mixtral-8x7b", "deepseek-v3", "qwen3-8b", "llama-2-7b"]),
       B=st.integers(1, 256), q=st.integers(1, 16), L=st.integers(0, 32_768))
def test_flops_are_two_x_active_compute_params_plus_attention(mid, B, q, L):
    """The same identity through ModelShape.param_counts: active params without embedding and norm weights (and the
    MLA latent norms), x 2 x tokens, plus the attention term."""
    m = model(mid)
    c = m.param_counts()
    norm_like = c["norms"] + m.n_layers * (m.q_lora_rank + m.kv_lora_rank + (2 * m.d_head if m.qk_norm else 0))
    compute = c["active"] - c["embedding"] - norm_like
    ops = ops_for(mid)
    tot = op_totals(ops, B, q, L)
    attn = tot["flops"][ops.family == FAM["attention"]].sum()
    assert tot["flops"].sum() - attn == pytest.approx(2.0 * compute * B * q, rel=1e-12)


@pytest.mark.parametrize("mid", ["llama-3.1-8b", "qwen3-8b", "llama-2-7b", "mixtral-8x7b", "llama-3.1-70b"])
@pytest.mark.parametrize("tp", [2, 4, 8])
def test_flops_split_evenly_over_tp_without_replication(mid, tp):
    """With tp <= KV heads nothing is replicated except the MoE router: per-rank FLOPs x tp = one-GPU FLOPs."""
    m = model(mid)
    assert tp <= m.n_kv_heads
    one = op_totals(ops_for(mid), 8, 3, 1000)["flops"]
    o1 = ops_for(mid)
    many = op_totals(ops_for(mid, tp), 8, 3, 1000)
    router_1 = one[[n == "router" for n in o1.names]].sum()
    router_tp = many["flops"][[n == "router" for n in ops_for(mid, tp).names]].sum()
    assert router_tp == router_1
    assert (many["flops"].sum() - router_tp) * tp == pytest.approx(one.sum() - router_1, rel=1e-12)


# ---- collectives --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mid", IDS)
def test_tp1_has_no_collectives(mid):
    ops = ops_for(mid)
    assert not np.any(ops.coll > 0)
    assert not np.any(ops.family == FAM["collective"])
    assert not np.any(ops.cc)
    assert ops.tp == 1


@pytest.mark.parametrize("mid, tp, ep, dp", [("llama-3.1-70b", 8, 1, 1), ("mixtral-8x7b", 4, 1, 1),
                                             ("mixtral-8x7b", 4, 4, 1), ("deepseek-v3", 8, 8, 1),
                                             ("deepseek-v3", 8, 2, 1), ("deepseek-v3", 1, 8, 8),
                                             ("deepseek-v3", 2, 8, 4), ("deepseek-v3", 1, 4, 8),
                                             ("deepseek-v3", 1, 1, 8)])
def test_layout_collectives(mid, tp, ep, dp):
    """Each layout has the collectives it implies and no others (issue #12): tensor-parallel all-reduces only inside
    an attention TP group; under TP attention one MoE all-reduce whether experts are TP-split or expert-parallel
    (tokens are replicated, so EP moves none: TensorRT-LLM's Deepseekv3MoE.should_enable_alltoall is False without
    attention DP); dispatch + combine all-to-all only for EP under DP attention, where the only MoE all-reduce is
    the expert-TP one (experts split moe_tp ways), of one hidden vector per instance token."""
    m = model(mid)
    ops = forward_pass(m, Precision(), Parallelism(tp, ep, dp))
    coll = {n: i for i, n in enumerate(ops.names) if ops.coll[i] > 0}
    ar_attn = coll.get("allreduce_attn")
    assert (ar_attn is not None) == (tp > 1)
    if tp > 1:
        assert ops.repeat[ar_attn] == m.n_layers and ops.group[ar_attn] == tp
        assert ops.cc[ar_attn, F_T] == pytest.approx(m.d_model * 2)          # the buffer: one hidden vector/token
    assert ("allreduce_moe" in coll) == (m.is_moe and dp == 1 and tp > 1)
    assert ("dispatch" in coll) == ("combine" in coll) == (ep > 1 and dp > 1)
    if ep > 1 and dp > 1:
        j = coll["dispatch"]
        assert ops.repeat[j] == m.n_moe_layers and ops.group[j] == ep
        # each of a DP group's tp ranks dispatches 1/tp of its tokens, reduce-scattered first (SGLang's SCATTERED
        # MLP mode; a physics audit found tp copies of every token sent: TP8 x DP4 x EP32 on B200 priced 68.6 ms of
        # collectives at batch 1024 where 14.7 ms is the hand figure)
        assert ops.cc[j, F_T] == pytest.approx((ep - 1) / ep * m.top_k * m.d_model * 2 / tp)
    moe_tp = tp * dp // ep
    assert ("allreduce_expert_tp" in coll) == (m.is_moe and ep > 1 and dp > 1 and moe_tp > 1)
    if "allreduce_expert_tp" in coll:
        j = coll["allreduce_expert_tp"]
        assert ops.group[j] == moe_tp and ops.share[j] == 1.0
        assert ops.cc[j, F_T] == pytest.approx(m.d_model * 2)   # one hidden vector per instance token, not dp of them
    if dp > 1 and tp == 1 and moe_tp == 1:
        assert not any(n.startswith("allreduce") for n in coll)           # DP attention + EP: no TP all-reduce
    assert ("allgather_moe" in coll) == (m.is_moe and ep == 1 and dp > 1)


def test_ep_under_tp_attention_moves_no_tokens():
    # Found bug: EP8 under TP8 attention priced two all-to-alls and an all-gather per MoE layer on top of the
    # attention all-reduce (DeepSeek-R1 on 8x H200 at batch 4: 8.5 ms of collectives against 0.9 ms under TP), so
    # InferenceX's TensorRT-LLM TP8/EP8 rows were predicted 40-70 % too slow. The collectives are now those of TP; only
    # the busiest rank's whole-expert reads differ.
    tp, ep = (forward_pass(model("deepseek-v3"), Precision(), Parallelism(8, e)) for e in (1, 8))
    names = lambda o: sorted(n for i, n in enumerate(o.names) if o.coll[i] > 0)   # noqa: E731
    assert names(tp) == names(ep)
    c = lambda o: o.cc[o.coll > 0]   # noqa: E731
    np.testing.assert_array_equal(c(tp), c(ep))


def test_dp_attention_shares_the_batch_and_experts_see_every_token():
    ops = forward_pass(model("deepseek-v3"), Precision(), Parallelism(1, 8, 8))
    share = dict(zip(ops.names, ops.share))
    assert share["qkv_proj" if "qkv_proj" in share else "q_a_proj"] == pytest.approx(1 / 8)
    assert share["experts"] == 1.0 and share["router"] == pytest.approx(1 / 8)
    i = ops.names.index("experts")
    assert ops.moe_ranks[i] == 8


# ---- weights, KV cache, activations -------------------------------------------------------------------------------

def read_weight_bytes(ops, large_T=False):
    """Weight bytes one pass reads (coefficient of the constant feature, plus all experts when every one is hit)."""
    w = float((ops.cb[:, F_ONE] * ops.repeat).sum())
    return w + (float((ops.cb[:, F_U] * ops.repeat).sum()) if large_T else 0.0)


def test_weights_read_equal_weights_held_less_embedding_and_norms():
    """Llama-3.1-8B at tp=1 (untied, no biases): the pass reads every weight it holds except the embedding table
    (gathered row by row) and the RMSNorm vectors."""
    m = model("llama-3.1-8b")
    c = m.param_counts()
    held = weight_bytes_per_rank(m)
    assert held == 2.0 * c["total"]
    assert held - read_weight_bytes(ops_for("llama-3.1-8b")) == 2.0 * (c["embedding"] + c["norms"])
    assert held == 2 * 8_030_261_248


@pytest.mark.parametrize("mid", [i for i in IDS if model_record(i).kind == "target"])
def test_weights_read_never_exceed_weights_held(mid):
    m = model(mid)
    c = m.param_counts()
    held = weight_bytes_per_rank(m)
    read = read_weight_bytes(ops_for(mid), large_T=True)
    unread = held - read
    # what is held but not read is the embedding table (untied; tied, the LM head reads it) plus norm vectors,
    # biases and sinks (< 0.1 %)
    emb = 0.0 if m.tied_embeddings else 2.0 * c["embedding"]
    assert 0 <= unread - emb <= 1e-3 * held, (mid, unread - emb)


@pytest.mark.parametrize("mid", ["llama-3.1-8b", "mixtral-8x7b", "qwen3-30b-a3b"])
def test_fp8_weights_halve_projection_bytes(mid):
    b16, f8 = ops_for(mid), ops_for(mid, weights="fp8")
    for i, n in enumerate(b16.names):
        if n in ("qkv_proj", "o_proj", "ffn_up", "ffn_down", "experts"):
            assert f8.cb[i, F_ONE] == pytest.approx(b16.cb[i, F_ONE] / 2)
            assert f8.cb[i, F_U] == pytest.approx(b16.cb[i, F_U] / 2)
            assert f8.dtype[i] == "fp8"
        if n in ("lm_head", "embedding", "router"):
            assert f8.cb[i, F_ONE] == b16.cb[i, F_ONE] and f8.dtype[i] == "bf16"


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_weight_bytes_split_over_tp(tp):
    m = model("llama-3.1-70b")   # 8 KV heads: nothing replicated up to tp 8 except norm vectors
    c = m.param_counts()
    w = weight_bytes_per_rank(m, par=Parallelism(tp))
    assert w == pytest.approx(2.0 * (c["total"] - c["norms"]) / tp + 2.0 * c["norms"], rel=1e-12)


def test_weight_bytes_replicate_kv_heads_beyond_hkv():
    m = model("llama-3.1-8b")     # 8 KV heads, tp 16: each rank keeps one whole KV head
    assert kv_heads_per_rank(m, 16) == 1.0 and kv_heads_per_rank(m, 4) == 2.0
    w16 = weight_bytes_per_rank(m, par=Parallelism(16))
    w8 = weight_bytes_per_rank(m, par=Parallelism(8))
    kv_w = m.n_layers * m.d_model * 2 * m.d_head * 2.0   # one K and one V head, bf16
    c = m.param_counts()
    nonrep = w8 - 2.0 * c["norms"]
    assert w16 == pytest.approx(nonrep / 2 + 2.0 * c["norms"] + kv_w / 2, rel=1e-12)


def test_fp4_expert_bytes_include_block_scales():
    m = model("deepseek-v3")
    p = Precision(weights="bf16", experts="fp4")
    assert p.expert_dtype == "fp4" and DTYPE_BYTES["fp4"] == 0.5 + 1 / 16
    w_fp4 = weight_bytes_per_rank(m, p)
    w_bf16 = weight_bytes_per_rank(m)
    c = m.param_counts()
    experts = c["moe"] - m.n_moe_layers * m.router_params()
    assert w_bf16 - w_fp4 == pytest.approx(experts * (2.0 - 0.5625), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(B=st.integers(1, 256), q=st.integers(1, 16), L=st.integers(0, 200_000))
def test_kv_bytes_closed_form(B, q, L):
    m = model("llama-3.1-8b")
    assert kv_bytes_per_rank(m, B, q, L) == B * (L + q) * 32 * (2 * 8 * 128) * 2
    assert kv_bytes_per_rank(m, B, q, L, Precision(kv="fp8")) == B * (L + q) * 32 * (2 * 8 * 128)
    assert kv_bytes_per_rank(m, B, q, L, par=Parallelism(4)) == B * (L + q) * 32 * (2 * 2 * 128) * 2
    ds = model("deepseek-v3")       # MLA: latent 512 + rope 64 per token per layer, the same on every rank
    assert kv_bytes_per_rank(ds, B, q, L) == B * (L + q) * 61 * 576 * 2
    assert kv_bytes_per_rank(ds, B, q, L, par=Parallelism(8)) == kv_bytes_per_rank(ds, B, q, L)
    assert kv_elems_per_token_layer_rank(ds, 8) == 576
    g = model("gpt-oss-120b")       # 18 full + 18 sliding-window (128) layers, 8 KV heads x 64
    per = 2 * 8 * 64 * 2
    assert kv_bytes_per_rank(g, B, q, L) == B * (18 * (L + q) + 18 * min(L + q, 128)) * per


def test_activation_bytes():
    m = model("llama-3.1-8b")
    a = activation_bytes_per_rank(m, np.array([1.0, 4.0]), np.array([2.0, 2.0]))
    widest = max(14336, (32 + 16) * 128)
    per_tok = (4 * 4096 + 2 * widest) * 2 + 128256 * 4
    np.testing.assert_allclose(a, [2 * per_tok, 8 * per_tok], rtol=1e-15)
    last = activation_bytes_per_rank(m, np.array([4.0]), np.array([2.0]), logits="last")
    assert last[0] == 8 * (4 * 4096 + 2 * widest) * 2 + 4 * 128256 * 4


# ---- structure of the op table ----------------------------------------------------------------------------------

def test_op_table_shapes_and_signs():
    for mid in ("llama-3.1-8b", "deepseek-v3", "gpt-oss-120b", "medusa-vicuna-7b", "eagle3-llama3.1-8b"):
        ops = ops_for(mid)
        n = len(ops)
        assert ops.cf.shape == ops.cb.shape == ops.cc.shape == (n, N_FEAT)
        assert len(ops.dtype) == len(ops.names) == n
        assert np.all(ops.cf >= 0) and np.all(ops.cb >= 0) and np.all(ops.cc >= 0)
        assert np.all(ops.repeat > 0) and np.all(ops.kernels > 0)


def test_windowed_attention_ops():
    ops = ops_for("gpt-oss-120b")
    i, j = ops.names.index("attention"), ops.names.index("attention_window")
    assert ops.repeat[i] == ops.repeat[j] == 18
    assert ops.window[j] == 128 and ops.window[i] >= 1e300
    # cached keys beyond the window cost nothing more in the windowed layers
    t1 = op_totals(ops, 4, 1, 128)
    t2 = op_totals(ops, 4, 1, 100_000)
    assert t1["flops"][j] == t2["flops"][j] and t1["bytes"][j] == t2["bytes"][j]
    assert t2["flops"][i] > t1["flops"][i]


def test_medusa_heads_have_no_embedding_and_no_layers():
    ops = ops_for("medusa-vicuna-7b")
    assert "embedding" not in ops.names and "attention" not in ops.names
    m = model("medusa-vicuna-7b")
    fl = op_totals(ops, 1, 1, 0)["flops"].sum()
    assert fl == 2.0 * m.n_medusa_heads * (m.d_model * m.d_model + m.d_model * m.vocab_size)


# ---- argument checks --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prec, message", [
    (Precision(weights="int4"), r"precision weights = 'int4'; expected one of fp32, bf16"),
    (Precision(experts="fp2"), r"precision expert_dtype = 'fp2'"),
    (Precision(lm_head="q8"), r"precision lm_head = 'q8'"),
    (Precision(kv="fp3"), r"precision kv = 'fp3'"),
    (Precision(activations="int8"), r"precision activations = 'int8'"),
])
def test_precision_check(prec, message):
    with pytest.raises(ScenarioError, match=message):
        prec.check()
    with pytest.raises(ScenarioError, match=message):
        forward_pass(model("llama-3.1-8b"), prec)


@pytest.mark.parametrize("mid, par, message", [
    ("llama-3.1-8b", Parallelism(tp=3), r"^tp = 3 does not divide the 32 attention heads of llama-3.1-8b$"),
    ("llama-3.1-8b", Parallelism(tp=0), r"^tp = 0; expected a positive integer$"),
    ("llama-3.1-8b", Parallelism(tp=-2), r"^tp = -2; expected a positive integer$"),
    ("llama-3.1-8b", Parallelism(tp=2.0), r"^tp = 2.0; expected a positive integer$"),
    ("llama-3.1-8b", Parallelism(tp=True), r"^tp = True; expected a positive integer$"),
    ("llama-3.1-8b", Parallelism(tp=1, ep=0), r"^ep = 0; expected a positive integer$"),
    ("llama-3.1-8b", Parallelism(tp=2, ep=2), r"^ep = 2 but llama-3.1-8b has no experts$"),
    ("mixtral-8x7b", Parallelism(tp=2, ep=4), r"^ep = 4 must divide the instance's GPUs, tp x dp = 2$"),
    ("mixtral-8x7b", Parallelism(tp=1, ep=4, dp=2), r"^ep = 4 must divide the instance's GPUs, tp x dp = 2$"),
    ("mixtral-8x7b", Parallelism(tp=16, ep=16), r"^ep = 16 exceeds the 8 experts of mixtral-8x7b$"),
    ("vicuna-33b", Parallelism(tp=8), r"^tp = 8 does not divide the 52 attention heads of vicuna-33b$"),
])
def test_parallelism_check(mid, par, message):
    with pytest.raises(ScenarioError, match=message):
        par.check(model(mid))
    with pytest.raises(ScenarioError, match=message):
        forward_pass(model(mid), par=par)


def test_parallelism_accepts_valid_layouts():
    Parallelism(8, 8).check(model("deepseek-v3"))
    Parallelism(8, 1).check(model("deepseek-v3"))
    Parallelism(4, 1).check(model("vicuna-33b"))
    Parallelism(3).check(model("medusa-vicuna-7b"))   # Medusa heads have no attention to split


def test_forward_pass_rejects_bad_logits():
    with pytest.raises(ScenarioError, match=r"^logits = 'first'; expected 'all' or 'last'$"):
        forward_pass(model("llama-3.1-8b"), logits="first")



@settings(max_examples=40, deadline=None)
@given(m=model_shapes(), wq=st.sampled_from(sorted(ACT_QUANT)), other=st.sampled_from(["bf16", "fp16", "mxfp4", "fp6"]),
       tp=st.sampled_from([1, 2]))
def test_w8a8_and_nvfp4_gemms_add_one_activation_quant_kernel_each(m, wq, other, tp):
    """A GEMM whose weights are in units.ACT_QUANT runs one activation-quantisation kernel before it (vLLM and SGLang),
    two in the fused experts; those are `quant` kernels, not counted at the fitted per-kernel cost. Every other format
    (the mechanism off) has none and the same kernels."""
    if m.n_heads % tp:
        return
    base = forward_pass(m, Precision(weights=other), Parallelism(tp=tp))
    q = forward_pass(m, Precision(weights=wq), Parallelism(tp=tp))
    assert base.names == q.names and np.array_equal(base.kernels, q.kernels) and not base.quant.any()
    for n, dt, g, nq in zip(q.names, q.dtype, q.gemm, q.quant):
        assert nq == (0 if not g or dt not in ACT_QUANT else (2 if n == "experts" else 1)), (n, dt)
    # The quantisation reads the activations and writes them at the weights' format: bytes per token only.
    db = q.cb - base.cb
    assert np.all(db[:, [F_B, F_BL, F_TL, F_CAUSAL]] == 0.0)
    assert np.all(q.cb[:, F_T] >= base.cb[:, F_T] - 1e-9 * np.abs(base.cb[:, F_T]))


def test_deepseek_fp8_layer_counts_a_quantisation_per_fp8_gemm_input_unfused():
    """DeepSeek-V3's fp8 checkpoint counted unfused (no engine's `kernels.fused`): q_a, q_b, kv_a, the absorbed W_UK /
    W_UV pair (two: each bmm's own input, as TensorRT-LLM's SM90 fp8_block_scaling_bmm_out quantises them), o_proj,
    the shared expert's two GEMMs and the fused experts' two quantisations: 10 per MoE layer (vLLM fp8_utils /
    fused_moe), 8 per dense layer. What each engine fuses away: tests/test_fusion.py."""
    m = model("deepseek-v3")
    k8 = forward_pass(m, Precision(weights="fp8"), Parallelism(tp=8))
    per = {n: float(v) for n, v in zip(k8.names, k8.quant) if v}
    assert per == {"q_a_proj": 1, "q_b_proj": 1, "kv_a_proj": 1, "kv_b_absorbed": 2, "o_proj": 1, "shared_up": 1,
                   "shared_down": 1, "experts": 2, "ffn_up": 1, "ffn_down": 1}
