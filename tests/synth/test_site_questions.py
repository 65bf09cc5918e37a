"""Questions on real documentation sites (Debian's attrs: Sphinx, JsonCpp: Doxygen, MkDocs'
manual): the question stage finds work on them, its gold answers follow from the pages, and no
question
starts, passes or ends on a page that is mostly a list of other pages' names (a table of
contents left by splitting a long page, a navigation page)."""

from __future__ import annotations

import asyncio
import random

import pytest
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.stage import generate_questions

from tests.helpers.debian_docs import debian_site
from tests.helpers.rederive import Reader, rederive

pytestmark = pytest.mark.slow


def listing_pages(docs: list[Document]) -> set[str]:
    """Documents whose non-empty lines (three at least) are mostly other documents' titles."""
    titles = {" ".join(d.title.split()).lower() for d in docs}
    out = set()
    for d in docs:
        own = " ".join(d.title.split()).lower()
        lines = [" ".join(ln.strip(" \t*-•·|:").split()).lower() for ln in d.text.splitlines()]
        lines = [ln for ln in lines if ln]
        named = sum(ln in titles and ln != own for ln in lines)
        if named >= 3 and 2 * named >= len(lines):
            out.add(d.doc_id)
    return out


# Small manuals support few questions: their chains are mostly found by one search (58 to 156
# pages), their sets and chains repeat (7 to 17 distinct drafts for 30 asked), and the
# unanswerable drafts go over the 5% share of what is accepted. How many pass is measured by
# `python -m bench site_questions`, not held here; what is held: the stage finds work on every
# site, and every question it accepts is right and keeps off listing pages.
@pytest.mark.parametrize(("package", "floor"), [
    ("python-attr-doc", 0), ("libjsoncpp-doc", 1), ("mkdocs-doc", 0)])
def test_site_questions_are_made_right_and_avoid_listing_pages(package: str, floor: int) -> None:
    docs = ingest_paths([debian_site(package)], fmt="folder", source_name=package).documents
    listings = listing_pages(docs)
    made = asyncio.run(generate_questions(
        docs, Searcher.from_documents(docs, dense=False), config=QuestionConfig(),
        rng=random.Random(0), n=30, graph=CorpusGraph(docs)))
    assert len(made) >= 5  # the stage finds work on every site
    ok = [q for q in made if not q.rejected]
    assert len(ok) >= floor, [q.rejected for q in made]
    reader = Reader(d.to_row() for d in docs)
    for q in ok:
        assert q.spec is not None
        assert rederive(q.to_row(), reader) == (q.answer, ""), q.question
        walked = {s.doc for s in q.spec.steps if s.relation != "item"} | {
            s.via for s in q.spec.steps if s.via}
        assert not walked & listings, q.question
