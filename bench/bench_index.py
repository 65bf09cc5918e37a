"""The demo's index stage: the old fp32 default against the new default, with recall held.

The build is the demo's (the built-in Jargon File and its [index] table), put in a temporary
directory; `build_index` runs twice from scratch (no embedding cache), once with the settings the
demo had before (`dtype = "float32"` on the CPU, max_seq_length 128) and once with its settings
now (device and dtype "auto", max_seq_length 96). Recall: each of 300 documents (a fixed sample) is searched for by its title, k=5, in
dense and in hybrid mode; `recall@5` is the share found.
The speed-up is the ratio of the two index stages in this process.
"""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path


def run(quick: bool = False) -> list[dict]:
    """One row per setting."""
    import dataclasses

    from hopforge.corpus.builtin import load_builtin_documents
    from hopforge.corpus.layout import BuildDir
    from hopforge.corpus.search import Searcher
    from hopforge.corpus.store import write_corpus
    from hopforge.flows.config.demo import demo_config

    docs = load_builtin_documents()
    if quick:
        docs = docs[:300]
    base = demo_config().stages["index"]
    sample = random.Random(0).sample(docs, min(300, len(docs)))
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        build = BuildDir.at(Path(tmp) / "demo")
        write_corpus(build, docs)
        from hopforge.corpus.dense import SentenceTransformerEmbedder

        # warm imports and the model file; another max_seq_length keeps the timed loads real
        SentenceTransformerEmbedder(max_seq_length=64, dtype="float32").embed(["warm-up"])
        old = dataclasses.replace(base, device="cpu", dtype="float32", max_seq_length=128)
        for label, config in (("old demo settings: fp32, seq 128", old),
                              (f"demo settings: auto, seq {base.max_seq_length}", base)):
            from hopforge.corpus.index import build_index

            t = time.perf_counter()
            manifest = build_index(build, config)
            seconds = time.perf_counter() - t
            searcher = Searcher.load(build)
            hits = searcher.search_batch([d.title for d in sample], k=5, mode="dense")
            recall = sum(d.doc_id in {h.doc_id for h in hs} for d, hs in zip(sample, hits))
            hybrid = searcher.search_batch([d.title for d in sample], k=5, mode="hybrid")
            recall_h = sum(d.doc_id in {h.doc_id for h in hs} for d, hs in zip(sample, hybrid))
            dense = manifest["dense"]
            rows.append({"setting": label, "device": dense["device"], "dtype": dense["dtype"],
                         "passages": manifest["passages"], "index_s": round(seconds, 1),
                         "embed_s": manifest["times"]["embed_s"],
                         "speedup": round(rows[0]["index_s"] / seconds, 2) if rows else 1.0,
                         "dense_recall@5": round(recall / len(sample), 3),
                         "hybrid_recall@5": round(recall_h / len(sample), 3)})
            if not rows[1:]:
                import shutil

                shutil.rmtree(build.index)  # the second run embeds everything again
    return rows
