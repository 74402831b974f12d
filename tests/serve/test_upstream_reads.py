"""The upstream body's reads into the Chat decoder (``upstream._Reads``): however the
reads fall, the events and the turn are those of the whole body fed at once, and an
error event read together with the last tokens leaves those tokens with the client."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import ToolwireError
from toolwire.serve.upstream import _Reads
from toolwire.wire.openai_chat import OpenAIChatStream


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "u", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}  # fmt: skip


def sse(events: list[Any], newline: str = "\n") -> bytes:
    """``events``: dicts (as JSON data), strings (raw SSE lines, comments included)."""
    out = []
    for event in events:
        line = event if isinstance(event, str) else "data: " + json.dumps(event)
        out.append(line + newline + newline)
    return "".join(out).encode()


STREAM = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": "héllo "}),
    ": a comment",
    chunk({"content": "wörld"}),
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"pa'},
                }
            ]
        }
    ),
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "a"}'}}]}),
    "event: message\ndata: " + json.dumps(chunk({"content": "!"})),
    chunk({}, "tool_calls"),
    "data: [DONE]",
]


def outcome(reads: list[bytes]) -> tuple[list[Any], Any, str | None]:
    """The events, the turn (or None) and the error's message (or None) of ``reads``."""
    decoder = OpenAIChatStream(deltas=False)
    feeder = _Reads(decoder)
    events: list[Any] = []
    for read in reads:
        got, error = feeder.feed(read)
        events += got
        if error is not None:
            return events, None, str(error)
    try:
        return events, decoder.close(), None
    except ToolwireError as exc:
        return events, None, str(exc)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=12), st.sampled_from(["\n", "\r\n"]))
def test_any_split_of_the_body_gives_the_same_events_and_turn(
    points: list[int], newline: str
) -> None:
    data = sse(STREAM, newline)
    whole = outcome([data])
    assert whole[1] is not None and whole[1].tool_calls  # the stream is a good one
    assert outcome(cut(data, points)) == whole


def test_each_event_in_its_own_read_gives_the_same_as_one_read() -> None:
    reads = [sse([event]) for event in STREAM]
    assert outcome(reads) == outcome([sse(STREAM)])


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_tokens_read_together_with_an_error_event_still_reach_the_client(newline: str) -> None:
    body = sse([chunk({"content": "part"}), chunk({"content": "ial"}),
                {"error": {"message": "engine died"}}], newline)  # fmt: skip
    events, turn, error = outcome([body])
    assert [e.text for e in events] == ["part", "ial"]
    assert turn is None and error is not None and "engine died" in error


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_an_error_after_a_cut_anywhere_leaves_the_tokens_before_it(newline: str) -> None:
    """Every cut of the body in two reads: the second read may end the first event
    (the first read ended between its two line breaks) and bring the bad one."""
    data = sse([chunk({"content": "a"}), "data: {not json", chunk({"content": "b"})], newline)
    whole = outcome([data])
    assert [e.text for e in whole[0]] == ["a"] and whole[2] is not None
    for point in range(len(data) + 1):
        assert outcome(cut(data, [point])) == whole, point


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0), max_size=8))
def test_data_that_is_not_json_fails_the_same_however_it_was_read(points: list[int]) -> None:
    data = sse([chunk({"content": "a"}), "data: {not json", chunk({"content": "b"})])
    whole = outcome([data])
    assert whole[2] is not None and "not JSON" in whole[2]
    assert outcome(cut(data, points)) == whole
