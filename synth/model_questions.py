"""The model composer: a teacher model writes the question for a plan, as JSON.

The plan's evidence goes into a prompt (synth/prompts.py); the model answers with
`{"question": ..., "answer": ...}` through a JSON-schema `response_format`. The reply is parsed
in exactly one function, `parse_question_json`, which raises `QuestionParseError`; the stage turns
that into a rejected question that keeps the raw text. An answer the evidence does not state is
rejected too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hopforge.corpus.records import Document
from hopforge.synth import prompts
from hopforge.synth.chat import ChatModel, Message, ModelResponseError
from hopforge.synth.facts import type_noun
from hopforge.synth.openai_format import json_schema_format
from hopforge.synth.plans import QuestionPlan
from hopforge.synth.question_checks import answers_match, contains_name

QUESTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"question": {"type": "string"}, "answer": {"type": "string"}},
    "required": ["question", "answer"],
    "additionalProperties": False,
}
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class QuestionParseError(ModelResponseError):
    """The model's reply is not a JSON object with a non-empty question and answer."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw  # the reply as the model wrote it


def parse_question_json(text: str) -> tuple[str, str]:
    """(question, answer) from a model reply; raises QuestionParseError saying what was wrong."""
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
    missing = [k for k in ("question", "answer") if k not in obj]
    if missing:
        raise QuestionParseError(f"reply lacks {' and '.join(missing)}: keys {sorted(obj)}", text)
    question, answer = obj["question"], obj["answer"]
    if not isinstance(question, str) or not question.strip():
        raise QuestionParseError("reply has an empty or non-string question", text)
    if isinstance(answer, (int, float)) and not isinstance(answer, bool):
        answer = str(answer)
    if not isinstance(answer, str) or not answer.strip():
        raise QuestionParseError("reply has an empty or non-string answer", text)
    return " ".join(question.split()), " ".join(answer.split())


def render_prompt(plan: QuestionPlan, docs: Mapping[str, Document]) -> str:
    """The user prompt asking for `plan`'s question."""
    title = {d: docs[d].title for d in plan.evidence}
    if plan.kind == "chain":
        steps = "\n".join(
            f'{i}. "{title[h.from_doc]}" -> "{title[h.to_doc]}" (hidden): "{h.clue}"'
            for i, h in enumerate(plan.hops, start=1)
        )
        note = (
            f'(The answer is a year stated in "{title[plan.answer_doc]}": "{plan.fact.sentence}" '
            f"Ask in what year it was {plan.fact.event}.)"
            if plan.fact
            else f'(The answer is the name of the last document, "{title[plan.answer_doc]}".)'
        )
        return prompts.QUESTION_CHAIN_PROMPT.format(
            steps=steps,
            answer=plan.answer,
            answer_note=note,
            start=title[plan.evidence[0]],
            rules=prompts.QUESTION_RULES,
        )
    if plan.kind == "comparison":
        fa, fb = plan.compared
        return prompts.QUESTION_COMPARISON_PROMPT.format(
            event=fa.event,
            direction="later" if plan.later else "earlier",
            title_a=title[fa.doc_id],
            sentence_a=fa.sentence,
            title_b=title[fb.doc_id],
            sentence_b=fb.sentence,
            answer=plan.answer,
            rules=prompts.QUESTION_RULES,
        )
    clues = [f'- from "{title[h.from_doc]}" (hidden): "{h.clue}"' for h in plan.hops]
    if plan.fact is not None:
        clues.append(f'- from the answer\'s own document: "{plan.fact.sentence}"')
    return prompts.QUESTION_INTERSECTION_PROMPT.format(
        kind=type_noun(docs[plan.answer_doc]),
        answer=plan.answer,
        clues="\n".join(clues),
        rules=prompts.QUESTION_RULES,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Composed:
    """What the model wrote for a plan."""

    question: str
    answer: str
    raw: str


class ModelComposer:
    """Writes question text for plans through a `ChatModel`."""

    def __init__(
        self,
        teacher: ChatModel,
        docs: Mapping[str, Document],
        *,
        temperature: float = 0.7,
        max_tokens: int = 400,
    ) -> None:
        self.teacher = teacher
        self.docs = docs
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.name = teacher.name

    async def compose(self, plan: QuestionPlan) -> Composed:
        """Ask the model; raises QuestionParseError (with `.raw`) or ModelError."""
        messages: list[Message] = [
            {"role": "system", "content": prompts.QUESTION_SYSTEM},
            {"role": "user", "content": render_prompt(plan, self.docs)},
        ]
        completion = await self.teacher.complete(
            messages,
            response_format=json_schema_format(QUESTION_SCHEMA, name="question"),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=plan.seed,
        )
        question, answer = parse_question_json(completion.text)
        return Composed(question=question, answer=answer, raw=completion.text)

    async def closed_book(self, question: str, answer: str, aliases: tuple[str, ...]) -> bool:
        """Whether the teacher answers correctly without tools (the question is too easy)."""
        messages: list[Message] = [
            {"role": "user", "content": prompts.CLOSED_BOOK_PROMPT.format(question=question)}
        ]
        completion = await self.teacher.complete(messages, temperature=0.0, max_tokens=64)
        return answers_match(completion.text, answer, aliases)


def supported_answer(
    answer: str, plan: QuestionPlan, docs: Mapping[str, Document]
) -> tuple[str, tuple[str, ...], str] | None:
    """(answer, aliases, answer_doc) when the evidence states the model's answer, else None.

    The planned answer (or an alias) is kept as it is; another answer must appear in one of the
    evidence documents, the last one that states it becoming the answer document.
    """
    if answers_match(answer, plan.answer, plan.answer_aliases) or answers_match(plan.answer, answer):
        return plan.answer, plan.answer_aliases, plan.answer_doc
    for doc_id in reversed(plan.evidence):
        doc = docs[doc_id]
        if contains_name(f"{doc.title}. {doc.text}", answer):
            return answer, (), doc_id
    return None
