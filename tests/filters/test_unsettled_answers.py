"""A "not found" given before every member of a set was checked, or on a set question at all (its
finding is "none"), is a give-up, not a finding: the
filter keeps such a run's answer as context, and no exported row trains it (checked from the
raw rows: the set's members against the doc_ids the run's calls named)."""

import json
from pathlib import Path

from hopforge.corpus.builtin import load_builtin_documents
from hopforge.export.records import ExportConfig
from hopforge.flows.stages.export import export_build
from hopforge.flows.stages.filters import filter_build
from hopforge.synth.records import Trajectory

from tests.helpers.spec_questions import SpecMaker
from tests.helpers.tiny import scored_build


def test_not_found_before_every_member_was_checked_is_never_trained(tmp_path: Path) -> None:
    docs = load_builtin_documents()
    made = [SpecMaker(docs, seed=seed).aggregation(8, unanswerable=True) for seed in range(6)]
    questions = [q for q in made if q is not None]
    build = scored_build(tmp_path / "b", docs, questions)
    filter_build(build)
    export_build(build, ExportConfig(validation_fraction=0.0))

    members = {q.qid: {s.doc for s in q.spec.steps if s.relation == "item"} for q in questions}
    runs = {}
    for path in sorted(build.trajectories.glob("part-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            t = Trajectory.from_row(json.loads(line))
            named = {str(x.call.arguments.get("doc_id")) for x in t.turns if x.call}
            runs[t.tid] = (t, members[t.qid] - named)
    gave_up = {tid for tid, (t, left) in runs.items()
               if t.final_answer.lower() in ("not found", "none") and left}
    assert gave_up, "no run gave up on a set: the faults made no give-up to test"

    decisions = {}
    for path in sorted(build.filtered.glob("part-*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            decisions[row["tid"]] = row
    for tid in gave_up:
        if decisions[tid]["kept"]:
            final = runs[tid][0].turns[-1].index
            assert final in decisions[tid]["context_turns"], decisions[tid]
            assert "answer-context:" in decisions[tid]["reason"]
            assert decisions[tid]["answer_trained"] is False

    golds = {q.qid: q.answer for q in questions}
    trained_answers = 0
    for path in sorted((build.export / "sft" / "hf").rglob("*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            row = json.loads(line)
            tid = row["metadata"]["tid"]
            for m in row["messages"]:
                calls = m.get("tool_calls") or []
                if m["role"] == "assistant" and m.get("weight", 1) and any(
                        c["function"]["name"] == "answer" for c in calls):
                    trained_answers += 1
                    assert tid not in gave_up, (tid, runs[tid][1])
                    said = [json.loads(c["function"]["arguments"]).get("text", "")
                            if isinstance(c["function"]["arguments"], str)
                            else c["function"]["arguments"].get("text", "") for c in calls]
                    # an empty finding is the gold's own ("none" for a list no member meets);
                    # the other ("not found" there) is a give-up
                    gold = golds[row["metadata"]["qid"]].lower()
                    assert all(str(a).lower() == gold for a in said
                               if str(a).lower() in ("not found", "none")), (tid, said)
    assert trained_answers > 0
