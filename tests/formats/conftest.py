"""Shared helpers for the format tests (every family's test module uses them).

* ``assert_split_invariant(fmt, text)``: any split of ``text`` into deltas, down to one
  character each, gives the same ParseResult (ids included, with a fixed id prefix) as
  ``fmt.parse(text)``, or the same FormatError; the events are well formed; no marker
  text leaks into content, reasoning or names (nor arguments, unless allowed).
* ``assert_split_matches(fmt, text, cuts)``: the same check for one split, for use
  inside a fuzz test's own ``@given``.
* ``assert_only_toolwire_errors(fmt, text)``: parsing never raises anything but a
  ToolwireError.
* ``assert_long_output_consistent(fmt, unit)``: a long output (``unit`` repeated)
  parses as the repeated calls, the same whole as in 1- and 1..64-character pieces
  (the parsers keep a cursor into one buffer cut once per feed; this pins its
  correctness, ``bench/bench_formats.py`` shows the cost stays linear).
* ``marker_soup(markers)``: a Hypothesis strategy of random text made of marker pieces,
  for fuzz tests.
* ``load_fixture(family, name)``: read ``tests/formats/fixtures/<family>/<name>``,
  dropping leading ``#`` header lines (each fixture names its source there).
"""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import Iterable, Sequence
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.errors import ToolwireError
from toolwire.formats import Format, FormatError, ParseResult
from toolwire.formats.base import EventCollector
from toolwire.wire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStarted,
)

FIXTURES = Path(__file__).parent / "fixtures"
ID_PREFIX = "call_test_"
SPLITS_PER_EXAMPLE = 4


def load_fixture(family: str, name: str) -> str:
    """Return a fixture's model output, without its leading ``#`` header lines.

    The header ends at the first line that is exactly ``---``; the output is everything
    after that line, byte for byte (a fixture without ``---`` has no header).
    """
    raw = (FIXTURES / family / name).read_text(encoding="utf-8")
    head, sep, body = raw.partition("\n---\n")
    return body if sep and all(line.startswith("#") for line in head.splitlines()) else raw


def stream_pieces(fmt: Format, pieces: Iterable[str]) -> tuple[ParseResult, list[Event]]:
    """Feed ``pieces`` to a fresh stream and close it; return the result and events."""
    stream = fmt.stream(id_prefix=ID_PREFIX)
    events: list[Event] = []
    for piece in pieces:
        events.extend(stream.feed(piece))
    events.extend(stream.close())
    collector = EventCollector()
    collector.add(events)
    return collector.result(), events


def outcome(fmt: Format, pieces: Sequence[str]) -> ParseResult | type[FormatError]:
    """The result of streaming ``pieces``, or ``FormatError`` if it raised one."""
    try:
        return stream_pieces(fmt, pieces)[0]
    except FormatError:
        return FormatError


def split_at(text: str, cuts: Iterable[int]) -> list[str]:
    """Split ``text`` at the given positions."""
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def random_pieces(text: str, seed: int, longest: int) -> list[str]:
    """Split ``text`` into random pieces of 1..``longest`` characters (seeded)."""
    rng = random.Random(seed)
    pieces, pos = [], 0
    while pos < len(text):
        size = rng.randint(1, longest)
        pieces.append(text[pos : pos + size])
        pos += size
    return pieces


def check_events(events: Sequence[Event]) -> None:
    """Assert the event sequence is well formed."""
    started: set[int] = set()
    for event in events:
        assert isinstance(event, (TextDelta, ReasoningDelta, ToolCallStarted, ToolCallDelta))
        if isinstance(event, (TextDelta, ReasoningDelta)):
            assert event.text, "empty text event"
        elif isinstance(event, ToolCallStarted):
            assert event.index == len(started), "call indexes must be ordinals"
            assert event.name and event.id
            started.add(event.index)
        else:
            assert event.index in started, "arguments before the call started"
            assert event.arguments, "empty arguments delta"


def check_no_markers(
    fmt: Format, result: ParseResult, *, markers_in_arguments: bool, markers_in_content: bool
) -> None:
    """Assert no marker of ``fmt`` appears where it must not."""
    for marker in fmt.markers:
        if not markers_in_content:
            assert marker not in result.content, f"marker {marker!r} leaked into content"
            assert marker not in result.reasoning, f"marker {marker!r} leaked into reasoning"
        for call in result.tool_calls:
            assert marker not in call.name, f"marker {marker!r} leaked into a name"
            if not markers_in_arguments:
                assert marker not in call.arguments, f"marker {marker!r} leaked into arguments"


def assert_split_invariant(
    fmt: Format,
    text: str,
    *,
    max_examples: int = 200,
    markers_in_arguments: bool = False,
    markers_in_content: bool = False,
) -> ParseResult | type[FormatError]:
    """Assert every split of ``text`` parses like ``fmt.parse(text)``.

    Checks the whole text, one character per delta, and ``max_examples`` random splits
    (Hypothesis examples of ``SPLITS_PER_EXAMPLE`` seeded splits each: Hypothesis costs
    a few milliseconds per example, the parse a fraction of that). Returns the
    reference outcome so the caller can assert on it.

    Args:
        fmt: The format under test.
        text: A model output.
        max_examples: How many random splits to check.
        markers_in_arguments: The fixture puts marker-like text inside a value.
        markers_in_content: The fixture keeps marker-like text as content on purpose
            (for example a malformed call passed through).
    """
    try:
        expected: ParseResult | type[FormatError] = fmt.parse(text, id_prefix=ID_PREFIX)
    except FormatError:
        expected = FormatError
    if isinstance(expected, ParseResult):
        _, events = stream_pieces(fmt, [text])
        check_events(events)
        check_no_markers(
            fmt,
            expected,
            markers_in_arguments=markers_in_arguments,
            markers_in_content=markers_in_content,
        )
    assert outcome(fmt, list(text)) == expected, "one character per delta differs"

    @settings(
        max_examples=-(-max_examples // SPLITS_PER_EXAMPLE),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    # One cheap draw per example (a seed and a chunk-size limit) keeps a 200-example
    # run fast; the seeded generator then cuts anywhere, down to single characters.
    @given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=24))
    def any_split(seed: int, longest: int) -> None:
        for offset in range(SPLITS_PER_EXAMPLE):
            pieces = random_pieces(text, seed + offset, longest)
            if isinstance(expected, ParseResult):
                result, events = stream_pieces(fmt, pieces)
                check_events(events)
                assert result == expected, pieces
            else:
                assert outcome(fmt, pieces) is FormatError, pieces

    any_split()
    return expected


def assert_split_matches(fmt: Format, text: str, cuts: Iterable[int]) -> None:
    """Assert one split of ``text`` (and one character per delta) parses like the whole.

    For use inside an outer ``@given`` (fuzz tests), where nesting is not allowed.
    """
    whole = outcome(fmt, [text])
    assert outcome(fmt, split_at(text, cuts)) == whole
    assert outcome(fmt, list(text)) == whole


def assert_only_toolwire_errors(fmt: Format, text: str) -> None:
    """Parse ``text`` whole and one character at a time: only ToolwireErrors may escape."""
    for pieces in ([text], list(text)):
        with contextlib.suppress(ToolwireError):
            stream_pieces(fmt, pieces)


def marker_soup(markers: Sequence[str], extra: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """Random text made of whole markers, marker pieces, JSON-ish bits and plain text."""
    pieces = [*markers, *(m[: len(m) // 2] for m in markers), *(m[1:] for m in markers)]
    pieces += [*extra, '{"name": "f", "arguments": {"a": 1}}', "{", "}", '"', "\\", "\n", " "]
    atom = st.one_of(st.sampled_from(pieces), st.text(max_size=6))
    return st.lists(atom, max_size=30).map("".join)


def assert_long_output_consistent(fmt: Format, unit: str, *, size: int = 6_000) -> ParseResult:
    """Assert ``unit`` repeated to about ``size`` characters parses as the repeated calls,
    whole and split into 1-character and random 1..64-character pieces alike.

    Returns the whole parse, for the caller's own assertions.
    """
    once = fmt.parse(unit, id_prefix=ID_PREFIX)
    assert once.tool_calls, "the unit must hold a call"
    copies = max(2, size // len(unit))
    text = unit * copies
    whole = fmt.parse(text, id_prefix=ID_PREFIX)
    calls = [(c.name, c.arguments) for c in whole.tool_calls]
    assert calls == [(c.name, c.arguments) for c in once.tool_calls] * copies
    assert stream_pieces(fmt, list(text))[0] == whole, "one character per delta differs"
    assert stream_pieces(fmt, random_pieces(text, copies, 64))[0] == whole, "random split differs"
    return whole
