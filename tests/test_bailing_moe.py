"""Ling / Ring (model_type bailing_moe, BailingMoe and BailingMoeV2): the reader against two checkpoints' own counts,
its switches (biases, q/k norm, shared experts, dense first layers), its refusals, and the CLI on 8x H200."""

from __future__ import annotations

import json

import pytest

from simulator.errors import ModelConfigError
from simulator.model import shape_from_config

from .helpers import model, run

MID = "ling-flash-2.0"

# inclusionAI/Ling-lite-1.5's config.json as quoted verbatim in public code (the parse test of a Rust port,
# "field for field"); keys the reader ignores dropped. Its blog: 16.8B total, 2.75B activated.
LING_LITE = {"architectures": ["BailingMoeForCausalLM"], "model_type": "bailing_moe", "first_k_dense_replace": 0,
             "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 1408, "max_position_embeddings": 32768,
             "moe_intermediate_size": 1408, "num_experts": 64, "num_shared_experts": 2, "norm_topk_prob": True,
             "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 28, "num_key_value_heads": 4,
             "tie_word_embeddings": False, "use_bias": False, "use_qkv_bias": False, "vocab_size": 126464}


def test_ling_flash_layout():
    m = model(MID)
    got = (m.n_layers, m.n_dense_layers, m.d_model, m.n_heads, m.n_kv_heads, m.d_head, m.d_ff, m.n_experts, m.top_k,
           m.n_shared_experts, m.d_ff_shared, m.d_ff_expert, m.qk_norm, m.qkv_bias, m.n_mtp_layers)
    assert got == (32, 1, 4096, 32, 4, 128, 9216, 256, 8, 1, 1024, 1024, True, False, 0)
    assert m.model_type == "bailing_moe" and m.is_moe and not m.is_mla


def test_ling_flash_count_is_the_checkpoints():
    """The HF safetensors metadata: BF16 102,889,697,280 (the F32 7,936 are the router's expert_bias, not counted)."""
    c = model(MID).param_counts()
    assert c["total"] == 102_889_697_280
    assert c["active"] == pytest.approx(6.1e9, rel=0.01)                                    # card: 6.1B activated
    assert c["active"] - c["embedding"] - c["lm_head"] == pytest.approx(4.8e9, rel=0.015)   # 4.8B non-embedding


def test_ling_lite_count_is_the_blogs():
    """Two shared experts of moe_intermediate_size (no moe_shared_expert_intermediate_size), no dense layer."""
    m = shape_from_config(LING_LITE)
    assert (m.n_shared_experts, m.d_ff_shared, m.n_dense_layers, m.qk_norm) == (2, 1408, 0, False)
    assert round(m.n_params / 1e9, 1) == 16.8 and round(m.param_counts()["active"] / 1e9, 2) == 2.75


def test_biases_and_norms_follow_the_keys():
    """SGLang bailing_moe.py: query_key_value biased by use_bias or use_qkv_bias, dense (o_proj) by use_bias."""
    assert shape_from_config({**LING_LITE, "use_qkv_bias": True}).qkv_bias
    assert not shape_from_config({**LING_LITE, "use_qkv_bias": True}).o_bias
    m = shape_from_config({**LING_LITE, "use_bias": True})
    assert m.qkv_bias and m.o_bias
    assert shape_from_config({**LING_LITE, "use_qk_norm": True}).qk_norm
    assert shape_from_config({**LING_LITE, "model_type": "bailing_moe_v2"}).n_params == shape_from_config(
        LING_LITE).n_params


def test_refusals():
    with pytest.raises(ModelConfigError, match=r"^c\.json: first_k_dense_replace = 28 leaves no MoE layer of "
                                               r"num_hidden_layers = 28; expected first_k_dense_replace < it$"):
        shape_from_config({**LING_LITE, "first_k_dense_replace": 28}, source="c.json")
    with pytest.raises(ModelConfigError, match=r"^c\.json: n_group = 5 does not divide n_routed_experts = 64$"):
        shape_from_config({**LING_LITE, "n_group": 5}, source="c.json")
    with pytest.raises(ModelConfigError, match=r"^c\.json: num_experts_per_tok = 65 must be in \[1, 64\]$"):
        shape_from_config({**LING_LITE, "num_experts_per_tok": 65}, source="c.json")
    with pytest.raises(ModelConfigError, match=r"^c\.json: missing key 'num_experts'$"):
        shape_from_config({k: v for k, v in LING_LITE.items() if k != "num_experts"}, source="c.json")


def test_cli_prices_the_eagle3_verify_on_eight_h200(capsys):
    """The SpecBundle layout (SGLang, TP8, bf16): a verify of 4 tokens costs more than a decode, both finite."""
    args = ("step", "--hardware", "h200-sxm", "--model", MID, "--tp", "8", "--engine", "sglang", "--batch", "8",
            "--format", "json")
    rc, out, err = run(capsys, *args)
    assert rc == 0, err
    decode = json.loads(out)["points"][0]
    rc, out, err = run(capsys, *args, "--query-tokens", "4")
    assert rc == 0, err
    verify = json.loads(out)["points"][0]
    assert verify["step_s"] > decode["step_s"] > 0
