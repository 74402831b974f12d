"""Fuzz: arbitrary bytes or JSON-like objects give events, a Turn, or a toolwire error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import ToolwireError
from toolwire.wire import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream

from .conftest import fixture_bytes

DECODERS = [OpenAIChatStream, OpenAIResponsesStream, AnthropicStream]
KEYS = ["choices", "delta", "index", "id", "type", "function", "name", "arguments", "tool_calls", "content",
        "finish_reason", "content_block", "partial_json", "output_index", "item", "response", "usage", "error",
        "message", "text", "thinking", "input", "call_id", "stop_reason"]  # fmt: skip
VALUES = ["tool_calls", "stop", "content_block_start", "content_block_delta", "content_block_stop", "tool_use",
          "input_json_delta", "message_delta", "message_stop", "response.output_item.added", "function_call",
          "response.function_call_arguments.delta", "response.completed", "text_delta", "{", "}"]  # fmt: skip

leaves = (
    st.none() | st.booleans() | st.integers(-2, 3) | st.sampled_from(VALUES) | st.text(max_size=5)
)
objects = st.recursive(
    leaves,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(KEYS), c, max_size=5),
    max_leaves=25,
)


def drive(stream: Any, items: list[Any]) -> None:
    try:
        for item in items:
            stream.feed(item)
        stream.close()
    except ToolwireError:
        pass


@pytest.mark.parametrize("cls", DECODERS)
@settings(max_examples=1000, deadline=None)
@given(items=st.lists(objects, max_size=8))
def test_random_objects_only_toolwire_errors(cls: type, items: list[Any]) -> None:
    drive(cls(), items)


@pytest.mark.parametrize("cls", DECODERS)
@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_only_toolwire_errors(cls: type, data: bytes) -> None:
    stream = cls()
    try:
        stream.feed_bytes(data)
        stream.close()
    except ToolwireError:
        pass


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        (OpenAIChatStream, "openai_chat_parallel.sse"),
        (AnthropicStream, "anthropic_parallel.sse"),
        (OpenAIResponsesStream, "openai_responses_parallel.sse"),
    ],
)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_mutated_recordings_only_toolwire_errors(cls: type, name: str, data: st.DataObject) -> None:
    raw = bytearray(fixture_bytes(name))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.sampled_from(list(b'{}[]":,\\0a\n ')))
    stream = cls()
    try:
        stream.feed_bytes(bytes(raw))
        stream.close()
    except ToolwireError:
        pass


def test_failed_decoder_stays_failed() -> None:
    stream = OpenAIChatStream()
    with pytest.raises(ToolwireError) as first:
        stream.feed(
            {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "x", "function": 3}]}}]}
        )
    with pytest.raises(ToolwireError) as again:
        stream.feed({"choices": []})
    assert again.value is first.value
    assert json.dumps({"ok": True})  # the module stays importable and usable
