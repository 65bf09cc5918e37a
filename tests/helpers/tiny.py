"""The tiny hand-written corpus (tests/data/tiny_corpus.jsonl) as documents."""

import json
from pathlib import Path

from hopforge.corpus.records import Document

TINY_CORPUS = Path(__file__).resolve().parents[1] / "data" / "tiny_corpus.jsonl"


def load_tiny(path: Path = TINY_CORPUS) -> list[Document]:
    """22 documents whose doc_ids are the file's ids (e.g. "mount-fendle"), with their links."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [Document(doc_id=r["id"], title=r["title"], text=r["text"], source="tiny",
                     links=tuple(r.get("links", ()))) for r in rows]
