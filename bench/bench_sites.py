"""Documentation sites from Debian's packages: the trafilatura folder reader against the old one.

Sites: attrs (Sphinx), MkDocs' manual (MkDocs), JsonCpp (Doxygen), Commons Lang (Javadoc) and,
without --quick, the Python 3.11 documentation (Sphinx, 530 pages). Fetched with `apt-get
download` (tests/helpers/debian_docs.py). Per site and reader: documents; documents made from
generated pages or source copies (search, indexes, `_sources/`, `src-html/`, member lists);
boilerplate (the share of text lines that repeat on more than half of the documents); links
into navigation-only documents (half or more of their lines are titles of other documents);
and the extraction time per 1,000 HTML pages, as a ratio against the old reader in this
process. The old reader is `corpus/folder.py` as of commit 0af22dc, loaded from git.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OLD_COMMIT = "0af22dc"
REPO = Path(__file__).resolve().parents[1]


def _old_reader():  # type: ignore[no-untyped-def]
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{OLD_COMMIT}:corpus/folder.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_folder.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("old_folder", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _navigation_docs(docs) -> set[str]:  # type: ignore[no-untyped-def]
    titles = {d.title.strip().casefold() for d in docs}
    nav = set()
    for d in docs:
        lines = [ln.strip().casefold() for ln in d.text.splitlines() if ln.strip()]
        named = sum(1 for ln in lines if ln in titles)
        if named >= 8 and named >= len(lines) / 2:
            nav.add(d.doc_id)
    return nav


def _measure(name: str, reader: str, docs, keys: list[str], seconds: float, pages: int) -> dict:  # type: ignore[no-untyped-def]
    from hopforge.corpus.site_rules import generated_reason
    from hopforge.corpus.stats import boilerplate_line_share

    nav = _navigation_docs(docs)
    return {
        "site": name,
        "reader": reader,
        "documents": len(docs),
        "generated_docs": sum(1 for k in keys if generated_reason(k)),
        "boilerplate_share": round(boilerplate_line_share(docs), 4),
        "links_into_nav": sum(1 for d in docs for t in d.links if t in nav),
        "s_per_1000_pages": round(1000 * seconds / max(pages, 1), 1),
    }


def run(quick: bool = False) -> list[dict]:
    """Two rows per site (old and new reader) and a speed ratio."""
    sys.path.insert(0, str(REPO))
    from hopforge.corpus.html_main import extract_page
    from hopforge.corpus.ingest import ingest_paths
    from hopforge.corpus.problems import Problems
    from hopforge.corpus.rawdocs import assemble
    from hopforge.corpus.records import make_doc_id

    from tests.helpers.debian_docs import debian_site

    old = _old_reader()
    sites = ["python-attr-doc", "mkdocs-doc", "libjsoncpp-doc", "libcommons-lang3-java-doc"]
    if not quick:
        sites.append("python3.11-doc")
    rows = []
    for package in sites:
        root = debian_site(package)
        html = sorted(p for p in root.rglob("*.htm*") if p.is_file())
        texts = [p.read_text(encoding="utf-8", errors="replace") for p in html]
        t0 = time.perf_counter()
        for t in texts:
            old.html_to_text(t)
        old_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        for t in texts:
            extract_page(t)
        new_s = time.perf_counter() - t0
        problems = Problems()
        raws = list(old.read_folder(root, source=package, problems=problems))
        old_docs, _ = assemble(raws, problems)
        rows.append(_measure(package, "old", old_docs, [r.key for r in raws], old_s, len(texts)))
        new = ingest_paths([root], fmt="folder", source_name=package, mention_links="never")
        ids = {d.doc_id for d in new.documents}
        made = [r.key for r in raws if make_doc_id(package, r.key) in ids]
        row = _measure(package, "trafilatura", new.documents, made, new_s, len(texts))
        row["speed_vs_old"] = round(old_s / new_s, 3)
        rows[-1]["speed_vs_old"] = 1.0
        rows.append(row)
        print(rows[-2], rows[-1], file=sys.stderr, flush=True)  # long runs show each site
    return rows
