"""Ingestion: detect each source's format, read it into documents, link them, count what was wrong.

`ingest_paths` is the entry point; it reads files but writes nothing (see `store.write_corpus`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopforge.corpus import qa_json
from hopforge.corpus.builtin import BUILTIN_PREFIX
from hopforge.corpus.dictd import dictd_files, read_dictd
from hopforge.corpus.folder import SUFFIXES as TEXT_SUFFIXES
from hopforge.corpus.folder import read_folder
from hopforge.corpus.jsonl_docs import TEXT_FIELDS, read_docs
from hopforge.corpus.mediawiki import read_mediawiki
from hopforge.corpus.mentions import MentionConfig, add_mention_links
from hopforge.corpus.problems import IngestError, Problems, UnknownFormatError
from hopforge.corpus.rawdocs import DEFAULT_MAX_DOC_CHARS, ParagraphKeys, RawDoc, assemble
from hopforge.corpus.records import Document
from hopforge.corpus.stats import corpus_stats
from hopforge.corpus.textio import iter_json_object, parquet_columns, peek_text, plain_suffix

log = logging.getLogger(__name__)

FORMATS: tuple[str, ...] = (
    "jsonl",
    "parquet",
    "dictd",
    "hotpotqa",
    "musique",
    "title-sentences",
    "folder",
    "mediawiki",
)
FORMAT_ALIASES = {
    "json": "jsonl",
    "docs": "jsonl",
    "paragraphs": "jsonl",
    "2wiki": "hotpotqa",
    "text": "folder",
    "html": "folder",
    "markdown": "folder",
    "xml": "mediawiki",
    "wiki": "mediawiki",
}
MENTION_MODES = ("auto", "always", "never")
Reader = Callable[[Path, str, Problems, ParagraphKeys], Iterable[RawDoc]]


@dataclass(frozen=True, slots=True, kw_only=True)
class IngestResult:
    """Documents read from the sources, their stats, and problem descriptions (stats count all)."""

    documents: list[Document]
    stats: dict[str, Any]
    problems: list[str]


def _reader(fmt: str) -> Reader:
    if fmt in ("jsonl", "parquet"):
        return lambda p, s, pr, k: read_docs(p, source=s, problems=pr, keys=k)
    if fmt == "dictd":
        return lambda p, s, pr, k: read_dictd(p, source=s, problems=pr)
    if fmt in ("hotpotqa", "musique", "title-sentences"):
        qa = {
            "hotpotqa": qa_json.read_hotpotqa,
            "musique": qa_json.read_musique,
            "title-sentences": qa_json.read_title_sentences,
        }[fmt]
        return lambda p, s, pr, k: qa(p, source=s, problems=pr, keys=k)
    if fmt == "folder":
        return lambda p, s, pr, k: read_folder(p, source=s, problems=pr)
    if fmt == "mediawiki":
        return lambda p, s, pr, k: read_mediawiki(p, source=s, problems=pr)
    raise UnknownFormatError(f"Unknown format {fmt!r}. Use one of: {', '.join(FORMATS)}.")


def canonical_format(fmt: str) -> str:
    """A known format name for `fmt` (aliases allowed), or UnknownFormatError."""
    name = FORMAT_ALIASES.get(fmt.lower(), fmt.lower())
    if name not in FORMATS:
        raise UnknownFormatError(
            f"Unknown --format {fmt!r}. Use one of: {', '.join(FORMATS)} (or leave it out to detect)."
        )
    return name


def classify_record(record: Any, path: Path, *, whole_file: bool = False) -> str:
    """The format of a JSON file from its first record (or its only object, `whole_file`)."""
    if isinstance(record, dict):
        if "context" in record:
            return "hotpotqa"
        if "paragraphs" in record:
            return "musique"
        if any(k in record for k in TEXT_FIELDS):
            return "jsonl"
        if whole_file and record and all(isinstance(v, (list, str)) for v in record.values()):
            return "title-sentences"
        keys = ", ".join(sorted(map(str, record))[:12])
    else:
        keys = type(record).__name__
    raise UnknownFormatError(
        f"{path}: could not tell the format from its first record (keys: {keys}). Documents need "
        f"'title' and 'text'; pass --format ({', '.join(FORMATS)}) if it is one of the others."
    )


def _sniff_json(path: Path) -> str:
    head = peek_text(path, 1 << 20).lstrip()
    if not head:
        return "jsonl"
    if head.startswith("["):
        try:
            first, _ = json.JSONDecoder().raw_decode(head, len(head) - len(head[1:].lstrip()))
        except json.JSONDecodeError:
            return "jsonl"  # a first record over 1 MiB, or broken JSON: the reader says where
        return classify_record(first, path)
    if head.startswith("{"):
        first_line, _, rest = head.partition("\n")
        try:
            record = json.loads(first_line)
        except json.JSONDecodeError:
            record = None  # a pretty-printed (or over 1 MiB) object spanning the file
        if record is not None:
            return classify_record(record, path, whole_file=not rest.strip())
        for _, _, value in iter_json_object(head, path, Problems()):
            if isinstance(value, (list, str)):
                return "title-sentences"
            break
        return "jsonl"
    raise UnknownFormatError(
        f"{path}: not JSON, Parquet, dictd, MediaWiki XML or a text folder (it starts with "
        f"{head[:20]!r}). Pass --format one of: {', '.join(FORMATS)}."
    )


def _parquet_format(path: Path) -> str:
    columns = set(parquet_columns(path))
    if "context" in columns:
        return "hotpotqa"
    if "paragraphs" in columns:
        return "musique"
    if columns & set(TEXT_FIELDS):
        return "parquet"
    raise UnknownFormatError(
        f"{path}: no text column (columns: {', '.join(sorted(columns))}). A document table needs "
        f"'title' and one of {', '.join(TEXT_FIELDS)}; question tables need 'context' or 'paragraphs'."
    )


def detect_format(path: Path) -> str:
    """The format of one source path (see FORMATS)."""
    if path.is_dir():
        return "folder"
    if dictd_files(path) is not None:
        return "dictd"
    suffix = plain_suffix(path)
    if suffix == ".parquet":
        return _parquet_format(path)
    if suffix == ".xml" or peek_text(path, 4096).lstrip().startswith("<mediawiki"):
        return "mediawiki"
    if suffix in TEXT_SUFFIXES:
        return "folder"
    return _sniff_json(path)


def expand_sources(paths: Sequence[Path]) -> list[Path]:
    """Paths to read: a folder holding dictd databases stands for those databases."""
    out: list[Path] = []
    for path in paths:
        if not path.exists() and dictd_files(path) is None:
            raise IngestError(
                f"{path}: no such file or folder. Check the path (relative to {Path.cwd()})."
            )
        if path.is_dir():
            bases = sorted(p.with_suffix("") for p in path.glob("*.index") if dictd_files(p))
            if bases:
                log.info(
                    "%s holds dictd databases; reading %s", path, ", ".join(b.name for b in bases)
                )
                out.extend(bases)
                continue
        out.append(path)
    return out


def default_source_name(path: Path, fmt: str) -> str:
    """The source name of a path: its name without suffixes (`jargon`, `hotpotqa_train`)."""
    if fmt == "dictd":
        files = dictd_files(path)
        return files[0].name[: -len(".index")] if files else path.name
    name = path.resolve().name if path.is_dir() else path.name
    return name.split(".", 1)[0] or name


def ingest_paths(
    paths: Sequence[Path],
    *,
    fmt: str | None = None,
    strict: bool = False,
    source_name: str | None = None,
    max_doc_chars: int = DEFAULT_MAX_DOC_CHARS,
    mention_links: str = "auto",
    mention_config: MentionConfig | None = None,
) -> IngestResult:
    """Read every source into documents with links; malformed records are counted (strict: raised).

    `mention_links`: "auto" links by title mention the sources that have no links of their own,
    "always" every source, "never" none.
    """
    if mention_links not in MENTION_MODES:
        raise IngestError(
            f"mention_links={mention_links!r}; use one of {', '.join(MENTION_MODES)}."
        )
    if max_doc_chars < 1000:
        raise IngestError(f"max_doc_chars={max_doc_chars} is too small; use at least 1000.")
    problems = Problems(strict=strict)
    raws: list[RawDoc] = []
    keys: dict[str, ParagraphKeys] = {}
    inputs = []
    for path in expand_sources([Path(p) for p in paths]):
        kind = canonical_format(fmt) if fmt else detect_format(path)
        source = source_name or default_source_name(path, kind)
        before = len(raws)
        raws.extend(_reader(kind)(path, source, problems, keys.setdefault(source, ParagraphKeys())))
        inputs.append(
            {"path": str(path), "format": kind, "source": source, "records": len(raws) - before}
        )
        log.info("%s: %d records as %s (source %r)", path, len(raws) - before, kind, source)
    docs, link_stats = assemble(raws, problems, max_doc_chars=max_doc_chars)
    with_refs = {r.source for r in raws if r.refs}
    scan_sources = {
        "auto": {d.source for d in docs} - with_refs,
        "always": {d.source for d in docs},
        "never": set(),
    }[mention_links]
    scan = {d.doc_id for d in docs if d.source in scan_sources}
    docs, mention_stats = add_mention_links(docs, scan=scan, config=mention_config)
    stats = {
        "inputs": inputs,
        **corpus_stats(docs),
        "references": link_stats.as_dict(),
        "mention_links": {"sources": sorted(scan_sources), **mention_stats.as_dict()},
        "paragraphs_merged": sum(k.merged for k in keys.values()),
        "problems": problems.summary(),
        "problem_examples": problems.messages[:20],
        "site": problems.site_summary(),
    }
    return IngestResult(documents=docs, stats=stats, problems=list(problems.messages))


def source_fingerprint(sources: Sequence[str]) -> str:
    """Sizes and modification times of the source files (a changed source reruns the build)."""
    h = hashlib.sha256()
    for source in sources:
        h.update(source.encode() + b"\0")
        path = Path(source)
        if source.startswith(BUILTIN_PREFIX):
            continue
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for p in files:
            st = p.stat()
            h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    return h.hexdigest()[:16]
