"""The scripted composer: question text from a plan by rule, with no model.

Clue sentences are rewritten so that intermediate entities are never named (a name becomes a
reference by type: "a cartographer", then "that cartographer"), years become decades and large
numbers are rounded. Each kind has several phrasings, chosen by the plan's seed, so the output
is deterministic but not one template.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hopforge.synth.chains import LinkGraph
from hopforge.synth.facts import (
    FALLBACK_TYPE,
    blur,
    clean_sentence,
    description,
    event_question,
    type_noun,
)
from hopforge.synth.plans import QuestionPlan

COMPOSER = "scripted"
_DETERMINERS = r"(?:the|its|his|her|their|a|an)"
_COPULA_LEAD = r"(is|was|are|were)"
_FUNCTION = frozenset(
    ["a", "an", "the", "this", "that", "these", "those", "its", "his", "her", "their", "our", "my", "your", "about", "above", "after", "against", "along", "among", "around", "as", "at", "before", "behind", "below", "beside", "between", "beyond", "by", "during", "for", "from", "in", "inside", "into", "near", "of", "off", "on", "onto", "out", "outside", "over", "past", "since", "through", "to", "toward", "towards", "under", "until", "upon", "with", "within", "without", "and", "or", "but", "nor", "so", "yet", "than", "then", "when", "where", "while", "who", "whom", "whose", "which", "what", "there", "here", "it", "he", "she", "they", "we", "you", "is", "was", "are", "were", "be", "been", "being", "has", "have", "had", "do", "does", "did", "became", "become", "becomes", "won", "met", "wrote", "joined", "left", "beat", "led", "saw", "built", "made", "took", "found", "gave", "got", "came", "went", "said", "also", "not", "only", "both", "either", "neither", "all", "some", "any", "each", "every", "one", "two", "three", "many", "most", "more"]
)


def article(phrase: str) -> str:
    """ "a cartographer" / "an engineer"."""
    return f"{'an' if phrase[:1].lower() in 'aeiou' else 'a'} {phrase}"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _low(text: str) -> str:
    """Lower-case a leading function word, never a leading name."""
    if text.split(" ", 1)[0].lower() in _FUNCTION:
        return text[:1].lower() + text[1:]
    return text


_CLAUSE_END = re.compile(
    r",\s|;\s|\s[—–]\s|\s(?:which|who|whom|where|while|but|and then|although|because)\s|"
    r"\sand\s(?=[a-z]+(?:ed|s)\b)"
)


def trim_clue(sentence: str, mention: str, *, min_words: int = 6) -> str:
    """The sentence cut after the clause that holds `mention` (the hop needs no more)."""
    text = clean_sentence(sentence)
    found = re.search(rf"(?<![\w-]){re.escape(mention)}(?![\w-])", text, re.IGNORECASE)
    if found is None:
        return sentence
    end = found.end()
    for m in _CLAUSE_END.finditer(text, end):
        head = text[: m.start()].rstrip(" ,;")
        if len(head.split()) >= min_words and head.count("\"") % 2 == 0:
            return head + "."
    return text


def _is_noun_like(word: str) -> bool:
    """A lower-case word that can stand before a name in apposition ("his brother X")."""
    return word not in _FUNCTION and not word.endswith(("ed", "ly"))


def _possessive(ref: str) -> str:
    return f"{ref}'" if ref.endswith("s") else f"{ref}'s"


_LETTERS = ("X", "Y", "Z", "W", "V", "U", "T", "S")
_STEP_WORDS = (
    ("First", "Next", "Then", "Finally"),
    ("To begin", "From there", "After that", "In the end"),
    ("Step one", "Step two", "Step three", "Last step"),
)


_RELEASE_EVENTS = frozenset({"released", "published", "premiered", "recorded", "launched"})


def _comparison_clauses(event: str, later: bool) -> list[str]:
    """Ways to ask which of two came first (or last) for a dated `event`."""
    when = ["later", "more recently"] if later else ["first", "earlier"]
    if event == "born":
        return [f"who was born {w}" for w in when] + ["who is younger" if later else "who is older"]
    if event == "died":
        return [f"who died {w}" for w in when] + [
            "whose death came later" if later else "whose death came first"
        ]
    if event in _RELEASE_EVENTS:
        out = "which came out later" if later else "which came out first"
        return [f"which was {event} {w}" for w in when] + [out]
    older = "which is the newer one" if later else "which is the older one"
    return [f"which was {event} {w}" for w in when] + [f"which one was {event} {when[0]}", older]


def _chain_finals(plan: QuestionPlan, last: Ref) -> list[str]:
    """Ways to ask for the end of a chain."""
    if plan.fact is not None:
        clause = event_question(plan.fact.event, last.that)
        return [f"In what year {clause}?", f"In which year {clause}?", f"What year {clause}?",
                f"When {clause} (give the year)?"]
    if last.letter:
        x = last.letter
        return [f"What is {x}?", f"Which entry is {x}?", f"What is the name of {x}?",
                f"Which term is {x}?", f"Identify {x}: what is it?"]
    return [
        f"What is the name of {last.that}?",
        f"What is {last.that} called?",
        f"Which {last.kind} is this?",
        f"Can you name {last.that}?",
        f"What {last.kind} is being described?",
        f"Which {last.kind} does this lead to?",
        f"Which {last.kind} fits this description?",
    ]


@dataclass(frozen=True, slots=True)
class Ref:
    """How a question refers to one hidden document: by its type, or by a letter when its type is
    unknown or would name another hidden document."""

    kind: str  # "" when the document goes by a letter
    letter: str = ""
    det: str = "that"  # how a later mention points back: "that", "this" or "the"

    @property
    def intro(self) -> str:
        return self.letter or article(self.kind)

    @property
    def that(self) -> str:
        return self.letter or f"{self.det} {self.kind}"

    @property
    def this(self) -> str:
        return self.letter or f"this {self.kind}"


class ScriptedComposer:
    """Writes questions for plans over one corpus graph."""

    name = COMPOSER

    def __init__(self, graph: LinkGraph) -> None:
        self.graph = graph
        self._kinds: dict[str, str] = {}

    def kind(self, doc_id: str) -> str:
        if doc_id not in self._kinds:
            self._kinds[doc_id] = type_noun(self.graph.docs[doc_id])
        return self._kinds[doc_id]

    def cast(self, hidden: Sequence[str], det: str = "that") -> dict[str, Ref]:
        """References for the hidden documents of one question."""
        refs: dict[str, Ref] = {}
        letters = iter(_LETTERS)
        for doc_id in hidden:
            kind = self.kind(doc_id)
            clash = any(
                (p := self.graph.pattern(other)) is not None and p.search(kind)
                for other in hidden
            )
            if kind == FALLBACK_TYPE or clash:
                refs[doc_id] = Ref("", next(letters, "Q"))
            else:
                refs[doc_id] = Ref(kind, det=det)
        return refs

    def compose(self, plan: QuestionPlan) -> str:
        """The question text for `plan` (deterministic for `plan.seed`)."""
        rng = random.Random(plan.seed)
        if plan.kind == "chain":
            return self._chain(plan, rng)
        if plan.kind == "comparison":
            return self._comparison(plan, rng)
        return self._intersection(plan, rng)

    # --- rewriting one sentence ---

    def rewrite(
        self,
        sentence: str,
        subject: str,
        subject_ref: str,
        hidden: Sequence[tuple[str, str, Ref]],
        *,
        this_mode: bool = False,
    ) -> str:
        """Rewrite a sentence of `subject`'s document: the subject becomes `subject_ref`, each
        hidden (doc_id, first reference, Ref) is masked, numbers are blurred."""
        text = clean_sentence(sentence).replace("?", ".").replace("!", ".")
        text = text.rstrip(" .;:") + "."
        pattern = self.graph.pattern(subject)
        if pattern is not None:
            text = re.sub(r"\b[Tt]he \x01", "\x01", pattern.sub("\x01", text))
        for doc_id, first_ref, ref in hidden:
            later = ref.this if this_mode else ref.that
            text = self._mask(text, doc_id, first_ref, later, ref, this_mode=this_mode)
        subject_kind = self.kind(subject) if not re.fullmatch(r"[A-Z]", subject_ref) else ""
        text = self._subject(text, subject_kind, subject_ref)
        return _cap(blur(text))

    def _mask(
        self, text: str, doc_id: str, ref: str, later_ref: str, who: Ref, *, this_mode: bool
    ) -> str:
        pattern = self.graph.pattern(doc_id)
        if pattern is None:
            return text
        kind_words = [w for w in who.kind.split() if len(w) > 2 and w != "of"]
        first = True
        pos = 0
        title = self.graph.docs[doc_id].title
        upper = " " not in title and any(c.isupper() for c in title)
        while (m := pattern.search(text, pos)) is not None:
            if upper and m.group(0).islower():
                pos = m.end()  # a common word, not the name
                continue
            before, after = text[: m.start()], text[m.end() :]
            use = ref if first else later_ref
            replaced = self._apposition(before, kind_words, this_mode) if first else None
            prev = re.search(r"([A-Za-z]+)\s*$", before)
            if after.startswith("'s"):
                head, after = before + _possessive(use), after[2:]
            elif replaced is not None:
                head, after = replaced, (after.lstrip(",") if after.startswith(",") else after)
            elif prev and prev.group(1).islower() and _is_noun_like(prev.group(1)):
                head = before.rstrip() + ", " + use  # "his brother, a painter, was"
                after = after if after[:1] in ",.;" else "," + after
            else:
                article_before = r"\b(?:[Tt]he|[Aa]n?)\s+$" if not who.letter else r"\b[Tt]he\s+$"
                head = re.sub(article_before, "", before) + use
            text, pos = head + after, len(head)
            first = False
        return re.sub(r"\s+([,.;])", r"\1", re.sub(r"\s{2,}", " ", text)).replace(",,", ",")

    def _apposition(self, before: str, kind_words: list[str], this_mode: bool) -> str | None:
        """ "by the cartographer Ilse Varro" -> "by a cartographer" (or "by this cartographer")."""
        if not kind_words:
            return None
        words = "|".join(re.escape(w) for w in kind_words)
        m = re.search(
            rf"\b({_DETERMINERS})\s+((?:[\w-]+\s+){{0,2}}?(?:{words}))(?:,?\s+(?:the\s+)?|\s+of\s+)$",
            before,
            re.IGNORECASE,
        )
        if m is None:
            return None
        det = m.group(1)
        if this_mode:
            det = "this"
        elif det.lower() == "the":
            det = article(m.group(2)).split(" ", 1)[0]
        return before[: m.start()] + det + " " + m.group(2) + " "

    def _subject(self, text: str, kind: str, ref: str) -> str:
        later = ref if not ref.lower().startswith(("a ", "an ")) else f"that {kind}"
        if "\x01" in text:
            if not re.fullmatch(r"[A-Z]", ref):
                text = re.sub(r"\b(?:[Aa]n?|[Tt]he) \x01", "\x01", text)
            text = text.replace("\x01's", _possessive(ref), 1).replace("\x01", ref, 1)
            text = text.replace("\x01's", _possessive(later)).replace("\x01", later)
            return self._drop_copula(_cap(text), ref, kind) if kind else _cap(text)
        lead = re.match(r"^(It|He|She|They|This|These)\b", text)
        poss = re.match(r"^(Its|His|Her|Their)\b", text)
        last = re.escape((kind or "-").split()[-1])
        the_kind = re.match(
            rf"^The (?:{re.escape(kind or '-')}\b|{last} (?=is|was|are|were|has|had|\w+ed\b|\w+s\b))",
            text,
        )
        if poss:
            text = _possessive(ref) + text[poss.end() :]
        elif lead:
            text = ref + text[lead.end() :]
        elif the_kind and kind and kind != FALLBACK_TYPE:
            text = ref + " " + text[the_kind.end() :].lstrip()
        else:
            mid = re.search(r"(?<=\s)(it|its|he|his|she|they|their)\b", text)
            if mid is None:
                return f"About {ref}: {_low(text)}"
            word = mid.group(1)
            use = _possessive(ref) if word in ("its", "his", "their") else ref
            return text[: mid.start()] + use + text[mid.end() :]
        return self._drop_copula(_cap(text), ref, kind) if kind else _cap(text)

    def _drop_copula(self, text: str, ref: str, kind: str) -> str:
        """ "That cartographer was a cartographer born in ..." -> "That cartographer was born in ..."."""
        last = kind.split()[-1]
        m = re.match(
            rf"^{re.escape(_cap(ref))} {_COPULA_LEAD} (a|an|the) (?:[\w-]+ ){{0,3}}?{re.escape(last)}\b,? ?",
            text,
        )
        if m is None:
            return text
        rest = text[m.end() :]
        indefinite = ref.lower().startswith(("a ", "an "))
        if indefinite and m.group(2).lower() != "the":
            return f"There {m.group(1)} {_low(text[len(ref) + len(m.group(1)) + 2 :])}"
        also = re.match(r"and ([a-z][\w-]*)", rest)
        if also and not indefinite and also.group(1) not in _FUNCTION:
            return f"{_cap(ref)} {m.group(1)} also {article(rest[4:])}"  # "was also a collector"
        if indefinite or not rest or re.match(r"(?:and|or|[,.;])", rest):
            return text
        rel = re.match(r"(?:who|that|which) ", rest)
        if rel:
            return f"{_cap(ref)} {rest[rel.end() :]}"
        return f"{_cap(ref)} {m.group(1)} {rest}"

    # --- the kinds ---

    def _chain(self, plan: QuestionPlan, rng: random.Random) -> str:
        docs = plan.evidence
        cast = self.cast(docs[1:], det=rng.choice(["that", "that", "this", "the"]))
        start = self.graph.docs[docs[0]]
        start_ref = start.title
        possessive = re.match(r"(Its|His|Her|Their)\b", clean_sentence(plan.hops[0].clue))
        if rng.random() < 0.4 and not possessive:
            desc = description(start)
            if desc and len(desc.split()) <= 12:
                start_ref = desc
        said: set[str] = set()
        sentences = []
        for i, hop in enumerate(plan.hops):
            subject_ref = start_ref if i == 0 else cast[hop.from_doc].that
            hidden = [(hop.to_doc, cast[hop.to_doc].intro, cast[hop.to_doc])]
            hidden += [
                (d, cast[d].that if d in said else cast[d].intro, cast[d])
                for d in docs[1:]
                if d not in (hop.from_doc, hop.to_doc)
            ]
            clue = trim_clue(hop.clue, hop.bridge)
            sentences.append(self.rewrite(clue, hop.from_doc, subject_ref, hidden))
            said.update((hop.from_doc, hop.to_doc))
        last = cast[docs[-1]]
        final = rng.choice(_chain_finals(plan, last))
        named = start_ref == start.title
        style = rng.randrange(6)
        if style == 1 and named:
            lead = rng.choice(["Start from", "Begin with", "Start at", "Take"])
            return " ".join([f"{lead} {start.title}.", *sentences, final])
        if style == 2:
            body = "; ".join(
                s.rstrip(".") if i == 0 else _low(s.rstrip(".")) for i, s in enumerate(sentences)
            )
            return f"{body}. {final}"
        if style == 3:
            steps = rng.choice(_STEP_WORDS)
            parts = []
            for i, s in enumerate(sentences):
                word = steps[-1] if i == len(sentences) - 1 and i > 0 else steps[min(i, 2)]
                parts.append(f"{word}, {_low(s)}")
            return " ".join([*parts, final])
        if style == 4 and not last.letter and plan.fact is None:
            listed = "; ".join(_low(s.rstrip(".")) for s in sentences)
            lead = rng.choice([
                f"Which {last.kind} is reached this way",
                f"What is the {last.kind} reached this way",
                f"Which {last.kind} ends this trail",
            ])
            return f"{lead}: {listed}?"
        if style == 5 and named:
            return " ".join([f"This puzzle starts at {start.title}.", *sentences, final])
        return " ".join([*sentences, final])

    def _comparison(self, plan: QuestionPlan, rng: random.Random) -> str:
        fa, fb = plan.compared
        both = [fa.doc_id, fb.doc_id]
        cast = self.cast(both)
        descs = []
        for f in (fa, fb):
            desc = description(self.graph.docs[f.doc_id], avoid_year=f.year)
            for d in both:
                desc = self._mask(desc, d, cast[d].intro, cast[d].that, cast[d], this_mode=False)
            descs.append(blur(desc))
        a, b = descs
        clause = rng.choice(_comparison_clauses(fa.event, plan.later))
        return rng.choice(
            [
                f"{_cap(clause)}: {a}, or {b}?",
                f"{_cap(clause)}, {a} or {b}?",
                f"Of {a} and {b}, {clause}?",
                f"Between {a} and {b}, {clause}?",
                f"{_cap(a)} and {b}: {clause}?",
                f"Here are two: {a}, and {b}. {_cap(clause)}?",
            ]
        )

    def _intersection(self, plan: QuestionPlan, rng: random.Random) -> str:
        target = plan.answer_doc
        sources = [h.from_doc for h in plan.hops]
        cast = self.cast([*sources, target])
        goal = cast[target]
        clues = []
        for hop in plan.hops:
            hidden = [(target, goal.this, goal)]
            hidden += [(d, cast[d].intro, cast[d]) for d in sources if d != hop.from_doc]
            ref = cast[hop.from_doc].intro
            clue = trim_clue(hop.clue, hop.bridge)
            clues.append(self.rewrite(clue, hop.from_doc, ref, hidden, this_mode=True))
        if plan.fact is not None:
            hidden = [(d, cast[d].intro, cast[d]) for d in sources]
            clues.append(self.rewrite(plan.fact.sentence, target, goal.this, hidden, this_mode=True))
        rng.shuffle(clues)
        style = rng.randrange(6)
        what = goal.letter or goal.kind
        if style == 0:
            ask = f"What is {goal.letter}?" if goal.letter else f"Which {goal.kind} is this?"
            return " ".join([*clues, ask])
        if style == 1:
            listed = "; ".join(_low(c.rstrip(".")) for c in clues)
            lead = f"What is {goal.letter}, given" if goal.letter else f"Which {what} fits"
            return f"{lead} all of these clues: {listed}?"
        if style == 2:
            intro = f"I am thinking of something; call it {goal.letter}." if goal.letter else (
                f"I am thinking of {article(goal.kind)}."
            )
            return " ".join([intro, *clues, "What is its name?"])
        if style == 4 and not goal.letter:
            lead = rng.choice([f"Several clues point to one {goal.kind}.",
                               f"One {goal.kind} fits every clue below."])
            return " ".join([lead, *clues, rng.choice(["Which is it?", "What is it called?"])])
        if style == 5:
            listed = " ".join(f"({i}) {_low(c.rstrip('.'))}." for i, c in enumerate(clues, 1))
            return f"{listed} What single {what if not goal.letter else 'entry'} fits all of these?"
        tail = [f"{rng.choice(['Also', 'Moreover', 'In addition'])}, {_low(c)}" for c in clues[1:]]
        return " ".join([clues[0], *tail, f"What is the name of {goal.this}?"])
