"""PNG plots of the score and filter reports, drawn from the report dictionaries (matplotlib Agg)."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hopforge.corpus.parts import atomic_write_bytes


def _figure(rows: int, cols: int, size: tuple[float, float]) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False)
    return fig, axes


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
    return path


def _hist(ax: Any, dists: Mapping[str, Mapping[str, Any]], title: str) -> None:
    for label, d in dists.items():
        edges, counts = d["hist"]["edges"], d["hist"]["counts"]
        if counts:
            ax.stairs(counts, edges, label=f"{label} (n={d['n']})", fill=label == "before",
                      alpha=0.5 if label == "before" else 1.0)
    ax.set_title(title)
    ax.legend(fontsize=7)


def filter_plots(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Length, style, reward and pattern-share plots, before vs after filtering."""
    b, a = report["before"]["distributions"], report["after"]["distributions"]
    fig, ax = _figure(2, 3, (13, 7))
    for i, (name, title) in enumerate((
        ("thought_words", "words per thought"), ("turns", "turns per trajectory"),
        ("style_score", "style score"), ("pointwise", "point-wise reward"),
        ("combined", "combined reward"),
    )):
        _hist(ax[i // 3][i % 3], {"before": b[name], "after": a[name]}, title)
    prints = report["fingerprints"][:15]
    axp = ax[1][2]
    y = range(len(prints))
    axp.barh([i + 0.2 for i in y], [f["share_before"] for f in prints], 0.4, label="before")
    axp.barh([i - 0.2 for i in y], [f["share_after"] for f in prints], 0.4, label="after")
    axp.set_yticks(list(y), [f["pattern"][:32] for f in prints], fontsize=6)
    axp.invert_yaxis()
    axp.set_title("share of trajectories carrying a pattern")
    axp.legend(fontsize=7)
    return [_save(fig, directory / "filter.png")]


def score_plots(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Reward component distributions of the score stage."""
    d = report["distributions"]
    names = ("f1", "evidence_recall", "format", "efficiency", "recovery", "pointwise",
             "strength", "combined", "length_controlled")
    fig, ax = _figure(3, 3, (12, 9))
    for i, name in enumerate(names):
        _hist(ax[i // 3][i % 3], {"all": d[name]}, name)
    return [_save(fig, directory / "scores.png")]
