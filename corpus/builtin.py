"""The built-in corpora, shipped as Document rows, each with its notice:

- `builtin:jargon`: the Jargon File 4.4.7 (public domain), `corpus/data/jargon.jsonl.gz`, made
  from the dictd database through the dictd ingester (notice: JARGON-LICENSE.txt);
- `builtin:wiki`: the 6,119 Wikipedia paragraphs of the 2WikiMultihopQA dev set,
  `corpus/data/wiki.jsonl.gz`, made through the paragraph-JSON ingester (notice:
  WIKI-LICENSE.txt: Wikipedia's CC BY-SA text, the dataset's Apache-2.0).

Both are written by `scripts/make_builtin_corpus.py` from ../shared/data.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hopforge.corpus.records import Document

BUILTIN_PREFIX = "builtin:"  # a source that names a corpus shipped with hopforge
BUILTIN_SOURCE = "jargon"
BUILTINS: dict[str, tuple[str, str, str]] = {  # name -> (documents, notice, licence)
    "jargon": ("jargon.jsonl.gz", "JARGON-LICENSE.txt",
               "public domain (The Jargon File 4.4.7; corpus/data/JARGON-LICENSE.txt)"),
    "wiki": ("wiki.jsonl.gz", "WIKI-LICENSE.txt",
             ("CC BY-SA 4.0 (Wikipedia paragraphs of the 2WikiMultihopQA dev set, Apache-2.0; "
              "corpus/data/WIKI-LICENSE.txt)")),
}
_DATA = Path(__file__).resolve().parent / "data"


def builtin_name(source: str) -> str:
    """"jargon" for "builtin", "builtin:jargon" or "jargon"; a clear error for an unknown one."""
    name = source.removeprefix("builtin").removeprefix(":") or BUILTIN_SOURCE
    if name not in BUILTINS:
        raise ValueError(f"unknown built-in corpus {source!r}: use one of "
                         f"{', '.join('builtin:' + n for n in BUILTINS)}")
    return name


def builtin_corpus_path(source: str = BUILTIN_SOURCE) -> Path:
    """The committed documents of a built-in corpus (gzip-compressed JSONL of Document rows)."""
    return _DATA / BUILTINS[builtin_name(source)][0]


def builtin_license_path(source: str = BUILTIN_SOURCE) -> Path:
    """The notice of a built-in corpus."""
    return _DATA / BUILTINS[builtin_name(source)][1]


def load_builtin_documents(source: str = BUILTIN_SOURCE) -> list[Document]:
    """A built-in corpus as documents (the Jargon File by default), with their links."""
    with gzip.open(builtin_corpus_path(source), "rt", encoding="utf-8") as fh:
        return [Document.from_row(json.loads(line)) for line in fh if line.strip()]


def documents_to_jsonl_gz(docs: list[Document]) -> bytes:
    """Deterministic gzip JSONL bytes of Document rows (no timestamp in the gzip header)."""
    body = "".join(json.dumps(d.to_row(), ensure_ascii=False, sort_keys=True) + "\n" for d in docs)
    return gzip.compress(body.encode("utf-8"), compresslevel=9, mtime=0)
