"""Regenerate the built-in corpora from ../shared/data: corpus/data/jargon.jsonl.gz from
dictd/jargon, corpus/data/wiki.jsonl.gz from wiki/2wikimultihopqa_corpus.json.

Usage: .venv/bin/python scripts/make_builtin_corpus.py [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from hopforge.corpus.builtin import (
    BUILTIN_SOURCE,
    builtin_corpus_path,
    builtin_license_path,
    documents_to_jsonl_gz,
)
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.parts import atomic_write_bytes, atomic_write_text
from hopforge.corpus.stats import format_stats

REPO = Path(__file__).resolve().parents[1]
HEADER = """The Jargon File, version 4.4.7 (29 Dec 2003), as shipped in hopforge's built-in corpus
(corpus/data/jargon.jsonl.gz). Converted from the dictd database of the Debian package
dict-jargon 4.4.7-3.1 (original data: http://catb.org/~esr/jargon/jargsrc.tar.gz) by
hopforge's dictd ingester: entries became documents and {cross references} became links.

The original data was distributed with the notice below. No additional restrictions are claimed.

"""


def license_text(copyright_file: Path) -> str:
    """The public-domain notice from the Debian copyright file, unwrapped from its field."""
    text = copyright_file.read_text(encoding="utf-8")
    m = re.search(r"^License: public-domain\n((?: .*\n?)+)", text, re.MULTILINE)
    if m is None:
        raise SystemExit(f"{copyright_file}: no 'License: public-domain' paragraph found")
    notice = " ".join(line.strip() for line in m.group(1).splitlines())
    return HEADER + notice + "\n"


def build(data: Path) -> tuple[bytes, str, str]:
    """(corpus bytes, license text, stats summary) from the shared data folder."""
    result = ingest_paths(
        [data / "dictd" / "jargon"], fmt="dictd", source_name=BUILTIN_SOURCE, strict=True
    )
    return (
        documents_to_jsonl_gz(result.documents),
        license_text(data / "dictd" / "jargon.copyright"),
        format_stats(result.stats),
    )


WIKI_NOTICE = """The Wikipedia paragraphs of hopforge's built-in corpus `builtin:wiki`
(corpus/data/wiki.jsonl.gz): the 6,119 paragraphs {title, text} of the 2WikiMultihopQA dev set
(Ho et al., COLING 2020), as distributed in the HippoRAG repository's data/ folder, converted by
hopforge's paragraph-JSON ingester: each paragraph became a document; links were added where a
paragraph names another paragraph's title.

The text is from Wikipedia and is available under the Creative Commons Attribution-ShareAlike
License (CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/); the 2WikiMultihopQA
dataset is released under the Apache License 2.0. Data built from this corpus carries the same
share-alike terms.
"""


def build_wiki(data: Path) -> tuple[bytes, str]:
    """(corpus bytes, stats summary) of the 2WikiMultihopQA paragraphs."""
    result = ingest_paths([data / "wiki" / "2wikimultihopqa_corpus.json"], source_name="wiki",
                          strict=True)
    return documents_to_jsonl_gz(result.documents), format_stats(result.stats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    corpus, notice, summary = build(args.data)
    atomic_write_bytes(builtin_corpus_path(), corpus)
    atomic_write_text(builtin_license_path(), notice)
    print(summary)
    print(f"wrote {builtin_corpus_path()} ({len(corpus):,} bytes) and {builtin_license_path()}")
    wiki, summary = build_wiki(args.data)
    atomic_write_bytes(builtin_corpus_path("wiki"), wiki)
    atomic_write_text(builtin_license_path("wiki"), WIKI_NOTICE)
    print(summary)
    print(f"wrote {builtin_corpus_path('wiki')} ({len(wiki):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
