"""A loopback OpenAI-compatible model server that plays recorded raw outputs.

It stands in for vLLM, llama.cpp's server or Ollama with no tool parser: a chat
request gets the recorded output of a model as ``content`` (streamed as SSE in pieces,
or as one ``chat.completion``), or, when told to, native ``tool_calls`` chunks exactly
as given. ``/v1/completions`` plays the same text as raw completion chunks. Pieces can
be paced (the bench's 50 tokens/s per stream).

A real HTTP/1.1 server on asyncio (keep-alive, chunked bodies), run in its own thread:
the proxy reaches it over a socket like any upstream. It records each request body and
sets :attr:`RecordedUpstream.disconnected` when a client goes away mid-stream (or while
it holds a whole answer back).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    """What the upstream answers one chat request with.

    Attributes:
        text: The model's raw output, sent as ``content``.
        pieces: How many characters each content delta holds.
        chunks: Native Chat ``delta`` objects to send instead of ``text`` (each one
            chunk), e.g. ``{"tool_calls": [...]}``.
        calls: The whole ``tool_calls`` of a non-streaming answer.
        reasoning: Text sent as ``reasoning_content`` before the content.
        status: An HTTP error status to answer with (with ``error`` as the message).
        finish: The finish reason of the last chunk.
        delay: Seconds between two deltas (pacing).
        hold: Seconds to wait after the first delta, or before a whole answer (a
            silent upstream).
        fail_after: Send an ``error`` event after this many deltas (a stream that
            fails once output has started, as vLLM reports it).
    """

    text: str = ""
    pieces: int = 3
    chunks: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    reasoning: str = ""
    status: int = 200
    error: str = "upstream failed"
    finish: str = "stop"
    delay: float = 0.0
    hold: float = 0.0
    fail_after: int | None = None


Script = Callable[[dict[str, Any]], Reply]


class RecordedUpstream:
    """The server; ``script`` picks the reply of each request from its body."""

    def __init__(self, script: Script, model: str = "recorded") -> None:
        self.script = script
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []  # each POST's, names lowercased
        self.received = threading.Event()  # a chat or completions request came
        self.disconnected = threading.Event()
        self.open_streams = 0
        self.connections = 0  # accepted so far (a pool that reuses them opens few)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        """The ``/v1`` base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> RecordedUpstream:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=1024)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)
                }
                if method == "POST":
                    self.request_headers.append(headers)
                size = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(size) if size else b""
                await self._handle(method, path, raw, reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _handle(
        self,
        method: str,
        path: str,
        raw: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        if method == "GET" and path.endswith("/models"):
            data = {"object": "list", "data": [{"id": self.model, "object": "model",
                                                "created": 0, "owned_by": "recorded"}]}  # fmt: skip
            await _send_json(writer, 200, data)
            return
        body = json.loads(raw)
        self.requests.append(body)
        self.received.set()
        reply = self.script(body)
        if reply.status != 200:
            error = {
                "error": {"message": reply.error, "type": "BadRequestError", "code": reply.status}
            }
            await _send_json(writer, reply.status, error)
            return
        completions = path.endswith("/completions") and not path.endswith("chat/completions")
        if not body.get("stream"):
            if reply.hold:
                await self._hold(reader, reply.hold)
            await _send_json(writer, 200, _whole(reply, body, completions))
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        self.open_streams += 1
        try:
            for i, event in enumerate(_events(reply, body, completions)):
                if i and reply.delay:
                    await asyncio.sleep(reply.delay)
                if i == 2 and reply.hold:
                    await _silence(reader, reply.hold)
                data = f"data: {event}\n\n".encode()
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        except ConnectionError:
            self.disconnected.set()
            raise
        finally:
            self.open_streams -= 1

    async def _hold(self, reader: asyncio.StreamReader, seconds: float) -> None:
        """A whole answer's wait: a client that leaves meanwhile sets ``disconnected``."""
        try:
            await _silence(reader, seconds)
        except ConnectionError:
            self.disconnected.set()
            raise


async def _silence(reader: asyncio.StreamReader, seconds: float) -> None:
    """Send nothing for ``seconds``; a client that closes its end meanwhile is gone."""
    try:
        gone = await asyncio.wait_for(reader.read(1), seconds) == b""
    except asyncio.TimeoutError:
        return
    if gone:
        raise ConnectionResetError("the client closed the connection")


async def _send_json(writer: asyncio.StreamWriter, status: int, data: Any) -> None:
    payload = json.dumps(data).encode()
    writer.write(
        b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
        % (status, len(payload), payload)
    )
    await writer.drain()


def split(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters."""
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _events(reply: Reply, body: dict[str, Any], completions: bool) -> list[str]:
    base = {"id": "up-1", "created": int(time.time()), "model": body.get("model", "")}
    out: list[str] = []
    if completions:
        for piece in split(reply.text, reply.pieces):
            out.append(json.dumps({**base, "object": "text_completion",
                                   "choices": [{"index": 0, "text": piece, "finish_reason": None}]}))  # fmt: skip
        end = {"index": 0, "text": "", "finish_reason": reply.finish}
        out.append(json.dumps({**base, "object": "text_completion", "choices": [end]}))
        out.append("[DONE]")
        return out
    chunk = {**base, "object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"reasoning_content": p} for p in split(reply.reasoning, reply.pieces)]
    deltas += reply.chunks or [{"content": p} for p in split(reply.text, reply.pieces)]
    for delta in deltas:
        if len(out) == reply.fail_after:
            error = {"message": reply.error, "type": "InternalServerError", "code": 500}
            return [*out, json.dumps({"error": error}), "[DONE]"]
        out.append(json.dumps({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))  # fmt: skip
    end = {"index": 0, "delta": {}, "finish_reason": reply.finish}
    out.append(json.dumps({**chunk, "choices": [end]}))
    usage = {
        "prompt_tokens": 11,
        "completion_tokens": len(deltas),
        "total_tokens": 11 + len(deltas),
    }
    out.append(json.dumps({**chunk, "choices": [], "usage": usage}))
    out.append("[DONE]")
    return out


def _whole(reply: Reply, body: dict[str, Any], completions: bool) -> dict[str, Any]:
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    base = {
        "id": "up-1",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "usage": usage,
    }
    if completions:
        choice = {"index": 0, "text": reply.text, "finish_reason": reply.finish}
        return {**base, "object": "text_completion", "choices": [choice]}
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    calls = reply.calls
    if calls:
        message["tool_calls"] = calls
    return {**base, "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish}]}  # fmt: skip
