import random
from collections import Counter
from pathlib import Path

import pytest
from hopforge.corpus.records import Document
from hopforge.synth.chains import (
    MAX_HOPS,
    LinkGraph,
    sample_chains,
    split_sentences,
    usable_clue,
    walk,
)
from hopforge.synth.facts import blur, description, type_noun, year_facts

from tests.tiny import load_tiny


def doc(doc_id: str, links: tuple[str, ...] = (), text: str = "") -> Document:
    body = text or " ".join(f"This page {doc_id} points to {d} on purpose." for d in links)
    return Document(doc_id=doc_id, title=doc_id, text=body or f"{doc_id} has no links.",
                    source="synthetic", links=links)


def test_split_sentences_keeps_abbreviations_and_numbering() -> None:
    text = "hacker n. 1. A person who enjoys e.g. Foo bar. J. Smith went home.  Done!"
    assert split_sentences(text) == [
        "hacker n. 1. A person who enjoys e.g. Foo bar.",
        "J. Smith went home.",
        "Done!",
    ]


def test_known_hops_of_the_tiny_corpus_carry_their_clue(tiny_corpus_path: Path) -> None:
    graph = LinkGraph(load_tiny(tiny_corpus_path))
    hop = graph.hop("mount-fendle", "ilse-varro")
    assert hop is not None
    assert hop.clue == "It was first surveyed in 1847 by the cartographer Ilse Varro."
    assert hop.bridge == "Ilse Varro"
    hop = graph.hop("quillon", "grey-needle")
    assert hop is not None and hop.bridge == "Grey Needle"
    assert "lighthouse" in hop.clue


def test_walks_follow_links_without_revisits_or_skips(tiny_corpus_path: Path) -> None:
    graph = LinkGraph(load_tiny(tiny_corpus_path))
    chains = sample_chains(graph, random.Random(5), 40, min_hops=2, max_hops=4)
    assert len(chains) >= 20
    for chain in chains:
        assert 2 <= len(chain.hops) <= 4
        assert len(set(chain.docs)) == len(chain.docs)
        for i, hop in enumerate(chain.hops):
            assert (hop.from_doc, hop.to_doc) == (chain.docs[i], chain.docs[i + 1])
            assert hop.to_doc in graph.out[hop.from_doc]
            assert hop.clue in graph.sentences(hop.from_doc)
            assert hop.bridge.lower() in hop.clue.lower()
        for i, d in enumerate(chain.docs):
            later = chain.docs[i + 2 :]
            assert not set(later) & set(graph.out[d]), "a chain must not let a hop be skipped"


def test_the_documented_four_hop_chain_is_found(tiny_corpus_path: Path) -> None:
    graph = LinkGraph(load_tiny(tiny_corpus_path))
    found = set()
    for seed in range(60):
        chain = walk(graph, "mount-fendle", 4, random.Random(seed))
        if chain is not None:
            found.add(chain.docs)
    assert ("mount-fendle", "ilse-varro", "quillon", "grey-needle", "dorran-pell") in found


def test_sampling_is_deterministic_for_a_seed(tiny_corpus_path: Path) -> None:
    graph = LinkGraph(load_tiny(tiny_corpus_path))
    a = sample_chains(graph, random.Random(11), 15)
    b = sample_chains(LinkGraph(load_tiny(tiny_corpus_path)), random.Random(11), 15)
    c = sample_chains(graph, random.Random(12), 15)
    assert a == b
    assert a != c


def test_start_documents_are_spread_over_the_corpus(tiny_corpus_path: Path) -> None:
    graph = LinkGraph(load_tiny(tiny_corpus_path))
    chains = sample_chains(graph, random.Random(0), 15, min_hops=2, max_hops=2)
    starts = Counter(c.docs[0] for c in chains)
    assert len(starts) >= 12
    assert max(starts.values()) <= 2


def test_hubs_are_damped() -> None:
    # s links to a hub (linked from 60 documents) and to a quiet page; both lead on to "end".
    fans = [doc(f"fan{i}", ("hub",)) for i in range(60)]
    docs = [doc("s", ("hub", "quiet")), doc("hub", ("end",)), doc("quiet", ("end",)),
            doc("end", ("x",)), doc("x", ("y",)), doc("y"), *fans]
    graph = LinkGraph(docs)
    rng = random.Random(0)
    firsts = Counter()
    for _ in range(400):
        chain = walk(graph, "s", 2, rng)
        assert chain is not None
        firsts[chain.docs[1]] += 1
    assert firsts["quiet"] > firsts["hub"] * 1.5


def test_dead_ends_are_avoided() -> None:
    docs = [doc("s", ("dead", "alive")), doc("dead"), doc("alive", ("goal",)), doc("goal")]
    graph = LinkGraph(docs)
    for seed in range(30):
        chain = walk(graph, "s", 2, random.Random(seed))
        assert chain is not None and chain.docs == ("s", "alive", "goal")
    assert walk(graph, "s", 3, random.Random(0)) is None


def test_up_to_eight_hops() -> None:
    names = [f"n{i}" for i in range(10)]
    docs = [doc(n, (names[i + 1],) if i + 1 < len(names) else ()) for i, n in enumerate(names)]
    chain = walk(LinkGraph(docs), "n0", MAX_HOPS, random.Random(0))
    assert chain is not None and len(chain.hops) == 8
    with pytest.raises(ValueError, match="hops must be in 1..8"):
        walk(LinkGraph(docs), "n0", 9, random.Random(0))


def test_cross_reference_lists_are_not_clues() -> None:
    assert not usable_clue("See also foo, bar and baz for more.")
    assert usable_clue("It was designed by the engineer Dorran Pell in 1823.")


def test_facts_types_and_blurring(tiny_corpus_path: Path) -> None:
    docs = {d.doc_id: d for d in load_tiny(tiny_corpus_path)}
    assert type_noun(docs["ilse-varro"]) == "cartographer"
    assert type_noun(docs["quillon"]) == "port city"
    assert description(docs["dorran-pell"]) == "an engineer who designed harbours and lighthouses"
    facts = {(f.event, f.year) for f in year_facts(docs["ilse-varro"])}
    assert facts == {("born", 1815), ("died", 1889)}
    assert not year_facts(docs["ambry"]), "the university's founding is not a fact about Ambry"
    assert blur("surveyed on 3 March 1847 at 912 metres") == (
        "surveyed in the 1840s at about 900 metres"
    )
    assert blur("the Intel 8080 and ISBN 0-471-11709-9") == "the Intel 8080 and ISBN 0-471-11709-9"
