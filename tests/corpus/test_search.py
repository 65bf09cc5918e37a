"""Known-answer searches over the hand-made tiny corpus (BM25 here; dense in test_dense.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import IndexConfig
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher, make_snippet
from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig

from tests.helpers.tiny import load_tiny


@pytest.fixture(scope="module")
def searcher(tiny_corpus_path: Path) -> Searcher:
    return Searcher.from_documents(load_tiny(tiny_corpus_path))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Who first surveyed Mount Fendle?", "mount-fendle"),
        ("cartographer born in a port in 1815", "ilse-varro"),
        ("lighthouse at the entrance of Quillon harbour", "grey-needle"),
        ("engineer who designed harbours and lighthouses", "dorran-pell"),
        ("art museum founded by a salt merchant", "orvin-gallery"),
        ("province whose capital is Ambry", "calden"),
        ("great refractor lens grinder", "calden-observatory"),
    ],
)
def test_known_answers_rank_first(searcher: Searcher, query: str, expected: str) -> None:
    hits = searcher.search(query, k=5, mode="bm25")
    assert hits[0].doc_id == expected


def test_hop_chain_is_walkable_by_search(searcher: Searcher) -> None:
    # Mount Fendle -> Ilse Varro -> Quillon -> Grey Needle -> Dorran Pell
    chain = [("surveyed Mount Fendle", "mount-fendle"), ("Ilse Varro cartographer", "ilse-varro"),
             ("port city Quillon", "quillon"), ("Grey Needle lighthouse", "grey-needle"),
             ("Dorran Pell engineer born", "dorran-pell")]
    for query, doc_id in chain:
        assert doc_id in [h.doc_id for h in searcher.search(query, k=3)]


def test_hits_are_per_document_ranked_with_snippets(searcher: Searcher) -> None:
    hits = searcher.search("Quillon salt cod", k=10)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert len({h.doc_id for h in hits}) == len(hits)
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    assert all(h.snippet and h.passage_id.startswith(h.doc_id + ":") for h in hits)
    assert hits[0].title == searcher.documents[hits[0].doc_id].title


def test_hybrid_without_dense_falls_back_to_bm25(searcher: Searcher) -> None:
    assert searcher.default_mode == "bm25"
    assert searcher.search("Tessel Hills", mode="hybrid") == searcher.search("Tessel Hills",
                                                                              mode="bm25")
    with pytest.raises(HopforgeError, match="--no-dense"):
        searcher.search("Tessel Hills", mode="dense")
    with pytest.raises(HopforgeError, match="bm25, dense, hybrid"):
        searcher.search("Tessel Hills", mode="fuzzy")


def test_no_match_and_batch(searcher: Searcher) -> None:
    assert searcher.search("zzzqqq xylophone") == []
    assert searcher.search("", k=3) == []
    batch = searcher.search_batch(["Lake Orvin", "market town on the Marrow River"], k=3)
    assert [b[0].doc_id for b in batch] == ["lake-orvin", "brackwater"]


def test_long_documents_split_into_passages_and_report_best_one() -> None:
    filler = " ".join(f"word{i}" for i in range(600))
    docs = [Document(doc_id="long", title="Long", text=f"{filler} the violet comet {filler}",
                     source="t"),
            Document(doc_id="short", title="Short", text="nothing relevant here", source="t")]
    config = IndexConfig(passage_words=100, passage_overlap=20)
    s = Searcher.from_documents(docs, config=config)
    assert len(s.passages) > 10
    hits = s.search("violet comet", k=5)
    assert [h.doc_id for h in hits] == ["long"]
    assert "violet comet" in hits[0].snippet and hits[0].passage_id != "long:0"


def test_enough_documents_even_when_one_document_has_many_passages() -> None:
    filler = " ".join(["pelican"] * 50)
    docs = [Document(doc_id="big", title="Big", text=" ".join([filler] * 40), source="t")]
    docs += [Document(doc_id=f"d{i}", title=f"D{i}", text=f"a pelican number {i}", source="t")
             for i in range(5)]
    s = Searcher.from_documents(docs, config=IndexConfig(passage_words=20, passage_overlap=0))
    assert len(s.search("pelican", k=4, mode="bm25")) == 4


def test_snippet_centres_on_a_query_word() -> None:
    text = " ".join(["alpha"] * 200) + " the harbour master " + " ".join(["omega"] * 200)
    tok = Tokenizer(TokenizerConfig())
    snippet = make_snippet(text, tok("harbour"), tok, 120)
    assert "harbour" in snippet and snippet.startswith("…") and snippet.endswith("…")
    assert len(snippet) <= 122


def test_config_validation_names_field_value_and_range() -> None:
    with pytest.raises(ValueError, match=r"passage_overlap=300 .* 0 to 199"):
        IndexConfig(passage_words=200, passage_overlap=300)
    with pytest.raises(HopforgeError, match=r"index_kind = \"tree\": .*'flat'"):
        IndexConfig.from_dict({"index_kind": "tree"})
    with pytest.raises(HopforgeError, match=r"hnsw_m = 2 is out of range: expected at least 4"):
        IndexConfig.from_dict({"hnsw_m": 2})
    with pytest.raises(HopforgeError, match="unknown index config key"):
        IndexConfig.from_dict({"k": 3})
    with pytest.raises(HopforgeError, match="empty corpus"):
        Searcher.from_documents([])


def test_a_query_that_is_a_title_ranks_that_document_first() -> None:
    """On the Jargon File, titles that are common words ("program", "mode") lose to documents
    that use the word often; searched as a name, each comes first, unless the switch is off."""
    from hopforge.corpus.builtin import load_builtin_documents
    from hopforge.corpus.index import IndexConfig

    docs = load_builtin_documents()
    names = ["mode", "program", "feature", "bug", "hacker"]
    on = Searcher.from_documents(docs, dense=False)
    off = Searcher.from_documents(docs, dense=False, config=IndexConfig(exact_title_first=False))
    by_title = {d.title: d.doc_id for d in docs}
    demoted = 0
    for name in names:
        assert on.search(name, k=5, mode="bm25")[0].doc_id == by_title[name]
        assert on.search(f"“{name.upper()}”", k=5, mode="bm25")[0].doc_id == by_title[name]
        demoted += off.search(name, k=5, mode="bm25")[0].doc_id != by_title[name]
        rest = [h.doc_id for h in on.search(name, k=5, mode="bm25")[1:]]
        assert rest == [h.doc_id for h in off.search(name, k=6, mode="bm25")
                        if h.doc_id != by_title[name]][:4]
    assert demoted >= 1, "plain BM25 ranks some of these titles below other documents"
    # a name as a text inflected it ("hackers", "bugs") finds the entry by its stems
    for name in ("hackers", "bugs", "features"):
        assert on.search(name, k=5, mode="bm25")[0].doc_id == by_title[name[:-1]]
