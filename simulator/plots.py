"""Plots shared by the CLI's --plot and the notebooks (matplotlib, imported lazily; Agg unless a notebook's inline
backend is active).

Every function takes SpeedupResult objects (or an Advice), draws on `ax` when given, and returns the Axes (or the
Figure for multi-panel plots). Only infeasible points are hidden; nothing here computes a time or a FLOP.

    speedup_vs_batch      speedup per method / hardware, crossover marked
    speedup_heatmap       speedup over batch x acceptance with the break-even (speedup = 1) contour
    best_k                best draft depth k per batch
    time_breakdown        stacked draft / verify / overhead time per step against the plain decode step
    throughput_tradeoff   tokens/s per GPU against tokens/s per user, with and without speculation
    hardware_comparison   one panel per device (H100 vs B300 vs GB200 NVL72 ...) on a shared speedup axis
    advice                speedup and scheduled k of a `simulator.advise.Advice`
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .acceptance import Acceptance
from .errors import ScenarioError
from .files import write_atomic
from .speedup import speedup_curve


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise ScenarioError("plotting needs matplotlib: pip install 'specroof[plot]'") from None
    get = getattr(matplotlib.rcParams, "_get_backend_or_none", None)
    current = (get() if get else None) or os.environ.get("MPLBACKEND", "")
    if "inline" not in str(current).lower():       # keep a notebook's inline backend; files everywhere else
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _axes(ax, figsize=(7, 4.2)):
    if ax is not None:
        return ax
    _, ax = _plt().subplots(figsize=figsize)
    return ax


def _label(r, labels: Sequence[str] | None, i: int) -> str:
    if labels:
        if len(labels) <= i:
            raise ScenarioError(f"{len(labels)} labels for more results; give one label per result")
        return labels[i]
    s = r.scenario
    return f"{s['method']} on {s['hardware']}"


def _check_results(results) -> list[Any]:
    rs = list(results) if isinstance(results, (list, tuple)) else [results]
    if not rs:
        raise ScenarioError("nothing to plot: pass at least one SpeedupResult")
    for r in rs:
        if not hasattr(r, "speedup") or not hasattr(r, "batch"):
            raise ScenarioError(f"expected SpeedupResult objects, got {type(r).__name__}")
    return rs


def _marker(n: int) -> str | None:
    return "o" if n <= 40 else None


def speedup_vs_batch(results: list[Any], labels: list[str] | None = None, ax=None, title: str | None = None):
    """Speedup against batch size for one or more SpeedupResults, each crossover marked (the largest batch with
    speedup >= 1, when a larger batch that fits loses)."""
    rs = _check_results(results)
    ax = _axes(ax)
    for i, r in enumerate(rs):
        ok = r.feasible
        ln, = ax.plot(r.batch[ok], r.speedup[ok], marker=_marker(int(ok.sum())), ms=4, label=_label(r, labels, i))
        # Mark the crossover only where speculation stops paying at a batch that still fits.
        if r.crossover_batch is not None and (ok & (r.batch > r.crossover_batch)).any():
            j = list(r.batch).index(r.crossover_batch)
            ax.axvline(r.crossover_batch, ls=":", color=ln.get_color(), alpha=0.6)
            ax.annotate(f"crossover {r.crossover_batch}", (r.batch[j], r.speedup[j]), textcoords="offset points",
                        xytext=(4, 6), fontsize=8, color=ln.get_color())
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("speedup vs. plain decoding")
    ax.set_title(title or "Speculative decoding speedup (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def speedup_over_acceptance(alphas: Sequence[float], **curve_kwargs) -> list[Any]:
    """`speedup_curve` once per i.i.d. acceptance rate in `alphas` (same other arguments): input for the heatmap."""
    if "acceptance" in curve_kwargs:
        raise ScenarioError("speedup_over_acceptance sets the acceptance itself; drop acceptance=")
    al = list(alphas)
    if len(al) < 2:
        raise ScenarioError("speedup_over_acceptance needs at least two acceptance rates")
    return [speedup_curve(acceptance=Acceptance.from_rate(a), **curve_kwargs) for a in al]


def speedup_heatmap(results: list[Any], ax=None, title: str | None = None):
    """Speedup over batch (x) and acceptance rate (y) with the break-even contour (speedup = 1).

    `results`: SpeedupResults on the same batches that differ in acceptance (see `speedup_over_acceptance`).
    """
    rs = _check_results(results)
    if len(rs) < 2:
        raise ScenarioError("a heatmap needs results at two or more acceptance rates")
    B = rs[0].batch
    if any(r.batch.shape != B.shape or not np.array_equal(r.batch, B) for r in rs):
        raise ScenarioError("heatmap results must share the same batch sizes")
    order = np.argsort([r.scenario["acceptance_alpha"] for r in rs])
    alphas = np.array([rs[i].scenario["acceptance_alpha"] for i in order])
    Z = np.array([np.where(rs[i].feasible, rs[i].speedup, np.nan) for i in order])
    plt = _plt()
    ax = _axes(ax, (7.5, 4.5))
    x = np.log2(B.astype(float))
    lim = max(float(np.nanmax(np.abs(np.log2(Z)))) if np.isfinite(Z).any() else 1.0, 0.1)
    from matplotlib.colors import TwoSlopeNorm
    vmax = 2.0 ** lim
    mesh = ax.pcolormesh(x, alphas, Z, shading="nearest", cmap="RdBu",
                         norm=TwoSlopeNorm(vcenter=1.0, vmin=min(1.0 / vmax, 0.99), vmax=max(vmax, 1.01)))
    plt.colorbar(mesh, ax=ax, label="speedup")
    fz = Z[np.isfinite(Z)]
    if len(B) > 1 and fz.size and fz.min() < 1.0 < fz.max():
        cs = ax.contour(x, alphas, np.ma.masked_invalid(Z), levels=[1.0], colors="k", linewidths=1.5)
        ax.clabel(cs, fmt={1.0: "break-even"}, fontsize=8)
    ticks = x[:: max(1, len(x) // 9)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{int(round(2 ** t))}" for t in ticks])
    if not np.isfinite(Z).all():
        ax.set_facecolor("0.85")
        ax.text(0.99, 0.01, "grey: does not fit", transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("acceptance rate alpha")
    s = rs[0].scenario
    ax.set_title(title or f"{s['method']} on {s['model']} / {s['hardware']}: speedup (prediction)")
    return ax


def best_k(results: list[Any], labels: list[str] | None = None, ax=None, title: str | None = None):
    """Best draft depth k per batch (step plot) for one or more SpeedupResults."""
    rs = _check_results(results)
    ax = _axes(ax)
    for i, r in enumerate(rs):
        ok = r.feasible
        ax.step(r.batch[ok], r.k[ok], where="post", marker=_marker(int(ok.sum())), ms=4, label=_label(r, labels, i))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("best draft depth k")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_title(title or "Best k per batch (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return ax


def time_breakdown(result: Any, ax=None, title: str | None = None, per_token: bool = False):
    """Stacked draft / verify / overhead time of one speculative step per batch, against the plain decode step.

    per_token: divide by the tokens each step yields (speculative: tokens_per_step; plain: 1), in ms per token.
    """
    r = _check_results(result)[0]
    ok = r.feasible
    if not ok.any():
        raise ScenarioError("no feasible batch to plot")
    ax = _axes(ax)
    B = r.batch[ok]
    div = r.tokens_per_step[ok] if per_token else 1.0
    parts = [r.draft_s[ok] / div * 1e3, r.verify_s[ok] / div * 1e3, r.overhead_s[ok] / div * 1e3]
    pos = np.arange(B.size)
    bottom = np.zeros(B.size)
    for vals, lab in zip(parts, ("draft", "verify", "overhead")):
        ax.bar(pos, vals, bottom=bottom, label=lab, width=0.8)
        bottom += vals
    ax.plot(pos, r.base_step_s[ok] * 1e3, "k--", marker="_", ms=14, label="plain decode step")
    step = max(1, B.size // 12)
    ax.set_xticks(pos[::step])
    ax.set_xticklabels([str(int(b)) for b in B[::step]])
    ax.set_xlabel("batch size (sequences)")
    ax.set_ylabel("ms per token" if per_token else "ms per step")
    s = r.scenario
    ax.set_title(title or f"Step time split, {s['method']} on {s['hardware']} (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    return ax


def throughput_tradeoff(results: list[Any], labels: list[str] | None = None, ax=None, title: str | None = None,
                        annotate: bool = True):
    """Tokens/s per GPU (y) against tokens/s per user (x), with speculation (solid) and without (dashed)."""
    rs = _check_results(results)
    ax = _axes(ax)
    for i, r in enumerate(rs):
        ok = r.feasible
        bok = r.base_feasible
        lab = _label(r, labels, i)
        ln, = ax.plot(r.tokens_per_s_per_user[ok], r.tokens_per_s_per_gpu[ok], marker=_marker(int(ok.sum())),
                      ms=4, label=f"{lab}, speculative")
        ax.plot(r.base_tokens_per_s_per_user[bok], r.base_tokens_per_s_per_gpu[bok], ls="--",
                color=ln.get_color(), alpha=0.7, label=f"{lab}, plain decoding")
        if annotate:
            idx = np.flatnonzero(ok)
            for j in idx[:: max(1, idx.size // 6)]:
                ax.annotate(f"B={int(r.batch[j])}", (r.tokens_per_s_per_user[j], r.tokens_per_s_per_gpu[j]),
                            textcoords="offset points", xytext=(3, 3), fontsize=7, color=ln.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("tokens/s per GPU")
    ax.set_title(title or "Throughput vs. interactivity (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return ax


def frontier(result: Any, ax=None, title: str | None = None):
    """A `frontier.FrontierResult`: every searched point (faint), the Pareto frontier with speculation (solid) and
    without (dashed), and the interactivity targets (vertical lines, labelled with the on/off throughput ratio)."""
    if not hasattr(result, "on") or not hasattr(result, "off"):
        raise ScenarioError(f"frontier plot: expected a FrontierResult, got {type(result).__name__}")
    ax = _axes(ax)
    for mode, ls in (("on", "-"), ("off", "--")):
        pts = [p for p in result.points if p.mode == mode]
        ax.scatter([p.tokens_per_s_per_user for p in pts], [p.tokens_per_s_per_gpu for p in pts], s=6, alpha=0.25)
        front = getattr(result, mode)
        ax.plot([p.tokens_per_s_per_user for p in front], [p.tokens_per_s_per_gpu for p in front], ls=ls,
                marker="o", ms=3, drawstyle="steps-post",
                label=f"speculation {'on' if mode == 'on' else 'off'} ({result.scenario['method']})"
                if mode == "on" else "speculation off")
    for t in result.targets:
        ax.axvline(t.tokens_per_s_per_user, color="grey", lw=0.8, ls=":")
        if t.ratio is not None:
            ax.annotate(f"{t.ratio:.2f}x", (t.tokens_per_s_per_user, ax.get_ylim()[1]), textcoords="offset points",
                        xytext=(2, -12), fontsize=8, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU")
    sc = result.scenario
    ax.set_title(title or f"{sc['model']} on {sc['hardware']}: frontier (prediction)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    return ax


def hardware_comparison(results: list[Any], labels: list[str] | None = None, title: str | None = None):
    """Side-by-side speedup-vs-batch panels (one per result, e.g. H100 vs B300 vs GB200 NVL72), shared y axis.

    Returns the Figure."""
    rs = _check_results(results)
    plt = _plt()
    fig, axs = plt.subplots(1, len(rs), figsize=(4.2 * len(rs), 3.8), sharey=True, squeeze=False)
    for i, (r, ax) in enumerate(zip(rs, axs[0])):
        lab = labels[i] if labels else r.scenario["hardware"]
        speedup_vs_batch([r], [lab], ax=ax, title=lab)
        if i:
            ax.set_ylabel("")
    fig.suptitle(title or "Speedup by hardware (prediction)")
    fig.tight_layout()
    return fig


def advice(adv: Any, title: str | None = None):
    """Two panels for a `simulator.advise.Advice`: speedup (best k per batch, the single fixed k, and 1 where the
    schedule is off) and k per batch (best and scheduled). Returns the Figure."""
    if not hasattr(adv, "scheduled_k") or not hasattr(adv, "result"):
        raise ScenarioError(f"expected an Advice from simulator.advise.advise, got {type(adv).__name__}")
    plt = _plt()
    r = adv.result
    ok = r.feasible
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7.5, 6.2), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    mk = _marker(int(ok.sum()))
    a1.plot(r.batch[ok], r.speedup[ok], marker=mk, ms=3, label="best k per batch")
    fs = np.isfinite(adv.fixed_speedup)
    if fs.any():
        a1.plot(r.batch[fs], adv.fixed_speedup[fs], ls="--", label=f"one k = {adv.fixed_k} everywhere")
    sched = np.where(adv.scheduled_k > 0, r.speedup, 1.0)
    a1.plot(r.batch[ok], sched[ok], color="k", lw=1.2, alpha=0.6, label="schedule (1 = off)")
    if adv.off_above is not None:
        a1.axvline(adv.off_above, color="r", ls=":", alpha=0.8)
        a1.annotate(f"off above {adv.off_above}", (adv.off_above, 1.0), textcoords="offset points", xytext=(4, 8),
                    fontsize=8, color="r")
    a1.axhline(1.0, color="k", lw=0.8)
    a1.set_ylabel("speedup")
    a1.legend(fontsize=8)
    a1.grid(alpha=0.3)
    s = r.scenario
    a1.set_title(title or f"{s['model']} / {s['method']} on {s['hardware']}, {s['engine']} (prediction)")
    a2.step(r.batch[ok], r.k[ok], where="post", label="best k")
    a2.step(r.batch, adv.scheduled_k, where="post", ls="--", label="scheduled k (0 = off)")
    a2.set_xscale("log", base=2)
    a2.set_xlabel("batch size (sequences)")
    a2.set_ylabel("k")
    a2.yaxis.get_major_locator().set_params(integer=True)
    a2.legend(fontsize=8)
    a2.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def save(ax_or_fig, path: str | Path, close: bool = False) -> Path:
    """Write an Axes' figure (or a Figure) to `path`, atomically; the format is the suffix (.png when there is none).
    Returns the path written. Close the figure when `close`."""
    fig = getattr(ax_or_fig, "figure", None) if not hasattr(ax_or_fig, "savefig") else ax_or_fig
    if fig is None:
        raise ScenarioError(f"cannot save a {type(ax_or_fig).__name__}; expected a matplotlib Axes or Figure")
    p = Path(path)
    if not p.suffix:
        p = p.with_suffix(".png")
    kind = p.suffix[1:].lower()
    try:
        if kind not in fig.canvas.get_supported_filetypes():
            raise ScenarioError(f"plot {p}: unknown image format .{kind}; expected one of "
                                f"{', '.join(sorted(fig.canvas.get_supported_filetypes()))}")
        fig.tight_layout()
        return write_atomic(p, lambda tmp: fig.savefig(tmp, dpi=120, format=kind), "plot")
    finally:
        if close:
            _plt().close(fig)
