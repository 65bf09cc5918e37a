"""The trajectories stage's report counts the choices its runs made among a page's names."""

from __future__ import annotations

import json

from hopforge.corpus.layout import BuildDir


def test_the_report_counts_every_runs_choices(local_build: BuildDir) -> None:
    report = json.loads((local_build.reports / "trajectories.json").read_text())
    notes = report["annotations"]
    assert notes["choices"] > 0  # the tiny build's chains and sets each make at least one
    assert notes["choices_with_skips"] <= notes["choices"]
    assert notes["runs_with_skipped_choices"] <= report["trajectories"]
    assert notes["choices_skipped_candidates"] >= notes["choices_with_skips"]
    assert notes["runs_answering_with_skips"] == 0  # a run that skips a candidate gives up
