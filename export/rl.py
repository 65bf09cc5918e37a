"""RL rows: one question per line, for training with a verifiable reward.

`verl` rows follow verl's RLHFDataset columns: `data_source`, `prompt` (chat messages), `ability`,
`reward_model: {style: "rule", ground_truth: {target: [answer, *aliases]}}` (the Search-R1
layout), and `extra_info` with the index, the question, per-tool `tools_kwargs` (the `answer` tool's
`create_kwargs` carry the ground truth) and the tool settings; `agent_name: "tool_agent"` selects verl's tool agent loop. `plain` rows are
`{prompt, answer, aliases, qid}` for TRL's GRPO and similar trainers. Both keep `metadata`
(hops, kind, split, the teacher's pass rate) apart. `compute_score` is a verl reward function.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopforge.export.decontam import normalize_tokens
from hopforge.export.messages import prompt_messages
from hopforge.filters.records import Score
from hopforge.synth.records import Question

AGENT_NAME = "tool_agent"
ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One question to export for RL, with what the build knows about it."""

    question: Question
    split: str
    chain: str
    system_prompt: str = ""
    scores: tuple[Score, ...] = ()  # scores of the question's trajectories
    n_trajectories: int = 0


def is_correct(score: Score) -> bool:
    """A trajectory counts as solved when the scorer says so, on exact match, or by the judge."""
    return (
        score.correct
        or score.exact_match >= 1.0
        or (score.judge is not None and score.judge >= 0.5)
    )


def targets(question: Question) -> list[str]:
    """The answer first, then its distinct aliases."""
    return list(dict.fromkeys([question.answer, *question.answer_aliases]))


def task_metadata(task: Task) -> dict[str, Any]:
    q = task.question
    pass_rate = mean = None
    if task.scores:
        pass_rate = sum(is_correct(s) for s in task.scores) / len(task.scores)
        mean = sum(s.combined for s in task.scores) / len(task.scores)
    return {
        "qid": q.qid,
        "split": task.split,
        "chain": task.chain,
        "hops": q.n_hops,
        "kind": q.kind,
        "composer": q.composer,
        "answer_doc": q.answer_doc,
        "evidence": list(q.evidence),
        "n_trajectories": task.n_trajectories,
        "teacher_pass_rate": pass_rate,
        "mean_reward": mean,
    }


def verl_record(
    task: Task,
    *,
    index: int,
    tool_names: Sequence[str],
    tool_settings: Mapping[str, Any],
    data_source: str = "hopforge",
    ability: str = "search",
) -> dict[str, Any]:
    """One verl row."""
    q = task.question
    truth = {"target": targets(q)}
    answer_kwargs = {"qid": q.qid, "question": q.question, "ground_truth": truth}
    kwargs = {
        n: {"create_kwargs": answer_kwargs if n == "answer" else {"qid": q.qid}} for n in tool_names
    }
    return {
        "data_source": data_source,
        "agent_name": AGENT_NAME,
        "prompt": prompt_messages(task.system_prompt, q.question),
        "ability": ability,
        "reward_model": {"style": "rule", "ground_truth": truth},
        "extra_info": {
            "split": task.split,
            "index": index,
            "qid": q.qid,
            "question": q.question,
            "answer": q.answer,
            "aliases": list(q.answer_aliases),
            "need_tools_kwargs": True,
            "tools_kwargs": kwargs,
            "tool_settings": dict(tool_settings),
        },
        "metadata": task_metadata(task),
    }


def plain_record(task: Task) -> dict[str, Any]:
    """One plain RL row."""
    q = task.question
    return {
        "prompt": prompt_messages(task.system_prompt, q.question),
        "answer": q.answer,
        "aliases": list(q.answer_aliases),
        "qid": q.qid,
        "metadata": task_metadata(task),
    }


def extract_answer(solution: str) -> str:
    """The final answer of a rollout: its last `answer` tool call, `<answer>` tag, or last line."""
    decoder = json.JSONDecoder()
    found = ""
    for match in re.finditer(r"\{", solution):
        try:
            value, _ = decoder.raw_decode(solution, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and value.get("name") == "answer":
            args = value.get("arguments")
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {"text": args}
            if isinstance(args, dict) and isinstance(args.get("text"), str):
                found = args["text"]
    if found:
        return found
    tags = ANSWER_TAG.findall(solution)
    if tags:
        return tags[-1].strip()
    lines = [line.strip() for line in solution.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **_: Any
) -> float:
    """verl reward: 1.0 when the rollout's answer matches a target after normalization."""
    wanted = ground_truth.get("target", []) if isinstance(ground_truth, Mapping) else ground_truth
    if isinstance(wanted, str):
        wanted = [wanted]
    answer = normalize_tokens(extract_answer(solution_str))
    return float(bool(answer) and any(answer == normalize_tokens(str(t)) for t in wanted))
