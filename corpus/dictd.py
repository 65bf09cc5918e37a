"""dictd databases (`NAME.index` + `NAME.dict` or `NAME.dict.dz`) as documents.

The index has one line per headword: `headword TAB base64-offset TAB base64-length` into the
uncompressed dict file (a `.dict.dz` is gzip-readable). Headwords that point at the same bytes
are one entry: the first line of the entry is its title, the other headwords are aliases.
`{braces}` in the text are cross references; they become links and the braces are removed.
Headwords starting with `00-database-` are metadata, not entries.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from hopforge.corpus.problems import IngestError, Problems, where
from hopforge.corpus.rawdocs import RawDoc, name_key
from hopforge.corpus.textio import decode_line, read_bytes

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}
_BRACES = re.compile(r"\{([^{}]*)\}")
_RUNS_OF_SPACES = re.compile(r" {2,}")
_EXTERNAL = re.compile(r"(?:^|\()\s*(?:https?|ftp|mailto|news|telnet|gopher):", re.IGNORECASE)
_NOT_IN_REFS = set(";=<>\\\u2502")  # code, markup and box drawing, not cross references
MAX_REF_CHARS = 100


def b64_number(text: str) -> int:
    """Decode dictd's base64 number notation (most significant digit first)."""
    n = 0
    for ch in text:
        n = n * 64 + _B64_VALUE[ch]
    return n


def dictd_files(path: Path) -> tuple[Path, Path] | None:
    """(index, dict) files of the database that `path` names, or None if it is not one."""
    name = path.name
    for suffix in (".dict.dz", ".dict", ".index"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    base = path.with_name(name)
    index = base.with_name(name + ".index")
    for dict_suffix in (".dict.dz", ".dict"):
        data = base.with_name(name + dict_suffix)
        if index.is_file() and data.is_file():
            return index, data
    return None


def is_metadata(headword: str) -> bool:
    return headword.startswith(("00-database-", "00database"))


def read_index(index: Path, problems: Problems) -> list[tuple[str, int, int, int]]:
    """(headword, offset, length, line) for each index line; bad lines reported and skipped."""
    entries = []
    for lineno, raw in enumerate(read_bytes(index).split(b"\n"), 1):
        if not raw.strip():
            continue
        line = decode_line(raw, where(index, lineno), problems)
        fields = line.rstrip("\r").split("\t")
        try:
            if len(fields) < 3:
                raise ValueError("expected 3 tab-separated fields")
            entries.append((fields[0], b64_number(fields[1]), b64_number(fields[2]), lineno))
        except (ValueError, KeyError) as exc:
            problems.malformed(
                where(index, lineno),
                f"not a dictd index line ({exc if isinstance(exc, ValueError) else 'bad base64 number'})",
                "Lines must be `headword TAB offset TAB length` with dictd base64 numbers.",
            )
    return entries


def reflow(body: list[str]) -> str:
    """Join prose paragraphs into single lines; keep indented blocks (code, tables) as they are."""
    nonblank = [ln for ln in body if ln.strip()]
    if not nonblank:
        return ""
    base = min(len(ln) - len(ln.lstrip(" ")) for ln in nonblank)
    paragraphs: list[list[str]] = [[]]
    for ln in body:
        if ln.strip():
            paragraphs[-1].append(ln.rstrip())
        elif paragraphs[-1]:
            paragraphs.append([])
    out = []
    for para in paragraphs:
        if not para:
            continue
        if all(len(ln) - len(ln.lstrip(" ")) == base for ln in para):
            out.append(_RUNS_OF_SPACES.sub(" ", " ".join(ln.strip() for ln in para)))
        else:
            out.append("\n".join(ln[base:] for ln in para))
    return "\n\n".join(out)


def link_references(text: str) -> tuple[str, list[str]]:
    """Remove `{braces}` around cross references; returns the text and the references in order."""
    refs: list[str] = []

    def replace(m: re.Match[str]) -> str:
        content = " ".join(m.group(1).split())
        if not content or len(content) > MAX_REF_CHARS or _NOT_IN_REFS & set(content):
            return m.group(0)
        if not _EXTERNAL.search(content):
            refs.append(content)
        return content

    return _BRACES.sub(replace, text), refs


def parse_entry(entry: str, headwords: list[str]) -> tuple[str, tuple[str, ...], str, list[str]]:
    """(title, aliases, text, references) of one dictd entry with its index headwords."""
    lines = entry.replace("\r\n", "\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    header: list[str] = []
    while lines and lines[0].strip():
        header.append(lines.pop(0).strip())
    heads = {name_key(h) for h in headwords}
    named = [h for h in header if name_key(h) in heads]
    notes = [h for h in header if name_key(h) not in heads and h != "//"]
    title = named[0] if named else headwords[0]
    names = named + [h for h in headwords if name_key(h) not in {name_key(n) for n in named}]
    aliases = tuple(dict.fromkeys(n for n in names if name_key(n) != name_key(title)))
    body = reflow(lines)
    text = "\n\n".join(part for part in (" ".join(notes), body) if part)
    text, refs = link_references(text)
    return title, aliases, text, refs


def read_dictd(path: Path, *, source: str, problems: Problems) -> Iterator[RawDoc]:
    """Entries of a dictd database as raw documents, in dict-file order."""
    files = dictd_files(path)
    if files is None:
        raise IngestError(
            f"{path}: not a dictd database. It needs NAME.index beside NAME.dict or NAME.dict.dz."
        )
    index, dict_file = files
    data = read_bytes(dict_file)
    groups: dict[tuple[int, int], list[str]] = {}
    first_line: dict[tuple[int, int], int] = {}
    for headword, offset, length, lineno in read_index(index, problems):
        if is_metadata(headword):
            continue
        if offset + length > len(data) or length <= 0:
            problems.malformed(
                where(index, lineno),
                f"entry '{headword}' points at bytes {offset}..{offset + length}, outside "
                f"{dict_file.name} ({len(data)} bytes)",
                "The index does not belong to this dict file; rebuild it with dictfmt.",
            )
            continue
        groups.setdefault((offset, length), []).append(headword)
        first_line.setdefault((offset, length), lineno)
    # Entries with the same title (homonyms) become one document, their texts in dict order.
    merged: dict[str, RawDoc] = {}
    for (offset, length), headwords in sorted(groups.items()):
        at = where(index, first_line[(offset, length)])
        entry = decode_line(
            data[offset : offset + length], f"{dict_file}: entry '{headwords[0]}'", problems
        )
        title, aliases, text, refs = parse_entry(entry, headwords)
        doc = RawDoc(
            source=source,
            key=title,
            title=title,
            text=text,
            at=at,
            aliases=aliases,
            refs=tuple(refs),
        )
        if title in merged:
            first = merged[title]
            doc = replace(
                first,
                text=f"{first.text}\n\n{text}",
                aliases=tuple(dict.fromkeys(first.aliases + aliases)),
                refs=first.refs + tuple(refs),
            )
        merged[title] = doc
    yield from merged.values()
