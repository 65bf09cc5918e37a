"""A hand-made aggregation task over the tiny corpus, with its spec computed from the texts."""

from hopforge.corpus.records import Document
from hopforge.synth.records import Question, Spec, Step

START = "marrow-river"


def _mentions(doc: Document, by_id: dict[str, Document]) -> list[str]:
    return [d for d in dict.fromkeys(doc.links)
            if d in by_id and by_id[d].title.lower() in doc.text.lower()]


def aggregation_question(docs: list[Document], pattern: str = "Calden",
                         operation: str = "count") -> Question:
    """How many (or which) of the entries Marrow River mentions mention `pattern`."""
    by_id = {d.doc_id: d for d in docs}
    items = _mentions(by_id[START], by_id)
    matching = tuple(d for d in items if pattern.lower() in by_id[d].text.lower())
    where = "the entries Marrow River mentions"
    if operation == "count":
        text = f"How many of {where} mention {pattern}?"
        answer, answer_type = str(len(matching)), "count"
    else:
        text = f"Which of {where} mention {pattern}?"
        answer, answer_type = ", ".join(by_id[d].title for d in matching), "list"
    spec = Spec(family="aggregation", start=START,
                steps=(Step(doc=START, relation="start"),
                       *(Step(doc=d, relation="item") for d in items)),
                answer_type=answer_type, operation=operation, scope="links",
                items=tuple(items), matching=matching, pattern=pattern)
    return Question(qid=f"agg-{operation}", question=text, answer=answer, kind="aggregation",
                    evidence=(START, *items), spec=spec, min_calls=2 * len(items) + 3)
