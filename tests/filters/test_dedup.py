import dataclasses
import random

import pytest
from hopforge.filters.dedup import (
    minhashes,
    near_duplicate_questions,
    near_duplicate_trajectories,
    render,
)
from hopforge.filters.logodds import words
from hopforge.synth.diversity import jaccard, shingles
from hopforge.synth.records import Question

from tests.helpers.filter_data import HashingEmbedder, make_question, make_trajectory


def test_minhash_estimates_exact_jaccard() -> None:
    rng = random.Random(0)
    base = [f"w{i}" for i in range(300)]
    pairs, exact = [], []
    for overlap in (0, 50, 100, 150, 200, 250, 300):
        a = set(base[:300])
        b = set(base[300 - overlap :]) | {f"x{i}" for i in range(300 - overlap)}
        rng.shuffle(base)
        pairs.append((a, b))
        exact.append(jaccard(a, b))
    hashes = minhashes([s for p in pairs for s in p], num_perm=256)
    est = [hashes[2 * i].jaccard(hashes[2 * i + 1]) for i in range(len(pairs))]
    # standard error sqrt(J (1 - J) / 256) <= 0.031; allow about 3 of them
    assert est == pytest.approx(exact, abs=0.1)
    assert est[0] < 0.05 and est[-1] == 1.0


def test_shingles_and_exact_jaccard() -> None:
    assert shingles(words("a b c d"), 3) == {"a b c", "b c d"}
    assert shingles(words("a b"), 3) == {"a b"} and shingles([], 3) == set()
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0


def test_near_duplicate_trajectories_keep_the_first() -> None:
    rng = random.Random(1)
    q = make_question(0, rng, hops=3)
    a = make_trajectory(q, "varied", 0, rng)
    t = a.turns[-1]
    edited = dataclasses.replace(a, tid="a2", turns=(*a.turns[:-1], dataclasses.replace(
        t, thought=t.thought + " indeed")))
    other = make_trajectory(q, "varied", 1, rng)
    sa, se = shingles(words(render(a))), shingles(words(render(edited)))
    assert jaccard(sa, se) > 0.8
    dup = near_duplicate_trajectories([a, other, edited], threshold=0.8)
    assert dup == {"a2": a.tid}
    assert near_duplicate_trajectories([edited, a], threshold=0.8) == {a.tid: "a2"}
    with pytest.raises(ValueError, match="occurs twice"):
        near_duplicate_trajectories([a, a])


def test_near_duplicate_questions_by_embedding() -> None:
    qs = [Question(qid="q1", question="Who designed the Grey Needle lighthouse?", answer="x"),
          Question(qid="q2", question="Who designed the grey needle lighthouse", answer="x"),
          Question(qid="q3", question="Where was Ilse Varro born?", answer="y"),
          Question(qid="q4", question="who DESIGNED the Grey Needle lighthouse?", answer="x")]
    dup = near_duplicate_questions(qs, HashingEmbedder(), threshold=0.95, block=2)
    assert dup == {"q4": "q1"}  # punctuation differs for q2 in this embedder's tokens
    loose = near_duplicate_questions(qs, HashingEmbedder(), threshold=0.6)
    assert loose == {"q2": "q1", "q4": "q1"}
    assert near_duplicate_questions([], HashingEmbedder()) == {}
