"""Asking for approval while the live table is drawn, in an 80-column terminal.

``toolwire run`` draws its table in place (rich's Live, redrawn 12 times a second) and
asks at the terminal before a call with side effects. The run happens here in a real
pseudo-terminal 80 columns wide, the answer is typed into it (the terminal echoes it,
as a person's typing is), and everything the program wrote is played into a terminal
emulator (pyte): the screen must show the question, wrapped to 80 columns, the typed
answer, and one table, whole, below them — no half-erased copy, no line the emulator
had to wrap.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import termios
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from toolwire import Agent
from toolwire.cli.approve import TerminalApprover, cli_permissions
from toolwire.cli.drive import run_prompts
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from ..safety import cli_tools

pyte = pytest.importorskip("pyte", reason="pyte (a terminal emulator) is a dev dependency")

COLUMNS, ROWS = 80, 60
LONG_NOTE = "remember " * 30 + "the milk"  # arguments far wider than the terminal
END = "\x1b]0;end of the run\x07"  # a title change: a marker that draws nothing


class Terminal:
    """A pseudo-terminal of COLUMNS x ROWS, whose output a thread keeps reading."""

    def __init__(self) -> None:
        self.master, self.slave = pty.openpty()
        size = struct.pack("HHHH", ROWS, COLUMNS, 0, 0)
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, size)
        self.out = open(self.slave, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        self.stdin = open(self.slave, encoding="utf-8", closefd=False)  # noqa: SIM115
        self.received = bytearray()
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.master], [], [], 30)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the slave side closed
                return
            with self._changed:
                self.received += chunk
                self._changed.notify_all()

    def wait_for(self, marker: bytes) -> None:
        """Until the program has written ``marker`` (an event, not a sleep)."""
        with self._changed:
            assert self._changed.wait_for(lambda: marker in self.received, timeout=60), bytes(
                self.received[-400:]
            )

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        self.out.close()
        self.stdin.close()
        os.close(self.slave)
        os.close(self.master)
        self._reader.join(30)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Iterator[Terminal]:
    # rich sizes its console from the standard streams or COLUMNS/LINES, not from the
    # file it writes to: the terminal under test is named by its size.
    monkeypatch.setenv("COLUMNS", str(COLUMNS))
    monkeypatch.setenv("LINES", str(ROWS))
    cli_tools.WRITES.clear()
    term = Terminal()
    yield term
    term.close()


def _run(terminal: Terminal, answer: str) -> int:
    model = ScriptedModel(
        [
            tool_call_turn(
                ("read_notes", {}, "c1"),
                ("write_note", {"text": LONG_NOTE}, "c2"),
                ("find_notes", {"query": "milk"}, "c3"),
            ),
            text_turn("noted"),
        ]
    )
    asker = TerminalApprover(terminal.stdin, terminal.out, interactive=True)

    def approver(request: Any) -> bool | str:
        # As a person meets it: the question comes while the table is on the screen.
        terminal.wait_for("│ write_note │".encode())
        return asker(request)

    agent = Agent(model, cli_tools.TOOLS, approve=approver,
                  permissions=cli_permissions(yes=False, deny=None, ask=None))  # fmt: skip
    status: list[int] = []
    worker = threading.Thread(
        target=lambda: status.append(run_prompts(agent, ["note it"], trace=False, out=terminal.out))
    )
    worker.start()
    terminal.wait_for(b"or type why not]")
    terminal.type(answer + "\n")
    worker.join(60)
    assert not worker.is_alive()
    terminal.out.write(END)
    terminal.out.flush()
    terminal.wait_for(END.encode())
    return status[0]


def _screen(received: bytes) -> list[str]:
    screen = pyte.Screen(COLUMNS, ROWS)
    pyte.ByteStream(screen).feed(received)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _table(lines: list[str]) -> tuple[int, int]:
    """The first and last line of the one table on the screen (rich's heavy-head box)."""
    tops = [i for i, line in enumerate(lines) if line.startswith("┏")]
    bottoms = [i for i, line in enumerate(lines) if line.startswith("└")]
    assert len(tops) == 1 and len(bottoms) == 1, "\n".join(lines)
    return tops[0], bottoms[0]


def _raw_lines(received: bytes) -> list[str]:
    """What was written between line ends and carriage returns, escapes left out."""
    text = received.decode("utf-8", "replace")
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07", "", text)
    return re.split(r"\r\n|\n|\r", text)


@pytest.mark.parametrize("answer", ["y", "not the milk"])
def test_the_question_leaves_the_live_table_whole(terminal: Terminal, answer: str) -> None:
    assert _run(terminal, answer) == 0
    assert (LONG_NOTE in cli_tools.WRITES) == (answer == "y")
    received = bytes(terminal.received)
    lines = _screen(received)
    wide = [line for line in _raw_lines(received) if len(line) > COLUMNS]
    assert not wide  # nothing the terminal had to wrap
    first, last = _table(lines)
    table = lines[first : last + 1]
    widths = {len(line) for line in table}
    assert len(widths) == 1 and widths.pop() <= COLUMNS  # every line of the box whole
    assert all(line[0] in "┏┃┡│└" and line[-1] in "┓┃┩│┘" for line in table), "\n".join(table)
    rows = [line for line in table if line.startswith("│") and line.split("│")[3].strip()]
    assert [r.split("│")[3].strip() for r in rows] == ["read_notes", "write_note", "find_notes"]
    states = "ok" if answer == "y" else "denied"
    assert rows[1].split("│")[5].strip() == states
    # Above the table: the question, wrapped, then the answer as typed (echoed).
    asked = next(i for i, line in enumerate(lines) if line.startswith("toolwire: allow write_note"))
    ends = next(i for i in range(asked, len(lines)) if lines[i].endswith("or type why not]"))
    assert ends - asked >= 2 and lines[ends + 1] == answer and ends + 1 < first
    question = " ".join(line.strip() for line in lines[asked : ends + 1])
    assert LONG_NOTE in question
    # Below it: its caption (the model's last text), then the answer, printed once.
    assert lines[last + 1].strip() == "noted" and lines[last + 2] == "answer: noted"
    # Nothing else drawn: no leftover piece of an earlier table anywhere on the screen.
    others = lines[:first] + lines[last + 1 :]
    assert not any(set(line) & set("┏┃┡│└━─┓┩┘") for line in others), "\n".join(lines)
