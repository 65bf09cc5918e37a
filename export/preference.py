"""Preference rows in TRL's conversational format: `{prompt, chosen, rejected}` plus `tools`.

`prompt` holds the system prompt (when the chosen trajectory has one) and the question;
`chosen` and `rejected` hold each trajectory's assistant and tool messages, ending on its last
assistant message. Tool-call `arguments` are objects, as Hugging Face chat templates render them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hopforge.export.messages import completion_messages, prompt_messages
from hopforge.filters.records import PreferencePair, Score
from hopforge.synth.records import Question, Trajectory


def _completion(traj: Trajectory) -> list[dict[str, Any]]:
    ones = [1] * len(traj.turns)
    return completion_messages(traj, ones, arguments="object", tool_names=True, with_weights=False)


def pair_id(pair: PreferencePair) -> str:
    """The record id of a preference row: `chosen>rejected`."""
    return f"{pair.chosen}>{pair.rejected}"


def preference_record(
    pair: PreferencePair,
    *,
    question: Question,
    chosen: Trajectory,
    rejected: Trajectory,
    split: str,
    chain: str,
    tools: Sequence[dict[str, Any]],
    chosen_score: Score | None = None,
    rejected_score: Score | None = None,
) -> dict[str, Any]:
    """One preference row."""
    return {
        "prompt": prompt_messages(chosen.system_prompt, question.question, with_tools=True),
        "chosen": _completion(chosen),
        "rejected": _completion(rejected),
        "tools": [dict(t) for t in tools],
        "metadata": {
            "qid": pair.qid,
            "split": split,
            "chain": chain,
            "hops": question.n_hops,
            "kind": question.kind,
            "chosen_tid": chosen.tid,
            "rejected_tid": rejected.tid,
            "chosen_teacher": chosen.teacher,
            "rejected_teacher": rejected.teacher,
            "chosen_reward": None if chosen_score is None else float(chosen_score.combined),
            "rejected_reward": None if rejected_score is None else float(rejected_score.combined),
            "margin": float(pair.margin),
            "source": pair.source,
        },
    }
