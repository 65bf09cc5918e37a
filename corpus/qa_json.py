"""Wikipedia-paragraph QA files: HotpotQA (both layouts), MuSiQue, `{title: [sentences]}` corpora.

Questions are not documents: their context paragraphs are. A paragraph is keyed by its title
(title#hash when one title has several texts) and repeats of the same title+text are merged,
so the same corpus comes out of a question file and of its paragraph file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from hopforge.corpus.problems import Problems, where
from hopforge.corpus.rawdocs import ParagraphKeys, RawDoc
from hopforge.corpus.textio import iter_json_object, iter_records, read_text

_HOTPOT_FIX = (
    'HotpotQA records need "context": [[title, [sentences]], ...] or '
    '{"title": [...], "sentences": [[...], ...]}.'
)
_MUSIQUE_FIX = 'MuSiQue records need "paragraphs": [{"title": ..., "paragraph_text": ...}, ...].'


def join_sentences(sentences: list[str]) -> str:
    """Sentences as one paragraph; HotpotQA sentences carry their own leading spaces."""
    if not sentences:
        return ""
    parts = [sentences[0]]
    for s in sentences[1:]:
        parts.append(s if s[:1].isspace() or parts[-1][-1:].isspace() else " " + s)
    return "".join(parts).strip()


def _sentences(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return value
    return None


def hotpot_paragraphs(record: Any) -> list[tuple[str, list[str]]] | str:
    """(title, sentences) of one HotpotQA record in either layout, or what is wrong with it."""
    if not isinstance(record, Mapping) or "context" not in record:
        return "no 'context' field"
    context = record["context"]
    pairs: list[tuple[Any, Any]]
    if isinstance(context, Mapping):
        titles, sentences = context.get("title"), context.get("sentences")
        if (
            not isinstance(titles, list)
            or not isinstance(sentences, list)
            or len(titles) != len(sentences)
        ):
            return "'context' is a mapping without equally long 'title' and 'sentences' lists"
        pairs = list(zip(titles, sentences, strict=True))
    elif isinstance(context, list):
        if not all(isinstance(p, list) and len(p) == 2 for p in context):
            return "'context' items must be [title, [sentences]] pairs"
        pairs = [(p[0], p[1]) for p in context]
    else:
        return f"'context' is {type(context).__name__}, not a list or mapping"
    out = []
    for i, (title, sents) in enumerate(pairs):
        checked = _sentences(sents)
        if not isinstance(title, str) or checked is None:
            return f"context paragraph {i} is not a title string with a list of sentence strings"
        out.append((title, checked))
    return out


def _paragraph(
    title: str, text: str, *, source: str, at: str, keys: ParagraphKeys
) -> RawDoc | None:
    key = keys.key(title, text)
    if key is None:
        return None
    return RawDoc(source=source, key=key, title=title, text=text, at=at)


def read_hotpotqa(
    path: Path, *, source: str, problems: Problems, keys: ParagraphKeys
) -> Iterator[RawDoc]:
    """Context paragraphs of HotpotQA-style question records (JSON list, JSONL or Parquet)."""
    for at, record in iter_records(path, problems):
        paragraphs = hotpot_paragraphs(record)
        if isinstance(paragraphs, str):
            problems.malformed(at, paragraphs, _HOTPOT_FIX)
            continue
        for title, sentences in paragraphs:
            raw = _paragraph(title, join_sentences(sentences), source=source, at=at, keys=keys)
            if raw is not None:
                yield raw


def read_musique(
    path: Path, *, source: str, problems: Problems, keys: ParagraphKeys
) -> Iterator[RawDoc]:
    """Paragraphs of MuSiQue records (JSON list, JSONL or Parquet)."""
    for at, record in iter_records(path, problems):
        paragraphs = record.get("paragraphs") if isinstance(record, Mapping) else None
        if not isinstance(paragraphs, list):
            problems.malformed(at, "no 'paragraphs' list", _MUSIQUE_FIX)
            continue
        for i, p in enumerate(paragraphs):
            text = p.get("paragraph_text", p.get("text")) if isinstance(p, Mapping) else None
            title = p.get("title") if isinstance(p, Mapping) else None
            if not isinstance(title, str) or not isinstance(text, str):
                problems.malformed(
                    f"{at} paragraph {i}", "paragraph without title and text strings", _MUSIQUE_FIX
                )
                continue
            raw = _paragraph(title, text.strip(), source=source, at=at, keys=keys)
            if raw is not None:
                yield raw


def read_title_sentences(
    path: Path, *, source: str, problems: Problems, keys: ParagraphKeys
) -> Iterator[RawDoc]:
    """Paragraphs of a `{title: [sentences]}` (or `{title: text}`) JSON object."""
    for lineno, title, value in iter_json_object(read_text(path, problems), path, problems):
        at = where(path, lineno)
        sentences = _sentences(value)
        if sentences is None:
            problems.malformed(
                at,
                f"value of '{title}' is not a list of sentence strings",
                'Use {"Title": ["Sentence one.", " Sentence two."], ...}.',
            )
            continue
        raw = _paragraph(title, join_sentences(sentences), source=source, at=at, keys=keys)
        if raw is not None:
            yield raw
