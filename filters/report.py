"""Stage reports: statistics before and after filtering, JSON-able, plus a terminal summary.

Plots are drawn from the report dictionary alone (see filters/plots.py), so a report on disk
can be re-plotted without the build.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from hopforge.filters.habits import action_ngram_counts, entropy_bits, reformulations
from hopforge.filters.records import PreferencePair, Score
from hopforge.filters.select import FilterResult, failure, reason_counts
from hopforge.filters.style import Features, StyleConfig, TrajectoryStyle
from hopforge.filters.turn_caps import trained_share
from hopforge.synth.annotate import tool_calls, useful_share
from hopforge.synth.diversity import distinct_n, self_bleu
from hopforge.synth.records import TURN_LABELS, Question, Trajectory

SELF_BLEU_SAMPLE = 200


def distribution(values: Sequence[float], edges: Sequence[float] | None = None,
                 bins: int = 20) -> dict[str, Any]:
    """Summary and histogram of a sample; pass `edges` to share bins with another sample."""
    x = np.asarray(values, dtype=float)
    if edges is not None:
        e = np.asarray(edges, dtype=float)
    else:
        e = np.histogram_bin_edges(x, bins=bins) if x.size else np.linspace(0, 1, bins + 1)
    counts = np.histogram(x, bins=e)[0] if x.size else np.zeros(len(e) - 1)
    out: dict[str, Any] = {"n": int(x.size)}
    if x.size:
        out.update(mean=round(float(x.mean()), 4), p10=round(float(np.quantile(x, 0.1)), 4),
                   p50=round(float(np.quantile(x, 0.5)), 4),
                   p90=round(float(np.quantile(x, 0.9)), 4), max=round(float(x.max()), 4))
    out["hist"] = {"edges": [round(float(v), 4) for v in e],
                   "counts": [int(c) for c in counts]}
    return out


def _edges(d: dict[str, Any]) -> list[float]:
    return list(d["hist"]["edges"])


def set_stats(
    trajs: Sequence[Trajectory],
    features: Mapping[str, Features],
    styles: Mapping[str, TrajectoryStyle],
    scores: Mapping[str, Score],
    *,
    like: dict[str, Any] | None = None,
    weights: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Diversity, habits, lengths and rewards of one set of trajectories.

    With `like` (the stats of another set), histograms reuse its bin edges; with `weights`
    (sample weights by tid), pattern shares are also given weighted.
    """
    fs = [features[t.tid] for t in trajs if t.tid in features]
    per_traj = [" ".join(f.texts) for f in fs]
    thoughts = [w for f in fs for w in f.texts]
    queries = [q for f in fs for q in f.queries]
    refs = Counter(r for f in fs for r in reformulations(f.queries))
    carried = Counter(p for t in trajs if t.tid in styles for p in styles[t.tid].patterns)
    kinds = Counter(k for t in trajs if t.tid in styles
                    for k in {p.split(":", 1)[0] for p in styles[t.tid].patterns})
    n = max(1, len(fs))
    hist = like["distributions"] if like else {}

    def dist(name: str, values: Sequence[float]) -> dict[str, Any]:
        return distribution(values, _edges(hist[name]) if name in hist else None)

    sc = [scores[t.tid] for t in trajs if t.tid in scores]
    wsum = sum(weights.get(t.tid, 0.0) for t in trajs) if weights else 0.0
    weighted: dict[str, float] = {}
    if weights and wsum > 0:
        for t in trajs:
            for p in styles[t.tid].patterns if t.tid in styles else ():
                weighted[p] = weighted.get(p, 0.0) + weights.get(t.tid, 0.0) / wsum
    return {
        "trajectories": len(trajs),
        "teachers": dict(sorted(Counter(t.teacher for t in trajs).items())),
        "distinct": {f"distinct-{k}": round(distinct_n(thoughts, k), 4) for k in (1, 2, 3)},
        "self_bleu": (round(self_bleu(per_traj, n=4, sample=SELF_BLEU_SAMPLE, seed=0), 4)
                      if len(per_traj) >= 2 else 0.0),
        "pattern_shares": {p: round(c / n, 4) for p, c in sorted(carried.items())},
        "pattern_kind_shares": {k: round(c / n, 4) for k, c in sorted(kinds.items())},
        "pattern_shares_weighted": {p: round(v, 4) for p, v in sorted(weighted.items())},
        "queries": {
            "count": len(queries),
            "copies_question": round(sum(sum(f.copies) for f in fs) / max(1, len(queries)), 4),
            "mean_words": round(float(np.mean([len(q.split()) for q in queries])), 3)
            if queries else 0.0,
            "reformulations": {k: round(refs[k] / max(1, sum(refs.values())), 4)
                               for k in ("repeat", "narrow", "broaden", "edit", "new")},
        },
        "actions": {
            "trigram_entropy_bits": round(entropy_bits(action_ngram_counts(f.actions for f in fs)),
                                          4),
            "distinct_signatures": len({f.signature for f in fs}),
        },
        "distributions": {
            "thought_words": dist("thought_words", [len(t.split()) for t in thoughts]),
            "turns": dist("turns", [len(t.turns) for t in trajs]),
            "style_score": dist("style_score", [styles[t.tid].score for t in trajs
                                                if t.tid in styles]),
            "pointwise": dist("pointwise", [s.pointwise for s in sc]),
            "combined": dist("combined", [s.combined for s in sc]),
        },
    }


def filter_report(
    trajectories: Sequence[Trajectory],
    scores: Mapping[str, Score],
    result: FilterResult,
    *,
    reference: str,
    question_dedup: str = "",
    questions: Mapping[str, Question] | None = None,
    style: StyleConfig | None = None,
) -> dict[str, Any]:
    """The filter stage's report: decisions, fingerprints, and statistics before and after.

    `trained_share_*` is the share of trajectories whose trained turns carry a pattern
    (unweighted, what a trainer reads), before filtering and in the kept set.
    """
    questions = questions or {}
    style = style or StyleConfig()
    before_set = [t for t in trajectories if t.tid in result.features]
    kept = {d.tid for d in result.decisions if d.kept}
    before = set_stats(before_set, result.features, result.styles, scores)
    weights = {d.tid: d.weight for d in result.decisions if d.kept}
    after = set_stats([t for t in before_set if t.tid in kept], result.features, result.styles,
                      scores, like=before, weights=weights)
    prints = sorted(result.profile.fingerprints, key=lambda f: (-f.share, -(f.z or 0.0), f.pattern))
    labelled = {t.tid: t for t in (result.labelled or trajectories)}
    context = {d.tid: d.context_turns for d in result.decisions if d.kept}
    names = [f.pattern for f in prints]
    kept_ids = [t.tid for t in before_set if t.tid in kept]
    trained_before = trained_share([t.tid for t in before_set], labelled, questions, scores,
                                   names, {}, style)
    trained_after = trained_share(kept_ids, labelled, questions, scores, names, context, style)
    return {
        "trajectories": len(result.decisions),
        "kept": len(kept),
        "dropped": len(result.decisions) - len(kept),
        "reference": reference,
        "reference_words": result.profile.reference_words,
        "decisions": {
            "total": len(result.decisions),
            "kept": len(kept),
            "down_weighted": sum(1 for d in result.decisions if d.kept and d.weight < 1.0),
            "kept_weight": round(sum(d.weight for d in result.decisions if d.kept), 4),
            "reasons": reason_counts(result.decisions),
        },
        "duplicates": {"questions": len(result.question_duplicates),
                       "trajectories": len(result.trajectory_duplicates),
                       "question_check": question_dedup},
        "fingerprints": [
            {"pattern": f.pattern, "z": f.z, "count": f.count,
             "share_before": before["pattern_shares"].get(f.pattern, 0.0),
             "share_after": after["pattern_shares"].get(f.pattern, 0.0),
             "weighted_share_after": after["pattern_shares_weighted"].get(f.pattern, 0.0),
             "trained_share_before": trained_before.get(f.pattern, 0.0),
             "trained_share_after": trained_after.get(f.pattern, 0.0)}
            for f in prints
        ],
        "turns": turn_judgments(result.labelled or trajectories, kept),
        "before": before,
        "after": after,
    }


def turn_judgments(trajectories: Sequence[Trajectory], kept: set[str]) -> dict[str, Any]:
    """Turn labels, failures and useful-turn shares, over all trajectories and the kept ones."""
    def labels(trajs: Sequence[Trajectory]) -> dict[str, int]:
        c = Counter(t.label or "unlabelled" for tr in trajs for t in tr.turns)
        return {label: c.get(label, 0) for label in (*TURN_LABELS, "unlabelled") if
                label != "unlabelled" or c.get(label)}

    kept_trajs = [t for t in trajectories if t.tid in kept]
    failed = Counter(failure(t) for t in trajectories if failure(t))
    return {
        "labels": labels(trajectories),
        "labels_kept": labels(kept_trajs),
        "failed": dict(sorted(failed.items())),
        "failed_kept": sum(1 for t in kept_trajs if failure(t)),
        "unjustified": sum(1 for tr in trajectories for t in tr.turns if not t.justified),
        "untrained_kept": {label: sum(1 for tr in kept_trajs for t in tr.turns if t.label == label)
                           for label in ("invalid", "off_track")},
        "useful_share": distribution([useful_share(t) for t in trajectories],
                                     [i / 20 for i in range(21)]),
        "useful_share_kept": distribution([useful_share(t) for t in kept_trajs],
                                          [i / 20 for i in range(21)]),
        "tool_calls": distribution([tool_calls(t) for t in trajectories]),
        "tool_calls_kept": distribution([tool_calls(t) for t in kept_trajs]),
    }


def score_report(scores: Sequence[Score], pairs: Sequence[PreferencePair],
                 stats: Mapping[str, Any]) -> dict[str, Any]:
    """The score stage's report: component and reward distributions, length check, pairs."""
    unit = ("exact_match", "f1", "evidence_recall", "format", "efficiency", "recovery",
            "pointwise")
    edges = [i / 20 for i in range(21)]
    lc = [s.length_controlled for s in scores if s.length_controlled is not None]
    return {
        **dict(stats),
        "correct_share": round(sum(s.correct for s in scores) / max(1, len(scores)), 4),
        "judge_scored": sum(1 for s in scores if s.judge is not None),
        "distributions": {
            **{c: distribution([float(getattr(s, c)) for s in scores], edges) for c in unit},
            **{c: distribution([float(getattr(s, c)) for s in scores])
               for c in ("strength", "combined")},
            "length_controlled": distribution(lc),
            "turns": distribution([s.n_turns for s in scores]),
        },
        "pair_margins": distribution([p.margin for p in pairs]),
        "pair_margins_by_basis": {
            basis: distribution([p.margin for p in pairs if p.basis == basis])
            for basis in ("correctness", "margin")
        },
        "pair_bases": dict(sorted(Counter(p.basis for p in pairs).items())),
        "pair_sources": dict(Counter(p.source for p in pairs)),
    }


def _row(label: str, a: object, b: object = "") -> str:
    def f(v: object) -> str:
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    return f"  {label:<34} {f(a):>10} {f(b):>10}"


def filter_summary(report: Mapping[str, Any], top: int = 10) -> str:
    """A terminal table of the filter report: before / after, reasons and top fingerprints."""
    b, a = report["before"], report["after"]
    lines = [_row("", "before", "after"), _row("trajectories", b["trajectories"],
                                                a["trajectories"])]
    for k in ("distinct-1", "distinct-2", "distinct-3"):
        lines.append(_row(k, b["distinct"][k], a["distinct"][k]))
    lines.append(_row("self-BLEU", b["self_bleu"], a["self_bleu"]))
    for k, label in (("phrase", "a phrase"), ("opener", "an opener"), ("query", "a query")):
        lines.append(_row(f"share with {label} pattern", b["pattern_kind_shares"].get(k, 0.0),
                          a["pattern_kind_shares"].get(k, 0.0)))
    lines.append(_row("queries copying the question", b["queries"]["copies_question"],
                      a["queries"]["copies_question"]))
    lines.append(_row("action trigram entropy (bits)", b["actions"]["trigram_entropy_bits"],
                      a["actions"]["trigram_entropy_bits"]))
    for name, label in (("thought_words", "thought words p50"), ("turns", "turns p50"),
                        ("style_score", "style score mean"), ("pointwise", "point-wise mean")):
        key = "mean" if "mean" in label else "p50"
        lines.append(_row(label, b["distributions"][name].get(key, "-"),
                          a["distributions"][name].get(key, "-")))
    d = report["decisions"]
    drops = {k: v for k, v in d["reasons"].items() if k not in ("kept", "down-weighted")}
    lines.append(f"  kept {d['kept']} of {d['total']} ({d['down_weighted']} down-weighted); "
                 "dropped: " + (", ".join(f"{k} {v}" for k, v in drops.items()) or "none"))
    lines.append(f"  fingerprints, share of trajectories carrying each (reference: "
                 f"{report['reference']}):")
    lines.append(f"    {'pattern':<46} {'z':>6} {'before':>7} {'after':>7} {'weighted':>8} "
                 f"{'trained':>7}")
    for f in report["fingerprints"][:top]:
        z = f"{f['z']:.1f}" if f["z"] is not None else "-"
        lines.append(f"    {f['pattern'][:46]:<46} {z:>6} {f['share_before']:>7.2f} "
                     f"{f['share_after']:>7.2f} {f['weighted_share_after']:>8.2f} "
                     f"{f.get('trained_share_after', 0.0):>7.2f}")
    return "\n".join(lines)


def score_summary(report: Mapping[str, Any]) -> str:
    """A terminal table of the score report."""
    d = report["distributions"]
    lc = report["length_correlation"]
    lines = [f"  {'component':<20} {'mean':>8} {'p10':>8} {'p50':>8} {'p90':>8}"]
    for k in ("exact_match", "f1", "evidence_recall", "format", "efficiency", "recovery",
              "pointwise", "strength", "combined", "length_controlled"):
        x = d[k]
        if x["n"]:
            lines.append(f"  {k:<20} {x['mean']:>8.3f} {x['p10']:>8.3f} {x['p50']:>8.3f} "
                         f"{x['p90']:>8.3f}")
    lines.append(f"  trajectories {report['trajectories']}, questions {report['questions']}, "
                 f"correct {report['correct_share']:.1%}, comparisons {report['comparisons']} "
                 f"({report['ties']} ties), preference pairs {report['pairs']}")
    def num(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    state = "length-controlled" if lc["corrected"] else "no correction"
    lines.append(f"  reward/length correlation {num(lc['before'])} -> {num(lc['after'])} "
                 f"({state}; threshold {lc['threshold']}, length = "
                 f"{lc.get('length', 'chars')})")
    return "\n".join(lines)
