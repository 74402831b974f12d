"""What a client gets does not depend on how the upstream chunked its answer.

The relay (no HTTP here: the same code the app runs) is fed an upstream's Chat chunks
split at random, markup in ``content`` and native ``tool_calls`` alike; the response it
makes, and the stream it makes reassembled, are the same for every split.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import CallerError
from toolwire.serve.encode import response_body
from toolwire.serve.relay import Relay
from toolwire.serve.request import read_call
from toolwire.serve.upstream import _chat_wire

from .proxy import chat_body

TOOLS = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
TEXT = (
    "Reading both.\n"
    '<tool_call>{"name": "read", "arguments": {"path": "a.rs"}}</tool_call>\n'
    '<tool_call>{"name": "read", "arguments": {\'path\': \'b.rs\',}}</tool_call>'
)


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


def relayed(pieces: list[str], cuts: list[int]) -> dict[str, Any]:
    """The whole response the relay makes of ``pieces`` as content, the SSE bytes cut at
    ``cuts``, ids left out (they are random per response)."""
    call = read_call(chat_body(tools=TOOLS, stream=True), None)
    sse = b"".join(chunk({"content": p}) for p in pieces) + chunk({}, "stop") + b"data: [DONE]\n\n"
    decoder = _chat_wire(call).stream()
    relay = Relay(call)
    deltas = []
    start = 0
    for end in [*sorted(c % (len(sse) + 1) for c in cuts), len(sse)]:
        for event in decoder.feed_bytes(sse[start:end]):
            deltas += relay.feed(event)
        start = max(start, end)
    from toolwire.run.model import TurnDone

    deltas += relay.feed(TurnDone(decoder.close()))
    body = response_body(call, relay, deltas)
    message = body["choices"][0]["message"]
    for item in message.get("tool_calls", []):
        item.pop("id")
    return {"message": message, "finish": body["choices"][0]["finish_reason"],
            "notices": [n["kind"] for n in relay.notices]}  # fmt: skip


WHOLE = relayed([TEXT], [])


def test_the_whole_answer() -> None:
    calls = WHOLE["message"]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"path": "a.rs"},
        {"path": "b.rs"},
    ]
    assert WHOLE["message"]["content"] == "Reading both."
    assert WHOLE["finish"] == "tool_calls"
    assert "calls_from_content" in WHOLE["notices"]


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 10**6), max_size=20),
)
def test_any_split_gives_the_same_response(sizes: list[int], cuts: list[int]) -> None:
    pieces, at = [], 0
    while at < len(TEXT):
        size = sizes[len(pieces) % len(sizes)]
        pieces.append(TEXT[at : at + size])
        at += size
    assert relayed(pieces, cuts) == WHOLE


def test_a_format_is_made_once_per_family_prompt_and_tools() -> None:
    """Requests with the same tools share the family's format; other tools or another
    family get their own (its tool index types the arguments)."""
    from toolwire.serve import upstream

    upstream._FORMATS.clear()
    typed = [{"type": "function", "function": {"name": "read", "parameters": {
        "type": "object", "properties": {"lines": {"type": "integer"}}}}}]  # fmt: skip

    def fmt(**fields: Any) -> Any:
        call = read_call(chat_body(**fields), None)
        assert call.family is not None
        return upstream._format(call, call.family)

    first = fmt(tools=TOOLS)
    assert fmt(tools=TOOLS) is first
    other = fmt(tools=typed)
    assert other is not first and "read" in other.tools
    assert fmt(tools=TOOLS, model="mistralai/Mistral-Small-3.2-24B-Instruct-2506") is not first
    for n in range(upstream.MAX_FORMATS + 1):  # bounded: clients choose the tools
        fmt(tools=[{"type": "function", "function": {"name": f"t{n}"}}])
    assert len(upstream._FORMATS) <= upstream.MAX_FORMATS


def test_the_tools_are_read_once_per_distinct_tools_and_bounded() -> None:
    """Requests with the same tools share their ``ToolDef``s (frozen) in fresh lists;
    other tools are read anew; a bad definition is still a 400 every time."""
    from toolwire.serve import request

    request._tool_set.cache_clear()
    first = read_call(chat_body(tools=TOOLS), None)
    again = read_call(chat_body(tools=TOOLS), None)
    assert again.tools == first.tools and again.tools is not first.tools
    assert again.tools[0] is first.tools[0] and again.tools_key == first.tools_key
    renamed = [{"type": "function", "function": {"name": "write"}}]
    assert [t.name for t in read_call(chat_body(tools=renamed), None).tools] == ["write"]
    bad = [{"type": "function", "function": {"name": ""}}]
    for _ in range(2):
        with pytest.raises(CallerError, match="name must be a non-empty string"):
            read_call(chat_body(tools=bad), None)
    for n in range(request.MAX_TOOL_SETS + 1):  # bounded: clients choose the tools
        read_call(chat_body(tools=[{"type": "function", "function": {"name": f"t{n}"}}]), None)
    assert request._tool_set.cache_info().currsize <= request.MAX_TOOL_SETS
    assert read_call(chat_body(tools=TOOLS), None).tools == first.tools
