"""A model judge through `ChatModel`: point-wise correctness and pair-wise preference.

Authorship is hidden: the judge sees the question, the reference answer and the trajectories
rendered without their teacher, tid or system prompt. The pair-wise judge sees both orders
(A, B) and (B, A); it must prefer the same trajectory in both, otherwise the pair is a tie
(position bias cancels out). Use a judge from another model family than the teacher.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hopforge.corpus.errors import HopforgeError
from hopforge.filters.pairwise import Comparison
from hopforge.synth.concurrency import bounded_map
from hopforge.synth.prompts import JUDGE_PAIRWISE_PROMPT, JUDGE_POINTWISE_PROMPT, JUDGE_SYSTEM
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.teacher.chat import ChatModel, Message

log = logging.getLogger(__name__)

Winner = Literal["A", "B", "tie"]


class JudgeVerdictError(HopforgeError):
    """The judge's reply is not a verdict JSON object; `raw` keeps what it said."""

    def __init__(self, message: str, raw: str) -> None:
        super().__init__(message)
        self.raw = raw


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A parsed judge reply: `score` (point-wise) or `winner` (pair-wise), and its reason."""

    score: float | None = None
    winner: Winner | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeConfig:
    """How trajectories are shown to the judge and how it is called."""

    max_steps: int = 40  # steps shown (the first max_steps - 5 and the last 5)
    max_chars: int = 300  # per thought / tool result shown
    temperature: float = 0.0
    max_tokens: int = 400
    concurrency: int = 8

    def __post_init__(self) -> None:
        for name in ("max_steps", "max_chars", "max_tokens", "concurrency"):
            if getattr(self, name) < 1:
                raise HopforgeError(f"JudgeConfig.{name}={getattr(self, name)} must be >= 1")


_WINNERS = {"a": "A", "response a": "A", "b": "B", "response b": "B", "tie": "tie",
            "draw": "tie", "equal": "tie", "none": "tie"}


def parse_verdict(text: str) -> Verdict:
    """Parse a judge reply: one JSON object with "score" in [0, 1] or "winner" A | B | tie."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise JudgeVerdictError(f"judge reply has no JSON object: {text[:200]!r}", text)
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise JudgeVerdictError(f"judge reply is not valid JSON ({exc}): {text[:200]!r}",
                                text) from exc
    if not isinstance(obj, dict):
        raise JudgeVerdictError(f"judge reply is not a JSON object: {text[:200]!r}", text)
    reason = str(obj.get("reason", ""))
    if "winner" in obj:
        w = _WINNERS.get(str(obj["winner"]).strip().lower())
        if w is None:
            raise JudgeVerdictError(
                f'judge "winner" must be "A", "B" or "tie", got {obj["winner"]!r}', text)
        return Verdict(winner=w, reason=reason)  # type: ignore[arg-type]
    if "score" in obj:
        s = obj["score"]
        if isinstance(s, bool):
            return Verdict(score=float(s), reason=reason)
        if isinstance(s, str) and re.fullmatch(r"\s*[0-9.]+\s*", s):
            s = float(s)
        if not isinstance(s, int | float) or not 0.0 <= float(s) <= 1.0:
            raise JudgeVerdictError(f'judge "score" must be a number in [0, 1], got {s!r}', text)
        return Verdict(score=float(s), reason=reason)
    raise JudgeVerdictError(f'judge reply has neither "score" nor "winner": {text[:200]!r}', text)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def render_trajectory(traj: Trajectory, config: JudgeConfig) -> str:
    """The trajectory as the judge sees it: steps and final answer, with no authorship."""
    turns = list(traj.turns)
    if len(turns) > config.max_steps:
        head, tail = config.max_steps - 5, 5
        shown: list[Any] = [*turns[:head], None, *turns[-tail:]]
    else:
        shown = turns
    lines = []
    for t in shown:
        if t is None:
            lines.append(f"... ({len(turns) - config.max_steps} steps omitted) ...")
            continue
        call = (f"{t.call.name}({json.dumps(t.call.arguments, ensure_ascii=False)})"
                if t.call else f"invalid call: {_clip(t.raw, 80)}")
        thought = f" thought: {_clip(t.thought, config.max_chars)}" if t.thought else ""
        lines.append(f"{t.index + 1}.{thought}\n   {call}\n   -> {_clip(t.result, config.max_chars)}")
    answer = traj.final_answer or f"(no answer; stopped: {traj.termination})"
    return "\n".join(lines + [f"Final answer: {answer}"])


def _reference(question: Question) -> str:
    aliases = ", ".join(question.answer_aliases)
    return question.answer + (f" (also: {aliases})" if aliases else "")


async def _ask(model: ChatModel, prompt: str, config: JudgeConfig) -> str:
    messages: list[Message] = [{"role": "system", "content": JUDGE_SYSTEM},
                               {"role": "user", "content": prompt}]
    c = await model.complete(messages, temperature=config.temperature,
                             max_tokens=config.max_tokens)
    return c.text


async def judge_score(
    model: ChatModel, question: Question, traj: Trajectory, config: JudgeConfig
) -> float | None:
    """The judge's correctness score in [0, 1], or None when its reply did not parse."""
    prompt = JUDGE_POINTWISE_PROMPT.format(
        question=question.question, reference=_reference(question),
        response=render_trajectory(traj, config))
    raw = await _ask(model, prompt, config)
    try:
        v = parse_verdict(raw)
    except JudgeVerdictError as exc:
        log.warning("point-wise judge verdict for %s ignored: %s", traj.tid, exc)
        return None
    if v.score is None:
        log.warning("point-wise judge answered a winner for %s; ignored", traj.tid)
        return None
    return v.score


async def _winner(model: ChatModel, question: Question, first: Trajectory, second: Trajectory,
                  config: JudgeConfig) -> Winner | str:
    prompt = JUDGE_PAIRWISE_PROMPT.format(
        question=question.question, reference=_reference(question),
        response_a=render_trajectory(first, config), response_b=render_trajectory(second, config))
    raw = await _ask(model, prompt, config)
    try:
        v = parse_verdict(raw)
    except JudgeVerdictError as exc:
        return f"unparsable verdict: {exc}"
    return v.winner if v.winner is not None else "unparsable verdict: no winner"


def swap_outcome(first: Winner | str, second: Winner | str) -> tuple[float, str]:
    """Outcome for `a` from verdicts on (a, b) and on (b, a); disagreement is a tie."""
    for w in (first, second):
        if w not in ("A", "B", "tie"):
            return 0.5, str(w)
    a_first = {"A": 1.0, "B": 0.0, "tie": 0.5}[first]
    a_second = {"A": 0.0, "B": 1.0, "tie": 0.5}[second]
    if a_first == a_second:
        return a_first, "agreed" if a_first != 0.5 else "tie"
    return 0.5, f"position-swap disagreement ({first} then {second})"


async def judge_pair(model: ChatModel, question: Question, a: Trajectory, b: Trajectory,
                     config: JudgeConfig) -> Comparison:
    """Compare `a` and `b` in both orders; agreement decides, disagreement is a tie."""
    first, second = await asyncio.gather(_winner(model, question, a, b, config),
                                         _winner(model, question, b, a, config))
    outcome, reason = swap_outcome(first, second)
    return Comparison(qid=question.qid, a=a.tid, b=b.tid, outcome=outcome,
                      source=f"judge:{model.name}", reason=reason)


def pair_key(qid: str, a: str, b: str) -> str:
    return f"pair\t{qid}\t{a}\t{b}"


async def judge_all(
    model: ChatModel,
    questions: Mapping[str, Question],
    trajectories: Sequence[Trajectory],
    config: JudgeConfig,
    *,
    done: Mapping[str, dict[str, Any]] | None = None,
    on_result: Callable[[str, dict[str, Any]], None] | None = None,
) -> tuple[dict[str, float], dict[str, list[Comparison]]]:
    """Point-wise verdicts per trajectory and pair-wise comparisons per question.

    `done` holds results from an earlier run by key (they are not asked again); `on_result(key,
    row)` is called for each new result, so a caller can persist them as they arrive.
    """
    done = dict(done or {})
    by_q: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        if t.qid in questions:
            by_q.setdefault(t.qid, []).append(t)
    jobs: list[tuple[str, Any]] = []
    for qid, ts in sorted(by_q.items()):
        ts = sorted(ts, key=lambda t: t.tid)
        jobs += [(f"score\t{t.tid}", (questions[qid], t)) for t in ts]
        jobs += [(pair_key(qid, a.tid, b.tid), (questions[qid], a, b))
                 for a, b in itertools.combinations(ts, 2)]
    todo = [j for j in jobs if j[0] not in done]

    async def one(job: tuple[str, Any]) -> tuple[str, dict[str, Any]]:
        key, args = job
        if key.startswith("score\t"):
            q, t = args
            row: dict[str, Any] = {"score": await judge_score(model, q, t, config)}
        else:
            q, a, b = args
            row = (await judge_pair(model, q, a, b, config)).to_row()
        if on_result is not None:
            on_result(key, row)
        return key, row

    for key, row in await bounded_map(one, todo, limit=config.concurrency):
        done[key] = row
    scores: dict[str, float] = {}
    comps: dict[str, list[Comparison]] = {}
    for key, _ in jobs:
        row = done[key]
        if key.startswith("score\t"):
            if row.get("score") is not None:
                scores[key.split("\t", 1)[1]] = float(row["score"])
        else:
            c = Comparison.from_row(row)
            comps.setdefault(c.qid, []).append(c)
    return scores, comps
