"""The agent's message history: recent results verbatim, older ones elided, checkpoints, budget.

The rendered context is: the system prompt; the question (with the latest checkpoint under it);
then every turn's assistant message with its result. The last `keep_results` tool results are
shown verbatim and older ones become a one-line pointer that says how to see them again.
Only when the prompt would not fit in `context_tokens` are the oldest turns that the latest
checkpoint summarizes left out, oldest first; the full record stays on the trajectory. The
prompt size is estimated in tokens and calibrated against the server's counts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from hopforge.synth import prompts
from hopforge.synth.records import Checkpoint
from hopforge.synth.teacher.chat import Message

CHARS_PER_TOKEN = 4.0  # the starting estimate, until a server reports real prompt sizes
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators per message
_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?```\s*$", re.DOTALL)

CHECKPOINT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"fact": {"type": "string"}, "source": {"type": "string"}},
                "required": ["fact", "source"],
            },
        },
        "open_constraints": {"type": "array", "items": {"type": "string"}},
        "queries_tried": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["goal", "facts", "open_constraints", "queries_tried"],
}
CHECKPOINT_RESPONSE_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "checkpoint", "schema": CHECKPOINT_SCHEMA},
}


class CheckpointParseError(ValueError):
    """The teacher's checkpoint is not the JSON state object asked for; `raw` keeps it."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


def parse_checkpoint_json(text: str, turn: int) -> Checkpoint:
    """Read a checkpoint written as JSON (optionally fenced) into a `Checkpoint`."""
    match = _FENCE.match(text)
    body = match.group(1) if match else text
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise CheckpointParseError(
            f"the checkpoint is not valid JSON ({exc.msg} at position {exc.pos}); "
            "answer with one JSON object with goal, facts, open_constraints, queries_tried",
            text,
        ) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("goal"), str):
        raise CheckpointParseError(
            'the checkpoint must be a JSON object with a string "goal"', text
        )
    facts: list[tuple[str, str]] = []
    for item in obj.get("facts") or ():
        if isinstance(item, dict) and isinstance(item.get("fact"), str):
            facts.append((item["fact"], str(item.get("source") or "")))
        elif isinstance(item, list | tuple) and len(item) == 2:
            facts.append((str(item[0]), str(item[1])))
        else:
            raise CheckpointParseError(
                f"checkpoint fact {item!r} is not an object with fact and source", text
            )
    return Checkpoint(
        turn=turn,
        goal=obj["goal"],
        facts=tuple(facts),
        open_constraints=tuple(str(c) for c in obj.get("open_constraints") or ()),
        queries_tried=tuple(str(q) for q in obj.get("queries_tried") or ()),
    )


def render_checkpoint(cp: Checkpoint) -> str:
    """The checkpoint as the block shown under the question."""
    facts = "\n".join(f"- {fact} (source: {src or 'unknown'})" for fact, src in cp.facts)
    return prompts.AGENT_CHECKPOINT_BLOCK.format(
        turn=cp.turn,
        goal=cp.goal,
        facts=facts or "- none yet",
        open_constraints="\n".join(f"- {c}" for c in cp.open_constraints) or "- none",
        queries_tried="; ".join(cp.queries_tried) or "none",
    )


@dataclass(slots=True)
class _Step:
    """The messages of one turn: the assistant's, then the result (or a correction)."""

    turn: int
    assistant: Message
    result: Message
    pointer: Message | None  # the result message with its content elided; None: never elide
    chars: int
    pointer_chars: int


ReasoningMode = Literal["keep", "last", "drop"]  # which assistant messages keep their reasoning
REASONING_MODES: tuple[str, ...] = get_args(ReasoningMode)


def _size(message: Message) -> int:
    content = message.get("content") or ""
    calls = message.get("tool_calls")
    extra = sum(len(_arguments(c["function"]["arguments"])) + 24 for c in calls) if calls else 0
    return len(content) + len(message.get("reasoning_content") or "") + extra


def _arguments(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


class Context:
    """The history of one trajectory, rendered into messages for each teacher call."""

    def __init__(
        self,
        system_prompt: str,
        question: str,
        *,
        keep_results: int,
        context_tokens: int,
        reserve_tokens: int,
        reasoning: str = "keep",
    ) -> None:
        if reasoning not in REASONING_MODES:
            raise ValueError(f"reasoning = {reasoning!r}: use one of {', '.join(REASONING_MODES)}")
        self.reasoning = reasoning  # keep: earlier assistant messages show their reasoning
        self.system = {"role": "system", "content": system_prompt}
        self.question_text = prompts.AGENT_QUESTION.format(question=question)
        self.keep_results = keep_results
        self.context_tokens = context_tokens
        self.reserve_tokens = reserve_tokens
        self.chars_per_token = CHARS_PER_TOKEN
        self.checkpoint: Checkpoint | None = None
        self._head = self._make_head()
        self._steps: list[_Step] = []
        self._flat: list[Message] = []  # each step's assistant message, then its result or pointer
        self._elided = 0  # steps before this one show their pointer
        self._chars = 0  # size of `_flat`
        self._summarized = 0  # steps the latest checkpoint covers: left out first when full
        self._checkpoint_steps = 0  # steps there were when the latest checkpoint was set
        self._left_out = (0, 0)  # (steps, their chars) the last full render left out
        self._rendered_chars = 0
        self._rendered_messages = 0
        self._first = 0

    def _make_head(self) -> list[Message]:
        text = self.question_text
        if self.checkpoint is not None:
            text = f"{text}\n\n{render_checkpoint(self.checkpoint)}"
        return [self.system, {"role": "user", "content": text}]

    def add_step(self, turn: int, assistant: Message, result: Message, pointer: str | None) -> None:
        """Append one turn; `pointer` is the short text that replaces the result once it is old.

        Unless the manager keeps reasoning, the assistant message is shown (and sized) without
        its `reasoning_content`.
        """
        if self.reasoning != "keep" and "reasoning_content" in assistant:
            assistant = {k: v for k, v in assistant.items() if k != "reasoning_content"}
        elided = None if pointer is None else {**result, "content": pointer}
        step = _Step(
            turn=turn,
            assistant=assistant,
            result=result,
            pointer=elided,
            chars=_size(assistant) + _size(result),
            pointer_chars=_size(assistant) + (len(pointer) if pointer is not None else 0),
        )
        self._steps.append(step)
        self._flat += [assistant, result]
        self._chars += step.chars
        while self._elided < len(self._steps) - self.keep_results:  # an old result: its pointer
            old = self._steps[self._elided]
            if old.pointer is not None:
                self._flat[2 * self._elided + 1] = old.pointer
                self._chars += old.pointer_chars - old.chars
            self._elided += 1

    def _shown_chars(self, i: int) -> int:
        step = self._steps[i]
        return step.pointer_chars if i < self._elided and step.pointer is not None else step.chars

    def set_checkpoint(self, cp: Checkpoint) -> None:
        """Show `cp` under the question; the turns it covers may be left out once the prompt is full."""
        self.checkpoint = cp
        self._head = self._make_head()
        self._summarized = max(0, len(self._steps) - self.keep_results)
        self._checkpoint_steps = len(self._steps)

    def drop_oldest(self) -> None:
        """Forget the oldest step: the state is as if the later steps alone had been added.

        A checkpoint set right after the forgotten step goes with it. Rendering is not undone:
        call this on a manager that has not rendered yet (the export's windows do).
        """
        step = self._steps.pop(0)
        elided = self._elided > 0 and step.pointer is not None
        self._chars -= step.pointer_chars if elided else step.chars
        del self._flat[:2]
        self._elided = max(0, self._elided - 1)
        if self.checkpoint is not None:
            self._checkpoint_steps -= 1
            if self._checkpoint_steps == 0:  # set by the forgotten step alone
                self.checkpoint = None
                self._head = self._make_head()
                self._summarized = 0
            else:
                self._summarized = max(0, self._checkpoint_steps - self.keep_results)

    def render(self, *, extra: Message | None = None, compact: bool = False) -> list[Message]:
        """Messages for the next call; `compact` keeps only as much of the verbatim tail as fits."""
        n = len(self._steps)
        head_chars = sum(_size(m) for m in self._head) + (_size(extra) if extra else 0)
        first, dropped = (0, 0) if compact else self._left_out  # start where the last one did
        total = head_chars + self._chars - dropped
        droppable = n if compact else self._summarized  # compact: any turn, to fit an answer
        fixed = len(self._head) + (extra is not None)  # messages shown whatever is left out

        while first > 0 and self._fits(total + self._shown_chars(first - 1),
                                       fixed + 2 * (n - first + 1)):
            first -= 1  # room again (a larger budget, a shorter checkpoint): show it once more
            total += self._shown_chars(first)
        # a compacted prompt is the last chance to answer: leave a margin for the estimate's error
        margin = max(16, self.context_tokens // 50) if compact else 0
        while first < droppable and not self._fits(total, fixed + 2 * (n - first), margin):
            total -= self._shown_chars(first)
            first += 1
        if not compact:
            self._left_out = (first, head_chars + self._chars - total)
        messages = [*self._head, *self._flat[2 * first:]]
        if extra is not None:
            messages.append(extra)
        self._rendered_chars = total
        self._rendered_messages = len(messages)
        self._first = first
        return messages

    def _fits(self, chars: int, n_messages: int, margin: int = 0) -> bool:
        tokens = int(chars / self.chars_per_token) + MESSAGE_OVERHEAD_TOKENS * n_messages
        return tokens + self.reserve_tokens + margin <= self.context_tokens

    def estimate_tokens(self) -> int:
        """Estimated size of the last rendered prompt, in tokens."""
        overhead = MESSAGE_OVERHEAD_TOKENS * self._rendered_messages
        return int(self._rendered_chars / self.chars_per_token) + overhead

    def calibrate(self, prompt_tokens: int) -> None:
        """Fit characters-per-token to a prompt size the server reported for the last render."""
        overhead = MESSAGE_OVERHEAD_TOKENS * self._rendered_messages
        if prompt_tokens > overhead and self._rendered_chars > 0:
            self.chars_per_token = max(1.0, self._rendered_chars / (prompt_tokens - overhead))

    def over_budget(self) -> bool:
        """Whether the last rendered prompt plus a completion would exceed the context length."""
        return self.estimate_tokens() + self.reserve_tokens > self.context_tokens

    @property
    def shown_steps(self) -> int:
        """Turns in the last rendered prompt."""
        return len(self._steps) - self._first
