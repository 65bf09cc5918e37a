"""Turn annotations: validity, repeats, new gold evidence, recovery after faults, and a label.

Each turn gets one label of `TURN_LABELS`, decided in this order (the first that applies):

- invalid: the message had no tool call, named an unknown tool, broke the tool's schema, or the
  tool refused the call (a page out of range, say);
- off_track: the call uses what the trajectory had not seen (`Turn.justified` is false), or
  opens or searches inside a doc_id that no earlier result showed (an invented id);
- recovery: a working call after a fault met with the same intent (`Turn.recovered`);
- progress: the answer; a gold document shown or read (a page or a match) for the first time;
  for aggregation, an item of the set read for the first time (a state update);
- redundant: anything else: a repeat, a result lost to a fault, nothing new.

`label_trajectory` recomputes every label from the stored fields, so a field filled after the
run (`justified`) or a question's aggregation items are taken into account downstream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from hopforge.corpus.tools import READ_TOOLS, is_final, tool_named
from hopforge.synth.records import Fault, Question, ToolCall, Trajectory, Turn

_SHOWN_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")
# where a result names a document's title beside its doc_id: a search hit's line, an opened
# page's head line, a find result's head line
_HIT_TITLE = re.compile(r"^\s*\d+\. \[doc_id: ([^\]\s]+)\] (.+?)\s*$", re.MULTILINE)
_PAGE_TITLE = re.compile(r"\A(.+?) \[doc_id: ([^\]\s]+)\] page \d+")
_FIND_TITLE = re.compile(r'\A(?:\d+ line\(s\) match|No match for) "(?:[^"\\]|\\.)*" in (.+?) '
                         r"\[doc_id: ([^\]\s]+)\]")
USEFUL_LABELS: tuple[str, ...] = ("progress", "recovery")


def normalize_call(call: ToolCall) -> str:
    """A key for "the same call": tool name plus its arguments, normalized by the call's tool."""
    tool = tool_named(call.name)
    key = (tool.key(call.arguments) if tool is not None
           else json.dumps(call.arguments, sort_keys=True, default=str))
    return f"{call.name}:{key}"


def call_intent(call: ToolCall) -> str:
    """What a call is trying to do: any search looks for something; a read looks at a doc."""
    tool = tool_named(call.name)
    return tool.intent(call.arguments) if tool is not None else call.name


def read_key(call: ToolCall) -> str:
    """What a read call looks at: a page of a document, or a pattern in it."""
    tool = tool_named(call.name)
    return tool.read_key(call.arguments) if tool is not None else normalize_call(call)


def shown_doc_ids(turn: Turn) -> tuple[str, ...]:
    """The doc_ids a turn's result showed, read back from its text (none for a failed call)."""
    if turn.error or turn.call is None or is_final(turn.call.name):
        return ()
    if turn.fault is not None and turn.fault.kind in ("empty", "timeout"):
        return ()
    return tuple(dict.fromkeys(_SHOWN_ID.findall(turn.result)))


def shown_titles(text: str) -> dict[str, str]:
    """The title a tool result showed beside each doc_id (search hits, an opened page, a find)."""
    titles = {doc: title for doc, title in _HIT_TITLE.findall(text)}
    for pattern in (_PAGE_TITLE, _FIND_TITLE):
        match = pattern.match(text)
        if match:
            titles.setdefault(match.group(2), match.group(1))
    return titles


class TurnJudge:
    """Labels the turns of one trajectory in order; holds what the trajectory has seen."""

    def __init__(self, gold: Iterable[str], items: Iterable[str] = ()) -> None:
        self.gold = frozenset(gold)
        self.items = frozenset(items) - self.gold
        self.read: set[str] = set()  # read keys of gold documents and items already read
        self._texts: list[str] = []  # every earlier result
        self._found: set[str] = set()

    def judge(self, turn: Turn) -> tuple[str, str]:
        """(label, reason) for `turn`; then remember what its result showed."""
        label = self._label(turn)
        self._texts.append(turn.result)
        return label

    def shown(self, doc_id: str) -> bool:
        """Whether an earlier result (of any format) showed `doc_id`."""
        if doc_id in self._found:
            return True
        if doc_id and any(doc_id in text for text in self._texts):
            self._found.add(doc_id)
            return True
        return False

    def _label(self, turn: Turn) -> tuple[str, str]:
        call = turn.call
        if call is None:
            return "invalid", f"no usable tool call: {turn.error or 'none in the message'}"
        if not turn.schema_valid:
            return "invalid", f"calls the unknown tool {call.name!r}"
        if not turn.args_valid:
            return "invalid", f"arguments break the {call.name} schema: {turn.error}"
        if not turn.justified:
            return "off_track", f"uses words no earlier text showed: {', '.join(turn.unseen)}"
        doc = str(call.arguments.get("doc_id", "")).strip()
        if call.name in READ_TOOLS and not self.shown(doc):
            return "off_track", f"{call.name} on doc_id {doc!r}, which no earlier result showed"
        faulted = turn.fault is not None and turn.fault.kind in ("empty", "timeout")
        if turn.error and not faulted:
            return "invalid", f"the tool refused the call: {turn.error}"
        if turn.recovered:
            return "recovery", f"works after a fault on the same {call_intent(call)}"
        if is_final(call.name):
            return "progress", "answers"
        if faulted:
            return "redundant", f"its result was lost to a {turn.fault.kind} fault"  # type: ignore[union-attr]
        if turn.new_evidence:
            return "progress", f"new evidence: {', '.join(turn.new_evidence)}"
        if call.name in READ_TOOLS and doc in self.gold | self.items:
            key = read_key(call)
            if key not in self.read:
                self.read.add(key)
                what = "reads evidence" if doc in self.gold else "checks an item of the set"
                return "progress", f"{what}: {key}"
        if turn.repeat_of is not None:
            return "redundant", f"repeats turn {turn.repeat_of}"
        return "redundant", "shows no new evidence"


def label_trajectory(traj: Trajectory, question: Question | None = None) -> Trajectory:
    """The trajectory with every turn labelled anew from its stored fields."""
    gold: set[str] = set()
    items: Collection[str] = ()
    if question is not None:
        gold = set(question.evidence) | ({question.answer_doc} if question.answer_doc else set())
        items = question.spec.items if question.spec is not None else ()
    else:
        gold = {d for t in traj.turns for d in t.new_evidence}
    judge = TurnJudge(gold, items)
    turns = []
    for turn in traj.turns:
        label, reason = judge.judge(turn)
        turns.append(replace(turn, label=label, label_reason=reason))
    return replace(traj, turns=tuple(turns))


UNTRAINED_LABELS: tuple[str, ...] = ("invalid", "off_track")


def sft_weight(turn: Turn, reward: float | None = None) -> int:
    """1 when the turn is worth imitating, else 0.

    Invalid and off-track turns are never trained; a recovery (a working call after a fault) is
    always trained; any other repeat of an earlier call, or a negatively rewarded turn, is not.
    A turn without a label is judged on its validity fields alone.
    """
    invalid = turn.call is None or not turn.schema_valid or not turn.args_valid
    if invalid or not turn.justified or turn.label in UNTRAINED_LABELS:
        return 0
    if turn.label == "recovery":
        return 1
    if turn.repeat_of is not None:
        return 0
    if reward is not None and reward < 0:
        return 0
    return 1


def tool_calls(traj: Trajectory) -> int:
    """How many turns carry a parsed tool call (the answer included)."""
    return sum(1 for t in traj.turns if t.call is not None)


def useful_share(traj: Trajectory) -> float:
    """Share of a trajectory's turns labelled progress or recovery (0 without turns)."""
    if not traj.turns:
        return 0.0
    return sum(1 for t in traj.turns if t.label in USEFUL_LABELS) / len(traj.turns)


class Annotator:
    """Annotates the turns of one trajectory in order; holds what has been seen so far."""

    def __init__(self, gold: Iterable[str]) -> None:
        self.gold = frozenset(gold)
        self.seen: set[str] = set()
        self._last_index: dict[str, int] = {}
        self._faulted: set[str] = set()  # intents with a fault not yet followed by a success
        self._judge = TurnJudge(self.gold)

    def annotate(
        self,
        *,
        index: int,
        raw: str,
        thought: str,
        call: ToolCall | None,
        result: str,
        ok: bool = True,
        doc_ids: Sequence[str] = (),
        fault: Fault | None = None,
        schema_valid: bool = True,
        args_valid: bool = True,
        tokens: int = 0,
        latency_s: float = 0.0,
        error: str = "",
    ) -> Turn:
        """Build the `Turn` for one step and update the trajectory's state."""
        repeat_of: int | None = None
        recovered = False
        new: list[str] = []
        if call is not None and schema_valid:
            key = normalize_call(call)
            repeat_of = self._last_index.get(key)
            self._last_index[key] = index
            if args_valid:
                intent = call_intent(call)
                if fault is not None and fault.kind != "format":  # a re-laid result lost
                    self._faulted.add(intent)  # nothing: there is nothing to recover
                elif ok and intent in self._faulted:
                    self._faulted.discard(intent)
                    recovered = True
        if fault is None or fault.kind not in ("empty", "timeout"):
            for doc_id in doc_ids:
                if doc_id in self.gold and doc_id not in self.seen:
                    self.seen.add(doc_id)
                    new.append(doc_id)
        turn = Turn(
            index=index,
            raw=raw,
            thought=thought,
            call=call,
            result=result,
            fault=fault,
            schema_valid=schema_valid,
            args_valid=args_valid,
            repeat_of=repeat_of,
            new_evidence=tuple(new),
            recovered=recovered,
            tokens=tokens,
            latency_s=latency_s,
            error=error,
        )
        label, reason = self._judge.judge(turn)
        return replace(turn, label=label, label_reason=reason)
