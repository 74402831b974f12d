"""Custom (free-form input) tool calls: raw text in, raw text kept, never parsed as JSON.

Shapes from the OpenAI API reference: Responses output item ``{"type":
"custom_tool_call", "id", "call_id", "name", "input"}`` streamed with
``response.custom_tool_call_input.delta`` / ``.done``; Chat Completions message tool
call ``{"id", "type": "custom", "custom": {"name", "input"}}``.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from toolwire.messages import ToolCall
from toolwire.wire import (
    OpenAIChatStream,
    OpenAIResponsesStream,
    decode_openai_chat_response,
    decode_responses_response,
)
from toolwire.wire.assembler import Assembler
from toolwire.wire.events import ToolCallReady

PATCH = '*** Begin Patch\n*** Update File: a.py\n@@\n-x = {"a": 1}\n+x = {"a": 2}\n*** End Patch'


def _responses_events(text: str, pieces: list[str]) -> list[dict[str, Any]]:
    item = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply"}
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": dict(item, input="")},
        *[
            {
                "type": "response.custom_tool_call_input.delta",
                "output_index": 0,
                "item_id": "ctc_1",
                "delta": piece,
            }
            for piece in pieces
        ],
        {
            "type": "response.custom_tool_call_input.done",
            "output_index": 0,
            "item_id": "ctc_1",
            "input": text,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": dict(item, input=text)},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]


def _cuts(text: str, points: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(p % (len(text) + 1) for p in points)})
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@given(st.text(), st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_any_input_any_chunking_gives_the_raw_text(text: str, points: list[int]) -> None:
    stream = OpenAIResponsesStream()
    for event in _responses_events(text, _cuts(text, points)):
        stream.feed(event)
    turn = stream.close()
    (request,) = turn.requests
    expected = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if text == expected:  # lone surrogates are replaced, as everywhere (tested elsewhere)
        assert request.input == request.raw_arguments == text
        assert turn.tool_calls == [ToolCall("call_1", "apply", text, freeform=True)]
    assert request.freeform and request.error is None


def test_json_looking_input_is_neither_parsed_nor_announced_early() -> None:
    """A fragment ending in ``}`` would make a JSON call ready; a custom call waits."""
    stream = OpenAIResponsesStream()
    events = _responses_events(PATCH, [PATCH[:40], PATCH[40:]])
    seen = [stream.feed(event) for event in events]
    ready_at = [i for i, batch in enumerate(seen) for e in batch if isinstance(e, ToolCallReady)]
    assert ready_at == [3]  # at custom_tool_call_input.done, not at the "}" fragment
    turn = stream.close()
    assert turn.requests[0].input == PATCH
    assert turn.notices == []


def test_empty_input_stays_empty() -> None:
    """A function call's empty arguments become ``{}``; a custom call's input is text."""
    body = decode_responses_response(
        {
            "status": "completed",
            "output": [{"type": "custom_tool_call", "call_id": "c", "name": "t", "input": ""}],
        }
    )
    assert body.tool_calls == [ToolCall("c", "t", "", freeform=True)]
    assert body.requests[0].input == ""


def test_done_without_added_still_makes_the_call() -> None:
    stream = OpenAIResponsesStream()
    item = {"type": "custom_tool_call", "id": "ctc_9", "call_id": "c9", "name": "t", "input": "x"}
    stream.feed({"type": "response.output_item.done", "output_index": 0, "item": item})
    stream.feed({"type": "response.completed", "response": {"status": "completed"}})
    turn = stream.close()
    assert turn.tool_calls == [ToolCall("c9", "t", "x", freeform=True)]
    assert turn.finish_reason == "tool_calls"


def test_a_function_call_next_to_a_custom_call_keeps_its_json() -> None:
    output = [
        {"type": "function_call", "call_id": "f1", "name": "read", "arguments": '{"p": "a"}'},
        {"type": "custom_tool_call", "call_id": "c1", "name": "apply", "input": PATCH},
    ]
    turn = decode_responses_response({"status": "completed", "output": output})
    assert [(r.freeform, r.input) for r in turn.requests] == [(False, {"p": "a"}), (True, PATCH)]


def test_assembler_custom_input_for_an_unknown_call_is_a_protocol_error() -> None:
    import pytest

    from toolwire.errors import ProtocolError

    assembler = Assembler()
    with pytest.raises(ProtocolError, match="never started"):
        assembler.custom_input(3, "x")
    stream = OpenAIResponsesStream()
    stream.feed(_responses_events("x", [])[0])
    with pytest.raises(ProtocolError, match="delta"):
        stream.feed(
            {"type": "response.custom_tool_call_input.delta", "output_index": 0, "delta": 5}
        )


# -- Chat Completions ------------------------------------------------------------------


def test_chat_body_with_a_custom_call() -> None:
    call = {"id": "call_7", "type": "custom", "custom": {"name": "apply", "input": PATCH}}
    response = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        ]
    }
    turn = decode_openai_chat_response(response)
    assert turn.tool_calls == [ToolCall("call_7", "apply", PATCH, freeform=True)]
    assert turn.requests[0].freeform and turn.requests[0].input == PATCH


def test_chat_stream_with_custom_fragments_equals_the_body() -> None:
    chunks = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_7",
                                "type": "custom",
                                "custom": {"name": "apply", "input": PATCH[:30]},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "custom": {"input": PATCH[30:]}}]},
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    stream = OpenAIChatStream()
    for chunk in chunks:
        stream.feed(json.loads(json.dumps(chunk)))
    turn = stream.close()
    assert turn.tool_calls == [ToolCall("call_7", "apply", PATCH, freeform=True)]
    assert turn.requests[0].input == PATCH and turn.requests[0].freeform


def test_chat_history_sends_a_custom_call_back_in_its_own_shape() -> None:
    """Chat Completions request: an assistant ``tool_calls`` entry ``{"id", "type":
    "custom", "custom": {"name", "input"}}`` and a ``tool`` message (API reference,
    "Chat > Create chat completion > messages")."""
    from toolwire.history.openai_chat import from_openai_chat, to_openai_chat
    from toolwire.messages import AssistantMessage, ToolResult, UserMessage

    call = ToolCall("call_7", "apply", PATCH, freeform=True)
    history = [UserMessage("go"), AssistantMessage([call]), ToolResult("call_7", "apply", "ok")]
    messages = to_openai_chat(history)
    assert messages[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_7", "type": "custom", "custom": {"name": "apply", "input": PATCH}}
        ],
    }
    assert messages[2] == {"role": "tool", "tool_call_id": "call_7", "content": "ok"}
    assert from_openai_chat(messages) == history
