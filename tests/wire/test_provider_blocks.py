"""Provider-side blocks (server tools, MCP connector, programmatic calls) in real recordings.

The recordings are in fixtures/recorded (sources and licences in its README). Each is
decoded as dicts, as SSE bytes split one byte at a time, and (where a body exists)
non-streamed: all give the same turn, the server blocks are ``ProviderPart``s in
place, a client ``tool_use`` of the same turn survives, and the encoder sends every
block back unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.errors import ProtocolError
from toolwire.history.anthropic import from_anthropic, to_anthropic
from toolwire.messages import ProviderPart, TextPart, ToolCall, ToolResult, UserMessage
from toolwire.turn import Turn
from toolwire.wire import decode_anthropic_response
from toolwire.wire.anthropic import AnthropicStream

RECORDED = Path(__file__).parent / "fixtures" / "recorded"


def _items(name: str) -> list[dict]:
    return [json.loads(line) for line in (RECORDED / name).read_text().splitlines() if line]


def _sse(items: list[dict]) -> bytes:
    return b"".join(f"event: {i['type']}\ndata: {json.dumps(i)}\n\n".encode() for i in items)


def _decode(name: str) -> Turn:
    stream = AnthropicStream()
    for item in _items(name):
        stream.feed(item)
    turn = stream.close()
    # The same bytes split one byte at a time give the same turn.
    raw = AnthropicStream()
    data = _sse(_items(name))
    for i in range(len(data)):
        raw.feed_bytes(data[i : i + 1])
    assert raw.close() == turn
    return turn


def test_web_search_next_to_a_client_tool_use() -> None:
    turn = _decode("anthropic-web-search-with-tool.chunks.txt")
    kinds = [p.kind for p in turn.message.parts]
    assert kinds == ["text", "tool_call", "provider", "provider"]
    # The client call is kept and is the only request: server tools are never executed.
    assert turn.tool_calls == [
        ToolCall("toolu_01SaveResults", "save_results", '{"filename": "news.txt"}')
    ]
    assert [r.name for r in turn.requests] == ["save_results"]
    server_use, result = turn.message.parts[2], turn.message.parts[3]
    assert isinstance(server_use, ProviderPart) and isinstance(result, ProviderPart)
    assert server_use.data == {
        "type": "server_tool_use",
        "id": "srvtoolu_01WebSearch",
        "name": "web_search",
        "input": {"query": "latest news"},
    }
    assert result.type == "web_search_tool_result"
    assert result.data["tool_use_id"] == "srvtoolu_01WebSearch"
    assert turn.finish_reason == "tool_calls"
    assert turn.notices == []


def test_stream_and_body_give_the_same_turn() -> None:
    streamed = _decode("anthropic-web-search-with-tool.chunks.txt")
    body = json.loads((RECORDED / "anthropic-web-search-with-tool.json").read_text())
    assert decode_anthropic_response(body).message == streamed.message


def test_server_blocks_go_back_unchanged() -> None:
    turn = _decode("anthropic-web-search-with-tool.chunks.txt")
    body = json.loads((RECORDED / "anthropic-web-search-with-tool.json").read_text())
    history = [
        UserMessage("news?"),
        turn.message,
        ToolResult("toolu_01SaveResults", "save_results", "saved"),
    ]
    _, turns = to_anthropic(history)
    assert turns[1] == {"role": "assistant", "content": body["content"]}
    assert turns[2]["content"][0]["tool_use_id"] == "toolu_01SaveResults"
    # ... and come back from the history as the same parts.
    assert from_anthropic(None, turns)[1] == turn.message


def test_mcp_connector_blocks() -> None:
    turn = _decode("anthropic-mcp.chunks.txt")
    assert [p.kind for p in turn.message.parts] == ["provider", "provider", "text"]
    use = turn.message.parts[0]
    assert isinstance(use, ProviderPart) and use.type == "mcp_tool_use"
    assert use.data["input"] == {"message": "hello world"}
    assert use.data["server_name"] == "echo"
    assert turn.requests == [] and turn.finish_reason == "stop"
    assert turn.text.startswith("The echo tool responded")


def test_programmatic_call_in_message_start() -> None:
    """Blocks and the stop reason arrive in message_start, with no block events."""
    turn = _decode("anthropic-message-start-prepopulated-content.chunks.txt")
    assert [p.kind for p in turn.message.parts] == ["provider", "provider", "tool_call"]
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_unrelated_caller"}
    assert turn.tool_calls == [
        ToolCall("toolu_followup", "lookup_customer", '{"id": "customer_123"}', caller=caller)
    ]
    assert turn.requests[0].input == {"id": "customer_123"}
    assert turn.finish_reason == "tool_calls"


def test_unknown_block_is_kept_with_a_notice() -> None:
    body = {
        "content": [{"type": "hologram", "x": 1}, {"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
    }
    turn = decode_anthropic_response(body)
    assert turn.message.parts == [
        ProviderPart("anthropic", "hologram", {"type": "hologram", "x": 1}),
        TextPart("hi"),
    ]
    assert [n.kind for n in turn.notices] == ["unknown_block"]
    stream = AnthropicStream()
    stream.feed(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "hologram", "x": 1}}
    )
    stream.feed({"type": "content_block_stop", "index": 0})
    stream.feed(
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "hi"}}
    )
    stream.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    stream.feed({"type": "message_stop"})
    streamed = stream.close()
    assert streamed.message == turn.message
    assert [n.kind for n in streamed.notices] == ["unknown_block"]


def test_server_tool_input_that_is_not_json_is_a_protocol_error() -> None:
    stream = AnthropicStream()
    stream.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "s",
                "name": "web_search",
                "input": {},
            },
        }
    )
    stream.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "{"},
        }
    )
    with pytest.raises(ProtocolError, match="server_tool_use block 0 is not JSON"):
        stream.feed({"type": "content_block_stop", "index": 0})


CITATION = {
    "type": "web_search_result_location",
    "cited_text": "Claude Shannon was born on April 30, 1916",
    "url": "https://en.wikipedia.org/wiki/Claude_Shannon",
    "title": "Claude Shannon - Wikipedia",
    "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm",
}


def test_citations_are_kept_in_both_decoders_and_sent_back() -> None:
    stream = AnthropicStream()
    stream.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "text", "text": "", "citations": []},
        }
    )
    stream.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "citations_delta", "citation": CITATION},
        }
    )
    stream.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Shannon was born in 1916."},
        }
    )
    stream.feed({"type": "content_block_stop", "index": 0})
    stream.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    stream.feed({"type": "message_stop"})
    turn = stream.close()
    assert turn.message.parts == [TextPart("Shannon was born in 1916.", [CITATION])]
    block = {"type": "text", "text": "Shannon was born in 1916.", "citations": [CITATION]}
    body = {"content": [block], "stop_reason": "end_turn"}
    assert decode_anthropic_response(body).message == turn.message
    assert to_anthropic([UserMessage("q"), turn.message])[1][1]["content"] == [block]


def test_compaction_block_is_kept_with_its_streamed_content() -> None:
    stream = AnthropicStream()
    stream.feed(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": None},
        }
    )
    stream.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": "## Summary"},
        }
    )
    stream.feed(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "compaction_delta", "content": " of it"},
        }
    )
    stream.feed({"type": "content_block_stop", "index": 0})
    stream.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    stream.feed({"type": "message_stop"})
    turn = stream.close()
    assert turn.message.parts == [
        ProviderPart(
            "anthropic", "compaction", {"type": "compaction", "content": "## Summary of it"}
        )
    ]
    assert turn.notices == []
    body = {
        "content": [{"type": "compaction", "content": "## Summary of it"}],
        "stop_reason": "end_turn",
    }
    assert decode_anthropic_response(body).message == turn.message


def test_an_unknown_delta_is_reported() -> None:
    stream = AnthropicStream()
    stream.feed(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    )
    stream.feed(
        {"type": "content_block_delta", "index": 0, "delta": {"type": "sparkle_delta", "x": 1}}
    )
    stream.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    stream.feed({"type": "message_stop"})
    assert [(n.kind, n.index) for n in stream.close().notices] == [("unknown_delta", 0)]
