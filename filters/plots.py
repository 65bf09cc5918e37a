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


def _save(fig: Any, path: Path, left: float = 0.06, bottom: float = 0.06) -> Path:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.subplots_adjust(left=left, right=0.98, bottom=bottom, top=0.9, wspace=0.25, hspace=0.4)
    fig.savefig(buf, format="png", dpi=72)
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
    ax.legend(fontsize=7, loc="upper right")


def filter_plots(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Length, style, reward and pattern-share plots, before vs after filtering."""
    b, a = report["before"]["distributions"], report["after"]["distributions"]
    fig, ax = _figure(1, 4, (16, 3.6))
    for i, (name, title) in enumerate((
        ("thought_words", "words per thought"), ("turns", "turns per trajectory"),
        ("style_score", "style score"), ("pointwise", "point-wise reward"),
    )):
        _hist(ax[0][i], {"before": b[name], "after": a[name]}, title)
    out = [_save(fig, directory / "filter.png", bottom=0.12)]
    prints = report["fingerprints"][:20]
    fig, axs = _figure(1, 1, (10, 1.5 + 0.3 * len(prints)))
    axp = axs[0][0]
    y = range(len(prints))
    axp.barh([i - 0.2 for i in y], [f["share_before"] for f in prints], 0.4, label="before")
    axp.barh([i + 0.2 for i in y], [f["share_after"] for f in prints], 0.4, label="after")
    axp.set_yticks(list(y), [f["pattern"][:48] for f in prints], fontsize=7)
    axp.invert_yaxis()
    axp.set_title("share of trajectories carrying each fingerprint pattern")
    axp.legend(fontsize=7, loc="upper right")
    out.append(_save(fig, directory / "filter_patterns.png", left=0.4))
    return out


def score_plots(report: Mapping[str, Any], directory: Path) -> list[Path]:
    """Reward component distributions of the score stage."""
    d = report["distributions"]
    fig, ax = _figure(1, 2, (13, 4))
    _lines(ax[0][0], {k: d[k] for k in ("f1", "evidence_recall", "format", "efficiency",
                                         "recovery", "pointwise")}, "point-wise components")
    _lines(ax[0][1], {k: d[k] for k in ("combined", "length_controlled")},
           "combined reward (z within question)")
    return [_save(fig, directory / "scores.png", bottom=0.12)]


def _lines(ax: Any, dists: Mapping[str, Mapping[str, Any]], title: str) -> None:
    for label, d in dists.items():
        if d["n"]:
            ax.stairs(d["hist"]["counts"], d["hist"]["edges"], label=label)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper right")
