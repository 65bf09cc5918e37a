"""The question stage: specs drawn from the corpus, rendered, checked; rejects keep a reason.

`generate_questions` is a plain coroutine over records: documents and a searcher in, accepted
and rejected `Question`s out, deterministic for its `rng` (and the teacher's replies). A draft
that one search finds is blurred (another clue for a step) and checked again before it is
rejected (a model composer words the blurred spec again). The build-directory runner that
writes parts is `hopforge.flows.stages.questions`.
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace

from hopforge.corpus.index import IndexConfig
from hopforge.corpus.records import Document, Hit
from hopforge.corpus.search import Searcher
from hopforge.synth.concurrency import bounded_map
from hopforge.synth.questions import checks, scripted
from hopforge.synth.questions.config import QuestionConfig
from hopforge.synth.questions.families import Draft, Families, draw
from hopforge.synth.questions.graph import CorpusGraph
from hopforge.synth.questions.model import (
    ModelComposer,
    QuestionParseError,
    ReadingParseError,
    misread,
)
from hopforge.synth.records import Checks, Question, Spec, Step
from hopforge.synth.teacher.chat import ChatModel, ModelResponseError, ModelUnavailable

log = logging.getLogger(__name__)
MAX_MISSES = 500  # a kind whose last this many draws all failed gives way to the others
REACH_K = 20  # a title read in a text must be found by searching it (k up to 20)
_TOP_COMMA = re.compile(r",(?![^()]*\))")


def split_reasons(rejected: str) -> list[str]:
    """The reasons of a `rejected` field (commas inside a reason's parentheses kept)."""
    return [r for r in _TOP_COMMA.split(rejected) if r]


def to_question(draft: Draft, text: str, composer: str) -> Question:
    """The question record for `draft` with `text` (checks not run yet)."""
    return Question(qid=draft.qid, question=text, answer=draft.answer,
                    answer_aliases=draft.answer_aliases, kind=draft.kind,  # type: ignore[arg-type]
                    hops=draft.hops, evidence=draft.evidence, answer_doc=draft.answer_doc,
                    spec=draft.spec, min_calls=draft.min_calls, quiet_calls=draft.quiet_calls,
                    composer=composer, seed=draft.seed)


async def generate_questions(
    docs: Sequence[Document],
    searcher: checks.SearchBackend,
    *,
    config: QuestionConfig,
    rng: random.Random,
    n: int,
    teacher: ChatModel | None = None,
    accepted_so_far: Iterable[Question] = (),
    seen_qids: Iterable[str] = (),
    graph: CorpusGraph | None = None,
    near_duplicates: checks.NearDuplicates | None = None,
    max_gap: int = 0,
) -> list[Question]:
    """Questions in attempt order, up to and including the `n`-th accepted one.

    Drafts whose qid is in `seen_qids` (or of `accepted_so_far`) are not tried again; accepted
    questions must not nearly repeat earlier ones. At most `n * config.attempts_per_question`
    drafts are tried, so fewer than `n` come back when the attempts run out.

    Mix: within a family a document is the answer (or a compared side) of one question only,
    so no two questions ask about the same document the same way; at most
    `config.max_per_start` accepted questions start at one document, and
    unanswerable ones stop at their share of `n`, or of the accepted ones when the attempts
    run out first (a later one is rejected as `over_share`);
    `max_gap` (from the trajectory settings' no-progress window) drops tasks whose plan would
    go that many calls without reaching a gold document.
    """
    graph = graph or CorpusGraph(docs, page_chars=config.page_chars)
    families = Families(graph, rng, min_hops=config.min_hops, max_hops=config.max_hops,
                        min_clues=config.min_clues, max_clues=config.max_clues,
                        year_answer_rate=config.year_answer_rate, min_calls=config.min_calls,
                        max_calls=config.max_calls, min_items=config.min_items,
                        min_df=corpus_min_df(config.min_df, len(graph.order)), max_gap=max_gap,
                        probe=_probe(graph, config.shortcut_rank))
    earlier = list(accepted_so_far)
    seen = {*seen_qids, *(q.qid for q in earlier)}
    dups = near_duplicates
    if dups is None:
        dups = checks.NearDuplicates(config.near_duplicate)
        dups.add_all(earlier)
    stage = _Stage(graph, searcher, config, teacher, rng)
    have = Counter(q.kind for q in earlier)
    kept = [q for q in earlier if not q.rejected]
    per_start = Counter(q.spec.start for q in kept if q.spec)
    gold: set[tuple[str, str]] = {g for q in kept if q.spec
                                  for g in _gold(q.kind, q.spec, q.answer_doc)}
    unanswerable_cap = _unanswerable_cap(config, n + len(kept))
    unanswerable = sum(q.kind == "unanswerable" for q in kept)
    out: list[Question] = []
    accepted, tried, budget = 0, 0, n * config.attempts_per_question
    misses: Counter[str] = Counter()
    drawn: Counter[str] = Counter()
    while accepted < n and tried < budget:
        wave: list[Draft] = []
        want = min(budget - tried, max(2 * (n - accepted), 8))
        draws = 0  # enough for each kind to fail MAX_MISSES times before the wave gives up
        while len(wave) < want and draws < 30 * want + MAX_MISSES * len(config.kinds):
            draws += 1
            full = {"unanswerable"} if have["unanswerable"] >= unanswerable_cap else set()
            kind = _next_kind(config, have, misses, drawn, n, full)
            if kind is None:
                break
            draft = draw(families, kind)
            if (draft is None or draft.qid in seen
                    or per_start[draft.spec.start] >= config.max_per_start
                    or gold & _gold(draft.kind, draft.spec, draft.answer_doc)):
                misses[kind] += 1
                continue
            gold |= _gold(draft.kind, draft.spec, draft.answer_doc)  # planned; freed if rejected
            misses[kind] = 0
            drawn[kind] += 1
            seen.add(draft.qid)
            have[kind] += 1  # planned; corrected below for the rejected
            wave.append(draft)
        if not wave:
            log.info("no new drafts after %d attempts", tried)
            break
        tried += len(wave)
        for q in await stage.run(wave):
            if accepted >= n:
                break
            if not q.rejected:
                dup = dups.find(q.question)
                start = q.spec.start if q.spec else ""
                if dup:
                    q = replace(q, checks=replace(q.checks, near_duplicate_of=dup),
                                rejected="near_duplicate")
                elif per_start[start] >= config.max_per_start:
                    q = replace(q, rejected=f"over_share(start {start})")
                elif q.kind == "unanswerable" and unanswerable >= unanswerable_cap:
                    q = replace(q, rejected="over_share(unanswerable)")
                else:
                    dups.add(q.qid, q.question)
                    accepted += 1
                    per_start[start] += 1
                    unanswerable += q.kind == "unanswerable"
            if q.rejected:
                have[q.kind] -= 1
                if q.spec:
                    gold -= _gold(q.kind, q.spec, q.answer_doc)
            out.append(q)
    # short of `n` (the attempts ran out), the unanswerable ones keep their share of what was
    # accepted, not of what was wanted: the latest beyond it are rejected
    answerable = accepted + len(kept) - unanswerable
    keep = unanswerable
    while keep and keep > _unanswerable_cap(config, answerable + keep):
        keep -= 1
    over = unanswerable - keep
    for i in range(len(out) - 1, -1, -1):
        if over <= 0:
            break
        if out[i].kind == "unanswerable" and not out[i].rejected:
            out[i] = replace(out[i], rejected="over_share(unanswerable)")
            over -= 1
    return out


def _gold(kind: str, spec: Spec, answer_doc: str) -> set[tuple[str, str]]:
    """(kind, what) a question is about: its answer document, compared sides, and a set's
    condition (three changelogs counting their mentions of "Code of Conduct" repeat one
    question)."""
    docs = {answer_doc, *(s.doc for s in spec.steps if s.relation == "compare")}
    out = {(kind, d) for d in docs if d}
    if spec.family == "aggregation":  # a set once per start, a condition once per build
        out.add((kind, f"start:{spec.start}"))
        if spec.condition is not None:
            out.add((kind, f"condition:{spec.condition.shown}"))
    return out


def corpus_min_df(min_df: int, documents: int) -> int:
    """The document-frequency floor of a clue phrase for a corpus of this size: the setting,
    but never more than 1% of the documents (and at least 2), so that a folder of twenty notes
    still gets phrase clues."""
    return max(1 if min_df < 2 else 2, min(min_df, documents // 100))


def _unanswerable_cap(config: QuestionConfig, n: int) -> int:
    """How many unanswerable questions `n` accepted ones may hold: their share, rounded."""
    if "unanswerable" not in config.kinds:
        return 0
    if config.kinds == ("unanswerable",):
        return n
    return round(config.unanswerable_share * n)


def _next_kind(config: QuestionConfig, have: Counter[str], misses: Counter[str],
               drawn: Counter[str], n: int, full: Collection[str] = ()) -> str | None:
    """The kind furthest below its share (unanswerable: `unanswerable_share`, the rest alike;
    of kinds as far below, the one with the fewest failed draws since its last draft, so a kind
    that cannot make this round's tasks does not hold the draws that others would fill, as on
    a ladder rung only long aggregations reach), skipping kinds whose last MAX_MISSES draws all
    failed and kinds already drawn four times as often as their share of `n` (a kind this corpus
    seldom accepts gives way to the others), and kinds in `full` (their share is planned
    already)."""
    answerable = [k for k in config.kinds if k != "unanswerable"]

    def share(kind: str) -> float:
        if kind == "unanswerable":
            return config.unanswerable_share if answerable else 1.0
        rest = 1.0 - (config.unanswerable_share if "unanswerable" in config.kinds else 0.0)
        return rest / len(answerable)

    kinds = [k for k in config.kinds if k not in full
             and misses[k] < MAX_MISSES and drawn[k] < max(8.0, 4 * share(k) * n)]
    if not kinds:
        kinds = [k for k in config.kinds if misses[k] < MAX_MISSES and k not in full]
    if not kinds:
        return None
    total = sum(have.values()) + 1
    return max(kinds, key=lambda k: (share(k) * total - have[k], -misses[k],
                                     -config.kinds.index(k)))


def _probe(graph: CorpusGraph, k: int) -> Callable[[str], frozenset[str]] | None:
    """The doc_ids one plain BM25 search lists first, as the shortcut check searches (None
    when that check is off): clues are chosen so their own words do not find their document.
    Each query is searched once per graph, for every part and rung."""
    if not k:
        return None
    seen: dict[str, frozenset[str]] = graph.memo.setdefault(f"probe:{k}", {})

    def probe(query: str) -> frozenset[str]:
        if query not in seen:
            (hits,) = plain_searcher(graph).search_batch([query], k=k, mode="bm25")
            seen[query] = frozenset(h.doc_id for h in hits)
        return seen[query]
    return probe


def plain_searcher(graph: CorpusGraph) -> checks.SearchBackend:
    """A second view for the no-single-search check: BM25 over whole documents, plain tokens
    (no stopwords, no stems), so a shortcut that one tokenization hides the other shows."""
    if "plain_searcher" not in graph.memo:

        config = IndexConfig(passage_words=8192, passage_overlap=0, stopwords=False,
                             stem=False, dense=False)
        graph.memo["plain_searcher"] = Searcher.from_documents(
            list(graph.docs.values()), dense=False, config=config)
    found: checks.SearchBackend = graph.memo["plain_searcher"]
    return found


class _Stage:
    """Render and check one wave of drafts."""

    def __init__(self, graph: CorpusGraph, searcher: checks.SearchBackend,
                 config: QuestionConfig, teacher: ChatModel | None, rng: random.Random) -> None:
        self.graph, self.searcher, self.config, self.rng = graph, searcher, config, rng
        self.plain = plain_searcher(graph) if config.shortcut_rank else None
        self.model = (ModelComposer(teacher, graph, temperature=config.temperature,
                                    max_tokens=config.max_tokens) if teacher else None)
        self.composer = self.model.name if self.model else scripted.NAME

    async def run(self, drafts: list[Draft]) -> list[Question]:
        texts = await bounded_map(self._compose, drafts, limit=self.config.concurrency)
        questions = [self._record(d, t) for d, t in zip(drafts, texts, strict=True)]
        done: dict[str, Question] = {}
        pending = list(zip(drafts, questions, strict=True))
        for round_ in range(self.config.blur_rounds + 1):
            checked = self._check([q for _, q in pending])
            again: list[tuple[Draft, Question]] = []
            for (draft, _), q in zip(pending, checked, strict=True):
                blurred = (self._blur(draft, q) if q.rejected == "shortcut"
                           and round_ < self.config.blur_rounds else None)
                if blurred is None:
                    done[q.qid] = q
                else:
                    again.append(blurred)
            if not again:
                break
            if self.model is not None:  # the model words the blurred spec again
                texts = await bounded_map(self._compose, [d for d, _ in again],
                                          limit=self.config.concurrency)
                again = [(d, self._record(d, t)) for (d, _), t in zip(again, texts, strict=True)]
            pending = again
        result = [done[d.qid] for d in drafts]
        if self.model is not None:
            result = await bounded_map(self._model_checks, result, limit=self.config.concurrency)
        return result

    async def _compose(self, draft: Draft) -> str | Question:
        plain = scripted.render(draft.spec, self.graph, random.Random(draft.seed))
        if self.model is None:
            return plain
        try:
            return await self.model.compose(draft.spec, plain)
        except QuestionParseError as exc:
            return replace(to_question(draft, plain, self.model.name),
                           rejected=f"parse_error({_detail(exc)})", raw=exc.raw)
        except ModelUnavailable:
            raise  # the whole run fails; finished parts stay
        except ModelResponseError as exc:
            return replace(to_question(draft, plain, self.model.name),
                           rejected=f"model_error({_detail(exc)})", raw=str(exc))

    def _record(self, draft: Draft, text: str | Question) -> Question:
        return text if isinstance(text, Question) else to_question(draft, text, self.composer)

    def _blur(self, draft: Draft, q: Question) -> tuple[Draft, Question] | None:
        """The draft with another clue for the step its shortcut search showed, if any."""
        steps = list(draft.spec.steps)
        query = q.checks.shortcut_query.lower()

        def shown(step: Step) -> str:
            return (step.fact.shown if step.fact else step.phrase).lower()

        order = sorted(range(len(steps)), key=lambda i: (not shown(steps[i])
                                                         or shown(steps[i]) not in query, -i))
        for i in order:
            alternatives = draft.alternatives[i] if i < len(draft.alternatives) else ()
            if steps[i].fact and alternatives:
                clue = alternatives[0]
                steps[i] = replace(steps[i], fact=clue,
                                   phrase=clue.value if clue.kind == "phrase" else "")
                rest = list(draft.alternatives)
                rest[i] = alternatives[1:]
                spec = replace(draft.spec, steps=tuple(steps))
                new = replace(draft, spec=spec, alternatives=tuple(rest))
                text = scripted.render(spec, self.graph, random.Random(draft.seed))
                return new, to_question(new, text, self.composer)
        return None

    def _check(self, questions: list[Question]) -> list[Question]:
        todo = [q for q in questions if not q.rejected]
        mode = self.config.search_mode or self.searcher.default_mode
        probes = {q.qid: checks.probe_queries(q.question) for q in todo}
        reach = {q.qid: checks.reachable(self.graph, q.spec) for q in todo if q.spec}
        hits: dict[str, list[Hit]] = {}
        for queries, k in (([s for p in probes.values() for s in p], self.config.shortcut_rank),
                           ([s for r in reach.values() for s, _ in r], REACH_K)):
            queries = list(dict.fromkeys(s for s in queries if s not in hits))
            if queries and k:
                hits.update(zip(queries, self.searcher.search_batch(queries, k=k, mode=mode),
                                strict=True))
        plain: dict[str, list[Hit]] = {}
        if self.plain is not None:
            queries = list(dict.fromkeys(s for p in probes.values() for s in p))
            plain = dict(zip(queries, self.plain.search_batch(
                queries, k=self.config.shortcut_rank, mode="bm25"), strict=True))
        out = []
        for q in questions:
            if q.rejected:
                out.append(q)
                continue
            top = [(s, hits.get(s, [])[: self.config.shortcut_rank]) for s in probes[q.qid]]
            top += [(s, plain.get(s, [])) for s in probes[q.qid]]
            found = all(any(h.doc_id == d for h in hits[s]) for s, d in reach.get(q.qid, ()))
            out.append(check_question(q, self.graph, top if self.config.shortcut_rank else [],
                                      self.config, answerable=found))
        return out

    async def _model_checks(self, q: Question) -> Question:
        if q.rejected or self.model is None:
            return q
        try:
            if self.config.round_trip:
                q = await self._round_trip(q, self.model)
                if q.rejected:
                    return q
            ok = await self.model.answers_with_evidence(q)
            q = replace(q, checks=replace(q.checks, answerable=ok))
            if not ok:
                return replace(q, rejected="not_answerable_with_evidence")
            if self.config.closed_book:
                share = await self.model.probe(q, samples=self.config.probe_samples)
                q = replace(q, checks=replace(q.checks, probe_pass=share, closed_book=share > 0))
                if share > self.config.max_probe_pass:
                    return replace(q, rejected=f"probe_pass({share:.2f})")
        except ModelUnavailable:
            raise
        except ModelResponseError as exc:
            log.warning("model check failed for %s: %s", q.qid, exc)
            return replace(q, rejected=f"model_error({_detail(exc)})")
        return q

    async def _round_trip(self, q: Question, model: ModelComposer) -> Question:
        """`q` read back by the model and compared with its spec; rejected as `misread(...)`."""
        assert q.spec is not None
        try:
            wrong = misread(q.spec, await model.read_back(q.question), self.graph)
        except ReadingParseError as exc:
            log.info("read-back of %s did not parse: %s", q.qid, exc)
            return replace(q, checks=replace(q.checks, misread="unparsable"),
                           rejected="misread(unparsable)", raw=exc.raw)
        q = replace(q, checks=replace(q.checks, misread=wrong))
        return replace(q, rejected=f"misread({_detail(Exception(wrong))})") if wrong else q


def _detail(exc: Exception) -> str:
    return " ".join(str(exc).replace(",", ";").replace("(", "[").replace(")", "]").split())[:200]


def check_question(q: Question, graph: CorpusGraph, results: Sequence[tuple[str, list[Hit]]],
                   config: QuestionConfig, *, answerable: bool = True) -> Question:
    """`q` with its checks filled in and `rejected` set to the reasons when any fails."""
    spec = q.spec
    assert spec is not None
    leaked = checks.leak(q, graph)
    query, rank = checks.shortcut(q, graph, results)
    form = checks.form_problem(q.question, min_words=config.min_words, max_words=config.max_words)
    missing = checks.ungrounded(q, graph)
    result = Checks(
        leakage=bool(leaked), leaked=leaked, shortcut_rank=rank, shortcut_query=query,
        shortcut=rank is not None, answer_type=checks.answer_type_problem(q, graph),
        unique=checks.unique(spec, graph), well_formed=not form,
        placeholder=checks.placeholder(q.question, graph), grounded=not missing,
        answerable=answerable,
    )
    reasons = [name for name, failed in (
        ("leakage", result.leakage),
        ("shortcut", result.shortcut),
        (f"answer_type({result.answer_type})", bool(result.answer_type)),
        ("not_unique", result.unique is False),
        (f"malformed({form})", bool(form)),
        (f"placeholder({result.placeholder})", bool(result.placeholder)),
        (f"ungrounded({_detail(Exception(missing))})", bool(missing)),
        ("not_answerable_with_evidence", not answerable),
    ) if failed]
    return replace(q, checks=result, rejected=",".join(reasons))
