"""Subcommands `hopforge index` (BM25 + dense indexes of a build) and `hopforge search`."""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from hopforge.corpus.errors import HopforgeError
from hopforge.corpus.index import IndexConfig, build_index
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.search import Searcher
from hopforge.corpus.textio import json_lines
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.flags import add_setting, given

# the IndexConfig fields whose flags (`add_setting`) set them as they are
_FLAG_FIELDS = ("model", "device", "dtype", "batch_size", "max_seq_length", "passage_words",
                "passage_overlap", "index_kind", "flat_threshold")

BATCH = 64


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "index", wrap=True, help="build the BM25 and dense indexes of a build's corpus",
        description="Split the corpus of BUILD into passages and write BUILD/index/ (BM25, dense "
                    "faiss index, manifest). Settings come from the [index] table of "
                    "BUILD/build.toml when present; flags override them. Re-indexing embeds only "
                    "passages whose text changed.")
    p.add_argument("build", type=Path, metavar="BUILD", help="build directory (with corpus/)")
    p.add_argument("--no-dense", action="store_true", help="BM25 only: no embeddings, no faiss")
    p.add_argument("--force", action="store_true",
                   help="index always rebuilds (embedding only passages whose text changed); "
                   "the flag is accepted so that every stage command takes it")
    for name in _FLAG_FIELDS:
        add_setting(p, IndexConfig, name)
    p.add_argument("--no-progress", action="store_true", help="no progress bar while embedding")
    p.set_defaults(func=run_index)

    s = add_command(sub, "search", wrap=True, help="search a build's index",
        description="Search BUILD for QUERY, or for every line {\"id\", \"query\"} of --queries "
                    "FILE.jsonl (then one JSON line per query is printed: {\"id\", \"hits\": "
                    "[{\"doc_id\", \"title\", \"score\"}, ...]}).")
    s.add_argument("build", type=Path, metavar="BUILD", help="build directory with an index")
    s.add_argument("query", nargs="?", metavar="QUERY", help="the query text")
    s.add_argument("--queries", type=Path, metavar="FILE.jsonl",
                   help="JSONL file of {\"id\": ..., \"query\": ...} lines")
    s.add_argument("-k", type=int, default=10, help="results per query (default 10)")
    s.add_argument("--mode", choices=("bm25", "dense", "hybrid"),
                   help="retrieval mode (default: hybrid when the index has vectors, else bm25)")
    s.add_argument("--json", action="store_true", help="print the hits of QUERY as JSON")
    s.set_defaults(func=run_search)


def index_config_from(args: argparse.Namespace) -> Any:
    """IndexConfig from BUILD/build.toml's [index] table, overridden by command-line flags."""

    values: dict[str, Any] = {}
    toml_path = BuildDir.at(args.build).config
    if toml_path.is_file():
        try:
            values.update(tomllib.loads(toml_path.read_text("utf-8")).get("index", {}))
        except tomllib.TOMLDecodeError as exc:
            raise HopforgeError(f"{toml_path} is not valid TOML ({exc}): fix or remove it") from exc
    values.update(given(args, _FLAG_FIELDS))
    if args.no_dense:
        values["dense"] = False
    return IndexConfig.from_dict(values)


def run_index(args: argparse.Namespace) -> int:
    """`hopforge index BUILD`."""

    config = index_config_from(args)
    manifest = build_index(BuildDir.at(args.build), config, progress=not args.no_progress)
    dense = manifest["dense"]
    times = manifest["times"]
    print(f"indexed {manifest['documents']} documents as {manifest['passages']} passages "
          f"({manifest['bm25']['terms']} terms) in {times['total_s']:.1f} s")
    if dense:
        print(f"dense: {dense['model']} dim {dense['dim']}, faiss {dense['kind']}, "
              f"{dense['embedded']} passages embedded, {dense['reused']} reused from cache")
    print(f"wrote {BuildDir.at(args.build).index}")
    return 0


def _read_queries(path: Path) -> list[tuple[Any, str]]:
    if not path.is_file():
        raise HopforgeError(f"queries file {path} does not exist: give a JSONL file of "
                            '{"id": ..., "query": ...} lines')
    out = []
    for number, row in json_lines(path, 'each line must be {"id": ..., "query": "..."}'):
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("query"), str):
            raise HopforgeError(f'{path}:{number}: expected an object with "id" and a string '
                                f'"query", got {json.dumps(row, ensure_ascii=False)[:120]!r}')
        out.append((row["id"], row["query"]))
    return out


def run_search(args: argparse.Namespace) -> int:
    """`hopforge search BUILD QUERY` or `hopforge search BUILD --queries FILE.jsonl`."""

    if (args.query is None) == (args.queries is None):
        raise HopforgeError("give either a QUERY or --queries FILE.jsonl (exactly one of them)")
    if args.k < 1:
        raise HopforgeError(f"-k {args.k} is out of range: use 1 or more")
    searcher = Searcher.load(BuildDir.at(args.build))
    mode = args.mode or searcher.default_mode
    if args.queries is not None:
        queries = _read_queries(args.queries)
        for lo in range(0, len(queries), BATCH):
            chunk = queries[lo : lo + BATCH]
            results = searcher.search_batch([q for _, q in chunk], k=args.k, mode=mode)
            for (qid, _), hits in zip(chunk, results, strict=True):
                row = {"id": qid, "hits": [{"doc_id": h.doc_id, "title": h.title,
                                            "score": h.score} for h in hits]}
                sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        return 0
    hits = searcher.search(args.query, k=args.k, mode=mode)
    if args.json:
        print(json.dumps({"query": args.query, "mode": mode, "hits": [h.to_row() for h in hits]},
                         ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print(f"no results for {args.query!r} ({mode})")
    for h in hits:
        print(f"{h.rank:>3}. {h.score:8.4f}  {h.title}  [{h.doc_id}]")
        print(f"       {h.snippet}")
    return 0
