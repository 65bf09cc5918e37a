"""The scripted teacher: a `ChatModel` that plays a question's hop chain through the real tools.

It is built per question (and sample) and knows the gold chain, but it only acts on what the
tools show it: it searches with queries built from the clues, opens the hit whose doc_id the
results list, reads the bridge with find, and goes on. At configured rates it makes the detours
a model makes (a wrong document opened, a vague query reformulated, a side trip that leads
nowhere), and it reacts to injected faults: it retries after a timeout, reformulates after an
empty or cut result, and moves on when a call keeps failing. Deterministic for a seed.

Each trajectory words its thoughts in one voice and builds its queries with one habit, drawn
from its seed (synth/trajectories/voice.py): the house style at the configured rate, another one
otherwise. The style is drawn from a random stream of its own, apart from the one that decides
the detours, so changing the style rates leaves the detour rates as they are.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Document
from hopforge.synth import prompts
from hopforge.synth.annotate import normalize_text
from hopforge.synth.records import Question, ToolCall
from hopforge.synth.teacher.chat import Completion, Message
from hopforge.synth.trajectories.voice import Speaker, draw_style

_DOC_ID = re.compile(r"\[doc_id: ([^\]\s]+)\]")
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")
_STOP_WORDS = (
    "a an the of in on at to for from by with and or is was were are be been it its his her "
    "their this that which who whom whose what when where how why did does do as into than then "
    "there these those he she they them one also first later most known not"
)
_STOP = frozenset(_STOP_WORDS.split())
_GIVE_UP = "I could not find the answer."
Act = tuple[str, ToolCall]


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedConfig:
    """Detour rates, persistence and house-style rates of the scripted teacher."""

    wrong_doc: float = 0.08  # open a wrong hit before the right one
    reformulate: float = 0.15  # start a hop with a vague query, then rephrase
    dead_end: float = 0.05  # a side search and read that leads nowhere
    early_answer: float = 0.1  # stop at an intermediate document and answer its title (wrong)
    house_style: float = 0.65  # trajectories in the house style (voice and query habit)
    style_drift: float = 0.1  # thoughts and first queries in another style than the trajectory's
    max_retries: int = 2  # the same call again after an error
    max_queries: int = 5  # queries per document, then one wider search, then it gives up
    wide_k: int = 15  # results asked for by that last, wider search
    call_format: Literal["native", "tagged", "fenced"] = "native"
    k: int = 5

    def __post_init__(self) -> None:
        for name in ("wrong_doc", "reformulate", "dead_end", "early_answer", "house_style",
                     "style_drift"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise HopforgeError(
                    f"ScriptedConfig.{name} = {value!r} is out of range: use a rate in [0, 1]."
                )
        for name, lo, hi in (("max_retries", 0, 20), ("max_queries", 1, 50), ("k", 1, 20),
                                ("wide_k", 1, 20)):
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise HopforgeError(
                    f"ScriptedConfig.{name} = {value!r} is out of range: use {lo} to {hi}."
                )
        if self.call_format not in ("native", "tagged", "fenced"):
            raise HopforgeError(
                f"ScriptedConfig.call_format = {self.call_format!r}: use native, tagged or fenced."
            )


def _keywords(text: str, n: int, exclude: str = "", names_first: bool = False) -> list[str]:
    skip = {w.lower() for w in _WORD.findall(exclude)}
    out: list[str] = []
    for w in _WORD.findall(text):
        lw = w.lower()
        if lw not in _STOP and lw not in skip and len(w) > 2 and w not in out:
            out.append(w)
    if names_first:  # capitalized words (names) before the rest, each group in text order
        out.sort(key=lambda w: not w[0].isupper())
    return out[:n]


def _failed(obs: str) -> bool:
    head = obs[:120].lower()
    return obs.startswith("Error") or "timed out" in head or '"error:' in head


class ScriptedTeacher:
    """A deterministic `ChatModel` that solves one question by playing its chain."""

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
        self.rng = random.Random(seed)
        wording = random.Random(f"{seed}:style")  # a stream of its own: wording never steers
        style = draw_style(wording, self.config.house_style)
        self.speaker = Speaker(style, wording, self.config.style_drift)
        self.facts: list[tuple[str, str]] = []
        self.queries: list[str] = []
        self.visited: list[str] = []
        self.calls = 0
        self._plan = self._play()
        self._started = False
        self._done: Act | None = None

    # -- the ChatModel protocol --------------------------------------------------------------

    async def complete(
        self,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        response_format: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """The next move, read off the last message: a tool call, a checkpoint, or an answer."""
        if response_format is not None:
            text = json.dumps(self.state(), ensure_ascii=False)
            return Completion(text=text, completion_tokens=len(text) // 4 + 1, model="scripted")
        last = messages[-1] if messages else {}
        if last.get("content") == prompts.AGENT_FORCE_ANSWER:
            act = (self.speaker.say("forced"), self._answer_call(self._best()))
        else:
            act = self._next(str(last.get("content") or "") if last.get("role") != "system" else "")
        return self._emit(*act)

    def state(self) -> dict[str, Any]:
        """The teacher's own research state, in the checkpoint's JSON shape."""
        remaining = [d for d in self._route() if d not in self.visited]
        return {
            "goal": self.question.question,
            "facts": [{"fact": f, "source": s} for f, s in self.facts],
            "open_constraints": [f"still to read: {self._title(d)}" for d in remaining]
            or ["confirm the answer"],
            "queries_tried": list(self.queries),
        }

    # -- emitting -----------------------------------------------------------------------------

    def _next(self, observation: str) -> Act:
        if self._done is not None:
            return self._done
        try:
            act = next(self._plan) if not self._started else self._plan.send(observation)
        except StopIteration:
            act = ("Answering.", self._answer_call(self._best()))
        self._started = True
        if act[1].name == "answer":
            self._done = act
        return act

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

    # -- the plan -------------------------------------------------------------------------------

    def _route(self) -> list[str]:
        q = self.question
        route = list(q.evidence)
        if not route and q.hops:
            route = [q.hops[0].from_doc, *(h.to_doc for h in q.hops)]
        if q.answer_doc and q.answer_doc not in route:
            route.append(q.answer_doc)
        return [d for d in route if d in self.docs]

    def _title(self, doc_id: str) -> str:
        doc = self.docs.get(doc_id)
        return doc.title if doc else doc_id

    def _best(self) -> str:
        route = self._route()
        if route and all(d in self.visited for d in route):
            return self.question.answer
        return _GIVE_UP

    def _answer_call(self, text: str) -> ToolCall:
        return ToolCall(name="answer", arguments={"text": text})

    def _search(self, query: str, k: int | None = None) -> ToolCall:
        self.queries.append(query)
        args: dict[str, Any] = {"query": query}
        k = k or self.config.k
        if k != 5:
            args["k"] = k
        return ToolCall(name="search", arguments=args)

    def _queries(self, doc_id: str, hop_clue: str, bridge: str, first: bool) -> list[str]:
        """Queries to try for `doc_id`, best first: the habit's own, then the fallbacks."""
        title = self._title(doc_id)
        habit = self.speaker.habit()
        if first:
            q = self.question.question
            kws = _keywords(q, 6, names_first=True)
            other = _keywords(q, 2, exclude=title, names_first=True)
            built = {"question": q.strip().rstrip("?").strip(), "keywords": " ".join(kws),
                     "title": title, "title-context": f"{title} {' '.join(other)}"}
            options = [built[habit.first], built["keywords"], built["title"],
                       built["title-context"]]
        else:
            name = bridge or title
            near = _keywords(hop_clue, 2, exclude=name)
            built = {"name": name, "name-near": f"{name} {' '.join(near)}".strip(),
                     "near-name": f"{' '.join(near[:1])} {name}", "quoted": f'"{name}"'}
            rest = [built["name"], built["name-near"], built["near-name"]]
            self.rng.shuffle(rest)
            options = [built[habit.next], *rest]
            if self.rng.random() < self.config.reformulate:
                vague = " ".join(_keywords(hop_clue, 4, exclude=name))
                if vague:
                    options.insert(0, vague)
            options.append(title)
            target = self.docs.get(doc_id)
            if target is not None:  # what the thing is about: a guess a reader would make
                about = _keywords(target.text[:200], 2, exclude=f"{name} {title}")
                options.append(f"{title} {' '.join(about)}")
        return self._unsent(options)[: self.config.max_queries]

    def _unsent(self, options: list[str]) -> list[str]:
        """`options` less blanks and queries whose words were already tried (in any order)."""
        seen = {normalize_text(q) for q in self.queries}
        out: list[str] = []
        for o in (o.strip() for o in options):
            key = normalize_text(o)
            if key and key not in seen:
                seen.add(key)
                out.append(o)
        return out

    def _call_with_retries(self, thought: str, call: ToolCall) -> Generator[Act, str, str]:
        obs = yield thought, call
        for _ in range(self.config.max_retries):
            if not _failed(obs):
                break
            obs = yield self.speaker.say("retry"), call
        return obs

    def _locate(self, doc_id: str, queries: list[str]) -> Generator[Act, str, str | None]:
        title = self._title(doc_id)
        for i, query in enumerate(queries):
            if i:
                thought = self.speaker.say("rephrase")
            elif self.visited:
                thought = self.speaker.say("search", what=title, title=title)
            else:  # the first entity, named the voice's way
                thought = self.speaker.say("search", title=title)
            obs = yield from self._call_with_retries(thought, self._search(query))
            if doc_id in _DOC_ID.findall(obs):
                return obs
        target = self.docs.get(doc_id)
        about = _keywords(target.text[:300], 4, exclude=title) if target is not None else []
        wider = self._unsent([title, f"{title} {' '.join(about[:2])}", f"{title} {' '.join(about)}"])
        wide = self._search(wider[0] if wider else title, k=self.config.wide_k)
        obs = yield from self._call_with_retries(self.speaker.say("widen"), wide)
        return obs if doc_id in _DOC_ID.findall(obs) else None

    def _read(self, doc_id: str, pattern: str) -> Generator[Act, str, None]:
        title = self._title(doc_id)
        call = ToolCall(name="open", arguments={"doc_id": doc_id})
        obs = yield from self._call_with_retries(self.speaker.say("open", title=title), call)
        opened = not _failed(obs) and doc_id in obs
        if not pattern:
            return
        if opened and pattern.lower() in obs.lower() and self.rng.random() < 0.5:
            return
        find = ToolCall(name="find", arguments={"doc_id": doc_id, "pattern": pattern})
        thought = self.speaker.say("find" if opened else "find_fallback", title=title,
                                   pattern=pattern)
        yield from self._call_with_retries(thought, find)

    def _side_trip(self, doc_id: str) -> Generator[Act, str, None]:
        doc = self.docs[doc_id]
        gold = set(self._route())
        others = [d for d in doc.links if d not in gold and d in self.docs]
        if not others:
            return
        other = self.rng.choice(others)
        name = self._title(other)
        obs = yield self.speaker.say("side", other=name), self._search(name)
        if other in _DOC_ID.findall(obs):
            yield (self.speaker.say("side_open", other=name),
                   ToolCall(name="open", arguments={"doc_id": other}))

    def _play(self) -> Generator[Act, str, None]:
        q = self.question
        route = self._route()
        into = {h.to_doc: h for h in q.hops}
        out_of = {h.from_doc: h for h in q.hops}
        stop_at = -1  # a trajectory that jumps to a conclusion: answers an intermediate entity
        if len(route) > 2 and self.rng.random() < self.config.early_answer:
            stop_at = self.rng.randrange(1, len(route) - 1)
        for i, doc_id in enumerate(route):
            hop = into.get(doc_id)
            queries = self._queries(doc_id, hop.clue if hop else "", hop.bridge if hop else "",
                                    first=i == 0)
            obs = yield from self._locate(doc_id, queries)
            if obs is None:
                yield self.speaker.say("give_up"), self._answer_call(self._best())
                return
            wrong = [d for d in _DOC_ID.findall(obs) if d not in route]
            if wrong and self.rng.random() < self.config.wrong_doc:
                pick = self.rng.choice(wrong)
                yield (self.speaker.say("open_wrong", title=self._title(pick)),
                       ToolCall(name="open", arguments={"doc_id": pick}))
            nxt = out_of.get(doc_id)
            pattern = nxt.bridge if nxt else ""
            if not nxt and doc_id == route[-1] and q.answer.lower() != self._title(doc_id).lower():
                pattern = q.answer  # confirm the answer where it is stated
            if i == stop_at and self._title(doc_id).lower() != q.answer.lower():
                yield (self.speaker.say("early", title=self._title(doc_id)),
                       self._answer_call(self._title(doc_id)))
                return
            yield from self._read(doc_id, pattern)
            self.visited.append(doc_id)
            self.facts.append((nxt.clue if nxt else f"{self._title(doc_id)} was read.", doc_id))
            if nxt and self.rng.random() < self.config.dead_end:
                yield from self._side_trip(doc_id)
        yield self.speaker.say("answer", answer=q.answer), self._answer_call(q.answer)
