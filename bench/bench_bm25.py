"""BM25 at scale: query latency against rank-bm25 and bm25s, build time and memory per million.

Passages are synthetic (bench/zipf_corpus.py: Zipfian text over FOLDOC's vocabulary, 30-90
tokens each) at 100k and 1M (`--quick`: 10k and 50k). Two query sets: 5 distinct tokens drawn
from a random passage ("doc", many postings), and 2 of the 200 terms that occur in the fewest
passages ("rare"). All systems get the same tokens. hopforge's index is built the production way
(`BM25Builder`: chunks of 50k passages to chunk files, assembled into memory-mapped arrays, then
loaded memory-mapped) with float32 weights. `top10_equal` is the share of queries whose
top-10 equals rank-bm25's (by `get_scores`, ties at the 10th score accepted; at 1M, where
rank-bm25 is too slow, hopforge's own exhaustive scores stand in); `max_rel_diff` is the
largest relative score difference against that reference. Speeds are ratios in this process.
Each size is built in a child process; `peak_rss_mb` is that child's peak resident memory
(`ru_maxrss`: interpreter, numpy, one chunk of passages and the pages of the memory-mapped files
it wrote); `disk_mb` and the 20M projection are the index files.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

from bench.zipf_corpus import ZipfCorpus, document_queries, foldoc_vocabulary, rare_queries

CHUNK = 50_000


def build_hopforge(n: int, vocab: list[str], directory: Path) -> float:
    """Build the index of `n` passages under `directory` chunk by chunk; returns seconds."""
    from hopforge.corpus.bm25_build import BM25Builder

    t = time.perf_counter()
    builder = BM25Builder(directory, dtype="float32")
    for chunk in ZipfCorpus(n, vocab).chunks(CHUNK):
        builder.add(chunk)
    builder.finish()
    return time.perf_counter() - t


def build_in_child(n: int, vocab_file: Path, directory: Path) -> tuple[float, float]:
    """Build `n` passages' index in a child process: (seconds, peak resident MB of the child).

    The child holds nothing but the build (interpreter, numpy, the vocabulary, one chunk of
    generated passages), so its peak RSS is what building costs; mapped index pages it wrote
    count too.
    """
    code = (
        "import json, resource; from pathlib import Path; "
        "from bench.bench_bm25 import build_hopforge; "
        f"vocab = json.loads(Path({str(vocab_file)!r}).read_text()); "
        f"s = build_hopforge({n}, vocab, Path({str(directory)!r})); "
        "print(s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[1])
    seconds, kib = out.stdout.split()[-2:]
    return float(seconds), int(kib) / 1024


def _ms(fn, queries: list[list[str]]) -> tuple[list, float]:  # type: ignore[no-untyped-def]
    fn(queries[0])
    t = time.perf_counter()
    out = [fn(q) for q in queries]
    return out, 1000 * (time.perf_counter() - t) / len(queries)


def _bm25s_top10(bm: object, q: list[str]) -> np.ndarray:
    return bm.retrieve([q], k=10, show_progress=False, n_threads=1)[0][0]  # type: ignore[attr-defined]


def _top10_equal(ref: list[np.ndarray], ids: list[np.ndarray]) -> float:
    """Share of queries whose top-10 equals the reference's, a tie at the 10th score allowed."""
    same = 0
    for scores, got in zip(ref, ids):
        order = np.argsort(-scores, kind="stable")
        want = [int(i) for i in order[:10] if scores[i] > 0]
        got = [int(i) for i in got[:10]]
        cut = scores[want[-1]] if want else 0.0
        tied = {int(i) for i in np.flatnonzero(np.isclose(scores, cut, rtol=1e-6))}
        same += len(got) == len(want) and all(
            a == b or (a in tied and b in tied) for a, b in zip(want, got))
    return same / max(1, len(ref))


def run(quick: bool = False) -> list[dict]:
    """One row per (passages, system, query set)."""
    import bm25s
    from hopforge.corpus.bm25 import BM25Index
    from rank_bm25 import BM25Okapi

    vocab = foldoc_vocabulary()
    sizes = [10_000, 50_000] if quick else [100_000, 1_000_000]
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        vocab_file = Path(tmp) / "vocab.json"
        vocab_file.write_text(json.dumps(vocab))
        for n in sizes:
            build_s, peak = build_in_child(n, vocab_file, Path(tmp) / f"bm25-{n}")
            docs = ZipfCorpus(n, vocab).passages()
            ours = BM25Index.load(Path(tmp) / f"bm25-{n}")
            disk = sum(p.stat().st_size for p in (Path(tmp) / f"bm25-{n}").iterdir())
            df = {t: int(ours.indptr[i + 1] - ours.indptr[i]) for t, i in ours.vocab.items()}
            sets = {"doc": document_queries(docs, 200), "rare": rare_queries(df, 200)}
            ref_name, ref_ms, ref_build = "hopforge scores()", float("nan"), float("nan")
            ref_scores: dict[str, list[np.ndarray]] = {}
            if n <= 100_000:
                ref_name = "rank-bm25 BM25Okapi"
                t = time.perf_counter()
                okapi = BM25Okapi(docs)
                ref_build = time.perf_counter() - t
                n_ref = 5 if quick else 10
                for name, qs in sets.items():
                    ref_scores[name], ms = _ms(okapi.get_scores, qs[:n_ref])
                    if name == "doc":
                        ref_ms = ms
                    rows.append({"passages": n, "system": ref_name, "queries": name,
                                 "query_ms": ms, "x_rank_bm25": 1.0, "x_bm25s": float("nan"),
                                 "top10_equal": 1.0, "max_rel_diff": 0.0, "build_s": ref_build})
                del okapi
            else:
                for name, qs in sets.items():
                    ref_scores[name] = [ours.scores(q) for q in qs[:20]]
            bm = bm25s.BM25(method="robertson", k1=1.5, b=0.75)
            t = time.perf_counter()
            bm.index(docs, show_progress=False)
            bm_build = time.perf_counter() - t
            del docs
            for name, qs in sets.items():
                bm_ids, bm_ms = _ms(partial(_bm25s_top10, bm), qs)
                our_top, our_ms = _ms(partial(ours.top_k, k=10), qs)
                ref = ref_scores[name]
                diff = max(float(np.max(np.abs(ours.scores(q) - s) / np.maximum(1.0, np.abs(s))))
                           for q, s in zip(qs, ref))
                rref = ref_ms if name == "doc" else float("nan")
                rows.append({"passages": n, "system": "bm25s robertson", "queries": name,
                             "query_ms": bm_ms, "x_rank_bm25": rref / bm_ms, "x_bm25s": 1.0,
                             "top10_equal": _top10_equal(ref, bm_ids[: len(ref)]),
                             "max_rel_diff": float("nan"), "build_s": bm_build})
                rows.append({"passages": n, "system": "hopforge BM25Index f32", "queries": name,
                             "query_ms": our_ms, "x_rank_bm25": rref / our_ms,
                             "x_bm25s": bm_ms / our_ms,
                             "top10_equal": _top10_equal(ref, [i for i, _ in our_top[: len(ref)]]),
                             "max_rel_diff": diff, "build_s": build_s,
                             "build_s_per_M": build_s * 1e6 / n, "peak_rss_mb": peak,
                             "disk_mb": disk / 2**20,
                             "disk_gb_20M": disk / n * 20e6 / 2**30})
            del bm, ours
            print(json.dumps([r for r in rows if r["passages"] == n]), file=sys.stderr, flush=True)
    keys = list(rows[-1])
    return [{k: r.get(k, "") for k in dict.fromkeys(keys)} for r in rows]
