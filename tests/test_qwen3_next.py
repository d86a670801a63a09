"""Qwen3-Next (model_type qwen3_next): Gated DeltaNet linear-attention layers beside gated full attention and MoE.

The reader against the published layout, the layer's state traffic (read once a pass, kept after every token in
decode and verify, once in a prefill), the memory it holds in place of a KV cache, the refusals, and that with no
linear layer the op table is the full-attention one."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.errors import ModelConfigError, ScenarioError
from simulator.features import op_totals
from simulator.linear_attention import FP32_STATE_BYTES, linear_state_bytes_rank, spec_state_copies
from simulator.memory import kv_bytes_per_rank
from simulator.model import shape_from_config
from simulator.units import DTYPE_BYTES
from simulator.workload import Parallelism, Precision, forward_pass

from .helpers import model, run

MID = "qwen3-next-80b-a3b"
CFG = Path(__file__).resolve().parents[1] / "models" / "Qwen__Qwen3-Next-80B-A3B-Instruct.json"


def cfg() -> dict:
    return json.loads(CFG.read_text())


def ops(m, tp=1, logits="all"):
    return forward_pass(m, Precision(weights="fp8"), Parallelism(tp=tp), logits=logits)


def bytes_of(o, names, B, q, L):
    tot = op_totals(o, B, q, L)["bytes"]
    return float(sum(tot[i] for i, n in enumerate(o.names) if n in names))


def test_layout_against_the_published_config():
    m = model(MID)
    # Qwen3-Next-80B-A3B model card: 48 layers, hybrid layout 12 x (3 x (Gated DeltaNet -> MoE) + 1 x (Gated
    # Attention -> MoE)); Gated Attention 16 Q / 2 KV heads of 256; Gated DeltaNet 32 V / 16 QK heads of 128;
    # 512 experts, 10 routed + 1 shared, expert width 512
    assert (m.n_layers, m.n_linear_layers, m.n_attn_layers, m.d_model) == (48, 36, 12, 2048)
    assert (m.n_heads, m.n_kv_heads, m.d_head, m.attn_output_gate, m.qk_norm) == (16, 2, 256, True, True)
    assert (m.lin_k_heads, m.lin_v_heads, m.lin_k_dim, m.lin_v_dim, m.lin_conv_kernel) == (16, 32, 128, 128, 4)
    assert (m.n_experts, m.top_k, m.n_shared_experts, m.d_ff_expert, m.d_ff_shared) == (512, 10, 1, 512, 512)
    assert m.n_moe_layers == 48 and m.lin_conv_dim == 2 * 16 * 128 + 32 * 128


def test_parameter_counts_against_the_model_card():
    # model card: '80B in total and 3B activated' (the active figure without the embedding and LM head)
    c = model(MID).param_counts()
    assert abs(c["total"] - 80e9) <= 0.02 * 80e9
    assert abs(c["active"] - c["embedding"] - c["lm_head"] - 3e9) <= 0.35e9


def test_no_linear_layer_is_the_full_attention_table():
    """Switched off (no linear layer, no output gate, no shared expert) the op table is the Qwen3-MoE one of the
    same dimensions, op for op: the mechanism adds ops, it changes none."""
    c = cfg()
    m = replace(model(MID), n_linear_layers=0, attn_output_gate=False, n_shared_experts=0, d_ff_shared=0,
                shared_expert_gate=False)
    moe = {k: v for k, v in c.items() if not k.startswith(("linear_", "full_attention", "shared_expert"))}
    ref = shape_from_config({**moe, "model_type": "qwen3_moe"}, name=m.name)
    a, b = ops(m, 4), ops(replace(ref, checkpoint_quant=m.checkpoint_quant), 4)
    assert a.names == b.names
    np.testing.assert_array_equal(a.cb, b.cb)
    np.testing.assert_array_equal(a.cf, b.cf)
    np.testing.assert_array_equal(a.kernels, b.kernels)


@settings(max_examples=30, deadline=None)
@given(B=st.integers(1, 256), q=st.integers(1, 16), L=st.integers(0, 65_536), tp=st.sampled_from([1, 2, 4, 8]))
def test_state_is_read_once_and_kept_after_every_token(B, q, L, tp):
    """Decode / verify: the state and conv window read once per sequence and written after each of its q tokens
    (SGLang's intermediate_ssm_state_cache); a prefill writes its last only. The rest of the traffic is per token."""
    m = model(MID)
    state, window = linear_state_bytes_rank(m, tp, DTYPE_BYTES["bf16"])
    keep = m.n_linear_layers * (state + window)
    step = ops(m, tp)
    per_tok = bytes_of(step, ("lin_conv", "lin_recurrent"), B, 1, L) - 2 * B * keep
    assert bytes_of(step, ("lin_conv", "lin_recurrent"), B, q, L) == pytest.approx(B * keep * (1 + q) + q * per_tok,
                                                                                 rel=1e-12)
    pre = ops(m, tp, logits="last")
    assert bytes_of(pre, ("lin_conv", "lin_recurrent"), B, q, L) == pytest.approx(2 * B * keep + q * per_tok,
                                                                                rel=1e-12)
    # the layers have no context term: a linear layer costs the same at any L
    assert bytes_of(step, ("lin_conv", "lin_recurrent"), B, q, 0) == bytes_of(step, ("lin_conv", "lin_recurrent"),
                                                                               B, q, L)


def test_state_size_from_the_layer_shapes():
    from simulator.engine import load_engine

    m = model(MID)
    state, window = linear_state_bytes_rank(m, 4, 2.0)
    # 32 value heads / 4 ranks x 128 x 128 in fp32 (SGLang's default); conv window 3 x (2 x 16 x 128 + 32 x 128) / 4
    # in bf16; vLLM keeps the state in the model's bf16
    assert FP32_STATE_BYTES == 4 and load_engine("sglang").linear_state_bytes == 4
    assert load_engine("vllm").linear_state_bytes == 2
    assert state == 8 * 128 * 128 * 4 and window == 3 * 8192 / 4 * 2
    assert linear_state_bytes_rank(m, 4, 2.0, 2)[0] == state / 2


@settings(max_examples=25, deadline=None)
@given(B=st.integers(1, 128), q=st.integers(1, 8), L=st.integers(0, 32_768))
def test_verify_costs_more_state_traffic_with_depth(B, q, L):
    o = ops(model(MID), 4)
    assert bytes_of(o, ("lin_recurrent",), B, q + 1, L) > bytes_of(o, ("lin_recurrent",), B, q, L)


def test_memory_holds_twelve_layers_of_kv_and_a_state_per_sequence():
    m = model(MID)
    p, par = Precision(weights="fp8"), Parallelism(tp=4)
    B, q, L = np.array([8.0]), np.array([1.0]), np.array([4000.0])
    state, window = linear_state_bytes_rank(m, 4, DTYPE_BYTES["bf16"])
    kv_tok_layer = 2 * 1 * 256 * 2                   # 2 KV heads over 4 ranks: one replicated head per rank, bf16
    want = 8 * (12 * 4001 * kv_tok_layer + 36 * (state + window))
    assert float(kv_bytes_per_rank(m, B, q, L, p, par)[0]) == pytest.approx(want, rel=1e-12)
    more = float(kv_bytes_per_rank(m, B, np.array([4.0]), L, p, par, state_copies=5.0)[0])
    assert more == pytest.approx(8 * (12 * 4004 * kv_tok_layer + 5 * 36 * (state + window)), rel=1e-12)


def test_refusals():
    c = cfg()
    with pytest.raises(ModelConfigError, match=r"layer_types\[0\] = 'sliding_attention'; expected one of "
                                               r"full_attention, linear_attention"):
        shape_from_config({**c, "layer_types": ["sliding_attention"] * 48}, source="cfg.json")
    with pytest.raises(ModelConfigError, match=r"^cfg\.json: missing key 'linear_num_value_heads'$"):
        shape_from_config({k: v for k, v in c.items() if k != "linear_num_value_heads"}, source="cfg.json")
    m = replace(model(MID), lin_k_heads=12)
    with pytest.raises(ScenarioError, match="tp = 8 does not divide the 12 key and 32 value heads"):
        Parallelism(tp=8).check(m)


def test_layer_types_count_the_linear_layers():
    c = cfg()
    types = ["linear_attention", "full_attention"] * 24
    assert shape_from_config({**c, "layer_types": types}).n_linear_layers == 24


def test_cli_prices_a_verify_above_a_decode(capsys):
    rc, out, err = run(capsys, "step", "--hardware", "h200-sxm", "--model", MID, "--tp", "4", "--precision", "fp8",
                       "--batch", "8", "--query-tokens", "4", "--format", "json")
    assert rc == 0, err
    verify = json.loads(out)["points"][0]
    rc, out, _ = run(capsys, "step", "--hardware", "h200-sxm", "--model", MID, "--tp", "4", "--precision", "fp8",
                     "--batch", "8", "--format", "json")
    decode = json.loads(out)["points"][0]
    assert verify["step_s"] > decode["step_s"] > 0
    assert verify["breakdown_s"]["attention"] > decode["breakdown_s"]["attention"]


def test_sglang_commits_the_accepted_state_and_vllm_does_not():
    """SGLang copies the accepted token's state into the live slot after a verify (one more state and conv window
    read and written per sequence and linear layer, one kernel); vLLM starts the next step from the accepted slot."""
    from simulator.engine import load_engine
    from simulator.hardware import load_hardware
    from simulator.target_ops import verify_key, verify_ops

    m, hw = model(MID), load_hardware("h200-sxm")
    p, par = Precision(weights="fp8"), Parallelism(tp=4)
    sgl, vllm = load_engine("sglang"), load_engine("vllm")
    assert verify_key(sgl, hw, m) == (0.0, True) and verify_key(vllm, hw, m) == (0.0, False)
    assert verify_ops(vllm, hw, m, p, par) is None                       # its verify is a decode pass of q tokens
    assert verify_ops(sgl, hw, model("qwen3-30b-a3b"), p, par) is None   # no linear layer, nothing to commit
    v = verify_ops(sgl, hw, m, p, par)
    i = v.names.index("lin_state_commit")
    state, window = linear_state_bytes_rank(m, 4, DTYPE_BYTES["bf16"])
    for B in (1, 8, 64):
        assert bytes_of(v, ("lin_state_commit",), B, 4, 1000) == pytest.approx(2 * B * 36 * (state + window), rel=1e-12)
    assert v.kernels[i] * v.repeat[i] == pytest.approx(1.0)
    # everything else is the decode table's
    d = forward_pass(m, p, par)
    assert tuple(n for n in v.names if n != "lin_state_commit") == d.names


def test_a_sglang_speculative_step_costs_the_commit(capsys):
    """End to end: the same speculative step priced with SGLang's commit and without it (a profile that leaves it
    off) differs by the commit's bytes and kernel, nothing else."""
    from simulator.engine import load_engine
    from simulator.speedup import speedup_curve

    base = dict(hardware="h200-sxm", model=MID, tp=4, precision="fp8", method="eagle3", k=3, batch=(8, 64))
    on = speedup_curve(**base)
    off = speedup_curve(**base, engine=replace(load_engine("sglang"), linear_state_commit=False))
    assert np.all(on.verify_s > off.verify_s) and np.all(on.base_step_s == off.base_step_s)
    assert np.all(on.draft_s == off.draft_s) and np.all(on.speedup < off.speedup)


@pytest.mark.parametrize("engine, per_elem, copies", [("sglang", 4, 5.0), ("vllm", 2, 4.0)])
def test_a_speculating_sequence_keeps_a_state_per_draft_token(engine, per_elem, copies):
    """Memory under speculation (pricing.memory with the drafter): SGLang keeps the live state and one per draft token
    (1 + q, fp32), vLLM its num_spec + 1 = q slots (bf16); a plain decode and a prefill keep one."""
    from simulator.pricing import memory
    from simulator.scenario import Scenario

    dep = Scenario(hardware="h200-sxm", model=MID, tp=4, precision="fp8", engine=engine, method="eagle3",
                   k=3).resolve()
    m, B, L = dep.target, np.array([16.0]), 2000.0
    state, window = linear_state_bytes_rank(m, 4, DTYPE_BYTES["bf16"], per_elem)
    one = 16 * 36 * (state + window)
    assert spec_state_copies(4.0, dep.eng.linear_state_commit) == copies
    kv_of = lambda q, **kw: float(memory(dep, B, q, L, **kw).kv_bytes[0])  # noqa: E731
    kv_tok = 16 * 12 * 1024                                        # 12 full-attention layers, one KV head per rank
    assert kv_of(4.0, drafter=True) == pytest.approx(kv_tok * (L + 4) + copies * one, rel=1e-12)
    assert kv_of(1.0) == pytest.approx(kv_tok * (L + 1) + one, rel=1e-12)
    assert kv_of(512.0, logits="last", drafter=True) == pytest.approx(kv_tok * (L + 512) + one, rel=1e-12)


def test_the_mtp_drafter_is_one_gated_attention_moe_layer():
    from simulator.drafters import make_drafter

    m = model(MID)
    d = make_drafter("mtp", m, None, Precision(weights="fp8"), Parallelism(tp=4))
    s = d.shape
    assert (s.n_layers, s.n_linear_layers, s.n_moe_layers, s.n_experts, s.attn_output_gate) == (1, 0, 1, 512, True)
    assert s.shared_expert_gate and s.fc_in_factor == 2 and s.shares_lm_head
    rc = __import__("simulator").speedup_curve(hardware="h200-sxm", model=MID, tp=4, precision="fp8", method="mtp",
                                               batch=(1, 32))
    assert np.all(rc.feasible) and np.all(rc.speedup > 1)


def test_reader_defaults_and_the_interval_path():
    c = cfg()
    m = model(MID)
    assert m.n_mtp_layers == 1 and m.attn_output_gate and m.shared_expert_gate      # keys the config does not carry
    assert "layer_types" not in c and c["full_attention_interval"] == 4 and m.n_linear_layers == 36
    assert shape_from_config({**c, "full_attention_interval": 2}).n_linear_layers == 24
    assert shape_from_config({**c, "full_attention_interval": 1}).n_linear_layers == 0
    no_gate = shape_from_config({**c, "attn_output_gate": False, "num_nextn_predict_layers": 0})
    assert not no_gate.attn_output_gate and no_gate.n_mtp_layers == 0
    dflt = {k: v for k, v in c.items() if k != "shared_expert_intermediate_size"}
    assert shape_from_config(dflt).d_ff_shared == 512                                # transformers' default


def test_gated_attention_and_the_shared_gate_in_the_op_table():
    """q_proj emits the query and its gate (2 x 16 x 256 + 2 x 2 x 256 columns at tp 1), one more kernel on o_proj;
    the shared expert's gate is a d x 1 GEMV and a sigmoid-multiply, bf16 whatever the weights."""
    m = model(MID)
    o = ops(m)
    i, j, g = o.names.index("qkv_proj"), o.names.index("o_proj"), o.names.index("shared_gate")
    assert o.cb[i, 0] == 2048 * (2 * 16 + 2 * 2) * 256 * 1.0            # fp8 weights: a byte each
    assert o.kernels[j] == 2 and o.repeat[i] == 12
    assert o.cb[g, 0] == 2048 * 2 and o.kernels[g] == 2 and o.quant[g] == 0 and o.repeat[g] == 48
    plain = ops(replace(m, attn_output_gate=False, shared_expert_gate=False))
    assert o.kernels @ o.repeat - plain.kernels @ plain.repeat == 12 + 2 * 48


def test_drafters_built_from_the_target_drop_its_linear_layers():
    from simulator.drafters import make_drafter

    m = model(MID)
    d = make_drafter("dflash", m, None, Precision(weights="fp8"), Parallelism(tp=4)).shape
    assert d.n_linear_layers == 0 and not d.attn_output_gate and not d.shared_expert_gate and not d.is_moe
    with pytest.raises(ScenarioError, match="self-sparse drafts with a KV window over the target's own layers, but "
                                            "qwen3-next-80b-a3b's 36 linear-attention layers keep no KV cache"):
        make_drafter("self-sparse", m, None, Precision(weights="fp8"), Parallelism(tp=4))


def test_inconsistent_shapes_are_refused():
    c = cfg()
    with pytest.raises(ModelConfigError, match=r"^cfg\.json: linear_num_value_heads = 24 is not a multiple of "
                                               r"linear_num_key_heads = 16$"):
        shape_from_config({**c, "linear_num_value_heads": 24}, source="cfg.json")
    with pytest.raises(ModelConfigError, match="linear_num_key_heads"):
        shape_from_config({**c, "linear_num_key_heads": 10**9}, source="cfg.json")
    with pytest.raises(ValueError, match="n_linear_layers = 36; expected 0..n_layers = 1"):
        replace(model(MID), n_layers=1, n_moe_layers=1)
