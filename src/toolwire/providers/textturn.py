"""One model turn from plain output text (kept for its import path).

The raw-completion provider (text chunks in SSE) and the embedded local model (text
pieces from llama.cpp) both produce plain text. The decoder that turns it into events
and a ``Turn`` lives in :mod:`toolwire.formats.decode`; :class:`TextTurn` is that
:class:`~toolwire.formats.decode.TextTurnDecoder`, with :meth:`close` requiring
:meth:`end` first (a text stream that stops without a finish reason was cut).
"""

from __future__ import annotations

from typing import Any

from ..formats import Format
from ..formats.decode import TextTurnDecoder

__all__ = ["TextTurn"]


class TextTurn(TextTurnDecoder):
    """:class:`~toolwire.formats.decode.TextTurnDecoder` as the providers use it.

    Args:
        fmt: The model's tool-call format.
        id_prefix: Prefix of generated call ids (random when ``None``).
        **options: ``strict`` / ``hold_calls``, as for the decoder.
    """

    def __init__(self, fmt: Format, *, id_prefix: str | None = None, **options: Any) -> None:
        super().__init__(fmt, id_prefix=id_prefix, require_end=True, **options)
