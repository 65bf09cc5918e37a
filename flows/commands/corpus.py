"""Subcommands for ingestion: `hopforge ingest SOURCE... --out BUILD`."""

from __future__ import annotations

import argparse
from pathlib import Path

from hopforge.corpus.builtin import builtin_corpus_path
from hopforge.corpus.ingest import ingest_paths
from hopforge.corpus.layout import BuildDir
from hopforge.corpus.problems import IngestError
from hopforge.corpus.rawdocs import DEFAULT_MAX_DOC_CHARS
from hopforge.corpus.stats import format_stats
from hopforge.corpus.store import write_corpus
from hopforge.flows.commands.subcommand import add_command
from hopforge.flows.config.build_file import BUILTIN_SOURCES

INGEST_HELP = """\
Read documents from SOURCE files or folders into BUILD/corpus/ (Parquet documents and the link
graph) and print corpus statistics (also saved to BUILD/reports/ingest.json).

Formats, detected from each source (override with --format):
  jsonl            JSONL or a JSON list of {"id"?, "title", "text", "url"?, "aliases"?, "links"?}
                   (plain paragraph lists [{"title", "text"}] too)
  parquet          the same fields as Parquet columns
  dictd            a dictd database: NAME.index + NAME.dict[.dz] ({braces} become links)
  hotpotqa         HotpotQA / 2WikiMultihopQA question files (context paragraphs)
  musique          MuSiQue question files (paragraphs)
  title-sentences  a {title: [sentences]} corpus file
  folder           a folder of .txt / .md / .html files (<a href> to another file is a link)
  mediawiki        a MediaWiki XML dump (.xml, .xml.bz2, ...): wikilinks, redirects as aliases
The word `builtin` (or `builtin:jargon`, as in a build file) as SOURCE stands for the built-in
Jargon File corpus, `builtin:wiki` for the built-in Wikipedia paragraphs.

A malformed record is reported with its file and line, skipped and counted (--strict stops at
the first one). Sources without links of their own get links by title mention.
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add this module's subcommands to the `hopforge` parser."""
    p = add_command(sub, "ingest", description=INGEST_HELP,
                    help="read sources into a build's corpus (documents + links)")
    p.add_argument("sources", nargs="+", metavar="SOURCE", help="files or folders to read")
    p.add_argument("--out", required=True, metavar="BUILD", help="build directory to write")
    p.add_argument("--force", action="store_true",
                   help="ingest always reads its sources again and rewrites the corpus; the "
                   "flag is accepted so that every stage command takes it")
    p.add_argument(
        "--format", dest="fmt", metavar="F", help="format of every SOURCE (default: detect)"
    )
    p.add_argument("--strict", action="store_true", help="fail on the first malformed record")
    p.add_argument(
        "--source-name",
        metavar="NAME",
        help="source name for doc ids (default: each file's name without suffixes)",
    )
    p.add_argument(
        "--max-doc-chars",
        type=int,
        default=None,
        metavar="N",
        help="split documents longer than N characters into parts (default: 200000)",
    )
    p.add_argument(
        "--mention-links",
        choices=("auto", "always", "never"),
        default="auto",
        help="add links by title mention: to sources without links (auto), to all, or none",
    )
    p.add_argument(
        "--show-problems",
        type=int,
        default=20,
        metavar="N",
        help="print the first N problem descriptions (default: 20)",
    )
    p.set_defaults(func=run_ingest)


def _resolve_source(source: str) -> Path:
    path = Path(source)
    if source in ("builtin", *BUILTIN_SOURCES) and not path.exists():

        return builtin_corpus_path(source)
    return path


def run_ingest(args: argparse.Namespace) -> int:
    """Ingest the sources, write the corpus, print stats; returns the exit code."""

    sources = [_resolve_source(s) for s in args.sources]
    result = ingest_paths(
        sources,
        fmt=args.fmt,
        strict=args.strict,
        source_name=args.source_name,
        max_doc_chars=args.max_doc_chars or DEFAULT_MAX_DOC_CHARS,
        mention_links=args.mention_links,
    )
    if not result.documents:
        raise IngestError(
            f"No documents were read from {', '.join(map(str, sources))} "
            f"({result.stats['problems']['malformed']} malformed records). Check the paths and "
            "--format; `hopforge ingest --help` lists the formats."
        )
    build = BuildDir.at(args.out)
    write_corpus(build, result.documents, result.stats)
    for message in result.problems[: args.show_problems]:
        print(f"problem: {message}")
    if len(result.problems) > args.show_problems:
        print(
            f"... {len(result.problems) - args.show_problems} more problem descriptions not shown"
        )
    print(format_stats(result.stats))
    print(
        f"wrote {len(result.documents):,} documents to {build.corpus} and stats to "
        f"{build.reports / 'ingest.json'}"
    )
    return 0
