"""The dataset card's plots: every family's length on the axis it has, every termination shown."""

from __future__ import annotations

from pathlib import Path

from hopforge.export.card import _length_figure, plot_distributions
from hopforge.export.records import Distributions

DIST = Distributions(
    hops=(2, 2, 3, 0, 0, 4), turns=(10, 20, 30, 60, 140, 22),
    kinds=("chain", "chain", "intersection", "aggregation", "aggregation", "comparison"),
    min_calls=(7, 9, 12, 60, 140, 15), terminations=("answer",) * 5 + ("max_turns",),
    rewards={"combined": (1.0, 0.5, 0.2)})


def test_aggregations_are_drawn_by_tool_calls_not_as_zero_hops() -> None:
    hops_ax, calls_ax = _length_figure(DIST).axes
    labels = [t.get_text() for t in hops_ax.get_xticklabels()]
    assert labels == ["2", "3", "4"]  # no "0" bar for the aggregations
    assert sum(p.get_height() for p in hops_ax.patches) == 4
    assert sum(p.get_height() for p in calls_ax.patches) == 2  # the two aggregations
    assert calls_ax.get_xlabel() == "min_calls"


def test_an_export_without_aggregations_says_so() -> None:
    only_chains = Distributions(hops=(2, 3), kinds=("chain", "chain"), min_calls=(7, 9))
    _, calls_ax = _length_figure(only_chains).axes
    assert [t.get_text() for t in calls_ax.texts] == ["no aggregations in this export"]


def test_the_card_plots_are_written_as_png(tmp_path: Path) -> None:
    names = plot_distributions(DIST, tmp_path)
    assert names == ["hops.png", "turns.png", "terminations.png", "rewards.png"]
    for name in names:
        assert (tmp_path / name).read_bytes().startswith(b"\x89PNG")
