"""Records produced by the corpus stage: documents, passages and search hits."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any


def make_doc_id(source: str, key: str) -> str:
    """Stable document id: a hash of the source name and the document's key within it."""
    digest = hashlib.sha1(f"{source}\x00{key}".encode()).hexdigest()
    return digest[:16]


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """One document of the corpus; `links` are doc_ids of documents it points to."""

    doc_id: str
    title: str
    text: str
    source: str
    url: str = ""
    aliases: tuple[str, ...] = ()
    links: tuple[str, ...] = ()

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["aliases"] = list(self.aliases)
        row["links"] = list(self.links)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Document:
        return cls(
            doc_id=row["doc_id"],
            title=row["title"],
            text=row["text"],
            source=row["source"],
            url=row.get("url") or "",
            aliases=tuple(row.get("aliases") or ()),
            links=tuple(row.get("links") or ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    """A window of a document that the indexes see; `start` is its character offset."""

    passage_id: str
    doc_id: str
    title: str
    text: str
    start: int = 0

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Passage:
        return cls(**{k: row[k] for k in ("passage_id", "doc_id", "title", "text", "start")})


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One search result, per document (its best passage)."""

    doc_id: str
    title: str
    score: float
    rank: int
    snippet: str = ""
    passage_id: str = ""

    def to_row(self) -> dict[str, Any]:
        # asdict's deep copy of six scalars cost the search service a quarter of a request
        return {"doc_id": self.doc_id, "title": self.title, "score": self.score,
                "rank": self.rank, "snippet": self.snippet, "passage_id": self.passage_id}
