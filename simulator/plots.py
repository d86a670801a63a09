"""Plots shared by the CLI's --plot and the notebooks (matplotlib, imported lazily)."""

from __future__ import annotations

from typing import Any

from .errors import ScenarioError


def _plt():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ScenarioError("plotting needs matplotlib: pip install 'specroof[plot]'") from None
    return plt


def speedup_vs_batch(results: list[Any], labels: list[str] | None = None, ax=None):
    """Speedup against batch size for one or more SpeedupResults, with each crossover marked."""
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.2))
    for i, r in enumerate(results):
        ok = r.feasible
        lab = labels[i] if labels else f"{r.scenario['method']} on {r.scenario['hardware']}"
        ax.plot(r.batch[ok], r.speedup[ok], marker="o", label=lab)
        if r.crossover_batch is not None:
            j = list(r.batch).index(r.crossover_batch)
            ax.axvline(r.crossover_batch, ls=":", color=ax.lines[-1].get_color(), alpha=0.6)
            ax.annotate(f"crossover {r.crossover_batch}", (r.batch[j], r.speedup[j]), textcoords="offset points",
                        xytext=(4, 6), fontsize=8)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("speedup vs. plain decoding")
    ax.set_title("Speculative decoding speedup (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def save(ax, path: str) -> None:
    ax.figure.tight_layout()
    ax.figure.savefig(path, dpi=120)
