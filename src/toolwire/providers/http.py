"""The HTTP transport every hosted provider shares: one model turn is one streamed POST.

Strategy. A provider builds an :class:`HTTPRequest` (pure: URL, headers, JSON body) and
names a :class:`Wire` (its sans-I/O stream decoder and its non-streaming decoder);
:func:`stream_turn` sends it with httpx and feeds the body bytes into the decoder as they
arrive, yielding wire events and then one ``TurnDone``.

Failure rules, in one place:

* **Retries** with exponential backoff and jitter on connection errors, timeouts before
  any output, HTTP 408/409/429/5xx, a stream cut before any output, and a provider
  ``error`` event of a transient type (``overloaded_error``...). ``Retry-After`` (seconds
  or an HTTP date) and ``retry-after-ms`` replace the computed delay. Each retry is
  announced before its wait by a ``Notice`` of kind ``retry`` in the stream (which try
  comes next, why, and how long the wait is), so a live view can show it as it happens.
* **Never a silent retry after output was streamed**: once an event has reached the
  caller, the caller may have shown or acted on it, so a failure then raises
  :class:`StreamInterruptedError` (with what was assembled) instead of starting over.
* **Timeouts**: ``connect`` per connection, ``read`` per chunk (the longest silence
  allowed), ``total`` for the whole turn, retries and their waits included.
* **4xx** (other than 408/409/429) raise :class:`~toolwire.errors.ProviderAPIError` at
  once, carrying the status and the provider's own message.
* **No secret in an error**: every toolwire error raised here has the request's
  credentials (key headers, a URL's user-info password) replaced by ``***``, whatever
  quoted them (a proxy echoing the Authorization header in a 401, a URL in a message).
* **Every body read is guarded**: error bodies and JSON responses are read chunk by
  chunk under the same read and total timeouts as a stream, an error body only up to
  ``MAX_ERROR_BODY`` bytes (an endless 500 body is not read into memory), a JSON
  response up to ``MAX_JSON_BODY``; a body whose ``Content-Encoding`` does not decode
  is a ``ProtocolError``. No httpx exception reaches the caller.

httpx is imported when a request is first sent, not when this module is imported, so
building a model (and an Agent) costs no httpx import.
"""

from __future__ import annotations

import email.utils
import functools
import json
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import (
    CallerError,
    MissingAPIKeyError,
    ProtocolError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderTimeoutError,
    StreamInterruptedError,
    ToolwireError,
    TurnError,
)
from ..messages import ReasoningPart, RefusalPart, TextPart, ToolCall
from ..run.model import ModelEvent, TurnDone
from ..turn import Notice, Turn
from ..wire.events import (
    Event,
    Finished,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from .redact import redact_headers, redact_url, scrub, secrets_in

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = [
    "MAX_ERROR_BODY",
    "MAX_JSON_BODY",
    "HTTPOptions",
    "HTTPRequest",
    "Retries",
    "RETRYABLE_STATUSES",
    "Timeouts",
    "Wire",
    "api_error",
    "events_from_turn",
    "parse_retry_after",
    "prepared_turn",
    "require_key",
    "stream_turn",
    "tls_context",
]

MAX_ERROR_BODY = 64 * 1024
"""The most bytes of an HTTP error response that are read (its message is at the start)."""

MAX_JSON_BODY = 64 * 1024 * 1024
"""The most bytes of a non-streaming JSON response that are read."""

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Client-error statuses that are worth retrying (5xx always are)."""

# Error types a provider reports in a stream's ``error`` event when the failure is
# transient (Anthropic's overload, OpenAI's server error): retried like a 529 / 500.
RETRYABLE_ERROR_TYPES = frozenset(
    {"overloaded_error", "api_error", "server_error", "rate_limit_error", "rate_limit_exceeded"}
)


# -- errors --------------------------------------------------------------------------
# MissingAPIKeyError, ProviderConnectionError, ProviderTimeoutError and
# StreamInterruptedError live in toolwire.errors (imported above, so they stay
# importable from here).


# -- configuration -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long to wait, in seconds.

    Attributes:
        connect: To establish a connection.
        read: The longest silence allowed between two chunks (and before the headers).
        total: The whole turn, retries and their waits included.
    """

    connect: float = 10.0
    read: float = 120.0
    total: float = 600.0


@dataclass(frozen=True, slots=True)
class Retries:
    """When and how long to wait before trying again.

    Attributes:
        attempts: Retries after the first try (0 disables retrying).
        base_delay: The first backoff delay; it doubles on each retry.
        max_delay: The cap of the computed backoff delay.
        max_retry_after: The longest ``Retry-After`` honoured; a longer one fails at once.
    """

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, failures: int, retry_after: float | None, rng: random.Random) -> float | None:
        """The wait before retry number ``failures`` (1-based), or ``None`` to give up.

        The computed delay uses "equal jitter": half the exponential step, plus a random
        part of the other half, so concurrent clients spread out but never retry at once.
        """
        if failures > self.attempts:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        step = min(self.max_delay, self.base_delay * 2.0 ** (failures - 1))
        return float(step / 2 + rng.uniform(0, step / 2))


def _default_sleep(seconds: float) -> Awaitable[None]:
    import anyio

    return anyio.sleep(seconds)


@dataclass(slots=True)
class HTTPOptions:
    """Transport settings of one provider.

    Attributes:
        timeouts: Connect, read and total timeouts.
        retries: The retry policy.
        client: An ``httpx.AsyncClient`` to reuse (connection pooling, proxies,
            HTTP/2); the caller owns and closes it. ``None``: one client per turn,
            each with the process's TLS context (:func:`tls_context`).
        sleep: The coroutine used to wait between retries (tests pass a recorder).
        rng: The random source of the jitter.
    """

    timeouts: Timeouts = field(default_factory=Timeouts)
    retries: Retries = field(default_factory=Retries)
    client: httpx.AsyncClient | None = None
    sleep: Callable[[float], Awaitable[None]] = _default_sleep
    rng: random.Random = field(default_factory=random.Random)


@dataclass(frozen=True, slots=True)
class HTTPRequest:
    """One provider request, built without I/O.

    Attributes:
        provider: A label for messages (``"OpenAI Chat Completions"``).
        url: The full endpoint URL.
        headers: Request headers (the API key among them).
        body: The JSON body.
        key_env: The environment variable the key came from, for 401 hints.
    """

    provider: str
    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    key_env: str | None = None

    def __repr__(self) -> str:  # the credentials masked: a repr ends up in logs
        return (
            f"HTTPRequest(provider={self.provider!r}, url={redact_url(self.url)!r}, "
            f"headers={redact_headers(self.headers)!r}, body=<{len(self.body)} keys>, "
            f"key_env={self.key_env!r})"
        )


class StreamDecoderLike(Protocol):
    """What :func:`stream_turn` needs from a decoder: ``toolwire.wire``'s interface."""

    def feed_bytes(self, data: bytes) -> list[Event]:
        """Consume raw body bytes; return the events they complete."""
        ...

    def close(self) -> Turn:
        """End of body: the turn, or the error that broke it."""
        ...


@dataclass(frozen=True, slots=True)
class Wire:
    """How one provider's responses decode.

    Attributes:
        stream: Makes a fresh stream decoder (one per attempt).
        decode_json: Decodes a non-streaming JSON response (servers that ignore
            ``stream: true``, or ``settings={"stream": False}``).
        deltas: Whether the caller reads per-fragment events: ``False``, a JSON
            response's calls come as their ``ToolCallReady`` alone, as a stream decoder
            reports a call that came whole without deltas.
    """

    stream: Callable[[], StreamDecoderLike]
    decode_json: Callable[[Any], Turn]
    deltas: bool = True


# -- keys ----------------------------------------------------------------------------


def require_key(api_key: str | None, env: str, provider: str) -> str:
    """Return ``api_key``, or the key in ``env``; raise a one-line error if neither exists.

    Raises:
        MissingAPIKeyError: No key given and ``env`` is unset or empty.
    """
    import os

    key = api_key or os.environ.get(env, "")
    if not key:
        raise MissingAPIKeyError(
            f"{env} is not set; {provider} needs an API key",
            hint=f"export {env}=... (or pass api_key=...), or run on the local model with --model local",
        )
    return key


# -- the turn ------------------------------------------------------------------------


# Control flow, not an error: it never leaves this module (the retry loop catches it and
# raises its ``error``, a toolwire error, when retrying is over), so it stays here and
# private rather than in toolwire.errors.
class _Retry(Exception):
    """Internal: this attempt failed in a way worth retrying.

    ``error`` is what the caller gets when retrying is over; ``retry_after`` is the
    server's requested wait, if it sent one.
    """

    def __init__(self, error: ToolwireError, retry_after: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after


class _Deadline:
    """The total-timeout clock of one turn."""

    def __init__(self, total: float) -> None:
        self.total = total
        self.end = time.monotonic() + total

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def check(self, provider: str) -> float:
        left = self.remaining()
        if left <= 0:
            raise ProviderTimeoutError(
                f"{provider}: the turn took longer than its total timeout ({self.total:g} s)"
            )
        return left


def stream_turn(
    request: HTTPRequest, wire: Wire, options: HTTPOptions
) -> AsyncIterator[ModelEvent]:
    """Send ``request`` and stream the turn: events as they arrive, then one ``TurnDone``.

    Args:
        request: The request to send.
        wire: The provider's decoders.
        options: Timeouts, retries and the client.

    Raises:
        ProviderAPIError: The provider answered an error (4xx at once, retryable ones
            when retrying is over), or reported one in the stream.
        ProviderConnectionError: The endpoint could not be reached.
        ProviderTimeoutError: A read or the whole turn timed out.
        StreamInterruptedError: The stream failed after output reached the caller.
        ProtocolError: The response broke the provider's protocol.
    """
    return prepared_turn(lambda: (request, wire), options)


async def prepared_turn(
    prepare: Callable[[], tuple[HTTPRequest, Wire]], options: HTTPOptions
) -> AsyncIterator[ModelEvent]:
    """:func:`stream_turn` of the request and decoders ``prepare`` makes at the first
    iteration: what a model's ``stream`` returns as it is, so that an error building the
    request is raised where the stream is first read, and each event passes through no
    generator of the model's own.

    One generator holds the retry loop and the scrubbing of credentials (each event is
    passed up by every generator it goes through: two here, the attempt's and this one).
    """
    request, wire = prepare()
    secrets = secrets_in(request.url, request.headers)
    deadline = _Deadline(options.timeouts.total)
    failures = 0
    try:
        while True:
            emitted = False
            try:
                async for item in _attempt(request, wire, options, deadline):
                    emitted = True
                    if secrets and isinstance(item, Notice):  # a decoder's may quote a URL
                        yield _scrub_notice(item, secrets)
                    else:
                        yield item
                return
            except _Retry as retry:
                if emitted:
                    raise _interrupted(request, retry.error) from retry.error
                failures += 1
                error = retry.error
                delay = options.retries.delay(failures, retry.retry_after, options.rng)
                if delay is None or delay >= deadline.remaining():
                    raise error from None
            # Outside the except block: the consumer may stop the stream at this yield.
            notice = _retry_notice(options.retries, failures, error, delay)
            yield _scrub_notice(notice, secrets) if secrets else notice  # it quotes the error
            await options.sleep(delay)
    except ToolwireError as exc:
        if secrets:
            _scrub_error(exc, secrets)
        raise


def _scrub_notice(notice: Notice, secrets: list[str]) -> Notice:
    """``notice`` with the request's credentials masked in its message."""
    return Notice(notice.kind, scrub(notice.message, secrets), notice.index)


def _scrub_error(exc: ToolwireError, secrets: list[str]) -> None:
    """Mask the request's credentials wherever the error quotes them."""
    exc.message = scrub(exc.message, secrets)
    exc.args = (exc.message,)
    if exc.hint:
        exc.hint = scrub(exc.hint, secrets)
    if isinstance(exc, ProviderAPIError) and exc.body is not None:
        exc.body = _scrub_value(exc.body, secrets)


def _scrub_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, dict):
        return {k: _scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_value(v, secrets) for v in value]
    return value


def _retry_notice(retries: Retries, failures: int, error: ToolwireError, delay: float) -> Notice:
    """``retry``: why the last try failed, which try comes next, and the wait before it.

    The error's message already names the provider and the cause (``... returned HTTP
    503: overloaded``, ``cannot reach ...``, ``... timed out ...``).
    """
    reason = " ".join(error.message.split()).rstrip(".")
    if len(reason) > 160:
        reason = reason[:159] + "…"
    return Notice(
        "retry", f"{reason}; try {failures + 1} of {retries.attempts + 1} in {delay:.1f} s"
    )


def _interrupted(request: HTTPRequest, error: ToolwireError) -> StreamInterruptedError:
    partial = getattr(error, "partial", None)
    reason = error.message.rstrip(".")
    return StreamInterruptedError(
        f"{request.provider} stream failed after output had started: {reason}", partial=partial
    )


async def _attempt(
    request: HTTPRequest, wire: Wire, options: HTTPOptions, deadline: _Deadline
) -> AsyncIterator[ModelEvent]:
    """One try: send, check the status, decode the body (a JSON one whole, a stream
    chunk by chunk, each chunk's events passed up as the decoder completes them)."""
    client = options.client
    own = client is None
    if client is None:
        client = _own_client(options.timeouts, request.url)
    try:
        response = await _send(client, request, options, deadline)
        try:
            await _check_status(response, request, options, deadline)
            if "application/json" in response.headers.get("content-type", ""):
                for item in await _decode_json(response, request, wire, options, deadline):
                    yield item
                return
            decoder = wire.stream()
            emitted = [False]  # shared with _chunks, which words its errors by it
            async for chunk in _chunks(response, request, options, deadline, emitted):
                for event in _feed(decoder, chunk, emitted[0]):
                    emitted[0] = True
                    yield event
            yield TurnDone(_close(decoder))
        finally:
            await response.aclose()
    finally:
        if own:
            await client.aclose()


def _own_client(timeouts: Timeouts, url: str) -> httpx.AsyncClient:
    """A client for one try, when the caller gave none: with the process's TLS context
    for an ``https`` endpoint, and with one that trusts nothing for a plain ``http`` one
    (a local server: llama.cpp, Ollama, vLLM, a test's loopback), which never uses TLS —
    loading the CA bundle cost ~0.1 s of CPU, most of a short process's first turn."""
    import httpx

    secure = url[:8].lower() == "https://"
    verify = tls_context() if secure else _trust_nothing()
    return httpx.AsyncClient(timeout=_httpx_timeout(timeouts), verify=verify)


_TLS_CONTEXTS: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (its CA bundle, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``
    when set), made once per value of those variables and shared by every client a
    model makes for itself: loading the CA bundle took ~100 ms of CPU, most of a turn's,
    when each per-turn client made its own (a context is meant to be shared)."""
    import os

    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _TLS_CONTEXTS.get(key)
    if context is None:
        import httpx

        context = _TLS_CONTEXTS[key] = httpx.create_ssl_context()
    return context


@functools.cache
def _trust_nothing() -> ssl.SSLContext:
    """A client TLS context with no certificate authority: it verifies every peer and
    hostname as the default does, so a TLS connection made with it fails (safe: no
    ``https`` URL is given it), and making it loads no CA bundle."""
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@functools.lru_cache(maxsize=64)
def _httpx_timeout(timeouts: Timeouts) -> httpx.Timeout:
    """httpx's form of ``timeouts``: made once per value (both are immutable), not per
    request."""
    import httpx

    return httpx.Timeout(
        connect=timeouts.connect, read=timeouts.read, write=timeouts.read, pool=timeouts.connect
    )


async def _send(
    client: httpx.AsyncClient, request: HTTPRequest, options: HTTPOptions, deadline: _Deadline
) -> httpx.Response:
    import anyio
    import httpx

    try:
        built = client.build_request(
            "POST",
            request.url,
            json=dict(request.body),
            headers=dict(request.headers),
            timeout=_httpx_timeout(options.timeouts),
        )
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise CallerError(
            f"invalid URL {redact_url(request.url)!r} for {request.provider}: {exc}",
            hint="check --base-url",
        ) from None
    try:
        with anyio.fail_after(deadline.check(request.provider)):
            return await client.send(built, stream=True)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise CallerError(
            f"invalid URL {redact_url(request.url)!r} for {request.provider}: {exc}",
            hint="check --base-url",
        ) from None
    except (httpx.TimeoutException, TimeoutError) as exc:
        raise _Retry(_timeout_error(request, exc, "waiting for the response headers")) from None
    except httpx.TransportError as exc:
        raise _Retry(
            ProviderConnectionError(
                f"cannot reach {request.provider} at {redact_url(request.url)}: {_describe(exc)}"
            )
        ) from None
    except Exception as exc:
        # What the socket layer raises for an address it cannot use (a port over
        # 65535, a malformed host), possibly inside a connect task group's group:
        # the endpoint cannot be reached, said as the provider's connection error.
        leaf = _only_leaf(exc, (OverflowError, ValueError))
        if leaf is None:
            raise
        raise ProviderConnectionError(
            f"cannot reach {request.provider} at {redact_url(request.url)}: {_describe(leaf)}"
        ) from None


def _only_leaf(exc: BaseException, kinds: tuple[type[Exception], ...]) -> BaseException | None:
    """``exc``, or the first exception inside a group (3.11's ``ExceptionGroup`` or the
    backport on 3.10, told by its ``exceptions``) made only of ``kinds``."""
    inner = getattr(exc, "exceptions", None)
    if isinstance(inner, tuple) and inner:
        leaves = [_only_leaf(item, kinds) for item in inner]
        return None if any(leaf is None for leaf in leaves) else leaves[0]
    return exc if isinstance(exc, kinds) else None


def check_base_url(url: str, provider: str) -> str:
    """``url`` if it is an ``http``/``https`` URL with a host and a port in range.

    Checked when the model is built, so that a malformed URL is the caller's one-line
    error there, not a ``ValueError`` (or an ``OverflowError`` from the socket layer,
    for a port over 65535) from the first request.

    Raises:
        CallerError: It is not.
    """
    from urllib.parse import urlsplit

    def bad(why: str) -> CallerError:
        return CallerError(
            f"invalid base URL {redact_url(url)!r} for {provider}: {why}",
            hint="give the API root, e.g. --base-url http://localhost:8000/v1",
        )

    if not isinstance(url, str):
        raise CallerError(f"base_url for {provider} must be a string, not {type(url).__name__}")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 — parsing the port is the check (out of range: ValueError)
    except ValueError as exc:
        raise bad(str(exc)) from None
    if parts.scheme not in ("http", "https"):
        raise bad("the scheme must be http or https")
    if not parts.hostname:
        raise bad("there is no host")
    return url


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _timeout_error(request: HTTPRequest, exc: BaseException, what: str) -> ProviderTimeoutError:
    return ProviderTimeoutError(
        f"{request.provider} at {redact_url(request.url)} timed out {what} ({type(exc).__name__})"
    )


async def _check_status(
    response: httpx.Response, request: HTTPRequest, options: HTTPOptions, deadline: _Deadline
) -> None:
    status = response.status_code
    if status < 400:
        return
    # Only the start of an error body: its message is there, and a hostile or broken
    # server may send an endless one. A body that stalls or fails to decode still
    # yields the status error, with what was read.
    try:
        raw = await _read_body(response, request, options, deadline, MAX_ERROR_BODY)
    except (_Retry, ProtocolError):
        raw = b""
    error = api_error(status, raw, request.provider, key_env=request.key_env, sent=request.body)
    if status in RETRYABLE_STATUSES or status >= 500:
        raise _Retry(error, parse_retry_after(response.headers))
    raise error


def _feed(decoder: StreamDecoderLike, chunk: bytes, emitted: bool) -> list[Event]:
    """The events ``chunk`` completes; a transient error the provider reports in the
    stream before any output is retried (after output, it is the caller's)."""
    try:
        return decoder.feed_bytes(chunk)
    except ProviderAPIError as exc:
        if not emitted and exc.error_type in RETRYABLE_ERROR_TYPES:
            raise _Retry(exc) from None
        raise


def _close(decoder: StreamDecoderLike) -> Turn:
    """The decoder's turn; a stream that ended early is a cut connection (retryable)."""
    try:
        return decoder.close()
    except TurnError:
        raise
    except ProtocolError as exc:
        raise _Retry(exc) from None


async def _chunks(
    response: httpx.Response,
    request: HTTPRequest,
    options: HTTPOptions,
    deadline: _Deadline,
    emitted: list[bool],
) -> AsyncIterator[bytes]:
    """The body, chunk by chunk, each read bounded by the read and the total timeout."""
    import httpx

    chunks = response.aiter_bytes()
    while True:
        limit = min(options.timeouts.read, deadline.check(request.provider))
        try:
            chunk = await _within(limit, chunks.__anext__())
        except StopAsyncIteration:
            return
        except (httpx.TimeoutException, TimeoutError) as exc:
            raise _Retry(_timeout_error(request, exc, "reading the stream")) from None
        except httpx.DecodingError as exc:  # e.g. "Content-Encoding: gzip" on a plain body
            raise ProtocolError(
                f"{request.provider} sent a body that does not decode as its "
                f"Content-Encoding ({response.headers.get('content-encoding')!r}): {_describe(exc)}"
            ) from None
        except httpx.TransportError as exc:
            what = "after output had started" if emitted[0] else "before any output"
            raise _Retry(
                ProviderConnectionError(
                    f"{request.provider} connection dropped {what}: {_describe(exc)}"
                )
            ) from None
        yield chunk


async def _within(seconds: float, step: Awaitable[bytes]) -> bytes:
    """``await step``, or ``TimeoutError`` once ``seconds`` have passed: the rule of
    ``anyio.fail_after`` in one cancel scope. A stream pays this for every chunk, and
    ``fail_after`` is two generator context managers around the same scope (a fifth
    of an event's cost on a stream of one event a chunk, by the profile)."""
    import anyio

    with anyio.CancelScope(deadline=anyio.current_time() + seconds):
        return await step
    raise TimeoutError  # the scope's deadline passed: it caught its own cancellation


async def _read_body(
    response: httpx.Response,
    request: HTTPRequest,
    options: HTTPOptions,
    deadline: _Deadline,
    limit: int,
) -> bytes:
    """At most ``limit`` bytes of the body, each read guarded as a stream's (``_chunks``).

    Raises:
        ProtocolError: The body is longer than ``limit`` (only for JSON bodies, whose
            end is needed), or does not decode.
    """
    parts: list[bytes] = []
    size = 0
    async for chunk in _chunks(response, request, options, deadline, [False]):
        parts.append(chunk[: limit - size])
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)


async def _decode_json(
    response: httpx.Response,
    request: HTTPRequest,
    wire: Wire,
    options: HTTPOptions,
    deadline: _Deadline,
) -> list[ModelEvent]:
    raw = await _read_body(response, request, options, deadline, MAX_JSON_BODY + 1)
    if len(raw) > MAX_JSON_BODY:
        raise ProtocolError(
            f"{request.provider} sent a JSON response over {MAX_JSON_BODY:,} bytes; "
            "toolwire does not read it whole"
        )
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(
            f"{request.provider} sent a JSON content type with a body that is not JSON ({exc})"
        ) from None
    turn = wire.decode_json(body)
    items: list[ModelEvent] = list(events_from_turn(turn, deltas=wire.deltas))
    items.append(TurnDone(turn))
    return items


# -- helpers -------------------------------------------------------------------------


def events_from_turn(turn: Turn, *, deltas: bool = True) -> list[Event]:
    """The events a stream of ``turn`` would have produced (for non-streaming responses).

    Args:
        turn: A complete turn.
        deltas: ``False``: each call is its ``ToolCallReady`` alone, as a stream decoder
            with ``deltas=False`` announces a call that came whole (the Ready says all
            the Started would; nobody reads the Delta).

    Returns:
        Text, reasoning and call events in part order, then usage and the finish reason.
    """
    events: list[Event] = []
    requests = {request.id: request for request in turn.requests}
    for part in turn.message.parts:
        if isinstance(part, TextPart):
            events.append(TextDelta(part.text))
        elif isinstance(part, ReasoningPart):
            events.append(ReasoningDelta(part.text))
        elif isinstance(part, RefusalPart):
            events.append(RefusalDelta(part.text))
        elif isinstance(part, ToolCall):
            request = requests[part.id]
            if deltas:
                events.append(ToolCallStarted(request.index, part.id, part.name))
                events.append(ToolCallDelta(request.index, part.arguments))
            events.append(ToolCallReady(request.index, part, request))
    events.append(UsageReported(turn.usage))
    if turn.finish_reason:
        events.append(Finished(turn.finish_reason))
    return events


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a server asked for: ``retry-after-ms``, or ``Retry-After`` seconds or date.

    Args:
        headers: Response headers (case-insensitive mapping, as httpx gives).

    Returns:
        Seconds to wait (never negative), or ``None`` when absent or unreadable.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_STATUS_HINTS = {
    400: "the provider rejected the request; its message says which field",
    401: "the API key was refused; check {env}",
    403: "the API key may not use this model or endpoint; check {env} and the model name",
    404: "check the model name and the base URL (--model, --base-url)",
    408: "the provider timed out; retry later",
    409: "a conflicting request is in flight; retry later",
    413: "the request is too large; shorten the history or the tool output",
    422: "the provider could not process the request; its message says why",
    429: "rate limited or out of quota; wait, lower the request rate, or check the plan",
}


def api_error(
    status: int,
    raw: bytes,
    provider: str,
    *,
    key_env: str | None = None,
    sent: Mapping[str, Any] | None = None,
) -> ProviderAPIError:
    """A ``ProviderAPIError`` for an HTTP error response, with the provider's own message.

    Args:
        status: The HTTP status.
        raw: The response body.
        provider: The provider label.
        key_env: The API key's environment variable, named in 401/403 hints.
        sent: The JSON body of the request: a 400's field path is looked up in it for
            the tool call it points into (``ProviderAPIError.call_id``).
    """
    body: Any
    try:
        body = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        body = raw.decode("utf-8", errors="replace")
    message, error_type = _error_fields(body)
    if not message:
        message = " ".join(str(body or "").split())[:300] or "no error message"
    template = _STATUS_HINTS.get(
        status, "the provider failed; retry later" if status >= 500 else ""
    )
    hint = template.format(env=key_env or "the API key")
    return ProviderAPIError(
        f"{provider} returned HTTP {status}: {message}",
        status=status,
        error_type=error_type,
        body=body,
        hint=hint,
        call_id=pointed_call(sent, body, message) if status == 400 and sent else None,
    )


# A field path at the start of a message (Anthropic: "messages.2.content.0.content.1.image
# .source.base64: image exceeds ...") or quoted in it (OpenAI: "'messages[1].content[1]
# .image_url.url'"); OpenAI also sends it as the error's ``param``.
_FIELD_PATH = re.compile(r"(?:^|')((?:messages|input)(?:\.\w+|\.?\[\d+\])+)")
_PATH_KEYS = re.compile(r"\w+")
_CALL_ID_KEYS = ("tool_use_id", "call_id", "tool_call_id")  # Anthropic, Responses, Chat


def pointed_call(sent: Mapping[str, Any], body: Any, message: str) -> str | None:
    """The call whose tool result a 400's field path points into, walked in the body
    ``sent``: the id of the deepest item on the path that carries a call id (Anthropic's
    ``tool_result``, Responses' ``function_call_output``); ``None`` when the error names
    no path or the path reaches no such item (Chat carries a result's images in a user
    message, which names no call in a field)."""
    error = body.get("error") if isinstance(body, dict) else None
    param = error.get("param") if isinstance(error, dict) else None
    paths = [param] if isinstance(param, str) else []
    paths += _FIELD_PATH.findall(message)
    for path in paths:
        found = _walk(sent, path)
        if found is not None:
            return found
    return None


def _walk(node: Any, path: str) -> str | None:
    found = None
    for key in _PATH_KEYS.findall(path):
        if isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        elif isinstance(node, Mapping) and key in node:
            node = node[key]
        else:
            break
        if isinstance(node, Mapping):
            found = next((v for k in _CALL_ID_KEYS if isinstance(v := node.get(k), str)), found)
    return found


def _error_fields(body: Any) -> tuple[str, str | None]:
    """(message, type) from the error shapes of OpenAI, Anthropic, vLLM and FastAPI."""
    if not isinstance(body, dict):
        return "", None
    error = body.get("error", body)
    if isinstance(error, str):
        return " ".join(error.split()), None
    if not isinstance(error, dict):
        return "", None
    message = error.get("message") or error.get("detail") or ""
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    kind = error.get("type") or error.get("code")
    return " ".join(message.split())[:500], kind if isinstance(kind, str) else None
