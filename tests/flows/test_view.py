"""`hopforge view`: the pages on a real build, the static copy, and a real browser on the server.

The browser is Debian's chromium, driven headless through chromium-driver by selenium
(`scripts/setup.sh` installs both). Screenshots of every page go to test-artifacts/view/.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin

import httpx
import pytest
from hopforge.corpus.errors import HopforgeError
from hopforge.export.messages import turn_weights
from hopforge.flows.view import pages
from hopforge.flows.view.catalog import open_catalog
from hopforge.flows.view.site import resolve
from hopforge.synth.records import Trajectory
from markupsafe import escape

from tests.helpers.view_build import ARTIFACTS, make_view_build

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_view_build(tmp_path_factory.mktemp("view"))


@pytest.fixture(scope="module")
def cat(build: Path):
    return open_catalog(build)


def longest(cat) -> str:
    return max(cat.trajectories, key=lambda t: (len(cat.rows_of(t)) > 0,
                                                 cat.trajectories[t].turns))


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_overview_counts_are_the_reports(build: Path, cat) -> None:
    html = pages.overview_page(cat)
    report = json.loads((build / "reports" / "questions.json").read_text())
    text = text_of(html)
    assert f"Question drafts {report['attempted']}" in text
    assert f"accepted {report['accepted']}" in text
    for reason, n in report["rejection_reasons"].items():
        assert f"{reason} {n}" in text
    decisions = [json.loads(line) for p in sorted((build / "filtered").glob("part-*.jsonl"))
                 for line in p.read_text().splitlines()]
    assert f"kept trajectories {sum(d['kept'] for d in decisions)}" in text
    assert "files/reports/" in html  # the build's plots are on the page


def test_question_page_shows_spec_evidence_and_runs(cat) -> None:
    tid = longest(cat)
    qid = cat.trajectories[tid].qid
    q = cat.questions[qid]
    html = pages.question_page(cat, qid)
    assert q["answer"] in html and f"t/{tid}.html" in html
    steps = q["spec"]["steps"]
    for step in steps:
        assert escape(cat.titles[step["doc"]]) in html  # as the page writes it ("That&#39;s")
    # every evidence sentence shown is the corpus's own text
    quoted = re.findall(r'<p class="evidence"><span class="where">(.*?):</span> “(.*?)”</p>', html)
    assert quoted
    by_title = {title: doc for doc, title in cat.titles.items()}
    for where, sentence in quoted[:20]:
        text = cat.document_text(by_title[_unescape(where)])
        assert _unescape(sentence).strip("…") in text
    with pytest.raises(pages.PageNotFound):
        pages.question_page(cat, "no-such-question")


def _unescape(s: str) -> str:
    import html

    return html.unescape(s)


def test_trajectory_pages_hold_every_turn_once_with_exports_weights(cat) -> None:
    tid = longest(cat)
    row = cat.trajectory_row(tid)
    n = len(row["turns"])
    assert n > pages.TURNS_PER_PAGE, "the test build should have a run longer than one page"
    score = cat.scores[tid]
    weights = turn_weights(Trajectory.from_row(row), score["turn_rewards"])
    seen: list[int] = []
    trained: list[int] = []
    for page in range(1, pages.trajectory_pages(cat, tid) + 1):
        html = pages.trajectory_page(cat, tid, page)
        for m in re.finditer(r'id="turn-(\d+)">\s*<div class="turnhead"><span class="idx">#\d+'
                             r'</span>.*?<span class="tag (kept|lost)"', html, re.DOTALL):
            seen.append(int(m[1]))
            trained.append(1 if m[2] == "kept" else 0)
    assert seen == list(range(n))
    assert trained == weights


def test_rows_page_marks_the_turns_the_trainer_trains(cat) -> None:
    tid = longest(cat)
    refs = cat.rows_of(tid)
    assert {r.layout for r in refs} >= {"sft/openai", "sft/trl"}
    i = next(i for i, r in enumerate(refs) if r.layout == "sft/openai")
    row = cat.read_row(refs[i])
    html = pages.rows_page(cat, tid, i)
    want = sum(1 for m in row["messages"] if m["role"] == "assistant" and m.get("weight") == 1)
    assert html.count('<span class="tag kept">trained</span>') == want
    j = next(j for j, r in enumerate(refs) if r.layout == "sft/trl")
    html = pages.rows_page(cat, tid, j)
    assert html.count('<span class="tag kept">trained</span>') == len(
        cat.read_row(refs[j])["completion"])


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


def test_static_site_has_every_page_and_no_broken_or_outside_link(build: Path, tmp_path) -> None:
    out = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "hopforge.flows.commands.cli", "view",
                           str(build), "--static", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"to {out}" in proc.stdout
    cat = open_catalog(build)
    html_files = sorted(out.rglob("*.html"))
    assert len(html_files) >= 3 + len(cat.questions) + len(cat.trajectories)
    for path in html_files:
        parser = _Links()
        parser.feed(path.read_text())
        for link in parser.links:
            assert "://" not in link, f"{path.name} links outside: {link}"
            target = Path(urldefrag(urljoin(path.as_posix(), link)).url)
            assert target.is_file(), f"{path.relative_to(out)}: broken link {link}"
    # the same bytes as the server gives
    tid = longest(cat)
    assert (out / "t" / f"{tid}-p2.html").read_bytes() == resolve(cat, f"t/{tid}-p2.html")[0]


def test_view_refuses_a_folder_that_is_not_a_build(tmp_path) -> None:
    with pytest.raises(HopforgeError, match="not a build directory"):
        open_catalog(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    proc = subprocess.run([sys.executable, "-m", "hopforge.flows.commands.cli", "view",
                           str(tmp_path / "missing")], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 2 and "no build directory" in proc.stderr


# --- a real browser on the real server -------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(build: Path):
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hopforge.flows.commands.cli", "view",
                             str(build), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=1.0)
            break
        except httpx.TransportError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise AssertionError(f"hopforge view did not start: {proc.stderr.read()}")
            time.sleep(0.2)
    yield url, proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()  # reaps it and closes its pipes


@pytest.fixture(scope="module")
def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail("Debian's chromium is missing: `apt-get install chromium chromium-driver` "
                    "(scripts/setup.sh does this when run as root)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1300,1000", "--no-first-run", "--disable-extensions"):
        opts.add_argument(arg)
    drv = webdriver.Chrome(service=Service(driver), options=opts)
    yield drv
    drv.quit()


def _shot(drv, name: str) -> None:
    folder = ARTIFACTS / "view"
    folder.mkdir(parents=True, exist_ok=True)
    drv.save_screenshot(str(folder / f"{name}.png"))


def test_browser_follows_question_to_trajectory_to_row(server, browser, cat) -> None:
    from selenium.webdriver.common.by import By

    url, _ = server
    drv = browser
    drv.get(url)
    assert "Question drafts" in drv.find_element(By.TAG_NAME, "main").text
    _shot(drv, "1-overview")
    assert all(img.get_property("naturalWidth") > 0 for img in drv.find_elements(
        By.CSS_SELECTOR, ".plots img")), "a plot did not load"

    drv.find_element(By.ID, "nav-questions").click()
    rows = drv.find_elements(By.CSS_SELECTOR, "#questions tbody tr")
    assert len(rows) == len(cat.questions)
    tid = longest(cat)
    qid = cat.trajectories[tid].qid
    family = (cat.questions[qid]["spec"] or {})["family"]
    drv.find_element(By.ID, "f-family").send_keys(family)
    drv.find_element(By.ID, "f-text").send_keys(qid)
    visible = [r for r in rows if r.is_displayed()]
    assert len(visible) == 1 and drv.find_element(By.ID, "shown-count").text == "1"
    _shot(drv, "2-questions-filtered")

    visible[0].find_element(By.LINK_TEXT, qid).click()
    assert drv.find_element(By.ID, "question-text").text == cat.questions[qid]["question"]
    assert cat.questions[qid]["answer"] in drv.find_element(By.ID, "answer").text
    assert drv.find_elements(By.CSS_SELECTOR, "#spec .evidence")
    _shot(drv, "3-question")

    drv.find_element(By.LINK_TEXT, tid).click()
    want = min(pages.TURNS_PER_PAGE, cat.trajectories[tid].turns)
    deadline = time.monotonic() + 20  # the click returns before a loaded machine parses it all
    while (len(turns := drv.find_elements(By.CSS_SELECTOR, "#turns > li")) < want
           and time.monotonic() < deadline):
        time.sleep(0.2)
    assert len(turns) == want
    details = drv.find_elements(By.CSS_SELECTOR, "details.result")
    if details:  # an elided result opens in place
        details[0].find_element(By.TAG_NAME, "summary").click()
        assert details[0].get_attribute("open") is not None
    _shot(drv, "4-trajectory")
    timing = drv.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return [n.responseStart - n.startTime, n.domContentLoadedEventEnd - n.startTime];")
    assert timing[1] < 1000, f"first render took {timing[1]:.0f} ms"

    drv.find_element(By.ID, "rows-link").click()
    assert drv.find_elements(By.CSS_SELECTOR, "#row-list tbody tr")
    marked = drv.find_elements(By.CSS_SELECTOR, "#messages li.trained")
    row = cat.read_row(cat.rows_of(tid)[0])
    meta = row["metadata"]
    assert meta["tid"] == tid
    assert len(marked) == sum(1 for m in row.get("messages", []) if m.get("weight") == 1)
    _shot(drv, "5-rows")
    drv.execute_script("document.getElementById('shown-row').scrollIntoView()")
    _shot(drv, "6-row-messages")


def test_server_stops_on_sigterm(server) -> None:
    url, proc = server
    proc.send_signal(signal.SIGTERM)
    # uvicorn shuts down, then ends by the signal it got, as a process killed by it would
    assert proc.wait(timeout=10) in (0, -signal.SIGTERM)
    with pytest.raises(httpx.TransportError):
        httpx.get(url, timeout=2.0)


def test_card_names_the_licence_the_build_set(build: Path) -> None:
    card = (build / "export" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc0-1.0\n")  # the hub's id for what the build calls cc0
    assert "Corpus licences: cc0. " in card
