"""Separator whitespace: what a chat template puts between blocks is not the model's text.

Templates write newlines after ``</think>``, between calls and before a call marker,
and models copy them. That whitespace belongs to the markup, so one text channel
(content, or reasoning) drops it at every marker boundary and at the two ends of the
output, and keeps whitespace inside the text exactly:

* leading whitespace after a boundary (or at the start) is dropped;
* trailing whitespace is held until what follows is known: more text of the same
  channel emits it, a boundary followed by more text emits it once (two pieces of
  content around a call keep the whitespace that preceded the call), the end of the
  output drops it.

Streaming and a whole parse see the same pieces in the same order, so they trim alike.
"""

from __future__ import annotations

__all__ = ["SeparatorTrim"]

_SPACE = " \t\r\n"


class SeparatorTrim:
    """Trims one text channel of separator whitespace (see the module docstring)."""

    __slots__ = ("_boundary", "_held")

    def __init__(self) -> None:
        self._held = ""
        self._boundary = True

    def text(self, piece: str) -> str:
        """Take the next piece of this channel; return what may be emitted now."""
        if self._boundary:
            piece = piece.lstrip(_SPACE)
            if not piece:
                return ""
            self._boundary = False
        body = piece.rstrip(_SPACE)
        if not body:
            self._held += piece
            return ""
        out = self._held + body if self._held else body
        self._held = piece[len(body) :]
        return out

    def boundary(self) -> None:
        """A marker came: the whitespace right after it is a separator."""
        self._boundary = True
