"""The Chat Completions shapes the client gets: SSE chunks, a whole response, an error.

Per the OpenAI API reference: a stream is ``chat.completion.chunk`` objects, the first
delta with ``role: assistant``, the last choice chunk with the ``finish_reason``, then
(with ``stream_options.include_usage``) a chunk with no choices and the ``usage``, then
``data: [DONE]``. toolwire adds ``toolwire_notices`` to the last chunk before
``[DONE]``. The chunk's fixed part is rendered once per response and each delta is
spliced in (the delta's JSON per chunk, text without an encoder: the per-token cost of
the proxy, bench/bench_serve.py).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from ..messages import Usage
from .relay import Delta, Relay
from .request import ProxyCall

__all__ = [
    "DONE",
    "ChunkWriter",
    "delta_json",
    "error_body",
    "response_body",
    "usage_json",
    "usage_text",
]

DONE = b"data: [DONE]\n\n"
_TEXT_OPENERS = {key: f'{{"{key}": ' for key in ("content", "reasoning_content", "refusal")}


def usage_json(usage: Usage | None) -> dict[str, Any]:
    """Chat's ``usage`` object."""
    usage = usage or Usage()
    out: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
    if usage.cache_read_tokens:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    if usage.reasoning_tokens:
        out["completion_tokens_details"] = {"reasoning_tokens": usage.reasoning_tokens}
    return out


class ChunkWriter:
    """Renders one response's SSE chunks.

    Every chunk is made of text templates with the variable parts JSON-escaped and
    spliced in, not of dicts through ``json.dumps``: the same text, byte for byte
    (tests/serve/test_encode.py), for a fraction of the work per chunk and per request.
    """

    def __init__(self, call: ProxyCall) -> None:
        self._call = call
        # json.dumps(ensure_ascii=False) of {"id", "object", "created", "model"}, no "}"
        self._head = (
            f'{{"id": {encode_basestring(call.response_id)}, "object": "chat.completion.chunk", '
            f'"created": {int(call.created)}, "model": {encode_basestring(call.model)}'
        )
        self._open = f'data: {self._head},"choices":[{{"index":0,"delta":'
        self._close = ',"logprobs":null,"finish_reason":null}]}\n\n'

    def first(self) -> bytes:
        """The role chunk every stream starts with."""
        return (self._open + '{"role": "assistant", "content": ""}' + self._close).encode()

    def delta(self, delta: Delta) -> bytes:
        """One delta as an SSE event."""
        return (self._open + delta_json(delta) + self._close).encode()

    def last(self, relay: Relay) -> bytes:
        """The finish chunk, the usage chunk when asked for, the notices, ``[DONE]``."""
        reason = encode_basestring(relay.finish_reason)
        notices = ""
        if relay.notices:
            notices = ', "toolwire_notices": ' + json.dumps(relay.notices, ensure_ascii=False)
        head = "data: " + self._head
        out = (
            f'{head},"choices": [{{"index": 0, "delta": {{}}, "logprobs": null, '
            f'"finish_reason": {reason}}}]'
        )
        if self._call.include_usage:
            out += f'}}\n\n{head},"choices": [], "usage": {usage_text(relay.usage)}'
        return (out + notices + "}\n\n").encode() + DONE

    def event(self, fields: dict[str, Any]) -> bytes:
        """A chunk with this response's id, object, created and model, and ``fields``."""
        body = json.dumps(fields, ensure_ascii=False)[1:]
        return f"data: {self._head},{body}\n\n".encode()


def usage_text(usage: Usage | None) -> str:
    """``json.dumps(usage_json(usage))``, without the dicts and the encoder."""
    usage = usage or Usage()
    prompt, completion = int(usage.input_tokens), int(usage.output_tokens)
    out = (
        f'{{"prompt_tokens": {prompt}, "completion_tokens": {completion}, '
        f'"total_tokens": {prompt + completion}'
    )
    if usage.cache_read_tokens:
        out += f', "prompt_tokens_details": {{"cached_tokens": {int(usage.cache_read_tokens)}}}'
    if usage.reasoning_tokens:
        out += (
            f', "completion_tokens_details": {{"reasoning_tokens": {int(usage.reasoning_tokens)}}}'
        )
    return out + "}"


def delta_json(delta: Delta) -> str:
    """``json.dumps(delta, ensure_ascii=False)``; a text delta (most chunks) without
    building an encoder: a tenth of the time, the same text (tests/serve/test_encode.py)."""
    if len(delta) == 1:
        [(key, value)] = delta.items()
        opener = _TEXT_OPENERS.get(key)
        if opener is not None and type(value) is str:
            return opener + encode_basestring(value) + "}"
    return json.dumps(delta, ensure_ascii=False)


def response_body(call: ProxyCall, relay: Relay, deltas: list[Delta]) -> dict[str, Any]:
    """The whole ``chat.completion`` response made of a turn's deltas."""
    content: list[str] = []
    reasoning: list[str] = []
    refusal: list[str] = []
    calls: list[dict[str, Any]] = []
    for delta in deltas:
        if "content" in delta:
            content.append(delta["content"])
        elif "reasoning_content" in delta:
            reasoning.append(delta["reasoning_content"])
        elif "refusal" in delta:
            refusal.append(delta["refusal"])
        else:
            calls += [{k: v for k, v in c.items() if k != "index"} for c in delta["tool_calls"]]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if reasoning:
        message["reasoning_content"] = "".join(reasoning)
    if refusal:
        message["refusal"] = "".join(refusal)
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "logprobs": None}
    choice["finish_reason"] = relay.finish_reason
    return {
        "id": call.response_id,
        "object": "chat.completion",
        "created": call.created,
        "model": call.model,
        "choices": [choice],
        "usage": usage_json(relay.usage),
    }


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """OpenAI's error shape."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
