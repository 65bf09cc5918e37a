"""Hand-made questions and trajectories for the filters tests and benchmark.

Two kinds of teacher: "templated" has pet phrases, a fixed opener, copies the question into its
queries and always plays the same plan; "varied" words every thought and query differently.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

import numpy as np
from hopforge.synth.records import Fault, Hop, Question, ToolCall, Trajectory, Turn

NAMES = ("Alder", "Brisk", "Corran", "Dunmore", "Elsby", "Farrow", "Galen", "Hollis", "Ivers",
         "Jessop", "Kellan", "Lorne", "Marlow", "Norbury", "Osric", "Penrose", "Quenby",
         "Rowan", "Selby", "Thorne", "Ulric", "Varden", "Wexley", "Yarrow")
SYLLABLES = ("ka", "lo", "mi", "ren", "sul", "tor", "va", "wen", "dri", "pel", "nor", "ghi", "bas",
             "cor", "fen", "hul")
WORDS = tuple(a + b + c for a in SYLLABLES[:12] for b in SYLLABLES for c in ("n", "s", "t"))
RELATIONS = ("born in", "designed by", "founded by", "named after", "located in", "built by")
TEMPLATE_OPENER = "Let me carefully search for"
TEMPLATE_PHRASE = "as a meticulous research assistant i will now"


class HashingEmbedder:
    """A tiny deterministic embedder: hashed bag of words."""

    name = "hashing"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode()) % 64] += 1.0
        return out


def entity(rng: random.Random) -> str:
    return f"{rng.choice(NAMES)} {rng.choice(NAMES)}"


def make_question(i: int, rng: random.Random, *, hops: int = 2, kind: str = "chain") -> Question:
    """A question whose chain runs through `hops + 1` documents d{i}-0 .. d{i}-{hops}."""
    rel = rng.choice(RELATIONS)
    ents = [f"{entity(rng)} {i}" for _ in range(hops + 1)]
    answer = f"{rng.choice(NAMES)}ton {i}"
    docs = tuple(f"d{i}-{k}" for k in range(hops + 1))
    return Question(
        qid=f"q{i}",
        question=f"Which town is the {rel} place of the person behind {ents[0]}?",
        answer=answer,
        answer_aliases=(f"{answer} town",),
        kind=kind,  # type: ignore[arg-type]
        hops=tuple(Hop(from_doc=docs[k], to_doc=docs[k + 1], clue=f"{ents[k]} {rel} {ents[k + 1]}",
                       bridge=ents[k + 1]) for k in range(hops)),
        evidence=docs,
        answer_doc=docs[-1],
    )


def _varied(rng: random.Random, target: str) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 8))]
    words.insert(rng.randint(0, len(words)), target)
    return f"{' '.join(words).capitalize()}."


def make_trajectory(
    q: Question, teacher: str, sample: int, rng: random.Random, *, correct: bool = True,
    detours: int = 0, fault: bool = False,
) -> Trajectory:
    """A trajectory that searches and opens every gold document, then answers."""
    templated = teacher.startswith("templated")
    turns: list[Turn] = []

    def add(thought: str, name: str, args: dict[str, object], result: str, **kw: object) -> None:
        turns.append(Turn(index=len(turns), raw=f"{name}({args})", thought=thought,
                          call=ToolCall(name=name, arguments=dict(args)), result=result,
                          **kw))  # type: ignore[arg-type]

    for k, doc in enumerate(q.evidence):
        target = q.hops[k - 1].bridge if k else q.question.split("behind ")[-1].rstrip("?")
        if templated:
            thought = f"{TEMPLATE_OPENER} {target}, {TEMPLATE_PHRASE} look it up."
            query = q.question if k == 0 else f"{q.question} {target}"
        else:
            thought = _varied(rng, target)
            query = f"{target} {rng.choice(WORDS)}"
        for _ in range(detours):
            add(_varied(rng, entity(rng)), "search", {"query": f"{entity(rng)} {rng.choice(WORDS)}"},
                "[doc_id: x] nothing")
        if fault and k == 0:
            add(thought, "search", {"query": query}, "", fault=Fault(kind="timeout"),
                error="timed out")
            add(thought, "search", {"query": query}, f"[doc_id: {doc}] {target}", recovered=True,
                repeat_of=len(turns) - 1)
        else:
            add(thought, "search", {"query": query}, f"[doc_id: {doc}] {target}")
        last = k == len(q.evidence) - 1
        text = f"{target} is {q.hops[k].clue}." if not last else f"{target} lived in {q.answer}."
        open_thought = (f"{TEMPLATE_OPENER} details, {TEMPLATE_PHRASE} open {doc}."
                        if templated else _varied(rng, doc))
        add(open_thought, "open", {"doc_id": doc}, text, new_evidence=(doc,))
    answer = q.answer if correct else f"{rng.choice(NAMES)}ville"
    final = (f"{TEMPLATE_PHRASE} answer: {answer}." if templated else _varied(rng, answer))
    add(final, "answer", {"text": answer}, answer)
    return Trajectory(tid=f"{q.qid}-{teacher}-{sample}", qid=q.qid, teacher=teacher,
                      sample=sample, turns=tuple(turns), final_answer=answer)


def reference_text(rng: random.Random, n: int = 200) -> list[str]:
    """Encyclopedia-like sentences about made-up people and places, in the shared vocabulary."""
    return [f"{entity(rng)} was {rng.choice(RELATIONS)} {entity(rng)} and lived in "
            f"{rng.choice(NAMES)}ton, where {' '.join(rng.choice(WORDS) for _ in range(12))}."
            for _ in range(n)]


def population(n_questions: int, *, seed: int = 0, samples: int = 2,
               teachers: tuple[str, ...] = ("templated", "varied")
               ) -> tuple[dict[str, Question], list[Trajectory]]:
    """Questions with `samples` trajectories per teacher; about a quarter answered wrong."""
    rng = random.Random(seed)
    qs: dict[str, Question] = {}
    trajs: list[Trajectory] = []
    for i in range(n_questions):
        q = make_question(i, rng, hops=1 + i % 3, kind=("chain", "comparison")[i % 2])
        qs[q.qid] = q
        for teacher in teachers:
            for s in range(samples):
                trajs.append(make_trajectory(q, teacher, s, rng, correct=rng.random() > 0.25,
                                             detours=rng.randint(0, 2), fault=rng.random() < 0.2))
    return qs, trajs
