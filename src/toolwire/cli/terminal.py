"""Text for the user's terminal: control characters shown, never obeyed.

Whatever the CLI prints from a run — a tool's result (a fetched page), the model's text,
a prompt, an argument — may hold terminal escape sequences (``ESC ]8;;`` hyperlinks,
``ESC [2J``, a title change, OSC 52 clipboard writes). Printed raw, the terminal runs
them. Every C0 control but newline and tab, DEL, every C1 control and the Unicode
bidirectional overrides are therefore written as visible escapes (``\\x1b``,
``\\u202e``) by :func:`printable`, and :class:`EscapingWriter` does the same to a whole
stream (the plain and trace views of ``toolwire run``).
"""

from __future__ import annotations

import re
from typing import TextIO

__all__ = ["EscapingWriter", "printable"]

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with its control characters (but newline and tab) as visible escapes."""
    return _CONTROLS.sub(_visible, text)


class EscapingWriter:
    """A text stream that writes everything through :func:`printable`.

    Args:
        stream: Where the escaped text goes (``sys.stdout``).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text``, control characters escaped."""
        return self.stream.write(printable(text))

    def flush(self) -> None:
        """Flush the stream."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream is a terminal."""
        return self.stream.isatty()
