"""SFT rows: one trajectory per line, with tools, per-assistant-message weights and metadata.

Two flavours differ in one field. `openai` follows OpenAI's fine-tuning layout: tool-call
`arguments` is a JSON string, assistant messages carry `weight` (0 or 1), and
`parallel_tool_calls` is false. `hf` follows Hugging Face chat templates and TRL: `arguments` is
an object and tool messages carry the tool's `name`; `weight` is kept on assistant messages for
trainers that mask with it. Trainer fields come first; ids and filterable facts sit under
`metadata`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from hopforge.export.messages import trajectory_messages, turn_weights
from hopforge.export.records import Example
from hopforge.filters.records import Score

Flavour = Literal["openai", "hf"]
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
    return turn_weights(ex.trajectory, ex.score.turn_rewards if ex.score else ())


def trajectory_metadata(ex: Example, weights: Sequence[int]) -> dict[str, Any]:
    """Ids and the facts a trainer may filter on."""
    t, q = ex.trajectory, ex.question
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
        "rewards": rewards(ex.score),
    }


def sft_record(ex: Example, tools: Sequence[dict[str, Any]], flavour: Flavour) -> dict[str, Any]:
    """One SFT row of the given flavour."""
    weights = example_weights(ex)
    openai = flavour == "openai"
    messages = trajectory_messages(
        ex.trajectory,
        ex.question.question,
        weights,
        arguments="string" if openai else "object",
        tool_names=not openai,
    )
    row: dict[str, Any] = {"messages": messages, "tools": [dict(t) for t in tools]}
    if openai:
        row["parallel_tool_calls"] = False
    row["metadata"] = trajectory_metadata(ex, weights)
    return row
