"""The prompt cache stays warm: every request of a run offers byte-identical tools.

Real providers over loopback HTTP: the tools' bytes of each request body, as the server
received them, are compared; a cut result (which makes ``read_result`` useful) lands
in the middle of the run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import Agent, ContextPolicy
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from ..providers.faultserver import FaultServer, Seen, sse

LONG = "".join(f"row {i:05d}: value ok\n" for i in range(4000))


def fetch_rows(table: str) -> str:
    """All rows of a table (long)."""
    return LONG


def count_rows(table: str) -> int:
    """How many rows a table has."""
    return 4000


def tools_bytes(seen: Seen) -> bytes:
    """The ``"tools"`` member of a request body, byte for byte as it was sent."""
    text = seen.raw.decode()
    start = text.index("[", text.index('"tools"'))
    _, end = json.JSONDecoder().raw_decode(text, start)
    return text[start:end].encode()


def openai_sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def anthropic_sse(call: tuple[str, str, dict[str, Any]] | None, text: str = "") -> bytes:
    """An Anthropic Messages stream: one tool_use block, or one text block."""
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        }
    ]
    if call is not None:
        call_id, name, arguments = call
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
        stop = "end_turn"
    events += [
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 5}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def _run(model: Any) -> Any:
    agent = Agent(model, [fetch_rows, count_rows], context=ContextPolicy(max_result_tokens=300))
    return agent.run_sync("How many rows, and what is in them?")


def test_openai_requests_offer_byte_identical_tools_around_a_cut_result() -> None:
    replies = [
        sse(openai_sse(tool_call_turn(("fetch_rows", {"table": "t"}, "call_a")))),
        sse(openai_sse(tool_call_turn(("count_rows", {"table": "t"}, "call_b")))),
        sse(openai_sse(text_turn("4000 rows of ok values."))),
    ]
    with FaultServer(*replies) as server:
        result = _run(OpenAIChatModel("gpt-4.1", base_url=f"{server.url}/v1", api_key="k"))
        seen = list(server.requests)
    assert result.output == "4000 rows of ok values."
    assert "read_result(" in result.messages[2].content  # the first result was cut
    assert len(seen) == 3
    assert len({tools_bytes(s) for s in seen}) == 1
    names = [t["function"]["name"] for t in seen[0].body["tools"]]
    assert names == ["fetch_rows", "count_rows", "read_result"]


def test_anthropic_requests_offer_byte_identical_tools_around_a_cut_result() -> None:
    replies = [
        sse(anthropic_sse(("toolu_a", "fetch_rows", {"table": "t"}))),
        sse(anthropic_sse(("toolu_b", "count_rows", {"table": "t"}))),
        sse(anthropic_sse(None, "4000 rows of ok values.")),
    ]
    with FaultServer(*replies) as server:
        result = _run(AnthropicModel("claude-x", base_url=server.url, api_key="k"))
        seen = list(server.requests)
    assert result.output == "4000 rows of ok values."
    assert "read_result(" in result.messages[2].content
    assert len(seen) == 3
    assert len({tools_bytes(s) for s in seen}) == 1
    assert [t["name"] for t in seen[0].body["tools"]] == ["fetch_rows", "count_rows", "read_result"]


@pytest.mark.parametrize("choice", ["required", "count_rows"])
def test_read_result_is_held_back_while_a_tool_call_is_forced(choice: str) -> None:
    # A small model could satisfy "call a tool" with read_result: it waits for "auto".
    model = ScriptedModel([tool_call_turn(("count_rows", {"table": "t"})), text_turn("4000 rows.")])
    Agent(model, [fetch_rows, count_rows], tool_choice=choice).run_sync("How many rows?")
    first = [t["function"]["name"] for t in model.requests[0]["tools"]]
    second = [t["function"]["name"] for t in model.requests[1]["tools"]]
    assert "read_result" not in first and "read_result" in second


def test_a_run_that_cannot_cut_does_not_offer_read_result() -> None:
    model = ScriptedModel([text_turn("hi")])
    Agent(model, [count_rows], context=ContextPolicy(max_result_tokens=None)).run_sync("hi")
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["count_rows"]
