"""A fault-injection HTTP server on loopback for the provider tests.

Each request takes the next scripted :class:`Reply` from the queue (the last one repeats
when the queue runs dry) and is recorded (path, headers, JSON body). A reply can replay
a recorded stream in chunks of any size, cut the connection after some bytes, stall,
answer an error status with headers (429 + Retry-After), or send a JSON body. The server
runs in a thread (``http.server``), so the client under test uses its real network code.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer.

    Attributes:
        status: HTTP status.
        body: The body bytes (an SSE stream, a JSON error...).
        content_type: The Content-Type header.
        headers: Extra headers (Retry-After...).
        chunks: Sizes of the successive body writes (cycled); one write when empty.
        drop_after: Cut the connection (no chunked terminator) after this many body bytes.
        stall_after: Stop sending after this many body bytes until the server stops.
        endless: Send the body again and again until the client goes away.
    """

    status: int = 200
    body: bytes = b""
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[int] = field(default_factory=list)
    drop_after: int | None = None
    stall_after: int | None = None
    endless: bool = False


def sse(data: bytes, **kwargs: Any) -> Reply:
    """A 200 SSE reply replaying ``data``."""
    return Reply(body=data, **kwargs)


def status(code: int, payload: Any = None, **headers: str) -> Reply:
    """An error reply with a JSON body and extra headers (``Retry_After`` → ``Retry-After``)."""
    body = json.dumps(payload).encode() if payload is not None else b""
    names = {key.replace("_", "-"): value for key, value in headers.items()}
    return Reply(status=code, body=body, content_type="application/json", headers=names)


def json_reply(payload: Any) -> Reply:
    """A 200 JSON reply (a server that ignores ``stream: true``)."""
    return Reply(body=json.dumps(payload).encode(), content_type="application/json")


@dataclass
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""  # the body's bytes as sent


class FaultServer:
    """The server; use as a context manager. ``url`` is its root (``http://127.0.0.1:PORT``)."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies)
        self.requests: list[Seen] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        """The server's root URL."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def next_reply(self, seen: Seen) -> Reply:
        """Record ``seen`` and return the reply scripted for it."""
        with self._lock:
            self.requests.append(seen)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                reply = server.next_reply(
                    Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                )
                _send(self, reply, server.stopping)

        return Handler


def _send(handler: BaseHTTPRequestHandler, reply: Reply, stopping: threading.Event) -> None:
    handler.send_response(reply.status)
    handler.send_header("content-type", reply.content_type)
    for name, value in reply.headers.items():
        handler.send_header(name, value)
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    sent = 0
    for piece in _pieces(reply):
        if reply.drop_after is not None and sent + len(piece) > reply.drop_after:
            _chunk(handler, piece[: reply.drop_after - sent])
            _cut(handler)
            return
        if reply.stall_after is not None and sent + len(piece) > reply.stall_after:
            _chunk(handler, piece[: reply.stall_after - sent])
            stopping.wait(30)
            _cut(handler)
            return
        _chunk(handler, piece)
        sent += len(piece)
    while reply.endless and not stopping.is_set():
        try:
            _chunk(handler, reply.body)
        except OSError:  # the client stopped reading and closed the connection
            return
    if reply.drop_after is not None or reply.stall_after is not None:
        if reply.stall_after is not None:
            stopping.wait(30)
        _cut(handler)
        return
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def _pieces(reply: Reply) -> list[bytes]:
    if not reply.chunks:
        return [reply.body] if reply.body else []
    out, start, i = [], 0, 0
    while start < len(reply.body):
        size = max(1, reply.chunks[i % len(reply.chunks)])
        out.append(reply.body[start : start + size])
        start += size
        i += 1
    return out


def _chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    if data:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        handler.wfile.flush()


def _cut(handler: BaseHTTPRequestHandler) -> None:
    """Close the socket without the chunked terminator: a dropped connection."""
    handler.close_connection = True
    try:
        handler.connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
