"""Finding marker strings in text that arrives in pieces.

:class:`MarkerSet` finds the earliest marker in a buffer (one compiled alternation, so
each character is scanned once) and measures the longest buffer suffix that could
still grow into a marker: only that suffix is held back, everything before it is
emitted at once.

A marker set depends only on its markers and is never changed after it is built, so
streams share them: the families build theirs once, as module constants, or through
:func:`marker_set` where the markers depend on a variant (building them again at every
stream's start was about a fifth of the format tests' CPU).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ..errors import CallerError

__all__ = ["MarkerSet", "continues", "marker_set", "opens_reasoning", "skip_whitespace"]


class MarkerSet:
    """A fixed set of marker strings, searched in linear time.

    ``search`` uses one compiled alternation (longest marker first, so a marker that is
    a prefix of another never wins over it at the same position); ``holdback`` measures
    the longest suffix of a buffer that is a proper prefix of some marker, in time
    bounded by the longest marker, never by the buffer.

    One instance is shared by every stream that searches the same markers: nothing
    assigns its attributes after ``__init__``.
    """

    __slots__ = ("_ends", "_first", "_lead", "_max", "_prefixes", "markers", "pattern")

    def __init__(self, markers: Iterable[str]) -> None:
        self.markers = tuple(sorted(set(markers), key=lambda m: (-len(m), m)))
        if not self.markers or "" in self.markers:
            raise CallerError("a MarkerSet needs at least one non-empty marker")
        # Public for the readers' hot loops, which search it without a call in between.
        self.pattern = re.compile("|".join(re.escape(m) for m in self.markers))
        self._prefixes = frozenset(m[:k] for m in self.markers for k in range(1, len(m)))
        self._max = max(len(m) for m in self.markers)
        # The last characters of those prefixes: a buffer ending in any other character
        # holds nothing back, which one set lookup tells (most deltas end that way).
        self._ends = frozenset(prefix[-1] for prefix in self._prefixes)
        self._first = re.compile("[" + "".join(re.escape(m[0]) for m in self.markers) + "]")
        leads = {m[0] for m in self.markers}
        self._lead = leads.pop() if len(leads) == 1 else ""

    def may_start(self, text: str, start: int = 0) -> bool:
        """Whether ``text[start:]`` holds any marker's first character.

        When it does not, the whole text is safe: no marker and no marker prefix. One
        C-level scan, which keeps plain text (the common case) cheap.
        """
        return self._first.search(text, start) is not None

    def search(self, text: str, start: int = 0) -> tuple[int, str] | None:
        """Return ``(position, marker)`` of the earliest marker at or after ``start``."""
        match = self.pattern.search(text, start)
        return (match.start(), match.group()) if match else None

    def match(self, text: str, pos: int) -> str | None:
        """Return the marker that starts exactly at ``pos`` (``None`` if none does)."""
        found = self.pattern.match(text, pos)
        return found.group() if found else None

    def holdback(self, text: str, start: int = 0) -> int:
        """Return the length of the longest suffix of ``text[start:]`` that could be a
        marker's beginning (0 when none)."""
        if text[-1:] not in self._ends or len(text) <= start:
            return 0
        # Only a suffix that starts with a marker's first character can be one: when the
        # markers share it, str.find finds the candidates (a large set's prefixes end in
        # most characters, a space among them, so slicing every suffix length was paid
        # at every space).
        n = len(text)
        prefixes = self._prefixes
        lead = self._lead
        if lead:  # every marker starts with this character (most families: "<")
            at = text.find(lead, max(start, n - self._max + 1))
            while at >= 0:
                if text[at:] in prefixes:
                    return n - at
                at = text.find(lead, at + 1)
            return 0
        # Markers that start with different characters (Mistral's "[" and "<"): every
        # suffix length, longest first (counted cheaper here than a class search).
        for k in range(min(self._max - 1, n - start), 0, -1):
            if text[-k:] in prefixes:
                return k
        return 0

    def split_safe(self, text: str) -> tuple[str, str]:
        """Split a marker-free buffer into (safe to emit, held back)."""
        held = self.holdback(text)
        return (text[: len(text) - held], text[len(text) - held :]) if held else (text, "")


# Bounded: the marker tuples are the variants' (a few dozen in all), but a caller could
# build formats whose markers vary without end.
@lru_cache(maxsize=256)
def marker_set(*markers: str) -> MarkerSet:
    """The shared :class:`MarkerSet` of ``markers``, built once per distinct tuple.

    For markers that depend on a variant or a spelling (constant markers are module
    constants): a stream's start looks its sets up instead of compiling them again.
    """
    return MarkerSet(markers)


_WHITESPACE = " \t\r\n"


def skip_whitespace(text: str, pos: int) -> int:
    """Return the index of the first non-whitespace character at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos] in _WHITESPACE:
        pos += 1
    return pos


def opens_reasoning(generation_prompt: str | None, open_marker: str, close_marker: str) -> bool:
    """Whether a generation prompt leaves a reasoning block open.

    True when the prompt's last ``open_marker`` comes after its last ``close_marker``
    (Qwen3 thinking templates end with ``<think>\\n``; the no-thinking template ends
    with ``<think>\\n\\n</think>\\n\\n``, which is closed).
    """
    if not generation_prompt:
        return False
    opened = generation_prompt.rfind(open_marker)
    return opened >= 0 and opened > generation_prompt.rfind(close_marker)


def continues(
    text: str, at: int, choices: Sequence[str], *, final: bool, at_end: bool = False
) -> bool | None:
    """Whether ``text[at:]``, after optional whitespace, starts one of ``choices``.

    This is how a closing tag inside a value is told from the real one: it ends the
    value only when what follows continues the format's grammar.

    Args:
        text: The buffer.
        at: Where to look (just after the candidate closing tag).
        choices: What the grammar allows next.
        final: No more input will come (decide instead of waiting).
        at_end: Whether the end of the output also continues the grammar.

    Returns:
        ``True`` or ``False``, or ``None`` while the buffer cannot tell yet.
    """
    n = len(text)
    start = at
    while start < n and text[start] in _WHITESPACE:
        start += 1
    left = n - start
    if not left:
        return at_end if final else None
    # One C-level test for every choice (this runs at every closing tag in a value).
    if text.startswith(choices if isinstance(choices, tuple) else tuple(choices), start):
        return True
    # Only a buffer that ends before a choice could still grow into it (this runs at
    # every closing tag inside a value, so it slices nothing it does not need).
    if not final:
        for choice in choices:
            if left < len(choice) and choice.startswith(text[start:]):
                return None
    return False
