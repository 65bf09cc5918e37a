"""The viewer's site: which path is which page, for the server and for the static copy alike.

Paths: `index.html` (the funnel), `questions.html`, `q/QID.html`, `t/TID.html` and
`t/TID-pN.html` (turns `pages.TURNS_PER_PAGE` at a time), `rows/TID.html` and `rows/TID-rN.html`, `eval.html`,
`assets/*` and `files/...` (the build's plots).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

from hopforge.corpus.errors import HopforgeError
from hopforge.flows.view import pages
from hopforge.flows.view.catalog import Catalog
from hopforge.flows.view.pages import PageNotFound

ASSETS = {"view.css": "text/css; charset=utf-8", "view.js": "text/javascript; charset=utf-8"}
HTML = "text/html; charset=utf-8"
BUILD_FOLDERS = {"corpus", "index", "questions", "trajectories", "scores", "pairs",
                 "filtered", "export", "reports", "stages"}
_PAGED = re.compile(r"^(?P<id>.+)-(?P<kind>[pr])(?P<n>\d+)$")


def _file(cat: Catalog, rel: str) -> tuple[bytes, str]:
    """A plot of the build (`files/reports/x.png`, `files/export/plots/x.png`,
    `files/eval/x.png`); nothing outside those folders is served."""
    if rel.startswith("eval/"):
        if cat.eval_dir is None:
            raise PageNotFound(rel)
        base, name = cat.eval_dir, rel[len("eval/"):]
    else:
        folder, _, name = rel.rpartition("/")
        if folder not in pages.PLOTS:
            raise PageNotFound(rel)
        base = cat.build.root / folder
    if "/" in name or not name.endswith(".png") or not (base / name).is_file():
        raise PageNotFound(rel)
    return (base / name).read_bytes(), "image/png"


def resolve(cat: Catalog, path: str, *, static: bool = False) -> tuple[bytes, str]:
    """The body and media type of the page at `path`; PageNotFound when there is none.
    `static`: the page is for the static copy (see pages.static_rows)."""
    path = path.strip("/") or "index.html"
    if path == "index.html":
        return pages.overview_page(cat).encode(), HTML
    if path == "questions.html":
        return pages.questions_page(cat).encode(), HTML
    if path == "eval.html":
        return pages.eval_page(cat).encode(), HTML
    head, _, rest = path.partition("/")
    if head == "assets" and rest in ASSETS:
        return (resources.files("hopforge.flows.view") / "assets" / rest).read_bytes(), \
            ASSETS[rest]
    if head == "files":
        return _file(cat, rest)
    if "/" in rest or not rest.endswith(".html"):
        raise PageNotFound(path)
    stem = rest[: -len(".html")]
    if head == "q":
        return pages.question_page(cat, stem).encode(), HTML
    if head in ("t", "rows"):
        n = 1 if head == "t" else 0
        match = _PAGED.match(stem)
        if stem not in cat.trajectories and match and match["kind"] == {"t": "p", "rows": "r"}[head]:
            stem, n = match["id"], int(match["n"])
        if head == "t":
            return pages.trajectory_page(cat, stem, n).encode(), HTML
        return pages.rows_page(cat, stem, n, static=static).encode(), HTML
    raise PageNotFound(path)


def site_paths(cat: Catalog) -> Iterator[str]:
    """Every path of the site, for the static copy."""
    yield from ("index.html", "questions.html", "assets/view.css", "assets/view.js")
    if cat.eval_dir is not None:
        yield "eval.html"
        yield from (f"files/eval/{p.name}" for p in sorted(cat.eval_dir.glob("*.png")))
    for folder in pages.PLOTS:
        yield from (f"files/{folder}/{p.name}"
                    for p in sorted((cat.build.root / folder).glob("*.png")))
    yield from (f"q/{qid}.html" for qid in cat.questions)
    for tid in cat.trajectories:
        yield from (pages.page_file(tid, n) for n in range(1, pages.trajectory_pages(cat, tid) + 1))
        yield from (pages.row_file(tid, n) for n in pages.static_rows(cat, tid))


def write_static(cat: Catalog, out: str | Path,
                 progress: Callable[[int, int], None] | None = None) -> int:
    """Write the whole site under `out` (replacing a site written there before); the number
    of files written. A folder that holds something else is refused."""
    out = Path(out).resolve()
    if out == cat.build.root or (out.parent == cat.build.root and out.name in BUILD_FOLDERS):
        raise HopforgeError(f"--static {out}: that is (part of) the build itself; pass a new "
                            "folder, e.g. --static site/")
    if out.exists() and any(out.iterdir()) and not (out / "index.html").is_file():
        raise HopforgeError(f"--static {out}: the folder holds other files; pass an empty or "
                            "new folder (or one a previous --static wrote)")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    paths = list(site_paths(cat))
    for i, path in enumerate(paths):
        body, _ = resolve(cat, path, static=True)
        target = tmp / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        if progress:
            progress(i + 1, len(paths))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return len(paths)
