"""SFT rows: one window of a trajectory per line (see export/windows.py), with tools and weights.

Three layouts. `openai` follows OpenAI's fine-tuning layout: tool-call `arguments` is a JSON
string, every assistant message carries `weight` (0 or 1), which OpenAI's trainer reads, and
`parallel_tool_calls` is false. `hf` is the same window for Hugging Face chat templates:
`arguments` is an object, tool messages carry the tool's `name`, and `weight` stays on assistant
messages for trainers that mask per message. `trl` is TRL's conversational prompt-completion
layout, where untrained turns are context only: one row per trained assistant message, its
`prompt` exactly the prompt the teacher had for that turn and its `completion` the message alone
(TRL trains the completion only; it ignores `weight`). The system prompt never repeats the schemas in `tools`.
Trainer fields come first; ids and filterable facts sit under `metadata`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from hopforge.corpus.tools import is_final
from hopforge.export.messages import turn_weights
from hopforge.export.windows import Window
from hopforge.filters.answers import answer_is_right
from hopforge.filters.records import Score
from hopforge.synth.annotate import useful_share
from hopforge.synth.records import TURN_LABELS, Turn

if TYPE_CHECKING:  # records.py imports the layouts, which import this module
    from hopforge.export.records import Example

Flavour = Literal["openai", "hf", "trl"]
REWARD_FIELDS = (
    "combined",
    "pointwise",
    "exact_match",
    "f1",
    "judge",
    "evidence_recall",
    "format",
    "efficiency",
    "recovery",
    "strength",
    "length_controlled",
    "correctness",
    "evidence",
)


def rewards(score: Score | None) -> dict[str, Any]:
    """Every reward component of a score (nulls when the trajectory was not scored)."""
    row: dict[str, Any] = {f: None if score is None else getattr(score, f) for f in REWARD_FIELDS}
    for f in REWARD_FIELDS:
        if row[f] is not None:
            row[f] = float(row[f])
    row["correct"] = None if score is None else bool(score.correct)
    row["turn_rewards"] = [] if score is None else [float(r) for r in score.turn_rewards]
    return row


def example_weights(ex: Example) -> list[int]:
    """Per-turn weights; turns the filter made context only (style caps) weigh 0, and so does a
    final answer that is not the question's (a wrong title, or "not found" on a question that
    has an answer): a wrong answer is never a target."""
    weights = turn_weights(ex.trajectory, ex.score.turn_rewards if ex.score else ())
    off = set(ex.decision.context_turns) if ex.decision else set()
    return [0 if t.index in off or _wrong_answer(t, ex) else w
            for t, w in zip(ex.trajectory.turns, weights, strict=True)]


def _wrong_answer(turn: Turn, ex: Example) -> bool:
    if turn.call is None or not is_final(turn.call.name):
        return False
    return not answer_is_right(str(turn.call.arguments.get("text", "")), ex.question)


def trajectory_metadata(ex: Example, weights: Sequence[int]) -> dict[str, Any]:
    """Ids and the facts a trainer may filter on."""
    t, q = ex.trajectory, ex.question
    labels = Counter(turn.label for turn in t.turns)
    return {
        "tid": t.tid,
        "qid": t.qid,
        "split": ex.split,
        "chain": ex.chain,
        "hops": q.n_hops,
        "kind": q.kind,
        "teacher": t.teacher,
        "sample": t.sample,
        "termination": t.termination,
        "final_answer": t.final_answer,
        "answer": q.answer,
        "n_turns": len(t.turns),
        "n_supervised": sum(weights),
        "sample_weight": float(ex.decision.weight) if ex.decision else 1.0,
        "filter_reason": ex.decision.reason if ex.decision else "",
        "useful_share": round(useful_share(t), 6),
        "labels": {label: labels.get(label, 0) for label in TURN_LABELS},
        "rewards": rewards(ex.score),
    }


def window_metadata(ex: Example, k: int, window: Window, *, count: int | None = None
                    ) -> dict[str, Any]:
    """The trajectory's metadata, with which window of how many this row is."""
    meta = trajectory_metadata(ex, [_weight(m) for m in _assistants(window.messages)])
    meta["window"] = {
        "index": k,
        "count": len(ex.windows) if count is None else count,
        "checkpoint": window.checkpoint,
        "first_turn": window.turns[0],
        "last_turn": window.turns[-1],
        "tokens": window.tokens,
    }
    return meta


def _assistants(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "assistant"]


def _weight(message: dict[str, Any]) -> int:
    return int(message.get("weight", 0))


def openai_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hugging Face messages in OpenAI's layout: arguments as JSON strings, no tool names, and
    no reasoning (OpenAI's fine-tuning layout has no field for it)."""
    out = []
    for m in messages:
        m = {k: v for k, v in m.items()
             if not (k == "name" and m["role"] == "tool") and k != "reasoning_content"}
        if m.get("tool_calls"):
            m["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": json.dumps(
                    c["function"]["arguments"], ensure_ascii=False, sort_keys=True)}}
                for c in m["tool_calls"]
            ]
        out.append(m)
    return out


def sft_records(ex: Example, tools: Sequence[dict[str, Any]], flavour: Flavour
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record id, row) for every window of an example, in the given flavour."""
    if flavour == "trl":
        for k, window in enumerate(ex.turn_windows):
            meta = window_metadata(ex, k, window, count=len(ex.turn_windows))
            yield from _trl_rows(ex.trajectory.tid, window, tools, meta)
        return
    for k, window in enumerate(ex.windows):
        rid = f"{ex.trajectory.tid}#w{k}"
        meta = window_metadata(ex, k, window)
        messages = list(window.messages)
        row: dict[str, Any] = {
            "messages": openai_messages(messages) if flavour == "openai" else messages,
            "tools": [dict(t) for t in tools],
        }
        if flavour == "openai":
            row["parallel_tool_calls"] = False
        row["metadata"] = meta
        yield rid, row


def context_only(window: Window) -> Iterator[tuple[int, list[dict[str, Any]], dict[str, Any]]]:
    """(turn, context, message) for each trained assistant message, weights dropped."""
    clean = [{k: v for k, v in m.items() if k != "weight"} for m in window.messages]
    turns = iter(window.turns)
    for i, m in enumerate(window.messages):
        if m["role"] != "assistant":
            continue
        turn = next(turns)
        if _weight(m):
            yield turn, clean[:i], clean[i]


def _trl_rows(rid: str, window: Window, tools: Sequence[dict[str, Any]], meta: dict[str, Any]
              ) -> Iterator[tuple[str, dict[str, Any]]]:
    for turn, context, message in context_only(window):
        yield f"{rid}#t{turn}", {
            "prompt": context,
            "completion": [message],
            "tools": [dict(t) for t in tools],
            "metadata": {**meta, "n_supervised": 1, "turn": turn},
        }
