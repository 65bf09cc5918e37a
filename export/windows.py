"""SFT windows: a trajectory cut into the contexts the teacher saw, each short enough to train on.

The agent's context manager (`hopforge.synth.trajectories.context.Context`) decides what the
teacher saw. A window replays that manager over the trajectory's turns, feeding it the turns
and checkpoints in the order of the run: its row is the prompt the teacher was given for the
window's last turn, followed by that turn's assistant message. A context epoch (up to a
checkpoint, or the end) is one window; an epoch longer than `max_seq_tokens` is cut into
several windows that each start from the epoch's checkpoint state. Each turn is trained in
exactly one window: turns from before the epoch (context only) have weight 0 there.

Earlier assistant messages of a window see their older results as the window's last prompt
shows them (elided), not as they were when those turns were written.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.tools import ToolResult, is_final
from hopforge.export.justify import hide_unjustified
from hopforge.export.messages import Arguments, call_ids, turn_message_pair, without_tool_schemas
from hopforge.export.token_estimate import Counter, estimate_tokens, memo_estimate
from hopforge.synth import prompts
from hopforge.synth.annotate import shown_doc_ids
from hopforge.synth.records import Checkpoint, Trajectory, Turn
from hopforge.synth.trajectories.context import Context
from hopforge.synth.trajectories.loop import _pointer as elided_pointer


class WindowTooLong(HopforgeError):
    """A single turn, with the window's head, does not fit in `max_seq_tokens`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowSettings:
    """How the teacher's context was managed (from the build's trajectories settings)."""

    keep_results: int = 5
    context_tokens: int = 32_768
    reserve_tokens: int = 1024
    max_seq_tokens: int = 32_768
    reasoning: str = "keep"  # keep | last | drop: which assistant messages show their reasoning


@dataclass(frozen=True, slots=True, kw_only=True)
class Window:
    """One row's worth of a trajectory: messages, and which turns it shows and trains."""

    messages: tuple[dict[str, Any], ...]
    turns: tuple[int, ...]  # turn index of each assistant message, in order
    trained: tuple[int, ...]  # the turns this window trains (weight may still be 0)
    checkpoint: int  # turn of the checkpoint the window starts from; -1: the question alone
    tokens: int


def tokenizer_counter(tokenizer: Any) -> Counter:
    """Size in tokens with a tokenizer: its chat template when it has one, else the contents."""

    def count(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> int:
        if getattr(tokenizer, "chat_template", None):
            ids = tokenizer.apply_chat_template(
                list(messages), tools=list(tools) or None, tokenize=True
            )
            return len(ids["input_ids"] if isinstance(ids, Mapping) else ids)  # BatchEncoding
        text = char_text(messages, tools)
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    return count


def char_text(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]]) -> str:
    """The text a row holds: tool schemas, then each message's role, content and calls."""
    parts = [json.dumps(list(tools), ensure_ascii=False)] if tools else []
    for m in messages:
        calls = [json.dumps(c["function"], ensure_ascii=False) for c in m.get("tool_calls") or ()]
        parts.append("\n".join([m["role"], m.get("content") or "", *calls]))
    return "\n".join(parts)


@dataclass(slots=True)
class _Step:
    """A turn as the context manager holds it."""

    turn: int
    assistant: dict[str, Any]
    result: dict[str, Any] | None  # None: the final answer, never followed by a result
    pointer: str | None


def _steps(traj: Trajectory, weights: Sequence[int], arguments: Arguments,
           tool_names: bool) -> list[_Step]:
    out = []
    for turn, weight, cid in zip(traj.turns, weights, call_ids(traj), strict=True):
        assistant, result = turn_message_pair(
            turn, weight, cid, arguments=arguments, tool_names=tool_names
        )
        out.append(_Step(turn=turn.index, assistant=assistant, result=result,
                         pointer=_pointer(turn)))
    if out and _is_answer(traj.turns[-1]):
        out[-1].result = None
    return out


def _is_answer(turn: Turn) -> bool:
    return turn.call is not None and is_final(turn.call.name) and turn.args_valid


def _pointer(turn: Turn) -> str | None:
    if turn.call is None:
        return None  # a correction is never elided
    result = ToolResult(text=turn.result, ok=not turn.error, doc_ids=shown_doc_ids(turn))
    return elided_pointer(turn.index, turn.call, result)  # the agent's own wording


def _context(traj: Trajectory, question: str, settings: WindowSettings) -> Context:
    """A fresh context manager with the run's settings, before any turn."""
    return Context(without_tool_schemas(traj.system_prompt), question,
                   keep_results=settings.keep_results, context_tokens=settings.context_tokens,
                   reserve_tokens=settings.reserve_tokens,
                   reasoning="keep" if settings.reasoning == "keep" else "drop")


def _prompt(ctx: Context, step: _Step, *, forced: bool, reasoning: str = "keep"
            ) -> list[dict[str, Any]]:
    """The prompt `ctx` renders now (the forced-answer request last when `forced`), then
    `step`'s assistant message (with its reasoning unless `reasoning` is drop); copies, so a
    row may change their weights."""
    extra = {"role": "user", "content": prompts.AGENT_FORCE_ANSWER} if forced else None
    messages = [dict(m) for m in ctx.render(extra=extra, compact=forced)]
    if not messages[0].get("content"):
        messages = messages[1:]  # no system prompt
    last = {k: v for k, v in step.assistant.items()
            if not (k == "reasoning_content" and reasoning == "drop")}
    return [*messages, last]


class _Feed:
    """One context manager fed steps in the order of the run; `prompt` renders it as a fresh
    manager fed the same steps would, without replaying them.

    A candidate window renders a shallow copy: rendering (and setting the window's starting
    checkpoint) rebinds the copy's attributes and never changes the steps it shares with the
    feed, so the next candidate only feeds its one new step.
    """

    def __init__(self, traj: Trajectory, question: str, cp: Checkpoint | None,
                 settings: WindowSettings) -> None:
        self.ctx = _context(traj, question, settings)
        self.cps = {c.turn: c for c in traj.checkpoints}
        self.cp = cp
        self.reasoning = settings.reasoning

    def feed(self, step: _Step) -> None:
        self.ctx.add_step(step.turn, step.assistant, step.result or {}, step.pointer)
        if step.turn in self.cps:  # checkpoints come in as they did in the run
            self.ctx.set_checkpoint(self.cps[step.turn])

    def drop_oldest(self) -> None:
        """Forget the oldest step fed, as a feed of the later steps alone would have it."""
        self.ctx.drop_oldest()

    def prompt(self, last: _Step, *, forced: bool) -> list[dict[str, Any]]:
        """The prompt for `last` after the steps fed so far, then its assistant message."""
        view = copy.copy(self.ctx)
        if self.cp is not None and view.checkpoint is None:
            view.set_checkpoint(self.cp)  # the window starts after the turns that led to it
        return _prompt(view, last, forced=forced, reasoning=self.reasoning)


def _render(traj: Trajectory, question: str, cp: Checkpoint | None, steps: Sequence[_Step],
            settings: WindowSettings, *, forced: bool) -> list[dict[str, Any]]:
    """The teacher's prompt for the last of `steps`, then that step's assistant message."""
    feed = _Feed(traj, question, cp, settings)
    for s in steps[:-1]:
        feed.feed(s)
    return feed.prompt(steps[-1], forced=forced)


def _epochs(traj: Trajectory, steps: list[_Step], keep: int
            ) -> list[tuple[Checkpoint | None, list[_Step], list[_Step], bool]]:
    """(checkpoint, carried steps, own steps, forced) for each context epoch, in order."""
    cps = {cp.turn: cp for cp in traj.checkpoints}
    forced_last = traj.termination == "context_limit" and _is_answer(traj.turns[-1])
    out = []
    cp: Checkpoint | None = None
    carried: list[_Step] = []  # the last turns before the checkpoint, still shown after it
    epoch: list[_Step] = []
    for i, step in enumerate(steps):
        epoch.append(step)
        last = i == len(steps) - 1
        if not last and step.turn not in cps:
            continue
        out.append((cp, carried, epoch, last and forced_last))
        carried = [*carried, *epoch]  # earlier turns stay in the prompt until it is full
        cp, epoch = cps.get(step.turn), []
    return out


def windows(
    traj: Trajectory,
    question: str,
    weights: Sequence[int],
    tools: Sequence[dict[str, Any]],
    settings: WindowSettings,
    *,
    arguments: Arguments = "object",
    tool_names: bool = True,
    count: Counter = estimate_tokens,
) -> list[Window]:
    """The windows of a trajectory, in order; raises `WindowTooLong` when a turn cannot fit."""
    count = memo_estimate() if count is estimate_tokens else count
    steps = _steps(traj, weights, arguments, tool_names)
    out: list[Window] = []
    for cp, carried, own, forced in _epochs(traj, steps, settings.keep_results):
        out += _split(traj, question, cp, carried, own, tools, settings, count, forced)
    return out


def turn_windows(
    traj: Trajectory,
    question: str,
    weights: Sequence[int],
    tools: Sequence[dict[str, Any]],
    settings: WindowSettings,
    *,
    count: Counter = estimate_tokens,
) -> list[Window]:
    """One window per trained turn: exactly the prompt the teacher got for it, then the turn.

    When that prompt is longer than `max_seq_tokens`, its oldest turns are left out (the
    window still starts from the epoch's checkpoint state).
    """
    count = memo_estimate() if count is estimate_tokens else count
    steps = _steps(traj, weights, "object", True)
    out: list[Window] = []
    # one context manager fed turn by turn and rendered itself, as in the run: each prompt
    # is rendered once
    run = _Feed(traj, question, None, settings)
    for cp, carried, own, forced in _epochs(traj, steps, settings.keep_results):
        for i, step in enumerate(own):
            if step.assistant.get("weight"):
                is_forced = forced and i == len(own) - 1
                shown = [*carried, *own[: i + 1]]
                msgs = _prompt(run.ctx, step, forced=is_forced, reasoning=settings.reasoning)
                tokens = count(msgs, tools)
                trimmed: _Feed | None = None  # the shown turns before `step`, fed once
                while tokens > settings.max_seq_tokens:  # the oldest turns leave the row
                    if len(shown) == 1:
                        raise WindowTooLong(
                            f"trajectory {traj.tid}: turn {step.turn} alone needs more than "
                            f"max_seq_tokens={settings.max_seq_tokens} tokens; raise "
                            "[export] max_seq_tokens"
                        )
                    # as many as the excess over the mean turn's size, at least one
                    excess = tokens - settings.max_seq_tokens
                    drop = max(1, math.ceil(excess * len(shown) / max(1, tokens)))
                    drop = min(drop, len(shown) - 1)
                    shown = shown[drop:]
                    if trimmed is None:
                        trimmed = _Feed(traj, question, cp, settings)
                        for s in shown[:-1]:
                            trimmed.feed(s)
                    else:
                        for _ in range(drop):
                            trimmed.drop_oldest()
                    msgs = trimmed.prompt(step, forced=is_forced)
                    tokens = count(msgs, tools)
                window = _one_turn(traj, step, msgs, shown, cp, tokens)
                if window is not None:
                    out.append(window)
            run.feed(step)
    return out


def _one_turn(traj: Trajectory, step: _Step, msgs: list[dict[str, Any]], shown: list[_Step],
              cp: Checkpoint | None, tokens: int) -> Window | None:
    """The one-turn row: earlier assistant messages are context; None when the turn used
    what even the teacher's prompt did not show."""
    for m in _assistants(msgs)[:-1]:
        m["weight"] = 0
    hide_unjustified(msgs)
    if not msgs[-1].get("weight"):
        return None
    n = len(_assistants(msgs))
    return Window(messages=tuple(msgs), turns=tuple(s.turn for s in shown[-n:]),
                  trained=(step.turn,), checkpoint=cp.turn if cp is not None else -1,
                  tokens=tokens)


def _split(traj: Trajectory, question: str, cp: Checkpoint | None, carried: list[_Step],
           own: list[_Step], tools: Sequence[dict[str, Any]], settings: WindowSettings,
           count: Counter, forced: bool) -> list[Window]:
    """One epoch as windows: whole when it fits, else the longest runs of turns that do.

    A run grows one turn at a time on one fed context manager (`_Feed`); only its size is
    measured until it stops fitting, and the longest run that fit becomes the window.
    """
    limit = settings.max_seq_tokens

    def window(context: list[_Step], trained: list[_Step], msgs: list[dict[str, Any]],
               tokens: int) -> Window:
        shown = [*context, *trained]
        before = {id(s) for s in context}
        assistants = _assistants(msgs)
        for m, s in zip(assistants, shown[len(shown) - len(assistants):], strict=True):
            if id(s) in before and "weight" in m:
                m["weight"] = 0  # trained in the window before
        hide_unjustified(msgs)
        rendered = shown[len(shown) - len(assistants):]
        return Window(messages=tuple(msgs), turns=tuple(s.turn for s in rendered),
                      trained=tuple(s.turn for s in trained),
                      checkpoint=cp.turn if cp is not None else -1, tokens=tokens)

    # a window trains at most `keep_results` turns: the ones whose results its prompt still
    # shows verbatim (an earlier turn would be trained on a result the row has elided)
    most = max(1, settings.keep_results)
    if len(own) <= most:
        msgs = _render(traj, question, cp, [*carried, *own], settings, forced=forced)
        tokens = count(msgs, tools)
        if tokens <= limit:
            return [window(carried, own, msgs, tokens)]
    out: list[Window] = []
    start, context = 0, list(carried)
    feed: _Feed | None = None
    while start < len(own):
        if feed is None:
            feed = _Feed(traj, question, cp, settings)
            for s in context:
                feed.feed(s)
        best: tuple[list[dict[str, Any]], int, int] | None = None
        for end in range(start + 1, min(len(own), start + most) + 1):
            if end > start + 1:
                feed.feed(own[end - 2])
            msgs = feed.prompt(own[end - 1], forced=forced and end == len(own))
            tokens = count(msgs, tools)
            if tokens > limit:
                break
            best = (msgs, tokens, end)
        if best is None:  # only the context was fed: the window starts one turn later
            if context:
                context = context[1:]
                feed.drop_oldest()
                continue
            raise WindowTooLong(
                f"trajectory {traj.tid}: turn {own[start].turn} alone needs more than "
                f"max_seq_tokens={limit} tokens; raise [export] max_seq_tokens"
            )
        msgs, tokens, end = best
        out.append(window(context, own[start:end], msgs, tokens))
        context = [*context, *own[start:end]]  # the next window's prompt is the teacher's:
        start, feed = end, None  # every earlier turn, old results elided as it saw them
    return out


def _assistants(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m["role"] == "assistant"]
