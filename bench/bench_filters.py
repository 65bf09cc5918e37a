"""Scoring and filtering throughput on synthetic trajectories (tests/helpers/filter_data.py).

10,000 trajectories (2,500 questions, two teachers, two samples each; 1 to 3 hops, detours and
faults) go through the score stage (point-wise components, rule comparisons, Bradley-Terry,
combination, length check) and the filter stage (style features and fingerprints, MinHash
near-duplicates, selection) as plain functions, plus the before/after report. Component rows
compare against the reference run in the same process on the same input: Bradley-Terry against
scipy's BFGS on the penalized likelihood, MinHash LSH near-duplicates against exact Jaccard over
all pairs, self-BLEU against nltk.
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hopforge.filters.bradley_terry import fit_bradley_terry, log_likelihood, win_matrix
from hopforge.filters.combine import score_all
from hopforge.filters.dedup import near_duplicate_trajectories, render
from hopforge.filters.logodds import words
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.report import filter_report
from hopforge.filters.select import FilterConfig, filter_trajectories
from hopforge.synth.diversity import jaccard, self_bleu, shingles, tokenize

from tests.helpers.filter_data import population, reference_text


def _row(stage: str, items: int, seconds: float, reference: str = "",
         ref_seconds: float | None = None, note: str = "") -> dict[str, Any]:
    return {
        "stage": stage,
        "items": items,
        "seconds": round(seconds, 3),
        "items_per_s": round(items / seconds, 1) if seconds > 0 else float("inf"),
        "reference": reference or "-",
        "ref_seconds": round(ref_seconds, 3) if ref_seconds is not None else "-",
        "speedup_vs_ref": round(ref_seconds / seconds, 2) if ref_seconds else "-",
        "note": note,
    }


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def _bt_reference(n: int, outcomes: list[tuple[int, int, float]], prior: float) -> np.ndarray:
    from scipy.optimize import minimize

    w = win_matrix(n, outcomes)
    res = minimize(lambda th: -log_likelihood(th, w, prior), np.zeros(n), method="BFGS")
    return np.asarray(res.x - res.x.mean())


def run(quick: bool = False) -> list[dict[str, Any]]:
    n_questions = 250 if quick else 2500
    qs, trajs = population(n_questions, seed=11)
    reference = reference_text(random.Random(3), 2000)
    rows = []

    result, t_score = _timed(score_all, qs, trajs, ScoreConfig())
    rows.append(_row("score (point-wise + rules + BT + combine)", len(trajs), t_score,
                     note=f"{len(result.pairs)} preference pairs"))
    scores = {s.tid: s for s in result.scores}

    fres, t_filter = _timed(filter_trajectories, trajs, qs, scores, reference,
                            FilterConfig(dedup_questions=0.0))
    kept = sum(d.kept for d in fres.decisions)
    rows.append(_row("filter (style + MinHash dedup + select)", len(trajs), t_filter,
                     note=f"kept {kept}"))
    _, t_report = _timed(filter_report, trajs, scores, fres, reference="bench")
    rows.append(_row("filter report (before/after stats)", len(trajs), t_report))

    # Bradley-Terry: our Newton fit vs scipy BFGS on every question's rule comparisons
    groups: dict[str, list[tuple[int, int, float]]] = {}
    sizes: dict[str, int] = {}
    index: dict[str, dict[str, int]] = {}
    for s in result.scores:
        index.setdefault(s.qid, {})[s.tid] = len(index.setdefault(s.qid, {}))
    for c in result.comparisons:
        idx = index[c.qid]
        groups.setdefault(c.qid, []).append((idx[c.a], idx[c.b], c.outcome))
        sizes[c.qid] = len(idx)
    ours, t_bt = _timed(lambda: [fit_bradley_terry(sizes[q], g, prior=0.1)
                                 for q, g in groups.items()])
    ref, t_ref = _timed(lambda: [_bt_reference(sizes[q], g, 0.1) for q, g in groups.items()])
    gap = max(float(np.max(np.abs(a - b))) for a, b in zip(ours, ref))
    rows.append(_row("Bradley-Terry fits (Newton)", len(groups), t_bt, "scipy BFGS", t_ref,
                     note=f"max |theta - ref| {gap:.1e}"))

    # near-duplicates: MinHash LSH vs exact Jaccard over all pairs, on a subset
    sub = trajs[: 400 if quick else 2000]
    dups, t_mh = _timed(near_duplicate_trajectories, sub, threshold=0.8)

    def exact() -> int:
        sets = [shingles(words(render(t))) for t in sub]
        return sum(1 for a, b in itertools.combinations(sets, 2) if jaccard(a, b) >= 0.8)

    n_exact, t_exact = _timed(exact)
    rows.append(_row("near-duplicates (MinHash LSH)", len(sub), t_mh,
                     "exact Jaccard, all pairs", t_exact,
                     note=f"{len(dups)} flagged; {n_exact} exact pairs >= 0.8"))

    # self-BLEU: ours vs nltk on the same texts
    texts = [" ".join(f.texts) for f in list(fres.features.values())[:200]]
    ours_b, t_sb = _timed(self_bleu, texts)
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError:
        rows.append(_row("self-BLEU (200 texts)", len(texts), t_sb, note="nltk missing"))
        return rows
    toks = [tokenize(t) for t in texts]
    smooth = SmoothingFunction().method1
    ref_b, t_nltk = _timed(lambda: sum(
        sentence_bleu(toks[:i] + toks[i + 1 :], h, smoothing_function=smooth)
        for i, h in enumerate(toks)) / len(toks))
    rows.append(_row("self-BLEU (200 texts)", len(texts), t_sb, "nltk sentence_bleu", t_nltk,
                     note=f"ours {ours_b:.4f} vs nltk {ref_b:.4f}"))
    return rows
