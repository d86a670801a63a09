"""DeepSeek Sparse Attention (simulator/sparse_attention.py): the deepseek_v32 / glm_moe_dsa readers, the indexer's
parameters and ops, MLA over min(context, index_topk) tokens, the index-key cache, and every refusal."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.drafters import make_drafter
from simulator.errors import ModelConfigError
from simulator.features import op_totals
from simulator.memory import kv_bytes_per_rank, weight_bytes_per_rank
from simulator.model import shape_from_config
from simulator.sparse_attention import index_key_bytes, indexer_params
from simulator.workload import Parallelism, Precision, forward_pass

from .helpers import model, refuse_profile_value

MODELS = Path(__file__).resolve().parents[1] / "models"
INDEXER_OPS = ("indexer_q", "indexer_k", "indexer_key_write", "indexer_score", "indexer_topk")


def cfg(name: str) -> dict:
    return json.loads((MODELS / name).read_text())


def op(ops, name: str, B: int, q: int, L: int) -> tuple[float, float]:
    """(FLOPs, bytes) of one named op at one point."""
    t = op_totals(ops, B, q, L)
    i = ops.names.index(name)
    return float(t["flops"][i]), float(t["bytes"][i])


def dsa_ops(mid: str, tp: int = 1, kv_reread: float = 0.0):
    return forward_pass(model(mid), Precision(weights="fp8"), Parallelism(tp=tp), kv_reread=kv_reread)


def test_readers_take_the_indexer_keys():
    v32, glm = model("deepseek-v3.2"), model("glm-5")
    assert (v32.model_type, v32.index_n_heads, v32.index_head_dim, v32.index_topk) == ("deepseek_v32", 64, 128, 2048)
    assert (glm.model_type, glm.index_n_heads, glm.index_head_dim, glm.index_topk) == ("glm_moe_dsa", 32, 128, 2048)
    assert v32.n_mtp_layers == glm.n_mtp_layers == 1           # MTP as for DeepSeek-V3
    assert glm.n_layers == 78 and glm.n_moe_layers == 75 and glm.q_lora_rank == 2048 and glm.v_head_dim == 256
    assert model("deepseek-v3").index_topk == 0                # dense MLA keeps no indexer


def test_indexer_parameters_per_layer():
    """wq_b (q_lora -> H_I d_I), wk (d -> d_I), weights_proj (d -> H_I), LayerNorm weight and bias (the GLM-5.1
    checkpoint's tensor list: wq_b [4096, 2048], wk [128, 6144], weights_proj [32, 6144], k_norm weight and bias)."""
    v3, v32 = model("deepseek-v3"), model("deepseek-v3.2")
    assert v32.attention_params() - v3.attention_params() == 1536 * 64 * 128 + 7168 * 128 + 7168 * 64 + 2 * 128
    assert indexer_params(6144, 2048, 32, 128) == 4096 * 2048 + 128 * 6144 + 32 * 6144 + 2 * 128


def test_golden_parameter_counts():
    """DeepSeek-V3.2: the checkpoint's 685.4B (HF metadata of V3.2-Speciale, same architecture) = main model + MTP
    module with its own embedding and head copies; GLM-5: 744B total, 40B activated (tech report table), the activated
    count without the input embedding and LM head (as for MiniMax-M2.5)."""
    c = model("deepseek-v3.2").param_counts()
    assert c["total"] + c["mtp"] + c["embedding"] + c["lm_head"] == pytest.approx(685.4e9, abs=0.1e9)
    g = model("glm-5").param_counts()
    assert g["total"] == pytest.approx(744e9, rel=0.001)
    assert g["active"] - g["embedding"] - g["lm_head"] == pytest.approx(40e9, abs=0.5e9)


def test_index_key_bytes():
    """FP8 keys plus one fp32 scale per 128 elements: 132 bytes at d_I = 128 (SGLang memory_pool.py)."""
    assert index_key_bytes(128) == 132.0 and index_key_bytes(64) == 68.0 and index_key_bytes(129) == 137.0


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 64), L=st.integers(0, 2047), tp=st.sampled_from([1, 8]))
def test_dsa_reduces_to_dense_mla_when_topk_covers_the_context(B, L, tp):
    """At decode with L + 1 <= index_topk, MLA over the top-k tokens is MLA over all of them: V3.2's attention op
    costs what V3's does (same MLA shapes); the indexer adds its own ops."""
    v3 = forward_pass(model("deepseek-v3"), Precision(weights="fp8"), Parallelism(tp=tp))
    assert op(dsa_ops("deepseek-v3.2", tp), "attention", B, 1, L) == pytest.approx(op(v3, "attention", B, 1, L))


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 32), q=st.integers(1, 8), L=st.integers(0, 200_000), dL=st.integers(1, 50_000),
       mid=st.sampled_from(["deepseek-v3.2", "glm-5"]))
def test_attention_monotone_in_context_and_flat_beyond_topk(B, q, L, dL, mid):
    """MLA's cost never falls as the context grows and stops growing once L >= index_topk; the indexer's score grows
    with every cached token."""
    ops, k = dsa_ops(mid), model(mid).index_topk
    a0, a1 = op(ops, "attention", B, q, L), op(ops, "attention", B, q, L + dL)
    assert a1[0] >= a0[0] and a1[1] >= a0[1]
    if L >= k:
        assert a1 == pytest.approx(a0)
    s0, s1 = op(ops, "indexer_score", B, q, L), op(ops, "indexer_score", B, q, L + dL)
    assert s1[0] > s0[0] and s1[1] > s0[1]


def test_sparse_mla_gathers_per_query_token():
    """Each query token reads its own top-k set (indices per token, SGLang nsa_indexer.py): beyond index_topk a verify
    of q tokens reads q x topk cached tokens, plus, per token, its KV write and q in / o out (absorbed MLA, bf16)."""
    ops, m = dsa_ops("deepseek-v3.2"), model("deepseek-v3.2")
    kv, io = 576 * 2.0, 128 * (512 + 64 + 512) * 2.0
    for q in (1, 4):
        assert op(ops, "attention", 1, q, 100_000)[1] == pytest.approx(m.n_layers * q * (2048 * kv + kv + io))


def test_indexer_ops_and_their_closed_form():
    """Decode of B sequences at context L on one rank: the indexer scores B x (L + 1) pairs (the cache and the new
    token) at 2 H_I d_I + 3 H_I FLOPs, reads B x L keys of 132 bytes, and 8 bytes of fp32 logits per pair (written,
    then read by top-k)."""
    ops, m = dsa_ops("glm-5"), model("glm-5")
    assert set(INDEXER_OPS) <= set(ops.names)
    assert not set(INDEXER_OPS) & set(forward_pass(model("deepseek-v3")).names)
    B, L = 4, 10_000
    fl, by = op(ops, "indexer_score", B, 1, L)
    assert fl == pytest.approx(m.n_layers * B * (L + 1) * (2 * 32 * 128 + 3 * 32))
    assert by == pytest.approx(m.n_layers * B * (L * 132 + (L + 1) * 8))
    assert op(ops, "indexer_topk", B, 1, L)[1] == pytest.approx(m.n_layers * B * 2048 * 4)


def test_indexer_replicated_across_tp():
    """The indexer's projections are replicated on every TP rank (ReplicatedLinear in SGLang's nsa_indexer.py)."""
    assert op(dsa_ops("glm-5", tp=8), "indexer_q", 8, 1, 4096) == op(dsa_ops("glm-5", tp=1), "indexer_q", 8, 1, 4096)


@pytest.mark.parametrize("tp", [1, 2, 8, 16])
def test_indexer_weights_are_whole_on_every_rank(tp):
    """The indexer's weights are replicated like its ops (found by review: weight_bytes_per_rank split them tp ways
    with the head-split projections, 9.4 M parameters a layer, about 0.6 GB per GPU short for GLM-5-FP8 at TP8)."""
    p, par = Precision(weights="fp8"), Parallelism(tp=tp)
    v32, v3 = model("deepseek-v3.2"), model("deepseek-v3")
    extra = weight_bytes_per_rank(v32, p, par) - weight_bytes_per_rank(v3, p, par)
    assert extra == pytest.approx(61 * indexer_params(7168, 1536, 64, 128) * 1.0, rel=1e-12)   # fp8: 1 byte


def test_kv_cache_holds_the_index_keys():
    B, q, L = np.array([3.0]), np.array([1.0]), np.array([5000.0])
    extra = kv_bytes_per_rank(model("deepseek-v3.2"), B, q, L) - kv_bytes_per_rank(model("deepseek-v3"), B, q, L)
    assert extra[0] == pytest.approx(3 * 5001 * 61 * 132)


def test_mtp_module_carries_its_indexer():
    """The MTP layer of V3.2 / GLM-5 is a DSA layer (the GLM-5.1 checkpoint lists layer 78's indexer)."""
    d = make_drafter("mtp", model("glm-5"), precision=Precision(weights="fp8"), par=Parallelism(tp=8))
    assert d.shape.n_layers == 1 and d.shape.index_topk == 2048 and "indexer_score" in d.ops_all.names


@pytest.mark.parametrize("change, words", [
    (dict(index_topk=None), "missing key 'index_topk'"),
    (dict(index_n_heads=0), "index_n_heads"),
    (dict(index_head_dim="128"), "index_head_dim"),
    (dict(index_topk=True), "index_topk"),
    (dict(q_lora_rank=None), "q_lora_rank"),
    (dict(index_topk_freq=4), "shared indexers"),
    (dict(indexer_types=["full", "shared"]), "shared indexers"),
])
def test_bad_dsa_configs_are_refused(change, words):
    c = cfg("zai-org__GLM-5.json")
    for k, v in change.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    with pytest.raises(ModelConfigError, match=words):
        shape_from_config(c, source="glm.json")


def test_sparse_mla_pads_the_heads_per_rank():
    """FlashMLA's sparse kernels take 64 query heads on Hopper (vLLM PR #46189): GLM-5 at TP8 (8 heads per rank)
    computes 64, its math 8x and its query / output bytes too; a rank of 64 heads (TP1) and dense MLA are unchanged."""
    m, p = model("glm-5"), Precision(weights="fp8")
    plain, padded = (forward_pass(m, p, Parallelism(tp=8), sparse_heads=h) for h in (0, 64))
    B, q, L = 4, 2, 50_000
    (f0, b0), (f1, b1) = op(plain, "attention", B, q, L), op(padded, "attention", B, q, L)
    assert f1 == pytest.approx(8 * f0)
    assert b1 - b0 == pytest.approx(m.n_layers * B * q * (64 - 8) * (512 + 64 + 512) * 2.0)
    assert op(forward_pass(m, p, Parallelism(tp=1), sparse_heads=64), "attention", B, q, L) == \
        op(forward_pass(m, p, Parallelism(tp=1)), "attention", B, q, L)
    v3 = model("deepseek-v3")
    assert op(forward_pass(v3, p, Parallelism(tp=8), sparse_heads=64), "attention", B, q, L) == \
        op(forward_pass(v3, p, Parallelism(tp=8)), "attention", B, q, L)


def test_vllm_pads_on_hopper_and_the_deployment_follows_the_profile():
    """The padding is vLLM's on Hopper ([attention] sparse_mla_min_heads_hopper = 64): a deployment's target, verify
    and MTP op sets carry it; another profile without it is resolved again (with_engine), not priced on stale ops."""
    from dataclasses import replace

    from simulator.engine import load_engine
    from simulator.scenario import Scenario, with_engine
    vllm = load_engine("vllm")
    assert (vllm.sparse_mla_heads("hopper"), vllm.sparse_mla_heads("blackwell")) == (64, 0)
    assert load_engine("sglang").sparse_mla_heads("hopper") == 0
    dep = Scenario(hardware="h200-sxm", model="glm-5", method="mtp", precision="fp8", tp=8, engine="vllm").resolve()
    unpadded = forward_pass(model("glm-5"), Precision(weights="fp8"), Parallelism(tp=8))
    assert op(dep.tops, "attention", 4, 2, 8192)[0] == pytest.approx(8 * op(unpadded, "attention", 4, 2, 8192)[0])
    mtp = make_drafter("mtp", model("glm-5"), precision=Precision(weights="fp8"), par=Parallelism(tp=8))
    assert op(dep.drafter.ops_all, "attention", 4, 2, 8192)[0] == pytest.approx(8 * op(mtp.ops_all, "attention", 4, 2,
                                                                                          8192)[0])
    off = with_engine(dep, replace(dep.eng, sparse_mla_min_heads_hopper=0))
    assert op(off.tops, "attention", 4, 2, 8192)[0] == pytest.approx(op(unpadded, "attention", 4, 2, 8192)[0])
    assert with_engine(dep, replace(dep.eng, host_step_s=2e-3)).tops is dep.tops   # same ops: no rebuild


@pytest.mark.parametrize("value, needle", [("-1", "-1"), ("2000", "2000"), ('"64"', "64"), ("6.5", "6.5")])
def test_a_profile_whose_padding_is_not_a_head_count_is_refused(value, needle, tmp_path, capsys):
    refuse_profile_value(capsys, tmp_path, "vllm", "sparse_mla_min_heads_hopper", value, needle,
                         "step", "--hardware", "h200-sxm", "--model", "glm-5", "--precision", "fp8", "--tp", "8")
