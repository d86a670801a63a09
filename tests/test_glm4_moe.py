"""GLM-4.5 / 4.5-Air / 4.7 (model_type glm4_moe): the reader's shapes against the published layouts, the refusals,
the CLI on 8x H200, and the MTP drafter priced as a GLM layer (GQA + MoE), not as DeepSeek's MLA layer."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from simulator.drafters import make_drafter
from simulator.engine import load_engine
from simulator.errors import ModelConfigError
from simulator.fusion import FusionRule
from simulator.model import shape_from_config
from simulator.workload import Parallelism, Precision

from .helpers import model, run

MODELS = Path(__file__).resolve().parents[1] / "models"
GLM45 = MODELS / "zai-org__GLM-4.5.json"


# GLM-4.5 tech report (arXiv 2508.06471) Table 1 and the slime launch scripts cited in models/index.toml:
# (layers, dense layers, hidden, heads, kv heads, head dim, routed experts, top-k, shared, expert width, qk-norm)
LAYOUT = {
    "glm-4.5": (92, 3, 5120, 96, 8, 128, 160, 8, 1, 1536, True),
    "glm-4.5-air": (46, 1, 4096, 96, 8, 128, 128, 8, 1, 1408, False),
    "glm-4.7": (92, 3, 5120, 96, 8, 128, 160, 8, 1, 1536, True),
}


@pytest.mark.parametrize("mid", sorted(LAYOUT))
def test_glm_shapes(mid):
    m = model(mid)
    got = (m.n_layers, m.n_dense_layers, m.d_model, m.n_heads, m.n_kv_heads, m.d_head, m.n_experts, m.top_k,
           m.n_shared_experts, m.d_ff_expert, m.qk_norm)
    assert got == LAYOUT[mid]
    assert m.model_type == "glm4_moe" and not m.is_mla and m.is_moe
    assert m.d_ff_shared == m.d_ff_expert and m.n_mtp_layers == 1 and (m.n_group, m.topk_group) == (1, 1)
    assert m.qkv_bias and not m.o_bias and not m.tied_embeddings           # Glm4MoeAttention: o_proj bias=False
    assert m.kv_elems_per_token_layer == 2 * 8 * 128                       # GQA cache, not MLA's latent


def test_glm45_counts_against_the_readme():
    # README: 355B total, 32B active; GLM-4.5-Air 106B / 12B. The active figures are counted without the input
    # embedding and the LM head (both models land within a half unit only so); totals without the MTP layer.
    for mid, total, active in (("glm-4.5", 355e9, 32e9), ("glm-4.5-air", 106e9, 12e9)):
        c = model(mid).param_counts()
        assert abs(c["total"] - total) <= 0.01 * total
        assert abs(c["active"] - c["embedding"] - c["lm_head"] - active) <= 0.5e9
        assert c["mtp"] > 2e9          # one GLM MoE layer + eh_proj, counted apart as for DeepSeek


def test_a_glm_config_missing_a_required_key_is_refused():
    cfg = json.loads(GLM45.read_text())
    for key in ("n_routed_experts", "moe_intermediate_size", "num_experts_per_tok"):
        bad = {k: v for k, v in cfg.items() if k != key}
        with pytest.raises(ModelConfigError, match=rf"^cfg\.json: missing key '{key}'$"):
            shape_from_config(bad, source="cfg.json")
    # no head_dim: 5120 / 96 heads is not a whole head size
    with pytest.raises(ModelConfigError, match=r"^cfg\.json: hidden_size = 5120 is not a multiple of "):
        shape_from_config({k: v for k, v in cfg.items() if k != "head_dim"}, source="cfg.json")
    with pytest.raises(ModelConfigError, match=r"^cfg\.json: use_qk_norm = 'yes', expected true or false$"):
        shape_from_config({**cfg, "use_qk_norm": "yes"}, source="cfg.json")
    with pytest.raises(ModelConfigError, match=r"first_k_dense_replace = 92 .* leaves no MoE layer"):
        shape_from_config({**cfg, "first_k_dense_replace": 92}, source="cfg.json")


def test_mtp_drafter_is_a_glm_layer_not_mla():
    """The GLM MTP module (SGLang glm4_moe_nextn.py: eh_proj + one Glm4MoeDecoderLayer) is priced with GQA
    projections and a GQA KV cache; priced as DeepSeek's MLA layer it would carry kv_a / kv_b ops instead."""
    tgt = model("glm-4.5")
    d = make_drafter("mtp", tgt, precision=Precision(weights="fp8"), par=Parallelism(tp=8))
    s = d.shape
    assert s.n_layers == 1 and s.n_moe_layers == 1 and not s.is_mla and s.fc_in_factor == 2
    assert s.attention_params() == tgt.attention_params() and s.qk_norm
    names = d.ops_all.names
    assert "qkv_proj" in names and "experts" in names and "shared_up" in names
    assert not any(n.startswith(("kv_a", "kv_b", "q_a")) for n in names)


def test_glm_shared_expert_and_mla_fusions_stay_off():
    """No DeepSeek (MLA) fusion is counted on a GLM target, and its shared expert is priced with its own kernels under
    SGLang and TensorRT-LLM. A choice, not the engines' default (models/README.md): SGLang fuses the shared expert
    into the routed MoE by default on CUDA SM >= 80 without EP (Glm4MoeForCausalLM.determine_num_fused_shared_experts)
    and TensorRT-LLM runs it on an aux stream, but Z.ai's own FP8 launch command turns SGLang's fusion off
    (--disable-shared-experts-fusion); priced unfused, an upper bound on the step by about three kernels and two
    quantisations a MoE layer."""
    for eng in ("sglang", "trtllm"):
        fu = FusionRule.of_engine(load_engine(eng), "nvidia", "hopper").of(model("glm-4.5"), tp=8)
        assert not (fu.shared_expert or fu.mla_a_quant or fu.mla_bf16_bmm or fu.ar_norm or fu.norm_allreduce)


def _numbers(line: str) -> list[float]:
    return [float(x) for x in line.split() if x.replace(".", "", 1).isdigit()]


def test_step_and_mtp_curve_on_h200(capsys):
    rc, out, err = run(capsys, "step", "--hardware", "h200-sxm", "--model", "glm-4.5", "--tp", "8",
                       "--precision", "fp8", "--batch", "1,16,64")
    assert rc == 0, err
    rows = [ln for ln in out.splitlines() if ln.split() and ln.split()[0] in ("1", "16", "64")]
    steps = [_numbers(r)[1] for r in rows]
    assert len(steps) == 3 and all(math.isfinite(s) and s > 0 for s in steps) and steps == sorted(steps)
    rc, out, err = run(capsys, "curve", "--hardware", "h200-sxm", "--model", "glm-4.5", "--tp", "8",
                       "--precision", "fp8", "--method", "mtp", "--k", "3", "--acceptance-length", "2.8",
                       "--batch", "1,8,32,64")
    assert rc == 0, err
    rows = [ln for ln in out.splitlines() if ln.split() and ln.split()[0] in ("1", "8", "32", "64")]
    speedups = [_numbers(r)[3] for r in rows]
    assert len(speedups) == 4 and all(math.isfinite(s) and 1.0 < s < 2.8 for s in speedups)
