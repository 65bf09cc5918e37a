"""The model composer: a teacher model puts a spec into words, and checks what it wrote.

The spec and a plain wording go into a prompt (synth/prompts.py); the model answers with
`{"question": ...}` through a JSON-schema `response_format`, parsed in exactly one function,
`parse_question_json`, which raises `QuestionParseError`. The answer is the spec's, never the
model's. The same model then reads the question back into a `Reading` (the round trip:
`read_back`, parsed by `parse_reading`), which `misread` compares with the spec, answers the
question with its evidence documents in the prompt (the oracle-context check) and, when asked,
without them (the closed-book probe).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hopforge.synth import prompts
from hopforge.synth.answers import answers_match, list_items, says_not_found
from hopforge.synth.questions.families import family_of
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import NONE, NOT_FOUND, Question, Spec
from hopforge.synth.teacher.chat import ChatModel, Message, ModelResponseError
from hopforge.synth.teacher.wire import json_schema_format

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string"}},
    "required": ["question"],
    "additionalProperties": False,
}
DIRECTIONS = ("mentioned_by_source", "mentions_source")
ANSWER_RELATIONS = ("mentioned_by_clues", "mentions_clues", "none")
ASKS = ("title", "year", "count", "list", "earlier", "later")
READING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "named": {"type": "array", "items": {"type": "string"}},
        "clues": {"type": "array", "items": {
            "type": "object",
            "properties": {"phrase": {"type": "string"},
                           "direction": {"type": "string", "enum": list(DIRECTIONS)}},
            "required": ["phrase", "direction"],
            "additionalProperties": False,
        }},
        "answer_relation": {"type": "string", "enum": list(ANSWER_RELATIONS)},
        "asks": {"type": "string", "enum": list(ASKS)},
    },
    "required": ["named", "clues", "answer_relation", "asks"],
    "additionalProperties": False,
}
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
EVIDENCE_CHARS = 1500  # of each evidence document in the oracle-context prompt

class QuestionParseError(ModelResponseError):
    """The model's reply is not a JSON object with a non-empty question."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw  # the reply as the model wrote it


class ReadingParseError(QuestionParseError):
    """The model's read-back is not a JSON object of `READING_SCHEMA`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """What a question asks, as the model reads it back: the fields of `READING_SCHEMA`."""

    named: tuple[str, ...]
    clues: tuple[tuple[str, str], ...]  # (phrase, direction)
    answer_relation: str
    asks: str


def _json_object(text: str, error: type[QuestionParseError]) -> dict[str, Any]:
    """The JSON object of a reply (fences and text around it dropped), or `error`."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body.startswith("{") and "{" in body and "}" in body:
        body = body[body.index("{") : body.rindex("}") + 1]
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise error(f"reply is not JSON ({exc.msg} at char {exc.pos})", text) from None
    if not isinstance(obj, dict):
        raise error(f"reply is JSON {type(obj).__name__}, expected an object", text)
    return obj


def parse_question_json(text: str) -> str:
    """The question of a model reply; raises QuestionParseError saying what was wrong."""
    obj = _json_object(text, QuestionParseError)
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QuestionParseError(f"reply has no non-empty question: keys {sorted(obj)}", text)
    return " ".join(question.split())


def parse_reading(text: str) -> Reading:
    """The read-back of a model reply; raises ReadingParseError saying what was wrong."""
    obj = _json_object(text, ReadingParseError)
    named, clues = obj.get("named"), obj.get("clues")
    relation, asks = obj.get("answer_relation"), obj.get("asks")
    if not isinstance(named, list) or not all(isinstance(n, str) for n in named):
        raise ReadingParseError("reply's named is not a list of titles", text)
    if not isinstance(clues, list) or not all(
            isinstance(c, dict) and isinstance(c.get("phrase"), str)
            and c.get("direction") in DIRECTIONS for c in clues):
        raise ReadingParseError(f"reply's clues are not phrases with a direction in "
                                f"{DIRECTIONS}", text)
    if relation not in ANSWER_RELATIONS or asks not in ASKS:
        raise ReadingParseError(f"reply's answer_relation={relation!r} or asks={asks!r} is "
                                "not one of the schema's", text)
    return Reading(named=tuple(named), clues=tuple((c["phrase"], c["direction"]) for c in clues),
                   answer_relation=relation, asks=asks)


def _norm(text: str) -> str:
    return " ".join(text.strip().strip("“”\"'‘’").lower().split())


def misread(spec: Spec, reading: Reading, graph: CorpusGraph) -> str:
    """What `reading` gets wrong about `spec` ("; "-joined), or "" when it reads it right.

    Every step of a spec reaches a document that the one before mentions (an aggregation's
    set too), so each phrase must be read `mentioned_by_source`; an intersection's answer is
    mentioned by the documents its clues reach."""
    family = family_of(spec)
    starts = {_norm(graph.title(s.doc)) for s in spec.steps if s.relation == "start"}
    clues = family.read_back(spec)
    literal = {_norm(c.value if c.kind == "phrase" else c.key)
               for c in clues if c.kind in ("phrase", "entity")}
    named = {_norm(n) for n in reading.named}
    read = [(" ".join(p.lower().split()), d) for p, d in reading.clues]
    wrong = [f"start “{t}” missing" for t in sorted(starts - named)]
    wrong += [f"extra start “{t}”" for t in sorted(named - starts)]
    if len(read) != len(clues):
        wrong.append(f"{len(read)} clues read, the task has {len(clues)}")
    wrong += [f"clue “{p}” missing" for p in sorted(literal)
              if not any(p in r for r, _ in read)]
    wrong += [f"reversed “{r}”" for r, d in read if d != "mentioned_by_source"]
    if family.answer_relation and reading.answer_relation != family.answer_relation:
        wrong.append(f"answer_relation {reading.answer_relation}")
    asks = family.asks(spec)
    if reading.asks != asks:
        wrong.append(f"asks {reading.asks} not {asks}")
    return "; ".join(wrong)


def describe(spec: Spec, graph: CorpusGraph) -> str:
    """The spec as numbered lines a model can follow (titles only of named documents)."""
    noun = graph.noun
    lines: list[str] = []
    for i, s in enumerate(spec.steps[:60], start=1):
        if s.relation == "start":
            lines.append(f"{i}. start at the {noun} \"{graph.title(s.doc)}\"")
        elif s.relation in ("link", "compare") and s.fact:
            lines.append(f"{i}. go to the {noun} it mentions {s.fact.shown}")
        elif s.relation in ("link", "compare"):
            lines.append(f"{i}. go to the {noun} it mentions that contains \"{s.phrase}\"")
    lines += family_of(spec).ask_lines(spec, graph)
    what = spec.condition.shown if spec.condition else ""
    if spec.answer_type == "year":
        lines.append(f"ask in what year the last {noun}'s subject {what}")
    return "\n".join(lines)


def correct(reply: str, q: Question) -> bool:
    """Whether a short reply gives the question's answer (a list: the same items)."""
    if q.answer in (NOT_FOUND, NONE):
        return says_not_found(reply)
    if q.spec is not None and q.spec.answer_type == "list":
        return list_items(reply) == list_items(q.answer)
    return answers_match(reply, q.answer, q.answer_aliases)


class ModelComposer:
    """Writes question text for specs through a `ChatModel`, and checks it with the model."""

    def __init__(self, teacher: ChatModel, graph: CorpusGraph, *, temperature: float = 0.7,
                 max_tokens: int = 400, max_words: int = 40) -> None:
        self.teacher, self.graph = teacher, graph
        self.temperature, self.max_tokens, self.max_words = temperature, max_tokens, max_words
        self.name = teacher.name

    async def compose(self, spec: Spec, plain: str) -> str:
        """Ask the model; raises QuestionParseError (with `.raw`) or ModelError."""
        messages: list[Message] = [
            {"role": "system", "content": prompts.QUESTION_SYSTEM},
            {"role": "user", "content": prompts.QUESTION_RENDER_PROMPT.format(
                family=spec.family, steps=describe(spec, self.graph), plain=plain,
                max_words=self.max_words)},
        ]
        completion = await self.teacher.complete(
            messages, response_format=json_schema_format(QUESTION_SCHEMA, name="question"),
            temperature=self.temperature, max_tokens=self.max_tokens)
        return parse_question_json(completion.text)

    async def read_back(self, question: str) -> Reading:
        """The round trip: the model reads `question` back; raises ReadingParseError or
        ModelError."""
        prompt = prompts.QUESTION_READ_BACK_PROMPT.format(
            question=question, noun=self.graph.noun, nouns=self.graph.nouns)
        completion = await self.teacher.complete(
            [{"role": "user", "content": prompt}],
            response_format=json_schema_format(READING_SCHEMA, name="reading"),
            temperature=0.0, max_tokens=self.max_tokens)
        return parse_reading(completion.text)

    async def answers_with_evidence(self, q: Question) -> bool:
        """The oracle-context check: with the evidence documents at hand, is it answered?"""
        docs = [self.graph.docs[d] for d in q.evidence[:12]]
        shown = "\n\n".join(f"[{d.title}]\n{d.text[:EVIDENCE_CHARS]}" for d in docs)
        reply = await self._ask(prompts.ORACLE_CONTEXT_PROMPT.format(documents=shown,
                                                                     question=q.question))
        return correct(reply, q)

    async def probe(self, q: Question, *, samples: int) -> float:
        """The share of closed-book attempts that answer correctly."""
        wins = 0
        for _ in range(samples):
            reply = await self._ask(prompts.CLOSED_BOOK_PROMPT.format(question=q.question),
                                    temperature=0.7)
            wins += correct(reply, q)
        return wins / samples

    async def _ask(self, prompt: str, *, temperature: float = 0.0) -> str:
        messages: list[Message] = [{"role": "user", "content": prompt}]
        completion = await self.teacher.complete(messages, temperature=temperature,
                                                 max_tokens=96)
        return completion.text.strip()
