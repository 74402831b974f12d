"""Recorded OpenAI-compatible Chat Completions traffic: every dialect decodes, nothing is lost.

The recordings (``fixtures/recorded/chat-*``, sources and licences in its README) come
from DeepSeek, Groq, Mistral, Moonshot (Kimi), Alibaba (Qwen), xAI, Perplexity, Azure
and OpenAI. Each stream is fed as dicts, as the official ``openai`` SDK's chunk objects,
as SSE bytes one byte at a time and in random pieces; all must give the same turn, and
that turn must hold exactly what an independent, deliberately naive reading of the
recording finds (text, reasoning, refusal, calls by index, finish reason). Each
non-streaming body is decoded as a dict and as the SDK's ``ChatCompletion`` alike.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from toolwire.turn import Turn
from toolwire.wire import decode_openai_chat_response
from toolwire.wire.openai_chat import OpenAIChatStream

RECORDED = Path(__file__).parent / "fixtures" / "recorded"
STREAMS = sorted(p.name for p in RECORDED.glob("chat-*.chunks.txt"))
BODIES = sorted(p.name for p in RECORDED.glob("chat-*.json"))


def _items(name: str) -> list[dict[str, Any]]:
    lines = (RECORDED / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _sse(items: list[dict[str, Any]]) -> bytes:
    events = [f"data: {json.dumps(item, ensure_ascii=False)}\n\n" for item in items]
    return ("".join(events) + "data: [DONE]\n\n").encode("utf-8")


# -- the naive reference: what a recording says, read without toolwire -------------------


def _reference(items: list[dict[str, Any]]) -> dict[str, Any]:
    text, reasoning, refusal = [], [], []
    calls: dict[int, dict[str, Any]] = {}
    finish = None
    for item in items:
        for choice in item.get("choices") or []:
            if choice.get("index", 0):
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if isinstance(content, list):  # Mistral's typed chunks: text, and thinking
                for c in content:
                    if c["type"] == "thinking":
                        reasoning.append("".join(t["text"] for t in c["thinking"]))
                content = "".join(c["text"] for c in content if c["type"] == "text")
            text.append(content or "")
            reasoning.append(delta.get("reasoning_content") or delta.get("reasoning") or "")
            refusal.append(delta.get("refusal") or "")
            for position, tc in enumerate(delta.get("tool_calls") or []):
                # Mistral sends each call whole, without an index: one call per entry.
                index = tc.get("index", len(calls) + position)
                call = calls.setdefault(index, {"id": None, "name": "", "args": ""})
                call["id"] = call["id"] or tc.get("id")
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["args"] += fn.get("arguments") or ""
            finish = choice.get("finish_reason") or finish
    return {
        "text": "".join(text),
        "reasoning": "".join(reasoning),
        "refusal": "".join(refusal),
        "calls": [(c["id"], c["name"], c["args"] or "{}") for _, c in sorted(calls.items())],
        "finish": finish or ("tool_calls" if calls else "stop"),
    }


def _body_reference(body: dict[str, Any]) -> dict[str, Any]:
    choice = body["choices"][0]
    message = choice["message"]
    content = message.get("content")
    thinking = ""
    if isinstance(content, list):  # Mistral's typed chunks
        thinking = "".join(
            t["text"] for c in content if c["type"] == "thinking" for t in c["thinking"]
        )
        content = "".join(c["text"] for c in content if c["type"] == "text")
    calls = [
        (c["id"], c["function"]["name"], c["function"]["arguments"] or "{}")
        for c in message.get("tool_calls") or []
    ]
    return {
        "text": content or "",
        "reasoning": (message.get("reasoning_content") or message.get("reasoning") or "")
        + thinking,
        "refusal": message.get("refusal") or "",
        "calls": calls,
        "finish": choice.get("finish_reason"),
    }


def _summary(turn: Turn) -> dict[str, Any]:
    return {
        "text": turn.text,
        "reasoning": turn.reasoning,
        "refusal": turn.refusal,
        "calls": [(c.id, c.name, c.arguments) for c in turn.tool_calls],
        "finish": turn.finish_reason,
    }


# -- streams -----------------------------------------------------------------------------


def _from_dicts(items: list[dict[str, Any]]) -> Turn:
    stream = OpenAIChatStream()
    for item in items:
        stream.feed(item)
    stream.feed("[DONE]")
    return stream.close()


def _from_pieces(data: bytes, cuts: list[int]) -> Turn:
    stream = OpenAIChatStream()
    start = 0
    for cut in [*cuts, len(data)]:
        stream.feed_bytes(data[start:cut])
        start = cut
    return stream.close()


def test_the_recordings_are_here() -> None:
    assert len(STREAMS) >= 15 and len(BODIES) >= 15


@pytest.mark.parametrize("name", STREAMS)
def test_stream_holds_what_was_recorded(name: str) -> None:
    items = _items(name)
    turn = _from_dicts(items)
    assert _summary(turn) == _reference(items)
    # No notice but the documented ones: nothing was dropped on the way.
    # (Mistral sends a whole call without an index: placed, and said so.)
    assert {n.kind for n in turn.notices} <= {"finish_reason_inferred", "missing_index"}


@pytest.mark.parametrize("name", STREAMS)
def test_stream_as_bytes_in_any_pieces_gives_the_same_turn(name: str) -> None:
    items = _items(name)
    expected = _from_dicts(items)
    data = _sse(items)
    rng = random.Random(name)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 400))))
        assert _from_pieces(data, cuts) == expected
    if len(data) <= 40_000:  # one byte at a time (the big recordings: random pieces only)
        assert _from_pieces(data, list(range(1, len(data)))) == expected


@pytest.mark.parametrize("name", STREAMS)
def test_stream_of_sdk_objects_gives_the_same_turn(name: str) -> None:
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    items = _items(name)
    stream = OpenAIChatStream()
    for item in items:
        # Built as the SDK builds what it receives: without validation (a strict
        # validation rejects most dialects), missing fields left unset.
        stream.feed(chunk_type.model_construct(**item))
    stream.feed("[DONE]")
    assert stream.close() == _from_dicts(items)


# -- bodies ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", BODIES)
def test_body_holds_what_was_recorded(name: str) -> None:
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    turn = decode_openai_chat_response(body)
    assert _summary(turn) == _body_reference(body)
    assert turn.notices == []


@pytest.mark.parametrize("name", BODIES)
def test_body_as_sdk_object_gives_the_same_turn(name: str) -> None:
    completion = pytest.importorskip("openai.types.chat").ChatCompletion
    body = json.loads((RECORDED / name).read_text(encoding="utf-8"))
    assert decode_openai_chat_response(completion.model_construct(**body)) == (
        decode_openai_chat_response(body)
    )
