"""Roofline pricing (simulator/roofline.py) and the step API on top of it (simulator/step.py).

Properties: the numba kernel equals the numpy reference; step time is non-decreasing in B, q and L; it is at least
HBM bytes / bandwidth and FLOPs / peak; scaling every rate by s scales time by 1/s; tp = 1 has no collectives;
MoE verify passes cost relatively more than dense ones because more experts are touched.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from simulator.engine import list_engines, load_engine
from simulator.errors import ModelConfigError, ScenarioError, SpecError
from simulator.features import op_totals
from simulator.hardware import list_hardware, load_hardware
from simulator.memory import weight_bytes_per_rank
from simulator.registry import list_models, model_record
from simulator.roofline import BOUNDS, hierarchical_bandwidth, overlap_eta, rates, step_times, step_times_reference
from simulator.scenario import Scenario, make_precision
from simulator.step import simulate_step
from simulator.workload import COLL_ALLREDUCE, FAM, FAMILIES, Parallelism, Precision, forward_pass

from .helpers import model, ops_for
from .strategies import scenarios

REPO = Path(__file__).resolve().parents[1]
HW = list_hardware()
IDS = [m for m in list_models() if model_record(m).kind == "target"]   # heads are not servable models
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def hw(name):
    return load_hardware(name)




@pytest.fixture(autouse=True, scope="module")
def _warm_kernel():
    """Load the numba kernel once with plain (non-broadcast) arrays. The first call in a process is typed by numba's
    Python-level typeof, which reads `flags.writeable`; on a broadcast view that emits numpy's FutureWarning (an
    error under this suite's filterwarnings). That bug is pinned, in a fresh process, by
    test_first_call_with_a_single_point_emits_no_warning; warming here keeps the other tests order-independent."""
    ops = ops_for("llama-3.1-8b")
    n = np.ones(2)
    step_times(ops, rates(hw("h100-sxm"), ops), n, n, n, np.zeros(2))


overlaps = st.one_of(st.sampled_from(["measured", "max", "sum"]), st.floats(0.0, 1.0))
sizes = st.lists(st.integers(1, 4096), min_size=1, max_size=6)
qs = st.lists(st.integers(1, 128), min_size=1, max_size=4)
ctxs = st.lists(st.integers(0, 200_000), min_size=1, max_size=4)


# ---- numba kernel == numpy reference ------------------------------------------------------------------------------

@FAST
@given(sc=scenarios(), B=sizes, q=qs, L=ctxs, overlap=overlaps,
       launch=st.one_of(st.just(0.0), st.floats(0.0, 1e-4)), per_point_launch=st.booleans(),
       hbm_frac=st.one_of(st.none(), st.floats(0.3, 1.0)), gemm_frac=st.one_of(st.none(), st.floats(0.2, 1.0)),
       logits=st.sampled_from(["all", "last"]), gemm_eta=st.one_of(st.none(), st.floats(0.0, 1.0)))
def test_numba_kernel_equals_reference(sc, B, q, L, overlap, launch, per_point_launch, hbm_frac, gemm_frac, logits,
                                       gemm_eta):
    h, mid, tp, ep, weights = sc
    ops = ops_for(mid, tp, ep, weights, logits)
    r = rates(hw(h), ops, hbm_frac, gemm_frac)
    r = r if gemm_eta is None else replace(r, gemm_eta=gemm_eta)   # None: the device's measured GEMM overlap
    Bg = np.array(B, dtype=float)[:, None, None]
    qg = np.array(q, dtype=float)[None, :, None]
    Lg = np.array(L, dtype=float)[None, None, :]
    lg = launch * (np.arange(len(B)) % 2)[:, None, None] if per_point_launch else launch
    got = step_times(ops, r, Bg, qg, Lg, lg, overlap)
    ref = step_times_reference(ops, r, Bg, qg, Lg, lg, overlap)
    shape = (len(B), len(q), len(L))
    assert got.total_s.shape == ref.total_s.shape == shape
    assert got.by_family_s.shape == shape + (len(FAMILIES),) and got.by_bound_s.shape == shape + (len(BOUNDS),)
    assert np.all(np.isfinite(got.total_s)) and np.all(got.total_s > 0)
    np.testing.assert_allclose(got.total_s, ref.total_s, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.by_family_s, ref.by_family_s, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.by_bound_s, ref.by_bound_s, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got.by_family_s.sum(-1), got.total_s, rtol=1e-12)
    np.testing.assert_allclose(got.by_bound_s.sum(-1), got.total_s, rtol=1e-12)     # the bound classes split it too


@pytest.mark.parametrize("mid, tp, dp, ep, pp", [("deepseek-v3", 1, 8, 8, 1), ("deepseek-v3", 2, 4, 8, 2),
                                                ("llama-3.1-70b", 2, 1, 1, 4), ("mixtral-8x7b", 2, 2, 1, 3)])
def test_kernel_equals_reference_under_dp_and_pp(mid, tp, dp, ep, pp):
    """The busiest DP rank (ceil(B / dp) at whole B, linear between) and the pipeline's head runs, at whole and
    fractional batches (serving's mean concurrency) on both sides of the stage count."""
    ops = forward_pass(model(mid), Precision(), Parallelism(tp=tp, ep=ep, dp=dp, pp=pp))
    r = rates(hw("h100-sxm"), ops)
    B = np.array([0.0, 0.4, 1.0, 1.5, 2.0, 2.7, 3.0, 4.0, 5.5, 8.0, 12.0, 12.3, 17.0, 33.9, 64.0])[:, None]
    for launch in (1e-6, 3e-5, 1e-4):       # review: at 1 us no point was launch-bound; at 30-100 us most are
        got = step_times(ops, r, B, np.array([1.0, 3.0])[None, :], 2048.0, launch)
        ref = step_times_reference(ops, r, B, np.array([1.0, 3.0])[None, :], 2048.0, launch)
        for a, b in ((got.total_s, ref.total_s), (got.by_family_s, ref.by_family_s),
                     (got.by_bound_s, ref.by_bound_s)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
        assert np.all(np.diff(got.total_s, axis=0) >= -1e-15)      # more sequences never take less time


@pytest.mark.parametrize("mid, B, q", [("mixtral-8x7b", 0.0, 1.0), ("llama-3.1-8b", 0.0, 1.0),
                                       ("mixtral-8x7b", 2.0, 0.0)])
def test_kernel_equals_reference_at_zero_tokens(mid, B, q):
    ops = ops_for(mid)
    r = rates(hw("h100-sxm"), ops)
    got = step_times(ops, r, [B, 1.0], [q, 1.0], [10.0, 10.0])
    ref = step_times_reference(ops, r, [B, 1.0], [q, 1.0], [10.0, 10.0])
    assert np.all(np.isfinite(got.total_s))
    np.testing.assert_allclose(got.total_s, ref.total_s, rtol=1e-12)


def test_kernel_is_finite_at_zero_tokens_when_every_expert_is_routed():
    """An MoE whose top_k equals its expert count (valid: model._moe_common allows top_k <= n_experts) priced at a
    zero-token point (B = 0 or q = 0, accepted by step_times): the kernel's log(1 - k/E) = -inf times T = 0 is NaN."""
    m = replace(model("mixtral-8x7b"), name="dense-moe", top_k=8)
    ops = forward_pass(m)
    r = rates(hw("h100-sxm"), ops)
    for B, q in ((0.0, 1.0), (1.0, 0.0)):
        got = step_times(ops, r, [B, 1.0], [q, 1.0], [10.0, 10.0])
        ref = step_times_reference(ops, r, [B, 1.0], [q, 1.0], [10.0, 10.0])
        assert np.all(np.isfinite(got.total_s)), got.total_s
        np.testing.assert_allclose(got.total_s, ref.total_s, rtol=1e-12)
    # at T >= 1 both agree: every expert is read
    got = step_times(ops, r, [1.0, 3.0], [1.0, 2.0], [10.0, 10.0])
    ref = step_times_reference(ops, r, [1.0, 3.0], [1.0, 2.0], [10.0, 10.0])
    np.testing.assert_allclose(got.total_s, ref.total_s, rtol=1e-12)


def test_parallel_grid_kernel_equals_reference_and_the_serial_kernel(monkeypatch):
    """Grids of at least _PARALLEL_MIN_POINTS points take the prange kernel (the hypothesis grids above are smaller
    and take the serial one): same numbers as the numpy reference, and bit-identical to the serial kernel."""
    import simulator.roofline as roofline
    ops = ops_for("mixtral-8x7b", 2, 1, "bf16")                   # MoE routing and collectives
    r = rates(hw("h100-sxm"), ops)
    B = np.arange(1.0, 1025.0)[:, None]
    L = np.array([0.0, 1024.0, 8192.0, 131072.0])[None, :]          # 4096 points
    assert B.size * L.size >= roofline._PARALLEL_MIN_POINTS
    got = step_times(ops, r, B, 3.0, L, 1e-6, 0.5)
    ref = step_times_reference(ops, r, B, 3.0, L, 1e-6, 0.5)
    for a, b in ((got.total_s, ref.total_s), (got.by_family_s, ref.by_family_s), (got.by_bound_s, ref.by_bound_s)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    monkeypatch.setattr(roofline, "_PARALLEL_MIN_POINTS", 10**12)
    ser = step_times(ops, r, B, 3.0, L, 1e-6, 0.5)
    np.testing.assert_array_equal(ser.total_s, got.total_s)
    np.testing.assert_array_equal(ser.by_family_s, got.by_family_s)


def test_every_cached_kernel_has_its_own_cache_key():
    """numba keys its on-disk cache by module, qualified name and first line: two dispatchers over one Python function
    share a cache file, and a new process loads whichever compilation was written last for both."""
    import simulator.montecarlo as mc
    import simulator.roofline as roofline
    import simulator.sweep.kernels as sk
    keys = [(d.py_func.__module__, d.py_func.__qualname__, d.py_func.__code__.co_firstlineno)
            for m in (roofline, sk, mc) for d in vars(m).values() if hasattr(d, "py_func") and hasattr(d, "stats")]
    assert len(keys) >= 8 and len(set(keys)) == len(keys), keys


def test_numba_only_in_the_kernel_modules_under_one_policy():
    """numba is imported by the three kernel modules only, and every njit there takes simulator._jit.JIT."""
    import ast
    users, calls = set(), []
    for path in sorted((REPO / "simulator").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n == "numba" or n.startswith("numba.") for n in names):
                    users.add(str(path.relative_to(REPO / "simulator")))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "njit":
                calls.append((path.name, node.lineno, [ast.unparse(k) for k in node.keywords]))
    assert users == {"roofline.py", "sweep/kernels.py", "montecarlo.py"}
    assert len(calls) >= 8
    for name, line, kws in calls:
        assert "**JIT" in kws, (name, line, kws)


@pytest.mark.slow
def test_grid_kernel_cache_file_holds_the_parallel_compilation(tmp_path):
    """Regression: the prange grid kernel and the serial kernel were two compilations of one function, so they shared
    one cache file and, in a new process, grids ran on one thread (or single curves started the thread pool). After a
    cold run each has its own file, and only the grid kernel's holds a parfor gufunc."""
    code = """
import numpy as np
from simulator.hardware import load_hardware
from simulator.model import load_model
from simulator.roofline import rates, step_times
from simulator.workload import forward_pass
ops = forward_pass(load_model("llama-3.1-8b"))
r = rates(load_hardware("h100-sxm"), ops)
step_times(ops, r, np.arange(1.0, 5000.0), 1.0, 100.0)
step_times(ops, r, np.arange(1.0, 3.0), 1.0, 100.0)
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-1500:]
    grid = list(tmp_path.rglob("roofline._step_grid-*.nbc"))
    serial = list(tmp_path.rglob("roofline._step_grid_serial-*.nbc"))
    assert len(grid) == 1 and len(serial) == 1, sorted(p.name for p in tmp_path.rglob("*.nbc"))
    assert b"parfor" in grid[0].read_bytes() and b"parfor" not in serial[0].read_bytes()


FIRST_CALL = {
    "step_times, one point as length-1 arrays": """
import numpy as np
from simulator.hardware import load_hardware
from simulator.model import load_model
from simulator.roofline import rates, step_times
from simulator.workload import forward_pass
ops = forward_pass(load_model("llama-3.1-8b"))
t = step_times(ops, rates(load_hardware("h100-sxm"), ops), [4.0], [1.0], [100.0]).total_s
assert np.all(np.isfinite(t))
""",
    "simulate_step, one batch size": """
from simulator.step import simulate_step
assert simulate_step("h100-sxm", "llama-3.1-8b", [1]).step_s[0] > 0
""",
    "simulate_step, four batch sizes": """
from simulator.step import simulate_step
assert simulate_step("h100-sxm", "llama-3.1-8b", [1, 8, 32, 128]).step_s[0] > 0
""",
}


@pytest.mark.parametrize("code", list(FIRST_CALL.values()), ids=list(FIRST_CALL))
def test_first_call_with_a_single_point_emits_no_warning(code):
    """Pricing a single point as the first kernel call of a process must not print numpy's "future versions will
    not create a writeable array from broadcast_array" FutureWarning: roofline._points hands numba a broadcast view
    (of the scalar q / L / launch) whenever ravel() does not copy, i.e. for one-point grids."""
    r = subprocess.run([sys.executable, "-W", "error", "-c", code], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-1500:]


def test_step_times_broadcasts_and_bound():
    ops = ops_for("llama-3.1-8b")
    r = rates(hw("h100-sxm"), ops)
    st_ = step_times(ops, r, np.array([1, 1024])[:, None], 1, np.array([0, 1000, 100_000]))
    assert st_.total_s.shape == (2, 3) and st_.bound.shape == (2, 3)
    assert BOUNDS[st_.bound[0, 0]] == "memory"          # decode at batch 1 reads weights
    big = step_times(ops, r, 1, 8192, 0)                 # an 8k-token prefill is compute bound
    assert BOUNDS[int(big.bound)] == "compute"
    s = step_times(ops, r, 4.0, 1.0, 100.0)
    assert s.total_s.shape == ()


# ---- monotonicity ---------------------------------------------------------------------------------------------

@FAST
@given(sc=scenarios(), B=sizes, q=qs, L=ctxs, overlap=overlaps, launch=st.floats(0.0, 1e-4))
def test_step_time_non_decreasing_in_B_q_L_on_a_grid(sc, B, q, L, overlap, launch):
    h, mid, tp, ep, weights = sc
    ops = ops_for(mid, tp, ep, weights)
    r = rates(hw(h), ops)
    Bs, qs_, Ls = (np.array(sorted(set(x)), dtype=float) for x in (B, q, L))
    t = step_times(ops, r, Bs[:, None, None], qs_[None, :, None], Ls[None, None, :], launch, overlap).total_s
    for axis in range(3):
        assert np.all(np.diff(t, axis=axis) >= 0), axis


@FAST
@given(sc=scenarios(hardware=("h100-sxm", "b200", "mi300x", "gb200-nvl72")), B=sizes,
       q=st.integers(1, 16), dq=st.integers(0, 16), L=st.integers(0, 100_000), dL=st.integers(0, 100_000),
       engine=st.sampled_from(list_engines()))
def test_simulate_step_non_decreasing_with_engines(sc, B, q, dq, L, dL, engine):
    h, mid, tp, ep, weights = sc
    vendors = load_engine(engine).vendors                 # TensorRT-LLM runs on NVIDIA devices only ([scope] vendors)
    assume(not vendors or load_hardware(h).vendor in vendors)
    assume(inside(mid, L + dL) == L + dL)                 # a context past the positions is refused, not priced
    Bs = sorted(set(B))
    kw = dict(tp=tp, ep=ep, precision=weights, engine=engine)
    base = simulate_step(h, mid, Bs, q, L, **kw).step_s
    assert np.all(np.diff(base) >= 0)
    assert np.all(simulate_step(h, mid, Bs, q + dq, L, **kw).step_s >= base)
    assert np.all(simulate_step(h, mid, Bs, q, L + dL, **kw).step_s >= base)


# ---- lower bounds -------------------------------------------------------------------------------------------------

def inside(mid: str, L: int) -> int:
    """A context the model has positions for, with room for a new token: a step at one past them is refused
    (pricing.check_context), so properties of priced steps draw their contexts below it."""
    top = model(mid).max_position
    return min(L, top - 1) if top else L


@FAST
@given(sc=scenarios(), B=st.integers(1, 2048), q=st.integers(1, 64), L=st.integers(0, 100_000),
       overlap=overlaps)
def test_step_time_at_least_bytes_over_bandwidth_and_flops_over_peak(sc, B, q, L, overlap):
    h, mid, tp, ep, weights = sc
    L = inside(mid, L)
    res = simulate_step(h, mid, [B], q, L, tp=tp, ep=ep, precision=weights, engine="ideal", overlap=overlap)
    step = float(res.step_s[0])
    ops = ops_for(mid, tp, ep, weights)
    r = rates(hw(h), ops)
    tot = op_totals(ops, B, q, L)
    mem_bound = tot["bytes"].sum() / r.bw
    compute_bound = (tot["flops"] / r.peak).sum()
    assert step >= mem_bound * (1 - 1e-12)
    assert step >= compute_bound * (1 - 1e-12)
    if overlap == "sum":
        assert step >= (mem_bound + compute_bound) * (1 - 1e-12)
    # and the weight bytes alone: a dense target reads every weight it holds but the embedding table (gathered)
    # and the norm vectors / biases (< 0.1 % of the weights, see test_workload)
    m = model(mid)
    if not m.is_moe and m.kind == "target":
        c = m.param_counts()
        unread_emb = 0.0 if m.tied_embeddings else c["embedding"] * 2.0 / tp
        w = weight_bytes_per_rank(m, Precision(weights=weights), Parallelism(tp, ep))
        assert step >= (w - unread_emb) * (1 - 1e-3) / r.bw


def test_flops_and_bytes_bounds_on_h100_llama_8b_decode():
    """A concrete anchor: Llama-3.1-8B decode at batch 1 on H100 is ~(16.06 GB - 1.05 GB embedding) / (3.35 TB/s
    x 0.87) plus the share of the GEMMs' math (2 FLOPs per weight at 989.4 x 0.803 TFLOP/s) their memory time does
    not hide (1 - gemm_overlap = 0.4) plus a little KV traffic."""
    res = simulate_step("h100-sxm", "llama-3.1-8b", [1], 1, 0, engine="ideal")
    weights_read = (2 * 8_030_261_248 - 2 * 128256 * 4096 - 2 * (65 * 4096))
    math = 0.4 * weights_read / (989.4e12 * 0.803)
    assert res.step_s[0] == pytest.approx(weights_read / (3.35e12 * 0.87) + math, rel=1e-3)
    assert res.bound[0] == "memory"


# ---- scaling -------------------------------------------------------------------------------------------------

@FAST
@given(sc=scenarios(), s=st.floats(0.01, 100.0), B=sizes, q=st.integers(1, 32), L=st.integers(0, 50_000),
       overlap=overlaps)
def test_scaling_every_rate_scales_time_inversely(sc, s, B, q, L, overlap):
    h, mid, tp, ep, weights = sc
    L = inside(mid, L)
    a = simulate_step(hw(h), mid, B, q, L, tp=tp, ep=ep, precision=weights, engine="ideal", overlap=overlap)
    b = simulate_step(hw(h).scaled(s), mid, B, q, L, tp=tp, ep=ep, precision=weights, engine="ideal", overlap=overlap)
    np.testing.assert_allclose(b.step_s * s, a.step_s, rtol=1e-12)
    for fam in FAMILIES:
        np.testing.assert_allclose(b.breakdown_s[fam] * s, a.breakdown_s[fam], rtol=1e-12, atol=0)
    assert a.bound == b.bound
    np.testing.assert_array_equal(a.memory_bytes, b.memory_bytes)


def test_scaling_with_overheads_is_not_inverse():
    """With an engine's fixed host and launch costs the 1/s law does not hold (they do not scale with the chip)."""
    a = simulate_step("h100-sxm", "llama-3.2-1b", [1], engine="hf")
    b = simulate_step(hw("h100-sxm").scaled(10.0), "llama-3.2-1b", [1], engine="hf")
    assert b.step_s[0] * 10 > a.step_s[0] * 1.5


# ---- tp, collectives ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mid", IDS)
def test_tp1_has_no_collective_time(mid):
    res = simulate_step("h100-sxm", mid, [1, 64], 4, 1024, engine="vllm")
    assert np.all(res.breakdown_s["collective"] == 0.0)
    assert "communication" not in res.bound


def test_tp_adds_collective_time():
    res = simulate_step("h100-sxm", "llama-3.1-70b", [1, 64], 1, 1024, tp=8)
    assert np.all(res.breakdown_s["collective"] > 0)
    # 2 all-reduces per layer + the embedding's, each at least the custom all-reduce latency under CUDA graphs (6 us
    # on 8x H100, SGLang PR #2904) and, at batch 1 (16 KB), within two latencies of it (one-shot)
    lat = hw("h100-sxm").allreduce_latency_s
    n = 2 * 80 + 1
    assert n * lat <= res.breakdown_s["collective"][0] <= 2 * n * lat


def test_tp_beyond_the_scaleup_domain_is_hierarchical():
    ops = ops_for("llama-3.1-70b", 16, domain=8)
    coll = ops.coll > 0
    h = hw("h100-sxm")
    r = rates(h, ops)
    bw_in, bw_out = h.scaleup_bytes_per_s * h.link_fraction, h.scaleout_bytes_per_s * h.link_fraction
    for i in np.flatnonzero(coll):
        assert r.bw_op[i] == pytest.approx(hierarchical_bandwidth(int(ops.coll[i]), 16.0, 8.0, bw_in, bw_out))
    np.testing.assert_allclose(r.lat[coll & (ops.coll == COLL_ALLREDUCE)], h.scaleout_latency_s + h.allreduce_latency_s)
    eight = ops_for("llama-3.1-70b", 8)
    np.testing.assert_allclose(rates(h, eight).bw_op[eight.coll > 0], bw_in)
    nvl = ops_for("llama-3.1-70b", 16, domain=72)
    gb = hw("gb200-nvl72")
    np.testing.assert_allclose(rates(gb, nvl).bw_op[nvl.coll > 0], 900e9 * gb.link_fraction)
    with pytest.raises(ScenarioError, match=r"^a 16-GPU collective spans more than one 8-GPU scale-up domain of "
                                            r"mi325x, whose scale-out bandwidth is not published$"):
        rates(hw("mi325x"), ops)


def test_rates():
    ops = ops_for("mixtral-8x7b", weights="fp8")
    h = hw("h100-sxm")
    r = rates(h, ops)
    for i, dt in enumerate(ops.dtype):
        assert r.peak[i] == pytest.approx(h.peak_flops_per_s(dt) * h.gemm_fraction(dt))
    assert r.bw == pytest.approx(3.35e12 * 0.87)
    assert np.all(r.lat == 0.0)
    r2 = rates(h, ops, hbm_fraction=0.5, gemm_fraction=0.6)
    assert r2.bw == pytest.approx(3.35e12 * 0.5)
    assert r2.peak[ops.dtype.index("fp8")] == pytest.approx(1978.9e12 * 0.6)
    # A100 has no fp8 tensor cores: fp8 weights are read as fp8 and multiplied in bf16 (weight-only W8A16)
    a100 = hw("a100-sxm-80gb")
    r3 = rates(a100, ops)
    i = ops.dtype.index("fp8")
    assert r3.peak[i] == pytest.approx(a100.peak_bf16_flops_per_s * a100.gemm_bf16_fraction)
    fp4 = simulate_step("h100-sxm", "llama-3.1-8b", [1], precision="fp4")
    assert fp4.feasible.all() and fp4.step_s[0] < simulate_step("h100-sxm", "llama-3.1-8b", [1]).step_s[0]


# ---- overlap -------------------------------------------------------------------------------------------------

@FAST
@given(sc=scenarios(), B=sizes, q=st.integers(1, 32), L=st.integers(0, 50_000), eta=st.floats(0.0, 1.0),
       eta2=st.floats(0.0, 1.0))
def test_overlap_efficiency_between_max_and_sum(sc, B, q, L, eta, eta2):
    """t(eta) = max(tc, tm) + (1 - eta) min(tc, tm): "max" is eta = 1, "sum" eta = 0; max <= t <= sum <= 2 max,
    and t is non-increasing in eta."""
    h, mid, tp, ep, weights = sc
    L = inside(mid, L)
    kw = dict(tp=tp, ep=ep, precision=weights, engine="ideal")
    mx = simulate_step(h, mid, B, q, L, overlap="max", **kw).step_s
    sm = simulate_step(h, mid, B, q, L, overlap="sum", **kw).step_s
    te = simulate_step(h, mid, B, q, L, overlap=eta, **kw).step_s
    assert np.all(sm >= mx * (1 - 1e-12)) and np.all(sm <= 2 * mx * (1 + 1e-12))
    assert np.all(te >= mx * (1 - 1e-12)) and np.all(te <= sm * (1 + 1e-12))
    np.testing.assert_allclose(simulate_step(h, mid, B, q, L, overlap=1.0, **kw).step_s, mx, rtol=1e-12)
    np.testing.assert_allclose(simulate_step(h, mid, B, q, L, overlap=0.0, **kw).step_s, sm, rtol=1e-12)
    lo, hi = sorted((eta, eta2))
    t_lo = simulate_step(h, mid, B, q, L, overlap=lo, **kw).step_s
    t_hi = simulate_step(h, mid, B, q, L, overlap=hi, **kw).step_s
    assert np.all(t_hi <= t_lo * (1 + 1e-12))


def test_engine_overlap_efficiency_is_the_default_overlap():
    from simulator.engine import EngineProfile
    eng = EngineProfile(name="calibrated", overlap_efficiency=0.25)
    by_engine = simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048, engine=eng).step_s
    explicit = simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048, engine=eng, overlap=0.25).step_s
    np.testing.assert_array_equal(by_engine, explicit)
    assert np.all(simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048, engine=eng, overlap="max").step_s
                  <= by_engine)
    # without an engine efficiency the default is "measured": GEMMs at the device's GEMM overlap, above the max
    plain = simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048, engine="ideal")
    assert plain.scenario["overlap"] == "measured"
    np.testing.assert_array_equal(plain.step_s, simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048,
                                                              engine="ideal", overlap="measured").step_s)
    assert np.all(simulate_step("h100-sxm", "llama-3.1-8b", [1, 64], 4, 2048, engine="ideal", overlap="max").step_s
                  < plain.step_s)


# ---- MoE verify cost -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("hardware", ["h100-sxm", "h200-sxm", "b200", "mi300x"])
def test_moe_verify_costs_more_than_dense_verify(hardware):
    """Verifying 3 drafts (q = 4) on qwen3-30b-a3b touches ~4x the experts of a decode step, while a dense model of
    similar active size (llama-3.2-3b, 3.2B) reads the same weights either way."""
    B = [1, 2, 3, 4]
    moe = simulate_step(hardware, "qwen3-30b-a3b", B, 4).step_s / simulate_step(hardware, "qwen3-30b-a3b", B, 1).step_s
    dense = simulate_step(hardware, "llama-3.2-3b", B, 4).step_s / simulate_step(hardware, "llama-3.2-3b", B, 1).step_s
    assert np.all(moe > dense), (moe, dense)
    # the bare roofline (no per-kernel floor, which adds the same fixed cost to both passes): bytes alone
    bare = lambda m, q: simulate_step(hardware, m, B, q, engine="ideal").step_s  # noqa: E731
    assert np.all(bare("qwen3-30b-a3b", 4) / bare("qwen3-30b-a3b", 1) > 1.5)
    assert np.all(bare("llama-3.2-3b", 4) / bare("llama-3.2-3b", 1) < 1.1)


# ---- the step API: results and argument checks ------------------------------------------------------------------

def test_step_result_to_dict_feasible_and_infeasible():
    ok = simulate_step("h100-sxm", "llama-3.1-8b", [1, 8]).to_dict()
    assert [p["batch"] for p in ok["points"]] == [1, 8]
    for p in ok["points"]:
        assert p["feasible"] and p["message"] == "" and p["step_s"] > 0
        assert set(p["breakdown_s"]) == set(FAMILIES)
        assert sum(p["breakdown_s"].values()) == pytest.approx(p["step_s"], rel=1e-12)
    bad = simulate_step("h100-sxm", "llama-3.1-405b", [1]).to_dict()["points"][0]
    assert bad["feasible"] is False and bad["step_s"] is None and bad["breakdown_s"] is None and bad["bound"] is None
    assert bad["message"].startswith("does not fit: needs ") and "h100-sxm x 0.836 gives" in bad["message"]


def test_context_beyond_max_position_is_refused_and_a_step_past_it_infeasible():
    # The one rule of curve, step, serve and batch (pricing.check_context): a context with no position left for a
    # new token cannot exist and is refused; one with room for a token but not for q of them is an infeasible step
    with pytest.raises(ScenarioError, match=r"context \(--context\) = 2048 leaves no position for a new token: "
                                            r"llama-68m's max_position_embeddings is 2048, so it must be at most 2047"):
        simulate_step("h100-sxm", "llama-68m", [1], 1, 2048)
    res = simulate_step("h100-sxm", "llama-68m", [1], 4, 2046)
    assert not res.feasible[0]
    assert "2046 + 4 new tokens exceeds llama-68m's max_position_embeddings 2048" in res.message[0]
    assert simulate_step("h100-sxm", "llama-68m", [1], 2, 2046).feasible[0]


def test_engine_memory_fraction_and_host_overhead():
    ideal = simulate_step("h100-sxm", "llama-3.1-8b", [1], engine="ideal")
    v = simulate_step("h100-sxm", "llama-3.1-8b", [1], engine="vllm")
    eng = load_engine("vllm")
    assert v.step_s[0] >= ideal.step_s[0]
    assert v.step_s[0] >= eng.host_step_s
    assert v.scenario["engine"] == "vllm" and ideal.scenario["engine"] == "ideal"


@pytest.mark.parametrize("batch, message", [
    ([], r"batch: the list is empty"), ([0], r"batch = 0; expected a positive integer"),
    ([-4], r"batch = -4"), ([1.5], r"batch = 1.5; expected a positive integer"),
    (["x"], r"batch = 'x'"), ([True], r"batch = True"), ([1, 2, 0], r"batch = 0"),
    ([float("nan")], r"batch = nan"),
])
def test_scenario_batch_rejects(batch, message):
    with pytest.raises(ScenarioError, match=message):
        Scenario(batch=batch)
    with pytest.raises(ScenarioError, match=message):
        simulate_step("h100-sxm", "llama-3.1-8b", batch)


def test_scenario_batch_accepts():
    assert Scenario(batch=[1, 2.0, np.int64(3)]).batch == (1, 2, 3)
    assert Scenario(batch=4).batch == (4,)
    with pytest.raises(ScenarioError, match=r"expected one batch size or a flat list"):
        Scenario(batch=[[1, 2], [3, 4]])


@pytest.mark.parametrize("kw, message", [
    (dict(query_tokens=0), r"query_tokens = 0; expected an integer >= 1"),
    (dict(query_tokens=1.5), r"query_tokens = 1.5; expected an integer >= 1"),
    (dict(context=-1), r"context = -1; expected an integer >= 0"),
    (dict(context=True), r"context = True; expected an integer >= 0"),
    (dict(tp=3), r"tp = 3 does not divide the 32 attention heads of llama-3.1-8b"),
    (dict(tp=2, ep=2), r"ep = 2 but llama-3.1-8b has no experts"),
    (dict(precision="int4"), r"precision = 'int4'"),
    (dict(kv_precision="fp5"), r"kv_precision = 'fp5'"),
    (dict(overlap="min"), r"overlap = 'min'; expected 'measured', 'max', 'sum' or a number in \[0, 1\]"),
    (dict(overlap=1.5), r"overlap = 1.5; expected 'measured', 'max', 'sum' or a number in \[0, 1\]"),
    (dict(overlap=-0.1), r"overlap = -0.1; expected"),
    (dict(overlap=True), r"overlap = True; expected"),
    (dict(logits="first"), r"logits = 'first'"),
])
def test_simulate_step_rejects(kw, message):
    with pytest.raises(ScenarioError, match=message):
        simulate_step("h100-sxm", "llama-3.1-8b", [1], **kw)


def test_simulate_step_unknown_names():
    with pytest.raises(SpecError, match=r"unknown hardware 'h100-sxn'; did you mean h100-sxm"):
        simulate_step("h100-sxn", "llama-3.1-8b")
    with pytest.raises(ModelConfigError, match=r"unknown model 'llama-3.1-8'; did you mean llama-3.1-8b"):
        simulate_step("h100-sxm", "llama-3.1-8")
    with pytest.raises(SpecError, match=r"unknown engine 'vlm'; did you mean vllm"):
        simulate_step("h100-sxm", "llama-3.1-8b", engine="vlm")


def test_scenario_counts_and_make_precision():
    assert Scenario(tp=np.int64(3)).tp == 3
    with pytest.raises(ScenarioError, match=r"tp = 0; expected an integer >= 1"):
        Scenario(tp=0)
    p = make_precision("fp8", "fp8", "fp4")
    assert (p.weights, p.kv, p.expert_dtype, p.lm_head) == ("fp8", "fp8", "fp4", "bf16")
    with pytest.raises(ScenarioError, match=r"precision kv = 'x'"):
        make_precision("bf16", "x")


@pytest.mark.parametrize("bad, message", [
    (dict(B=[-1.0]), r"batch, query tokens and context must be finite and non-negative"),
    (dict(q=[-1.0]), r"must be finite and non-negative"),
    (dict(L=[-5.0]), r"must be finite and non-negative"),
    (dict(B=[np.inf]), r"must be finite and non-negative"),
    (dict(B=[np.nan]), r"must be finite and non-negative"),
    (dict(overlap="avg"), r"overlap = 'avg'; expected 'measured', 'max', 'sum' or a number in \[0, 1\]"),
    (dict(overlap=2.0), r"overlap = 2.0; expected 'measured', 'max', 'sum' or a number in \[0, 1\]"),
    (dict(overlap=float("nan")), r"overlap = nan; expected"),
])
def test_step_times_rejects(bad, message):
    ops = ops_for("llama-3.1-8b")
    r = rates(hw("h100-sxm"), ops)
    kw = dict(B=[1.0], q=[1.0], L=[10.0], overlap="max") | bad
    with pytest.raises(ScenarioError, match=message):
        step_times(ops, r, kw["B"], kw["q"], kw["L"], 0.0, kw["overlap"])


def test_breakdown_families_follow_the_op_table():
    res = simulate_step("h100-sxm", "mixtral-8x7b", [1, 32], 2, 512)
    assert np.all(res.breakdown_s["moe"] > 0) and np.all(res.breakdown_s["attention"] > 0)
    dense = simulate_step("h100-sxm", "llama-3.1-8b", [1, 32], 2, 512)
    assert np.all(dense.breakdown_s["moe"] == 0)
    assert FAM["overhead"] == len(FAMILIES) - 1


def test_overlap_eta_has_no_single_value_for_the_measured_mode():
    assert overlap_eta("max") == 1.0 and overlap_eta("sum") == 0.0 and overlap_eta(0.25) == 0.25
    with pytest.raises(ScenarioError, match=r"overlap = 'measured' gives each op its own eta \(roofline.op_overlap\)"):
        overlap_eta("measured")


@settings(max_examples=30, deadline=None)
@given(B=sizes, L=ctxs, name=st.sampled_from(["h100-sxm", "h200-sxm", "b200", "mi300x"]),
       quant_s=st.floats(0.0, 2e-5))
@example(B=[4096], L=[200000], name="h100-sxm", quant_s=1e-14)   # 5e-12 s off a 20 s pass: its rounding
@example(B=[82], L=[0], name="b200", quant_s=0.0).via("launch-bound with its quant kernels, GPU-bound without them")
def test_activation_quant_kernels_cost_the_device_figure_graphed_and_a_launch_eager(B, L, name, quant_s):
    # A W8A8 model's quant kernels (units.ACT_QUANT) add repeat x quant x t_quant to a graph-replayed pass, whatever
    # the batch and context; launched eagerly, each is also one more launch, which counts where the launches outlast
    # the GPU's work (a pass takes the longer of the two). Here graphed=False switches the floor and t_quant off (the
    # ideal profile's graph_kernel_floor = false) to isolate the launch; a real engine's eager pass pays both
    # (tests/test_eager_launch.py). Mechanisms off, none of it.
    ops = ops_for("deepseek-v3", 8, 1, "fp8")
    n_quant = float((ops.repeat * ops.quant).sum())
    assert n_quant == 61 * 10 - 3 * 2           # 10 per MoE layer, 8 per dense layer (no routed experts), unfused
    r = replace(rates(hw(name), ops), quant_s=quant_s)
    off = replace(r, quant_s=0.0)
    Bg, Lg = np.array(B, dtype=float)[:, None], np.array(L, dtype=float)[None, :]
    on_t, off_t = step_times(ops, r, Bg, 1.0, Lg).total_s, step_times(ops, off, Bg, 1.0, Lg).total_s
    # the two totals are sums over hundreds of ops: their difference carries their rounding (a few ulp of the total)
    np.testing.assert_allclose(on_t - off_t, n_quant * quant_s, rtol=1e-9, atol=64 * np.finfo(float).eps * off_t.max())
    bare = replace(ops, quant=np.zeros_like(ops.quant))
    launches = float((ops.repeat * (ops.kernels + ops.quant)).sum()) * 1e-5
    gpu = step_times(ops, r, Bg, 1.0, Lg, 0.0, graphed=False).total_s
    eager = step_times(ops, r, Bg, 1.0, Lg, 1e-5, graphed=False).total_s
    np.testing.assert_allclose(eager, np.maximum(gpu, launches), rtol=1e-12)
    bare_gpu = step_times(bare, r, Bg, 1.0, Lg, 0.0, graphed=False).total_s
    bound = (launches - n_quant * 1e-5 > bare_gpu) & (launches > gpu)   # launch-bound with and without the quant
    np.testing.assert_allclose((eager - step_times(bare, r, Bg, 1.0, Lg, 1e-5, graphed=False).total_s)[bound],
                               n_quant * 1e-5, rtol=1e-9)
    assert rates(hw(name), ops, mechanisms=False).quant_s == 0.0
    assert rates(hw(name), ops).quant_s == hw(name).quant_kernel_s > 0.0


@pytest.mark.parametrize("hw_name, precision, quantises", [
    ("h100-sxm", "fp8", True), ("h100-sxm", "fp4", False), ("b200", "fp4", True), ("a100-sxm-80gb", "fp8", False),
])
def test_activation_quantisation_only_where_the_gemm_computes_in_the_weight_format(hw_name, precision, quantises):
    """Found by review (2026-12-05): NVFP4 weights on an H100 (no FP4 tensor cores: W4A16, dequantised in the kernel)
    paid an activation quantisation before every GEMM, 128 kernels on Llama-3.1-8B. A device that computes the format
    in bf16 quantises no activations; the numba kernel and the numpy reference agree either way."""
    from simulator.model import load_model
    from simulator.workload import forward_pass
    hw = load_hardware(hw_name)
    ops = forward_pass(load_model("llama-3.1-8b"), make_precision(precision))
    r = rates(hw, ops)
    q = r.quant(ops)
    assert (q.sum() > 0) == quantises and np.all(q <= ops.quant)
    B, L = np.array([1.0, 16.0]), np.array([1024.0])
    a, b = step_times(ops, r, B, 1.0, L), step_times_reference(ops, r, B, 1.0, L)
    assert np.allclose(a.total_s, b.total_s, rtol=1e-12)
    off = step_times(ops, replace(r, quant_on=np.zeros(len(ops))), B, 1.0, L)
    assert np.all(off.total_s <= a.total_s) and (np.all(off.total_s < a.total_s) == quantises)


def test_weight_only_gemms_take_their_own_tile():
    """A100 has no FP4 or FP8 tensor cores: those weights run weight-only (W4A16, W8A16) on Marlin-type kernels with
    16-row tiles (hardware weight_only_tile_m), memory-bound up to 16 tokens (found by review, 2026-12-05: FP4 at batch
    1 was priced compute-bound on 64 padded rows). bf16 GEMMs keep gemm_tile_m; a device without the figure uses
    gemm_tile_m for both."""
    from simulator.model import load_model
    from simulator.workload import forward_pass
    a100 = load_hardware("a100-sxm-80gb")
    assert a100.weight_only_tile_m == 16 and load_hardware("h100-sxm").weight_only_tile_m == 16
    assert load_hardware("mi300x").weight_only_tile_m is None and load_hardware("b200").weight_only_tile_m is None
    for p, tile in (("fp4", 16.0), ("bf16", float(a100.gemm_tile_m))):
        ops = forward_pass(load_model("llama-3.1-8b"), make_precision(p))
        r = rates(a100, ops)
        gemm = np.array([d == p for d in ops.dtype])
        assert np.all(r.tile_of(len(ops))[gemm] == tile)
    st = simulate_step("a100-sxm-80gb", "llama-3.1-8b", [1, 16], precision="fp4")
    assert list(st.bound) == ["memory", "memory"]
