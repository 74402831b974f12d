"""Separator whitespace: what a chat template puts between blocks is not the model's text.

Templates write newlines after ``</think>``, between calls and before a call marker,
and models copy them. That whitespace belongs to the markup, so one text channel
(content, or reasoning) drops it at every marker boundary and at the two ends of the
output, and keeps whitespace inside the text exactly:

* leading whitespace after a boundary (or at the start) is dropped;
* trailing whitespace is held until what follows is known: more text of the same
  channel emits it; two pieces of text around a marker keep one separator (the
  whitespace before the marker, or else the whitespace after it); the end of the
  output drops it.

Streaming and a whole parse see the same pieces in the same order, so they trim alike.
"""

from __future__ import annotations

__all__ = ["SeparatorTrim"]

_SPACE = " \t\r\n"


class SeparatorTrim:
    """Trims one text channel of separator whitespace (see the module docstring)."""

    __slots__ = ("_boundary", "_held", "_lead", "_started")

    def __init__(self) -> None:
        self._held = ""  # trailing whitespace of the text emitted so far
        self._lead = ""  # whitespace after the last boundary, before any text
        self._boundary = True
        self._started = False

    def text(self, piece: str) -> str:
        """Take the next piece of this channel; return what may be emitted now."""
        if self._boundary:
            body = piece.lstrip(_SPACE)
            if not body:
                self._lead += piece
                return ""
            # Two pieces of text around a marker keep one separator: the whitespace
            # before the marker, or else the whitespace after it.
            self._lead += piece[: len(piece) - len(body)]
            sep = (self._held or self._lead) if self._started else ""
            self._boundary = False
            self._held = self._lead = ""
            piece = sep + body
        body = piece.rstrip(_SPACE)
        if not body:
            self._held += piece
            return ""
        out = self._held + body if self._held else body
        self._held = piece[len(body) :]
        self._started = True
        return out

    def boundary(self) -> None:
        """A marker came: the whitespace right after it is a separator."""
        if not self._boundary:
            self._boundary = True
            self._lead = ""
