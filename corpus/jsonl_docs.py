"""Documents as JSONL, a JSON list, or Parquet rows: `{"id"?, "title", "text", "url"?, "aliases"?, "links"?}`.

`links` name other documents of the same source by id or by title. Records without an id are
keyed by title (plain paragraph lists like `[{"title", "text"}]`); identical title+text pairs
are one paragraph. Rows written by hopforge itself (with `doc_id` and `source`) keep their ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hopforge.corpus.problems import Problems
from hopforge.corpus.rawdocs import ParagraphKeys, RawDoc
from hopforge.corpus.textio import iter_records

ID_FIELDS = ("id", "_id", "doc_id")
TEXT_FIELDS = ("text", "contents", "body")
_FIX = (
    'Each record needs "title" and "text" strings ("id", "url", "aliases", "links" are optional).'
)


def _str_list(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, (str, int)) for v in value):
        return tuple(str(v) for v in value)
    return None


def record_to_raw(
    record: Any, *, source: str, at: str, problems: Problems, keys: ParagraphKeys
) -> RawDoc | None:
    """One document record -> RawDoc; a malformed record is reported and gives None."""
    if not isinstance(record, Mapping):
        problems.malformed(at, f"expected a JSON object, got {type(record).__name__}", _FIX)
        return None
    text = next((record[f] for f in TEXT_FIELDS if f in record), None)
    if not isinstance(text, str):
        got = "no text field" if text is None else f"text is {type(text).__name__}"
        problems.malformed(at, f"{got}", _FIX)
        return None
    raw_id = next((record[f] for f in ID_FIELDS if record.get(f) not in (None, "")), None)
    if raw_id is not None and not isinstance(raw_id, (str, int)):
        problems.malformed(at, f"id must be a string or integer, got {type(raw_id).__name__}", _FIX)
        return None
    title = record.get("title")
    if title is None and raw_id is not None:
        title = str(raw_id)
    if not isinstance(title, str) or not title.strip():
        problems.malformed(at, "no title (and no id to use instead)", _FIX)
        return None
    url = record.get("url") or ""
    aliases, links = _str_list(record.get("aliases")), _str_list(record.get("links"))
    if not isinstance(url, str) or aliases is None or links is None:
        problems.malformed(at, "url must be a string; aliases and links lists of strings", _FIX)
        return None
    own_id = "doc_id" in record and isinstance(record.get("source"), str)
    if own_id:
        source = record["source"]
    if raw_id is not None:
        key: str | None = str(raw_id)
    else:
        key = keys.key(title, text)
        if key is None:
            return None  # the same paragraph again
    return RawDoc(
        source=source,
        key=key,
        title=title,
        text=text,
        at=at,
        url=url,
        aliases=aliases,
        refs=links,
        doc_id=str(raw_id) if own_id else "",
    )


def read_docs(
    path: Path, *, source: str, problems: Problems, keys: ParagraphKeys
) -> Iterator[RawDoc]:
    """Documents of a JSONL file, a JSON list file or a Parquet table."""
    for at, record in iter_records(path, problems):
        raw = record_to_raw(record, source=source, at=at, problems=problems, keys=keys)
        if raw is not None:
            yield raw
