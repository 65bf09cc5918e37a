"""RL rows: one question per line, for training with a verifiable reward.

`verl` rows follow verl's RLHFDataset columns: `data_source`, `prompt` (chat messages), `ability`,
`reward_model: {style: "rule", ground_truth: {target: [answer, *aliases], answer_type}}` (the
Search-R1 layout), and `extra_info` with the index, the question, per-tool `tools_kwargs` (the
`answer` tool's `create_kwargs` carry the ground truth) and the tool settings; `agent_name:
"tool_agent"` selects verl's tool agent loop, whose tools the export's `tool_config.yaml` names
(hopforge.export.verl_tools). `plain` rows are `{prompt, answer, aliases, answer_type, qid}` for
TRL's GRPO and similar trainers. The prompt is the SFT rows' (the system prompt without the tool
schemas, which the trainer's chat template renders from the tools). Both keep `metadata` (hops,
kind, split, the teacher's pass rate under the same reward) apart. The reward is
hopforge.synth.reward (`compute_score` for verl, `grpo_reward` for TRL), re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.tools import is_final
from hopforge.export.messages import prompt_messages
from hopforge.filters.answers import answer_type, grade_answer
from hopforge.filters.records import Score
from hopforge.synth.records import Question
from hopforge.synth.reward import compute_score, extract_answer, grade, grpo_reward

__all__ = ["AGENT_NAME", "Task", "compute_score", "extract_answer", "grade", "grpo_reward",
           "plain_record", "targets", "task_metadata", "verl_record"]

AGENT_NAME = "tool_agent"


@dataclass(frozen=True, slots=True, kw_only=True)
class Task:
    """One question to export for RL, with what the build knows about it."""

    question: Question
    split: str
    chain: str
    system_prompt: str = ""
    scores: tuple[Score, ...] = ()  # scores of the question's trajectories
    n_trajectories: int = 0
    final_answers: tuple[str, ...] = ()  # the teacher's final answer per trajectory


def targets(question: Question) -> list[str]:
    """The answer first, then its distinct aliases."""
    return list(dict.fromkeys([question.answer, *question.answer_aliases]))


def ground_truth(question: Question) -> dict[str, Any]:
    """What the reward grades against: the targets and how to compare with them."""
    return {"target": targets(question), "answer_type": answer_type(question)}


def task_metadata(task: Task) -> dict[str, Any]:
    """Per-row facts; `teacher_pass_rate` is the share of the teacher's trajectories whose final
    answer the reward grades 1.0, `mean_reward` their mean point-wise score (None without any)."""
    q = task.question
    pass_rate = mean = None
    if task.final_answers:
        graded = [grade_answer(a, q) for a in task.final_answers]
        pass_rate = round(sum(graded) / len(graded), 6)
    if task.scores:
        mean = round(sum(s.pointwise for s in task.scores) / len(task.scores), 6)
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
    truth = ground_truth(q)
    answer_kwargs = {"qid": q.qid, "question": q.question, "ground_truth": truth}
    kwargs = {
        n: {"create_kwargs": answer_kwargs if is_final(n) else {"qid": q.qid}} for n in tool_names
    }
    return {
        "data_source": data_source,
        "agent_name": AGENT_NAME,
        "prompt": prompt_messages(task.system_prompt, q.question, with_tools=True),
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
        "prompt": prompt_messages(task.system_prompt, q.question, with_tools=True),
        "answer": q.answer,
        "aliases": list(q.answer_aliases),
        "answer_type": answer_type(q),
        "qid": q.qid,
        "metadata": task_metadata(task),
    }


VERL_TOOL_CLASS = "hopforge.export.verl_tools.HopforgeTool"
VERL_TOOL_CONFIG = "rl/verl/tool_config.yaml"  # under BUILD/export/


def verl_tool_config(tools: Sequence[Mapping[str, Any]], url: str) -> dict[str, Any]:
    """verl's `multi_turn.tool_config_path` file: one `HopforgeTool` per schema, served at `url`.

    Each schema goes in whole under `config.schema` (verl's own `tool_schema` model would drop
    `minLength`, `minimum`, `maximum` and `additionalProperties`).
    """
    return {"tools": [{"class_name": VERL_TOOL_CLASS,
                       "config": {"type": "native", "url": url, "timeout_s": 60.0, "retries": 5,
                                  "schema": dict(t)}} for t in tools]}
