"""Recorded Anthropic Messages traffic: thinking, refusals, programmatic calls, server tools.

The recordings (``fixtures/recorded/anthropic-*``, sources and licences in its README)
are fed as dicts, as the official ``anthropic`` SDK's event objects, and as SSE bytes
one byte at a time and in random pieces; all give the same turn, and the turn holds
what a naive reading of the recording finds: the text, the reasoning, each client
``tool_use`` (with its ``caller``), and every other block kept in order. A file may
hold several responses (programmatic tool calling answers each call with a new one);
each ``message_start`` begins a turn of its own.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from toolwire.messages import ProviderPart
from toolwire.turn import Turn
from toolwire.wire import decode_anthropic_response
from toolwire.wire.anthropic import AnthropicStream

RECORDED = Path(__file__).parent / "fixtures" / "recorded"
STREAMS = sorted(p.name for p in RECORDED.glob("anthropic-*.chunks.txt"))
BODIES = sorted(p.name for p in RECORDED.glob("anthropic-*.json"))
_LOCAL = {"text", "thinking", "redacted_thinking", "tool_use"}


def _turns(name: str) -> list[list[dict[str, Any]]]:
    """The recording's events, one list per response (each starts at message_start)."""
    turns: list[list[dict[str, Any]]] = []
    for line in (RECORDED / name).read_text(encoding="utf-8").splitlines():
        if line.strip():
            event = json.loads(line)
            if event["type"] == "message_start" or not turns:
                turns.append([])
            turns[-1].append(event)
    return turns


def _sse(events: list[dict[str, Any]]) -> bytes:
    text = "".join(
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    )
    return text.encode("utf-8")


def _reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the events say, read naively: text, reasoning, client calls, other blocks."""
    blocks: dict[int, dict[str, Any]] = {}
    stop = None
    for event in events:
        kind = event["type"]
        if kind == "message_start":
            for i, block in enumerate(event["message"].get("content") or []):
                blocks[i] = dict(block)
            stop = event["message"].get("stop_reason") or stop
        elif kind == "content_block_start":
            blocks[event["index"]] = dict(event["content_block"])
        elif kind == "content_block_delta":
            block, delta = blocks[event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] = block.get("text", "") + delta["text"]
            elif delta["type"] == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta["thinking"]
        elif kind == "message_delta":
            stop = event["delta"].get("stop_reason") or stop
    return _summary_of_blocks([blocks[i] for i in sorted(blocks)], stop)


def _summary_of_blocks(blocks: list[dict[str, Any]], stop: str | None) -> dict[str, Any]:
    return {
        "text": "".join(b.get("text", "") for b in blocks if b["type"] == "text"),
        "reasoning": "".join(b.get("thinking", "") for b in blocks if b["type"] == "thinking"),
        "calls": [(b["id"], b["name"], b.get("caller")) for b in blocks if b["type"] == "tool_use"],
        "kept": [b["type"] for b in blocks if b["type"] not in _LOCAL],
        "refused": stop == "refusal",
    }


def _summary(turn: Turn) -> dict[str, Any]:
    return {
        "text": turn.text,
        "reasoning": turn.reasoning,
        "calls": [(c.id, c.name, c.caller) for c in turn.tool_calls],
        "kept": [p.type for p in turn.message.parts if isinstance(p, ProviderPart)],
        "refused": turn.refused,
    }


def _from_dicts(events: list[dict[str, Any]]) -> Turn:
    stream = AnthropicStream()
    for event in events:
        stream.feed(event)
    return stream.close()


def _from_pieces(data: bytes, cuts: list[int]) -> Turn:
    stream = AnthropicStream()
    start = 0
    for cut in [*cuts, len(data)]:
        stream.feed_bytes(data[start:cut])
        start = cut
    return stream.close()


def _cases() -> list[tuple[str, int]]:
    return [(name, i) for name in STREAMS for i in range(len(_turns(name)))]


@pytest.mark.parametrize(("name", "turn"), _cases())
def test_stream_holds_what_was_recorded(name: str, turn: int) -> None:
    events = _turns(name)[turn]
    decoded = _from_dicts(events)
    assert _summary(decoded) == _reference(events)
    # A refusal's stop_details (why) is kept in a notice; nothing else is noticed.
    assert [n.kind for n in decoded.notices] == (["refusal"] if "refusal" in name else [])


@pytest.mark.parametrize(("name", "turn"), _cases())
def test_stream_as_bytes_in_any_pieces_gives_the_same_turn(name: str, turn: int) -> None:
    events = _turns(name)[turn]
    expected = _from_dicts(events)
    data = _sse(events)
    rng = random.Random(f"{name}{turn}")
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 300))))
        assert _from_pieces(data, cuts) == expected
    if len(data) <= 40_000:
        assert _from_pieces(data, list(range(1, len(data)))) == expected


_SDK_EVENTS = {
    "message_start": "RawMessageStartEvent",
    "message_delta": "RawMessageDeltaEvent",
    "message_stop": "RawMessageStopEvent",
    "content_block_start": "RawContentBlockStartEvent",
    "content_block_delta": "RawContentBlockDeltaEvent",
    "content_block_stop": "RawContentBlockStopEvent",
}


@pytest.mark.parametrize(("name", "turn"), _cases())
def test_stream_of_sdk_objects_gives_the_same_turn(name: str, turn: int) -> None:
    types = pytest.importorskip("anthropic.types")
    events = _turns(name)[turn]
    stream = AnthropicStream()
    for event in events:
        if event["type"] in _SDK_EVENTS:  # the SDK yields no ping events
            # Built as the SDK builds what it receives: without validation.
            stream.feed(getattr(types, _SDK_EVENTS[event["type"]]).model_construct(**event))
    assert stream.close() == _from_dicts(events)


@pytest.mark.parametrize("name", BODIES)
def test_body_holds_what_was_recorded(name: str) -> None:
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    turn = decode_anthropic_response(body)
    assert _summary(turn) == _summary_of_blocks(body["content"], body.get("stop_reason"))
    # The programmatic recording's last body holds the code's four tool_use blocks and
    # ends with end_turn: that mismatch is the provider's and is reported, not hidden.
    expected = ["finish_reason_mismatch"] if "programmatic" in name else []
    if body.get("stop_details"):
        expected = ["refusal"]
    assert [n.kind for n in turn.notices] == expected


@pytest.mark.parametrize("name", BODIES)
def test_body_as_sdk_object_gives_the_same_turn(name: str) -> None:
    message = pytest.importorskip("anthropic.types").Message
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    assert decode_anthropic_response(message.model_construct(**body)) == (
        decode_anthropic_response(body)
    )


def test_a_refusal_is_flagged_in_stream_and_body() -> None:
    streamed = _from_dicts(_turns("anthropic-refusal.chunks.txt")[0])
    body = decode_anthropic_response(json.loads((RECORDED / "anthropic-refusal.json").read_text()))
    for turn in (streamed, body):
        assert turn.refused and turn.finish_reason == "content_filter"
        assert turn.message.parts == [] and turn.tool_calls == []
        assert turn.notices[0].message == (
            "the model refused: cyber; This request triggered restrictions on violative "
            "cyber content and was blocked under Anthropic's Usage Policy."
        )


def test_programmatic_calls_keep_their_caller() -> None:
    first = _from_dicts(_turns("anthropic-programmatic-tool-calling.1.chunks.txt")[0])
    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_01MzSrFWsmzBdcoQkGWLyRjK"}
    assert [(c.name, c.caller) for c in first.tool_calls] == [("rollDie", caller)]
    assert first.requests[0].input == {"player": "player1"}
    # The server tool use that made the call is kept verbatim, its own caller included.
    server = next(p for p in first.message.parts if isinstance(p, ProviderPart))
    assert server.data["caller"] == {"type": "direct"}
    assert server.data["id"] == caller["tool_id"]


def test_sdk_stream_and_sdk_body_keep_the_same_provider_blocks() -> None:
    """The stream decoder dumps SDK objects with ``to_dict``; the body decoder must too,
    or a block kept verbatim would gain the SDK's unset fields as ``None``."""
    types = pytest.importorskip("anthropic.types")
    stream = AnthropicStream()
    for event in _turns("anthropic-web-search-with-tool.chunks.txt")[0]:
        if event["type"] in _SDK_EVENTS:
            stream.feed(getattr(types, _SDK_EVENTS[event["type"]]).model_construct(**event))
    body = json.loads((RECORDED / "anthropic-web-search-with-tool.json").read_text())
    from_body = decode_anthropic_response(types.Message.model_construct(**body))
    assert stream.close().message == from_body.message
    kept = [p.data for p in from_body.message.parts if isinstance(p, ProviderPart)]
    assert kept == [b for b in body["content"] if b["type"] not in _LOCAL]
