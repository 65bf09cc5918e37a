"""Records produced by the synth stage: questions and trajectories.

Every record is frozen; change one with `dataclasses.replace`. Rows (plain dicts for JSONL) are
made only at the I/O edge with `to_row` / `from_row`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from hopforge.synth.reward import NONE, NOT_FOUND  # noqa: F401 - the constants live with the reward

ANSWER_TYPES: tuple[str, ...] = ("title", "year", "count", "list", "not_found")
Termination = Literal["answer", "max_turns", "repetition", "no_progress", "context_limit", "error"]
TERMINATIONS: tuple[str, ...] = (
    "answer",
    "max_turns",
    "repetition",
    "no_progress",
    "context_limit",
    "error",
)


TURN_LABELS: tuple[str, ...] = ("progress", "redundant", "recovery", "invalid", "off_track")


@dataclass(frozen=True, slots=True, kw_only=True)
class Hop:
    """One step of a chain: `clue` is the sentence of `from_doc` that leads to `to_doc`."""

    from_doc: str
    to_doc: str
    clue: str
    bridge: str  # the bridge entity: the title of `to_doc` as mentioned in the clue


FACT_KINDS: tuple[str, ...] = ("entity", "date", "number", "category", "phrase")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """A statement a document makes that a reader can check in the text `open` shows.

    `kind` is one of FACT_KINDS; `relation` the document's own words that state it ("founded
    in", "directed by"); `value` the name, date, number, category or phrase as written;
    `evidence` the sentence, verbatim; `target` the doc_id an entity fact names."""

    doc: str
    kind: str
    relation: str
    value: str
    evidence: str
    target: str = ""

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Fact:
        return cls(**{k: row[k] for k in _names(cls) if k in row})


@dataclass(frozen=True, slots=True, kw_only=True)
class Clue:
    """A fact as a question uses it: what it states and how the question shows it.

    The test a document must pass is typed: `date` and `number`, a fact whose relation has
    the word `key` and whose value lies in [low, high]; `category`, the category `value`;
    `entity`, a mention of the document `target`; `phrase`, the words `value` (as
    corpus/matching.py matches). `key` is also what a solver looks for with `find`."""

    kind: str
    relation: str = ""
    value: str = ""
    evidence: str = ""
    target: str = ""
    shown: str = ""  # how the question states it, blurred ("founded in the 1950s")
    key: str = ""
    low: float | None = None
    high: float | None = None

    def to_row(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Clue:
        return cls(**{k: row[k] for k in _names(cls) if k in row})


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One step of a task spec: the document it reaches, how, and the phrase that picks it.

    `relation` is `start` (named in the question), `link` (mentioned by `via`, picked among
    its mentions by `phrase`), `constraint` (its own text contains `phrase`), `item` (one
    document of an aggregation set) or `compare` (one side of a comparison).
    """

    doc: str
    relation: str
    via: str = ""
    phrase: str = ""  # a `phrase` clue's words (corpus/matching.py: whole words)
    value: str = ""  # what the step reads there: the year compared, the value ranked
    fact: Clue | None = None  # the fact that picks `doc` (link, compare, constraint steps)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["fact"] = self.fact.to_row() if self.fact else None
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Step:
        fact = row.get("fact")
        return cls(**{**{k: row[k] for k in _names(cls) if k in row},
                      "fact": Clue.from_row(fact) if fact else None})


@dataclass(frozen=True, slots=True, kw_only=True)
class Spec:
    """A question before it is put into words; composers render it, every check reads it.

    `family` is the structure (chain, comparison, intersection, aggregation); an
    unanswerable question keeps the family it varies and says in `unanswerable` why no
    document meets its premise. Aggregation: `scope` says how the set is enumerated from
    `start`, `items` are its doc_ids, `matching` those meeting the condition (`pattern`
    occurs in the text), `operation` is count, list, max or min.
    """

    family: str
    start: str = ""  # doc_id the question names
    steps: tuple[Step, ...] = ()
    target: str = ""  # doc_id that states the answer ("" when the answer is computed)
    answer_type: str = "title"  # one of ANSWER_TYPES
    operation: str = ""  # aggregation: count | list | max | min; comparison: earlier | later
    scope: str = ""  # aggregation: links | links2
    items: tuple[str, ...] = ()
    matching: tuple[str, ...] = ()
    pattern: str = ""  # a phrase condition's words ("" for typed conditions)
    unanswerable: str = ""
    condition: Clue | None = None  # aggregation: the typed condition an item must meet

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["steps"] = [s.to_row() for s in self.steps]
        row["items"], row["matching"] = list(self.items), list(self.matching)
        row["condition"] = self.condition.to_row() if self.condition else None
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Spec:
        return cls(
            **{
                **{k: row[k] for k in _names(cls) if k in row},
                "steps": tuple(Step.from_row(s) for s in row.get("steps") or ()),
                "items": tuple(row.get("items") or ()),
                "matching": tuple(row.get("matching") or ()),
                "condition": (Clue.from_row(row["condition"]) if row.get("condition")
                              else None),
            }
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Checks:
    """Results of the question checks; `None` means the check did not apply or was not run."""

    leakage: bool = False  # answer, alias or hidden name in the text (also inflected, in words)
    leaked: str = ""  # what leaked
    shortcut_rank: int | None = None  # rank at which one search finds what answers it
    shortcut_query: str = ""  # that search: the whole text, a sentence, a clause or a phrase
    shortcut: bool = False
    answer_type: str = ""  # "" when the answer is of the spec's type, else what is wrong
    closed_book: bool | None = None  # the teacher answered correctly without tools
    unique: bool | None = None  # the corpus gives exactly this answer
    well_formed: bool = True
    placeholder: str = ""  # a stand-in letter found in the text
    grounded: bool | None = None  # the text carries every step of the spec
    answerable: bool | None = None  # a reader with the evidence reaches the answer
    probe_pass: float | None = None  # share of closed-book probe attempts that answered it
    near_duplicate_of: str = ""  # qid of an accepted question this one nearly repeats
    misread: str | None = None  # what the model's read-back got wrong ("": nothing)

    @property
    def passed(self) -> bool:
        return (
            not self.leakage
            and not self.shortcut
            and not self.answer_type
            and self.closed_book is not True
            and self.unique is not False
            and self.well_formed
            and not self.placeholder
            and self.grounded is not False
            and self.answerable is not False
            and not self.near_duplicate_of
            and not self.misread
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    qid: str
    question: str
    answer: str
    answer_aliases: tuple[str, ...] = ()
    kind: str = "chain"  # the family that made it (synth.questions.families.KINDS)
    hops: tuple[Hop, ...] = ()
    evidence: tuple[str, ...] = ()  # gold doc_ids, in reading order
    answer_doc: str = ""  # the doc_id that states the answer
    checks: Checks = field(default_factory=Checks)
    spec: Spec | None = None
    min_calls: int = 0  # the fewest tool calls (answer included) that solve it
    quiet_calls: int = 0  # the most calls that plan makes between two gold documents
    composer: str = "scripted"  # which teacher wrote it, e.g. "scripted" or "openai:MODEL"
    seed: int = 0
    rejected: str = ""  # empty when accepted; otherwise the reason
    raw: str = ""  # the model's raw output, kept when parsing failed

    @property
    def n_hops(self) -> int:
        return len(self.hops)

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["answer_aliases"] = list(self.answer_aliases)
        row["evidence"] = list(self.evidence)
        row["hops"] = [asdict(h) for h in self.hops]
        row["spec"] = self.spec.to_row() if self.spec else None
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Question:
        spec = row.get("spec")
        return cls(
            **{
                **{k: row[k] for k in _names(cls) if k in row},
                "answer_aliases": tuple(row.get("answer_aliases") or ()),
                "evidence": tuple(row.get("evidence") or ()),
                "hops": tuple(Hop(**h) for h in row.get("hops") or ()),
                "checks": Checks(**(row.get("checks") or {})),
                "spec": Spec.from_row(spec) if spec else None,
            }
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A parsed tool call: `arguments` is the decoded JSON object."""

    name: str
    arguments: dict[str, Any]
    call_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """A fault injected into one tool result."""

    kind: Literal["empty", "timeout", "format", "partial"]
    persistent: bool = False
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One assistant turn: what the model produced, what the tool returned, and annotations."""

    index: int
    raw: str  # the assistant message as produced (content text, or serialized tool call)
    thought: str = ""  # the visible text that came with the call
    reasoning: str = ""  # the model's reasoning (`reasoning_content`), kept beside the text
    call: ToolCall | None = None  # parsed call; None when parsing failed
    result: str = ""  # the tool result shown to the model (after any fault)
    fault: Fault | None = None
    schema_valid: bool = True  # the call parsed and names a known tool
    args_valid: bool = True  # its arguments satisfy the tool's schema
    repeat_of: int | None = None  # index of an earlier turn with the same normalized call
    new_evidence: tuple[str, ...] = ()  # gold doc_ids seen for the first time in this turn
    recovered: bool = False  # a fault earlier was followed by a success with the same intent
    tokens: int = 0
    latency_s: float = 0.0
    error: str = ""  # tool-level error message returned to the model, if any
    justified: bool = True  # every word of the call was in the question or an earlier result
    unseen: tuple[str, ...] = ()  # the words of the call that were not
    label: str = ""  # progress | redundant | recovery | invalid | off_track (TURN_LABELS)
    label_reason: str = ""
    call_format: str = ""  # where the call was read from: native | tagged | fenced | json; "": none

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["new_evidence"] = list(self.new_evidence)
        row["unseen"] = list(self.unseen)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Turn:
        call = row.get("call")
        fault = row.get("fault")
        return cls(
            **{
                **{k: row[k] for k in _names(cls) if k in row},
                "call": ToolCall(**call) if call else None,
                "fault": Fault(**fault) if fault else None,
                "new_evidence": tuple(row.get("new_evidence") or ()),
                "unseen": tuple(row.get("unseen") or ()),
            }
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """A structured state summary the teacher writes every K turns."""

    turn: int
    goal: str
    facts: tuple[tuple[str, str], ...] = ()  # (fact, source doc_id)
    open_constraints: tuple[str, ...] = ()
    queries_tried: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cost: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Trajectory:
    tid: str
    qid: str
    teacher: str
    sample: int
    turns: tuple[Turn, ...] = ()
    checkpoints: tuple[Checkpoint, ...] = ()
    final_answer: str = ""
    termination: Termination = "answer"
    reason: str = ""  # detail for termination, e.g. the error that ended it
    usage: Usage = field(default_factory=Usage)
    system_prompt: str = ""
    seed: int = 0
    peak_context_tokens: int = 0  # the largest prompt the teacher was sent, estimated

    def to_row(self) -> dict[str, Any]:
        row = asdict(self)
        row["turns"] = [t.to_row() for t in self.turns]
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Trajectory:
        return cls(
            **{
                **{k: row[k] for k in _names(cls) if k in row},
                "turns": tuple(Turn.from_row(t) for t in row.get("turns") or ()),
                "checkpoints": tuple(
                    Checkpoint(
                        turn=c["turn"],
                        goal=c["goal"],
                        facts=tuple(tuple(f) for f in c.get("facts") or ()),  # type: ignore[misc]
                        open_constraints=tuple(c.get("open_constraints") or ()),
                        queries_tried=tuple(c.get("queries_tried") or ()),
                    )
                    for c in row.get("checkpoints") or ()
                ),
                "usage": Usage(**(row.get("usage") or {})),
            }
        )


def _names(cls: type) -> list[str]:
    return [f.name for f in fields(cls)]
