"""Shared helpers for the format tests (every family's test module uses them).

* ``assert_split_invariant(fmt, text)``: any split of ``text`` into deltas, down to one
  character each, gives the same ParseResult (ids, notices and a broken call's
  pass-through included, with a fixed id prefix) as ``fmt.parse(text)``, in the default
  mode and with ``hold_calls=True``; with ``strict=True`` the same result, or a
  FormatError exactly when the default mode passed a call through; the events are well
  formed (a retracted call gets no more events; held calls are never retracted); no
  marker text leaks into content, reasoning or names (nor arguments, unless allowed).
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
  dropping leading ``#`` header lines (each fixture names its source there);
  ``fixture_tools(family, name)``: the tools its ``# Tools:`` header line offers.
"""

from __future__ import annotations

import contextlib
import itertools
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import capped_examples
from toolwire.errors import FormatError, ToolwireError
from toolwire.formats import Format, ParseResult
from toolwire.formats.results import EventCollector
from toolwire.turn import Notice
from toolwire.wire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallRetracted,
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


def fixture_tools(family: str, name: str) -> list[dict[str, Any]] | None:
    """The tools a fixture's header offers (``# Tools: a, b``), as tool definitions.

    Most fixtures need none; the ones whose calls are read only for offered tools
    (Hermes's fenced JSON) name them.
    """
    head = (FIXTURES / family / name).read_text(encoding="utf-8").partition("\n---\n")[0]
    for line in head.splitlines():
        if line.startswith("# Tools:"):
            names = [n.strip() for n in line[len("# Tools:") :].split(",")]
            return [
                {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                for n in names
            ]
    return None


def stream_pieces(
    fmt: Format, pieces: Iterable[str], *, strict: bool = False, hold_calls: bool = False
) -> tuple[ParseResult, list[Event]]:
    """Feed ``pieces`` to a fresh stream and close it; return the result and events."""
    stream = fmt.stream(id_prefix=ID_PREFIX, strict=strict, hold_calls=hold_calls)
    events: list[Event] = []
    for piece in pieces:
        events.extend(stream.feed(piece))
    events.extend(stream.close())
    collector = EventCollector()
    collector.add(events)
    return collector.result(), events


def outcome(
    fmt: Format, pieces: Sequence[str], *, strict: bool = True
) -> ParseResult | type[FormatError]:
    """The result of streaming ``pieces``, or ``FormatError`` if it raised one (strict)."""
    try:
        return stream_pieces(fmt, pieces, strict=strict)[0]
    except FormatError:
        return FormatError


def passed_through(result: ParseResult) -> bool:
    """Whether a broken call's text was passed through as content."""
    return any(n.kind in ("malformed_call", "truncated_call") for n in result.notices)


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


def check_events(events: Sequence[Event], *, hold_calls: bool = False) -> None:
    """Assert the event sequence is well formed.

    Call indexes are ordinals; arguments follow their start; a retracted call gets no
    more events and no index is reused; with ``hold_calls`` nothing is retracted and
    each call's events come together, at once.
    """
    started: set[int] = set()
    retracted: set[int] = set()
    open_call: int | None = None
    for event in events:
        assert isinstance(
            event,
            (TextDelta, ReasoningDelta, ToolCallStarted, ToolCallDelta, ToolCallRetracted, Notice),
        )
        if hold_calls and not isinstance(event, (ToolCallDelta, Notice)):
            open_call = None
        if isinstance(event, (TextDelta, ReasoningDelta)):
            assert event.text, "empty text event"
        elif isinstance(event, ToolCallStarted):
            assert event.index == len(started), "call indexes must be ordinals"
            assert event.name and event.id
            started.add(event.index)
            open_call = event.index
        elif isinstance(event, ToolCallDelta):
            assert event.index in started, "arguments before the call started"
            assert event.index not in retracted, "arguments after the call was retracted"
            assert event.arguments, "empty arguments delta"
            if hold_calls:
                assert event.index == open_call, "a held call's events come together"
        elif isinstance(event, ToolCallRetracted):
            assert not hold_calls, "hold_calls never retracts a call"
            assert event.index in started and event.index not in retracted
            retracted.add(event.index)


def check_no_markers(
    fmt: Format, result: ParseResult, *, markers_in_arguments: bool, markers_in_content: bool
) -> None:
    """Assert no marker of ``fmt`` appears where it must not."""
    # A malformed call's text is content, markers and all; a cut-off one's is dropped.
    markers_in_content = markers_in_content or any(
        n.kind == "malformed_call" for n in result.notices
    )
    for marker in fmt.markers:
        if not markers_in_content and result.content is not None:
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
    expected = fmt.parse(text, id_prefix=ID_PREFIX)
    try:
        strict: ParseResult | type[FormatError] = fmt.parse(text, id_prefix=ID_PREFIX, strict=True)
    except FormatError:
        strict = FormatError
    # Strict mode raises exactly when the default mode passed a broken call through.
    assert (strict is FormatError) == passed_through(expected)
    if strict is not FormatError:
        assert strict == expected
    _, events = stream_pieces(fmt, [text])
    check_events(events)
    check_no_markers(
        fmt,
        expected,
        markers_in_arguments=markers_in_arguments,
        markers_in_content=markers_in_content,
    )
    check_pieces(fmt, list(text), expected, strict)

    @settings(
        # capped where the run caps the calling test's properties (tests/conftest.py)
        max_examples=capped_examples(-(-max_examples // SPLITS_PER_EXAMPLE)),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    # One cheap draw per example (a seed and a chunk-size limit) keeps a 200-example
    # run fast; the seeded generator then cuts anywhere, down to single characters.
    @given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=24))
    def any_split(seed: int, longest: int) -> None:
        for offset in range(SPLITS_PER_EXAMPLE):
            check_pieces(fmt, random_pieces(text, seed + offset, longest), expected, strict)

    any_split()
    return expected


def check_pieces(
    fmt: Format,
    pieces: list[str],
    expected: ParseResult,
    strict: ParseResult | type[FormatError],
) -> None:
    """Stream ``pieces`` in the default, held-calls and strict modes against the parse."""
    result, events = stream_pieces(fmt, pieces)
    check_events(events)
    assert result == expected, ("default mode", pieces)
    held, events = stream_pieces(fmt, pieces, hold_calls=True)
    check_events(events, hold_calls=True)
    assert held == expected, ("hold_calls", pieces)
    assert outcome(fmt, pieces) == strict, ("strict", pieces)


def assert_split_matches(fmt: Format, text: str, cuts: Iterable[int]) -> None:
    """Assert one split of ``text`` (and one character per delta) parses like the whole.

    For use inside an outer ``@given`` (fuzz tests), where nesting is not allowed.
    """
    whole = outcome(fmt, [text])
    assert outcome(fmt, split_at(text, cuts)) == whole
    assert outcome(fmt, list(text)) == whole
    lenient = stream_pieces(fmt, [text])[0]
    for pieces in (split_at(text, cuts), list(text)):
        assert stream_pieces(fmt, pieces)[0] == lenient
        assert stream_pieces(fmt, pieces, hold_calls=True)[0] == lenient


def assert_only_toolwire_errors(fmt: Format, text: str) -> None:
    """Parse ``text`` whole and one character at a time: only ToolwireErrors may escape."""
    for pieces in ([text], list(text)):
        stream_pieces(fmt, pieces)  # lenient: never raises on model output
        with contextlib.suppress(ToolwireError):
            stream_pieces(fmt, pieces, strict=True)


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
