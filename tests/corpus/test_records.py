import json
from pathlib import Path

from hopforge.corpus import parts
from hopforge.corpus.records import Document, Hit, make_doc_id
from hopforge.filters.records import Score
from hopforge.synth.records import Checks, Fault, Hop, Question, ToolCall, Trajectory, Turn


def test_doc_id_is_stable_and_source_scoped() -> None:
    assert make_doc_id("jargon", "hack") == make_doc_id("jargon", "hack")
    assert make_doc_id("jargon", "hack") != make_doc_id("foldoc", "hack")


def test_rows_round_trip_through_json() -> None:
    doc = Document(doc_id="d1", title="T", text="x", source="s", aliases=("a",), links=("d2",))
    assert Document.from_row(json.loads(json.dumps(doc.to_row()))) == doc
    q = Question(
        qid="q1",
        question="Which?",
        answer="A",
        hops=(Hop(from_doc="d1", to_doc="d2", clue="c", bridge="B"),),
        evidence=("d1", "d2"),
        checks=Checks(shortcut_rank=7),
    )
    assert Question.from_row(json.loads(json.dumps(q.to_row()))) == q
    t = Trajectory(
        tid="t1",
        qid="q1",
        teacher="scripted",
        sample=0,
        turns=(
            Turn(index=0, raw="{}", call=ToolCall(name="search", arguments={"query": "x"})),
            Turn(index=1, raw="?", call=None, schema_valid=False, fault=Fault(kind="empty")),
        ),
    )
    assert Trajectory.from_row(json.loads(json.dumps(t.to_row()))) == t
    s = Score(tid="t1", qid="q1", turn_rewards=(0.5, -1.0))
    assert Score.from_row(json.loads(json.dumps(s.to_row()))) == s


def test_a_hit_row_has_every_field_in_order() -> None:
    """Hit.to_row is written out for speed; it must stay what asdict gives, field for field."""
    import dataclasses

    hit = Hit(doc_id="d1", title="T", score=1.25, rank=2, snippet="s", passage_id="d1#0")
    assert list(hit.to_row().items()) == list(dataclasses.asdict(hit).items())


def test_checks_passed_fails_on_any_check() -> None:
    assert Checks().passed
    assert not Checks(shortcut=True).passed
    assert not Checks(unique=False).passed
    assert not Checks(near_duplicate_of="q0").passed


def test_parts_are_visible_only_when_done(tmp_path: Path) -> None:
    parts.write_part(tmp_path, 0, [{"a": 1}])
    (tmp_path / "part-00001.jsonl").write_text('{"a": 2}\n')  # no marker: unfinished
    assert list(parts.read_parts(tmp_path)) == [{"a": 1}]
    assert parts.done_indexes(tmp_path) == {0}
    parts.clear_parts(tmp_path)
    assert list(tmp_path.iterdir()) == []
