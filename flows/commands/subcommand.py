"""What the `hopforge` subcommands share: their parser and the progress bar of a long run."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tqdm import tqdm


def add_command(sub: argparse._SubParsersAction, name: str, *,  # type: ignore[type-arg]
                help: str, description: str, wrap: bool = False,
                **options: Any) -> argparse.ArgumentParser:
    """The parser of subcommand `name`; `description` is printed as written (line breaks
    kept), or with `wrap` as one paragraph wrapped to the terminal."""
    formatter = argparse.HelpFormatter if wrap else argparse.RawDescriptionHelpFormatter
    return sub.add_parser(name, help=help, description=description, formatter_class=formatter,
                          **options)


@contextmanager
def progress_bar(unit: str, desc: str) -> Iterator[Callable[[int, int], None]]:
    """A bar on stderr (shown only on a terminal) and the `progress(done, total)` that moves it;
    the bar is closed when the block ends, however it ends."""
    bar = tqdm(total=0, unit=unit, desc=desc, file=sys.stderr, disable=not sys.stderr.isatty())

    def progress(done: int, total: int) -> None:
        bar.total = total
        bar.n = done
        bar.refresh()

    try:
        yield progress
    finally:
        bar.close()
