"""Reading source files: decompression, forgiving UTF-8 decoding, JSON and JSONL with line numbers."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.problems import NON_UTF8, IngestError, Problems, where

COMPRESSED_SUFFIXES = (".gz", ".dz", ".bz2", ".xz", ".zst")
_WS = " \t\r\n"


def plain_suffix(path: Path) -> str:
    """The file's suffix with any compression suffix removed (`a.jsonl.gz` -> `.jsonl`)."""
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1] in COMPRESSED_SUFFIXES:
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def open_binary(path: Path):  # type: ignore[no-untyped-def]
    """Open a file for reading bytes, decompressing by suffix (.gz/.dz/.bz2/.xz/.zst)."""
    suffix = path.suffix.lower()
    if suffix in (".gz", ".dz"):
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".zst":
        import zstandard

        return zstandard.open(path, "rb")
    return open(path, "rb")


def read_bytes(path: Path) -> bytes:
    """All bytes of a (possibly compressed) file; a damaged archive raises IngestError."""
    try:
        with open_binary(path) as fh:
            return fh.read()  # type: ignore[no-any-return]
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise IngestError(
            f"{path}: could not read it ({exc}). Check that the file is complete and that its "
            "suffix matches its compression (.gz, .bz2, .xz, .zst or none)."
        ) from exc


def decode_line(raw: bytes, at: str, problems: Problems) -> str:
    """Decode one line as UTF-8, replacing bad bytes (counted as a non-UTF-8 record)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.note(
            NON_UTF8,
            at,
            f"bytes that are not UTF-8 ({exc.reason} at byte {exc.start}); replaced with U+FFFD",
        )
        return raw.decode("utf-8", errors="replace")


def decode_text(data: bytes, path: Path, problems: Problems) -> str:
    """Decode a whole file as UTF-8 (BOM dropped); each line with bad bytes is counted."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        lines = data.split(b"\n")
        return "\n".join(
            decode_line(raw, where(path, i), problems) for i, raw in enumerate(lines, 1)
        )


def read_text(path: Path, problems: Problems) -> str:
    """A (possibly compressed) text file decoded forgivingly."""
    return decode_text(read_bytes(path), path, problems)


def _binary_lines(path: Path) -> Iterator[bytes]:
    """Lines of a (possibly compressed) file as bytes, streamed; damage raises IngestError."""
    lineno = 0
    try:
        with open_binary(path) as fh:
            for lineno, raw in enumerate(fh, 1):
                yield raw
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise IngestError(
            f"{where(path, lineno + 1)}: could not read on ({exc}). Check that the file is complete "
            "and that its suffix matches its compression (.gz, .bz2, .xz, .zst or none)."
        ) from exc


def iter_jsonl(path: Path, problems: Problems) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line; bad JSON is reported and skipped."""
    for lineno, raw in enumerate(_binary_lines(path), 1):
        if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        line = decode_line(raw.rstrip(b"\r\n"), where(path, lineno), problems)
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.malformed(
                where(path, lineno),
                f"invalid JSON ({exc.msg} at column {exc.colno})",
                "Each line must be one complete JSON object.",
            )
            continue
        yield lineno, value


def json_lines(path: Path, fix: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) for each non-blank line of a JSONL file a user wrote (queries,
    tasks); the first line that is not JSON stops it with an error naming the line and `fix`."""
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HopforgeError(f"{path}:{number}: not valid JSON ({exc.msg}); {fix}") from None
        yield number, value


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


class _Lines:
    """Line numbers of positions in a text, advancing monotonically."""

    def __init__(self, text: str) -> None:
        self.text, self.pos, self.line = text, 0, 1

    def at(self, pos: int) -> int:
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def _syntax_error(path: Path, text: str, pos: int, msg: str, problems: Problems) -> None:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    problems.malformed(
        where(path, line),
        f"invalid JSON at column {col} ({msg}); the rest of the file could not be read",
        "Fix the JSON there (a JSONL file needs one object per line).",
    )


def _iter_members(
    text: str,
    path: Path,
    problems: Problems,
    what: str,
    brackets: tuple[str, str],
    read_member: Callable[[json.JSONDecoder, str, int], tuple[Any, int]],
) -> Iterator[tuple[int, Any]]:
    """(line number, member) of a top-level JSON container, streamed with positions.

    `brackets` is the container's opening and closing character; `read_member(decoder, text,
    pos)` returns one member and the position after it, or raises json.JSONDecodeError.
    """
    opening, closing = brackets
    decoder = json.JSONDecoder()
    lines = _Lines(text)
    pos = _skip_ws(text, 0)
    if not text.startswith(opening, pos):
        raise IngestError(f"{path}: expected a JSON {what} ('{opening}') at the start of the file.")
    pos = _skip_ws(text, pos + 1)
    if text.startswith(closing, pos):
        return
    while True:
        try:
            member, end = read_member(decoder, text, pos)
        except json.JSONDecodeError as exc:
            _syntax_error(path, text, exc.pos, exc.msg, problems)
            return
        yield lines.at(pos), member
        pos = _skip_ws(text, end)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
        elif text.startswith(closing, pos):
            return
        else:
            _syntax_error(path, text, pos, f"expected ',' or '{closing}'", problems)
            return


def _read_element(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[Any, int]:
    return decoder.raw_decode(text, pos)


def _read_key_value(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[tuple[str, Any], int]:
    key, end = decoder.raw_decode(text, pos)
    if not isinstance(key, str):
        raise json.JSONDecodeError("expected a string key", text, pos)
    colon = _skip_ws(text, end)
    if not text.startswith(":", colon):
        raise json.JSONDecodeError("expected ':'", text, colon)
    value, end = decoder.raw_decode(text, _skip_ws(text, colon + 1))
    return (key, value), end


def iter_json_array(text: str, path: Path, problems: Problems) -> Iterator[tuple[int, Any]]:
    """(line number, element) of a top-level JSON array, streamed with positions."""
    yield from _iter_members(text, path, problems, "list", ("[", "]"), _read_element)


def iter_json_object(text: str, path: Path, problems: Problems) -> Iterator[tuple[int, str, Any]]:
    """(line number, key, value) of a top-level JSON object, streamed with positions."""
    for line, (key, value) in _iter_members(text, path, problems, "object", ("{", "}"), _read_key_value):
        yield line, key, value


def iter_json_records(path: Path, problems: Problems) -> Iterator[tuple[int, Any]]:
    """(line number, record) of a JSON list file or a JSONL file, whichever `path` is."""
    head = peek_text(path)
    if head.lstrip(_WS + "\ufeff").startswith("["):
        yield from iter_json_array(read_text(path, problems), path, problems)
    else:
        yield from iter_jsonl(path, problems)


def parquet_columns(path: Path) -> list[str]:
    """Column names of a Parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return list(pq.read_schema(path).names)
    except (OSError, pa.ArrowException) as exc:
        raise IngestError(
            f"{path}: not a readable Parquet file ({exc}). Check that it is complete."
        ) from exc


def iter_records(path: Path, problems: Problems) -> Iterator[tuple[str, Any]]:
    """(location, record) of a JSONL file, a JSON list file or a Parquet table (rows as dicts)."""
    if plain_suffix(path) != ".parquet":
        for lineno, record in iter_json_records(path, problems):
            yield where(path, lineno), record
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise IngestError(
            f"{path}: not a readable Parquet file ({exc}). Check that it is complete."
        ) from exc
    row = 0
    for batch in pf.iter_batches(batch_size=4096):
        for record in batch.to_pylist():
            row += 1
            yield f"{path}:row {row}", record


def peek_text(path: Path, size: int = 1 << 16) -> str:
    """The first `size` bytes of a (possibly compressed) file, decoded forgivingly."""
    try:
        with open_binary(path) as fh:
            head = fh.read(size)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise IngestError(f"{path}: could not read it ({exc}).") from exc
    return head.decode("utf-8", errors="replace").lstrip("\ufeff")
