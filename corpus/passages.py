"""Split documents into overlapping word windows (passages) that keep their doc_id."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.records import Document, Passage

_WORD_SPAN = re.compile(r"\S+")


def passage_id(doc_id: str, n: int) -> str:
    """Stable id of the n-th passage of a document."""
    return f"{doc_id}:{n}"


def split_document(doc: Document, *, size: int = 200, overlap: int = 40) -> list[Passage]:
    """Windows of `size` words that overlap by `overlap` words; a short document is one passage."""
    if size < 1:
        raise HopforgeError(f"passage size={size} is out of range: use a size of at least 1 word")
    if not 0 <= overlap < size:
        raise HopforgeError(
            f"passage overlap={overlap} is out of range: use 0 <= overlap < size ({size})"
        )
    spans = [m.span() for m in _WORD_SPAN.finditer(doc.text)]
    if len(spans) <= size:
        text = doc.text.strip()
        start = spans[0][0] if spans else 0
        return [Passage(passage_id=passage_id(doc.doc_id, 0), doc_id=doc.doc_id,
                        title=doc.title, text=text, start=start)]
    stride = size - overlap
    out: list[Passage] = []
    first = 0
    while True:
        last = min(first + size, len(spans))
        lo, hi = spans[first][0], spans[last - 1][1]
        out.append(Passage(passage_id=passage_id(doc.doc_id, len(out)), doc_id=doc.doc_id,
                           title=doc.title, text=doc.text[lo:hi], start=lo))
        if last >= len(spans):
            return out
        first += stride


def split_documents(
    docs: Iterable[Document], *, size: int = 200, overlap: int = 40
) -> Iterator[Passage]:
    """Passages of every document, in document order."""
    for doc in docs:
        yield from split_document(doc, size=size, overlap=overlap)


def index_text(passage: Passage, *, with_title: bool = True) -> str:
    """The text an index sees for a passage: its document title, then its text."""
    if with_title and passage.title:
        return f"{passage.title}\n{passage.text}"
    return passage.text


def content_hash(text: str, salt: str = "") -> str:
    """Hash of a passage's indexed text (and a salt such as the model name), for caches."""
    return hashlib.blake2b(f"{salt}\x00{text}".encode(), digest_size=16).hexdigest()
