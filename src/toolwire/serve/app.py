"""The ASGI app: ``POST /v1/chat/completions`` and ``GET /v1/models``.

A request is read at the door (:mod:`.request`; a bad one is a 400), sent to the
upstream (:mod:`.upstream`), and its events are relayed (:mod:`.relay`) as one
``chat.completion`` or as SSE chunks (:mod:`.encode`). A stream's headers wait for the
upstream's first event, so an upstream that is down or answers an error gives the client
that status (502, or the upstream's own) in OpenAI's error shape, not a broken stream;
an error after output began ends the stream with an error event. Nothing is retried: the
client decides that.

``POST /v1/chat/completions`` is a plain ASGI app (:class:`Proxy`) that Starlette's
subclass here sends requests to before its middleware and router: those layers cost
more than the rest of the proxy's work before the first byte, and wrapped every chunk's
send (bench/README.md). Every other request is Starlette's.

The stream is sent by :class:`EventStream`, which listens for the client going away
the whole time, not only when it writes: a disconnect cancels the upstream request at
once (its connection is closed, no task is left), even while the upstream is silent. A
non-streaming request is listened for the same way while the upstream answers.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..errors import (
    CallerError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderTimeoutError,
    ToolwireError,
)
from ..providers.http import Timeouts
from .audit import Exchange, ProxyLog
from .encode import DONE, ChunkWriter, error_body, response_body
from .relay import Delta, Relay
from .request import ProxyCall, read_call
from .upstream import RAW_TAP, Upstream, closing, make_upstream, parse_upstream, warm_imports

__all__ = ["EventStream", "Proxy", "create_app"]

T = TypeVar("T")
NOTICES_HEADER = "x-toolwire-notices"
_STREAM_HEADERS = [  # a stream's response headers, as Starlette's init_headers made them
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", b"text/event-stream; charset=utf-8"),
]
CHAT_PATH = "/v1/chat/completions"
CLIENT_CLOSED = 499  # nginx's "client closed request": logged, never received


class Proxy:
    """The proxy's state: the upstream, the ``--format`` family, the optional log."""

    def __init__(
        self, upstream: Upstream, forced: tuple[str, str | None] | None, log: ProxyLog | None
    ) -> None:
        self.upstream = upstream
        self.forced = forced
        self.log = log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``POST /v1/chat/completions`` as a plain ASGI app: no request object, no
        middleware wrapping each send (the path to the first byte and every chunk's
        write, bench/bench_serve.py)."""
        raw = await _read_body(receive)
        if raw is None:
            return  # the client went away before its body came: nobody to answer
        response = await self.chat(raw, Headers(scope=scope), receive)
        await response(scope, receive, send)

    async def chat(self, raw: bytes, headers: Mapping[str, str], receive: Receive) -> Response:
        """The response to a ``/v1/chat/completions`` body (``receive``: the client's
        channel, listened to for a disconnect)."""
        exchange = Exchange(None)
        try:
            body = json.loads(raw)
        except ValueError:
            return await self._error_reply(exchange, CallerError("the request body is not JSON"))
        try:
            exchange.call = call = read_call(body, self.forced)
        except CallerError as exc:
            return await self._error_reply(exchange, exc)
        exchange.raw = [] if self.log is not None and self.upstream.spec.kind != "local" else None
        token = RAW_TAP.set(exchange.raw)
        try:
            if call.stream:
                return await self._stream(call, headers, exchange)
            return await self._complete_watched(call, headers, receive, exchange)
        finally:
            RAW_TAP.reset(token)

    async def models(self, request: Request) -> Response:
        """``GET /v1/models``: the upstream's list."""
        try:
            status, body = await self.upstream.models()
        except ToolwireError as exc:
            status, payload = error_response(exc)
            return JSONResponse(payload, status)
        return JSONResponse(body, status)

    async def _complete_watched(
        self, call: ProxyCall, headers: Mapping[str, str], receive: Receive, exchange: Exchange
    ) -> Response:
        """:meth:`_complete` while listening for the client: one that goes away
        cancels the upstream request at once (its connection is closed)."""
        response = await listening(receive, lambda: self._complete(call, headers, exchange))
        if response is None:  # cancelled: nobody is left to answer
            exchange.outcome = "cancelled"  # as a stream's: the cancellation is the error
            exchange.error = anyio.get_cancelled_exc_class()()
            await self._record(exchange)
            return Response(status_code=CLIENT_CLOSED)
        return response

    async def _complete(
        self, call: ProxyCall, headers: Mapping[str, str], exchange: Exchange
    ) -> Response:
        relay = Relay(call)
        deltas: list[Delta] = []
        try:
            async with closing(self.upstream.turn(call, headers)) as batches:
                async for batch in batches:
                    if exchange.first_event_at is None:
                        exchange.first_event_at = time.time()
                    for item in batch:
                        deltas += relay.feed(item)
        except ToolwireError as exc:
            return await self._error_reply(exchange, exc)
        body = response_body(call, relay, deltas)
        extra = {NOTICES_HEADER: json.dumps(relay.notices)} if relay.notices else None
        response = JSONResponse(body, headers=extra)
        exchange.turn, exchange.notices = relay.turn, relay.notices
        exchange.received.append(bytes(response.body))
        await self._record(exchange)
        return response

    async def _stream(
        self, call: ProxyCall, headers: Mapping[str, str], exchange: Exchange
    ) -> Response:
        body = self._chunks(call, headers, exchange)
        try:
            first = await body.__anext__()  # the upstream answered: headers can go
        except ToolwireError as exc:
            await body.aclose()
            return await self._error_reply(exchange, exc)
        except BaseException:  # cancelled, or (never) a stream without [DONE]
            with anyio.CancelScope(shield=True):
                await body.aclose()  # closes the upstream request
            raise
        return EventStream(first, body)

    async def _chunks(
        self,
        call: ProxyCall,
        headers: Mapping[str, str],
        exchange: Exchange,
    ) -> AsyncGenerator[bytes, None]:
        """The SSE body; its first item comes once the upstream has accepted the request
        (or sent its first event). What is sent is kept only for the log."""
        relay = Relay(call)
        writer = ChunkWriter(call)
        sent: list[bytes] | None = exchange.received if self.log is not None else None
        started = False
        try:
            async with closing(self.upstream.turn(call, headers)) as batches:
                async for batch in batches:
                    chunk = b"".join([writer.delta(d) for item in batch for d in relay.feed(item)])
                    if not started:
                        started = True
                        exchange.first_event_at = time.time()
                        chunk = writer.first() + chunk
                    elif not chunk:
                        continue
                    if sent is not None:
                        sent.append(chunk)
                    yield chunk  # one write per upstream read
            chunk = writer.last(relay)
            exchange.turn, exchange.notices = relay.turn, relay.notices
        except ToolwireError as exc:
            if not started:
                raise  # before the headers: the client gets a status
            exchange.outcome, exchange.error = "error", exc
            status, payload = error_response(exc)
            payload["error"]["status"] = status
            chunk = f"data: {json.dumps(payload)}\n\n".encode() + DONE
        except BaseException as exc:  # cancelled: the client went away
            exchange.outcome, exchange.error = "cancelled", exc
            await self._record_shielded(exchange, started)
            raise
        if sent is not None:
            sent.append(chunk)
        try:
            yield chunk
        finally:  # after the client has its last chunk
            await self._record_shielded(exchange, started)

    async def _record_shielded(self, exchange: Exchange, started: bool) -> None:
        """Log a stream that started (one that did not is logged as its error reply),
        even while the stream is being cancelled (no log: no shielded scope to pay for)."""
        if started and self.log is not None:
            with anyio.CancelScope(shield=True):
                await self._record(exchange)

    async def _error_reply(self, exchange: Exchange, exc: ToolwireError) -> Response:
        """The error response (OpenAI's shape) for an error before any output."""
        status, payload = error_response(exc)
        response = JSONResponse(payload, status)
        exchange.status, exchange.outcome, exchange.error = status, "error", exc
        exchange.received.append(bytes(response.body))
        await self._record(exchange)
        return response

    async def _record(self, exchange: Exchange) -> None:
        if self.log is not None:
            await anyio.to_thread.run_sync(self.log.record, exchange)

    async def aclose(self) -> None:
        """Close the upstream's pool and the log."""
        await self.upstream.aclose()
        if self.log is not None:
            self.log.close()


async def _read_body(receive: Receive) -> bytes | None:
    """The request body, all of it; ``None`` when the client went away first."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


def error_response(exc: ToolwireError) -> tuple[int, dict[str, Any]]:
    """The HTTP status and OpenAI-shaped body of an error.

    A bad request is 400; an upstream that cannot be reached (or breaks its protocol)
    502, one that times out 504; an upstream's own error keeps its status and message.
    """
    if isinstance(exc, CallerError):
        return 400, error_body(exc.message, "invalid_request_error")
    if isinstance(exc, ProviderAPIError):
        message, kind = _upstream_error(exc)
        return exc.status or 502, error_body(message, kind, exc.error_type)
    if isinstance(exc, ProviderTimeoutError):
        return 504, error_body(f"the upstream timed out: {exc.message}", "upstream_timeout")
    if isinstance(exc, ProviderConnectionError):
        return 502, error_body(f"the upstream is unreachable: {exc.message}", "upstream_error")
    return 502, error_body(f"the upstream's answer is unusable: {exc.message}", "upstream_error")


def _upstream_error(exc: ProviderAPIError) -> tuple[str, str]:
    """The upstream's own message and type, as it sent them."""
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        kind = error.get("type")
        return error["message"], kind if isinstance(kind, str) else "upstream_error"
    if isinstance(error, str):
        return error, "upstream_error"
    return exc.message, "upstream_error"


class EventStream(Response):
    """An SSE response that cancels its body when the client disconnects.

    Starlette's ``StreamingResponse`` notices a client that went away only when it next
    writes (ASGI 2.4) and so would keep a silent upstream's request open; this listens
    for ``http.disconnect`` the whole time.
    """

    media_type = "text/event-stream"

    def __init__(self, first: bytes, body: AsyncGenerator[bytes, None]) -> None:
        # Not Response.__init__: it would add "content-length: 0" for the empty body.
        self.status_code = 200
        self.background = None
        self.raw_headers = list(_STREAM_HEADERS)  # Response.headers may change its own
        self._first = first
        self._body = body
        self._ended = False  # the body ran to its end (closed itself)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            # The headers and the first chunk go before the listener starts: nothing
            # can wait between them (uvicorn writes each at once), and the first byte
            # does not wait for the task group's set-up.
            start = {"type": "http.response.start", "status": 200, "headers": self.raw_headers}
            await send(start)
            last = self._first.endswith(DONE)
            await send({"type": "http.response.body", "body": self._first, "more_body": not last})
            if not last:
                await listening(receive, lambda: self._send_rest(send))
        except OSError:  # the client went away while we wrote (ASGI 2.4 servers)
            pass
        finally:
            if not self._ended:  # stopped early: close the upstream request, even when cancelled
                with anyio.CancelScope(shield=True):
                    await self._body.aclose()

    async def _send_rest(self, send: Send) -> None:
        """Every chunk after the first, one write each; the chunk with ``[DONE]`` (only
        the last has it: in any other the text is JSON, newlines escaped) also ends the
        body, in the same write."""
        try:
            async for chunk in self._body:
                last = chunk.endswith(DONE)
                await send({"type": "http.response.body", "body": chunk, "more_body": not last})
        except OSError:  # as above, while the listener runs
            return
        self._ended = True  # the body ran to its end: nothing left to close

    @staticmethod
    async def watch(receive: Receive, scope: anyio.CancelScope) -> None:
        """Cancel ``scope`` when the client disconnects (the body has been read)."""
        while (await receive())["type"] != "http.disconnect":
            pass
        scope.cancel()


async def listening(receive: Receive, work: Callable[[], Awaitable[T]]) -> T | None:
    """``work()`` while listening for the client; ``None`` when it disconnected first
    (``work`` is cancelled at once: an upstream request in it is closed).

    Under asyncio the listener is a plain task that cancels a scope around ``work``: an
    anyio task group (its task bookkeeping, its cancellation delivery) cost about six
    times as much CPU, once per request (bench/README.md).
    Elsewhere (trio) a task group.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio
        result: T | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(EventStream.watch, receive, group.cancel_scope)
            result = await work()
            group.cancel_scope.cancel()
        return result
    with anyio.CancelScope() as scope:
        watcher = loop.create_task(EventStream.watch(receive, scope))
        try:
            return await work()
        finally:
            watcher.cancel()  # gone at the loop's next turn: it holds nothing
    return None  # the client went away: the scope cancelled the work


def create_app(
    upstream: str,
    *,
    format: str | None = None,
    log: str | None = None,
    timeouts: Timeouts | None = None,
    max_connections: int = 1000,
    freeze_gc: bool = False,
) -> Starlette:
    """The proxy as an ASGI app, for any ASGI server or behind a load balancer.

    Args:
        upstream: ``http(s)://HOST/v1`` (an OpenAI-compatible chat server),
            ``completions:http(s)://HOST/v1`` (a raw completions server: toolwire
            renders the prompt), ``local`` or ``local:PATH.gguf`` (the embedded model).
        format: ``FAMILY[:VARIANT]`` whose call markup every answer is read with;
            ``None``: the family each request's ``model`` selects.
        log: An audit log file: one run per proxied request; ``None``: no log.
        timeouts: Connect and read timeouts of upstream requests.
        max_connections: The size of the upstream connection pool.
        freeze_gc: At start-up, load what a request needs and move every object then
            alive out of the garbage collector's reach (``gc.freeze()``), so that a
            full collection never walks them while streams wait (``toolwire serve``
            does; a process-wide setting, so off for an app mounted among others).

    Raises:
        CallerError: ``upstream`` or ``format`` is not one toolwire knows.
    """
    spec = parse_upstream(upstream)
    forced = _forced_family(format)
    proxy = Proxy(
        make_upstream(spec, timeouts=timeouts, max_connections=max_connections),
        forced,
        ProxyLog(log, spec.label) if log else None,
    )

    app = _ProxyApp(
        routes=[
            Route("/v1/chat/completions", proxy, methods=["POST"]),
            Route("/v1/models", proxy.models, methods=["GET"]),
        ],
        lifespan=_lifespan(proxy, freeze_gc),
    )
    app.state.proxy = proxy
    return app


class _ProxyApp(Starlette):
    """Starlette, with ``POST /v1/chat/completions`` sent straight to the proxy.

    Starlette's error and exception middleware, its router and request object cost
    more than the rest of the proxy's work before the first byte, and its middleware
    wrap every chunk's send; the proxy answers every error of its own. Any other
    request (a mounted app's prefix too) takes Starlette's way, the same route.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"] == CHAT_PATH
            and scope["method"] == "POST"
            and not scope.get("root_path")
        ):
            await self.state.proxy(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def _lifespan(
    proxy: Proxy, freeze_gc: bool
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """Freeze the start-up's objects when asked; close the upstream's pool and the log
    when the server stops."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if freeze_gc:
            _freeze_gc()
        yield
        await proxy.aclose()

    return lifespan


def _freeze_gc() -> None:
    """Load the modules a request imports, then ``gc.freeze()``.

    The modules, the app and the server are alive for the whole process; a full
    collection walked all of them (about 50,000 objects, several milliseconds on a quiet
    core) and every open stream waited that long: one cause of the p99 inter-chunk
    delay that came and went between runs (bench/README.md).
    """
    warm_imports()
    gc.collect()
    gc.freeze()


def _forced_family(format: str | None) -> tuple[str, str | None] | None:
    """``--format FAMILY[:VARIANT]`` checked against the formats' table."""
    if format is None:
        return None
    from ..providers.text_calls import text_family

    return text_family("", format)
