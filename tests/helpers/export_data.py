"""A small hand-made build for the export tests: every stage's parts, written as the stages do.

Questions run over chains of made-up documents; two questions share one chain, one question is
rejected. Trajectories search, open, find and answer, and some carry an unparsed turn, an invalid
call, a repeated call, a fault or a negatively rewarded turn. Scores, pairs and filter decisions
cover them, with drops and their reasons.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

from hopforge.corpus.layout import BuildDir
from hopforge.corpus.parts import atomic_write_text, write_json, write_part
from hopforge.corpus.tools import default_schemas
from hopforge.filters.records import Decision, PreferencePair, Score
from hopforge.synth.records import Fault, Hop, Question, ToolCall, Trajectory, Turn, Usage
from hopforge.synth.trajectories.loop import system_prompt

NAMES = ("Alder", "Brisk", "Corran", "Dunmore", "Elsby", "Farrow", "Galen", "Hollis", "Ivers")
PLACES = ("Quillon", "Brackwater", "Sallow Reach", "Tenmouth", "Orvin", "Calden", "Fendle")
SYSTEM = system_prompt(default_schemas(), text_calls=False)
FINGERPRINT = "fp-0123456789abcdef"
BUILD_TOML = """[build]
name = "export-test"

[corpus]
sources = ["builtin:jargon"]
license = "cc-by-sa-4.0"

[meta]
config_hash = "cafe0123deadbeef"
"""


def make_question(i: int, rng: random.Random, *, chain: tuple[str, ...] | None = None) -> Question:
    """A question over documents d{i}-0 .. d{i}-n (or over the given chain)."""
    hops = rng.choice((2, 3))
    docs = chain or tuple(f"d{i}-{k}" for k in range(hops + 1))
    people = [f"{rng.choice(NAMES)} {rng.choice(NAMES)}" for _ in docs]
    answer = rng.choice(PLACES)
    return Question(
        qid=f"q{i:03d}",
        question=f"Where was the mentor of the founder of {people[0]} Works number {i} born?",
        answer=answer,
        answer_aliases=(f"{answer} town",),
        kind=rng.choice(("chain", "comparison")),  # type: ignore[arg-type]
        hops=tuple(
            Hop(from_doc=a, to_doc=b, clue=f"{p} met {q}.", bridge=q)
            for a, b, p, q in zip(docs, docs[1:], people, people[1:], strict=False)
        ),
        evidence=docs,
        answer_doc=docs[-1],
        composer="scripted",
        seed=i,
    )


def _call(name: str, index: int, **arguments: object) -> ToolCall:
    return ToolCall(name=name, arguments=dict(arguments), call_id=f"call_{index}")


def make_trajectory(
    q: Question, sample: int, rng: random.Random, *, flaws: bool = False
) -> Trajectory:
    """Search, open and find through the chain, then answer; `flaws` adds bad turns."""
    turns: list[Turn] = []

    def add(call: ToolCall | None, result: str, **kw: object) -> None:
        raw = kw.pop("raw", "") or (f'{{"name": "{call.name}"}}' if call else "")
        turns.append(Turn(index=len(turns), raw=str(raw), call=call, result=result, **kw))  # type: ignore[arg-type]

    for k, doc in enumerate(q.evidence):
        i = len(turns)
        # what the question names first, then the name each opened page's clue gave
        query = q.hops[k - 1].bridge if k else q.question.split(" of ")[-1].split(" Works")[0]
        clue = q.hops[k].clue if k < len(q.hops) else f"{doc} was born in {q.answer}."
        add(
            _call("search", i, query=query, k=5),
            f'Results for "{query}":\n1. [doc_id: {doc}] Page {doc}\n   snippet about {doc}',
            thought=f"Look for document {k}." if sample == 0 else f"Now search for hop {k}.",
        )
        add(
            _call("open", i + 1, doc_id=doc, page=0),
            f"Page {doc} [doc_id: {doc}] page 0 (pages 0-0)\n\nText of {doc}. {clue}\n\n"
            "(end of document)",
            thought=f"Open {doc}.",
            new_evidence=(doc,),
        )
        if flaws and k == 0:
            add(
                None,
                "",
                raw="I think the answer is probably somewhere",
                thought="",
                schema_valid=False,
                args_valid=False,
                error="no tool call in the message",
            )
            add(
                _call("open", len(turns), doc_id=doc, page="one"),
                "Error: invalid arguments for open: page must be an integer.",
                thought="Open again.",
                args_valid=False,
                error="page must be an integer",
            )
            add(
                _call("open", len(turns), doc_id=doc, page=0),
                f"Page {doc} [doc_id: {doc}] page 0 (pages 0-0)\n\nText of {doc}. {clue}\n\n"
                "(end of document)",
                thought="Open once more.",
                repeat_of=1,
            )
            add(
                _call("find", len(turns), doc_id=doc, pattern="born"),
                "",
                thought="Find the birth.",
                fault=Fault(kind="empty", detail="empty result"),
            )
    add(_call("answer", len(turns), text=q.answer), q.answer, thought=f"It is {q.answer}.")
    return Trajectory(
        tid=f"{q.qid}-s{sample}",
        qid=q.qid,
        teacher="scripted" if sample == 0 else "openai:tiny-teacher",
        sample=sample,
        turns=tuple(turns),
        final_answer=q.answer,
        termination="answer",
        usage=Usage(prompt_tokens=100 * len(turns), completion_tokens=20 * len(turns)),
        system_prompt=SYSTEM,
        seed=sample,
    )


def make_score(t: Trajectory, rng: random.Random, *, negative_turn: int | None = None) -> Score:
    rewards = [round(rng.uniform(0.0, 1.0), 3) for _ in t.turns]
    if negative_turn is not None:
        rewards[negative_turn] = -0.5
    combined = round(rng.uniform(-1.0, 1.0), 4)
    return Score(
        tid=t.tid,
        qid=t.qid,
        exact_match=1.0,
        f1=1.0,
        evidence_recall=1.0,
        format=1.0,
        pointwise=round(rng.uniform(0, 1), 4),
        turn_rewards=tuple(rewards),
        combined=combined,
    )


def make_build(
    root: Path, *, questions: int = 12, seed: int = 0, filtered: bool = True
) -> BuildDir:
    """Write a complete small build under `root`; returns it."""
    rng = random.Random(seed)
    build = BuildDir.at(root)
    qs = [make_question(i, rng) for i in range(questions)]
    qs.append(make_question(questions, rng, chain=qs[0].evidence))  # shares q000's chain
    rejected = make_question(questions + 1, rng)
    qs.append(dataclasses.replace(rejected, rejected="leakage"))
    trajs, scores, decisions, pairs = [], [], [], []
    for n, q in enumerate(qs[:-1]):
        pair = []
        for sample in (0, 1):
            t = make_trajectory(q, sample, rng, flaws=(n + sample) % 3 == 0)
            trajs.append(t)
            scores.append(make_score(t, rng, negative_turn=1 if n % 4 == 1 else None))
            dropped = n % 5 == 4 and sample == 1
            decisions.append(
                Decision(
                    tid=t.tid,
                    qid=q.qid,
                    kept=not dropped,
                    weight=0.5 if n % 2 else 1.0,
                    reason="style: templated" if dropped else "",
                )
            )
            pair.append(t)
        pairs.append(
            PreferencePair(qid=q.qid, chosen=pair[0].tid, rejected=pair[1].tid, margin=0.25)
        )
    write_part(build.questions, 0, [q.to_row() for q in qs[:7]])
    write_part(build.questions, 1, [q.to_row() for q in qs[7:]])
    write_part(build.trajectories, 0, [t.to_row() for t in trajs])
    write_part(build.scores, 0, [s.to_row() for s in scores])
    write_part(build.pairs, 0, [p.to_row() for p in pairs])
    if filtered:
        write_part(build.filtered, 0, [d.to_row() for d in decisions])
    write_json(build.index / "manifest.json", {"corpus_fingerprint": FINGERPRINT, "bm25": {}})
    atomic_write_text(build.config, BUILD_TOML)
    write_json(build.reports / "filter.json", {"kept": len(trajs) - 2})
    return build
