"""The corpus of a build on disk: BUILD/corpus/docs-NNNNN.parquet, links.parquet, manifest.json.

The manifest is written last and lists the shards, so a write killed half-way leaves no
manifest and readers say so instead of reading a mix of old and new shards.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_bytes, write_json
from hopforge.corpus.records import Document

DOCS_PER_SHARD = 50_000
MANIFEST = "manifest.json"
FORMAT_VERSION = 1

DOC_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.string(), nullable=False),
        pa.field("title", pa.string(), nullable=False),
        pa.field("text", pa.large_string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("aliases", pa.list_(pa.string()), nullable=False),
        pa.field("links", pa.list_(pa.string()), nullable=False),
    ]
)
LINK_SCHEMA = pa.schema(
    [pa.field("src", pa.string(), nullable=False), pa.field("dst", pa.string(), nullable=False)]
)


class CorpusMissingError(HopforgeError):
    """The build has no complete corpus."""


def shard_name(index: int) -> str:
    return f"docs-{index:05d}.parquet"


def _table_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def _docs_table(docs: Sequence[Document]) -> pa.Table:
    columns: dict[str, list[Any]] = {name: [] for name in DOC_SCHEMA.names}
    for d in docs:
        columns["doc_id"].append(d.doc_id)
        columns["title"].append(d.title)
        columns["text"].append(d.text)
        columns["source"].append(d.source)
        columns["url"].append(d.url)
        columns["aliases"].append(list(d.aliases))
        columns["links"].append(list(d.links))
    return pa.table(columns, schema=DOC_SCHEMA)


def content_fingerprint(docs: Sequence[Document]) -> str:
    """sha256 of the documents' rows, in order (the same corpus always gives the same value)."""
    h = hashlib.sha256()
    for d in docs:
        h.update(json.dumps(d.to_row(), sort_keys=True, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def write_corpus(
    build: BuildDir,
    docs: Sequence[Document],
    stats: dict[str, Any] | None = None,
    *,
    docs_per_shard: int = DOCS_PER_SHARD,
) -> None:
    """Write documents, the link edge list and a manifest to BUILD/corpus (and stats to reports/)."""
    seen: set[str] = set()
    for d in docs:
        if d.doc_id in seen:
            raise HopforgeError(
                f"Two documents share doc_id {d.doc_id!r} (title {d.title!r}); doc_ids must be unique. "
                "Ingest through `hopforge ingest`, which keeps the first of duplicates."
            )
        seen.add(d.doc_id)
    corpus = build.corpus
    corpus.mkdir(parents=True, exist_ok=True)
    manifest_path = corpus / MANIFEST
    manifest_path.unlink(missing_ok=True)
    shards = []
    for i, start in enumerate(range(0, max(len(docs), 1), docs_per_shard)):
        name = shard_name(i)
        atomic_write_bytes(
            corpus / name, _table_bytes(_docs_table(docs[start : start + docs_per_shard]))
        )
        shards.append(name)
    for stale in corpus.glob("docs-*.parquet"):
        if stale.name not in shards:
            stale.unlink()
    src = [d.doc_id for d in docs for _ in d.links]
    dst = [t for d in docs for t in d.links]
    atomic_write_bytes(
        build.links, _table_bytes(pa.table({"src": src, "dst": dst}, schema=LINK_SCHEMA))
    )
    manifest = {
        "format_version": FORMAT_VERSION,
        "documents": len(docs),
        "links": len(dst),
        "shards": shards,
        "fingerprint": content_fingerprint(docs),
    }
    if stats is not None:
        write_json(build.reports / "ingest.json", stats)
    write_json(manifest_path, manifest)


def read_manifest(build: BuildDir) -> dict[str, Any]:
    """The corpus manifest; raises CorpusMissingError when there is no complete corpus."""
    path = build.corpus / MANIFEST
    if not path.is_file():
        raise CorpusMissingError(
            f"No complete corpus in {build.corpus} (no {MANIFEST}). Run "
            f"`hopforge ingest SOURCE... --out {build.root}` first (or rerun it if it was interrupted)."
        )
    manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return manifest


def read_documents(build: BuildDir) -> list[Document]:
    """All documents of the build's corpus, in the order they were written."""
    manifest = read_manifest(build)
    docs: list[Document] = []
    for name in manifest["shards"]:
        path: Path = build.corpus / name
        if not path.is_file():
            raise CorpusMissingError(
                f"{path} is listed in {build.corpus / MANIFEST} but missing. Rerun `hopforge ingest`."
            )
        docs.extend(Document.from_row(row) for row in pq.read_table(path).to_pylist())
    return docs


def read_document_column(corpus: Path, column: str) -> dict[str, Any]:
    """doc_id -> one column ("title", "text", ...) of every document in the `corpus` folder,
    read without the other columns; empty when the folder holds no shards yet."""
    values: dict[str, Any] = {}
    for path in sorted(corpus.glob("docs-*.parquet")):
        table = pq.read_table(path, columns=["doc_id", column])
        values.update(zip(table.column("doc_id").to_pylist(), table.column(column).to_pylist(),
                          strict=True))
    return values


def read_links(build: BuildDir) -> list[tuple[str, str]]:
    """The link graph as (src, dst) doc_id pairs."""
    read_manifest(build)
    table = pq.read_table(build.links)
    return list(zip(table.column("src").to_pylist(), table.column("dst").to_pylist(), strict=True))


def corpus_fingerprint(build: BuildDir) -> str:
    """A content hash of the corpus (changes whenever any document changes)."""
    return str(read_manifest(build)["fingerprint"])
