"""Corpus statistics: documents, links, connected components, length distribution."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from hopforge.corpus.records import Document

WORD_BINS = (50, 100, 200, 500, 1000, 5000)


def _percentiles(values: list[int]) -> dict[str, float]:
    if not values:
        return {"min": 0, "p10": 0, "p50": 0, "p90": 0, "p99": 0, "max": 0, "mean": 0.0}
    s = sorted(values)

    def pick(q: float) -> int:
        return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]

    return {
        "min": s[0],
        "p10": pick(0.10),
        "p50": pick(0.50),
        "p90": pick(0.90),
        "p99": pick(0.99),
        "max": s[-1],
        "mean": round(sum(s) / len(s), 1),
    }


def _histogram(values: list[int]) -> dict[str, int]:
    labels = [f"<{b}" for b in WORD_BINS] + [f">={WORD_BINS[-1]}"]
    counts: Counter[str] = Counter()
    for v in values:
        i = next((i for i, b in enumerate(WORD_BINS) if v < b), len(WORD_BINS))
        counts[labels[i]] += 1
    return {label: counts.get(label, 0) for label in labels}


def components(doc_ids: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[int]:
    """Sizes of the weakly connected components of the link graph, largest first."""
    parent = {d: d for d in doc_ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb
    sizes = Counter(find(d) for d in doc_ids)
    return sorted(sizes.values(), reverse=True)


def corpus_stats(docs: Sequence[Document]) -> dict[str, Any]:
    """Counts, link graph shape and length distribution of a list of documents."""
    ids = [d.doc_id for d in docs]
    known = set(ids)
    edges = [(d.doc_id, t) for d in docs for t in d.links if t in known]
    linked_to = {t for _, t in edges}
    sizes = components(ids, edges)
    chars = [len(d.text) for d in docs]
    words = [len(d.text.split()) for d in docs]
    return {
        "documents": len(docs),
        "sources": dict(Counter(d.source for d in docs)),
        "links": len(edges),
        "docs_with_links": sum(1 for d in docs if d.links),
        "docs_linked_to": len(linked_to),
        "isolated_docs": sum(1 for d in docs if not d.links and d.doc_id not in linked_to),
        "components": len(sizes),
        "largest_component": sizes[0] if sizes else 0,
        "largest_component_share": round(sizes[0] / len(docs), 4) if docs else 0.0,
        "component_sizes_top": sizes[:10],
        "chars": _percentiles(chars),
        "words": _percentiles(words),
        "words_histogram": _histogram(words),
        "total_words": sum(words),
        "boilerplate_line_share": round(boilerplate_line_share(docs), 4),
    }


def boilerplate_line_share(docs: Sequence[Document]) -> float:
    """Share of the text lines (non-blank) that repeat on more than half of their source's documents.

    Navigation, footers and copyright lines left in page text show up here; 0.0 for a source of
    fewer than 4 documents, where "more than half" says nothing.
    """
    by_source: dict[str, list[Document]] = {}
    for d in docs:
        by_source.setdefault(d.source, []).append(d)
    repeated = total = 0
    for group in by_source.values():
        pages = [[ln.strip() for ln in d.text.splitlines() if ln.strip()] for d in group]
        total += sum(len(p) for p in pages)
        if len(group) < 4:
            continue
        seen = Counter(ln for p in pages for ln in set(p))
        common = {ln for ln, n in seen.items() if n > len(group) / 2}
        repeated += sum(1 for p in pages for ln in p if ln in common)
    return repeated / total if total else 0.0


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"


def format_stats(stats: dict[str, Any]) -> str:
    """A short human-readable summary of `ingest_paths` stats."""
    lines = [
        f"documents: {stats['documents']:,} ({', '.join(f'{k}: {v:,}' for k, v in stats['sources'].items())})"
    ]
    refs = stats.get("references", {})
    mentions = stats.get("mention_links", {})
    lines.append(
        f"links: {stats['links']:,} edges; explicit references {refs.get('references', 0):,}, "
        f"resolved {_pct(refs.get('resolved_share'))}; added by title mention: {mentions.get('links_added', 0):,}"
    )
    lines.append(
        f"graph: {stats['components']:,} connected components, largest {stats['largest_component']:,} "
        f"docs ({_pct(stats['largest_component_share'])}); isolated docs: {stats['isolated_docs']:,}"
    )
    w = stats["words"]
    lines.append(
        f"length (words): min {w['min']}, median {w['p50']}, p90 {w['p90']}, p99 {w['p99']}, "
        f"max {w['max']}; total {stats['total_words']:,}"
    )
    lines.append(
        "words histogram: " + ", ".join(f"{k}: {v}" for k, v in stats["words_histogram"].items())
    )
    p = stats.get("problems", {})
    if p:
        lines.append(
            f"malformed records skipped: {p.get('malformed', 0)}; non-UTF-8 records: {p.get('non_utf8', 0)}; "
            f"empty documents skipped: {p.get('empty', 0)}; duplicate ids skipped: {p.get('duplicate_id', 0)}; "
            f"large documents split: {p.get('chunked', 0)}"
        )
    lines += site_lines(stats)
    if stats.get("paragraphs_merged"):
        lines.append(
            f"repeated paragraphs merged (same title and text): {stats['paragraphs_merged']:,}"
        )
    return "\n".join(lines)


def site_lines(stats: dict[str, Any], first: int = 0) -> list[str]:
    """What a site reader skipped, merged, split or retitled, by reason (with `first` locations)."""
    site = stats.get("site") or {}
    lines = []
    for action in ("skipped", "merged", "split", "retitled", "stripped", "dropped_link"):
        counts = site.get(action) or {}
        if counts:
            reasons = ", ".join(f"{reason} {n:,}" for reason, n in counts.items())
            lines.append(f"pages {action.replace('_', ' ')}: {reasons}")
            for reason in counts:
                lines += [
                    f"  {at}"
                    for at in (site.get("first") or {}).get(f"{action}.{reason}", [])[:first]
                ]
    return lines


def problem_lines(stats: dict[str, Any], first: int = 5) -> list[str]:
    """Input problems with counts and the first `first` locations ('' kinds left out); [] if none."""
    counts = {k: v for k, v in (stats.get("problems") or {}).items() if v}
    if not counts:
        return []
    lines = ["input problems: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())]
    examples = stats.get("problem_examples") or []
    lines += [f"  {message}" for message in examples[:first]]
    if sum(counts.values()) > first:
        lines.append(
            f"  ... {sum(counts.values()) - min(first, len(examples))} more in reports/ingest.json"
        )
    return lines
