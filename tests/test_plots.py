"""simulator/plots.py: every plot renders to a non-empty PNG, returns its Axes / Figure, and bad input is a clean
ScenarioError; `specroof curve --plot` keeps working."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

from simulator import Acceptance, plots, speedup_curve
from simulator.advise import advise
from simulator.errors import OutputError, ScenarioError

BATCH = [1, 4, 16, 64, 256, 1024]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt
    plt.close("all")


@pytest.fixture(scope="module")
def results():
    return {hw: speedup_curve(hw, "llama-3.1-8b", "eagle3", engine="vllm", k="auto", batch=BATCH)
            for hw in ("h100-sxm", "b300", "gb200-nvl72")}


def png(obj, tmp_path, name="p.png"):
    p = tmp_path / name
    plots.save(obj, str(p), close=True)
    assert p.exists() and p.stat().st_size > 5000
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return p


def test_speedup_vs_batch(results, tmp_path):
    rs = list(results.values())
    ax = plots.speedup_vs_batch(rs, labels=list(results))
    assert len(ax.get_legend().get_texts()) == 3 and ax.get_xscale() == "log"
    # h100 does not fit at 1024: its crossover is the end of what fits, so no crossover line for it.
    assert not results["h100-sxm"].feasible[-1]
    png(ax, tmp_path)


def test_crossover_is_marked_where_a_larger_batch_loses(tmp_path):
    r = speedup_curve("h100-sxm", "llama-3.1-8b", "draft", acceptance=Acceptance.from_rate(0.7), engine="vllm",
                      k="auto", batch=[1, 16, 64, 128, 256], context=128)
    assert r.crossover_batch is not None and r.crossover_batch < 256
    ax = plots.speedup_vs_batch([r])
    assert any(t.get_text() == f"crossover {r.crossover_batch}" for t in ax.texts)
    png(ax, tmp_path)


def test_heatmap_with_break_even_contour(tmp_path):
    grid = plots.speedup_over_acceptance([0.1, 0.4, 0.7, 0.9], hardware="h100-sxm", model="llama-3.1-8b",
                                         method="eagle3", engine="vllm", k="auto", batch=[1, 8, 64, 256, 1024])
    assert [round(r.scenario["acceptance_alpha"], 3) for r in grid] == [0.1, 0.4, 0.7, 0.9]
    ax = plots.speedup_heatmap(grid[::-1])                      # order does not matter
    assert ax.collections and any(t.get_text() == "break-even" for t in ax.texts)
    assert any("does not fit" in t.get_text() for t in ax.texts)
    png(ax, tmp_path)


def test_best_k_breakdown_tradeoff(results, tmp_path):
    r = results["h100-sxm"]
    png(plots.best_k(list(results.values())), tmp_path, "k.png")
    ax = plots.time_breakdown(r)
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"draft", "verify", "overhead",
                                                                   "plain decode step"}
    png(ax, tmp_path, "t.png")
    ax = plots.time_breakdown(r, per_token=True)
    assert ax.get_ylabel() == "ms per token"
    png(ax, tmp_path, "t2.png")
    ax = plots.throughput_tradeoff(list(results.values()), labels=list(results))
    assert len(ax.get_legend().get_texts()) == 6 and ax.get_xscale() == "log"
    png(ax, tmp_path, "x.png")


def test_hardware_comparison_and_advice(results, tmp_path):
    fig = plots.hardware_comparison(list(results.values()))
    assert len(fig.axes) == 3 and fig.axes[0].get_title() == "h100-sxm"
    png(fig, tmp_path, "hw.png")
    adv = advise(hardware="h100-sxm", model="llama-3.1-8b", method="draft", engine="vllm",
                 acceptance=Acceptance.from_rate(0.7), context=128,
                 batch_range=(1, 256), max_points=12)
    assert adv.off_above is not None
    fig = plots.advice(adv)
    assert len(fig.axes) == 2 and any(f"off above {adv.off_above}" == t.get_text() for t in fig.axes[0].texts)
    png(fig, tmp_path, "adv.png")


def test_draws_on_a_given_axes(results):
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, 2)
    assert plots.speedup_vs_batch([results["b300"]], ax=axs[0]) is axs[0]
    assert plots.time_breakdown(results["b300"], ax=axs[1], title="x") is axs[1] and axs[1].get_title() == "x"


@pytest.mark.parametrize("call, msg", [
    (lambda r: plots.speedup_vs_batch([]), "nothing to plot"),
    (lambda r: plots.speedup_vs_batch([1.0]), "expected SpeedupResult objects, got float"),
    (lambda r: plots.speedup_vs_batch([r, r], labels=["one"]), "1 labels for more results"),
    (lambda r: plots.speedup_heatmap([r]), "two or more acceptance rates"),
    (lambda r: plots.speedup_heatmap([r, speedup_curve(batch=[1, 2])]), "must share the same batch sizes"),
    (lambda r: plots.speedup_over_acceptance([0.5]), "at least two acceptance rates"),
    (lambda r: plots.speedup_over_acceptance([0.5, 0.6], acceptance=None), "drop acceptance="),
    (lambda r: plots.time_breakdown(speedup_curve(batch=[1], model="llama-3.1-405b")), "no feasible batch"),
    (lambda r: plots.advice(r), "expected an Advice"),
    (lambda r: plots.save(3, "x.png"), "cannot save a int"),
])
def test_bad_input(results, call, msg):
    with pytest.raises(ScenarioError, match=msg):
        call(results["h100-sxm"])


def test_save_errors(results, tmp_path):
    ax = plots.best_k([results["b300"]])
    with pytest.raises(OutputError, match="plot .*p.png: folder .*no/dir does not exist"):
        plots.save(ax, str(tmp_path / "no" / "dir" / "p.png"))
    with pytest.raises(ScenarioError, match="plot .*p.notaformat: unknown image format .notaformat"):
        plots.save(ax, str(tmp_path / "p.notaformat"))
    assert plots.save(ax, tmp_path / "noext").name == "noext.png"     # the path written is returned


def test_missing_matplotlib_is_a_clean_error(monkeypatch, results):
    real = builtins.__import__

    def fake(name, *a, **k):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(name)
        return real(name, *a, **k)
    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ScenarioError, match=r"pip install 'specroof\[plot\]'"):
        plots.speedup_vs_batch([results["b300"]])


def test_cli_curve_plot_still_works(tmp_path, capsys):
    from simulator.cli import main
    p = tmp_path / "curve.png"
    assert main(["curve", "--batch", "1,8,64", "--plot", str(p)]) == 0
    assert p.stat().st_size > 5000 and "crossover" in capsys.readouterr().out


def test_heatmap_handles_all_paying_grid(tmp_path):
    grid = plots.speedup_over_acceptance([0.8, 0.9], hardware="b300", model="llama-3.1-8b", method="eagle3",
                                         engine="ideal", k="auto", batch=[1, 2])
    assert np.all([r.speedup > 1 for r in grid])
    ax = plots.speedup_heatmap(grid)
    assert not any(t.get_text() == "break-even" for t in ax.texts)
    png(ax, tmp_path)
