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

    __slots__ = ("_lead", "_started", "at_boundary", "held")

    def __init__(self) -> None:
        self.held = ""  # trailing whitespace of the text emitted so far
        self._lead = ""  # whitespace after the last boundary, before any text
        self.at_boundary = True  # no text of this channel since the last marker
        self._started = False

    def text(self, piece: str) -> str:
        """Take the next (non-empty) piece of this channel; return what may be emitted
        now."""
        if not self.at_boundary:
            if not self.held and piece[-1] not in _SPACE:
                return piece  # the common case: text that continues text, no space held
            body = piece.rstrip(_SPACE)
            if not body:
                self.held += piece
                return ""
            out = self.held + body if self.held else body
            self.held = piece[len(body) :] if len(body) != len(piece) else ""
            return out
        if piece[0] in _SPACE:
            body = piece.lstrip(_SPACE)
            if not body:
                self._lead += piece
                return ""
            self._lead += piece[: len(piece) - len(body)]
            piece = body
        # Two pieces of text around a marker keep one separator: the whitespace before
        # the marker, or else the whitespace after it.
        sep = (self.held or self._lead) if self._started else ""
        self.at_boundary = False
        self._lead = ""
        self._started = True
        body = piece.rstrip(_SPACE)  # not empty: the piece starts with a non-space
        self.held = piece[len(body) :] if len(body) != len(piece) else ""
        return sep + body if sep else body

    def boundary(self) -> None:
        """A marker came: the whitespace right after it is a separator.

        Setting :attr:`at_boundary` does the same (a channel collects whitespace after
        a boundary only while it is at one, so there is nothing else to reset).
        """
        self.at_boundary = True
