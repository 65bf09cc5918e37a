"""The built-in corpus: the Jargon File 4.4.7 (public domain), shipped as Document rows.

`corpus/data/jargon.jsonl.gz` is made from the dictd database by `scripts/make_builtin_corpus.py`
through the dictd ingester; its notice is in `corpus/data/JARGON-LICENSE.txt`.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from hopforge.corpus.records import Document

BUILTIN_SOURCE = "jargon"
_DATA = Path(__file__).resolve().parent / "data"


def builtin_corpus_path() -> Path:
    """The committed Jargon File documents (gzip-compressed JSONL of Document rows)."""
    return _DATA / "jargon.jsonl.gz"


def builtin_license_path() -> Path:
    """The Jargon File's public-domain notice."""
    return _DATA / "JARGON-LICENSE.txt"


def load_builtin_documents() -> list[Document]:
    """The Jargon File as documents, with their cross-reference links."""
    with gzip.open(builtin_corpus_path(), "rt", encoding="utf-8") as fh:
        return [Document.from_row(json.loads(line)) for line in fh if line.strip()]


def documents_to_jsonl_gz(docs: list[Document]) -> bytes:
    """Deterministic gzip JSONL bytes of Document rows (no timestamp in the gzip header)."""
    body = "".join(json.dumps(d.to_row(), ensure_ascii=False, sort_keys=True) + "\n" for d in docs)
    return gzip.compress(body.encode("utf-8"), compresslevel=9, mtime=0)
