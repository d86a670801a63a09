"""Acceptance models: closed forms (Leviathan et al. 2023 eq. 1), inversion, trees, and the Monte Carlo kernel."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from simulator.acceptance import (
    ALPHA_MAX,
    Acceptance,
    expected_tokens_iid,
    expected_tokens_positional,
    expected_tokens_tree,
    tree_widths,
)
from simulator.errors import ScenarioError
from simulator.montecarlo import _mc_accept, monte_carlo_tokens

from .strategies import alphas


@given(alphas(), st.integers(0, 16))
@example(a=0.75, k=0)  # Found using hypothesis: rounding gave 0.9999999999999999
def test_iid_bounds_and_limits(a, k):
    e = float(expected_tokens_iid(a, k))
    assert 1.0 <= e <= k + 1 + 1e-12
    assert float(expected_tokens_iid(0.0, k)) == 1.0
    assert float(expected_tokens_iid(ALPHA_MAX, k)) == pytest.approx(k + 1, rel=1e-9)


@given(alphas(), alphas(), st.integers(1, 12))
def test_iid_monotone_in_alpha_and_k(a, b, k):
    lo, hi = sorted((a, b))
    assert expected_tokens_iid(lo, k) <= expected_tokens_iid(hi, k) + 1e-12
    assert expected_tokens_iid(a, k) <= expected_tokens_iid(a, k + 1) + 1e-12


def test_leviathan_table1_theoretical():
    # Leviathan et al. 2023, Table 1 (c = 0): improvement = E[tokens]; alpha 0.8, gamma 5 -> 3.69X; 0.9/10 -> 6.86X.
    assert float(expected_tokens_iid(0.8, 5)) == pytest.approx(3.69, abs=0.005)
    assert float(expected_tokens_iid(0.9, 10)) == pytest.approx(6.86, abs=0.005)
    assert float(expected_tokens_iid(0.6, 2)) == pytest.approx(1.96, abs=0.005)


@given(st.floats(1.0, 9.0), st.integers(1, 8), st.sampled_from([1.0, 0.9736, 0.97, 0.88, 0.72]))
@example(tau=8.999999, k=8, decay=1.0)
@example(tau=1.0, k=1, decay=1.0)
@example(tau=3.99, k=3, decay=0.9736)   # blind test: EAGLE-3's decay reaches 3.896 at k = 3; 3.99 was priced as 3.896
@example(tau=3.1, k=3, decay=0.7201)    # audit: past MTP's reach the i.i.d. fallback moved every other k
def test_tau_round_trip(tau, k, decay):
    """Every tau in [1, k+1) inverts to a first-position rate that reproduces it at its k: under the given decay
    where it reaches tau, else under the smallest larger decay that does (rate at its ceiling), and the source says
    which."""
    tau = min(tau, k + 1.0 - 1e-6)
    a = Acceptance.from_length(tau, k, decay)
    reachable = Acceptance("decay", alpha=1 - 1e-12, decay=decay).expected_tokens(k) if decay < 1 else k + 1.0
    assert a.expected_tokens(k) == pytest.approx(tau, rel=1e-9)
    assert 0.0 <= a.alpha < 1.0
    assert (a.kind == "iid") == (decay == 1.0)
    assert ("reaches: decay" in a.source) == (decay != 1.0 and tau > reachable)
    assert decay <= a.decay <= 1.0 or decay == 1.0


@pytest.mark.parametrize("decay, k0, edge", [(0.7201, 3, 3.094), (0.9736, 3, 3.896)])
def test_tau_across_the_decays_reach_moves_other_depths_smoothly(decay, k0, edge):
    """Audit: past the decay's reach the length fell back to i.i.d. rates, which re-extrapolated every other k: for
    MTP a measured 3.09 at k = 3 gave 1.999 tokens at k = 1 and 3.10 gave 1.832 (k auto jumped from 3 to 8). The
    decay is now raised from its fitted value, so tokens per step at every k move continuously with tau."""
    lo = Acceptance.from_length(edge - 1e-4, k0, decay)
    hi = Acceptance.from_length(edge + 1e-4, k0, decay)
    for k in range(1, 9):
        assert abs(hi.expected_tokens(k) - lo.expected_tokens(k)) < 5e-3
    ks = np.arange(1, 9)
    assert (np.diff([Acceptance.from_length(3.3, k0, decay).expected_tokens(k) for k in ks]) > 0).all()


@given(st.floats(1.5, 3.99), st.integers(1, 4), st.floats(1.001, 1.3), st.integers(5, 64))
@example(tau=3.6, k=3, decay=1.0199, deep=64)   # review: n-gram's rising rate reached 1 - 1e-12, 52 tokens, 34x
def test_a_rising_rate_is_held_beyond_its_measured_depth(tau, k, decay, deep):
    """Under a decay above 1 (n-gram's 1.02, fitted on tables to depth 23) the rate rises only as deep as the length
    was measured: deeper positions take the rate at k, so tokens per step stay below the i.i.d. chain at that rate
    (1 / (1 - a_k) + ...) and never reach k + 1 at every depth; the report says where it held the rate."""
    tau = min(tau, k + 1.0 - 1e-3)
    a = Acceptance.from_length(tau, k, decay)
    assert a.held and a.hold == k and a.expected_tokens(k) == pytest.approx(tau, rel=1e-9)
    top = a.rate(k)
    assert all(a.rate(j) == top for j in range(k, deep + 1))
    assert all(a.rate(j) <= a.rate(j + 1) for j in range(1, k))
    assert a.expected_tokens(deep) <= float(expected_tokens_iid(top, deep)) + 1e-9
    assert f"measured to position {k} only" in a.beyond(deep) and a.beyond(k) == ""
    assert a.with_alpha(0.5).hold == k
    # a falling rate (d < 1) is not held: it keeps falling, as the per-k tables show
    f = Acceptance.from_length(tau, k, 0.9736)
    assert not f.held and f.rate(deep) < f.rate(k)


def test_the_rising_ngram_extrapolation_is_bounded_on_the_cli(capsys):
    from simulator.cli import main
    assert main(["curve", "--method", "ngram", "--acceptance-length", "3.6", "--acceptance-k", "3", "--k-max", "64",
                 "--batch", "1", "--format", "json"]) == 0
    import json
    d = json.loads(capsys.readouterr().out)
    assert d["points"][0]["tokens_per_step"] < 25            # 52.1 before: every position past 12 accepted
    assert any("measured to position 3 only" in n for n in d["notes"])


def test_tree_tau_beyond_the_decay_is_kept():
    """The same for a tree: a measured tree tau the decay cannot reach is reproduced with a raised decay."""
    w = [4, 4, 4]
    a = Acceptance.from_tree_length(3.999, w, 0.72)
    assert a.kind == "decay" and a.decay > 0.72 and "reaches: decay" in a.source
    assert a.expected_tokens_tree(w) == pytest.approx(3.999, rel=1e-9)


@pytest.mark.parametrize("tau, k", [(2.0, 1), (4.0, 3), (9, 8)])
def test_tau_of_k_plus_one_is_refused(tau, k):
    """k + 1 tokens per step on average would need every draft accepted: refused, as an acceptance rate of 1 is."""
    with pytest.raises(ScenarioError, match=r"expected a number in \[1, k\+1\)"):
        Acceptance.from_length(tau, k)
    with pytest.raises(ScenarioError, match="expected a number in"):
        Acceptance.from_rate(1.0)


def test_decay_model_matches_the_published_per_k_table():
    """vLLM issue #20780 (EAGLE-3 on Llama-3.1-8B, MT-Bench): tau 2.36 / 2.79 / 3.08 / 3.32 / 3.46 / 3.54 at
    K = 2..7. From tau at K = 3 the fitted decay (acceptance/decay.toml) predicts the others within 1.5 %; the
    i.i.d. extrapolation overstates K = 7 by more than 5 %."""
    from simulator.drafters import default_decay
    published = {2: 2.36, 3: 2.79, 4: 3.08, 5: 3.32, 6: 3.46, 7: 3.54}
    dec = Acceptance.from_length(2.79, 3, default_decay("eagle3"))
    iid = Acceptance.from_length(2.79, 3)
    for k, t in published.items():
        assert dec.expected_tokens(k) == pytest.approx(t, rel=0.015), k
    assert iid.expected_tokens(7) > 1.05 * published[7]
    assert "decay" in dec.model and "i.i.d." in iid.model


def test_default_decay_reads_the_method_as_a_scenario_does():
    """Scenario(method="MTP") is MTP; default_decay("MTP") had been 1 (i.i.d.), not MTP's 0.72, so a length measured
    at k = 2 extrapolated 17-23 % higher speedups under `--method MTP` than `--method mtp` (review). A name that is
    no method is refused, not read as i.i.d."""
    from simulator.drafters import default_decay
    assert default_decay("MTP") == default_decay(" mtp ") == default_decay("mtp") < 0.8
    assert default_decay("EAGLE3") == default_decay("eagle3") < 1.0
    assert default_decay(None) == default_decay("draft") == 1.0          # no per-k table: i.i.d., as documented
    for bad in ("eagle-3", "", 3):
        with pytest.raises(ScenarioError, match=r"method = .*expected one of draft, eagle, eagle3"):
            default_decay(bad)


def test_positional_and_extension_rule():
    r = [0.8, 0.5]
    assert expected_tokens_positional(r, 2) == pytest.approx(1 + 0.8 + 0.4)
    # beyond the given positions the last rate repeats
    assert expected_tokens_positional(r, 3) == pytest.approx(1 + 0.8 + 0.4 + 0.2)
    assert Acceptance.from_rates(r).expected_tokens(0) == 1.0


def test_tree_reduces_to_chain_for_width_one():
    for a in (0.3, 0.7, 0.9):
        assert expected_tokens_tree([a] * 4, [1, 1, 1, 1]) == pytest.approx(float(expected_tokens_iid(a, 4)))
    assert tree_widths(8, 5, 4) == [3, 1, 1, 1, 1]
    assert sum(tree_widths(64, 5, 13)) == 63


@given(st.lists(st.floats(0.0, 0.99), min_size=1, max_size=6), st.integers(0, 2**31 - 1))
def test_monte_carlo_matches_closed_form(rates, seed):
    n = 20000
    draws = monte_carlo_tokens(rates, n, seed)
    exact = expected_tokens_positional(rates, len(rates))
    # mean of n draws of a variable bounded in [1, k+1]: 5 standard errors with sd <= k/2
    tol = 5 * (len(rates) / 2) / np.sqrt(n) + 1e-9
    assert abs(draws.mean() - exact) <= tol


def test_mc_kernel_matches_python():
    u = np.random.default_rng(1).random((500, 4))
    r = np.array([0.9, 0.5, 0.7, 0.2])
    out = np.empty(500)
    _mc_accept(u, r, out)
    ref = np.empty(500)
    _mc_accept.py_func(u, r, ref)
    assert np.array_equal(out, ref)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, float("nan"), "0.5", True])
def test_alpha_outside_range(bad):
    with pytest.raises(ScenarioError, match="expected a number in"):
        Acceptance.from_rate(bad)


@pytest.mark.parametrize("tau,k", [(0.5, 3), (4.5, 3), (2.0, 0)])
def test_tau_outside_range(tau, k):
    with pytest.raises(ScenarioError):
        Acceptance.from_length(tau, k)


def test_bad_inputs():
    with pytest.raises(ScenarioError, match="k = -1"):
        Acceptance.from_rate(0.5).expected_tokens(-1)
    with pytest.raises(ScenarioError, match="at least one rate"):
        Acceptance.from_rates([])
    with pytest.raises(ScenarioError, match="tree acceptance length"):
        Acceptance.from_tree_length(9.0, [2, 2])


def test_a_length_measured_on_medusas_default_tree_is_read_on_it(capsys):
    """Review (2026-12-06): --acceptance-length with Medusa's default 64-token tree (no --tree-tokens) was read as a
    chain's and then priced on the tree: tau 2.32 at k = 5, Medusa's own published figure, gave 2.98 tokens per step
    (speedup 2.47 where the default acceptance gives 1.93). The CLI, the batch sweep and the serving sweep read it on
    the tree the step verifies, as --tree-tokens 64 did."""
    import json

    from simulator.cli import main
    from simulator.sweep import run_sweep
    from simulator.sweep.serving import serve_sweep

    args = ["--model", "vicuna-7b", "--hardware", "a100-sxm-80gb", "--engine", "hf", "--method", "medusa", "--k", "5"]
    taus = []
    for extra in ([], ["--acceptance-length", "2.32", "--acceptance-k", "5"],
                  ["--acceptance-length", "2.32", "--acceptance-k", "5", "--tree-tokens", "64"]):
        assert main(["curve", *args, *extra, "--batch", "1", "--format", "json"]) == 0
        taus.append(json.loads(capsys.readouterr().out)["points"][0]["tokens_per_step"])
    assert taus == pytest.approx([2.32] * 3, rel=1e-9)
    spec = {"model": "vicuna-7b", "hardware": "a100-sxm-80gb", "engine": "hf", "method": "medusa", "k": 5,
            "acceptance_length": 2.32, "acceptance_k": 5}
    g = run_sweep({**spec, "batch": [1]}).to_dataframe().reset_index()
    assert g["tokens_per_step"].to_numpy() == pytest.approx([2.32], rel=1e-9)
    s = serve_sweep({**spec, "serve": {"isl": 512, "osl": 256, "concurrency": [1]}})
    assert main(["serve", *args, "--isl", "512", "--osl", "256", "--concurrency", "1", "--format", "json"]) == 0
    spec_tpot = json.loads(capsys.readouterr().out)["points"][0]["spec"]["tpot_s"]
    assert s["spec_tpot_s"].to_numpy() == pytest.approx([spec_tpot], rel=1e-9)
