"""Questions on documentation sites: does the question stage find work on a team's own docs?

The Debian documentation sets of `bench sites` (attrs: Sphinx, MkDocs' manual, JsonCpp:
Doxygen, Commons Lang: Javadoc; without --quick also Python 3.11, Sphinx, 530 pages), read by
the `folder` reader, indexed with BM25 and given the default question mix. Per site: drafts
attempted and accepted (the issue's bar: at least 30%), the families and clue kinds of the
accepted questions, gold answers re-derived by the independent reader (tests/helpers/rederive),
and how many accepted questions start, pass or end on a page whose text is mostly links (half or more of its
non-empty lines, at least three, are titles of other documents: a table of contents, an index,
a navigation page), counted here from the documents' text, not from the reader's own rules.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUICK_SITES = ("python-attr-doc", "mkdocs-doc", "libjsoncpp-doc", "libcommons-lang3-java-doc")


def link_pages(docs: list[Any]) -> set[str]:
    """Documents whose non-empty lines are mostly other documents' titles."""
    titles = {d.title.strip().casefold() for d in docs}
    out = set()
    for d in docs:
        own = d.title.strip().casefold()
        lines = [ln.strip(" \t*-•·|").casefold() for ln in d.text.splitlines()]
        lines = [ln for ln in lines if ln]
        named = sum(1 for ln in lines if ln in titles and ln != own)
        if named >= 3 and named >= len(lines) / 2:
            out.add(d.doc_id)
    return out


def site_row(package: str, n: int) -> dict[str, Any]:
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.search import Searcher
    from hopforge.synth.questions.graph import CorpusGraph
    from hopforge.synth.questions.stage import split_reasons

    from bench.bench_questions import _fmt, _generate, clue_figures
    from tests.helpers.debian_docs import debian_site

    docs = ingest_paths([debian_site(package)], fmt="folder", source_name=package).documents
    searcher = Searcher.from_documents(docs, dense=False)
    graph = CorpusGraph(docs)
    made, seconds = _generate(docs, searcher, graph, n)
    ok = [q for q in made if not q.rejected]
    listy = link_pages(docs)
    through = [q for q in ok if q.spec and any(
        (s.doc in listy and s.relation != "item") or s.via in listy for s in q.spec.steps)]
    return {
        "site": package,
        "docs": len(docs),
        "link_pages": len(listy),
        "attempted": len(made),
        "accepted": len(ok),
        "acceptance": round(len(ok) / max(1, len(made)), 3),
        "through_link_pages": len(through),
        "kinds": _fmt(Counter(q.kind for q in ok)),
        **{k: v for k, v in clue_figures(ok, docs).items()
           if k in ("fact_kinds", "gold_agree", "unanswerable_share", "openings_distinct")},
        "rejections": _fmt(Counter(r.split("(")[0] for q in made
                                   for r in split_reasons(q.rejected))),
        "seconds": round(seconds, 1),
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    sys.path.insert(0, str(REPO))
    sites = list(QUICK_SITES) + ([] if quick else ["python3.11-doc"])
    rows = []
    for package in sites:
        rows.append(site_row(package, n=30))
        print(rows[-1], file=sys.stderr, flush=True)  # long runs show each site
    return rows
