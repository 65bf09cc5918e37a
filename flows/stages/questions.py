"""Build-directory runner of the question stage: corpus and index in, question parts out.

Part i is generated with its own seed (`"{seed}:{i}"`) and aims at `part_size` accepted questions
(fewer for the last part); it holds the accepted and the rejected questions in attempt order.
Questions of earlier parts are never tried again (same qid) and later accepted questions must not
nearly repeat them, so a run killed at any moment and started again produces the same parts as an
uninterrupted run, with no question twice. A part that falls short of its target means the corpus
ran out of new plans: the run stops there and the report says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.names import NameIndex
from hopforge.corpus.parts import (
    atomic_write_text,
    clear_parts,
    done_indexes,
    read_parts,
    write_json,
    write_part,
)
from hopforge.corpus.records import Document
from hopforge.corpus.search import open_searcher
from hopforge.corpus.store import corpus_fingerprint, read_documents
from hopforge.synth.diversity import distinct_n, self_bleu
from hopforge.synth.questions.checks import NearDuplicates, SearchBackend
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.facts import extract_all
from hopforge.synth.questions.families import family
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.model_facts import model_facts
from hopforge.synth.questions.stage import generate_questions, split_reasons
from hopforge.synth.records import Fact, Question
from hopforge.synth.teacher.chat import ChatModel

log = logging.getLogger(__name__)
Progress = Callable[[int, int], None] | None
RUN_FILE = "run.json"
# Settings that do not change which questions are written.
NEUTRAL_FIELDS = frozenset({"n", "concurrency"})
RANK_BUCKETS = ((1, "1"), (2, "2"), (3, "3"), (5, "4-5"), (10, "6-10"), (20, "11-20"), (50, "21-50"))


def part_rng(seed: int, index: int) -> random.Random:
    """The random generator of part `index`: the same for every run with the same seed."""
    return random.Random(f"{seed}:{index}")


def _meta(directory: Path, index: int) -> Path:
    return directory / f".part-{index:05d}.meta.json"


def _run_hash(config: QuestionConfig, composer: str, corpus: str,
              limits: TurnLimits | None = None) -> str:
    settings = {k: v for k, v in dataclasses.asdict(config).items() if k not in NEUTRAL_FIELDS}
    if limits is not None:
        settings["limits"] = dataclasses.asdict(limits)
    if composer == "scripted":
        del settings["round_trip"]  # model composers only: scripted builds resume as before
    body = json.dumps({"config": settings, "composer": composer, "corpus": corpus},
                      sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def _check_run(directory: Path, run_hash: str, force: bool) -> None:
    if force:
        clear_parts(directory)
        return
    path = directory / RUN_FILE
    changed = path.is_file() and json.loads(path.read_text("utf-8")).get("hash") != run_hash
    if changed and done_indexes(directory):
        raise HopforgeError(
            f"{directory} holds questions made with other settings, teacher or corpus: rerun "
            "with the same options (only -n may change) to continue, or pass --force to start over"
        )


def load_corpus(build: BuildDir) -> list[Document]:
    """The build's documents; a clear error when the corpus stage has not run."""

    docs = read_documents(build)
    if not docs:
        raise HopforgeError(f"the corpus in {build.corpus} is empty: ingest some documents first")
    return docs


def _corpus_key(build: BuildDir, docs: list[Document]) -> str:
    try:

        return corpus_fingerprint(build)
    except (HopforgeError, KeyError, OSError):
        return hashlib.sha256("\n".join(d.doc_id for d in docs).encode()).hexdigest()[:16]


def run_questions_build(
    build: BuildDir,
    config: QuestionConfig,
    *,
    teacher: ChatModel | None = None,
    searcher: SearchBackend | None = None,
    force: bool = False,
    progress: Progress = None,
    stop_after_parts: int | None = None,
    limits: TurnLimits | None = None,
) -> dict[str, Any]:
    """Generate `config.n` accepted questions into BUILD/questions; `teacher` None: scripted.

    Writes BUILD/facts/facts.jsonl (once per corpus), BUILD/questions/part-*.jsonl,
    BUILD/reports/facts.json and BUILD/reports/questions.json; returns the report.
    `limits` are the trajectory stage's turn limits: the mix keeps only tasks a run can finish
    (min_calls within max_turns, no stretch without gold evidence as long as the no-progress
    window); ladder rungs keep their own ranges and are drafted before the mix, which would
    take the few starts a long task can have. `stop_after_parts` ends the run after writing
    that many new parts (to test resuming).
    """
    return asyncio.run(_run(build, config, teacher, searcher, force, progress, stop_after_parts,
                            limits))


@dataclasses.dataclass(frozen=True, slots=True)
class TurnLimits:
    """What a trajectory may take: `max_turns` in all, `no_progress` turns without new gold,
    with tool faults at rate `faults` (each met about once per call, a persistent one up to three
    times: the same factor 1 + 3 x faults the trajectory stage's no-progress window grows by)."""

    max_turns: int
    no_progress: int
    faults: float = 0.0

    def mix(self, config: QuestionConfig) -> QuestionConfig:
        """`config` with its max_calls no higher than a run can make with its retries: a task of
        min_calls 64 cannot finish in 64 turns once a fault is met."""
        turns = max(1, int(self.max_turns / (1.0 + 3.0 * self.faults)))
        top = min(config.max_calls or turns, turns)
        return dataclasses.replace(config, max_calls=max(top, config.min_calls))

    @property
    def max_gap(self) -> int:
        return max(4, self.no_progress - 4)


async def load_facts(build: BuildDir, docs: list[Document], corpus: str, config: QuestionConfig,
                     teacher: ChatModel | None = None) -> dict[str, list[Fact]]:
    """The corpus's facts: read from BUILD/facts when made from this corpus (and teacher),
    else extracted and written there with a report of facts per document by kind (once per
    build). A model teacher also reads the facts of the `config.model_fact_docs` documents the
    corpus names most; each of its facts is verified against the text before it is kept."""
    directory = build.root / "facts"
    path, stamp = directory / "facts.jsonl", directory / "corpus.json"
    made_by = {"corpus": corpus, "model": teacher.name if teacher is not None else "",
               "model_docs": config.model_fact_docs if teacher is not None else 0}
    if path.is_file() and stamp.is_file() and json.loads(stamp.read_text("utf-8")) == made_by:
        facts: dict[str, list[Fact]] = {d.doc_id: [] for d in docs}
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                fact = Fact.from_row(json.loads(line))
                facts.setdefault(fact.doc, []).append(fact)
        return facts
    started = time.perf_counter()
    names = NameIndex(docs)
    facts = extract_all(docs, names)
    rejected: Counter[str] = Counter()
    if teacher is not None and config.model_fact_docs:
        named = Counter(d for doc in docs for d in names.mentioned(doc.text, exclude=doc.doc_id))
        chosen = sorted(docs, key=lambda d: (-named[d.doc_id], d.doc_id))[:config.model_fact_docs]
        read, rejected = await model_facts(teacher, chosen, names,
                                           concurrency=config.concurrency)
        for doc_id, found in read.items():
            have = {(f.kind, f.value, f.target) for f in facts[doc_id]}
            facts[doc_id] += [f for f in found if (f.kind, f.value, f.target) not in have]
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, "".join(json.dumps(f.to_row(), ensure_ascii=False) + "\n"
                                    for found in facts.values() for f in found))
    write_json(stamp, made_by)
    report = facts_report(facts, time.perf_counter() - started)
    report["model_rejected"] = dict(rejected.most_common())
    write_json(build.reports / "facts.json", report)
    return facts


def facts_report(facts: dict[str, list[Fact]], seconds: float) -> dict[str, Any]:
    """Facts per document by kind: totals, means and the share of documents with any."""
    docs = max(len(facts), 1)
    kinds = sorted({f.kind for found in facts.values() for f in found})
    return {
        "documents": len(facts),
        "facts": sum(len(v) for v in facts.values()),
        "by_kind": {k: {"facts": sum(f.kind == k for v in facts.values() for f in v),
                        "per_document": round(sum(f.kind == k for v in facts.values()
                                                  for f in v) / docs, 3),
                        "documents_with_any": round(sum(any(f.kind == k for f in v)
                                                        for v in facts.values()) / docs, 4)}
                    for k in kinds},
        "seconds": round(seconds, 3),
    }


async def _run(
    build: BuildDir,
    config: QuestionConfig,
    teacher: ChatModel | None,
    searcher: SearchBackend | None,
    force: bool,
    progress: Progress,
    stop_after_parts: int | None,
    limits: TurnLimits | None,
) -> dict[str, Any]:
    started = time.perf_counter()
    docs = load_corpus(build)
    directory = build.questions
    directory.mkdir(parents=True, exist_ok=True)
    composer = teacher.name if teacher is not None else "scripted"
    run_hash = _run_hash(config, composer, _corpus_key(build, docs), limits)
    _check_run(directory, run_hash, force)
    write_json(directory / RUN_FILE, {"hash": run_hash, "composer": composer, "seed": config.seed})
    done = done_indexes(directory)
    earlier: list[Question] = []
    seen: set[str] = set()
    dups = NearDuplicates(config.near_duplicate)
    accepted = 0
    written = 0
    shortfalls: list[str] = []
    index = 0
    opened = False
    stopped = False
    try:
        if teacher is not None:
            opened = True
            enter = getattr(teacher, "__aenter__", None)
            if enter is not None:
                await enter()
        graph = CorpusGraph(docs, page_chars=config.page_chars,
                            facts=await load_facts(build, docs, _corpus_key(build, docs), config,
                                                   teacher))
        rounds = config.rounds()
        for rung, (cfg, wanted) in enumerate(rounds):  # each ladder rung, then the mix
            mix = rung == len(rounds) - 1
            if limits is not None and mix:
                cfg = limits.mix(cfg)
            got_round = 0
            exhausted = False
            while got_round < wanted and not exhausted:
                target = min(cfg.part_size, wanted - got_round)
                if index in done:
                    rows = _read_part(directory, index)
                    meta = _read_meta(directory, index)
                    if int(meta.get("rung", 0)) != rung:
                        raise HopforgeError(
                            f"{directory} part {index} was written for another rung of the ladder: "
                            "rerun with the earlier settings, or pass --force to start over")
                    target = int(meta.get("target", target))
                else:
                    if stop_after_parts is not None and written >= stop_after_parts:
                        stopped = True
                        break
                    if searcher is None:
                        searcher = open_searcher(build, docs)
                    made = await generate_questions(
                        docs, searcher, config=cfg, rng=part_rng(config.seed, index), n=target,
                        teacher=teacher, accepted_so_far=[q for q in earlier if not q.rejected],
                        seen_qids=seen, graph=graph, near_duplicates=dups,
                        max_gap=limits.max_gap if limits is not None and mix else 0,
                    )
                    rows = [q.to_row() for q in made]
                    atomic_write_text(_meta(directory, index),
                                      json.dumps({"target": target, "rung": rung}) + "\n")
                    write_part(directory, index, rows)
                    written += 1
                part = [Question.from_row(r) for r in rows]
                got = sum(not q.rejected for q in part)
                earlier.extend(part)
                seen.update(q.qid for q in part)
                if index in done:
                    for q in part:
                        if not q.rejected:
                            dups.add(q.qid, q.question)
                accepted += got
                got_round += got
                exhausted = got < target
                index += 1
                if progress is not None:
                    progress(min(accepted, config.total), config.total)
            if stopped:
                break
            if exhausted:
                bounds = f"min_calls {cfg.min_calls}-{cfg.max_calls or 'any'}"
                shortfalls.append(f"{got_round} of {wanted} ({bounds})")
    finally:
        if opened:
            close = getattr(teacher, "aclose", None)
            if close is not None:
                await close()
    if shortfalls:
        log.warning("questions short of the target: %s; the attempts (attempts_per_question=%d "
                    "per question) ran out; raise it or widen --kinds, --hops or --min-calls",
                    "; ".join(shortfalls), config.attempts_per_question)
    rows = list(read_parts(directory))
    report = question_report(rows)
    report["families_missing"] = families_missing(config.kinds, rows)
    report["run"] = {
        "seconds": round(time.perf_counter() - started, 3),
        "composer": composer,
        "wanted": config.total,
        "parts_written": written,
        "parts_already_done": len(done),
        "exhausted": bool(shortfalls),
        "shortfalls": shortfalls,
    }
    write_json(build.reports / "questions.json", report)
    return report


def families_missing(kinds: Iterable[str], rows: Iterable[dict[str, Any]]) -> list[str]:
    """One line per family asked for that has no accepted question: what it drafted, why those
    were rejected, and what it needs of a corpus."""

    drafted: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for r in rows:
        drafted[r["kind"]] += 1
        accepted[r["kind"]] += not r.get("rejected")
        for reason in split_reasons(r.get("rejected") or ""):
            reasons.setdefault(r["kind"], Counter())[reason.split("(", 1)[0]] += 1
    out = []
    for kind in kinds:
        if accepted[kind]:
            continue
        why = ", ".join(f"{k} {n}" for k, n in reasons.get(kind, Counter()).most_common(3))
        made = f"{drafted[kind]} drafted, all rejected ({why})" if drafted[kind] else "no draft"
        out.append(f"{kind}: none made ({made}); it needs {family(kind).needs}")
    return out


def _read_part(directory: Path, index: int) -> list[dict[str, Any]]:
    path = directory / f"part-{index:05d}.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def _read_meta(directory: Path, index: int) -> dict[str, Any]:
    path = _meta(directory, index)
    if not path.is_file():
        return {}
    meta: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return meta


CALL_BUCKETS = ((9, "<10"), (29, "10-29"), (49, "30-49"), (99, "50-99"), (299, "100-299"),
                (599, "300-599"))


def calls_bucket(calls: int) -> str:
    """The bucket of a task's min_calls ("<10", "10-29", ..., "600+")."""
    for upper, name in CALL_BUCKETS:
        if calls <= upper:
            return name
    return "600+"


def rank_bucket(rank: int | None) -> str:
    """The shortcut-rank bucket of a rank ("1", "4-5", ..., "none" when not found)."""
    if rank is None:
        return "none"
    for upper, name in RANK_BUCKETS:
        if rank <= upper:
            return name
    return ">50"


def question_report(rows: Iterable[dict[str, Any]], *, bleu_sample: int = 200) -> dict[str, Any]:
    """Acceptance, rejection reasons, hops, shortcut ranks and diversity of question rows."""
    questions = [Question.from_row(r) for r in rows]
    ok = [q for q in questions if not q.rejected]
    reasons: Counter[str] = Counter()
    for q in questions:
        for reason in split_reasons(q.rejected):
            reasons[reason.split("(", 1)[0]] += 1
    by_kind: dict[str, dict[str, int]] = {}
    for q in questions:
        entry = by_kind.setdefault(q.kind, {"attempted": 0, "accepted": 0})
        entry["attempted"] += 1
        entry["accepted"] += not q.rejected
    texts = [q.question for q in ok]
    return {
        "attempted": len(questions),
        "accepted": len(ok),
        "rejected": len(questions) - len(ok),
        "acceptance_rate": round(len(ok) / len(questions), 4) if questions else 0.0,
        "rejection_reasons": dict(reasons.most_common()),
        "by_kind": by_kind,
        "hops_accepted": _counts(q.n_hops for q in ok),
        "hops_attempted": _counts(q.n_hops for q in questions),
        "min_calls_accepted": _counts(calls_bucket(q.min_calls) for q in ok),
        "evidence_docs_accepted": _counts(len(q.evidence) for q in ok),
        "shortcut_rank_all": _counts(rank_bucket(q.checks.shortcut_rank) for q in questions
                                     if q.question),
        "shortcut_rank_accepted": _counts(rank_bucket(q.checks.shortcut_rank) for q in ok),
        "diversity_accepted": {
            "distinct_1": round(distinct_n(texts, 1), 4),
            "distinct_2": round(distinct_n(texts, 2), 4),
            "distinct_3": round(distinct_n(texts, 3), 4),
            "self_bleu_4": round(self_bleu(texts, sample=bleu_sample), 4) if len(texts) > 1 else 0.0,
            "mean_words": round(sum(len(t.split()) for t in texts) / len(texts), 2) if texts else 0,
        },
        "composers": dict(Counter(q.composer for q in questions)),
    }


def _counts(values: Iterable[Any]) -> dict[str, int]:
    counts = Counter(str(v) for v in values)
    return dict(sorted(counts.items(), key=lambda kv: (len(kv[0]), kv[0])))
