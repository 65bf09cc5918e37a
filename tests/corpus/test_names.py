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


def test_open_lists_the_entries_a_page_first_names_as_written_there() -> None:
    """Under each page, `open` lists the other documents the text names there, as written and
    first to last, with the title where the name is another: not the page's own title, not a
    name two documents share, not an everyday word of the corpus, and a name again on a later
    page only on the page that first names it (read here off the tool's raw text)."""
    from hopforge.corpus.search import Searcher

    filler = [_doc(f"f{i}", f"Filler {i}", "The data was kept.") for i in range(30)]
    long_text = ("Harbour Lights is an inn run by Will Moore in Quillon. Humanism was read "
                 "there, and data. " + "The inn stood. " * 90 + "Later Will Moore sold it to "
                 "the Duke of Quillon.")
    docs = [*filler, _doc("p", "Harbour Lights", long_text), _doc("wm", "Will Moore"),
            _doc("q", "Quillon"), _doc("h1", "Humanism"), _doc("h2", "Humanism"),
            _doc("d", "data"), _doc("dq", "Duke of Quillon", aliases=("His Grace",))]
    tools = ToolBox(Searcher.from_documents(docs, dense=False), page_chars=1200)
    first, last = tools.open("p", 0).text, tools.open("p", 1).text
    listed = [line.removeprefix("Entries named here: ").split("; ")
              for text in (first, last) for line in text.splitlines()
              if line.startswith("Entries named here: ")]
    assert listed == [["Will Moore", "Quillon"], ["Duke of Quillon"]]
    aliased = ToolBox(Searcher.from_documents([*docs, _doc("a", "Inn", "Run by His Grace.")],
                                              dense=False)).open("a").text
    assert "Entries named here: His Grace → Duke of Quillon" in aliased  # a name that is no title
    assert first.rstrip().endswith("(more: open doc_id=p page=1)")
    assert "Entries named here" not in tools.open("wm").text  # a page that names nothing


def test_names_in_compounds_and_lowercased_titles_are_not_names() -> None:
    """A name joined to a word by a hyphen or a dot is part of that word ("spell-checker",
    "alt.flame"); a capitalized title of several words is named only with its capitals ("For
    more information" is running text)."""
    docs = [_doc("sp", "spell"), _doc("fl", "flame"), _doc("fm", "For More Information"),
            *[_doc(f"f{i}", f"Filler {i}", "He was born in a town.") for i in range(25)]]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("Run the spell-checker on alt.flame today.") == []
    assert index.mentioned("Cast a spell; a flame.") == ["sp", "fl"]
    assert index.mentioned("For more information, see For More Information.") == ["fm"]


def test_a_dotted_name_is_named_with_the_capitals_of_each_of_its_words() -> None:
    """Code names are case-sensitive: the method `LockingVisitors.stampedLockVisitor(Object)`
    is not the class `LockingVisitors.StampedLockVisitor`, whose name sits in the same letters."""
    docs = [_doc("cls", "LockingVisitors.StampedLockVisitor"), _doc("lv", "LockingVisitors"),
            *[_doc(f"f{i}", f"Filler {i}", "He was born in a town.") for i in range(25)]]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("Use LockingVisitors.stampedLockVisitor(Object) instead.") == []
    assert index.mentioned("Use LockingVisitors.StampedLockVisitor instead.") == ["cls"]


def test_where_documents_link_a_lower_case_word_names_only_what_its_authors_linked() -> None:
    """In a glossary whose entries cross-reference each other, "long chains of causes" is no
    reference to the entry "chain" unless the entry links there; a capitalized or longer name
    needs no link, and a corpus without links takes every name it finds."""
    def doc(doc_id: str, title: str, text: str = "x", links: tuple[str, ...] = ()) -> Document:
        return Document(doc_id=doc_id, title=title, text=text, source="t", links=links)

    text = "Long chains of causes, said Unix hackers."
    linked = [doc("t", "tick", text, links=("u",)), doc("c", "chain"), doc("u", "Unix"),
              doc("s", "sim", text, links=("c", "u"))]
    index = NameIndex(linked, min_common_docs=100)
    assert [h.doc for h in index.entries(text, exclude="t")] == ["u"]
    assert [h.doc for h in index.entries(text, exclude="s")] == ["c", "u"]
    plain = NameIndex([Document(doc_id=d.doc_id, title=d.title, text=d.text, source="t")
                       for d in linked], min_common_docs=100)
    assert [h.doc for h in plain.entries(text, exclude="t")] == ["c", "u"]


def test_a_title_disambiguated_by_a_year_names_its_subject_only_beside_that_year() -> None:
    """"Steve Johnson (American football, born 1956)": the parenthesis says other Steve
    Johnsons played football, so a football page's "Steve Johnson", a 2007 senior, is not
    the coach born in 1956; a page that gives the year is."""
    docs = [_doc("coach", "Steve Johnson (American football, born 1956)"),
            _doc("team", "2007 Wildcats",
                 "The 2007 football team was led by seniors Steve Johnson and Andre Woodson."),
            _doc("school", "Bethel", "Its football coach Steve Johnson (born 1956) came in 1989."),
            _doc("poet", "Edsel Ford (poet)"),
            _doc("book", "A Book", "The poet Edsel Ford wrote it.")]
    index = NameIndex(docs)
    assert index.mentioned(docs[1].text, exclude="team") == []
    assert index.mentioned(docs[2].text, exclude="school") == ["coach"]
    assert index.mentioned(docs[4].text, exclude="book") == ["poet"]  # a word of its role


def test_a_fathers_name_inside_a_longer_name_is_not_a_mention() -> None:
    """"Salman bin Hamad bin Isa Al Khalifa" is the son; the text names the father only when
    it writes his name on its own."""
    docs = [_doc("king", "Hamad bin Isa Al Khalifa"),
            *[_doc(f"f{i}", f"Filler {i}", "He was born in a town.") for i in range(25)]]
    index = NameIndex(docs, min_common_docs=100)
    assert index.mentioned("She married Prince Salman bin Hamad bin Isa Al Khalifa.") == []
    assert index.mentioned("Hamad bin Isa Al Khalifa is the king.") == ["king"]
