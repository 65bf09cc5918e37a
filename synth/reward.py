"""The answer reward: one grading function for verl, TRL's GRPO and the build's own scoring.

`grade(answer, targets, answer_type=...)` gives 1.0 or 0.0:

- answers are compared after the SQuAD normalisation (lowercase, no punctuation, no articles,
  single spaces) against the gold answer and every alias;
- a list answer ("A; B; C", `answer_type="list"`) is compared as a set of items with each
  target, so the same titles in another order, or joined with "," or "and", count;
- "not found" (and its wordings: "none of them", "no such ...", ...) is credited only when the
  question is unanswerable (`answer_type="not_found"`); there every other answer gets 0.

`compute_score` is verl's reward function (`custom_reward_function.name=compute_score`) over the
`reward_model.ground_truth` of hopforge's RL rows; `grpo_reward` is a TRL GRPO reward function
over the `rl/plain` columns. This module imports only the standard library, so verl loads it by
path (`custom_reward_function.path=.../hopforge/synth/reward.py`) in an environment without
hopforge, or as `pkg://hopforge.synth.reward` where hopforge is installed.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Mapping, Sequence
from typing import Any

NOT_FOUND = "not found"  # the answer of an unanswerable question: a justified stop
NONE = "none"  # the answer of a list question no member of its set meets

_PUNCT = frozenset(string.punctuation) | frozenset("‘’“”–—…«»")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_LIST_SPLIT = re.compile(r"\s*(?:;|,|\n|\band\b)\s*")
_NOT_FOUND = re.compile(r"\b(not found|no (?:such|matching) \w+|none(?: of them| found)?|"
                        r"does not exist|no answer)\b", re.IGNORECASE)
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)


def normalize_answer(text: str) -> str:
    """Lowercase, strip punctuation and articles, and collapse whitespace (SQuAD rules)."""
    text = text.lower()
    text = "".join(" " if ch in _PUNCT else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def list_items(text: str) -> set[str]:
    """The normalised items of a list answer ("a; b and c")."""
    return {n for part in _LIST_SPLIT.split(text) if (n := normalize_answer(part))}


def says_not_found(text: str) -> bool:
    """Whether an answer is a stop for lack of evidence ("not found", "none of them", ...)."""
    return bool(_NOT_FOUND.search(text)) or normalize_answer(text) == NOT_FOUND


def grade(answer: str, targets: Sequence[str], answer_type: str = "") -> float:
    """1.0 when `answer` is right for a question whose gold answer and aliases are `targets`.

    `answer_type` is the question's (`list`, `not_found`, ...); empty means unknown, and then a
    target holding ";" is read as a list and a target "not found" (or "none") as an unanswerable
    question.
    """
    if not answer.strip():
        return 0.0
    golds = [str(t) for t in targets if normalize_answer(str(t))]
    if not answer_type:
        if any(normalize_answer(t) in (NOT_FOUND, NONE) for t in golds):
            answer_type = "not_found"
        elif any(";" in t for t in golds):
            answer_type = "list"
    if answer_type == "not_found":
        return float(says_not_found(answer))
    said = normalize_answer(answer)
    if any(said == normalize_answer(t) for t in golds):
        return 1.0
    if answer_type == "list":
        items = list_items(answer)
        return float(bool(items) and any(items == list_items(t) for t in golds))
    return 0.0


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
            args = value.get("arguments", value.get("parameters"))
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except json.JSONDecodeError:
                    args = {"text": args}
            if isinstance(args, dict) and isinstance(args.get("text"), str):
                found = args["text"]
    if found:
        return found
    tags = _ANSWER_TAG.findall(solution)
    if tags:
        return tags[-1].strip()
    lines = [line.strip() for line in solution.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _truth(ground_truth: Any) -> tuple[list[str], str]:
    """Targets and answer type from a row's ground truth (a dict, a list or one string)."""
    if isinstance(ground_truth, Mapping):
        wanted = ground_truth.get("target", [])
        kind = str(ground_truth.get("answer_type") or "")
    else:
        wanted, kind = ground_truth, ""
    if isinstance(wanted, str):
        wanted = [wanted]
    return [str(t) for t in (wanted if wanted is not None else [])], kind


def compute_score(
    data_source: str, solution_str: str, ground_truth: Any, extra_info: Any = None, **_: Any
) -> float:
    """verl's reward: `grade` of the rollout's final answer against the row's ground truth."""
    targets, kind = _truth(ground_truth)
    return grade(extract_answer(solution_str), targets, kind)


def completion_text(completion: Any) -> str:
    """A TRL completion as text: a string, or chat messages with their tool calls as JSON."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion or []:
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        parts.append(str(message.get("content") or ""))
        for call in message.get("tool_calls") or []:
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            parts.append(json.dumps({"name": fn.get("name"), "arguments": fn.get("arguments")}))
    return "\n".join(parts)


def grpo_reward(
    completions: Sequence[Any],
    answer: Sequence[str],
    aliases: Sequence[Sequence[str]] | None = None,
    answer_type: Sequence[str] | None = None,
    **_: Any,
) -> list[float]:
    """TRL GRPO reward function over `rl/plain` rows: `grade` per completion."""
    n = len(completions)
    alias_rows = aliases if aliases is not None else [[]] * n
    kinds = answer_type if answer_type is not None else [""] * n
    return [
        grade(extract_answer(completion_text(c)), [a, *(al or [])], k or "")
        for c, a, al, k in zip(completions, answer, alias_rows, kinds, strict=True)
    ]
