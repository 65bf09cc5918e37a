"""The scripted composer: question text from a plan by rule, with no model.

Each clue becomes one full clause about the document it comes from: a definition written as a
bare phrase ("A person who ...") is stated of its subject ("X is a person who ..."), a sentence
that opens with its subject keeps it, and any other full sentence is framed ("The entry on X
says that ..."). Dictionary boilerplate is dropped first, and a clue that is still a fragment
makes the question fail with `UnreadableClue` rather than be written. Hidden documents are never
named (see `hopforge.synth.masking`), years become decades and large numbers are rounded. Each
kind has several phrasings, chosen by the plan's seed: deterministic, but not one template.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from hopforge.synth.chains import LinkGraph
from hopforge.synth.clauses import (
    balanced,
    clause_problem,
    definition_phrase,
    predicate_phrase,
    strip_boilerplate,
)
from hopforge.synth.definitions import (
    FALLBACK_TYPE,
    description,
    neutral_noun,
    type_noun,
)
from hopforge.synth.facts import blur, event_question
from hopforge.synth.masking import (
    LETTERS,
    SUBJECT,
    Ref,
    article,
    cap,
    kind_fits,
    low,
    mask,
    name_subject,
    possessive,
)
from hopforge.synth.plans import QuestionPlan

COMPOSER = "scripted"
_CLAUSE_END = re.compile(
    r",\s|;\s|\s[—–]\s|\s(?:which|who|whom|where|while|but|and then|although|because)\s|"
    r"\sand\s(?=[a-z]+(?:ed|s)\b)"
)
_STEP_WORDS = (
    ("First", "Next", "Then", "Finally"),
    ("To begin", "From there", "After that", "In the end"),
    ("Step one", "Step two", "Step three", "Last step"),
)
_RELEASE_EVENTS = frozenset({"released", "published", "premiered", "recorded", "launched"})


class UnreadableClue(ValueError):
    """A clue that cannot be stated as a full clause; the question is rejected with `reason`."""

    def __init__(self, reason: str, text: str) -> None:
        super().__init__(f"{reason}: {text!r}")
        self.reason = reason


def trim_clue(sentence: str, mention: str, *, min_words: int = 6, opening: bool = True) -> str:
    """The sentence without boilerplate, cut after the first clause boundary past `mention` that
    leaves a full clause, or a definition where the sentence is `opening` its document or a
    sense (the hop needs no more)."""
    text = strip_boilerplate(sentence)
    found = re.search(rf"(?<![\w-]){re.escape(mention)}(?![\w-])", text, re.IGNORECASE)
    if found is None:
        return text
    for m in _CLAUSE_END.finditer(text, found.end()):
        head = text[: m.start()].rstrip(" ,;")
        last_part = re.split(r",\s|;\s", head)[-1].split(" ", 1)[0].lower()
        if last_part in _SUBORDINATE and "," in head:
            continue  # "In IETF circles, where ... is not a daily reality": no main clause yet
        if len(head.split()) >= min_words and balanced(head) and (
            not clause_problem(head) or opening and definition_phrase(head) is not None
        ):
            return head + "."
    return text


_SUBORDINATE = frozenset(["where", "which", "who", "whom", "whose", "when", "while", "because",
                          "although", "though", "if", "as", "since", "unless", "whereas"])


def _comparison_clauses(event: str, later: bool) -> list[str]:
    """Ways to ask which of two came first (or last) for a dated `event`."""
    when = ["later", "more recently"] if later else ["first", "earlier"]
    order = "after" if later else "before"
    if event == "born":
        return [f"who was born {w}" for w in when] + [
            "who is younger" if later else "who is older",
            f"whose birth came {'later' if later else 'first'}",
            f"who was born {order} the other",
        ]
    if event == "died":
        return [f"who died {w}" for w in when] + [
            f"whose death came {'later' if later else 'first'}",
            "who outlived the other" if later else "who died sooner",
            f"who died {order} the other",
        ]
    if event in _RELEASE_EVENTS:
        out = ["which came out later", "which is newer"] if later else [
            "which came out first", "which is older"]
        return [f"which was {event} {w}" for w in when] + out
    older = ["which is the newer one", "which is more recent"] if later else [
        "which is the older one", "which came first"]
    return [f"which was {event} {w}" for w in when] + [f"which one was {event} {when[0]}", *older]


def _chain_finals(plan: QuestionPlan, last: Ref) -> list[str]:
    """Ways to ask for the end of a chain."""
    if plan.fact is not None:
        clause = event_question(plan.fact.event, last.that)
        return [f"In what year {clause}?", f"In which year {clause}?", f"What year {clause}?",
                f"When {clause} (give the year)?"]
    if last.letter:
        x = last.letter
        if not last.noun:  # no type, and no neutral noun that reads well
            return [f"What is {x}?", f"What is the name of {x}?", f"Identify {x}: what is it?",
                f"Who or what is {x}?", f"What does {x} stand for?"]
        return [f"What is {x}?", f"Which {last.noun} is {x}?", f"What is the name of {x}?",
                f"Identify {x}: what is it?", f"Name {x}: which {last.noun} is it?",
                f"What is {x} called?", f"{x} is which {last.noun}?", f"So what is {x}?"]
    return [
        f"What is the name of {last.that}?",
        f"What is {last.that} called?",
        f"Which {last.kind} is this?",
        f"Can you name {last.that}?",
        f"What {last.kind} is being described?",
        f"Which {last.kind} does this lead to?",
        f"Which {last.kind} fits this description?",
    ]


class ScriptedComposer:
    """Writes questions for plans over one corpus graph."""

    name = COMPOSER

    def __init__(self, graph: LinkGraph) -> None:
        self.graph = graph
        self._kinds: dict[str, str] = {}
        self.dictionary = graph.dictionary
        # the noun for a document of unknown type; outside dictionaries "topic" reads badly in
        # "Which topic is X?", so questions there ask "What is X?" instead
        self.neutral = neutral_noun(self.dictionary) if self.dictionary else ""
        self.page = "entry" if self.dictionary else "article"

    def kind(self, doc_id: str) -> str:
        if doc_id not in self._kinds:
            self._kinds[doc_id] = type_noun(self.graph.docs[doc_id])
        return self._kinds[doc_id]

    def cast(
        self, hidden: Sequence[str], texts: Sequence[str], det: str = "that",
        named: Sequence[str] = (),
    ) -> dict[str, Ref]:
        """References for the hidden documents of one question whose clues are `texts`: by type
        where the type is known, unique in the question, names no document of the question
        (hidden, or `named` like a chain's start) and fits every mention; by a letter
        otherwise."""
        refs: dict[str, Ref] = {}
        letters = iter(LETTERS)
        used: set[str] = set()
        for doc_id in hidden:
            kind = self.kind(doc_id)
            pattern = self.graph.pattern(doc_id)
            known = kind != FALLBACK_TYPE
            clash = any(
                (p := self.graph.pattern(other)) is not None and p.search(kind)
                for other in (*hidden, *named)
            )
            fits = pattern is None or all(kind_fits(t, pattern, kind) for t in texts)
            noun = kind if known else self.neutral
            if not known or clash or not fits or kind in used:
                refs[doc_id] = Ref("", next(letters, "Q"), noun=noun if not clash else self.neutral)
            else:
                refs[doc_id] = Ref(kind, det=det, noun=kind)
                used.add(kind)
        return refs

    def compose(self, plan: QuestionPlan) -> str:
        """The question text for `plan` (deterministic for `plan.seed`); raises `UnreadableClue`
        when a clue cannot be stated as a full clause."""
        rng = random.Random(plan.seed)
        if plan.kind == "chain":
            return self._chain(plan, rng)
        if plan.kind == "comparison":
            return self._comparison(plan, rng)
        return self._intersection(plan, rng)

    # --- one clue ---

    def clause(
        self,
        text: str,
        subject: str,
        subject_ref: str,
        hidden: Sequence[tuple[str, str, Ref]],
        rng: random.Random,
        *,
        this_mode: bool = False,
        opening: bool = False,
    ) -> str:
        """One clue `text` (already trimmed) of `subject`'s document as a full clause about
        `subject_ref`, each hidden (doc_id, first reference, Ref) masked, numbers blurred. A bare
        phrase is read as a definition of the subject only where it is `opening` its document
        or a sense."""
        text = text.replace("?", ".").replace("!", ".").rstrip(" .;:") + "."
        pattern = self.graph.pattern(subject)
        if pattern is not None:
            text = pattern.sub(SUBJECT, text)
        for doc_id, first_ref, ref in hidden:
            later = ref.this if this_mode else ref.that
            hidden_pattern = self.graph.pattern(doc_id)
            if hidden_pattern is not None:
                title = self.graph.docs[doc_id].title
                text = mask(text, hidden_pattern, title, first_ref, later, ref, this_mode=this_mode)
        kind = self.kind(subject) if not re.fullmatch(r"[A-Z]", subject_ref) else ""
        kind = "" if kind == FALLBACK_TYPE else kind
        problem = clause_problem(text)
        lead = text.split(" ", 2)[:2]
        defined = definition_phrase(text) if opening and SUBJECT not in lead else None
        if defined is None and problem == "infinitive" and SUBJECT not in lead:
            defined = definition_phrase(text)  # "To send a message to ..." means it
        if defined is None and problem == "no_subject" and self.dictionary:
            defined = predicate_phrase(text)  # "Used of hardware ..." said of its subject
        if defined is not None:
            verb, phrase = defined
            said = f"{SUBJECT} {verb} {phrase.rstrip('.')}.".replace("  ", " ")
            out = name_subject(said, kind, subject_ref)
        elif problem:
            raise UnreadableClue(problem, text)
        else:
            out = name_subject(text, kind, subject_ref) or self._frame(text, subject_ref, rng)
        return cap(blur(out))

    def _frame(self, text: str, ref: str, rng: random.Random) -> str:
        """A full sentence that does not open with its subject, said of it."""
        page = rng.choice([self.page, self.page, "definition" if self.dictionary else "page"])
        on = rng.choice(["on", "for", "about"])
        said = rng.choice(["says that", "notes that", "states that", "mentions that",
                           "explains that", "adds that"])
        return rng.choice([
            f"About {ref}: {low(text)}",
            f"On {ref}: {low(text)}",
            f"Regarding {ref}, {low(text)}",
            f"As for {ref}, {low(text)}",
            f"In connection with {ref}, {low(text)}",
            f"A note on {ref}: {low(text)}",
            f"The {page} {on} {ref} {said} {low(text)}",
            f"According to the {page} {on} {ref}, {low(text)}",
            f"{possessive(cap(ref))} {page} {said.split()[0]}: {text}",
        ])

    # --- the kinds ---

    def _chain(self, plan: QuestionPlan, rng: random.Random) -> str:
        docs = plan.evidence
        clues = [trim_clue(hop.clue, hop.bridge, opening=self.graph.opens_sense(hop.from_doc, hop.clue))
                 for hop in plan.hops]
        cast = self.cast(docs[1:], clues, det=rng.choice(["that", "that", "this", "the"]),
                         named=docs[:1])
        start = self.graph.docs[docs[0]]
        start_ref = start.title
        pattern = self.graph.pattern(start.doc_id)
        opens = pattern is not None and pattern.match(clues[0].removeprefix("The ")) is not None
        if rng.random() < 0.4 and opens and kind_fits(clues[0], pattern, self.kind(start.doc_id)):
            desc = description(start)
            if desc and len(desc.split()) <= 12 and desc.lower() not in clues[0].lower():
                start_ref = desc  # not when the clue itself says it: "An actor was an actor"
        said: set[str] = set()
        sentences = []
        for i, (hop, clue) in enumerate(zip(plan.hops, clues, strict=True)):
            subject_ref = start_ref if i == 0 else cast[hop.from_doc].that
            hidden = [(hop.to_doc, cast[hop.to_doc].intro, cast[hop.to_doc])]
            hidden += [
                (d, cast[d].that if d in said else cast[d].intro, cast[d])
                for d in docs[1:]
                if d not in (hop.from_doc, hop.to_doc)
            ]
            opening = self.graph.opens_sense(hop.from_doc, hop.clue)
            sentences.append(self.clause(clue, hop.from_doc, subject_ref, hidden, rng,
                                         opening=opening))
            said.update((hop.from_doc, hop.to_doc))
        last = cast[docs[-1]]
        final = rng.choice(_chain_finals(plan, last))
        named = start_ref == start.title
        style = rng.randrange(6)
        if style == 1 and named:
            lead = rng.choice([f"Start from {start.title} and follow the clues.",
                               f"Begin with {start.title}, then follow the links.",
                               f"Take {start.title} as the starting point."])
            return " ".join([lead, *sentences, final])
        if style == 2:
            body = "; ".join(
                s.rstrip(".") if i == 0 else low(s.rstrip(".")) for i, s in enumerate(sentences)
            )
            return f"{body}. {final}"
        if style == 3:
            steps = rng.choice(_STEP_WORDS)
            parts = []
            for i, s in enumerate(sentences):
                word = steps[-1] if i == len(sentences) - 1 and i > 0 else steps[min(i, 2)]
                parts.append(f"{word}, {low(s)}")
            return " ".join([*parts, final])
        if style == 4 and not last.letter and plan.fact is None:
            listed = "; ".join(low(s.rstrip(".")) for s in sentences)
            lead = rng.choice([
                f"Which {last.kind} is reached this way",
                f"What is the {last.kind} reached this way",
                f"Which {last.kind} ends this trail",
            ])
            return f"{lead}: {listed}?"
        if style == 5 and named:
            lead = rng.choice([f"This puzzle starts at {start.title}.",
                               f"The trail begins at {start.title}.",
                               f"Our starting point is {start.title}.",
                               f"It all begins with {start.title}."])
            return " ".join([lead, *sentences, final])
        return " ".join([*sentences, final])

    def _comparison(self, plan: QuestionPlan, rng: random.Random) -> str:
        fa, fb = plan.compared
        both = [fa.doc_id, fb.doc_id]
        descs = [description(self.graph.docs[f.doc_id], avoid_year=f.year) for f in (fa, fb)]
        cast = self.cast(both, descs)
        out = []
        for desc in descs:
            for d in both:
                pattern = self.graph.pattern(d)
                if pattern is not None:
                    desc = mask(desc, pattern, self.graph.docs[d].title, cast[d].intro,
                                cast[d].that, cast[d], this_mode=False)
            out.append(blur(desc))
        a, b = out
        clause = rng.choice(_comparison_clauses(fa.event, plan.later))
        return rng.choice(
            [
                f"{cap(clause)}: {a}, or {b}?",
                f"{cap(clause)}, {a} or {b}?",
                f"Of {a} and {b}, {clause}?",
                f"Between {a} and {b}, {clause}?",
                f"{cap(a)} and {b}: {clause}?",
                f"Here are two: {a}, and {b}. {cap(clause)}?",
                f"{cap(a)} or {b}: {clause}?",
                f"Think of {a} and of {b}. {cap(clause)}?",
            ]
        )

    def _intersection(self, plan: QuestionPlan, rng: random.Random) -> str:
        target = plan.answer_doc
        sources = [h.from_doc for h in plan.hops]
        texts = [trim_clue(hop.clue, hop.bridge, opening=self.graph.opens_sense(hop.from_doc, hop.clue))
                 for hop in plan.hops]
        fact_text = strip_boilerplate(plan.fact.sentence) if plan.fact is not None else ""
        cast = self.cast([*sources, target], [*texts, fact_text])
        goal = cast[target]
        clues = []
        for hop, text in zip(plan.hops, texts, strict=True):
            hidden = [(target, goal.this, goal)]
            hidden += [(d, cast[d].intro, cast[d]) for d in sources if d != hop.from_doc]
            ref = cast[hop.from_doc].intro
            opening = self.graph.opens_sense(hop.from_doc, hop.clue)
            clues.append(self.clause(text, hop.from_doc, ref, hidden, rng, this_mode=True,
                                     opening=opening))
        if plan.fact is not None:
            hidden = [(d, cast[d].intro, cast[d]) for d in sources]
            clues.append(self.clause(fact_text, target, goal.this, hidden, rng, this_mode=True))
        rng.shuffle(clues)
        style = rng.randrange(6)
        what = goal.letter or goal.kind
        if style == 0:
            ask = f"Which {goal.kind} is this?"
            if goal.letter:
                ask = f"Which {goal.noun} is {goal.letter}?" if goal.noun else (
                    f"What is {goal.letter}?")
            return " ".join([*clues, ask])
        if style == 1:
            listed = "; ".join(low(c.rstrip(".")) for c in clues)
            lead = f"What is {goal.letter}, given" if goal.letter else f"Which {what} fits"
            return f"{lead} all of these clues: {listed}?"
        if style == 2:
            intro = rng.choice([f"Let {goal.letter} be the thing these clues describe.",
                                f"The clues below all point to {goal.letter}.",
                                f"Call the answer {goal.letter}; every clue below concerns it."]
                               ) if goal.letter else (
                f"I am thinking of {article(goal.kind)}."
            )
            return " ".join([intro, *clues, "What is its name?"])
        if style == 4 and not goal.letter:
            lead = rng.choice([f"Several clues point to one {goal.kind}.",
                               f"One {goal.kind} fits every clue below."])
            return " ".join([lead, *clues, rng.choice(["Which is it?", "What is it called?"])])
        if style == 5:
            listed = " ".join(f"({i}) {low(c.rstrip('.'))}." for i, c in enumerate(clues, 1))
            ask = f"What single {goal.noun} fits all of these?" if goal.noun else (
                "What fits all of these clues?")
            return f"{listed} {ask}"
        tail = [f"{rng.choice(['Also', 'Moreover', 'In addition'])}, {low(c)}" for c in clues[1:]]
        ask = rng.choice([f"What is the name of {goal.this}?", f"What is {goal.this} called?",
                          f"Can you name {goal.this}?", f"So what is {goal.this}?"])
        return " ".join([clues[0], *tail, ask])
