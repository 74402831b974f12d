"""Feeding one recorded Chat stream every way a caller can (shared by the server-quirk tests).

Dicts, the ``openai`` SDK's chunk objects (ended by the iterator finishing, not by
``[DONE]``), SSE bytes one byte at a time and in random pieces: every feed must give the
same turn and the same events.
"""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest

from toolwire.turn import Turn
from toolwire.wire.content_calls import ContentCalls
from toolwire.wire.events import Event
from toolwire.wire.openai_chat import OpenAIChatStream

SERVERS = Path(__file__).parent / "fixtures" / "servers"


def items(name: str) -> list[dict[str, Any]]:
    """The chunks of a fixture (one JSON object a line)."""
    lines = (SERVERS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def body(name: str) -> dict[str, Any]:
    """A non-streaming body fixture."""
    value: dict[str, Any] = json.loads((SERVERS / name).read_text(encoding="utf-8"))
    return value


def sse(chunks: list[dict[str, Any]], *, done: bool = True) -> bytes:
    """The chunks as the server's SSE bytes."""
    text = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks)
    return (text + ("data: [DONE]\n\n" if done else "")).encode("utf-8")


def new_stream(options: dict[str, Any]) -> OpenAIChatStream:
    """A decoder; ``text_format=fmt`` (and ``apply=``) give it a ``ContentCalls`` of its
    own, with ids that do not change between feeds."""
    options = dict(options)
    fmt = options.pop("text_format", None)
    if fmt is not None:
        apply = options.pop("apply", True)
        options["content_calls"] = ContentCalls(fmt, apply=apply, id_prefix="call_")
    return OpenAIChatStream(**options)


def from_dicts(chunks: list[dict[str, Any]], **options: Any) -> tuple[list[Event], Turn]:
    """Fed as dicts, ended by ``"[DONE]"``."""
    stream = new_stream(options)
    events: list[Event] = []
    for chunk in chunks:
        events += stream.feed(chunk)
    events += stream.feed("[DONE]")
    return events, stream.close()


def from_pieces(data: bytes, cuts: list[int], **options: Any) -> tuple[list[Event], Turn]:
    """Fed as SSE bytes cut at ``cuts``."""
    stream = new_stream(options)
    events: list[Event] = []
    start = 0
    for cut in [*cuts, len(data)]:
        events += stream.feed_bytes(data[start:cut])
        start = cut
    return events, stream.close()


def from_sdk(chunks: list[dict[str, Any]], **options: Any) -> tuple[list[Event], Turn]:
    """Fed as the SDK's chunk objects; the iterator's end is the normal end."""
    chunk_type = pytest.importorskip("openai.types.chat").ChatCompletionChunk
    stream = new_stream(options)
    events: list[Event] = []
    for chunk in chunks:
        events += stream.feed(chunk_type.model_construct(**chunk))
    return events, stream.close(source_ended=True)


def every_feed(name: str, **options: Any) -> Turn:
    """The fixture's turn, after checking that every feed gives the same turn and events."""
    chunks = items(name)
    expected = from_dicts(chunks, **options)
    data = sse(chunks)
    assert from_pieces(data, list(range(1, len(data))), **options) == expected
    rng = random.Random(name)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 60))))
        assert from_pieces(data, cuts, **options) == expected
    if importlib.util.find_spec("openai") is not None:  # the SDK is a dev dependency
        assert from_sdk(chunks, **options)[1] == expected[1]
    return expected[1]
