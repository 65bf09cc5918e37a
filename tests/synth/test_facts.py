"""Facts read without a model, clue tests, and a model's facts verified before use."""

import asyncio
from typing import Any

import pytest
from hopforge.corpus.names import NameIndex
from hopforge.corpus.records import Document
from hopforge.synth.questions.clues import FactBook, date_clues, number_clues, verb
from hopforge.synth.questions.facts import DATE, extract, own_event, relation_key
from hopforge.synth.questions.model_facts import FactsParseError, model_facts, parse_facts
from hopforge.synth.records import Clue
from hopforge.synth.teacher.openai_client import OpenAIChatModel

from tests.helpers.openai_server import OpenAITestServer, Reply
from tests.helpers.rederive import _life as rederive_life

TEXT = ("Free Hand for a Tough Cop is a 1976 Italian film directed by Umberto Lenzi. "
        "He was born on 6 August 1931 in Massa Marittima. The film earned 1,225,000 dollars. "
        "It ran for 29 seasons. Its director was 40 years old. It sold over 200 copies.")


@pytest.fixture()
def docs() -> list[Document]:
    return [Document(doc_id="f", title="Free Hand for a Tough Cop", text=TEXT, source="t"),
            Document(doc_id="u", title="Umberto Lenzi", text="An Italian director.", source="t"),
            Document(doc_id="m", title="Massa Marittima", text="A town.", source="t")]


def test_facts_of_a_paragraph(docs: list[Document]) -> None:
    facts = extract(docs[0], NameIndex(docs))
    by = {(f.kind, f.value): f for f in facts}
    assert by[("entity", "Umberto Lenzi")].target == "u"
    assert by[("entity", "Umberto Lenzi")].relation == "Italian film directed by"
    assert by[("date", "6 August 1931")].relation == "He was born on"
    assert ("number", "29 seasons") in by and ("number", "1,225,000 dollars") in by
    assert ("number", "40 years") not in by  # an age, and someone else's
    assert ("number", "200 copies") not in by  # a bound, not a count
    for f in facts:
        assert f.evidence in TEXT and f.value in f.evidence
    assert relation_key("He was born on") == "born" and relation_key("but since") == ""


def test_dates_blur_to_decades_and_bounds_and_picks_are_exact(docs: list[Document]) -> None:
    book = FactBook(docs, NameIndex(docs))
    fact = next(f for f in book.of("f", "date") if f.value == "6 August 1931")
    clues = date_clues(fact, "born")
    assert clues[0].shown == "whose subject was born in the 1930s"
    assert (clues[0].low, clues[0].high) == (1930, 1939)
    assert all("1931" not in c.shown for c in clues)
    from hopforge.synth.records import Fact
    round_year = Fact(doc="f", kind="date", relation="He was born in", value="1930",
                      evidence="He was born in 1930.")
    assert all("1930" not in c.shown for c in date_clues(round_year, "born"))  # no "1930s"
    assert book.holds(clues[0], "f") and not book.holds(clues[0], "u")
    assert book.picks(clues[0], "f", ["u", "m"])
    later = Clue(kind="date", key="born", low=1940, high=None, shown="born after 1939")
    assert not book.holds(later, "f")


def test_an_entity_clue_quotes_the_name_the_text_writes() -> None:
    """A page named by a code alias (a documentation site's `UnicodeDecodeError` for "Built-in
    Exceptions") is quoted by that alias, and only texts that write it meet the clue, so that a
    reader's find for the quoted name sees every match; a page named by its title is quoted by
    its title."""
    docs = [Document(doc_id="x", title="Built-in Exceptions", source="t",
                     aliases=("UnicodeDecodeError", "ValueError"), text="The exceptions."),
            Document(doc_id="c", title="Codecs", source="t",
                     text="A bad byte raises UnicodeDecodeError while decoding."),
            Document(doc_id="i", title="Integers", source="t",
                     text="A bad digit raises ValueError when parsing."),
            Document(doc_id="e", title="Errors", source="t",
                     text="See Built-in Exceptions for the classes.")]
    book = FactBook(docs, NameIndex(docs))
    alias = next(c for c in book.clues("c") if c.kind == "entity")
    assert alias.key == "UnicodeDecodeError" and "“UnicodeDecodeError”" in alias.shown
    assert book.holds(alias, "c") and not book.holds(alias, "i") and not book.holds(alias, "e")
    titled = next(c for c in book.clues("e") if c.kind == "entity")
    assert titled.key == "Built-in Exceptions" and "“Built-in Exceptions”" in titled.shown
    assert book.holds(titled, "e") and not book.holds(titled, "c")
    assert {"c", "i", "e"} <= {d for d in "cie" if "x" in book.mentioned(d)}  # all name it


@pytest.mark.parametrize(("sentence", "event"), [
    ("John Smith (born 1950) is an actor.", "born"),
    ("He died in 1990.", "died"),
    ("The film, released in 1995 in Italy, was a hit.", "released"),
    ("He married Jane Doe in 1990.", "married"),
    ("The company was founded in 1990 by Bob.", "founded"),
    ("His father died in 1990.", ""),  # someone else's
    ("Smith starred in Heat, which was released in 1995.", ""),  # the film's
    ("Smith starred in Heat released in 1995.", ""),
    ("Smith starred in the movie Heat, released in 1995.", ""),
    ('It is a remake of the film "Chandralekha" released in 1997.', ""),  # the quoted film's
    ("It is a remake of the film “Chandralekha” released in 1997.", ""),
    ('"Rise of the Apes" was released on August 5, 2011.', "released"),  # its own title
    ("The VAX was used in 1980.", ""),  # a state, not an event
    ("The war went on until 1945.", ""),
    ("He directed his first film in 1930.", ""),  # the film's date
    ("Smith directed in 1930.", ""),
    ("The film was directed in 1930.", "directed"),
    ("The war was surprised in 1930.", ""),  # no event a reader asks about
])
def test_a_date_is_kept_only_as_its_subjects_own_event(sentence: str, event: str) -> None:
    found = DATE.search(sentence)
    assert found and own_event(sentence, found.start()) == event


def test_a_date_counts_only_in_a_sentence_about_the_document() -> None:
    from hopforge.synth.questions.facts import about_subject

    lead = "Heat is a 1995 American crime film directed by Michael Mann."
    assert about_subject("The film was released in 1995.", "Heat (1995 film)", lead)
    assert about_subject("It was released in 1995.", "Heat (1995 film)", lead)
    assert about_subject("Heat was released in 1995.", "Heat (1995 film)", lead)
    assert not about_subject("Michael Mann was born in 1943.", "Heat (1995 film)", lead)
    assert not about_subject("The novel was published in 1990.", "Heat (1995 film)", lead)
    assert not about_subject("In 1995 it was released.", "Heat (1995 film)", lead)
    # something of the subject's: Big Boi's album, the film's sequel (a title may open so)
    assert not about_subject("Big Boi's solo debut was released in July 2010.", "Big Boi",
                             "Antwan André Patton, better known as Big Boi, is a rapper.")
    assert not about_subject("The film’s sequel was released in 1999.", "Heat (1995 film)", lead)
    assert about_subject("Schindler's List was released in 1993.", "Schindler's List",
                         "Schindler's List is a 1993 film.")
    # an article the title opens with is no name: "A sequel" is not "A Dog's Purpose"
    purpose = "A Dog's Purpose is a 2017 American comedy-drama adventure film."
    assert not about_subject('A sequel, titled "A Dog\'s Journey", was released on May 17, 2019.',
                             "A Dog's Purpose (film)", purpose)
    assert about_subject("A Dog's Purpose was released on January 27, 2017.",
                         "A Dog's Purpose (film)", purpose)


@pytest.mark.parametrize(("lead", "born", "died"), [
    ("Jonathan Demme (February 22, 1944 – April 26, 2017) was an American director.", 1944, 2017),
    (("Jonathan Demme (Jonathan Karl Demme; 24 August 1973, Berlin – 25 June 2019, Berlin) "
      "was a singer."), 1973, 2019),
    ("Jonathan Demme (1868-1937) was a director.", 1868, 1937),
    ("Jonathan Demme (circa 1550 – 1601) was a painter.", None, 1601),  # a circa birth: no date
    ("Jonathan Demme (fl. 1550) was a painter.", None, None),
    ("Jonathan Demme (born 1950) is a director.", 1950, None),  # an ordinary date fact
    ("Mary Smith (1944 – 2017) was his aunt.", None, None),  # someone else's life
    ("Jonathan Demme (reigned: 1545–1554) was a king.", None, None),  # no life span
])
def test_a_life_in_parentheses_dates_birth_and_death(lead: str, born: Any, died: Any) -> None:
    """Encyclopedias date a life in parentheses after the name, without the words; the stage
    and the independent reader (tests/helpers/rederive) read the same years."""
    from tests.helpers.rederive import Reader

    docs = [Document(doc_id="d", title="Jonathan Demme", text=lead + " He made films.", source="t")]
    book = FactBook(docs, NameIndex(docs))
    reader = Reader(d.to_row() for d in docs)
    for key, year in (("born", born), ("died", died)):
        assert book.dates.get("d", {}).get(key, [None])[:1] == [year]
        for y in (1545, 1550, 1554, 1601, 1868, 1937, 1944, 1950, 1973, 2017, 2019):
            clue = {"kind": "date", "key": key, "low": y, "high": y}
            assert reader.holds(clue, "d") == (y == year), (key, y)


@pytest.mark.parametrize(("relation", "key", "said"), [
    ("He died in", "died", "died"), ("and died in", "died", "died"),
    ("was founded in", "founded", "was founded"), ("film directed in", "directed", "was directed"),
    ("term originated in", "originated", "originated"), ("Smith (born", "born", "was born"),
])
def test_the_verb_of_a_dated_relation_reads_as_english(relation: str, key: str, said: str) -> None:
    from hopforge.synth.records import Fact

    assert verb(Fact(doc="d", kind="date", relation=relation, value="1990", evidence=""), key) == said


@pytest.mark.parametrize(("relation", "shown"), [
    ("He directed", "whose subject directed more than 16 films"),
    ("He also directed", "whose subject directed more than 16 films"),
    ("She has appeared in", "whose subject appeared in more than 16 films"),
    ("He also appeared as an actor in", "whose text gives more than 16 films"),
    ("It was ranked", "whose text gives more than 16 films"),
    ("an estimated", "whose text gives more than 16 films"),
])
def test_a_count_says_the_subjects_verb_where_the_text_puts_one_before_it(
        relation: str, shown: str) -> None:
    """"He directed 20 films" is asked as what the subject did; a count whose words before it
    are no verb of the subject's stays what the text gives."""
    from hopforge.synth.records import Fact

    fact = Fact(doc="d", kind="number", relation=relation, value="20 films", evidence="")
    assert number_clues(fact, "films")[0].shown == shown


def test_a_models_facts_are_verified(docs: list[Document],
                                     openai_server: OpenAITestServer) -> None:
    names = NameIndex(docs)
    reply = {"facts": [
        {"kind": "entity", "relation": "directed by", "value": "Umberto Lenzi",
         "evidence": "Free Hand for a Tough Cop is a 1976 Italian film directed by Umberto Lenzi."},
        {"kind": "date", "relation": "was born on", "value": "1932",
         "evidence": "He was born on 6 August 1931 in Massa Marittima."},
        {"kind": "number", "relation": "ran for", "value": "29 seasons",
         "evidence": "The series ran for twenty-nine seasons."},
        {"kind": "entity", "relation": "in", "value": "Rome", "evidence": TEXT[:40]},
    ]}
    kept, rejected = parse_facts(__import__("json").dumps(reply), docs[0], names)
    assert [(f.kind, f.target) for f in kept] == [("entity", "u")]
    assert rejected == {"value_not_in_evidence": 1, "evidence_not_verbatim": 1,
                        "target_not_one_document": 1}
    with pytest.raises(FactsParseError):
        parse_facts("The facts are: none.", docs[0], names)

    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any]) -> Reply:
        seen.append(request)
        if 'Document "Free Hand' in request["messages"][-1]["content"]:
            return Reply.json(reply)
        return Reply.text("no JSON here")

    openai_server.set_handler(handler)

    async def go() -> Any:
        async with OpenAIChatModel([openai_server.base_url], "test-model",
                                   max_retries=0) as model:
            return await model_facts(model, docs, names, concurrency=2)

    found, bad = asyncio.run(go())
    assert [f.value for f in found["f"]] == ["Umberto Lenzi"] and found["u"] == []
    assert bad["parse_error"] == 2 and bad["evidence_not_verbatim"] == 1
    assert seen[0]["response_format"]["json_schema"]["schema"]["required"] == ["facts"]


def test_a_birth_name_before_the_date_still_dates_the_birth() -> None:
    lead = "Karan Kumar Johar (born Rahul Kumar Johar, 25 May 1972) is an Indian film director."
    docs = [Document(doc_id="k", title="Karan Johar", text=lead, source="t"),
            Document(doc_id="x", title="Other", text="x", source="t")]
    book = FactBook(docs, NameIndex(docs))
    assert book.dates["k"]["born"] == [1972]
    # a birth name alone opening the lead, the known name after it
    lead = "Vishal Devgan( born 2 April 1969), known professionally as Ajay Devgn, is an actor."
    docs = [Document(doc_id="a", title="Ajay Devgn", text=lead, source="t"),
            Document(doc_id="x", title="Other", text="x", source="t")]
    assert FactBook(docs, NameIndex(docs)).dates["a"]["born"] == [1969]
    assert rederive_life(lead, "Ajay Devgn") == {"born": 1969}


def test_no_count_is_asked_of_a_unit_the_text_gives_twice() -> None:
    """"64 films in Europe ... 102 films in Hollywood": which count is meant is unclear."""
    twice = ("Michael Curtiz was a film director. He directed 64 films in Europe. "
             "He directed 102 films during his Hollywood career.")
    once = "Raoul Walsh was a film director. He directed 102 films during his career."
    docs = [Document(doc_id="c", title="Michael Curtiz", text=twice, source="t"),
            Document(doc_id="w", title="Raoul Walsh", text=once, source="t")]
    book = FactBook(docs, NameIndex(docs))
    assert not [c for c in book.clues("c") if c.kind == "number"]
    assert [c.shown for c in book.clues("w") if c.kind == "number"] == [
        "whose subject directed more than 81 films", "whose subject directed fewer than 150 films"]


def test_no_date_bound_that_every_date_of_its_kind_in_the_corpus_meets() -> None:
    """"released before 2025" in a corpus whose films come out by 2019 rules nothing out."""
    docs = [Document(doc_id=f"m{y}", title=f"Film {y}", text=f"Film {y} was released in {y}.",
                     source="t") for y in (1931, 1956, 2011, 2017)]
    book = FactBook(docs, NameIndex(docs))
    shown = {c.shown for c in book.clues("m2017")}
    assert "whose subject was released in the 2010s" in shown
    assert "whose subject was released after 2010" in shown
    assert not any("before 2025" in s or "before 2020" in s for s in shown)  # last one: 2017
    assert not any("after 1925" in s for s in {c.shown for c in book.clues("m1931")})  # first
