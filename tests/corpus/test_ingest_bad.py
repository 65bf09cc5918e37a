"""Bad input: malformed records, non-UTF-8 bytes, empty and duplicate documents, huge documents."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.problems import IngestError, MalformedRecordError, Problems, UnknownFormatError
from hopforge.flows.commands.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"


def test_bad_jsonl_records_are_reported_with_line_skipped_and_counted() -> None:
    result = ingest_paths([DATA / "docs.jsonl"])
    assert [d.title for d in result.documents] == [
        "Mount Fendle",
        "Tessel Hills",
        "Ilse Varro",
        "Caf\ufffd Orvin",  # latin-1 byte replaced, not dropped
        "Lake Orvin",
    ]
    assert result.stats["problems"] == {
        "malformed": 3,
        "non_utf8": 1,
        "empty": 1,
        "duplicate_id": 1,
        "chunked": 0,
    }
    text = "\n".join(result.problems)
    for line in (4, 8, 9):  # broken JSON, no text, not an object
        assert f"docs.jsonl:{line}: " in text
    assert "docs.jsonl:7: bytes that are not UTF-8" in text
    assert "docs.jsonl:5: 'Empty' has no text; skipped" in text
    assert "docs.jsonl:6: duplicate id 'fendle' (first at" in text and "kept the first" in text
    # The first of the duplicates is the one kept.
    fendle = next(d for d in result.documents if d.title == "Mount Fendle")
    assert fendle.text.startswith("Mount Fendle is the highest summit")


def test_strict_fails_on_the_first_malformed_record_with_its_location() -> None:
    with pytest.raises(MalformedRecordError) as info:
        ingest_paths([DATA / "docs.jsonl"], strict=True)
    assert info.value.where.endswith("docs.jsonl:4")
    assert "invalid JSON" in str(info.value) and "one complete JSON object" in str(info.value)


def test_strict_accepts_clean_input() -> None:
    result = ingest_paths([DATA / "calden", DATA / "wiki_dump.xml"], strict=True)
    assert len(result.documents) == 7


def test_broken_json_list_keeps_what_came_before_and_names_the_line() -> None:
    result = ingest_paths([DATA / "broken_list.json"])
    assert [d.title for d in result.documents] == ["Alpha", "Beta"]
    assert result.stats["problems"]["malformed"] == 1
    assert "broken_list.json:4: invalid JSON at column 20" in result.problems[0]
    with pytest.raises(MalformedRecordError, match=r"broken_list\.json:4"):
        ingest_paths([DATA / "broken_list.json"], strict=True)


def test_non_utf8_bytes_in_a_whole_json_file_are_replaced_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "corpus.json"
    path.write_bytes(b'{\n "Caf\xe9": ["A caf\xe9."],\n "Tea": ["Tea is hot."]\n}\n')
    result = ingest_paths([path])
    assert [d.title for d in result.documents] == ["Caf\ufffd", "Tea"]
    assert result.stats["problems"]["non_utf8"] == 1
    assert "corpus.json:2: bytes that are not UTF-8" in result.problems[0]


def test_very_large_documents_are_split_never_dropped(tmp_path: Path) -> None:
    paragraphs = [
        f"Paragraph {i} talks about the Marrow River and Lake Orvin. " * 6 for i in range(12)
    ]
    big = "\n\n".join(paragraphs)
    path = tmp_path / "big.jsonl"
    rows = [
        {"id": "big", "title": "Big", "text": big},
        {"id": "small", "title": "Small", "text": "x"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = ingest_paths([path], max_doc_chars=1000)
    parts = [d for d in result.documents if d.title.startswith("Big")]
    assert len(parts) >= -(-len(big) // 1000)
    assert all(len(p.text) <= 1000 for p in parts)
    assert parts[0].title == "Big" and parts[1].title == "Big (part 2)"
    assert " ".join(p.text for p in parts).split() == big.split()  # nothing lost
    for a, b in itertools.pairwise(parts):
        assert b.doc_id in a.links
    assert result.stats["problems"]["chunked"] == 1
    assert "split into" in result.problems[0] and "--max-doc-chars" in result.problems[0]
    assert ingest_paths([path]).stats["problems"]["chunked"] == 0  # default limit keeps it whole


def _dictd(tmp_path: Path, index: str) -> Path:
    shutil.copy(DATA / "calden.dict.dz", tmp_path / "bad.dict.dz")
    (tmp_path / "bad.index").write_text(index, encoding="utf-8")
    return tmp_path / "bad"


def test_bad_dictd_index_lines_are_reported(tmp_path: Path) -> None:
    good = (DATA / "calden.index").read_text(encoding="utf-8")
    base = _dictd(tmp_path, good + "no tabs here\nfar away\tZZZZ\tBA\nbad digits\t!!\tA\n")
    result = ingest_paths([base])
    assert len(result.documents) == 4
    assert result.stats["problems"]["malformed"] == 3
    text = "\n".join(result.problems)
    lines = len(good.splitlines())
    assert f"bad.index:{lines + 1}: not a dictd index line" in text
    assert f"bad.index:{lines + 2}: entry 'far away' points at bytes" in text
    assert f"bad.index:{lines + 3}: not a dictd index line (bad base64 number)" in text


def test_damaged_or_unknown_files_raise_errors_that_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="no such file or folder"):
        ingest_paths([tmp_path / "missing.jsonl"])
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01binary junk")
    with pytest.raises(UnknownFormatError, match="junk.bin.*--format"):
        ingest_paths([junk])
    with pytest.raises(UnknownFormatError, match="Use one of: jsonl, parquet, dictd"):
        ingest_paths([DATA / "docs.jsonl"], fmt="csv")
    damaged = tmp_path / "docs.jsonl.gz"
    lines = b"".join(b'{"title": "T%d", "text": "B"}\n' % i for i in range(20_000))
    packed = gzip.compress(lines)
    damaged.write_bytes(packed[: len(packed) // 2])
    with pytest.raises(IngestError, match=r"docs\.jsonl\.gz:\d+: could not read on"):
        ingest_paths([damaged], fmt="jsonl")
    table = tmp_path / "table.parquet"
    pq.write_table(pa.table({"name": ["a"]}), table)
    with pytest.raises(UnknownFormatError, match="no text column \\(columns: name\\)"):
        ingest_paths([table])
    odd = tmp_path / "odd.json"
    odd.write_text('[{"question": "no context"}]', encoding="utf-8")
    with pytest.raises(UnknownFormatError, match="keys: question"):
        ingest_paths([odd])


def test_truncated_mediawiki_dump_keeps_complete_pages(tmp_path: Path) -> None:
    text = (DATA / "wiki_dump.xml").read_text(encoding="utf-8")
    cut = text.index("<title>Fendle Range</title>")
    path = tmp_path / "cut.xml"
    path.write_text(text[:cut], encoding="utf-8")
    result = ingest_paths([path])
    assert {d.title for d in result.documents} == {"Mount Fendle", "Tessel Hills", "Ilse Varro"}
    assert result.stats["problems"]["malformed"] == 1
    assert "cut.xml" in result.problems[0] and "invalid dump XML" in result.problems[0]
    other = tmp_path / "other.xml"
    other.write_text("<rss><channel/></rss>", encoding="utf-8")
    with pytest.raises(IngestError, match="not a MediaWiki XML dump"):
        ingest_paths([other], fmt="mediawiki")


def test_problem_messages_are_capped_but_counts_are_complete() -> None:
    problems = Problems(max_messages=2)
    for i in range(5):
        problems.malformed(f"f.jsonl:{i}", "bad")
    assert problems.summary()["malformed"] == 5
    assert len(problems.messages) == 3 and problems.messages[-1].startswith("... more problems")


def test_cli_prints_the_malformed_count_and_strict_exits_with_the_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(DATA / "docs.jsonl"), "--out", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "malformed records skipped: 3" in out
    assert "problem: " in out and "docs.jsonl:4" in out
    code = main(["ingest", str(DATA / "docs.jsonl"), "--out", str(tmp_path / "s"), "--strict"])
    err = capsys.readouterr().err
    assert code == 2
    assert "docs.jsonl:4: invalid JSON" in err and "Traceback" not in err
    assert not (tmp_path / "s" / "corpus").exists()
