import pytest
from hopforge.filters.answers import (
    exact_match,
    gold_answers,
    mentions_answer,
    normalize_answer,
    token_f1,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Grey Needle", "grey needle"),
        ("  the   GREY-needle!! ", "grey needle"),
        ("An apple, a day.", "apple day"),
        ("Theatre of the Absurd", "theatre of absurd"),  # only whole-word articles go
        ("“Dorran Pell”", "dorran pell"),
        ("", ""),
    ],
)
def test_normalize_follows_squad_rules(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_takes_the_best_of_answer_and_aliases() -> None:
    golds = gold_answers("Dorran Pell", ["D. Pell", "dorran pell", ""])
    assert golds == ("Dorran Pell", "D. Pell")  # empty and repeated aliases dropped
    assert exact_match("the dorran pell.", golds) == 1.0
    assert exact_match("d pell", golds) == 1.0
    assert exact_match("Pell", golds) == 0.0
    assert exact_match("", golds) == 0.0


def test_token_f1_known_values() -> None:
    # prediction 3 tokens, gold 2, overlap 2: P = 2/3, R = 1, F1 = 0.8
    assert token_f1("Dorran Pell engineer", ["Dorran Pell"]) == pytest.approx(0.8)
    # best over golds: the alias matches fully
    assert token_f1("Pell", ["Dorran Pell", "Pell"]) == pytest.approx(1.0)
    # repeated tokens count with multiplicity (Counter intersection)
    assert token_f1("pell pell", ["pell"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("nothing here", ["Dorran Pell"]) == 0.0
    assert token_f1("the", ["Dorran Pell"]) == 0.0  # normalizes to nothing


def test_mentions_answer_needs_whole_tokens() -> None:
    golds = ["Quillon"]
    assert mentions_answer("She was born in the port of Quillon in 1815.", golds)
    assert not mentions_answer("The Quillonese harbour.", golds)
    assert not mentions_answer("anything", [""])
