"""BM25Index against rank-bm25's BM25Okapi on the same tokens, plus persistence and tokenizer."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hopforge.corpus.bm25 import BM25Index
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.passages import split_document
from hopforge.corpus.records import Document
from hopforge.corpus.tokenize import Tokenizer, TokenizerConfig
from rank_bm25 import BM25Okapi


def _assert_same_top_k(ref_scores: np.ndarray, idx: np.ndarray, scores: np.ndarray, k: int) -> None:
    """Same scores in the same order; the same documents apart from ties at equal score."""
    expected = np.sort(ref_scores)[::-1][: len(idx)]
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ref_scores[idx], scores, rtol=0, atol=1e-9)
    positive = int((ref_scores > 0).sum())
    assert len(idx) == min(k, positive) or len(idx) == min(k, int((ref_scores != 0).sum()))


@pytest.fixture(scope="module")
def wiki_tokens(shared_data: Path) -> tuple[list[list[str]], list[list[str]]]:
    corpus = json.loads((shared_data / "wiki" / "2wikimultihopqa_corpus.json").read_text("utf-8"))
    tok = Tokenizer(TokenizerConfig(stopwords=False))
    docs = [tok(f"{p['title']}\n{p['text']}") for p in corpus]
    questions = json.loads((shared_data / "wiki" / "hotpotqa_train.json").read_text("utf-8"))
    queries = [tok(q["question"]) for q in questions[:40]]
    rng = random.Random(7)
    queries += [rng.sample(d, min(4, len(d))) * 2 for d in rng.sample(docs, 20) if d]
    return docs, queries


@pytest.mark.slow
def test_scores_match_rank_bm25_on_real_text(wiki_tokens: tuple[list, list]) -> None:
    docs, queries = wiki_tokens
    ref = BM25Okapi(docs)
    index = BM25Index.from_tokens(docs)
    assert index.average_idf == pytest.approx(ref.average_idf, abs=1e-9)
    for q in queries:
        ref_scores = ref.get_scores(q)
        np.testing.assert_allclose(index.scores(q), ref_scores, rtol=0, atol=1e-9)
        idx, scores = index.top_k(q, 10)
        _assert_same_top_k(ref_scores, idx, scores, 10)


@pytest.mark.slow
def test_parity_with_other_parameters_and_stemmed_tokens(shared_data: Path) -> None:
    corpus = json.loads((shared_data / "wiki" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    tok = Tokenizer(TokenizerConfig(stopwords=True, stem=True))
    docs = [tok(title + " " + " ".join(sents)) for title, sents in corpus.items()]
    ref = BM25Okapi(docs, k1=0.9, b=0.4, epsilon=0.5)
    index = BM25Index.from_tokens(docs, k1=0.9, b=0.4, epsilon=0.5)
    for q in [tok("Which magazine was started first, Arthur's Magazine or First for Women?"),
              tok("the the films directed by directors")]:
        np.testing.assert_allclose(index.scores(q), ref.get_scores(q), rtol=0, atol=1e-9)


def test_negative_idf_floor_repeated_and_unknown_tokens() -> None:
    docs = [["common", "alpha"], ["common", "beta", "beta"], ["common", "gamma"],
            ["delta"], ["common", "alpha", "alpha", "alpha"]]
    ref = BM25Okapi(docs, epsilon=0.25)
    index = BM25Index.from_tokens(docs, epsilon=0.25)
    assert index.idf[index.vocab["common"]] == pytest.approx(ref.idf["common"])  # floored
    assert ref.idf["common"] == pytest.approx(0.25 * ref.average_idf)
    for q in [["common"], ["alpha", "alpha"], ["beta", "nothing", "common", "beta"], ["zzz"], []]:
        np.testing.assert_allclose(index.scores(q), ref.get_scores(q), rtol=0, atol=1e-12)
    idx, scores = index.top_k(["zzz"], 3)
    assert idx.size == 0 and scores.size == 0


def test_top_k_breaks_ties_by_lower_index() -> None:
    docs = [["x", "y"], ["x", "y"], ["x", "y"], ["y", "z"], ["x", "y"]]
    idx, scores = BM25Index.from_tokens(docs).top_k(["x"], 3)
    assert idx.tolist() == [0, 1, 2] and len(set(scores.tolist())) == 1


def test_save_and_load_memory_mapped(tmp_path: Path) -> None:
    docs = [["été", "straße"], ["straße", "north"], ["north", "west", "west"]]
    index = BM25Index.from_tokens(docs, k1=1.2)
    index.save(tmp_path / "bm25")
    loaded = BM25Index.load(tmp_path / "bm25")
    assert loaded.memory_mapped and not index.memory_mapped
    assert loaded.k1 == 1.2 and loaded.vocab == index.vocab
    for q in (["straße"], ["west", "été"]):
        assert loaded.top_k(q, 3)[0].tolist() == index.top_k(q, 3)[0].tolist()
        np.testing.assert_array_equal(loaded.scores(q), index.scores(q))
    (tmp_path / "bm25" / "idf.npy").unlink()
    with pytest.raises(HopforgeError, match="missing idf.npy.*hopforge index"):
        BM25Index.load(tmp_path / "bm25")


def test_empty_corpus_is_an_error() -> None:
    with pytest.raises(HopforgeError, match="zero passages"):
        BM25Index.from_tokens([])


def test_tokenizer_options() -> None:
    text = "The Ｃａｒｔｏｇｒａｐｈｅｒs' maps of Zürich, ÉCOLE and naïve ﬁelds_2"
    plain = Tokenizer(TokenizerConfig())(text)
    assert plain == ["the", "cartographers", "maps", "of", "zürich", "école", "and", "naïve",
                     "fields", "2"]
    stop = Tokenizer(TokenizerConfig(stopwords=True))(text)
    assert "the" not in stop and "of" not in stop and "maps" in stop
    stem = Tokenizer(TokenizerConfig(stopwords=True, stem=True))(text)
    assert "cartograph" in stem and "map" in stem and "field" in stem
    assert Tokenizer(TokenizerConfig(lowercase=False))("Quillon harbour") == ["Quillon", "harbour"]
    with pytest.raises(HopforgeError, match="no snowball stemmer"):
        TokenizerConfig(stem=True, language="klingon")


def test_passages_overlap_and_keep_offsets() -> None:
    words = [f"w{i}" for i in range(250)]
    doc = Document(doc_id="d", title="T", text="  " + " ".join(words), source="s")
    parts = split_document(doc, size=100, overlap=20)
    assert [p.passage_id for p in parts] == ["d:0", "d:1", "d:2"]
    assert [p.text.split()[0] for p in parts] == ["w0", "w80", "w160"]
    assert parts[-1].text.split()[-1] == "w249"
    for p in parts:
        assert doc.text[p.start : p.start + len(p.text)] == p.text and p.doc_id == "d"
    assert len(split_document(doc, size=300, overlap=0)) == 1
    empty = split_document(Document(doc_id="e", title="E", text="", source="s"))
    assert len(empty) == 1 and empty[0].text == ""
    with pytest.raises(HopforgeError, match="overlap=100"):
        split_document(doc, size=100, overlap=100)
