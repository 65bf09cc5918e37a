"""Shards: numbered files bounded by record count and bytes, as JSONL, JSONL+zstd or Parquet.

Records are written in the order given, so the same records give the same files. The byte bound
counts the JSON lines before compression; a single record larger than it gets a shard of its own.
Parquet goes through a polars frame built with an explicit schema derived from the kind's JSON
Schema (inferring one would drop keys that first appear late), then Arrow for the `arrow.json`
tags on free-form values.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.parts import atomic_write_bytes
from hopforge.export.records import ShardInfo

Path_ = tuple[str, ...]  # keys from the record's root; "[]" steps into array items


def shard_suffix(*, parquet: bool, zstd: bool) -> str:
    if parquet:
        return ".parquet"
    return ".jsonl.zst" if zstd else ".jsonl"


def json_line(record: dict[str, Any]) -> bytes:
    """The JSONL encoding of one record (keys in the order built, UTF-8)."""
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def json_paths(schema: dict[str, Any], prefix: Path_ = ()) -> list[Path_]:
    """Paths of the free-form (`x-json`) values of a schema."""
    if schema.get("x-json"):
        return [prefix]
    if "properties" in schema:
        return [
            p for k, sub in schema["properties"].items() for p in json_paths(sub, prefix + (k,))
        ]
    if "items" in schema:
        return json_paths(schema["items"], prefix + ("[]",))
    return []


def map_at(value: Any, path: Path_, fn: Any) -> Any:
    """A copy of `value` with `fn` applied to the non-null values found at `path`."""
    if not path:
        return None if value is None else fn(value)
    head, rest = path[0], path[1:]
    if head == "[]":
        return None if value is None else [map_at(v, rest, fn) for v in value]
    if not isinstance(value, dict) or head not in value:
        return value
    return {**value, head: map_at(value[head], rest, fn)}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def polars_dtype(schema: dict[str, Any]) -> Any:
    """The polars type of a JSON Schema node (free-form values are JSON text)."""
    import polars as pl

    if schema.get("x-json"):
        return pl.String
    if "properties" in schema:
        return pl.Struct({k: polars_dtype(v) for k, v in schema["properties"].items()})
    if "items" in schema:
        return pl.List(polars_dtype(schema["items"]))
    kinds = schema.get("type")
    if kinds is None:  # enum or const
        values = schema.get("enum") or [schema.get("const")]
        kinds = "integer" if all(isinstance(v, int) for v in values) else "string"
    kind = next((k for k in ([kinds] if isinstance(kinds, str) else kinds) if k != "null"), "null")
    return {
        "string": pl.String,
        "integer": pl.Int64,
        "number": pl.Float64,
        "boolean": pl.Boolean,
        "null": pl.Null,
    }[kind]


def _tag_json(typ: Any, path: Path_, targets: set[Path_]) -> Any:
    import pyarrow as pa

    if path in targets:
        return pa.json_(typ)
    if pa.types.is_struct(typ):
        return pa.struct(
            [pa.field(f.name, _tag_json(f.type, path + (f.name,), targets)) for f in typ]
        )
    if pa.types.is_large_list(typ):
        return pa.large_list(_tag_json(typ.value_type, path + ("[]",), targets))
    if pa.types.is_list(typ):
        return pa.list_(_tag_json(typ.value_type, path + ("[]",), targets))
    return typ


def parquet_bytes(records: Sequence[dict[str, Any]], schema: dict[str, Any]) -> bytes:
    """Encode records as one Parquet file with the layout of `schema`."""
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = json_paths(schema)
    rows = list(records)
    for path in paths:
        rows = [map_at(r, path, _dumps) for r in rows]
    frame = pl.DataFrame(rows, schema=polars_dtype(schema).to_schema(), orient="row")
    table = frame.to_arrow()
    if paths:
        targets = set(paths)
        fields = [pa.field(f.name, _tag_json(f.type, (f.name,), targets)) for f in table.schema]
        table = table.cast(pa.schema(fields))
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


class ShardWriter:
    """Writes one kind and split as numbered shards, holding at most one shard in memory."""

    def __init__(
        self,
        root: Path,
        kind: str,
        split: str,
        *,
        schema: dict[str, Any],
        max_records: int,
        max_bytes: int,
        parquet: bool = False,
        zstd: bool = False,
    ) -> None:
        self.root, self.kind, self.split, self.schema = root, kind, split, schema
        self.max_records, self.max_bytes = max_records, max_bytes
        self.parquet, self.zstd = parquet, zstd
        self.shards: list[ShardInfo] = []
        self._records: list[dict[str, Any]] = []
        self._lines: list[bytes] = []
        self._bytes = 0

    def add(self, record: dict[str, Any]) -> None:
        line = json_line(record)
        if self._lines and (
            len(self._lines) >= self.max_records or self._bytes + len(line) > self.max_bytes
        ):
            self._flush()
        self._lines.append(line)
        self._bytes += len(line)
        if self.parquet:
            self._records.append(record)

    def close(self) -> list[ShardInfo]:
        """Write the last shard; returns every shard written."""
        if self._lines:
            self._flush()
        return self.shards

    def _flush(self) -> None:
        if self.parquet:
            data = parquet_bytes(self._records, self.schema)
        else:
            data = b"".join(self._lines)
            if self.zstd:
                import zstandard

                data = zstandard.ZstdCompressor(level=10).compress(data)
        suffix = shard_suffix(parquet=self.parquet, zstd=self.zstd)
        rel = f"{self.kind}/{self.split}/part-{len(self.shards):05d}{suffix}"
        atomic_write_bytes(self.root / rel, data)
        self.shards.append(
            ShardInfo(
                path=rel,
                kind=self.kind,
                split=self.split,
                records=len(self._lines),
                bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
            )
        )
        self._records, self._lines, self._bytes = [], [], 0


def write_shards(
    root: Path,
    kind: str,
    split: str,
    records: Iterable[dict[str, Any]],
    *,
    schema: dict[str, Any],
    max_records: int,
    max_bytes: int,
    parquet: bool = False,
    zstd: bool = False,
) -> list[ShardInfo]:
    """Write `records` as root/kind/split/part-NNNNN.* shards; returns what was written."""
    writer = ShardWriter(
        root,
        kind,
        split,
        schema=schema,
        max_records=max_records,
        max_bytes=max_bytes,
        parquet=parquet,
        zstd=zstd,
    )
    for record in records:
        writer.add(record)
    return writer.close()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_shard(path: Path) -> Iterator[dict[str, Any]]:
    """Records of one shard, whatever its encoding (Parquet `arrow.json` values decoded)."""
    name = path.name
    if name.endswith(".parquet"):
        yield from _read_parquet(path)
        return
    if name.endswith(".jsonl.zst"):
        import zstandard

        text = zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read().decode("utf-8")
    elif name.endswith(".jsonl"):
        text = path.read_text(encoding="utf-8")
    else:
        raise HopforgeError(f"{path} is not a shard: expected .jsonl, .jsonl.zst or .parquet")
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def _read_parquet(path: Path) -> Iterator[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    targets: list[Path_] = []

    def find(typ: Any, at: Path_) -> Any:
        if isinstance(typ, pa.JsonType):
            targets.append(at)
            return typ.storage_type
        if pa.types.is_struct(typ):
            return pa.struct([pa.field(f.name, find(f.type, at + (f.name,))) for f in typ])
        if pa.types.is_large_list(typ) or pa.types.is_list(typ):
            inner = find(typ.value_type, at + ("[]",))
            return pa.large_list(inner) if pa.types.is_large_list(typ) else pa.list_(inner)
        return typ

    plain = pa.schema([pa.field(f.name, find(f.type, (f.name,))) for f in table.schema])
    for row in table.cast(plain).to_pylist():
        for at in targets:
            row = map_at(row, at, json.loads)
        yield row
