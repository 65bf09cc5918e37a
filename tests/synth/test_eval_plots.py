"""The eval's plots read: legends off the data, a panel only for errors that happened, the
others named in words."""

from __future__ import annotations

from pathlib import Path

from hopforge.synth.evaluation.metrics import ONSET_KINDS
from hopforge.synth.evaluation.plots import eval_plots, onset_figure, success_figure


def _runs() -> list[dict]:
    runs = []
    for faults, base in (("none", 0.9), ("light", 0.7), ("heavy", 0.5)):
        for budget in (10, 50, 100, 600):
            onset = dict.fromkeys(ONSET_KINDS)
            if faults != "none":
                onset["repeat"] = budget // 10 + 3
            runs.append({"faults": faults, "budget": budget, "onset": onset,
                         "success": 1.0 if budget == 100 and faults == "none" else base})
    return runs


def test_success_legend_is_outside_the_axes() -> None:
    fig = success_figure(_runs())
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert [t.get_text() for t in legend.get_texts()] == ["none", "light", "heavy"]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    box, axes_box = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= axes_box.x1  # right of the data, so the "none" line at 100 shows


def test_onset_draws_what_happened_and_names_what_did_not() -> None:
    fig, _ = onset_figure(_runs())
    titled = [a.get_title() for a in fig.axes if a.get_title()]
    assert titled == ["onset: repeat"]
    key = next(a for a in fig.axes if a.get_legend() is not None)
    assert not key.get_lines() and not key.axison  # a panel of its own, no data under it
    words = " ".join(t.get_text() for t in key.texts)
    for kind in ONSET_KINDS:
        if kind != "repeat":
            assert kind.replace("_", " ") in words


def test_both_plots_are_written(tmp_path: Path) -> None:
    paths = eval_plots(_runs(), tmp_path)
    assert [p.name for p in paths] == ["success.png", "onset.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in paths)
