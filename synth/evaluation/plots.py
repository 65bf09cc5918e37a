"""The eval's PNG plots: success against budget, and error onset against budget.

matplotlib is imported when a plot is drawn: `hopforge` imports this module to build its parser,
and every command would otherwise pay for loading it."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.parts import atomic_write_bytes
from hopforge.synth.evaluation.metrics import ONSET_KINDS


def _figure(rows: int, cols: int, size: tuple[float, float]) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    return fig, fig.subplots(rows, cols, squeeze=False)


def _save(fig: Any, path: Path, left: float, bottom: float, right: float = 0.98,
          top: float = 0.9) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=left, right=right, bottom=bottom, top=top, wspace=0.3, hspace=0.45)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    atomic_write_bytes(path, buf.getvalue())
    return path


def _by_faults(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        out.setdefault(r["faults"], []).append(r)
    return {k: sorted(v, key=lambda r: r["budget"]) for k, v in out.items()}


def _budget_axis(a: Any, budgets: Sequence[int]) -> None:
    a.set_xscale("log")
    a.set_xlim(budgets[0] / 1.5, budgets[-1] * 1.5)
    a.set_xticks(budgets, [str(b) for b in budgets])


def eval_plots(runs: Sequence[Mapping[str, Any]], directory: Path) -> list[Path]:
    """success.png and onset.png in `directory`; returns their paths."""
    fig = success_figure(runs)
    out = [_save(fig, directory / "success.png", left=0.1, bottom=0.12, right=0.8)]
    fig, height = onset_figure(runs)
    out.append(_save(fig, directory / "onset.png", left=0.08, bottom=0.65 / height,
                     top=1 - 0.75 / height))
    return out


def success_figure(runs: Sequence[Mapping[str, Any]]) -> Any:
    """Success against budget, a line per fault mix, the legend right of the axes."""
    groups = _by_faults(runs)
    budgets = sorted({r["budget"] for r in runs})
    colors = {f: f"C{i}" for i, f in enumerate(groups)}  # one colour per fault mix in both plots
    fig, ax = _figure(1, 1, (7.6, 4.2))
    a = ax[0][0]
    for faults, rows in groups.items():
        pts = [(r["budget"], r["success"]) for r in rows if r["success"] is not None]
        if pts:
            a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=faults,
                   color=colors[faults])
    _budget_axis(a, budgets)
    a.set_ylim(-0.03, 1.03)
    a.set_xlabel("turn budget (tool calls)")
    a.set_ylabel("success")
    a.set_title("success against budget")
    if a.get_lines():
        a.legend(title="faults", fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def onset_figure(runs: Sequence[Mapping[str, Any]]) -> tuple[Any, float]:
    """Error onset against budget: a panel per kind of error some run made, and a panel with
    the legend and, in words, the kinds no run made; the figure and its height in inches."""
    groups = _by_faults(runs)
    budgets = sorted({r["budget"] for r in runs})
    colors = {f: f"C{i}" for i, f in enumerate(groups)}

    def points(rows: Sequence[Mapping[str, Any]], kind: str) -> list[tuple[int, float]]:
        return [(r["budget"], r["onset"][kind]) for r in rows if r["onset"][kind] is not None]

    happened = [k for k in ONSET_KINDS if any(points(rows, k) for rows in groups.values())]
    never = [k for k in ONSET_KINDS if k not in happened]
    cols = min(3, len(happened) + 1)
    rows_n = -(-(len(happened) + 1) // cols)
    height = 3.5 * rows_n + 1.2
    fig, axes = _figure(rows_n, cols, (4.4 * cols, height))
    flat = [axes[i // cols][i % cols] for i in range(rows_n * cols)]
    for a, kind in zip(flat, happened, strict=False):
        for faults, rows in groups.items():
            pts = points(rows, kind)
            if pts:
                a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=faults,
                       color=colors[faults])
        _budget_axis(a, budgets)
        a.set_title(f"onset: {kind.replace('_', ' ')}")
        a.set_xlabel("turn budget")
        a.set_ylabel("median first turn")
    key = flat[len(happened)]
    key.axis("off")
    for a in flat[len(happened) + 1:]:
        a.axis("off")
    handles = {label: h for a in flat[:len(happened)]
               for h, label in zip(*a.get_legend_handles_labels(), strict=True)}
    if handles:
        key.legend(list(handles.values()), list(handles), title="faults", loc="upper left",
                   fontsize=9)
    words = ("never happened in any run:\n" + "\n".join(k.replace("_", " ") for k in never)
             if never else "")
    if not happened:
        words = "no run made any of these errors:\n" + "\n".join(
            k.replace("_", " ") for k in ONSET_KINDS)
    if words:
        key.text(0.0, 0.45 if handles else 0.95, words, va="top", ha="left", fontsize=9,
                 transform=key.transAxes)
    fig.suptitle("error onset: the median turn of the first error of each kind")
    return fig, height
