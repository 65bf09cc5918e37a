"""The build's funnel: what each stage took in, kept and lost, and what a kept row cost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from hopforge.flows.build.registry import STAGES
from hopforge.flows.view.catalog import Catalog


@dataclass(frozen=True, slots=True, kw_only=True)
class Bar:
    """One line of the funnel: a label, a count and its share of the stage's total."""

    label: str
    count: int
    share: float
    kind: str = "kept"  # kept | lost | neutral: how the bar is coloured


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    title: str
    total: int
    bars: tuple[Bar, ...]
    note: str = ""


def _bars(counts: dict[str, int], total: int, kind: str) -> tuple[Bar, ...]:
    items = sorted(((k, v) for k, v in counts.items() if v), key=lambda kv: (-kv[1], kv[0]))
    return tuple(Bar(label=k, count=v, share=v / total if total else 0.0, kind=kind)
                 for k, v in items)


def funnel(cat: Catalog) -> list[Section]:
    """The funnel's sections, from the stage reports and the filter decisions."""
    out: list[Section] = []
    q = cat.report("questions")
    if q:
        attempted = int(q.get("attempted", 0))
        accepted = Bar(label="accepted", count=int(q.get("accepted", 0)),
                       share=q.get("accepted", 0) / attempted if attempted else 0.0)
        out.append(Section(
            title="Question drafts", total=attempted,
            bars=(accepted, *_bars(dict(q.get("rejection_reasons") or {}), attempted, "lost")),
            note="a draft can fail several checks, so the reasons add up to more than the "
                 "rejected drafts" if sum((q.get("rejection_reasons") or {}).values())
            > int(q.get("rejected", 0)) else ""))
    t = cat.report("trajectories")
    if t:
        total = int(t.get("trajectories", 0))
        terms = {k: int(v) for k, v in (t.get("terminations") or {}).items()}
        answered = {k: v for k, v in terms.items() if k == "answer"}
        out.append(Section(title="Trajectories by termination", total=total,
                           bars=_bars(answered, total, "kept")
                           + _bars({k: v for k, v in terms.items() if k != "answer"}, total,
                                   "lost")))
    if cat.decisions:
        kept = Counter(_reason(d) for d in cat.decisions.values() if d.get("kept"))
        dropped = Counter(_reason(d) for d in cat.decisions.values() if not d.get("kept"))
        total = len(cat.decisions)
        out.append(Section(title="Filter: kept and dropped by reason", total=total,
                           bars=_bars(dict(kept), total, "kept")
                           + _bars(dict(dropped), total, "lost")))
    e = cat.report("export")
    counts = e.get("counts") or {}
    if counts:
        rows = {layout: sum(int(n) for n in splits.values()) for layout, splits in counts.items()}
        out.append(Section(title="Exported rows per layout", total=max(rows.values()),
                           bars=_bars(rows, max(rows.values()), "neutral"),
                           note="train + validation"))
    return out


def _reason(decision: dict[str, Any]) -> str:
    reason = str(decision.get("reason") or ("kept" if decision.get("kept") else "dropped"))
    return reason.split(":", 1)[0]


def costs(cat: Catalog) -> list[tuple[str, str]]:
    """(what, value) lines: stage times, and time, tokens and cost per kept trajectory."""
    lines: list[tuple[str, str]] = []
    total = 0.0
    for stage in STAGES:
        seconds = cat.marker(stage).get("seconds")
        if seconds is not None:
            total += float(seconds)
            lines.append((f"{stage} stage", f"{float(seconds):.1f} s"))
    kept = sum(1 for d in cat.decisions.values() if d.get("kept"))
    if total:
        lines.append(("all stages", f"{total:.1f} s"))
    if kept:
        lines.append(("kept trajectories", str(kept)))
        lines.append(("time per kept trajectory", f"{total / kept:.2f} s"))
    usage = cat.report("trajectories").get("usage") or {}
    tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
    if kept and tokens:
        lines.append(("teacher tokens per kept trajectory", f"{tokens / kept:,.0f}"))
    cost = float(usage.get("cost", 0.0) or 0.0)
    if kept and cost:
        lines.append(("teacher cost per kept trajectory", f"${cost / kept:.4f}"))
    return lines
