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
    """The HF safetensors metadata: BF16 102,889,697,280 (the F32 7,936 are the router's expert_bias, not counted).
    The head counts and expert width were chosen to meet this count (index.toml provenance), so the total pins the
    construction; the card's active counts, which nothing was chosen to meet, are the independent check."""
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


def test_shared_width_is_per_expert():
    """SGLang BailingMoESparseMoeBlock: moe_shared_expert_intermediate_size x num_shared_experts, so two shared experts
    of 2048 are one 4096-wide MLP; without the key each is moe_intermediate_size wide."""
    two = shape_from_config({**LING_LITE, "moe_shared_expert_intermediate_size": 2048})
    assert (two.n_shared_experts, two.d_ff_shared) == (2, 2048)
    assert two.n_params - shape_from_config(LING_LITE).n_params == 28 * 2 * 3 * 2048 * (2048 - 1408)
    none = shape_from_config({**LING_LITE, "num_shared_experts": 0, "moe_shared_expert_intermediate_size": 0})
    assert none.n_shared_experts == 0


def test_biases_change_the_count():
    """q/k/v bias: (16 + 2 x 4) x 128 per layer; use_bias adds the o_proj bias (2048) too."""
    base = shape_from_config(LING_LITE).n_params
    assert shape_from_config({**LING_LITE, "use_qkv_bias": True}).n_params - base == 28 * 24 * 128
    assert shape_from_config({**LING_LITE, "use_bias": True}).n_params - base == 28 * (24 * 128 + 2048)


def test_group_routing_reads_sglangs_zeros():
    """n_group / topk_group 0 (SGLang's default) is routing over all experts; both set is DeepSeek's grouped top-k."""
    m = shape_from_config({**LING_LITE, "n_group": 0, "topk_group": 0})
    assert (m.n_group, m.topk_group) == (1, 1)
    m = shape_from_config({**LING_LITE, "n_group": 8, "topk_group": 4})
    assert (m.n_group, m.topk_group) == (8, 4)


@pytest.mark.parametrize("extra, msg", [
    ({"first_k_dense_replace": 28}, r"first_k_dense_replace = 28 leaves no MoE layer of num_hidden_layers = 28; "
                                    r"expected first_k_dense_replace < it$"),
    ({"n_group": 5, "topk_group": 1}, r"n_group = 5 does not divide num_experts = 64$"),
    ({"n_group": 8, "topk_group": 9}, r"topk_group = 9 of n_group = 8 groups of 8 experts cannot hold"),
    ({"n_group": 8}, r"n_group = 8 with topk_group = None; expected both 0 \(no grouping\) or both set"),
    ({"topk_group": 2, "n_group": 0}, r"n_group = 0 with topk_group = 2; expected both 0"),
    ({"num_experts_per_tok": 65}, r"num_experts_per_tok = 65 must be in \[1, 64\]$"),
    ({"num_shared_experts": 1 << 17}, r"num_shared_experts = 131072; expected 0\.\.65536"),
    ({"moe_shared_expert_intermediate_size": 1 << 23}, r"moe_shared_expert_intermediate_size = 8388608; expected"),
    ({"moe_shared_expert_intermediate_size": 0}, r"moe_shared_expert_intermediate_size = 0, expected an integer >= 1$"),
    ({"num_nextn_predict_layers": 2}, r"num_nextn_predict_layers = 2; bailing_moe loads 0 or 1$"),
    ({"hidden_act": "gelu"}, r"hidden_act = 'gelu'; bailing_moe runs silu only"),
    ({"use_qk_norm": 1}, r"use_qk_norm = 1, expected true or false$"),
    ({"use_qkv_bias": "no"}, r"use_qkv_bias = 'no', expected true or false$"),
    ({"num_shared_experts": -1}, r"num_shared_experts = -1, expected an integer >= 0$"),
    ({"n_group": False, "topk_group": 0}, r"n_group = False, expected an integer >= 0$"),
])
def test_refusals(extra, msg):
    with pytest.raises(ModelConfigError, match=r"^c\.json: " + msg):
        shape_from_config({**LING_LITE, **extra}, source="c.json")


def test_missing_experts_is_named():
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
