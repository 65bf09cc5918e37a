"""The model composer: a teacher model puts a spec into words, and checks what it wrote.

The spec and a plain wording go into a prompt (synth/prompts.py); the model answers with
`{"question": ...}` through a JSON-schema `response_format`, parsed in exactly one function,
`parse_question_json`, which raises `QuestionParseError`. The answer is the spec's, never the
model's. The same model then answers the question with its evidence documents in the prompt
(the oracle-context check) and, when asked, without them (the closed-book probe).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hopforge.synth import prompts
from hopforge.synth.answers import answers_match, list_items, says_not_found
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.records import NOT_FOUND, Question, Spec
from hopforge.synth.teacher.chat import ChatModel, Message, ModelResponseError
from hopforge.synth.teacher.wire import json_schema_format

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string"}},
    "required": ["question"],
    "additionalProperties": False,
}
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
EVIDENCE_CHARS = 1500  # of each evidence document in the oracle-context prompt
_OPERATIONS = {"count": "how many of the set meet the condition",
               "list": "the titles of those that meet it",
               "max": "which of those that meet it states the latest year",
               "min": "which of those that meet it states the earliest year"}


class QuestionParseError(ModelResponseError):
    """The model's reply is not a JSON object with a non-empty question."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw  # the reply as the model wrote it


def parse_question_json(text: str) -> str:
    """The question of a model reply; raises QuestionParseError saying what was wrong."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    if not body.startswith("{") and "{" in body and "}" in body:
        body = body[body.index("{") : body.rindex("}") + 1]
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise QuestionParseError(f"reply is not JSON ({exc.msg} at char {exc.pos})", text) from None
    if not isinstance(obj, dict):
        raise QuestionParseError(f"reply is JSON {type(obj).__name__}, expected an object", text)
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QuestionParseError(f"reply has no non-empty question: keys {sorted(obj)}", text)
    return " ".join(question.split())


def describe(spec: Spec, graph: CorpusGraph) -> str:
    """The spec as numbered lines a model can follow (titles only of named documents)."""
    noun = graph.noun
    lines: list[str] = []
    for i, s in enumerate(spec.steps[:60], start=1):
        if s.relation == "start":
            lines.append(f"{i}. start at the {noun} \"{graph.title(s.doc)}\"")
        elif s.relation in ("link", "compare"):
            lines.append(f"{i}. go to the {noun} it mentions that contains \"{s.phrase}\"")
        elif s.relation == "constraint" and s.phrase:
            lines.append(f"{i}. the {noun} contains \"{s.phrase}\"")
    if spec.family == "intersection":
        lines.append(f"ask for the one {noun} that each {noun} reached by a \"go to\" step "
                     "mentions")
    if spec.family == "aggregation":
        start, nouns = graph.title(spec.start), graph.nouns
        scope = (f"the {nouns} mentioned by the {nouns} that \"{start}\" mentions (not those "
                 f"nor \"{start}\")" if spec.scope == "links2"
                 else f"the {nouns} that \"{start}\" mentions")
        lines.append(f"set: {scope}; condition: contains \"{spec.pattern}\"; ask for: "
                     f"{_OPERATIONS.get(spec.operation, spec.operation)}")
    if spec.family == "comparison":
        lines.append(f"ask which of the two states the {spec.operation} year")
    if spec.answer_type == "year":
        lines.append(f"ask for the year the last {noun} states")
    return "\n".join(lines)


def correct(reply: str, q: Question) -> bool:
    """Whether a short reply gives the question's answer (a list: the same items)."""
    if q.answer == NOT_FOUND:
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
