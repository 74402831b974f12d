"""Fuzz: arbitrary bytes or JSON-like objects give events, a Turn, or a provider error.

h11's contract: malformed input may raise only the error that blames the provider
(``ProviderError``: ``ProtocolError``, ``TurnError``, ``ProviderAPIError``). Anything
else — a bare ``TypeError``, or a toolwire error blaming someone else — is a bug and
fails the test, and a decoder that failed must keep failing with the same error.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from toolwire.errors import ProtocolError, ProviderError, ToolwireError
from toolwire.wire import AnthropicStream, OpenAIChatStream, OpenAIResponsesStream
from toolwire.wire.events import ReasoningDelta, TextDelta, ToolCallDelta

from .conftest import fixture_bytes

DECODERS = [OpenAIChatStream, OpenAIResponsesStream, AnthropicStream]
KEYS = ["choices", "delta", "index", "id", "type", "function", "name", "arguments", "tool_calls", "content",
        "finish_reason", "content_block", "partial_json", "output_index", "item", "response", "usage", "error",
        "message", "text", "thinking", "input", "call_id", "stop_reason"]  # fmt: skip
VALUES = ["tool_calls", "stop", "content_block_start", "content_block_delta", "content_block_stop", "tool_use",
          "input_json_delta", "message_delta", "message_stop", "response.output_item.added", "function_call",
          "response.function_call_arguments.delta", "response.completed", "text_delta", "{", "}"]  # fmt: skip

leaves = (
    st.none()
    | st.booleans()
    | st.integers(-2, 3)
    | st.sampled_from(VALUES)
    | st.text(max_size=5)
    | st.sampled_from(["0", "1", 1.0, float("inf"), 2**70])
)
objects = st.recursive(
    leaves,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(KEYS), c, max_size=5),
    max_leaves=25,
)


def drive(stream: Any, items: list[Any]) -> None:
    try:
        for item in items:
            for event in stream.feed(item):
                check_event(event)
        stream.close()
    except ProviderError as exc:
        assert_stays_failed(stream, exc)


def check_event(event: Any) -> None:
    """A bad value is never handed out: text is text, an index is an integer."""
    if isinstance(event, (TextDelta, ReasoningDelta)):
        assert type(event.text) is str
    if isinstance(event, ToolCallDelta):
        assert type(event.index) is int and type(event.arguments) is str


def assert_stays_failed(stream: Any, first: ProviderError) -> None:
    with pytest.raises(ToolwireError) as again:
        stream.close()
    assert again.value is first


@settings(max_examples=1000, deadline=None)
@given(items=st.lists(objects, max_size=8))
def test_random_objects_only_toolwire_errors(items: list[Any]) -> None:
    """Each decoder gets the same 1,000 examples: drawing them is nearly all of the
    cost, so each is drawn once and fed to every decoder (a copy each, so that no
    decoder sees what another did to its input)."""
    for cls in DECODERS:
        note(f"decoder: {cls.__name__}")
        drive(cls(), copy.deepcopy(items))


@pytest.mark.parametrize("cls", DECODERS)
@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_bytes_only_toolwire_errors(cls: type, data: bytes) -> None:
    stream = cls()
    try:
        stream.feed_bytes(data)
        stream.close()
    except ProviderError as exc:
        assert_stays_failed(stream, exc)


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
    except ProviderError as exc:
        assert_stays_failed(stream, exc)


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


# -- regressions: each of these raised a bare exception or handed out a bad event ------


def test_mixed_index_types_are_a_protocol_error() -> None:
    stream = OpenAIChatStream()
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": "1", "id": "b", "function": {"name": "g", "arguments": "{}"}}]}}]},
    ]  # fmt: skip
    with pytest.raises(ProtocolError, match="index must be an integer"):
        for chunk in chunks:
            stream.feed(chunk)
        stream.close()


def test_anthropic_null_text_is_not_handed_out() -> None:
    stream = AnthropicStream()
    stream.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text"}})
    with pytest.raises(ProtocolError, match=r"text_delta\.text must be a string, got null"):
        stream.feed(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": None},
            }
        )


def test_responses_object_text_delta_is_a_protocol_error() -> None:
    stream = OpenAIResponsesStream()
    with pytest.raises(ProtocolError, match="delta must be a string, got dict"):
        stream.feed({"type": "response.output_text.delta", "delta": {"text": "x"}})


def test_truncated_utf8_at_close_stays_failed() -> None:
    stream = OpenAIChatStream()
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n\n'
        b"data: \xe2\x82"
    )
    stream.feed_bytes(body)
    with pytest.raises(ProtocolError, match="UTF-8") as first:
        stream.close()
    with pytest.raises(ProtocolError) as again:
        stream.close()
    assert again.value is first.value


def test_a_bug_is_not_blamed_on_the_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only malformed data becomes a ProtocolError; an exception from toolwire's own code
    propagates as what it is."""
    if getattr(__import__("toolwire.wire", fromlist=["COMPILED"]), "COMPILED", False):
        pytest.skip("compiled classes cannot be patched")

    def broken(self: Any, text: str) -> None:
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr("toolwire.wire.assembler.Assembler.text", broken)
    with pytest.raises(ZeroDivisionError):
        OpenAIChatStream().feed({"choices": [{"index": 0, "delta": {"content": "x"}}]})


def test_a_call_that_changes_after_ready_is_noticed() -> None:
    """Arguments sent twice, or a name fragment after the arguments closed: the call
    announced ready is not the final one, and the turn says so."""
    stream = OpenAIChatStream()
    head = {"index": 0, "id": "c", "function": {"name": "get", "arguments": '{"x": 1}'}}
    events = stream.feed({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]})
    assert any(type(e).__name__ == "ToolCallReady" for e in events)
    more = {"index": 0, "function": {"name": "_weather"}}
    stream.feed({"choices": [{"index": 0, "delta": {"tool_calls": [more]}}]})
    stream.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    turn = stream.close()
    assert turn.requests[0].name == "get_weather"
    assert [n.kind for n in turn.notices] == ["changed_after_ready"]
