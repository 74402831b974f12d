"""Recorded Responses API traffic: built-in tool items, custom tool calls, MCP approval
requests and encrypted reasoning, decoded alike from every shape they arrive in.

The recordings are in fixtures/recorded (sources and licences in its README), provider
ids exactly as recorded. Each stream is fed as dicts, as SSE bytes in random pieces
and (the small ones) one byte at a time; its turn must equal the turn of the response
object that its own ``response.completed`` event carries (the same output as a
non-streaming body). A recording that holds several streams (a multi-step run) is cut
at its second ``response.created``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from toolwire.messages import ProviderPart, ReasoningPart, TextPart, ToolCall
from toolwire.turn import Turn
from toolwire.wire import OpenAIResponsesStream, decode_responses_response

RECORDED = Path(__file__).parent / "fixtures" / "recorded"

# name -> (finish reason, the turn's parts as (kind, detail), notices)
EXPECTED: dict[str, tuple[str, list[tuple[str, Any]], list[str]]] = {
    "custom-tool.1": ("tool_calls", [("tool_call", "write_sql")], []),
    "mcp-tool-approval.1": (
        "stop",
        [("provider", "mcp_list_tools"), ("reasoning", None), ("provider", "mcp_approval_request")],
        [],
    ),
    "mcp-tool-approval.2": (
        "stop",
        [("provider", "mcp_list_tools"), ("reasoning", None), ("text", None)],
        [],
    ),
    "reasoning-encrypted-content.1": (
        "tool_calls",
        [("reasoning", None), ("tool_call", "calculator")],
        [],
    ),
    "web-search-tool.1": (
        "stop",
        [("reasoning", None), ("provider", "web_search_call")] * 6
        + [("reasoning", None), ("text", None)],
        [],
    ),
    "file-search-tool.1": (
        "stop",
        [
            ("reasoning", None),
            ("provider", "file_search_call"),
            ("reasoning", None),
            ("text", None),
        ],
        [],
    ),
    "code-interpreter-tool.1": (
        "stop",
        [("reasoning", None), ("provider", "code_interpreter_call")] * 3
        + [("reasoning", None), ("text", None)],
        [],
    ),
    "image-generation-tool.1": (
        "stop",
        [("reasoning", None), ("provider", "image_generation_call")],
        [],
    ),
    "local-shell-tool.1": (
        "stop",
        [("reasoning", None), ("provider", "local_shell_call")],
        [],
    ),
    "shell-tool.1": ("stop", [("provider", "shell_call")], []),
    "apply-patch-tool.1": ("stop", [("provider", "apply_patch_call")], []),
}

_ONE_BYTE_LIMIT = 12_000  # bytes of SSE fed one byte at a time (the small recordings)


def recorded_events(name: str) -> list[dict[str, Any]]:
    """The first stream of ``responses-<name>.chunks.txt``, one event per line."""
    lines = (RECORDED / f"responses-{name}.chunks.txt").read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    starts = [i for i, event in enumerate(events) if event["type"] == "response.created"]
    return events[: starts[1]] if len(starts) > 1 else events


def recorded_body(name: str) -> dict[str, Any]:
    """The recorded non-streaming body ``responses-<name>.json``."""
    body: dict[str, Any] = json.loads((RECORDED / f"responses-{name}.json").read_text())
    return body


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def stream_turn(events: list[dict[str, Any]]) -> Turn:
    stream = OpenAIResponsesStream()
    for event in events:
        stream.feed(event)
    return stream.close()


def bytes_turn(data: bytes, sizes: list[int]) -> Turn:
    stream = OpenAIResponsesStream()
    start = 0
    for size in sizes:
        stream.feed_bytes(data[start : start + size])
        start += size
    stream.feed_bytes(data[start:])
    return stream.close()


def shape(turn: Turn) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for part in turn.message.parts:
        if isinstance(part, ProviderPart):
            out.append(("provider", part.type))
        elif isinstance(part, ToolCall):
            out.append(("tool_call", part.name))
        elif isinstance(part, ReasoningPart):
            out.append(("reasoning", None))
        else:
            assert isinstance(part, TextPart)
            out.append(("text", None))
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_recorded_stream_gives_the_turn_of_its_own_response(name: str) -> None:
    events = recorded_events(name)
    turn = stream_turn(events)
    finish, parts, notices = EXPECTED[name]
    assert turn.finish_reason == finish
    assert shape(turn) == parts
    assert [notice.kind for notice in turn.notices] == notices
    completed = [e for e in events if e["type"] == "response.completed"][-1]["response"]
    body = decode_responses_response(completed)
    assert _comparable(body) == _comparable(turn)
    assert body.requests == turn.requests
    assert body.finish_reason == turn.finish_reason
    assert [n.kind for n in body.notices] == notices
    # Kept items are the finished items, verbatim (ids exactly as recorded).
    kept = [p.data for p in turn.message.parts if isinstance(p, ProviderPart)]
    assert kept == [o for o in completed["output"] if o["type"] not in _MAPPED]


_MAPPED = {"message", "reasoning", "function_call", "custom_tool_call"}


def _comparable(turn: Turn) -> list[Any]:
    """The turn's parts, each reasoning part's encrypted content only as "present": the
    provider encrypts again for ``response.completed``, so the text differs from the
    item's (both are valid to send back)."""
    parts: list[Any] = []
    for part in turn.message.parts:
        if isinstance(part, ReasoningPart):
            parts.append((part.text, part.id, bool(part.redacted)))
        else:
            parts.append(part)
    return parts


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_any_split_of_the_recorded_bytes_gives_the_same_turn(name: str) -> None:
    events = recorded_events(name)
    expected = stream_turn(events)
    data = sse(events)
    rng = random.Random(name)
    for _ in range(3):
        sizes = [rng.randint(1, 400) for _ in range(len(data) // 50 + 1)]
        assert bytes_turn(data, sizes) == expected
    if len(data) <= _ONE_BYTE_LIMIT:
        assert bytes_turn(data, [1] * len(data)) == expected


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_recorded_bodies_decode(name: str) -> None:
    """The separately recorded non-streaming bodies hold the same kinds of parts."""
    body = decode_responses_response(recorded_body(name))
    kinds = {kind for kind, _ in shape(body)}
    assert kinds <= {kind for kind, _ in EXPECTED[name][1]} | {"text", "reasoning"}
    assert [n.kind for n in body.notices] == EXPECTED[name][2]


def test_a_recorded_custom_tool_call_is_a_client_call_with_its_raw_input() -> None:
    turn = stream_turn(recorded_events("custom-tool.1"))
    assert turn.tool_calls == [
        ToolCall(
            "call_custom_sql_001", "write_sql", "SELECT * FROM users WHERE age > 25", freeform=True
        )
    ]
    (request,) = turn.requests
    assert request.freeform and request.error is None
    assert request.input == request.raw_arguments == "SELECT * FROM users WHERE age > 25"
    assert decode_responses_response(recorded_body("custom-tool.1")) == turn
