"""Clue phrases: short runs of a document's own words that pick it out among a few candidates
while matching too many documents to be found by searching for them alone (the blur)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from hopforge.corpus.tokenize import ENGLISH_STOPWORDS
from hopforge.synth.questions.graph import CorpusGraph

MIN_WORD = 5  # shorter words make phrases that match inside too many other words


def _usable(word: str) -> bool:
    low = word.lower()
    return (len(low) >= MIN_WORD and low not in ENGLISH_STOPWORDS and low.isalpha()
            and not low.endswith("ly"))  # "probably", "usually": they say nothing


def candidates(graph: CorpusGraph, doc_id: str, *, limit: int = 400) -> list[str]:
    """Single words and two-word runs of the document, as written, first occurrence first."""
    words = graph.words(doc_id)
    out: dict[str, str] = {}
    for i, word in enumerate(words[:limit]):
        if _usable(word):
            out.setdefault(word.lower(), word)
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if _usable(nxt) and graph.contains(doc_id, f"{word} {nxt}"):
                out.setdefault(f"{word} {nxt}".lower(), f"{word} {nxt}")
    return list(out.values())


def _clean(phrase: str, forbidden: Iterable[str]) -> bool:
    low = phrase.lower()
    for name in forbidden:
        name = name.lower()
        if len(name) >= 3 and (name in low or low in name):
            return False
    return True


def picking_phrases(
    graph: CorpusGraph,
    doc_id: str,
    rivals: Sequence[str],
    rng: random.Random,
    *,
    forbidden: Iterable[str] = (),
    min_df: int = 3,
    count: int = 4,
    max_share: float = 0.05,
) -> list[str]:
    """Phrases in `doc_id` and in none of `rivals`, found in at least `min_df` documents (the
    blur) and at most `max_share` of the corpus; two-word runs before single words (a run
    says what the text is about, a lone word seldom does), the rarest of each first (words that
    say something, where the commonest are fillers such as "however"); up to `count`, shuffled
    within the first band."""
    forbidden = list(forbidden)
    cap = max(min_df, int(max_share * len(graph.order)))
    rival_texts = [graph.lower[r] for r in rivals if r != doc_id]
    found = []
    for phrase in candidates(graph, doc_id):
        low = phrase.lower()
        if (not graph.could_have_df(phrase, min_df, cap) or any(low in t for t in rival_texts)
                or not _clean(phrase, forbidden)):
            continue
        df = graph.doc_freq(phrase)
        if min_df <= df <= cap and (" " in phrase or graph.facts.fact_share() < 0.2):
            found.append((" " not in phrase, df, phrase))  # a lone word only without facts
    found.sort(key=lambda x: x[:2])
    band = [p for *_, p in found[: 3 * count]]
    rng.shuffle(band)
    return band[:count]
