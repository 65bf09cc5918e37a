"""Train / validation split by question and by evidence chain.

Questions are grouped by their chain: a hash of the sorted evidence doc_ids. A whole group goes to
one side, so no validation question shares its evidence chain with a training one, and every
record of a question (trajectories, pairs, RL rows) follows it. A group's side depends only on
the seed and its chain, so adding questions to a build never moves the others.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from hopforge.synth.records import Question

SPLITS: tuple[str, ...] = ("train", "validation")  # the split folders, in order


def chain_key(question: Question) -> str:
    """A hash of the question's sorted evidence doc_ids (else its hop documents, else its qid)."""
    docs = set(question.evidence)
    if not docs:
        docs = {d for h in question.hops for d in (h.from_doc, h.to_doc)}
        docs |= {question.answer_doc} - {""}
    material = "\n".join(sorted(docs)) if docs else f"qid:{question.qid}"
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:16]


def _draw(seed: int, key: str) -> float:
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_questions(
    questions: Iterable[Question], *, validation_fraction: float, seed: int = 0
) -> dict[str, str]:
    """Map each qid to "train" or "validation"; whole chains go to one side."""
    chains: dict[str, list[str]] = {}
    for q in questions:
        chains.setdefault(chain_key(q), []).append(q.qid)
    draws = {key: _draw(seed, key) for key in chains}
    held = {key for key, d in draws.items() if d < validation_fraction}
    if not held and validation_fraction > 0 and len(chains) > 1:
        held = {min(draws, key=lambda k: (draws[k], k))}  # a small build still gets one
    return {
        qid: ("validation" if key in held else "train")
        for key, qids in chains.items()
        for qid in qids
    }


def shared_chains(questions: Iterable[Question], splits: Mapping[str, str]) -> set[str]:
    """Chains that have questions on both sides (empty for a correct split)."""
    sides: dict[str, set[str]] = {}
    for q in questions:
        sides.setdefault(chain_key(q), set()).add(splits[q.qid])
    return {key for key, s in sides.items() if len(s) > 1}
