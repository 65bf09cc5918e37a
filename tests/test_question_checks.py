import itertools
from pathlib import Path

import pytest
from hopforge.corpus.records import Document
from hopforge.corpus.search import Searcher
from hopforge.synth.chains import LinkGraph
from hopforge.synth.question_checks import (
    NearDuplicates,
    answers_match,
    find_leak,
    intersection_candidates,
    is_unique,
    leak_names,
    shortcut_ranks,
    well_formed_problem,
)
from hopforge.synth.questions import QuestionConfig, check_question
from hopforge.synth.records import Hop, Question

from tests.tiny import load_tiny


@pytest.fixture(scope="module")
def docs(tiny_corpus_path: Path) -> list[Document]:
    return load_tiny(tiny_corpus_path)


@pytest.fixture(scope="module")
def graph(docs: list[Document]) -> LinkGraph:
    return LinkGraph(docs)


def chain_question(graph: LinkGraph, text: str) -> Question:
    path = ["mount-fendle", "ilse-varro", "quillon", "grey-needle"]
    hops = tuple(graph.hop(a, b) for a, b in itertools.pairwise(path))
    assert all(hops)
    return Question(qid="q-chain", question=text, answer="Grey Needle", kind="chain",
                    hops=hops, evidence=tuple(path), answer_doc="grey-needle")  # type: ignore[arg-type]


GOOD = ("Mount Fendle was first surveyed in the 1840s by a cartographer. That cartographer was "
        "born in a port in the 1810s. What is the lighthouse of that port city called?")


def test_leakage_fires_on_answer_alias_and_bridge(graph: LinkGraph) -> None:
    good = chain_question(graph, GOOD)
    names = leak_names(good, graph.docs)
    assert "Mount Fendle" not in names  # a chain's start may be named
    assert {"Grey Needle", "Ilse Varro", "Quillon"} <= set(names)
    assert find_leak(GOOD, names) == ""
    assert find_leak(GOOD.replace("a cartographer", "Ilse Varro"), names) == "Ilse Varro"
    assert find_leak("Which lighthouse is the grey needle?", names) == "Grey Needle"
    aliased = Question(qid="q", question="?", answer="Grey Needle", answer_aliases=("The Needle",),
                       kind="comparison")
    assert find_leak("Which one is the needle, really?", leak_names(aliased, graph.docs)) == (
        "The Needle"
    )


def test_short_names_match_only_with_their_case() -> None:
    assert find_leak("Which language is C?", ["C"]) == "C"
    assert find_leak("Which c-shell is meant?", ["C"]) == ""
    assert find_leak("Who died of a heart attack?", ["Heart"]) == ""
    assert find_leak("Who starred in Heart?", ["Heart"]) == "Heart"


def test_shortcut_rank_is_found_and_thresholded(docs: list[Document], graph: LinkGraph) -> None:
    searcher = Searcher.from_documents(docs, dense=False)
    easy = chain_question(graph, "Which lighthouse at the entrance of Quillon harbour was "
                                 "designed by Dorran Pell and lit in 1823?")
    hard = chain_question(graph, GOOD)
    ranks = shortcut_ranks(searcher, [easy, hard], k=50)
    assert ranks[0] == 1
    config = QuestionConfig(shortcut_rank=1)
    checked = check_question(easy, graph=graph, rank=ranks[0], config=config)
    assert checked.checks.shortcut and checked.checks.shortcut_rank == 1
    assert "shortcut" in checked.rejected.split(",")
    assert "leakage" in checked.rejected.split(",")  # it also names the answer's bridges


def test_well_formed() -> None:
    ok = {"min_words": 5, "max_words": 20}
    assert well_formed_problem("Which port city is the birthplace of that cartographer?", **ok) == ""
    assert well_formed_problem("Which port?", **ok).startswith("too_short")
    assert well_formed_problem("word " * 30 + "?", **ok).startswith("too_long")
    assert well_formed_problem("Name the port city where the cartographer was born.", **ok) == (
        "no_question_mark"
    )
    assert well_formed_problem("Who was born there? And who died there?", **ok) == (
        "several_questions"
    )
    assert well_formed_problem("A cartographer was born in a port. What is X?", **ok) == (
        "dangling_reference"
    )
    assert well_formed_problem("A cartographer was born in X. What is X?", **ok) == ""
    assert well_formed_problem("About Y: less common in the U.S. than X's. What is X?", **ok) == ""


def test_uniqueness_of_intersections(graph: LinkGraph) -> None:
    def intersection(*sources: str) -> Question:
        hops = tuple(Hop(from_doc=s, to_doc="quillon", clue="", bridge="Quillon") for s in sources)
        return Question(qid="q", question="?", answer="Quillon", kind="intersection", hops=hops,
                        evidence=(*sources, "quillon"), answer_doc="quillon")

    assert is_unique(intersection("ilse-varro", "hesper-quaile"), graph) is True
    loose = intersection("ilse-varro", "osric-helm")  # both also reach nothing else in common
    assert intersection_candidates(loose, graph) == {"quillon"}
    vague = intersection("ilse-varro")  # links to quillon and the survey school
    assert intersection_candidates(vague, graph) == {"quillon", "royal-survey-school"}
    assert is_unique(vague, graph) is False
    checked = check_question(
        Question(**{**vague.to_row(), "hops": vague.hops, "checks": vague.checks,
                    "question": "Which port city was the birthplace of a cartographer?"}),
        graph=graph, rank=None, config=QuestionConfig(),
    )
    assert checked.checks.unique is False and checked.rejected == "not_unique"
    assert is_unique(chain_question(graph, GOOD), graph) is None


def test_near_duplicates() -> None:
    dups = NearDuplicates(0.6)
    first = "Which lighthouse stands at the entrance of the harbour of that port city today?"
    dups.add("q1", first)
    assert dups.find(first) == "q1"
    assert dups.find(first.replace("today", "now")) == "q1"
    assert dups.find("Who founded the art museum on the shore of the largest lake?") == ""
    dups.add("q2", first + " Indeed")
    assert dups.find(first) == "q1"  # the earliest accepted one
    with pytest.raises(ValueError, match="threshold"):
        NearDuplicates(0.0)


def test_answers_match() -> None:
    assert answers_match("I think it is the Grey Needle.", "Grey Needle")
    assert answers_match("grey needle", "Grey Needle")
    assert answers_match("It is called the needle", "Grey Needle", ("the needle",))
    assert not answers_match("unknown", "Grey Needle")
    assert not answers_match("18230", "1823")
