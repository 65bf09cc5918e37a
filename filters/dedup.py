"""Near-duplicates: MinHash over trajectories and embedding similarity over questions.

Trajectories are rendered as their thoughts, tool calls and final answer, cut into word
`shingle`-grams and hashed with datasketch's MinHash; candidate pairs come from MinHash LSH and
are kept when their estimated Jaccard similarity is at least the threshold. Questions are compared
by cosine similarity of their embeddings. In both cases items are visited in the given order
(callers put the best first) and an item similar to an earlier kept one is its duplicate.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
from hopforge.filters.logodds import words
from hopforge.synth.diversity import shingles
from hopforge.synth.records import Question, Trajectory

if TYPE_CHECKING:
    from datasketch import MinHash

log = logging.getLogger(__name__)


class Embedder(Protocol):
    """Texts in, one L2-normalizable vector per text out (shape: len(texts) x dim)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def render(traj: Trajectory) -> str:
    """The text MinHash compares: thoughts, calls and the final answer of a trajectory."""
    parts = []
    for t in traj.turns:
        if t.thought:
            parts.append(t.thought)
        if t.call is not None:
            parts.append(f"{t.call.name} {json.dumps(t.call.arguments, sort_keys=True)}")
        else:
            parts.append(t.raw)
    parts.append(traj.final_answer)
    return "\n".join(parts)


def minhashes(sets: Sequence[set[str]], *, num_perm: int = 128, seed: int = 1) -> list[MinHash]:
    """One MinHash per shingle set."""
    from datasketch import MinHash  # loads scipy: only when deduplicating

    return MinHash.bulk([[s.encode("utf-8") for s in sorted(x)] for x in sets],
                        num_perm=num_perm, seed=seed)


def near_duplicate_trajectories(
    trajectories: Sequence[Trajectory],
    *,
    threshold: float = 0.8,
    num_perm: int = 128,
    shingle: int = 3,
    seed: int = 1,
) -> dict[str, str]:
    """tid -> tid of the earlier kept trajectory it nearly repeats (estimated Jaccard)."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"MinHash threshold={threshold} must lie in (0, 1]")
    sets = [shingles(words(render(t)), shingle) for t in trajectories]
    hashes = minhashes(sets, num_perm=num_perm, seed=seed)
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    kept: dict[str, MinHash] = {}
    dup: dict[str, str] = {}
    for t, m in zip(trajectories, hashes):
        if t.tid in kept or t.tid in dup:
            raise ValueError(f"trajectory id {t.tid!r} occurs twice; tids must be unique")
        sims = {k: m.jaccard(kept[k]) for k in lsh.query(m)}
        best = max(sims, key=lambda k: (sims[k], k), default=None)
        if best is not None and sims[best] >= threshold:
            dup[t.tid] = best
        else:
            lsh.insert(t.tid, m)
            kept[t.tid] = m
    return dup


def near_duplicate_questions(
    questions: Sequence[Question],
    embedder: Embedder,
    *,
    threshold: float = 0.95,
    block: int = 1024,
) -> dict[str, str]:
    """qid -> qid of the earlier kept question whose embedding has cosine >= threshold."""
    if not questions:
        return {}
    vecs = np.asarray(embedder.embed([q.question for q in questions]), dtype=np.float32)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    kept = np.zeros(len(questions), dtype=bool)
    dup: dict[str, str] = {}
    for start in range(0, len(questions), block):
        end = min(start + block, len(questions))
        sims = vecs[start:end] @ vecs[:end].T
        for i in range(start, end):
            row = np.where(kept[:i], sims[i - start, :i], -np.inf)
            best = int(np.argmax(row)) if i else -1
            if best >= 0 and row[best] >= threshold:
                dup[questions[i].qid] = questions[best].qid
            else:
                kept[i] = True
    return dup
