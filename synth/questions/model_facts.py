"""Facts read by a model: one JSON object per document, every fact verified before use.

The model (a `ChatModel`, with a JSON-schema `response_format`) lists a document's facts with
their evidence sentence (prompts.FACTS_PROMPT); `parse_facts` reads the reply, the one parser
of this format, and keeps a fact only when facts.verify finds it in the text as written: the
evidence a verbatim substring of the document, the value inside it, the relation's words there,
an entity's name resolving to exactly one other document. What fails is counted by reason,
never used. These facts join the ones read without a model (facts.extract).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hopforge.corpus.names import NameIndex
from hopforge.corpus.rawdocs import name_key
from hopforge.corpus.records import Document
from hopforge.synth import prompts
from hopforge.synth.concurrency import bounded_map
from hopforge.synth.questions.facts import verify
from hopforge.synth.records import FACT_KINDS, Fact
from hopforge.synth.teacher.chat import ChatModel, ModelResponseError, ModelUnavailable
from hopforge.synth.teacher.wire import json_schema_format

FACTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "array", "items": {
        "type": "object",
        "properties": {"kind": {"type": "string", "enum": ["date", "number", "category", "entity"]},
                       "relation": {"type": "string"}, "value": {"type": "string"},
                       "evidence": {"type": "string"}},
        "required": ["kind", "relation", "value", "evidence"],
        "additionalProperties": False,
    }}},
    "required": ["facts"],
    "additionalProperties": False,
}
DOC_CHARS = 6000  # of each document in the prompt
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class FactsParseError(ModelResponseError):
    """The model's reply is not a JSON object with a list of facts."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


def parse_facts(text: str, doc: Document, names: NameIndex) -> tuple[list[Fact], Counter[str]]:
    """(the verified facts of a reply about `doc`, the rejected ones counted by reason)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    body = fenced.group(1) if fenced else body
    try:
        obj = json.loads(body)
    except json.JSONDecodeError as exc:
        raise FactsParseError(f"reply is not JSON ({exc.msg} at char {exc.pos})", text) from None
    items = obj.get("facts") if isinstance(obj, dict) else None
    if not isinstance(items, list):
        raise FactsParseError("reply has no list under 'facts'", text)
    kept: list[Fact] = []
    rejected: Counter[str] = Counter()
    for item in items:
        if not isinstance(item, dict) or item.get("kind") not in FACT_KINDS or not all(
                isinstance(item.get(k), str) for k in ("relation", "value", "evidence")):
            rejected["malformed"] += 1
            continue
        target = ""
        if item["kind"] == "entity":
            owners = names.owners.get(name_key(item["value"]), ())
            target = owners[0] if len(owners) == 1 and owners[0] != doc.doc_id else ""
            if not target:
                rejected["target_not_one_document"] += 1
                continue
        fact = Fact(doc=doc.doc_id, kind=item["kind"], relation=" ".join(item["relation"].split()),
                    value=item["value"].strip(), evidence=item["evidence"].strip(), target=target)
        problem = verify(fact, doc, names)
        if problem:
            rejected[problem] += 1
        else:
            kept.append(fact)
    return kept, rejected


async def model_facts(teacher: ChatModel, docs: Sequence[Document], names: NameIndex, *,
                      concurrency: int = 16, limit: int = 20, max_tokens: int = 800
                      ) -> tuple[dict[str, list[Fact]], Counter[str]]:
    """The verified facts the model reads in each of `docs`, and what was rejected, by reason
    (a reply that does not parse counts as `parse_error`; a server that is down raises)."""
    rejected: Counter[str] = Counter()

    async def one(doc: Document) -> list[Fact]:
        prompt = prompts.FACTS_PROMPT.format(title=doc.title, text=doc.text[:DOC_CHARS],
                                             limit=limit)
        try:
            completion = await teacher.complete(
                [{"role": "user", "content": prompt}], temperature=0.0, max_tokens=max_tokens,
                response_format=json_schema_format(FACTS_SCHEMA, name="facts"))
            kept, bad = parse_facts(completion.text, doc, names)
        except ModelUnavailable:
            raise
        except FactsParseError:
            rejected["parse_error"] += 1
            return []
        except ModelResponseError:
            rejected["model_error"] += 1
            return []
        rejected.update(bad)
        return kept

    found = await bounded_map(one, list(docs), limit=concurrency)
    return {d.doc_id: f for d, f in zip(docs, found, strict=True)}, rejected
