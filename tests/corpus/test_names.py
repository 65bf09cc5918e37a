"""Names a reader sees and whole-word matching: known answers on small texts."""

from hopforge.corpus.matching import first_match, matches
from hopforge.corpus.names import NameIndex
from hopforge.corpus.records import Document
from hopforge.corpus.tools import ToolBox


def _doc(doc_id: str, title: str, text: str = "x", aliases: tuple[str, ...] = ()) -> Document:
    return Document(doc_id=doc_id, title=title, text=text, source="t", aliases=aliases)


def test_patterns_match_whole_words_with_plural_and_possessive() -> None:
    assert matches("The rally was large.", "rally")
    assert not matches("It is generally so.", "rally")
    assert not matches("Indian food", "india") and matches("India's food", "india")
    assert matches("two operating\n systems", "operating system")
    assert matches("the hackers' code", "hacker") and matches("the hacker’s code", "hacker")
    assert not matches("resting is interesting", "interesting rest")
    assert matches("C++ and C", "C++") and first_match("x C++", "C++") == 2
    assert not matches("anything", "") and first_match("nothing", "else") == -1


def test_names_are_whole_words_capitalized_where_the_name_is_and_unambiguous() -> None:
    docs = [_doc("euro", "Euro", "The euro is used in Estonia, France and Latvia."),
            _doc("est", "Estonia"), _doc("fr", "France"), _doc("lv", "Latvia"),
            _doc("rose", "Rose"), _doc("os", "operating system"),
            _doc("h1", "Humanism"), _doc("h2", "Humanism"),
            _doc("mov", "Hackers (the movie)"), _doc("hk", "hacker")]
    index = NameIndex(docs, min_common_docs=100)
    found = index.find("The euro is used in Estonia, France and Latvia.", exclude="euro")
    assert [h.doc for h in found] == ["est", "fr", "lv"]
    assert index.mentioned("Prices rose. Then Rose acted.") == ["rose"]  # the verb is no name
    assert index.mentioned("two operating\n   systems") == ["os"]
    assert index.find("Humanism spread.")[0].docs == ("h1", "h2")
    assert index.mentioned("Humanism spread.") == []  # ambiguous: names neither
    assert index.shared_title(docs[6]) and not index.shared_title(docs[1])
    # a title stripped to one word is no name: "Hackers" is the plural of "hacker"
    assert index.mentioned("Hackers liked it; hackers wrote code.") == ["hk"]
    assert index.mentioned("/bit'ee boks/ in Latvia") == ["lv"]
    # a pronunciation's syllables are no names: "dump" is not in /dump'·ster di:'·ving/
    dump = NameIndex([*docs, _doc("dp", "dump")], min_common_docs=100)
    assert dump.mentioned("/dump'·ster di:'·ving/, n. The practice") == []
    assert dump.mentioned("/dump'·ster/ leads to a core dump.") == ["dp"]


def test_names_inside_longer_names_and_everyday_words_are_not_mentions() -> None:
    docs = [_doc("tp", "Tom Parker (singer)"), _doc("par", "Paris"),
            _doc("atl", "Atlanta (album)"), _doc("hop", "hop"), _doc("bb", "Bob Barker")]
    docs += [_doc(f"g{i}", f"Glossary {i}", "Where code may include a file.") for i in range(12)]
    docs += [_doc("inc", "include")]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("He was managed by Colonel Tom Parker.") == []
    assert index.mentioned("Tom Parker, a singer. In 1990 Tom Parker left.") == ["tp"]
    assert index.mentioned("Tom Parker, a painter, left.") == []  # a namesake, maybe
    assert index.mentioned("He met Paris Hilton in Paris. Paris is big.") == ["par"]
    assert [h.start for h in index.find("Paris Hilton met Paris, Texas.")] == [17]
    assert index.mentioned("They moved to Atlanta.") == []  # the album's bare title
    assert index.mentioned("Atlanta (album) sold well.") == ["atl"]
    assert index.mentioned("Our hopes were high; two hops.") == ["hop"]  # no "hop"+"es"
    assert index.mentioned("Host Bob Barker. Bob Barker Show.") == ["bb"]  # not a bare name
    assert "include" in index.common  # a lower-case word in 12 of 18 texts


def test_names_in_code_and_quoted_names() -> None:
    """Documentation text: a name with a leading underscore is a whole word too ("_thread" is
    not inside Py_END_ALLOW_THREADS), and a quote before a longer capitalized name is no
    sentence opener ('Switching Protocols' names no "Protocols")."""
    docs = [_doc("th", "_thread — Low-level threading API", aliases=("_thread",)),
            _doc("pr", "Protocols")]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("Py_BEGIN_ALLOW_THREADS and Py_END_ALLOW_THREADS macros") == []
    assert index.mentioned("See _thread for the low-level API.") == ["th"]
    assert index.mentioned("101: ('Switching Protocols', 'Switching to new protocol')") == []
    assert index.mentioned("Protocols are classes. The Protocols of asyncio.") == ["pr"]


def test_common_names_are_marked() -> None:
    docs = [_doc(f"d{i}", f"Doc {i}", "It holds data and a Rose. The princess left.")
            for i in range(30)]
    docs += [_doc("data", "data"), _doc("rose", "Rose"), _doc("pr", "Princess"),
             _doc("p2", "Other", "The Princess came.")]
    index = NameIndex(docs, common_share=0.5, min_common_docs=5, lower_docs=3)
    assert {"data", "rose", "princess"} <= index.common
    hit = index.find("The Princess came.")[0]
    assert hit.doc == "pr" and hit.common


def test_the_find_tool_matches_whole_words() -> None:
    from hopforge.corpus.search import Searcher

    docs = [_doc("a", "A text", "It is generally fine.\nA rally, then rallies."),
            _doc("b", "B text", "nothing")]
    tools = ToolBox(Searcher.from_documents(docs, dense=False))
    found = tools.find("a", "rally").text
    assert found.startswith("1 line(s) match") and "line 2" in found
    assert tools.find("a", "rall").text.startswith("No match")


def test_names_of_no_document_are_the_capitalized_runs_left() -> None:
    """What a reader must rule out with a search: every capitalized run that names no document,
    once, in text order; not a corpus name, nor a lone word opening a sentence, nor a month."""
    docs = [Document(doc_id="t", title="The Tender Years", source="t",
                     text=("The Tender Years is a 1948 American drama film directed by Harold "
                           "D. Schuster, written by Abem Finkel, and starring Joe E. Brown and "
                           "Noreen Nash. It was released in January by the Duke of York. "
                           "Finkel also wrote it. Noreen Nash sang.")),
            Document(doc_id="h", title="Harold D. Schuster", source="t", text="A director.")]
    names = NameIndex(docs)
    found = names.unlisted(docs[0].text, own=docs[0].title)
    assert [n for n, _ in found] == ["American", "Abem Finkel", "Joe E. Brown", "Noreen Nash",
                                     "Duke of York"]
    assert all(docs[0].text[at:at + len(n)] == n for n, at in found)


def test_a_name_may_open_with_a_modal_word_and_everyday_words_are_no_names() -> None:
    """"Will Moore" is a name whole (only function words such as "In" are dropped before a
    name), an everyday word opening a sentence is not part of the name after it ("Later Moore
    left"), and a lone capitalized word that the corpus writes in lower case in more than 1% of
    its documents ("Company") is a word of the language, not a name to rule out."""
    filler = [Document(doc_id=f"f{i}", title=f"Filler {i}", source="t",
                       text="The company sold the boat later.") for i in range(30)]
    page = Document(doc_id="p", title="Harbour Lights", source="t",
                    text=("A harbour inn. Will Moore joined the Company in 1950. In France, "
                          "the Company grew. Later Moore left for Quillon Bay."))
    names = NameIndex([*filler, page])
    found = [n for n, _ in names.unlisted(page.text, own=page.title)]
    assert found == ["Will Moore", "France", "Quillon Bay"]  # "Moore" again is Will Moore
    assert "Company" in names.everyday() and "Moore" not in names.everyday()


def test_names_in_compounds_lowercased_titles_and_code_are_not_names() -> None:
    """A name joined to a word by a hyphen or a dot is part of that word ("spell-checker",
    "alt.flame"); a capitalized title of several words is named only with its capitals ("For
    more information" is running text); and the names to rule out leave out code lines, words
    run together ("TriedPretty") and a sentence's first word after an initial ("World War I.
    Born in")."""
    docs = [_doc("sp", "spell"), _doc("fl", "flame"), _doc("fm", "For More Information"),
            *[_doc(f"f{i}", f"Filler {i}", "He was born in a town.") for i in range(25)]]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("Run the spell-checker on alt.flame today.") == []
    assert index.mentioned("Cast a spell; a flame.") == ["sp", "fl"]
    assert index.mentioned("For more information, see For More Information.") == ["fm"]
    page = Document(doc_id="p", title="Harbour Lights", source="t", text=(
        "A harbour inn. It fought in World War I. Born in Quillon, it grew.\n"
        ">>> print(Servo Crow)\nx = Isaac Newton\nSongs: TriedPretty MaryTexas Polka."))
    names = NameIndex([*docs, page], min_common_docs=100)
    assert [n for n, _ in names.unlisted(page.text, own=page.title)] == ["World War", "Quillon"]
    prose = Document(doc_id="w", title="Quillon West", source="t", text=(
        "A film. Quillon West( lit. \"the west\") is a 1968 film directed by Sergio Leone. It "
        "stars Henry Fonda as the villain, and the score was by Ennio Morricone in Rome. After"
        "\" The Good, the Bad and the Ugly\", Leone rested."))
    assert len(prose.text) > 160  # a paragraph, not a line of code, for all its "West("
    names = NameIndex([*docs, prose], min_common_docs=100)
    assert [n for n, _ in names.unlisted(prose.text, own=prose.title)] == [
        "Sergio Leone", "Henry Fonda", "Ennio Morricone", "Rome",
        "The Good, the Bad and the Ugly"]  # one title, quoted; "Leone" is Sergio Leone again
