"""Composite hypothesis strategies shared by the tests (xarray testing/strategies.py pattern)."""

from __future__ import annotations

from hypothesis import strategies as st

from simulator.model import ModelShape

BATCH = st.integers(min_value=1, max_value=512)
QUERY = st.integers(min_value=1, max_value=64)
CONTEXT = st.integers(min_value=0, max_value=131072)


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
