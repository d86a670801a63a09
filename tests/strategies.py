"""Composite hypothesis strategies shared by the tests (xarray testing/strategies.py pattern)."""

from __future__ import annotations

import functools

from hypothesis import strategies as st

from simulator.hardware import list_hardware, load_hardware
from simulator.model import ModelShape, load_model
from simulator.registry import list_models, model_record
from simulator.sampling import SAMPLING

BATCH = st.integers(min_value=1, max_value=512)
QUERY = st.integers(min_value=1, max_value=64)
CONTEXT = st.integers(min_value=0, max_value=131072)


def engine_for(method: str | None, default: str = "sglang") -> str:
    """An engine whose profile runs `method` ([spec] methods): SGLang has no Medusa or suffix decoding, vLLM drafts
    Medusa only as a chain (the hf profile, Spec-Bench's research implementations, runs its tree), and only the
    idealised profile prices sparse-KV self-speculation, which no engine ships."""
    return {"medusa": "hf", "suffix": "vllm", "self-sparse": "ideal"}.get(method, default)


@st.composite
def model_shapes(draw, moe: bool | None = None) -> ModelShape:
    """GQA-consistent dense or MoE shapes (n_heads % n_kv_heads == 0)."""
    n_kv = draw(st.sampled_from([1, 2, 4, 8]))
    n_heads = n_kv * draw(st.sampled_from([1, 2, 4, 8]))
    d_head = draw(st.sampled_from([64, 128]))
    d = n_heads * d_head
    is_moe = draw(st.booleans()) if moe is None else moe
    layers = draw(st.integers(1, 16))
    kw = {}
    if is_moe:
        e = draw(st.sampled_from([8, 16, 64, 128]))
        kw = dict(n_experts=e, top_k=draw(st.integers(1, min(8, e))), d_ff_expert=draw(st.sampled_from([256, 1024])),
                  n_moe_layers=draw(st.integers(1, layers)))
    win = draw(st.integers(0, layers))
    return ModelShape(name="hyp", model_type="llama", n_layers=layers, d_model=d, n_heads=n_heads, n_kv_heads=n_kv,
                      d_head=d_head, d_ff=draw(st.sampled_from([1024, 4096])), gated_mlp=draw(st.booleans()),
                      vocab_size=draw(st.sampled_from([32000, 128256])), tied_embeddings=draw(st.booleans()),
                      n_window_layers=win, window=draw(st.sampled_from([128, 4096])) if win else 0, **kw)


@st.composite
def alphas(draw) -> float:
    return draw(st.floats(min_value=0.0, max_value=0.99, allow_nan=False))


@st.composite
def workloads(draw, concurrency: bool = True):
    """A serving workload: prompt and output lengths (one pair or a few samples), concurrencies, chunk, prefix-cache
    hit."""
    from simulator.serving import Workload
    conc = tuple(sorted(set(draw(st.lists(st.integers(1, 256), min_size=1, max_size=4))))) if concurrency else (1,)
    common = dict(concurrency=conc, chunk=draw(st.sampled_from([512, 2048, 8192])),
                  prefix_hit=draw(st.sampled_from([0.0, 0.5])))
    if draw(st.booleans()):                                   # a length distribution (a few request classes)
        pair = st.tuples(st.integers(1, 8192), st.integers(1, 2048))
        return Workload(lengths=tuple(draw(st.lists(pair, min_size=1, max_size=4))), **common)
    return Workload(isl=draw(st.integers(1, 8192)), osl=draw(st.integers(1, 2048)), **common)


SERVE_SCENARIOS = st.sampled_from([
    dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="vllm"),
    dict(hardware="h100-sxm", model="llama-3.1-8b", method="eagle3", engine="sglang"),
    dict(hardware="b200", model="qwen3-30b-a3b", method="eagle3", engine="sglang"),
    dict(hardware="h200-sxm", model="deepseek-r1", method="mtp", engine="trtllm", tp=8, precision="fp8"),
])


HARDWARE = tuple(list_hardware())
TARGETS = tuple(m for m in list_models() if model_record(m).kind == "target")   # heads are not servable models


@functools.cache
def _hw(name: str):
    return load_hardware(name)


@functools.cache
def _model(mid: str):
    return load_model(mid)


def tp_choices(mid: str) -> list[int]:
    m = _model(mid)
    return [t for t in (1, 2, 4, 8) if not m.n_layers or m.n_heads % t == 0]


hardware_names = st.sampled_from(HARDWARE)


@st.composite
def scenarios(draw, models=TARGETS, hardware=HARDWARE):
    """(hardware, model id, tp, ep, weight precision) that the simulator accepts."""
    mid = draw(st.sampled_from(models))
    m = _model(mid)
    tp = draw(st.sampled_from(tp_choices(mid)))
    ep = 1
    if m.is_moe and tp > 1 and m.n_experts % tp == 0:
        ep = draw(st.sampled_from([1, tp]))
    h = draw(st.sampled_from(hardware))
    weights = draw(st.sampled_from([p for p in ("bf16", "fp8", "fp4") if _hw(h).supports(p)]))
    return h, mid, tp, ep, weights


# An engine's memory share (vLLM --gpu-memory-utilization, SGLang --mem-fraction-static, TensorRT-LLM's
# free_gpu_memory_fraction): Scenario.memory_fraction takes (0, 1]
MEMORY_SHARE = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)

# A sequence's routing locality rho (experts.routed_tokens, Scenario.routing_locality): [0, 1], 1 the uniform model
ROUTING_LOCALITY = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def json_values():
    """Any value a JSON file holds (a hand-edited field of a sweep manifest): scalars, lists and objects of them."""
    scalars = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8) \
        | st.floats(allow_nan=False, allow_infinity=False)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                              max_size=3), max_leaves=8)

# How requests draw their tokens (Scenario.sampling): greedy, or a top-p / top-k filter per sampled row
SAMPLINGS = st.sampled_from(SAMPLING)

# A build's month, "YYYY-MM" (engine profiles' dated windows: sampling.TopPFilter.dated, overlap_with_spec_from)
MONTHS = st.builds(lambda y, m: f"{y}-{m:02d}", st.integers(2024, 2027), st.integers(1, 12))
