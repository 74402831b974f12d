"""Round trips: a recorded turn, decoded, goes back in the next request in the shape the
provider documents.

Anthropic (Messages API reference, https://docs.anthropic.com/en/api/messages, request
``messages[].content`` block params; extended thinking,
https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking: thinking and
redacted thinking blocks go back unmodified, signature included; server tools and
``pause_turn``, https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/server-tools:
the assistant's blocks go back as received; programmatic tool calling: a ``tool_use``
keeps its ``caller``): the expected request blocks are written here from those shapes,
from the recording, without toolwire. OpenAI Chat (API reference, assistant message
param: ``role``, ``content`` (null allowed with ``tool_calls``), ``refusal``,
``tool_calls[]`` of ``{id, type: "function", function: {name, arguments}}``; the
``reasoning_content`` field of DeepSeek's and vLLM's dialect): the same, per recording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.history.anthropic import to_anthropic
from toolwire.history.openai_chat import to_openai_chat
from toolwire.messages import AssistantMessage, Message, ToolResult, UserMessage
from toolwire.turn import Turn
from toolwire.wire import decode_anthropic_response, decode_openai_chat_response
from toolwire.wire.anthropic import AnthropicStream
from toolwire.wire.openai_chat import OpenAIChatStream

from ..wire.test_recorded_anthropic import _turns as _anthropic_turns
from ..wire.test_recorded_chat import _body_reference, _items, _reference

RECORDED = Path(__file__).parent.parent / "wire" / "fixtures" / "recorded"


def _next_request_history(turn: Turn) -> list[Message]:
    """The history the next request sends: the question, the turn, one result per call."""
    results = [ToolResult(c.id, c.name, "ok") for c in turn.tool_calls]
    return [UserMessage("question"), turn.message, *results]


# -- Anthropic -----------------------------------------------------------------------------

# Documented request keys per client-side block kind: (required, optional).
_ANTHROPIC_KEYS = {
    "text": ({"type", "text"}, {"citations", "cache_control"}),
    "thinking": ({"type", "thinking", "signature"}, set()),
    "redacted_thinking": ({"type", "data"}, set()),
    "tool_use": ({"type", "id", "name", "input"}, {"caller", "cache_control"}),
}


def _anthropic_request_block(block: dict[str, Any]) -> dict[str, Any] | None:
    """The request block for a response block, per the documented shapes."""
    kind = block["type"]
    if kind == "text":
        if not block.get("text") and not block.get("citations"):
            return None  # Anthropic rejects empty text blocks
        out = {"type": "text", "text": block.get("text", "")}
        if block.get("citations"):
            out["citations"] = block["citations"]
        return out
    if kind == "thinking":
        return {"type": "thinking", "thinking": block["thinking"], "signature": block["signature"]}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block["data"]}
    if kind == "tool_use":
        out = {k: block[k] for k in ("id", "name", "input")}
        out = {"type": "tool_use", **out}
        if block.get("caller") is not None:
            out["caller"] = block["caller"]
        return out
    return block  # a server-side block: back exactly as received


def _stream_blocks(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The response's blocks as a stream builds them (deltas applied), read naively."""
    blocks: dict[int, dict[str, Any]] = {}
    streamed_input: dict[int, str] = {}
    for event in events:
        if event["type"] == "message_start":
            for i, block in enumerate(event["message"].get("content") or []):
                blocks[i] = dict(block)
        elif event["type"] == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            index, delta = event["index"], event["delta"]
            block = blocks[index]
            if delta["type"] == "input_json_delta":
                streamed_input[index] = streamed_input.get(index, "") + delta["partial_json"]
            elif delta["type"] == "citations_delta":
                block.setdefault("citations", []).append(delta["citation"])
            else:  # text, thinking, signature, compaction: appended to their field
                name = delta["type"].removesuffix("_delta")
                field = {"compaction": "content"}.get(name, name)
                block[field] = (block.get(field) or "") + delta[field]
    for index, text in streamed_input.items():
        if text.strip():
            blocks[index]["input"] = json.loads(text)
    return [blocks[i] for i in sorted(blocks)]


def _check_anthropic(turn: Turn, recorded_blocks: list[dict[str, Any]]) -> None:
    _, turns = to_anthropic(_next_request_history(turn))
    expected = [b for b in map(_anthropic_request_block, recorded_blocks) if b is not None]
    if not expected:  # nothing to send back (a refusal with no content): no empty turn
        assert [t["role"] for t in turns] == ["user"]
        return
    assistant = turns[1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == expected
    for block in assistant["content"]:
        if block["type"] in _ANTHROPIC_KEYS:
            required, optional = _ANTHROPIC_KEYS[block["type"]]
            assert required <= set(block) <= required | optional
    # Every tool_use is answered in the next user turn, first, as the API requires.
    calls = [b["id"] for b in assistant["content"] if b["type"] == "tool_use"]
    if calls:
        answered = [b["tool_use_id"] for b in turns[2]["content"] if b["type"] == "tool_result"]
        assert answered == calls


ANTHROPIC_BODIES = sorted(p.name for p in RECORDED.glob("anthropic-*.json"))
ANTHROPIC_STREAMS = [
    (p.name, i)
    for p in sorted(RECORDED.glob("anthropic-*.chunks.txt"))
    for i in range(len(_anthropic_turns(p.name)))
]


@pytest.mark.parametrize("name", ANTHROPIC_BODIES)
def test_anthropic_body_goes_back_as_documented(name: str) -> None:
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    _check_anthropic(decode_anthropic_response(body), body["content"])


@pytest.mark.parametrize(("name", "index"), ANTHROPIC_STREAMS)
def test_anthropic_stream_goes_back_as_documented(name: str, index: int) -> None:
    events = _anthropic_turns(name)[index]
    stream = AnthropicStream()
    for event in events:
        stream.feed(event)
    _check_anthropic(stream.close(), _stream_blocks(events))


def test_anthropic_kinds_without_a_recording_go_back_as_documented() -> None:
    """Redacted thinking, container upload, MCP blocks, a citation: written from the
    response shapes of the API reference."""
    content = [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDHrsR"},
        {"type": "thinking", "thinking": "Look it up.", "signature": "WaUjzkypQ2mUEVM36O2T"},
        {
            "type": "text",
            "text": "The grass is green.",
            "citations": [
                {
                    "type": "char_location",
                    "cited_text": "The grass is green.",
                    "document_index": 0,
                    "document_title": "Facts",
                    "start_char_index": 0,
                    "end_char_index": 20,
                }
            ],
        },
        {
            "type": "mcp_tool_use",
            "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
            "name": "echo",
            "server_name": "example-mcp",
            "input": {"param1": "value1"},
        },
        {
            "type": "mcp_tool_result",
            "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
            "is_error": False,
            "content": [{"type": "text", "text": "Hello"}],
        },
        {"type": "container_upload", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"},
        {"type": "tool_use", "id": "toolu_01A", "name": "lookup", "input": {"q": "x"}},
    ]
    body = {"content": content, "stop_reason": "tool_use"}
    _check_anthropic(decode_anthropic_response(body), content)


# -- OpenAI Chat ---------------------------------------------------------------------------

_CHAT_KEYS = {"role", "content", "refusal", "tool_calls", "reasoning_content"}


def _chat_request_message(summary: dict[str, Any]) -> dict[str, Any]:
    """The assistant message the next request sends, per the documented shape."""
    calls = summary["calls"]
    out: dict[str, Any] = {
        "role": "assistant",
        "content": summary["text"] if summary["text"] or not calls else None,
    }
    if calls:
        out["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    if summary["reasoning"]:
        out["reasoning_content"] = summary["reasoning"]
    if summary["refusal"]:
        out["refusal"] = summary["refusal"]
    return out


def _check_chat(turn: Turn, summary: dict[str, Any]) -> None:
    messages = to_openai_chat(_next_request_history(turn))
    assert messages[1] == _chat_request_message(summary)
    assert set(messages[1]) <= _CHAT_KEYS
    assert [m["tool_call_id"] for m in messages[2:]] == [c[0] for c in summary["calls"]]


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDED.glob("chat-*.chunks.txt")))
def test_chat_stream_goes_back_as_documented(name: str) -> None:
    items = _items(name)
    stream = OpenAIChatStream()
    for item in items:
        stream.feed(item)
    stream.feed("[DONE]")
    _check_chat(stream.close(), _reference(items))


@pytest.mark.parametrize("name", sorted(p.name for p in RECORDED.glob("chat-*.json")))
def test_chat_body_goes_back_as_documented(name: str) -> None:
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    _check_chat(decode_openai_chat_response(body), _body_reference(body))


def test_chat_refusal_with_a_call_goes_back_in_both_fields() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Partly:",
                    "refusal": "not the rest.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"a": 1}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    turn = decode_openai_chat_response(body)
    summary = {
        "text": "Partly:",
        "reasoning": "",
        "refusal": "not the rest.",
        "calls": [("call_1", "f", '{"a": 1}')],
    }
    _check_chat(turn, summary)
    assert isinstance(turn.message, AssistantMessage) and turn.refused
