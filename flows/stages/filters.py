"""Build-directory runners of the score and filter stages.

`score_build` reads BUILD/trajectories and BUILD/questions and writes BUILD/scores/part-*.jsonl,
BUILD/pairs/part-*.jsonl and BUILD/reports/scores.{json,png}. `filter_build` also reads the
scores and writes BUILD/filtered/part-*.jsonl (one Decision per trajectory) and
BUILD/reports/filter.{json,png}. Each stage records a fingerprint of its inputs and config in
its manifest; a rerun with the same inputs is skipped, anything else is recomputed from scratch
(both stages are deterministic). Judge verdicts are cached in BUILD/scores/judge-cache.jsonl as
they arrive, so an interrupted judged run does not ask the judge twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hopforge.corpus import parts
from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.names import NameIndex
from hopforge.corpus.records import Document
from hopforge.corpus.store import corpus_fingerprint, read_documents
from hopforge.filters.combine import ScoreResult, score_all
from hopforge.filters.dedup import Embedder
from hopforge.filters.judge import JudgeConfig, judge_all
from hopforge.filters.pairwise import Comparison
from hopforge.filters.pointwise import ScoreConfig
from hopforge.filters.records import Score
from hopforge.filters.report import filter_report, score_report
from hopforge.filters.select import FilterConfig, filter_trajectories
from hopforge.synth.records import Question, Trajectory
from hopforge.synth.reward import NONE, normalize_answer, says_not_found
from hopforge.synth.teacher.chat import ChatModel
from hopforge.synth.teacher.recording import ENV_RECORD, Recorder
from hopforge.synth.teacher.wire import api_key_from
from hopforge.synth.trajectories.fairness import choices

log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
JUDGE_CACHE = "judge-cache.jsonl"
JUDGE_KEY_ENV = "HOPFORGE_JUDGE_API_KEY"  # before the teacher's key variables


def _build(build: BuildDir | str | Path) -> BuildDir:
    return build if isinstance(build, BuildDir) else BuildDir.at(build)


@dataclass(frozen=True, slots=True)
class PartFiles:
    """The finished parts of some stage folders, each read from disk once: what the stage's
    fingerprint hashes and what its records are parsed from."""

    files: dict[Path, list[tuple[str, bytes]]]

    @classmethod
    def read(cls, directories: Sequence[Path]) -> PartFiles:
        return cls({d: [(p.name, p.read_bytes()) for p in parts.done_parts(d)]
                    for d in directories})

    def rows(self, directory: Path) -> Iterator[dict[str, Any]]:
        """The rows of `directory`'s parts, in part order (as `parts.read_parts` gives them)."""
        for _, data in self.files[directory]:
            for line in data.decode("utf-8").split("\n"):  # JSON lines never hold a raw \n
                if line.strip():
                    yield json.loads(line)


def load_questions(build: BuildDir, inputs: PartFiles | None = None) -> dict[str, Question]:
    """Every question of the build by qid (accepted and rejected)."""
    rows = inputs.rows(build.questions) if inputs else parts.read_parts(build.questions)
    return {q.qid: q for q in map(Question.from_row, rows)}


def load_trajectories(build: BuildDir, inputs: PartFiles | None = None) -> list[Trajectory]:
    """Every trajectory of the build, in part order; refuses a build without any."""
    rows = inputs.rows(build.trajectories) if inputs else parts.read_parts(build.trajectories)
    trajs = [Trajectory.from_row(r) for r in rows]
    if not trajs:
        questions = load_questions(build) if build.questions.is_dir() else {}
        if questions and all(q.rejected for q in questions.values()):
            raise HopforgeError(
                f"no trajectories: the question stage accepted none of its {len(questions)} "
                f"drafts (reasons and the families it could not make: "
                f"{build.reports / 'questions.json'}); widen [questions] kinds or "
                "min_calls, raise attempts_per_question, or give a larger corpus")
        raise HopforgeError(
            f"no finished trajectory parts in {build.trajectories}; run "
            f"`hopforge trajectories {build.root}` first")
    return trajs


def load_scores(build: BuildDir, inputs: PartFiles | None = None) -> dict[str, Score]:
    """Scores by tid; refuses a build that was not scored."""
    rows = inputs.rows(build.scores) if inputs else parts.read_parts(build.scores)
    scores = {s.tid: s for s in map(Score.from_row, rows)}
    if not scores and parts.done_parts(build.scores):
        raise HopforgeError(
            f"the scores in {build.scores} are empty: no trajectory's question was found in "
            f"{build.questions}; check that the questions and trajectories belong together")
    if not scores:
        raise HopforgeError(f"no scores in {build.scores}; run `hopforge score {build.root}` first")
    return scores


def _fingerprint(inputs: PartFiles, extra: Any) -> str:
    h = hashlib.sha256(json.dumps(extra, sort_keys=True, default=str).encode())
    for d, files in inputs.files.items():
        for name, data in files:
            h.update(f"{d.name}/{name}".encode())
            h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _up_to_date(directories: Sequence[Path], fingerprint: str) -> bool:
    for d in directories:
        m = d / MANIFEST
        if not m.exists() or json.loads(m.read_text()).get("fingerprint") != fingerprint:
            return False
        if len(parts.done_parts(d)) != json.loads(m.read_text()).get("parts"):
            return False
    return True


def _write_parts(directory: Path, rows: Sequence[dict[str, Any]], per_part: int,
                 fingerprint: str) -> int:
    """Replace a stage's parts with `rows` (at least one part), then write its manifest."""
    parts.clear_parts(directory)
    (directory / MANIFEST).unlink(missing_ok=True)
    chunks = [rows[i : i + per_part] for i in range(0, len(rows), per_part)] or [[]]
    for i, chunk in enumerate(chunks):
        parts.write_part(directory, i, chunk)
    parts.write_json(directory / MANIFEST, {"fingerprint": fingerprint, "parts": len(chunks),
                                            "rows": len(rows)})
    return len(chunks)


def _read_report(build: BuildDir, name: str) -> dict[str, Any]:
    p = build.reports / f"{name}.json"
    return dict(json.loads(p.read_text())) if p.exists() else {}


# -- score -----------------------------------------------------------------------------------


def _read_cache(path: Path, model: str) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash
        if row.get("model") == model:
            done[row["key"]] = row["row"]
    return done


def _run_judge(build: BuildDir, questions: dict[str, Question], trajs: Sequence[Trajectory],
               config: ScoreConfig, judge: ChatModel | None
               ) -> tuple[dict[str, float], dict[str, list[Comparison]], str]:
    """Judge every trajectory and pair, caching each verdict in BUILD/scores as it arrives."""
    name = judge.name if judge is not None else f"openai:{config.judge_model}"
    cache = build.scores / JUDGE_CACHE
    cache.parent.mkdir(parents=True, exist_ok=True)
    done = _read_cache(cache, name)
    jconfig = JudgeConfig(concurrency=config.judge_concurrency)
    with open(cache, "a", encoding="utf-8") as fh:
        def record(key: str, row: dict[str, Any]) -> None:
            fh.write(json.dumps({"model": name, "key": key, "row": row}) + "\n")
            fh.flush()

        async def run() -> tuple[dict[str, float], dict[str, list[Comparison]]]:
            if judge is not None:
                return await judge_all(judge, questions, trajs, jconfig, done=done,
                                       on_result=record)
            from hopforge.synth.teacher.openai_client import OpenAIChatModel  # loads httpx

            key = api_key_from(os.environ, first=(JUDGE_KEY_ENV,)) or None
            log_path = os.environ.get(ENV_RECORD)
            async with OpenAIChatModel(config.judge_urls, config.judge_model, api_key=key,
                                       concurrency=config.judge_concurrency,
                                       recorder=Recorder(log_path) if log_path else None) as model:
                return await judge_all(model, questions, trajs, jconfig, done=done,
                                       on_result=record)

        scores, comps = asyncio.run(run())
    return scores, comps, name


def score_build(
    build: BuildDir | str | Path,
    config: ScoreConfig | None = None,
    *,
    judge: ChatModel | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Score every trajectory of a build; returns the score report (also in BUILD/reports)."""
    build = _build(build)
    config = config or ScoreConfig()
    judge_name = judge.name if judge is not None else (
        f"openai:{config.judge_model}" if config.judge_urls else "")
    inputs = PartFiles.read([build.trajectories, build.questions])
    fp = _fingerprint(inputs, {"config": dataclasses.asdict(config), "judge": judge_name})
    if not force and _up_to_date([build.scores, build.pairs], fp):
        log.info("scores are up to date in %s", build.scores)
        return _read_report(build, "scores") | {"up_to_date": True}
    questions = load_questions(build, inputs)
    trajs = load_trajectories(build, inputs)
    judge_scores: dict[str, float] = {}
    judge_comps: dict[str, list[Comparison]] = {}
    if judge is not None or config.judge_urls:
        judge_scores, judge_comps, judge_name = _run_judge(build, questions, trajs, config, judge)
    result: ScoreResult = score_all(
        questions, trajs, config, judge_scores=judge_scores, judge_comparisons=judge_comps,
        judge_source=f"judge:{judge_name}" if judge_name else "")
    _write_parts(build.scores, [s.to_row() for s in result.scores], config.rows_per_part, fp)
    _write_parts(build.pairs, [p.to_row() for p in result.pairs], config.rows_per_part, fp)
    report = score_report(result.scores, result.pairs, result.stats)
    parts.write_json(build.reports / "scores.json", report)
    from hopforge.filters.plots import score_plots

    score_plots(report, build.reports)
    return report


# -- filter ----------------------------------------------------------------------------------


def read_reference(path: Path) -> list[str]:
    """Texts of a reference file: .txt (one text per paragraph), .jsonl or .json (objects with
    "text", optionally "title"; or plain strings; or {title: [sentences]})."""
    if not path.is_file():
        raise HopforgeError(f"reference file {path} does not exist; pass a .txt, .jsonl or .json "
                            "file of human-written text with --reference")
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".jsonl":
        items: Iterable[Any] = (json.loads(line) for line in raw.splitlines() if line.strip())
    elif path.suffix == ".json":
        data = json.loads(raw)
        items = ({"text": " ".join(v) if isinstance(v, list) else str(v)}
                 for v in data.values()) if isinstance(data, dict) else data
    else:
        return [p for p in raw.split("\n\n") if p.strip()]
    texts = []
    for it in items:
        if isinstance(it, str):
            texts.append(it)
        elif isinstance(it, dict) and isinstance(it.get("text"), str | list):
            t = it["text"]
            texts.append(" ".join(t) if isinstance(t, list) else t)
    if not texts:
        raise HopforgeError(f"reference file {path} holds no texts; give objects with a \"text\" "
                            "field, strings, or plain text")
    return texts


def corpus_documents(build: BuildDir) -> list[Document]:
    """The build's documents, read once for the filter (none when it has no readable corpus)."""
    if not build.corpus.is_dir():
        return []
    try:
        return read_documents(build)
    except HopforgeError:
        return []


def reference_texts(reference: Path | None, trajs: Sequence[Trajectory],
                    docs: Sequence[Document]) -> tuple[list[str], str]:
    """The reference text and where it came from: a file, the corpus, or the tool results."""
    if reference is not None:
        return read_reference(reference), f"file:{reference}"
    if docs:
        return [f"{d.title}\n{d.text}" for d in docs], "corpus"
    texts = [t.result for tr in trajs for t in tr.turns if t.result]
    return texts, "tool-results"


def _corpus_fingerprint(build: BuildDir, reference: Path | None) -> str:
    if reference is not None or not build.corpus.is_dir():
        return ""
    try:
        return corpus_fingerprint(build)
    except HopforgeError:
        return ""


def _index_model(build: BuildDir) -> str:
    manifest = build.index / "manifest.json"
    if not manifest.is_file():
        return ""
    return json.dumps(json.loads(manifest.read_text()).get("dense"), sort_keys=True)


def default_embedder(build: BuildDir) -> Embedder | None:
    """The embedding model of the build's dense index, or None when it has no dense index."""
    manifest = build.index / "manifest.json"
    if not manifest.is_file():
        return None
    dense = json.loads(manifest.read_text()).get("dense")
    if not dense:
        return None
    from hopforge.corpus.dense import DEFAULT_MODEL, SentenceTransformerEmbedder

    model = str(dense.get("model") or "")
    return SentenceTransformerEmbedder("" if model == DEFAULT_MODEL else model)


def unsettled_answers(docs: Sequence[Document], trajs: Sequence[Trajectory],
                      questions: dict[str, Question]) -> dict[str, str]:
    """tid -> why, for runs that answered "not found" (or "none") before ruling out every
    candidate their pages showed (`fairness.choices`), or "not found" on a list question
    (whose finding is "none"): a give-up, not a finding, so never a trained answer."""
    said = [t for t in trajs if says_not_found(t.final_answer)]
    if not said or not docs:
        return {}
    names = NameIndex(docs)
    out = {}
    for t in said:
        q = questions.get(t.qid)
        if q and q.spec and q.spec.operation == "list" and (  # a list's finding is "none":
                normalize_answer(t.final_answer) != NONE):  # any other "not found" gave up
            out[t.tid] = "not found on a list: a give-up"  # on a page or a member
            continue
        skipped = [c for c in choices(t, q.spec, names) if c.skipped] if q and q.spec else []
        if skipped:
            out[t.tid] = (f"not found with {sum(len(c.skipped) for c in skipped)} "
                          "candidate(s) never checked")
    return out


def filter_build(
    build: BuildDir | str | Path,
    config: FilterConfig | None = None,
    *,
    reference: Path | None = None,
    embedder: Embedder | None = None,
    force: bool = False,
) -> dict[str, Any]:
    """Filter a scored build; returns the filter report (also in BUILD/reports)."""
    build = _build(build)
    config = config or FilterConfig()
    ref_hash = hashlib.sha256(reference.read_bytes()).hexdigest() if reference and \
        reference.is_file() else ""
    extra = {"config": dataclasses.asdict(config), "reference": str(reference or ""),
             "reference_sha": ref_hash, "corpus": _corpus_fingerprint(build, reference),
             "embedder": getattr(embedder, "name", "index" if embedder is None else
                                 type(embedder).__name__),
             "index": _index_model(build) if embedder is None else ""}
    inputs = PartFiles.read([build.trajectories, build.questions, build.scores])
    fp = _fingerprint(inputs, extra)
    if not force and _up_to_date([build.filtered], fp):
        log.info("filter decisions are up to date in %s", build.filtered)
        return _read_report(build, "filter") | {"up_to_date": True}
    questions = load_questions(build, inputs)
    trajs = load_trajectories(build, inputs)
    scores = load_scores(build, inputs)
    wanted = reference is None or any(says_not_found(t.final_answer) for t in trajs)
    docs = corpus_documents(build) if wanted else []  # the style reference, the "not found" check
    texts, source = reference_texts(reference, trajs, docs)
    if embedder is None and config.dedup_questions > 0:
        embedder = default_embedder(build)
    if config.dedup_questions <= 0:
        qdedup = "off (dedup_questions = 0)"
    elif embedder is None:
        qdedup = "off (the build has no dense index to take an embedding model from)"
        log.warning("near-duplicate questions not checked: %s", qdedup[5:-1])
    else:
        qdedup = f"embedder {getattr(embedder, 'name', type(embedder).__name__)}"
    result = filter_trajectories(trajs, questions, scores, texts, config, embedder=embedder,
                                 unsettled=unsettled_answers(docs, trajs, questions))
    _write_parts(build.filtered, [d.to_row() for d in result.decisions], config.rows_per_part, fp)
    report = filter_report(trajs, scores, result, reference=source, question_dedup=qdedup,
                           questions=questions, style=config.style)
    parts.write_json(build.reports / "filter.json", report)
    from hopforge.filters.plots import filter_plots

    filter_plots(report, build.reports)
    return report
