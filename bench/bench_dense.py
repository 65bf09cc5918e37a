"""Embedding throughput (passages/s) of all-MiniLM-L6-v2 on CPU, and what each speed-up buys.

Passages: the HotpotQA distractor contexts of the first 100 questions of
../shared/data/wiki/hotpotqa_train.json (10 paragraphs each, 2 of them gold), pooled: 994
passages (`--quick`: 10 questions). Each variant embeds all passages and the questions;
`recall@2` / `recall@5` (gold titles among the best passages of the pool) and `top5_agree`
(overlap of each question's top-5 with the fp32 baseline's) show whether retrieval quality
held. "new default" is `SentenceTransformerEmbedder()` as `hopforge index` makes it (device and
dtype "auto", batch 64); the baseline is the same embedder in fp32, the default before. Throughputs are
ratios against the baseline run in the same process. The cache row re-indexes the same passages
through the content-hash cache, as `hopforge index` does on an unchanged corpus.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


class _ModelEmbedder:
    """A SentenceTransformer (possibly modified) behind the Embedder protocol."""

    def __init__(self, model: Any, name: str, batch_size: int) -> None:
        self.model, self.name, self.batch_size = model, name, batch_size
        self.dim = 384

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray:
        out = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(out, dtype=np.float32)


def _pool(n_questions: int) -> tuple[list[str], list[str], list[str], list[set[str]]]:
    rows = json.loads((SHARED / "wiki" / "hotpotqa_train.json").read_text("utf-8"))[:n_questions]
    titles, texts = [], []
    for r in rows:
        for title, sents in r["context"]:
            if title not in titles:
                titles.append(title)
                texts.append(f"{title}\n{' '.join(sents)}")
    return titles, texts, [r["question"] for r in rows], [{t for t, _ in r["supporting_facts"]}
                                                          for r in rows]


def _load(max_seq_length: int) -> Any:
    from hopforge.corpus.dense import default_model_path
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(default_model_path(), device="cpu")
    model.max_seq_length = max_seq_length
    return model


def _variants() -> list[tuple[str, Any]]:
    import torch
    from hopforge.corpus.dense import SentenceTransformerEmbedder, resolve_dtype

    def embedder(**kwargs: Any) -> Any:
        return lambda: SentenceTransformerEmbedder(**kwargs)

    def quantized() -> Any:
        model = _load(256)
        return torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)

    auto = resolve_dtype("auto", "cpu")
    return [
        ("fp32 default before (seq 256)", embedder(device="cpu", dtype="float32")),
        (f"new default: auto ({auto}), seq 256", embedder()),
        (f"auto ({auto}), seq 128", embedder(max_seq_length=128)),
        (f"auto ({auto}), seq 96 (the demo's)", embedder(max_seq_length=96)),
        ("fp32, seq 128", embedder(device="cpu", dtype="float32", max_seq_length=128)),
        ("int8 dynamic quantization, seq 256", lambda: _ModelEmbedder(quantized(), "int8", 64)),
    ]


def run(quick: bool = False) -> list[dict]:
    """One row per embedding variant."""
    from hopforge.corpus.dense import embed_with_cache
    from hopforge.corpus.passages import content_hash

    titles, texts, questions, gold = _pool(10 if quick else 100)
    rows: list[dict] = []
    base_top: list[list[int]] = []
    base_rate = 0.0
    for name, make in _variants():
        emb = make()
        emb.embed(texts[:8])  # warm-up
        t = time.perf_counter()
        vecs = emb.embed(texts)
        elapsed = time.perf_counter() - t
        qv = emb.embed(questions, queries=True)
        order = np.argsort(-(qv @ vecs.T), axis=1, kind="stable")
        top = [o[:5].tolist() for o in order]
        recall = np.mean([len(g & {titles[i] for i in o[:2]}) / len(g)
                          for o, g in zip(order, gold)])
        recall5 = np.mean([len(g & {titles[i] for i in o[:5]}) / len(g)
                           for o, g in zip(order, gold)])
        rate = len(texts) / elapsed
        if not rows:
            base_top, base_rate = top, rate
        agree = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(top, base_top)])
        rows.append({"variant": name, "passages": len(texts), "passages_per_s": round(rate, 1),
                     "speedup": round(rate / base_rate, 2), "recall@2": round(float(recall), 3),
                     "recall@5": round(float(recall5), 3), "top5_agree": round(float(agree), 3)})
        if not rows[1:]:
            cache = {content_hash(t, "b"): v for t, v in zip(texts, vecs)}
            t = time.perf_counter()
            res = embed_with_cache(emb, texts, salt="b", cache=cache)
            cached_rate = len(texts) / (time.perf_counter() - t)
            assert res.embedded == 0
            cache_row = {"variant": "re-index, content-hash cache hit", "passages": len(texts),
                         "passages_per_s": round(cached_rate, 1),
                         "speedup": round(cached_rate / base_rate, 1),
                         "recall@2": round(float(recall), 3),
                         "recall@5": round(float(recall5), 3), "top5_agree": 1.0}
    rows.append(cache_row)
    return rows
