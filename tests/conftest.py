import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real corpora in ../shared/data (tests that need them skip if it is absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_corpus_path() -> Path:
    """22 hand-written documents with explicit links and known 2- to 4-hop chains."""
    return TEST_DATA / "tiny_corpus.jsonl"


# --- the OpenAI-compatible test server (tests/helpers/openai_server.py) ---
# The repository root goes on sys.path so tests and benchmarks can write
# `from tests.helpers.openai_server import OpenAITestServer, Reply` however pytest was started.
import sys
from collections.abc import Iterator

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


from tests.helpers.openai_server import OpenAITestServer


@pytest.fixture
def openai_server() -> Iterator[OpenAITestServer]:
    """A running OpenAI-compatible server on 127.0.0.1; script it with `.enqueue(Reply...)`."""
    with OpenAITestServer() as server:
        yield server


# --- trajectories: the tiny corpus as documents, hand-built chain questions, a BM25 searcher ---
AGENT_CHAINS = (
    (("Who designed the lighthouse of the home port of the cartographer who first surveyed "
      "Mount Fendle?"), ("mount-fendle", "ilse-varro", "quillon", "grey-needle", "dorran-pell"),
     "Dorran Pell"),
    ("In which town was the engineer who designed the Grey Needle born?",
     ("grey-needle", "dorran-pell", "brackwater"), "Brackwater"),
    ("What port city was the founder of the Orvin Gallery from?",
     ("orvin-gallery", "hesper-quaile", "quillon"), "Quillon"),
    (("Who made the great refractor of the last work of the architect of the town hall of "
      "Brackwater?"), ("brackwater", "wenna-strode", "calden-observatory", "osric-helm"),
     "Osric Helm"),
    ("Who founded the gallery that holds the best known canvas of Tamsin Pell?",
     ("tamsin-pell", "orvin-gallery", "hesper-quaile"), "Hesper Quaile"),
)


def _agent_questions(docs: list) -> list:
    import re as _re
    from itertools import pairwise as _pairwise

    from hopforge.synth.records import Hop, Question

    by_id = {d.doc_id: d for d in docs}
    questions = []
    for n, (text, chain, answer) in enumerate(AGENT_CHAINS):
        hops = []
        for a, b in _pairwise(chain):
            bridge = by_id[b].title
            sentences = _re.split(r"(?<=\.)\s+", by_id[a].text)
            clue = next(s for s in sentences if bridge.lower() in s.lower())
            hops.append(Hop(from_doc=a, to_doc=b, clue=clue, bridge=bridge))
        questions.append(Question(qid=f"q{n}", question=text, answer=answer, hops=tuple(hops),
                                  evidence=chain, answer_doc=chain[-2]))
    return questions


@pytest.fixture(scope="session")
def agent_documents(tiny_corpus_path: Path) -> list:
    """The tiny corpus as `Document`s whose doc_ids are the file's ids (e.g. "mount-fendle")."""
    from tests.helpers.tiny import load_tiny

    return load_tiny(tiny_corpus_path)


@pytest.fixture(scope="session")
def agent_questions(agent_documents: list) -> list:
    """Five chain `Question`s over the tiny corpus (2 to 4 hops), clues taken from the texts."""
    return _agent_questions(agent_documents)


@pytest.fixture(scope="session")
def agent_searcher(agent_documents: list):  # type: ignore[no-untyped-def]
    """An in-memory BM25 `Searcher` over the tiny corpus."""
    from hopforge.corpus.search import Searcher

    return Searcher.from_documents(agent_documents, dense=False)


@pytest.fixture(scope="module")
def served(agent_searcher) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The URL of a search service (`serve-search`) over the tiny corpus, on a free loopback port."""
    from hopforge.corpus.http_app import ServiceServer, make_app
    from hopforge.corpus.service import SearchService

    service = SearchService(agent_searcher)
    server = ServiceServer(make_app(service)).start()
    yield server.url
    server.stop()
    service.close()


# --- orchestration: a temporary Prefect API server shared by the flow tests ---
@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """A temporary Prefect API server (SQLite in a temporary folder) for the whole session."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
