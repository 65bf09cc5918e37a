"""The teacher's stylistic fingerprint, and a style score per trajectory.

Fingerprints (patterns) are measured over a set of trajectories:

- phrase:PHRASE, word n-grams of thoughts and final answers over-represented against a reference
  text (log-odds z >= z_min with an informative Dirichlet prior, see filters/logodds.py), with
  overlapping n-grams merged into longer phrases;
- opener:WORDS, the first `opener_words` words of a thought, when repeated;
- query:NGRAM, n-grams of queries that do not copy the question, over-represented against the
  reference, and query:copies-question.

Names (capitalized words that do not start a sentence) and numbers are replaced by <e> in all
texts and the reference first, so a template shows as "let me search for <e>" whatever entity
fills it. An n-gram must hold a word that is neither a stopword nor <e>.

A pattern counts only when at least `pattern_min_share` of the trajectories (and at least
`min_count` trajectories of `min_questions` different questions) carry it. A
trajectory's style score is the weighted mean of four shares in [0, 1]:

    phrase  = share of its thoughts (and answer) holding a phrase pattern
    opener  = share of its thoughts that start with an opener pattern
    query   = share of its queries that copy the question or hold a query pattern
    actions = share of all trajectories with its collapsed action sequence
    style   = (w_p * phrase + w_o * opener + w_q * query + w_a * actions) / (w_p + w_o + w_q + w_a)
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pydantic
from hopforge.corpus.settings import SETTINGS, amount
from hopforge.corpus.tools import is_final, search_query
from hopforge.filters.habits import (
    STOPWORDS,
    action_signature,
    actions,
    copies_question,
    search_queries,
)
from hopforge.filters.logodds import (
    count_ngrams,
    drop_contained,
    has_content,
    log_odds_z,
    mask_names,
    merge_overlapping,
    ngrams,
    words,
)
from hopforge.synth.records import Trajectory, Turn
from pydantic import Field, PositiveInt

COPY_PATTERN = "query:copies-question"


@pydantic.dataclasses.dataclass(frozen=True, slots=True, kw_only=True, config=SETTINGS)
class StyleConfig:
    """What counts as a fingerprint, and the weights of the style score (see module docstring)."""

    ngram_sizes: tuple[PositiveInt, ...] = Field(default=(2, 3, 4), min_length=1, description=(
        "word n-gram sizes of phrase patterns"))
    query_ngram_sizes: tuple[PositiveInt, ...] = Field(default=(1, 2), min_length=1, description=(
        "n-gram sizes of query patterns"))
    z_min: float = amount(3.0, "log-odds z at or above which an n-gram is over-represented")
    min_count: int = amount(5, "the fewest trajectories that carry a pattern")
    pattern_min_share: float = Field(default=0.1, gt=0.0, le=1.0, description=(
        "the smallest share of trajectories that carry a pattern"))
    min_questions: int = amount(3, "a pattern must occur in trajectories of this many questions")
    opener_words: int = Field(default=3, ge=1, description="words of a thought's opener")
    copy_threshold: float = Field(default=0.7, gt=0.0, le=1.0, description=(
        "share of a query's words from the question at which it copies the question"))
    prior_strength: float = amount(0.1, "the Dirichlet prior's strength in the log-odds")
    max_phrases: int = amount(40, "phrase patterns kept, the strongest first")
    weight_phrase: float = amount(0.35, "style score: the weight of phrase patterns")
    weight_opener: float = amount(0.3, "style score: the weight of openers")
    weight_query: float = amount(0.25, "style score: the weight of query habits")
    weight_actions: float = amount(0.1, "style score: the weight of repeated action sequences")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    """One pattern: its kind (phrase | opener | query), key, log-odds z, count and share."""

    kind: str
    key: str
    count: int
    share: float  # share of trajectories that carry it
    z: float | None = None

    @property
    def pattern(self) -> str:
        return f"{self.kind}:{self.key}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    """What style measurement needs from one trajectory (extracted once)."""

    tid: str
    qid: str
    teacher: str
    texts: tuple[str, ...]  # thoughts, then the final answer
    thought_grams: tuple[frozenset[str], ...]  # n-grams of each text
    openers: tuple[str, ...]  # opener of each thought
    queries: tuple[str, ...]
    query_grams: tuple[frozenset[str], ...]
    copies: tuple[bool, ...]  # per query: copies the question
    actions: tuple[str, ...]
    signature: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StyleProfile:
    """Fingerprints found over a set of trajectories, and the share of each action signature."""

    fingerprints: tuple[Fingerprint, ...]
    signature_share: Mapping[str, float]
    phrase_parts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # n-grams merged
    reference_words: int = 0

    def patterns(self, kind: str) -> frozenset[str]:
        return frozenset(f.key for f in self.fingerprints if f.kind == kind)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrajectoryStyle:
    tid: str
    phrase: float
    opener: float
    query: float
    actions: float
    score: float
    patterns: tuple[str, ...]  # the fingerprint patterns it carries


def thought_texts(traj: Trajectory) -> list[str]:
    """Free text the teacher wrote in each turn: its reasoning, then its thought (or the raw
    text when nothing parsed); a reasoning teacher's fingerprints sit mostly in its reasoning."""
    out = []
    for t in traj.turns:
        shown = t.thought or ("" if t.call is not None else t.raw)
        text = "\n\n".join(p for p in (t.reasoning.strip(), shown.strip()) if p)
        if text:
            out.append(text)
    return out


def opener(text: str, n: int) -> str:
    return " ".join(words(text)[:n])


def extract(traj: Trajectory, question: str, config: StyleConfig) -> Features:
    """The style-relevant parts of one trajectory."""
    thoughts = [mask_names(t) for t in thought_texts(traj)]
    texts = [*thoughts, mask_names(traj.final_answer)] if traj.final_answer.strip() else thoughts
    raw_queries = search_queries(traj)
    copies = [copies_question(q, question, threshold=config.copy_threshold) for q in raw_queries]
    qs = [mask_names(q, sentences=False) for q in raw_queries]
    acts = actions(traj)

    def grams(text: str, sizes: Sequence[int]) -> frozenset[str]:
        toks = words(text)
        return frozenset(g for n in sizes for g in ngrams(toks, n))

    return Features(
        tid=traj.tid, qid=traj.qid, teacher=traj.teacher, texts=tuple(texts),
        thought_grams=tuple(grams(t, config.ngram_sizes) for t in texts),
        openers=tuple(o for o in (opener(t, config.opener_words) for t in thoughts) if o),
        queries=tuple(qs),
        query_grams=tuple(frozenset() if c else grams(q, config.query_ngram_sizes)
                          for q, c in zip(qs, copies)),
        copies=tuple(copies),
        actions=tuple(acts), signature=action_signature(acts),
    )


def _frequent(docs: Sequence[tuple[str, Iterable[str]]], config: StyleConfig) -> Counter[str]:
    """Trajectory counts of the keys that pass the share, count and question floors."""
    sets = [(qid, frozenset(keys)) for qid, keys in docs]
    df: Counter[str] = Counter(itertools.chain.from_iterable(k for _, k in sets))
    floor = max(config.min_count, config.pattern_min_share * len(docs))
    cand = {k for k, c in df.items() if c >= floor}
    qids: dict[str, set[str]] = {k: set() for k in cand}
    for qid, keys in sets:
        for k in keys & cand:
            qids[k].add(qid)
    return Counter({k: df[k] for k in cand if len(qids[k]) >= config.min_questions})


def _over_represented(
    docs: Sequence[tuple[str, Iterable[str]]], target: Counter[str], reference: Counter[str],
    config: StyleConfig,
) -> dict[str, float]:
    """n-gram -> z for the frequent n-grams whose log-odds z reaches z_min."""
    df = _frequent(docs, config)
    cand = [g for g in df if target[g] >= config.min_count and has_content(g, STOPWORDS)]
    z = log_odds_z(target, reference, prior_strength=config.prior_strength, keys=cand)
    return {g: z[g] for g in cand if z[g] >= config.z_min}


def _spaced(text: str) -> str:
    return f" {' '.join(words(text))} "


def _phrases(features: Sequence[Features], zs: Mapping[str, float], target: Counter[str],
             config: StyleConfig) -> tuple[list[Fingerprint], dict[str, tuple[str, ...]]]:
    """Phrase fingerprints: overlapping n-grams merged, counted as whole phrases."""
    groups = merge_overlapping(sorted(zs, key=lambda g: (-zs[g], g)), target)
    counts = {p: min(target[g] for g in parts) for p, parts in groups.items()}
    best = {p: max(zs[g] for g in parts) for p, parts in groups.items()}
    ranked = drop_contained(sorted(groups, key=lambda p: (-best[p], p)), counts)
    n = max(1, len(features))
    floor = max(config.min_count, config.pattern_min_share * n)
    prints: list[Fingerprint] = []
    parts: dict[str, tuple[str, ...]] = {}
    for p in ranked:
        comps = set(groups[p])
        needle = f" {p} "
        occ = carriers = 0
        for f in features:
            if any(comps & g for g in f.thought_grams):
                c = sum(_spaced(t).count(needle) for t in f.texts)
                occ += c
                carriers += c > 0
        if carriers >= floor:
            prints.append(Fingerprint(kind="phrase", key=p, count=occ, share=carriers / n,
                                      z=round(best[p], 3)))
            parts[p] = tuple(sorted(comps))
        if len(prints) >= config.max_phrases:
            break
    return prints, parts


def fit_style(
    features: Sequence[Features], reference_texts: Iterable[str], config: StyleConfig
) -> StyleProfile:
    """Find the fingerprints of a set of trajectories against a reference text."""
    n = max(1, len(features))
    sizes = sorted(set(config.ngram_sizes) | set(config.query_ngram_sizes))
    ref = [mask_names(t) for t in reference_texts]
    reference = count_ngrams(ref, sizes)
    ref_words = sum(len(words(t)) for t in ref)
    target = count_ngrams((t for f in features for t in f.texts), config.ngram_sizes)
    docs = [(f.qid, frozenset().union(*f.thought_grams)) for f in features]
    prints, parts = _phrases(features, _over_represented(docs, target, reference, config),
                             target, config)
    qtarget = count_ngrams((q for f in features for q, c in zip(f.queries, f.copies) if not c),
                           config.query_ngram_sizes)
    qdocs = [(f.qid, frozenset().union(*f.query_grams)) for f in features]
    qz = _over_represented(qdocs, qtarget, reference, config)
    qdf = _frequent(qdocs, config)
    for g in drop_contained(sorted(qz, key=lambda g: (-qz[g], g)), qtarget)[: config.max_phrases]:
        prints.append(Fingerprint(kind="query", key=g, count=qtarget[g], share=qdf[g] / n,
                                  z=round(qz[g], 3)))
    all_openers = Counter(o for f in features for o in f.openers)
    opened = _frequent([(f.qid, f.openers) for f in features], config)
    for o, c in sorted(opened.items(), key=lambda kv: (-kv[1], kv[0])):
        prints.append(Fingerprint(kind="opener", key=o, count=all_openers[o], share=c / n))
    copied = _frequent([(f.qid, ("copies-question",) if any(f.copies) else ()) for f in features],
                       config)
    if copied:
        prints.append(Fingerprint(kind="query", key="copies-question",
                                  count=sum(sum(f.copies) for f in features),
                                  share=copied["copies-question"] / n))
    sig = Counter(f.signature for f in features)
    return StyleProfile(fingerprints=tuple(prints),
                        signature_share={s: c / n for s, c in sig.items()},
                        phrase_parts=parts, reference_words=ref_words)


def trajectory_style(f: Features, profile: StyleProfile, config: StyleConfig) -> TrajectoryStyle:
    """Style shares, score and carried patterns of one trajectory under a profile."""
    openers, qpat = profile.patterns("opener"), profile.patterns("query")
    carried: set[str] = set()
    hit = 0
    for text, grams in zip(f.texts, f.thought_grams):
        spaced = ""
        found = False
        for p, comps in profile.phrase_parts.items():
            if any(g in grams for g in comps):
                spaced = spaced or _spaced(text)
                if f" {p} " in spaced:
                    carried.add(f"phrase:{p}")
                    found = True
        hit += found
    phrase = hit / len(f.thought_grams) if f.thought_grams else 0.0
    op = [o for o in f.openers if o in openers]
    carried |= {f"opener:{o}" for o in op}
    opener_share = len(op) / len(f.openers) if f.openers else 0.0
    qhit = 0
    for grams, copy in zip(f.query_grams, f.copies):
        qfound = grams & qpat
        copy = copy and "copies-question" in qpat
        qhit += bool(qfound) or copy
        carried |= {f"query:{g}" for g in qfound}
        if copy:
            carried.add(COPY_PATTERN)
    query = qhit / len(f.queries) if f.queries else 0.0
    act = profile.signature_share.get(f.signature, 0.0)
    w = (config.weight_phrase, config.weight_opener, config.weight_query, config.weight_actions)
    score = (w[0] * phrase + w[1] * opener_share + w[2] * query + w[3] * act) / (sum(w) or 1.0)
    return TrajectoryStyle(tid=f.tid, phrase=round(phrase, 6), opener=round(opener_share, 6),
                           query=round(query, 6), actions=round(act, 6), score=round(score, 6),
                           patterns=tuple(sorted(carried)))


def turn_patterns(turn: Turn, question: str, patterns: Collection[str],
                  config: StyleConfig) -> set[str]:
    """The patterns of `patterns` that one turn's own text carries: thought, query or answer."""
    text = turn.thought or ("" if turn.call is not None else turn.raw)
    masked = mask_names(text) if text.strip() else ""
    texts = [masked] if masked else []
    call = turn.call
    if call is not None and is_final(call.name):
        texts.append(mask_names(str(call.arguments.get("text", ""))))
    query = search_query(call.name, call.arguments) if call is not None else None
    copy = isinstance(query, str) and copies_question(query, question,
                                                      threshold=config.copy_threshold)
    qgrams: frozenset[str] = frozenset()
    if isinstance(query, str) and not copy:
        toks = words(mask_names(query, sentences=False))
        qgrams = frozenset(g for n in config.query_ngram_sizes for g in ngrams(toks, n))
    first = opener(masked, config.opener_words) if masked else ""
    spaced = [_spaced(t) for t in texts]
    out = set()
    for p in patterns:
        kind, key = p.split(":", 1)
        if p == COPY_PATTERN:
            hit = copy
        elif kind == "phrase":
            hit = any(f" {key} " in t for t in spaced)
        elif kind == "opener":
            hit = first == key
        else:
            hit = key in qgrams
        if hit:
            out.add(p)
    return out
