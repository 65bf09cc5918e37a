"""`hopforge build`'s closing summary and the dashboard report show ingest problems by location."""

from __future__ import annotations

from pathlib import Path

from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.store import write_corpus
from hopforge.flows.build.artifacts import stage_markdown, stage_reports
from hopforge.flows.build.summary import summary_markdown, summary_text


def _build_with_bad_records(tmp_path: Path) -> BuildDir:
    source = tmp_path / "notes.jsonl"
    source.write_text(
        '{"title": "Alpha", "text": "First note."}\n'
        '{"title": "Beta", "text": "Second note."\n'  # missing brace
        '{"title": "Gamma", "text": "Third note."}\n'
        '{"title": "Delta"}\n',  # no text
        encoding="utf-8",
    )
    result = ingest_paths([source])
    build = BuildDir.at(tmp_path / "build")
    write_corpus(build, result.documents, result.stats)
    return build


def test_build_summary_lists_malformed_records_with_their_lines(tmp_path: Path) -> None:
    build = _build_with_bad_records(tmp_path)
    rows = [{"stage": "ingest", "status": "done", "seconds": 0.1, "stats": {"documents": 2}}]
    text = summary_text(build, rows)
    assert "input problems: malformed 2" in text
    assert f"{tmp_path / 'notes.jsonl'}:2: invalid JSON" in text
    assert f"{tmp_path / 'notes.jsonl'}:4:" in text
    markdown = summary_markdown(build, rows)
    assert "input problems: malformed 2" in markdown and "notes.jsonl:2" in markdown


def test_dashboard_report_of_ingest_lists_first_problems(tmp_path: Path) -> None:
    build = _build_with_bad_records(tmp_path)
    row = {"stage": "ingest", "status": "done", "seconds": 0.1, "stats": {"documents": 2}}
    markdown = stage_markdown("ingest", row, stage_reports(build, "ingest"))
    assert "## ingest.json: first problems" in markdown
    assert "notes.jsonl:2: invalid JSON" in markdown
    assert "| malformed | 2 |" in markdown


def test_clean_build_summary_has_no_ingest_block(tmp_path: Path) -> None:
    source = tmp_path / "notes.jsonl"
    source.write_text('{"title": "Alpha", "text": "First note."}\n', encoding="utf-8")
    result = ingest_paths([source])
    build = BuildDir.at(tmp_path / "build")
    write_corpus(build, result.documents, result.stats)
    text = summary_text(build, [{"stage": "ingest", "status": "done", "seconds": 0.1}])
    assert "input problems" not in text
