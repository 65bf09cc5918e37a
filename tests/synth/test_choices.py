"""The fairness of choices: a run that goes on to one of the names a page showed must have ruled
out the names the page showed before it, and a set question must check every member."""

from hopforge.corpus.names import NameIndex
from hopforge.corpus.records import Document
from hopforge.synth.records import Fault, Spec, Step, ToolCall, Trajectory, Turn
from hopforge.synth.trajectories.fairness import choices

DOCS = [
    Document(doc_id="a", title="Harbour Town", source="t",
             text="Harbour Town lies between Mount Fendle, Lake Orrin and Castle Brinmoor."),
    Document(doc_id="f", title="Mount Fendle", source="t", text="Mount Fendle rose in 1820."),
    Document(doc_id="o", title="Lake Orrin", source="t", text="Lake Orrin was dug in 1901."),
    Document(doc_id="c", title="Castle Brinmoor", source="t", text="Castle Brinmoor fell in 1644."),
    Document(doc_id="x", title="Quillon Press", source="t", text="Quillon Press prints maps."),
]
PAGE = "[doc_id: a] page 0 (pages 0-0) " + DOCS[0].text + " (end of document)"


def turn(i: int, name: str, result: str = "", **arguments: object) -> Turn:
    return Turn(index=i, raw="", call=ToolCall(name=name, arguments=dict(arguments)),
                result=result)


def run(*turns: Turn) -> Trajectory:
    return Trajectory(tid="q-s0", qid="q", teacher="t", sample=0, turns=turns)


def test_a_clue_step_must_rule_out_the_names_the_page_shows_before_its_document() -> None:
    names = NameIndex(DOCS)
    spec = Spec(family="chain", start="a", target="c",
                steps=(Step(doc="a", relation="start"), Step(doc="c", relation="link", via="a")))
    opened = turn(0, "open", PAGE, doc_id="a")
    skipping = run(opened, turn(1, "find", "", doc_id="o", pattern="1644"),
                   turn(2, "open", "Castle Brinmoor fell in 1644.", doc_id="c"))
    (choice,) = choices(skipping, spec, names)
    assert (choice.page_doc, choice.doc, choice.skipped) == ("a", "c", ("f",))
    fair = run(opened, turn(1, "find", "", doc_id="f", pattern="1644"),
               turn(2, "find", "", doc_id="o", pattern="1644"),
               turn(3, "find", "1644", doc_id="c", pattern="1644"))
    assert [c.skipped for c in choices(fair, spec, names)] == [()]
    # a step the run never reached is no choice; nor is one whose page it never read
    assert choices(run(opened), spec, names) == []
    assert choices(run(turn(0, "open", "", doc_id="c")), spec, names) == []


def test_a_set_must_check_every_member_and_a_search_listing_rules_nothing_out() -> None:
    names = NameIndex(DOCS)
    spec = Spec(family="aggregation", start="a", operation="count", items=("f", "o", "c"),
                steps=(Step(doc="a", relation="start"),
                       *(Step(doc=d, relation="item", via="a") for d in ("f", "o", "c"))))
    listed = turn(1, "search", "1. [doc_id: o] Lake Orrin", query="Lake Orrin")
    partial = run(turn(0, "open", PAGE, doc_id="a"), listed,
                  turn(2, "find", "", doc_id="f", pattern="18"),
                  turn(3, "find", "", doc_id="c", pattern="18"))
    assert [c.skipped for c in choices(partial, spec, names)] == [("o",)]
    whole = run(*partial.turns, turn(4, "find", "", doc_id="o", pattern="18"))
    assert [c.skipped for c in choices(whole, spec, names)] == [()]


def test_an_unanswerable_step_must_rule_out_every_name_of_its_page() -> None:
    names = NameIndex(DOCS)
    spec = Spec(family="chain", start="a", unanswerable="no such castle",
                steps=(Step(doc="a", relation="start"), Step(doc="", relation="link", via="a")))
    half = run(turn(0, "open", PAGE, doc_id="a"), turn(1, "find", "", doc_id="f", pattern="x"))
    assert [c.skipped for c in choices(half, spec, names)] == [("o", "c")]


def test_a_tool_error_is_no_page_whatever_words_it_holds() -> None:
    """A timed-out `open` says so in words; an entry named like one of them ("Quillon Press")
    is not a name the page showed."""
    names = NameIndex(DOCS)
    spec = Spec(family="chain", start="a", target="c",
                steps=(Step(doc="a", relation="start"), Step(doc="c", relation="link", via="a")))
    error = "Error: open timed out after 30 s at the Quillon Press. The service is slow; try again."
    failed = Turn(index=0, raw="", call=ToolCall(name="open", arguments={"doc_id": "a"}),
                  result=error, fault=Fault(kind="timeout", persistent=False))
    fair = run(failed, turn(1, "open", PAGE.replace("Harbour Town lies", "Harbour Town, where"
                                                    " Castle Brinmoor lies,"), doc_id="a"),
               turn(2, "open", "Castle Brinmoor fell in 1644.", doc_id="c"))
    assert [c.skipped for c in choices(fair, spec, names)] == [()]
