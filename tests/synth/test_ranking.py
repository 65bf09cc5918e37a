"""The ranking family (three documents compared) on the built-in Wikipedia paragraphs: made only
when a build asks for it, its gold answers re-derived from the raw documents by independent
code, and solved fairly by the scripted teacher through the comparison plan."""

import asyncio
import random
from typing import Any

from hopforge.corpus.builtin import load_builtin_documents
from hopforge.corpus.search import Searcher
from hopforge.synth.answers import answers_match
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.families import KINDS
from hopforge.synth.questions.stage import generate_questions
from hopforge.synth.records import Question
from hopforge.synth.trajectories.scripted import ScriptedConfig, ScriptedTeacher
from hopforge.synth.trajectories.stage import TrajectoryConfig, run_trajectories

from tests.helpers.rederive import Reader, rederive


def test_rankings_are_asked_for_rederived_and_solved_fairly() -> None:
    assert "ranking" in KINDS and "ranking" not in QuestionConfig().kinds
    docs = load_builtin_documents("builtin:wiki")
    searcher = Searcher.from_documents(docs, dense=False)
    # rankings are scarce here (a side's clue must pick it among every name its start shows,
    # and no date may be the clue): one run of the stage makes 1 to 8 of them by its seed, so
    # the supply is measured over three
    ok = list({q.qid: q for seed in (0, 1, 2) for q in asyncio.run(generate_questions(
        docs, searcher, n=8, rng=random.Random(seed), config=QuestionConfig(kinds=("ranking",))))
        if not q.rejected}.values())
    assert len(ok) >= 6
    reader = Reader(d.to_row() for d in docs)
    title = {d.doc_id: d.title for d in docs}
    for q in ok:
        assert q.kind == "ranking" and q.spec is not None
        sides = [s for s in q.spec.steps if s.relation == "compare"]
        starts = [s for s in q.spec.steps if s.relation == "start"]
        assert len(sides) == 3 and len(starts) == 3
        assert all(title[s.doc] in q.question for s in starts), q.question
        assert not any(title[s.doc] in q.question for s in sides), q.question
        assert rederive(q.to_row(), reader) == (q.answer, ""), q.question

    def teacher(q: Question, sample: int, seed: int) -> Any:
        return ScriptedTeacher(q, searcher.documents, seed=seed,
                               config=ScriptedConfig(early_answer=0.0))

    runs = asyncio.run(run_trajectories(ok, searcher, teacher,
                                        config=TrajectoryConfig(samples=2)))
    calls = [x for t in runs for x in t.turns if x.call is not None]
    assert [(x.call, x.unseen) for x in calls if not x.justified] == []
    looked_at = [{x.call.arguments.get("doc_id") for x in t.turns if x.call} for t in runs]
    wanted = [q for q in ok for _ in range(2)]
    for t, q, seen in zip(runs, wanted, looked_at, strict=True):  # all three sides were checked
        assert {s.doc for s in q.spec.steps if s.relation == "compare"} <= seen, t.tid
    right = sum(answers_match(t.final_answer, q.answer, q.answer_aliases)
                for t, q in zip(runs, wanted, strict=True))
    assert right >= 0.75 * len(runs)
