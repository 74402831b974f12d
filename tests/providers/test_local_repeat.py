"""A generation that repeats itself is stopped early: the guard alone, and the local
provider's chunk loop fed a scripted token source (llama.cpp's chunk shape) through the
real Hermes format and assembler."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import formats
from toolwire.formats.decode import TextTurnDecoder
from toolwire.providers.local import chunk_events
from toolwire.providers.local_repeat import MAX_PERIOD, MIN_REPEATS, MIN_SPAN, RepeatGuard
from toolwire.wire.events import Finished, Notice

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>\n'


def _feed(guard: RepeatGuard, text: str, piece: int = 3) -> tuple[int, Any]:
    """Feed ``text`` in pieces; (characters fed, the repetition) at the first one found."""
    for start in range(0, len(text), piece):
        found = guard.feed(text[start : start + piece])
        if found is not None:
            return start + piece, found
    return len(text), None


def test_a_json_call_written_again_and_again_is_caught_at_its_fourth_copy() -> None:
    fed, found = _feed(RepeatGuard(), "Sure.\n" + CALL * 20)
    assert found is not None and len(found.unit) == len(CALL) and found.unit in CALL * 2
    assert fed <= len("Sure.\n") + len(CALL) * (MIN_REPEATS + 1)  # not the 20 copies
    assert f"same {len(CALL)}-character text at least 4 times" in found.message


def test_a_short_unit_must_span_the_minimum() -> None:
    guard = RepeatGuard()
    assert _feed(guard, "-" * (MIN_SPAN - 1), piece=1)[1] is None  # a rule line, not a loop
    assert guard.feed("-") is not None


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(f"- item {n}: the same words, another number" for n in range(200)),
        "| a | b |\n|---|---|\n" + "".join(f"| {n} | {n * n} |\n" for n in range(100)),
        "word " * 20,  # repeated, but shorter than the minimum span
        json.dumps([{"city": c, "day": "tomorrow"} for c in ("Beijing", "Shanghai")] * 3),
    ],
)
def test_text_that_only_looks_alike_runs_on(text: str) -> None:
    assert _feed(RepeatGuard(), text)[1] is None


@given(st.text(min_size=1, max_size=MAX_PERIOD), st.integers(1, 40), st.text(max_size=50))
def test_any_unit_repeated_long_enough_is_caught_however_it_is_chunked(
    unit: str, piece: int, before: str
) -> None:
    copies = max(MIN_REPEATS, -(-MIN_SPAN // len(unit))) * 2
    _, found = _feed(RepeatGuard(), before + unit * copies, piece)
    assert found is not None and len(found.unit) <= len(unit)


def _chunks(pieces: Iterable[str], finish: str = "stop") -> list[dict[str, Any]]:
    chunks = [{"choices": [{"text": p, "finish_reason": None}]} for p in pieces]
    return [*chunks, {"choices": [{"text": "", "finish_reason": finish}]}]


def _decode(chunks: list[dict[str, Any]], guard: RepeatGuard | None) -> tuple[list[Any], int]:
    """Events of the provider's chunk loop, and how many chunks it read before it stopped."""
    fmt = formats.get("hermes", "qwen2.5", tools=[])
    turn = TextTurnDecoder(fmt, require_end=True)
    events: list[Any] = []
    read = 0
    for chunk in chunks:
        read += 1
        events += chunk_events(turn, chunk, guard)
        if turn.ended:
            break
    events.append(turn.close())
    return events, read


def test_the_provider_stops_a_repeating_generation_with_finish_reason_length() -> None:
    text = "Let me look it up. " + "I will call get_weather for Beijing now.\n" * 100
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    events, read = _decode(_chunks(pieces), RepeatGuard())
    assert read < len(pieces) // 4  # stopped after a few copies, not at the end
    [finished] = [e for e in events if isinstance(e, Finished)]
    assert finished.reason == "length"
    turn = events[-1]
    assert turn.finish_reason == "length"
    assert [n.kind for n in turn.notices] == ["repetition_stopped"]
    assert any(isinstance(e, Notice) and e.kind == "repetition_stopped" for e in events)


def test_without_the_guard_or_without_repeats_the_generation_ends_as_the_model_ends_it() -> None:
    text = "I will call get_weather for Beijing now.\n" * 100
    pieces = [text[i : i + 4] for i in range(0, len(text), 4)]
    events, read = _decode(_chunks(pieces), None)
    assert (read, events[-1].finish_reason, events[-1].notices) == (len(pieces) + 1, "stop", [])
    events, _ = _decode(_chunks(["Cloudy, ", "1 to 9°C."]), RepeatGuard())
    assert (events[-1].finish_reason, events[-1].message.text) == ("stop", "Cloudy, 1 to 9°C.")
