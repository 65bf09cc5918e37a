"""The viewer's pages, rendered on the server from templates (no scripts from elsewhere).

Every page is a function of the catalog and an id that returns HTML. Links are relative
(`q/QID.html`, `t/TID.html`, ...), so the same pages work from `hopforge view`'s server and as
a static site written by `hopforge view --static`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from hopforge.export.layouts.registry import layout_named
from hopforge.flows.view.catalog import Catalog
from hopforge.flows.view.funnel import costs, funnel
from hopforge.flows.view.rows import row_view
from hopforge.flows.view.turns import question_steps, trajectory_turns
from jinja2 import Environment, PackageLoader, select_autoescape

TURNS_PER_PAGE = 50
PLOTS = ("reports", "export/plots")  # folders of a build whose PNGs the overview shows
_SAFE_ID = re.compile(r"^[A-Za-z0-9._-]+$")

_ENV = Environment(loader=PackageLoader("hopforge.flows.view", "templates"),
                   autoescape=select_autoescape(["html"]),
                   trim_blocks=True, lstrip_blocks=True)
_ENV.filters["pct"] = lambda x: "" if x is None else f"{100 * x:.0f}%"


class PageNotFound(LookupError):
    """The page asked for names a question, trajectory or page the build does not have."""


def safe_id(value: str) -> str:
    """`value` when it can name a file of the static site (letters, digits, . _ -)."""
    if not _SAFE_ID.match(value) or value.startswith("."):
        raise PageNotFound(value)
    return value


def _render(template: str, root: str, cat: Catalog, **context: Any) -> str:
    return _ENV.get_template(template).render(root=root, build=cat.build.root,
                                              has_eval=cat.eval_dir is not None, **context)


def overview_page(cat: Catalog) -> str:
    """The funnel, stage times and cost per kept trajectory, and the build's plots."""
    plots = [f"{folder}/{p.name}" for folder in PLOTS
             for p in sorted((cat.build.root / folder).glob("*.png"))]
    return _render("overview.html", "", cat, sections=funnel(cat), costs=costs(cat),
                   plots=plots)


def questions_page(cat: Catalog) -> str:
    """Every question, accepted or not, with the columns the table filters on."""
    rows = []
    for qid, q in cat.questions.items():
        checks = q.get("checks") or {}
        failed = [k for k in ("leakage", "shortcut", "closed_book", "near_duplicate_of",
                              "misread", "placeholder") if checks.get(k)]
        rows.append({
            "qid": qid, "question": q.get("question", ""), "kind": q.get("kind", ""),
            "family": (q.get("spec") or {}).get("family") or q.get("kind", ""),
            "min_calls": int(q.get("min_calls", 0)), "rejected": q.get("rejected", ""),
            "checks": ", ".join(failed) or "passed", "runs": len(cat.by_question.get(qid, ())),
            "pass_rate": cat.pass_rate(qid), "answer": q.get("answer", ""),
        })
    families = sorted({r["family"] for r in rows})
    reasons = sorted({x for r in rows for x in r["rejected"].split(",") if x})
    return _render("questions.html", "", cat, rows=rows, families=families, reasons=reasons)


def question_page(cat: Catalog, qid: str) -> str:
    """One question: its spec as documents and facts with their evidence, and its runs."""
    q = cat.questions.get(safe_id(qid))
    if q is None:
        raise PageNotFound(qid)
    runs = []
    for tid in cat.by_question.get(qid, ()):
        entry = cat.trajectories[tid]
        runs.append({"entry": entry, "score": cat.scores.get(tid) or {},
                     "decision": cat.decisions.get(tid) or {}})
    return _render("question.html", "../", cat, q=q, spec=q.get("spec") or {},
                   steps=question_steps(cat, q), runs=runs, checks=q.get("checks") or {},
                   titles=cat.titles)


def trajectory_pages(cat: Catalog, tid: str) -> int:
    """How many pages trajectory `tid` takes."""
    if safe_id(tid) not in cat.trajectories:
        raise PageNotFound(tid)
    return max(1, math.ceil(cat.trajectories[tid].turns / TURNS_PER_PAGE))


def trajectory_page(cat: Catalog, tid: str, page: int = 1) -> str:
    """Turns `(page-1)*50 .. page*50` of one trajectory, with its summary above them."""
    pages = trajectory_pages(cat, tid)
    if not 1 <= page <= pages:
        raise PageNotFound(f"{tid} page {page}")
    row = cat.trajectory_row(tid)
    score = cat.scores.get(tid) or {}
    lo = (page - 1) * TURNS_PER_PAGE
    turns = trajectory_turns(row, score.get("turn_rewards") or (), lo, lo + TURNS_PER_PAGE)
    q = cat.questions.get(row["qid"]) or {}
    return _render("trajectory.html", "../", cat, t=row, q=q, turns=turns, score=score,
                   decision=cat.decisions.get(tid) or {}, page=page, pages=pages,
                   per_page=TURNS_PER_PAGE,
                   n_rows=len(cat.rows_of(tid)), page_name=page_file(tid, 1).split("/")[-1],
                   page_file=lambda n: page_file(tid, n).split("/")[-1])


def page_file(tid: str, page: int) -> str:
    """The site path of page `page` of trajectory `tid`."""
    return f"t/{tid}.html" if page == 1 else f"t/{tid}-p{page}.html"


def rows_page(cat: Catalog, tid: str, n: int = 0, *, static: bool = False) -> str:
    """A trajectory's exported rows in each turn layout (a table), and row `n` in full with
    its trained turns marked. `static`: link only the rows `static_rows` gives a page."""
    if safe_id(tid) not in cat.trajectories:
        raise PageNotFound(tid)
    refs = cat.rows_of(tid)
    if refs and not 0 <= n < len(refs):
        raise PageNotFound(f"{tid} row {n}")
    shown = row_view(refs[n], cat.read_row(refs[n])) if refs else None
    linked = set(static_rows(cat, tid)) if static else set(range(len(refs)))
    return _render("rows.html", "../", cat, tid=tid, entry=cat.trajectories[tid], refs=refs,
                   shown=shown, n=n, row_file=row_file, linked=linked,
                   decision=cat.decisions.get(tid) or {})


def static_rows(cat: Catalog, tid: str) -> list[int]:
    """The rows of `tid` that get a page in a static copy: every row of a layout that pages
    every row (`view_every_row`: sft/openai's whole-run windows) and the first row of each other
    layout. A one-turn row repeats the run up to its turn, so
    a page for each would make a site of gigabytes; the server renders every row."""
    first: dict[str, int] = {}
    out = []
    for i, ref in enumerate(cat.rows_of(tid)):
        if layout_named(ref.layout).view_every_row or ref.layout not in first:
            out.append(i)
        first.setdefault(ref.layout, i)
    return out or [0]


def row_file(tid: str, n: int) -> str:
    """The site path of the rows page of trajectory `tid` that shows row `n` in full."""
    return f"rows/{tid}.html" if n == 0 else f"rows/{tid}-r{n}.html"


def eval_page(cat: Catalog) -> str:
    """The eval summary (`hopforge eval --out DIR`): its table and its curves."""
    import json

    if cat.eval_dir is None:
        raise PageNotFound("eval")
    summary = json.loads((cat.eval_dir / "summary.json").read_text())
    plots = [p.name for p in sorted(cat.eval_dir.glob("*.png"))]
    return _render("eval.html", "", cat, summary=summary, runs=summary.get("runs") or [],
                   plots=plots)
