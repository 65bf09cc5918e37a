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


# --- the OpenAI-compatible test server (tests/openai_server.py) ---
# The repository root goes on sys.path so tests and benchmarks can write
# `from tests.openai_server import OpenAITestServer, Reply` however pytest was started.
import sys
from collections.abc import Iterator

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


from tests.openai_server import OpenAITestServer


@pytest.fixture
def openai_server() -> Iterator[OpenAITestServer]:
    """A running OpenAI-compatible server on 127.0.0.1; script it with `.enqueue(Reply...)`."""
    with OpenAITestServer() as server:
        yield server
