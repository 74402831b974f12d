"""Whatever a decoder accepts into the history encodes for every provider.

Model output that decoded fine used to break the *next* request: text holding a lone
surrogate (``UnicodeEncodeError``) and arguments such as ``{"x": 1e999}`` (infinity:
"Out of range float values are not JSON compliant" from Anthropic's re-serialised
``input``). The decision is made at the door: a lone surrogate in text is replaced by
U+FFFD (with a notice), and a call whose arguments hold such a value is rejected with a
reason the model gets as feedback.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.history import to_anthropic, to_openai_chat, to_responses_input
from toolwire.messages import ToolResult, UserMessage
from toolwire.turn import Turn
from toolwire.wire import AnthropicStream, OpenAIChatStream


def _encode_everywhere(turn: Turn) -> None:
    """Encode the turn (and one result per call) as each provider's request body would be
    sent: httpx writes JSON with ``ensure_ascii=False, allow_nan=False`` as UTF-8."""
    history: list[Any] = [UserMessage("go"), turn.message]
    history += [ToolResult(r.id, r.name, "done") for r in turn.requests]
    for body in (to_openai_chat(history), to_anthropic(history), to_responses_input(history)):
        json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _chat_turn(content: str, arguments: str) -> Turn:
    stream = OpenAIChatStream()
    delta = {
        "content": content,
        "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "f", "arguments": arguments}}],
    }
    stream.feed({"choices": [{"index": 0, "delta": delta}]})
    stream.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return stream.close()


def test_a_lone_surrogate_in_text_is_replaced_at_the_door() -> None:
    stream = OpenAIChatStream()
    events = stream.feed_bytes(
        b'data: {"choices":[{"index":0,"delta":{"content":"a\\ud800b"},"finish_reason":"stop"}]}\n\n'
    )
    assert [e.text for e in events if hasattr(e, "text")] == ["a\ufffdb"]
    turn = stream.close()
    assert [n.kind for n in turn.notices] == ["lone_surrogate"]
    _encode_everywhere(turn)


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"x": 1e999}', "a number JSON cannot carry"),
        ('{"x": -1E400}', "a number JSON cannot carry"),
        ('{"x": NaN}', "a number JSON cannot carry"),
        ('{"x": "\\ud800"}', "lone surrogate"),
        ('{"x": 1e+999}', "a number JSON cannot carry"),
        ('{"x": -Infinity}', "a number JSON cannot carry"),
        ('{"x": ' + "9" * 310 + ".5}", "a number JSON cannot carry"),  # overflows: inf
        ('{"x": "\\uDFFF", "p": "C:\\\\Users"}', "lone surrogate"),
    ],
)
def test_a_call_whose_arguments_cannot_be_sent_back_is_rejected(
    arguments: str, reason: str
) -> None:
    turn = _chat_turn("", arguments)
    [request] = turn.requests
    assert request.input is None and reason in (request.error or "")
    _encode_everywhere(turn)


def test_an_anthropic_call_with_infinity_encodes_for_the_next_request() -> None:
    stream = AnthropicStream()
    for event in [
        {"type": "message_start", "message": {"usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"x": 1e999}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]:
        stream.feed(event)
    turn = stream.close()
    assert turn.requests[0].error is not None
    _encode_everywhere(turn)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec=None), max_size=8),
    value=st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=8,
    ),
)
def test_whatever_is_decoded_encodes_for_every_provider(text: str, value: Any) -> None:
    arguments = json.dumps({"v": value})  # may hold NaN, Infinity and \\udXXX escapes
    _encode_everywhere(_chat_turn(text, arguments))


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ('{"a": {"b": [1, [2.5, {"c": NaN}]]}}', "a number JSON cannot carry"),  # deep
        ('{"\\ud800": 1}', "lone surrogate"),  # in a key
        ('{"a": ["x", {"b": "\\udc00"}]}', "lone surrogate"),
        ('{"a": "\\ud800", "b": 1e999}', "a number JSON cannot carry"),  # the number wins
        ('{"a": 1e999, "b": "\\ud800"}', "a number JSON cannot carry"),
    ],
)
def test_the_parsed_value_is_checked_wherever_the_value_sits(arguments: str, reason: str) -> None:
    [request] = _chat_turn("", arguments).requests
    assert request.input is None and reason in (request.error or "")


@pytest.mark.parametrize(
    "arguments",
    [
        '{"a": "\\ud83d\\ude80", "b": 1e308, "c": ' + "9" * 400 + "}",  # a pair; a big int
        '{"note": "NaN and Infinity, 1e999 in words", "n": -0.0}',
    ],
)
def test_sendable_arguments_pass(arguments: str) -> None:
    [request] = _chat_turn("", arguments).requests
    assert request.error is None and request.input == json.loads(arguments)


@settings(max_examples=300, deadline=None)
@given(
    value=st.recursive(
        st.none()
        | st.floats()
        | st.integers()
        | st.text(alphabet=st.characters(codec=None), max_size=4),
        lambda c: (
            st.lists(c, max_size=3)
            | st.dictionaries(
                st.text(alphabet=st.characters(codec=None), max_size=2), c, max_size=3
            )
        ),
        max_leaves=10,
    ),
)
def test_a_call_is_rejected_exactly_when_its_value_does_not_encode(value: Any) -> None:
    """The reference: the value is rejected when writing it as a request body would fail."""
    arguments = json.dumps({"v": value})  # ASCII: surrogates and NaN as escapes and words
    try:
        json.dumps(json.loads(arguments), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        expected: str | None = "lone surrogate"
    except ValueError:
        expected = "a number JSON cannot carry"
    else:
        expected = None
    [request] = _chat_turn("", arguments).requests
    if expected is None:
        assert request.error is None
    else:
        assert request.input is None and expected in (request.error or "")


@pytest.mark.parametrize("cut", [0, -1])
def test_a_raw_lone_surrogate_in_arguments_is_replaced_before_they_are_parsed(cut: int) -> None:
    # Whole at the call's first scan (cut 0) or closed by the scanner (cut -1: the text
    # before the last brace is scanned first), the input is parsed from the replaced
    # text: the tool gets U+FFFD, never the surrogate (the first way once parsed the
    # text as it came, so the chunking decided).
    arguments = '{"x": "a\ud800b", "y": {}}'
    stream = OpenAIChatStream()
    head = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": arguments[:cut]}}
    rest = {"index": 0, "function": {"arguments": arguments[cut:]}}
    for delta in ({"tool_calls": [head]}, {"tool_calls": [rest]}):
        stream.feed({"choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    stream.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    turn = stream.close()
    [request] = turn.requests
    assert request.input == {"x": "a\ufffdb", "y": {}} and request.error is None
    assert {n.kind for n in turn.notices} == {"lone_surrogate"}
    _encode_everywhere(turn)
