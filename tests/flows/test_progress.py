"""Stage progress: a bar on a terminal (a real pseudo-terminal here), plain lines otherwise."""

from __future__ import annotations

import fcntl
import io
import os
import select
import struct
import termios

from hopforge.flows.build.engine import TerminalProgress


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = TerminalProgress("trajectories", every_s=0.0, stream=out)
    for done in (10, 20, 30):
        bar(done, 40)
    bar.close()
    lines = out.getvalue().splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "trajectories: 10/40 (25%)", "trajectories: 20/40 (50%)", "trajectories: 30/40 (75%)",
        "trajectories: 30/40 (75%)"]  # and one when the stage ends


def test_lines_are_periodic_not_per_record() -> None:
    out = io.StringIO()
    bar = TerminalProgress("questions", every_s=3600.0, stream=out)
    for done in range(1, 201):
        bar(done, 200)
    bar.close()
    assert out.getvalue().splitlines() == [out.getvalue().splitlines()[0]]
    assert out.getvalue().startswith("questions: 200/200 (100%)")


def test_a_bar_on_a_pseudo_terminal() -> None:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 columns
    with os.fdopen(slave, "w") as tty:
        bar = TerminalProgress("questions", stream=tty)
        for done in (50, 100, 150, 200):
            bar(done, 200)
        bar.close()
        tty.flush()
        shown = ""
        while select.select([master], [], [], 1.0)[0]:
            shown += os.read(master, 65536).decode()
            if "200/200" in shown and shown.endswith("\n"):
                break
    os.close(master)
    assert "questions: 100%" in shown and "200/200" in shown
    assert "\r" in shown  # redrawn in place, not a line per update
