"""The eval's stops: a run that keeps changing its plan without new evidence is handed off.

The agent loop already ends a run that repeats one call past `repeat_limit` (termination
`repetition`). The eval adds the plan-change stop: a plan change is a call whose purpose (any
search, or reading one document) differs from the call before it; when more than
`plan_change_limit` of them come in a row without a task document shown or read for the first
time, the run ends there (termination `no_progress`). Both are handoffs: never a success, and
the state at that point is kept beside the run. Calls after the stop are cut from the
trajectory, which reads exactly as if the loop had stopped there (a call never depends on
later ones).
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace
from typing import Any

from hopforge.corpus.tools import is_final, is_read, is_search, search_query
from hopforge.synth.annotate import call_intent, normalize_call
from hopforge.synth.evaluation.tasks import tracked_docs
from hopforge.synth.records import Question, Trajectory, Turn

HANDOFFS: tuple[str, ...] = ("repetition", "no_progress")
_DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")


def task_docs(question: Question) -> frozenset[str]:
    """Every document the task is built on: evidence, answer, start, steps and items."""
    docs = set(tracked_docs(question)) | set(question.evidence)
    if question.answer_doc:
        docs.add(question.answer_doc)
    spec = question.spec
    if spec is not None:
        docs.update(d for d in (spec.start, spec.target, *spec.items) if d)
        docs.update(s.doc for s in spec.steps if s.doc)
    return frozenset(docs)


def shown_docs(turn: Turn) -> tuple[str, ...]:
    """The documents a turn's result showed (none when it failed or came back empty)."""
    if turn.call is None or not turn.args_valid or turn.error:
        return ()
    if turn.fault is not None and turn.fault.kind in ("empty", "timeout"):
        return ()
    if is_read(turn.call.name):
        return (str(turn.call.arguments.get("doc_id", "")),)
    return tuple(_DOC_ID.findall(turn.result))


def plan_change_stop(trajectory: Trajectory, question: Question, limit: int) -> Trajectory:
    """`trajectory`, cut and ended as `no_progress` where the plan-change stop fires."""
    docs = task_docs(question)
    seen: set[str] = set()
    read: set[str] = set()
    changes, last_intent = 0, ""
    for i, turn in enumerate(trajectory.turns):
        shown = shown_docs(turn)
        new = [d for d in shown if d in docs and d not in seen]
        seen.update(new)
        if turn.call is not None and is_read(turn.call.name):
            new += [d for d in shown if d in docs and d not in read]  # read for the first time
            read.update(shown)
        if turn.call is None or not turn.args_valid or is_final(turn.call.name):
            continue
        intent = call_intent(turn.call)
        if new:
            changes = 0
        elif last_intent and intent != last_intent:
            changes += 1
        last_intent = intent
        if changes > limit:
            kept = trajectory.turns[: i + 1]
            return replace(
                trajectory, turns=kept, final_answer="", termination="no_progress",
                checkpoints=tuple(c for c in trajectory.checkpoints if c.turn <= turn.index),
                reason=f"{changes} plan changes in a row without new evidence "
                f"(limit {limit}) at call {i + 1}",
            )
    return trajectory


def handoff_state(trajectory: Trajectory, question: Question) -> dict[str, Any]:
    """What a handed-off run knew when it stopped: its last checkpoint and what it had read."""
    docs = task_docs(question)
    seen: list[str] = []
    for turn in trajectory.turns:
        seen += [d for d in shown_docs(turn) if d in docs and d not in seen]
    queries = [str(search_query(t.call.name, t.call.arguments) or "") for t in trajectory.turns
               if t.call is not None and is_search(t.call.name) and t.args_valid]
    last = trajectory.checkpoints[-1] if trajectory.checkpoints else None
    return {
        "tid": trajectory.tid,
        "qid": trajectory.qid,
        "termination": trajectory.termination,
        "reason": trajectory.reason,
        "calls": len(trajectory.turns),
        "task_documents_seen": seen,
        "task_documents": len(docs),
        "queries_tried": queries[-20:],
        "last_calls": [normalize_call(t.call) for t in trajectory.turns[-3:] if t.call],
        "checkpoint": asdict(last) if last is not None else None,
    }
