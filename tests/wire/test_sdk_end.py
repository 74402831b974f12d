"""A stream fed as SDK chunks ends when the SDK's iterator does (issue 25 g).

The SDK strips ``[DONE]``, so a server that never sends a finish reason looked cut when
fed as objects and finished (``finish_reason_inferred``) when fed as bytes.
``close(source_ended=True)`` is how the SDK path says its source ended normally.
"""

from __future__ import annotations

import pytest

from toolwire.errors import ProtocolError
from toolwire.wire.anthropic import AnthropicStream

from .servers_feed import from_pieces, from_sdk, items, sse


def _no_finish() -> list[dict]:  # type: ignore[type-arg]
    chunks = items("chat-vllm-index0-whole.chunks.txt")
    return [c for c in chunks if not c["choices"][0].get("finish_reason")]


def test_sdk_chunks_that_ended_normally_agree_with_the_bytes() -> None:
    chunks = _no_finish()
    data = sse(chunks)
    _, from_bytes = from_pieces(data, list(range(1, len(data), 17)))
    _, from_objects = from_sdk(chunks)
    assert from_objects == from_bytes
    assert from_bytes.finish_reason == "tool_calls"
    assert "finish_reason_inferred" in [n.kind for n in from_bytes.notices]


def test_without_the_signal_the_same_chunks_were_cut() -> None:
    pytest.importorskip("openai")
    from openai.types.chat import ChatCompletionChunk

    from toolwire.wire.openai_chat import OpenAIChatStream

    stream = OpenAIChatStream()
    for chunk in _no_finish():
        stream.feed(ChatCompletionChunk.model_construct(**chunk))
    with pytest.raises(ProtocolError, match="ended before the turn finished"):
        stream.close()


def test_a_provider_with_a_terminal_event_still_needs_it() -> None:
    stream = AnthropicStream()
    stream.feed({"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}})
    with pytest.raises(ProtocolError, match="ended before the turn finished"):
        stream.close(source_ended=True)
