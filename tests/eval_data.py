"""Hand-made eval tasks over the tiny corpus: an aggregation question with its spec."""

from hopforge.corpus.records import Document
from hopforge.synth.records import Question, Spec, Step

AGGREGATION_ITEMS = ("tessel-hills", "lake-orvin", "brackwater", "mount-fendle", "ilse-varro",
                     "quillon", "grey-needle", "dorran-pell")


def aggregation_question(docs: list[Document], pattern: str = "Calden",
                         operation: str = "count") -> Question:
    """How many (or which) of eight named entries mention `pattern`, computed from the texts."""
    by_id = {d.doc_id: d for d in docs}
    matching = tuple(d for d in AGGREGATION_ITEMS if pattern.lower() in by_id[d].text.lower())
    names = ", ".join(by_id[d].title for d in AGGREGATION_ITEMS)
    if operation == "count":
        text, answer, answer_type = f"How many of these entries mention {pattern}: {names}?", \
            str(len(matching)), "count"
    else:
        text, answer, answer_type = f"Which of these entries mention {pattern}: {names}?", \
            ", ".join(by_id[d].title for d in matching), "list"
    spec = Spec(family="aggregation", steps=tuple(Step(doc=d, relation="item")
                                                  for d in AGGREGATION_ITEMS),
                answer_type=answer_type, operation=operation, scope="links",
                items=AGGREGATION_ITEMS, matching=matching, pattern=pattern)
    return Question(qid=f"agg-{operation}", question=text, answer=answer, kind="aggregation",
                    evidence=AGGREGATION_ITEMS, spec=spec, min_calls=2 * len(AGGREGATION_ITEMS) + 1)
