"""Responses API: the same turn from a stream and a body for reasoning summaries,
built-in tool items, custom tool calls and annotations."""

from __future__ import annotations

from typing import Any

from toolwire.history.openai_responses import to_responses_input
from toolwire.messages import ProviderPart, TextPart, ToolCall, UserMessage
from toolwire.wire import OpenAIResponsesStream, decode_responses_response

WEB = {
    "type": "web_search_call",
    "id": "ws_67ccf18f64008190a39b619f4c8455ef",
    "status": "completed",
    "action": {"type": "search", "query": "weather"},
}
CUSTOM = {
    "type": "custom_tool_call",
    "id": "ctc_1",
    "call_id": "call_c1",
    "name": "apply",
    "input": "*** Begin Patch",
}
NOTE = {
    "type": "url_citation",
    "start_index": 0,
    "end_index": 5,
    "url": "https://example.com",
    "title": "Example",
}
REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [
        {"type": "summary_text", "text": "**First**"},
        {"type": "summary_text", "text": "**Second**"},
    ],
}
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Sunny", "annotations": [NOTE]}],
}


def _events() -> list[dict[str, Any]]:
    return [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []},
        },
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "**First**"},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 1},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "delta": "**Second**"},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "web_search_call", "id": WEB["id"], "status": "in_progress"},
        },
        {"type": "response.output_item.done", "output_index": 1, "item": WEB},
        {"type": "response.output_item.added", "output_index": 2, "item": CUSTOM},
        {"type": "response.output_item.done", "output_index": 2, "item": CUSTOM},
        {
            "type": "response.output_item.added",
            "output_index": 3,
            "item": dict(MESSAGE, content=[], status="in_progress"),
        },
        {"type": "response.output_text.delta", "output_index": 3, "delta": "Sunny"},
        {"type": "response.output_text.annotation.added", "output_index": 3, "annotation": NOTE},
        {"type": "response.output_item.done", "output_index": 3, "item": MESSAGE},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]


def test_stream_and_body_give_the_same_turn() -> None:
    stream = OpenAIResponsesStream()
    for event in _events():
        stream.feed(event)
    streamed = stream.close()
    body = decode_responses_response(
        {"status": "completed", "output": [REASONING, WEB, CUSTOM, MESSAGE]}
    )
    assert streamed.message == body.message
    assert streamed.reasoning == "**First**\n\n**Second**"
    parts = streamed.message.parts
    assert parts[1] == ProviderPart("openai_responses", "web_search_call", WEB)
    assert parts[2] == ToolCall("call_c1", "apply", "*** Begin Patch", freeform=True)
    assert parts[3] == TextPart("Sunny", [NOTE])
    for turn in (streamed, body):
        assert turn.notices == []
        assert [(r.id, r.input, r.freeform) for r in turn.requests] == [
            ("call_c1", "*** Begin Patch", True)
        ]
        assert turn.finish_reason == "tool_calls"


def test_kept_items_go_back_verbatim() -> None:
    body = decode_responses_response({"status": "completed", "output": [WEB, MESSAGE]})
    _, items = to_responses_input([UserMessage("weather?"), body.message])
    assert items[1] == WEB
