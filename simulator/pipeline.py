"""Pipeline stages: how the engines split a model's layers over pp stages, and what a full pipeline's cycle counts.

vLLM (distributed/utils.py get_pp_indices), SGLang (its copy, distributed/utils.py) and TensorRT-LLM (mapping.py
pp_layers, torch.tensor_split) give every stage floor(L / pp) layers and r = L mod pp of them one more, never the
last stage, which also holds the final norm, the LM head and the sampler (vLLM puts the extra layers on the stages
before the last, "partitions[-i] += 1" from i = 2; tensor_split on the first r). A token crossing the pipeline (fewer
micro-batches than stages) pays every layer once and the head once; a full pipeline's cycle is pp times its slowest
stage (GPipe, Huang et al. 2019), which is the last (floor layers + head) when the head weighs at least one layer, and
one of the r stages of floor + 1 layers otherwise. Which of the two is slower is decided on the weights each reads,
as a decode step is bound by them; the op builder records, per op, its repeats in the cycle over those on the path
(OpSet.micro, read by experts.head_runs and roofline.step_times). Decided once per op table, on every expert's
weights for an MoE layer: where a micro-batch's few tokens touch few experts the head outweighs a layer after all, and
such a pipeline is priced fast (Qwen3-30B-A3B on 5 stages: 9 % at 5 sequences, 6 % at 10, exact from about 40;
found by review, not mended: a per-point choice would break the step's affinity in the kernel floor).
"""

from __future__ import annotations

from typing import Any

import numpy as np

# The ops the end stages run once per micro-batch (workload.forward_pass names); every other op is a layer op
HEAD_OPS = ("embedding", "embed_allreduce", "fc", "lm_head", "logits_gather", "sampler", "medusa_resblock",
            "medusa_lm_head")


def stage_layers(n_layers: int, pp: int) -> tuple[int, int]:
    """(layers of the last stage, layers of the most-loaded other stage): floor(L / pp) and ceil(L / pp)."""
    f, r = divmod(n_layers, pp)
    return f, f + (r > 0)


def cycle_runs(n_layers: int, pp: int, head: np.ndarray, layer_bytes: float, head_bytes: float) -> np.ndarray:
    """Per op, its repeats in a full pipeline's cycle over its repeats on one micro-batch's path: pp x (the slowest
    stage's share of the op). `head`: the ops the end stages run once per micro-batch (embedding, LM head, sampler);
    every other op is a layer op, L per path. `layer_bytes`: the weights one layer reads (a mean over the layers);
    `head_bytes`: the end stages' (the LM head). With an even split the last stage is the slowest (head ops pp,
    layer ops 1: the rule before uneven stages were priced)."""
    f, c = stage_layers(n_layers, pp)
    last = c == f or head_bytes >= (c - f) * layer_bytes
    n = f if last else c
    return np.where(head, float(pp) if last else 0.0, pp * n / n_layers)


def pipeline_ops(g: Any, m: Any, par: Any, domain: int, ab: float) -> None:
    """Pipeline parallelism (Parallelism.pp) on the op builder `g` (workload's): every op sees one micro-batch
    (OpSet.pp); a step is one micro-batch's path or, with the pipeline full, pp times the slowest stage (OpSet.micro:
    cycle_runs, on the weights read); each stage sends every micro-batch's hidden states to the next (one vector per
    token)."""
    from .workload import COLL_NONE, COLL_SEND, F_ONE, F_T, F_U, LINK_SCALEOUT, LINK_SCALEUP  # cycle: it imports us
    head = np.array([r["name"] in HEAD_OPS for r in g.rows])
    w = np.array([r["repeat"] * (r["cb"][F_ONE] + r["cb"][F_U]) * (r["coll"] == COLL_NONE) for r in g.rows])
    for row, x in zip(g.rows, cycle_runs(m.n_layers, par.pp, head, w[~head].sum() / m.n_layers, w[head].sum())):
        row["micro"] = float(x)
    g.op("pp_send", "collective", par.pp, kernels=1, c={F_T: m.d_model * ab}, coll=COLL_SEND, group=2.0,
         link=LINK_SCALEOUT if par.n_gpus > domain else LINK_SCALEUP)


__all__ = ["HEAD_OPS", "cycle_runs", "pipeline_ops", "stage_layers"]
