"""Per-task measures of an eval run and their summary per (budget, fault mix).

Turns are numbered from 1 (the first tool call). For one trajectory:

- success: the final answer matches the gold answer or an alias (synth/answers.py); a list
  answer matches as a set of names; "not found" counts only for an unanswerable task, and only
  as a justified stop: every item of an aggregation was read (a valid open or find of each),
  or, for a task without items, at least `min_calls - 1` valid calls were made before it. A handoff
  (repetition or no_progress) is never a success.
- valid call: parsed, names a tool, arguments fit its schema; an argument error names a tool
  but breaks its schema; a repeated call is the same normalized call as an earlier one whose
  result was fine (a retry after a fault or error is not a repeat).
- faults: a fault is recovered when a later call of the same purpose (any search; reading the
  same document) succeeds without a fault, when a faulted search is followed within three
  calls by a task document not seen before (another path), or when the
  run ends in a justified stop; it is ignored when the next call has another purpose, the
  fault is never recovered, and the faulted call was not itself a retry of a faulted call.
- forgotten constraint: a final answer that contradicts what clean results showed (a count
  below the matches seen or above what is left, a list missing a match seen or holding a
  non-match seen, or the title of an evidence document that is not the answer). Its onset is
  the first call that went back to an item (an aggregation's item, or an evidence document)
  already read cleanly after other items were read since, the first sign the run lost track
  of it, or else the answer. Going back to an item before a right answer is a re-check.
- onset: the first turn of each error kind, or None.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from hopforge.corpus.tools import is_final, is_read, is_search, tool_named
from hopforge.synth.annotate import call_intent, normalize_call
from hopforge.synth.answers import grade_answer, list_items, normalize_answer, unanswerable
from hopforge.synth.evaluation.stops import HANDOFFS, shown_docs, task_docs
from hopforge.synth.evaluation.tasks import task_min_calls, tracked_docs
from hopforge.synth.records import Question, Trajectory, Turn

ONSET_KINDS: tuple[str, ...] = ("schema_error", "bad_arguments", "repeat",
                                "forgotten_constraint", "ignored_fault")
RECOVERY_WINDOW = 3  # calls after a fault in which a new task document counts as another path


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskResult:
    """The measures of one trajectory on its task."""

    tid: str
    qid: str
    kind: str
    min_calls: int
    success: bool
    turns: int
    valid_calls: int
    schema_errors: int
    argument_errors: int
    repeated_calls: int
    faults: int
    recovered_faults: int
    ignored_faults: int
    first_fault: int | None = None  # the turn of the first injected fault
    onset: dict[str, int | None] = field(default_factory=dict)
    item_check_share: float | None = None
    termination: str = ""
    handoff: bool = False
    tokens: int = 0
    seconds: float = 0.0
    cost: float = 0.0


def _clean(turn: Turn) -> bool:
    return (turn.call is not None and turn.schema_valid and turn.args_valid and not turn.error
            and turn.fault is None)


def is_success(trajectory: Trajectory, question: Question) -> bool:
    """Final success (see the module docstring): `grade_answer`, and a justified stop."""
    if trajectory.termination in HANDOFFS or not trajectory.final_answer:
        return False
    if not grade_answer(trajectory.final_answer, question):
        return False
    if unanswerable(question):
        valid = [t.call for t in trajectory.turns if t.call is not None and t.args_valid
                 and not is_final(t.call.name)]
        items = set(question.spec.items) if question.spec is not None else set()
        if items:  # min_calls counts a search per item; a solver may open what it was shown
            read = {str(c.arguments.get("doc_id", "")) for c in valid if is_read(c.name)}
            return items <= read
        return len(valid) >= max(1, task_min_calls(question) - 1)
    return True


def _repeats(turns: Sequence[Turn]) -> list[int]:
    fine: set[str] = set()
    out = []
    for n, turn in enumerate(turns, start=1):
        if turn.call is None or not turn.schema_valid:
            continue
        key = normalize_call(turn.call)
        if key in fine:
            out.append(n)
        if _clean(turn):
            fine.add(key)
    return out


def _faults(turns: Sequence[Turn], docs: frozenset[str],
            justified_stop: bool) -> tuple[int, int, int, int | None]:
    """(faults, recovered, ignored, first ignored turn)."""
    seen_at: dict[str, int] = {}
    for n, turn in enumerate(turns, start=1):
        for d in shown_docs(turn):
            if d in docs:
                seen_at.setdefault(d, n)
    faults = recovered = ignored = 0
    first_ignored: int | None = None
    for n, turn in enumerate(turns, start=1):
        if turn.fault is None or turn.call is None:
            continue
        faults += 1
        intent = call_intent(turn.call)
        later = turns[n:]
        ok = justified_stop or any(_clean(t) and call_intent(t.call) == intent  # type: ignore[arg-type]
                                   for t in later)
        if is_search(turn.call.name):  # another path: a task document shown soon after
            ok = ok or any(n < at <= n + RECOVERY_WINDOW for at in seen_at.values())
        if ok:
            recovered += 1
            continue
        before = turns[n - 2] if n > 1 else None
        if before is not None and before.fault is not None and before.call is not None \
                and call_intent(before.call) == intent:
            continue  # a retry that failed again: the fault before it was reacted to
        nxt = next((t for t in later if t.call is not None and t.schema_valid), None)
        if nxt is not None and nxt.call is not None and call_intent(nxt.call) != intent:
            ignored += 1
            first_ignored = first_ignored or n
    return faults, recovered, ignored, first_ignored


def _checks(turns: Sequence[Turn], question: Question) -> tuple[dict[str, int], int | None]:
    """(item checked cleanly -> first turn, first turn that went back to a settled item)."""
    tracked = set(tracked_docs(question))
    spec = question.spec
    pattern = (spec.pattern if spec is not None and spec.items else "").casefold()
    settled: dict[str, int] = {}
    checked: dict[str, int] = {}
    last_touch: dict[str, int] = {}
    first_back: int | None = None
    for n, turn in enumerate(turns, start=1):
        call = turn.call
        tool = tool_named(call.name) if call is not None else None
        if call is None or tool is None or not turn.args_valid or not tool.reads:
            continue
        doc = str(call.arguments.get("doc_id", ""))
        if doc not in tracked:
            continue
        if doc in settled and first_back is None:
            since = settled[doc]
            if any(d != doc and at > since for d, at in last_touch.items()):
                first_back = n
        last_touch[doc] = n
        if not _clean(turn):
            continue
        settled.setdefault(doc, n)
        if not pattern or tool.shows(call.arguments, turn.result, pattern):
            checked.setdefault(doc, n)  # the pattern looked for or shown, or the doc read whole
    return checked, first_back


def _contradicts(answer: str, question: Question, checked: dict[str, int],
                 titles: dict[str, str]) -> bool:
    """True when a final answer contradicts what clean results showed."""
    if not answer or grade_answer(answer, question):
        return False
    spec = question.spec
    if spec is not None and spec.items:
        matching = set(spec.matching)
        seen_match = [d for d in checked if d in matching]
        seen_other = [d for d in checked if d not in matching]
        if spec.operation == "count":
            digits = re.search(r"\d+", answer)
            if digits is None:
                return False
            n = int(digits.group())
            return n < len(seen_match) or n > len(spec.items) - len(seen_other)
        if spec.operation == "list":
            parts = list_items(answer)
            return (any(normalize_answer(titles.get(d, d)) not in parts for d in seen_match)
                    or any(normalize_answer(titles.get(d, d)) in parts for d in seen_other))
        return False
    said = normalize_answer(answer)
    return any(said == normalize_answer(titles.get(d, d)) for d in question.evidence
               if d != question.answer_doc and d in checked)


def measure(trajectory: Trajectory, question: Question,
            titles: dict[str, str] | None = None) -> TaskResult:
    """The measures of one trajectory (see the module docstring); `titles`: doc_id -> title."""
    turns = trajectory.turns
    titles = titles or {}
    success = is_success(trajectory, question)
    onset: dict[str, int | None] = dict.fromkeys(ONSET_KINDS)
    for n, turn in enumerate(turns, start=1):
        if not turn.schema_valid and onset["schema_error"] is None:
            onset["schema_error"] = n
        if turn.schema_valid and not turn.args_valid and onset["bad_arguments"] is None:
            onset["bad_arguments"] = n
    repeats = _repeats(turns)
    onset["repeat"] = repeats[0] if repeats else None
    justified = success and unanswerable(question)
    faults, recovered, ignored, first_ignored = _faults(turns, task_docs(question), justified)
    onset["ignored_fault"] = first_ignored
    checked, back = _checks(turns, question)
    forgot = None
    answer_turn = next((n for n, t in enumerate(turns, start=1) if t.call is not None
                        and is_final(t.call.name) and t.args_valid), None)
    if answer_turn is not None and _contradicts(trajectory.final_answer, question, checked, titles):
        forgot = min(back, answer_turn) if back is not None else answer_turn
    onset["forgotten_constraint"] = forgot
    spec = question.spec
    share = len(checked) / len(spec.items) if spec is not None and spec.items else None
    usage = trajectory.usage
    return TaskResult(
        tid=trajectory.tid, qid=question.qid, kind=question.kind,
        min_calls=task_min_calls(question), success=success, turns=len(turns),
        valid_calls=sum(1 for t in turns if t.schema_valid and t.args_valid),
        schema_errors=sum(1 for t in turns if not t.schema_valid),
        argument_errors=sum(1 for t in turns if t.schema_valid and not t.args_valid),
        repeated_calls=len(repeats), faults=faults, recovered_faults=recovered,
        ignored_faults=ignored, onset=onset,
        first_fault=next((n for n, t in enumerate(turns, start=1) if t.fault), None), item_check_share=share,
        termination=trajectory.termination, handoff=trajectory.termination in HANDOFFS,
        tokens=usage.prompt_tokens + usage.completion_tokens, seconds=usage.seconds,
        cost=usage.cost,
    )
