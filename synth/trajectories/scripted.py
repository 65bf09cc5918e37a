"""The scripted teacher: a `ChatModel` that solves a question's spec through the real tools.

It is built per question (and sample) and holds the spec as a map, but it plays fair: every
query, pattern and doc_id it sends comes from the question or from a tool result it was shown
earlier (synth/trajectories/reading.py); the map only chooses among those. Its plan per family
is in synth/trajectories/families.py; its state (facts, open question, tally) goes into every
thought and every checkpoint. At configured rates it checks wrong candidates first and answers
an intermediate entity early; it reacts to every injected fault. Deterministic for a seed.

Each trajectory words its thoughts in one voice and builds its queries with one habit, drawn
from its seed (synth/trajectories/voice.py): the house style at the configured rate, another one
otherwise. The style is drawn from a random stream of its own, apart from the one that decides
the detours, so changing the style rates leaves the detour rates as they are.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any, Literal

import pydantic
from hopforge.corpus.records import Document
from hopforge.corpus.settings import SETTINGS, share
from hopforge.corpus.tools import is_final
from hopforge.synth import prompts
from hopforge.synth.records import Question, ToolCall
from hopforge.synth.teacher.chat import Completion, Message
from hopforge.synth.trajectories.families import GIVE_UP, Plans, legacy_spec
from hopforge.synth.trajectories.reading import Act, Reader
from hopforge.synth.trajectories.voice import Speaker, draw_style
from pydantic import Field


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class ScriptedConfig:
    """Detour rates, persistence and house-style rates of the scripted teacher."""

    wrong_doc: float = share(0.3, (
        "check wrong candidates (earlier mentions, other hits) first"))
    max_wrong: int = Field(default=3, ge=0, le=50, description=(
        "at most this many wrong candidates before the right one"))
    early_answer: float = share(0.1, (
        "stop at an intermediate document and answer its title (wrong)"))
    house_style: float = share(0.65, "trajectories in the house style (voice and query habit)")
    style_drift: float = share(
        0.1, "thoughts and first queries in another style than the trajectory's")
    max_retries: int = Field(default=2, ge=0, le=20, description="the same call again after an error")
    wide_k: int = Field(default=20, ge=1, le=20, description="results asked for by the wider searches")
    call_format: Literal["native", "tagged", "fenced"] = Field(default="native", description=(
        "how its calls are written: native tool calls, <tool_call> tags or fenced JSON"))
    k: int = Field(default=5, ge=1, le=20, description="results asked for by a search")


class ScriptedTeacher:
    """A deterministic `ChatModel` that solves one question from its spec, fairly."""

    name = "scripted"

    def __init__(
        self,
        question: Question,
        documents: Mapping[str, Document],
        *,
        seed: int,
        config: ScriptedConfig | None = None,
    ) -> None:
        self.question = question
        self.docs = documents
        self.config = config or ScriptedConfig()
        rng = random.Random(seed)
        wording = random.Random(f"{seed}:style")  # a stream of its own: wording never steers
        style = draw_style(wording, self.config.house_style)
        self.speaker = Speaker(style, wording, self.config.style_drift)
        self.reader = Reader(documents, self.speaker, max_retries=self.config.max_retries,
                             k=self.config.k, wide_k=self.config.wide_k)
        spec = question.spec or legacy_spec(question, documents)
        self.plans = Plans(question, spec, self.reader, rng,
                           wrong_candidate=self.config.wrong_doc, max_wrong=self.config.max_wrong,
                           early_answer=self.config.early_answer)
        self.calls = 0
        self._plan = self.plans.play()
        self._started = False
        self._done: Act | None = None

    @property
    def queries(self) -> list[str]:
        return self.reader.queries

    # -- the ChatModel protocol --------------------------------------------------------------

    async def complete(
        self, messages: list[Message], **options: Any
    ) -> Completion:
        """The next move, read off the last message: a tool call, a checkpoint, or an answer.

        Of the `CompletionOptions` it heeds only `response_format` (it then reports its state).
        """
        if options.get("response_format") is not None:
            text = json.dumps(self.state(), ensure_ascii=False)
            return Completion(text=text, completion_tokens=len(text) // 4 + 1, model="scripted")
        last = messages[-1] if messages else {}
        if last.get("content") == prompts.AGENT_FORCE_ANSWER:
            act = (self.reader.say("forced"), self._answer_call(self._best()))
        else:
            act = self._next(str(last.get("content") or "") if last.get("role") != "system" else "")
        return self._emit(*act)

    def state(self) -> dict[str, Any]:
        """The teacher's own research state, in the checkpoint's JSON shape."""
        return self.plans.book.checkpoint(self.reader.queries[-30:], self.speaker.style.voice)

    # -- emitting -----------------------------------------------------------------------------

    def _next(self, observation: str) -> Act:
        if self._done is not None:
            return self._done
        try:
            act = next(self._plan) if not self._started else self._plan.send(observation)
        except StopIteration:
            act = (self.reader.say("give_up"), self._answer_call(self._best()))
        self._started = True
        if is_final(act[1].name):
            self._done = act
        return act

    def _best(self) -> str:
        """The answer when it must stop now: only what it has read allows one."""
        return GIVE_UP

    def _answer_call(self, text: str) -> ToolCall:
        return ToolCall(name="answer", arguments={"text": text})

    def _emit(self, thought: str, call: ToolCall) -> Completion:
        self.calls += 1
        call = ToolCall(name=call.name, arguments=call.arguments, call_id=f"call_{self.calls}")
        body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
        tokens = (len(thought) + len(body)) // 4 + 1
        fmt = self.config.call_format
        if fmt == "native":
            return Completion(
                text=thought, tool_calls=(call,), finish_reason="tool_calls",
                completion_tokens=tokens, model="scripted",
            )
        text = (
            f"{thought}\n<tool_call>{body}</tool_call>"
            if fmt == "tagged"
            else f"{thought}\n```json\n{body}\n```"
        )
        return Completion(text=text, completion_tokens=tokens, model="scripted")
