"""The eval's PNG plots: success against budget, and error onset against budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.parts import atomic_write_bytes
from hopforge.filters.eval_metrics import ONSET_KINDS


def _figure(rows: int, cols: int, size: tuple[float, float]) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    return fig, fig.subplots(rows, cols, squeeze=False)


def _save(fig: Any, path: Path, left: float, bottom: float) -> Path:
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    fig.subplots_adjust(left=left, right=0.98, bottom=bottom, top=0.92, wspace=0.3, hspace=0.45)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    atomic_write_bytes(path, buf.getvalue())
    return path


def _by_faults(runs: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in runs:
        out.setdefault(r["faults"], []).append(r)
    return {k: sorted(v, key=lambda r: r["budget"]) for k, v in out.items()}


def eval_plots(runs: Sequence[Mapping[str, Any]], directory: Path) -> list[Path]:
    """success.png and onset.png in `directory`; returns their paths."""
    groups = _by_faults(runs)
    budgets = sorted({r["budget"] for r in runs})
    colors = {f: f"C{i}" for i, f in enumerate(groups)}  # one colour per fault mix in both plots
    fig, ax = _figure(1, 1, (6.4, 4.2))
    a = ax[0][0]
    for faults, rows in groups.items():
        pts = [(r["budget"], r["success"]) for r in rows if r["success"] is not None]
        if pts:
            a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=faults,
                   color=colors[faults])
    a.set_xscale("log")
    a.set_xlim(budgets[0] / 1.5, budgets[-1] * 1.5)
    a.set_xticks(budgets, [str(b) for b in budgets])
    a.set_ylim(-0.03, 1.03)
    a.set_xlabel("turn budget (tool calls)")
    a.set_ylabel("success")
    a.set_title("success against budget")
    a.legend(title="faults", fontsize=8, loc="upper right")
    out = [_save(fig, directory / "success.png", left=0.12, bottom=0.12)]
    fig, axes = _figure(2, 3, (13, 7))
    for i, kind in enumerate(ONSET_KINDS):
        a = axes[i // 3][i % 3]
        for faults, rows in groups.items():
            pts = [(r["budget"], r["onset"][kind]) for r in rows if r["onset"][kind] is not None]
            if pts:
                a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=faults,
                       color=colors[faults])
        a.set_xscale("log")
        a.set_xlim(budgets[0] / 1.5, budgets[-1] * 1.5)
        a.set_xticks(budgets, [str(b) for b in budgets])
        if not a.get_lines():
            a.text(0.5, 0.5, "never happened", ha="center", va="center", transform=a.transAxes)
            a.set_yticks([])
        a.set_title(f"onset: {kind.replace('_', ' ')}")
        a.set_xlabel("turn budget")
        a.set_ylabel("median first turn")
        if a.get_legend_handles_labels()[0]:
            a.legend(title="faults", fontsize=7, loc="upper right")
    for j in range(len(ONSET_KINDS), 6):
        axes[j // 3][j % 3].axis("off")
    out.append(_save(fig, directory / "onset.png", left=0.06, bottom=0.08))
    return out
