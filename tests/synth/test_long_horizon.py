"""Long runs on FOLDOC: aggregation ladders of 50 to 600 tool calls with faults on, in budget."""

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.search import Searcher
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.trajectories.faults import FaultConfig
from hopforge.synth.trajectories.scripted import ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

from tests.helpers.spec_questions import SpecMaker

LADDER = ((20, 30, "links"), (40, 60, "links"), (140, 170, "links2"), (300, 360, "links2"))


@pytest.fixture(scope="module")
def foldoc_runs(shared_data: Path) -> tuple[list[Question], list[Trajectory], TrajectoryConfig]:
    docs = ingest_paths([shared_data / "dictd" / "foldoc"]).documents
    searcher = Searcher.from_documents(docs, dense=False)
    maker = SpecMaker(docs, seed=1)
    questions = [q for lo, hi, scope in LADDER
                 if (q := maker.aggregation(lo, scope=scope, max_items=hi)) is not None]
    config = TrajectoryConfig(samples=2, max_turns=1200, keep_results=5, checkpoint_every=16,
                              faults=FaultConfig.uniform(0.1, timeout_delay_s=0.0))

    def factory(q: Question, sample: int, seed: int) -> Any:
        return ScriptedTeacher(q, searcher.documents, seed=seed)

    runs = asyncio.run(run_trajectories(questions, searcher, factory, config=config))
    return questions, runs, config


@pytest.mark.slow
def test_ladders_reach_50_to_600_calls_fairly(foldoc_runs: Any) -> None:
    questions, runs, _ = foldoc_runs
    assert len(questions) == len(LADDER)
    calls = sorted(len(t.turns) for t in runs)
    assert calls[-1] >= 600 and any(300 <= n < 600 or n >= 300 for n in calls)
    assert sum(n >= 50 for n in calls) >= len(calls) // 2 and any(100 <= n for n in calls)
    assert all(t.termination == "answer" for t in runs if len(t.turns) >= 50)
    assert all(x.justified for t in runs for x in t.turns)
    faulted = [x for t in runs for x in t.turns if x.fault is not None]
    assert len(faulted) >= 50


@pytest.mark.slow
def test_context_stays_in_budget_with_checkpoints(foldoc_runs: Any) -> None:
    _, runs, config = foldoc_runs
    longest = max(runs, key=lambda t: len(t.turns))
    assert 0 < longest.peak_context_tokens <= config.context_tokens
    assert len(longest.checkpoints) >= len(longest.turns) // config.checkpoint_every - 1
    state = longest.checkpoints[-1]
    assert any("checked" in c for c in state.open_constraints)
    answers = {q.qid: q.answer for q in foldoc_runs[0]}
    right = sum(t.final_answer == answers[t.qid] for t in runs)
    assert right >= 2  # a count is wrong when BM25 never lists one item by the name read
