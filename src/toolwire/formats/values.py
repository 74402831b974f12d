"""Where a raw-text argument value ends, when its closing tag may also be in the value.

The markup families (GLM, Kimi K3, DeepSeek's DSML) write string values raw, so a
value may hold its own closing tag (``</arg_value>``, ``<|close|>argument<|sep|>``,
DeepSeek's DSML ``parameter`` end tag). The rule is the same for all of them: a
closing tag ends the value only when what follows it continues the format's grammar
(another argument, the end of the call); any other closing tag is part of the value.
:func:`value_end` is that rule, on a buffer and a cursor, so each family's value
state is a few lines.
"""

from __future__ import annotations

from .markers import MarkerSet, continues

__all__ = ["value_end"]


def value_end(
    text: str, pos: int, close: MarkerSet, grammar: tuple[str, ...], final: bool
) -> tuple[int, int]:
    """Find the end of the raw value that starts at ``text[pos]``.

    Args:
        text: The buffer.
        pos: Where the unread part of the value starts.
        close: The value's closing tag (a one-marker set: its pattern and hold-back).
        grammar: What may follow a closing tag that really closes (checked after
            optional whitespace, as :func:`~toolwire.formats.markers.continues`); the
            end of the output continues the grammar too.
        final: No more input will come: decide everything instead of holding back.
            Positional: a keyword argument makes CPython 3.11 take its generic call
            path, and this runs once per delta inside a value.

    Returns:
        ``(stop, resume)``: ``text[pos:stop]`` is value text, safe to emit now. When
        the value ended, ``resume`` is the index right after its closing tag; while it
        has not (or the buffer cannot tell yet), ``resume`` is ``-1`` and
        ``text[stop:]`` must be kept for the next piece of input.
    """
    # One loop over the closing tags in the buffer, not one parser step per tag: a
    # value that mentions its closing tag many times is still scanned once.
    start = pos
    while True:
        found = close.pattern.search(text, start)
        if found is None:
            return (len(text) if final else len(text) - close.holdback(text, start)), -1
        at, after = found.span()
        follows = continues(text, after, grammar, final=final, at_end=True)
        if follows:
            return at, after
        if follows is None:
            return at, -1
        start = after
