"""The model server behind the proxy: three kinds, one interface.

``--upstream`` names one of:

- ``http(s)://HOST/v1`` — an OpenAI-compatible Chat Completions server (vLLM,
  llama.cpp's server, Ollama, SGLang, LM Studio). The client's body is forwarded as it
  came (unknown fields too); the answer is decoded by toolwire's Chat decoder, so the
  server's own ``tool_calls`` go through the one assembler (index and id quirks fixed)
  and what it left in ``content`` is read with the model family's call parser.
- ``completions:http(s)://HOST/v1`` — a raw completions server: toolwire renders the
  prompt in the model family's own format (:mod:`.prompts`, the one place that picks
  the renderer) and parses the text.
- ``local`` or ``local:PATH.gguf`` — the embedded model, in this process.

Each gives :meth:`Upstream.turn`: toolwire's events of one turn, then ``TurnDone``. One
``httpx.AsyncClient`` (a connection pool) serves every request; a proxy does not retry
(the client decides that), so upstream errors reach the client as they are.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import anyio
import httpx

from ..errors import (
    CallerError,
    ProtocolError,
    ProviderConnectionError,
    ProviderTimeoutError,
    ToolwireError,
)
from ..providers.http import HTTPOptions, Retries, Timeouts, Wire, api_error, events_from_turn
from ..providers.openai_chat import bearer_headers
from ..run.model import ModelEvent, ModelRequest, TurnDone
from ..wire.assembler import loads_json
from .pool import pooled_transport
from .request import ProxyCall

if TYPE_CHECKING:
    from ..formats.base import Format
    from ..run.model import Model

__all__ = [
    "RAW_TAP",
    "READY",
    "Batch",
    "Ready",
    "Upstream",
    "UpstreamItem",
    "UpstreamSpec",
    "closing",
    "make_upstream",
    "parse_upstream",
    "warm_imports",
]

RAW_TAP: ContextVar[list[bytes] | None] = ContextVar("toolwire_serve_raw_tap", default=None)
"""Where the upstream's body bytes of the current request are copied (the audit log's
raw text); ``None``: not copied. Set per request by the app, read by :class:`_TapTransport`."""

T = TypeVar("T")
UPSTREAM = "the upstream"
MAX_MODELS = 64  # completions models kept built, by served model name
MAX_FORMATS = 64  # chat upstream: family formats kept built, by family, prompt and tools
# Chat fields the proxy reads itself; the rest of a body are the model's settings when
# toolwire renders the request (completions, local).
_CHAT_FIELDS = frozenset(
    {"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "stream_options",
     "chat_template_kwargs", "functions", "function_call", "user", "metadata", "store", "n"}
)  # fmt: skip
# What the embedded model's generator takes.
_LOCAL_SETTINGS = ("max_tokens", "temperature", "top_p", "seed", "stop")


class Ready:
    """The upstream accepted a streamed request (its headers came, status 200): the
    client's stream can start before the first token."""

    __slots__ = ()


READY = Ready()

UpstreamItem = ModelEvent | Ready
"""One item of what :meth:`Upstream.turn` yields."""

Batch = Sequence[UpstreamItem]
"""What :meth:`Upstream.turn` yields: the items one read of the upstream completed."""


@dataclass(frozen=True, slots=True)
class UpstreamSpec:
    """A parsed ``--upstream``: its kind and where it is."""

    kind: Literal["chat", "completions", "local"]
    location: str | None  # the base URL, the GGUF path, or None (the default local model)

    @property
    def label(self) -> str:
        """How logs and ``/v1/models`` name it."""
        if self.kind == "chat":
            return str(self.location)
        return f"{self.kind}:{self.location}" if self.location else self.kind


def parse_upstream(text: str) -> UpstreamSpec:
    """Read ``--upstream``.

    Raises:
        CallerError: Not one of the three kinds, or not an http(s) URL.
    """
    from ..providers.http import check_base_url

    if not isinstance(text, str) or not text.strip():
        raise CallerError("--upstream must name a server", hint="e.g. http://127.0.0.1:8000/v1")
    text = text.strip()
    if text == "local":
        return UpstreamSpec("local", None)
    if text.startswith("local:"):
        return UpstreamSpec("local", text[len("local:") :] or None)
    kind: Literal["chat", "completions"] = "chat"
    if text.startswith("completions:"):
        kind, text = "completions", text[len("completions:") :]
    if not text.startswith(("http://", "https://")):
        raise CallerError(
            f"--upstream {text!r} is not an http(s) URL, completions:URL, local or local:PATH",
            hint="e.g. --upstream http://127.0.0.1:8000/v1",
        )
    return UpstreamSpec(kind, check_base_url(text.rstrip("/"), "the upstream"))


class Upstream(ABC):
    """A model server the proxy sends turns to."""

    def __init__(self, spec: UpstreamSpec) -> None:
        self.spec = spec

    @abstractmethod
    def turn(self, call: ProxyCall, headers: Mapping[str, str]) -> AsyncIterator[Batch]:
        """One turn's events in batches (what arrived together: the client gets one
        write per batch), then ``TurnDone`` (``headers``: the client's to forward); a
        streaming upstream may say :data:`READY` first."""

    @abstractmethod
    async def models(self) -> tuple[int, Any]:
        """``GET /v1/models``: the status and the JSON body."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the upstream holds (connections)."""


class _HTTPUpstream(Upstream):
    """An upstream reached over HTTP, through one pooled client."""

    def __init__(self, spec: UpstreamSpec, timeouts: Timeouts, max_connections: int) -> None:
        super().__init__(spec)
        self.base_url = str(spec.location)
        limits = httpx.Limits(
            max_connections=max_connections, max_keepalive_connections=max_connections
        )
        self.transport = _TapTransport(pooled_transport(limits))
        self.client = httpx.AsyncClient(
            transport=self.transport,
            timeout=httpx.Timeout(timeouts.read, connect=timeouts.connect),
        )
        self.options = HTTPOptions(timeouts, Retries(attempts=0), self.client)
        # What every request to the upstream shares, worked out once: httpx's client
        # would merge its defaults, parse the URL and make the timeouts per request.
        # The headers are normalised once here; a request copies them (a list copy) and
        # sets the client's key: building them from dicts per request (httpx normalises
        # and re-encodes every header) was a fifth of the proxy's CPU to the first byte.
        self._headers = httpx.Headers({**self.client.headers, **bearer_headers(None, {})})
        self._timeout = self.client.timeout.as_dict()

    async def models(self) -> tuple[int, Any]:
        """The upstream's own model list, passed through."""
        with self.transport_errors():
            response = await self.client.get(f"{self.base_url}/models")
        try:
            return response.status_code, response.json()
        except ValueError:
            return 502, None

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()

    @contextmanager
    def transport_errors(self) -> Iterator[None]:
        """httpx's timeouts and connection errors as toolwire's provider errors."""
        try:
            yield
        except httpx.TimeoutException as exc:
            raise ProviderTimeoutError(f"{UPSTREAM} timed out: {type(exc).__name__}") from None
        except httpx.TransportError as exc:
            raise ProviderConnectionError(
                f"cannot reach {UPSTREAM} at {self.spec.label}: {type(exc).__name__}"
            ) from None

    def request(self, url: httpx.URL, body: Any, client: Mapping[str, str]) -> httpx.Request:
        """A POST of ``body`` as JSON, as ``httpx.AsyncClient.build_request`` makes it
        (its default headers, the same JSON bytes, its timeouts), without the per-request
        merging: on the proxy's path to the first byte (bench/bench_serve.py)."""
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        headers = self._headers.copy()  # JSON/SSE headers, and the client's key forwarded
        auth = client.get("authorization")
        if auth:
            headers["authorization"] = auth
        return httpx.Request(
            "POST",
            url,
            headers=headers,
            content=content.encode(),
            extensions={"timeout": self._timeout},
        )

    async def send(self, request: httpx.Request) -> httpx.Response:
        """``request`` through the pool, the response's body not yet read.

        Straight to the transport, not through ``httpx.AsyncClient.send``: a proxy has
        no use for the client's auth flow, redirects, event hooks or cookie jar (the jar
        would even carry one client's upstream cookies into every later request), and
        their layers were a third of the proxy's CPU before the first byte.
        """
        response = await self.transport.handle_async_request(request)
        response.request = request
        return response


class ChatUpstream(_HTTPUpstream):
    """An OpenAI-compatible Chat Completions server."""

    def __init__(self, spec: UpstreamSpec, timeouts: Timeouts, max_connections: int) -> None:
        super().__init__(spec, timeouts, max_connections)
        self._chat_url = httpx.URL(f"{self.base_url}/chat/completions")

    async def turn(
        self, call: ProxyCall, headers: Mapping[str, str]
    ) -> AsyncGenerator[Batch, None]:
        """Forward the body; decode the answer with toolwire's Chat decoder.

        Its own loop rather than the providers' ``stream_turn``: a proxy does not retry
        or keep a total deadline (its client does), and the per-chunk deadline scope
        those need was a quarter of the proxy's CPU per token (bench/bench_serve.py);
        httpx's read timeout bounds each chunk.
        """
        body = dict(call.body)
        if call.stream:  # usage for the log and the client; the client's options kept
            body["stream_options"] = {**(body.get("stream_options") or {}), "include_usage": True}
        wire = _chat_wire(call)
        with self.transport_errors():
            response = await self.send(self.request(self._chat_url, body, headers))
            try:
                if response.status_code >= 400:
                    raise api_error(response.status_code, await response.aread(), UPSTREAM)
                if "application/json" in response.headers.get("content-type", ""):
                    turn = wire.decode_json(_json(await response.aread()))
                    yield [*events_from_turn(turn), TurnDone(turn)]
                    return
                yield (READY,)
                decoder = wire.stream()
                reads = _Reads(decoder)
                # The transport's own stream when the body is not compressed: httpx's
                # decoding and counting layers (generators per chunk) have nothing to do.
                coded = "content-encoding" in response.headers
                stream = response.stream
                pieces: AsyncIterator[bytes] = (
                    response.aiter_bytes()
                    if coded or not isinstance(stream, httpx.AsyncByteStream)
                    else stream.__aiter__()
                )
                async for chunk in pieces:
                    events, error = reads.feed(chunk)
                    if events:
                        yield events
                    if error is not None:
                        raise error
                yield (TurnDone(decoder.close()),)
            finally:
                await response.aclose()


class _Reads:
    """The decoder's events of each read of an upstream's SSE body.

    A read returns what has arrived: one event, several (under load), or a piece of
    one. The common event, ``data: {…}`` on one line, is split and parsed here and fed
    to the decoder as the dict it is (``feed``): the generic SSE path (``feed_bytes``:
    decode, split lines, collect the data, parse) costs more than the rest of the
    token's decoding (bench/bench_serve.py ``--only profile``). Anything else, and
    every read after a piece of an event until the events end with a read, goes
    through ``feed_bytes``, which knows all of SSE; the result is the same.

    Several events are fed one at a time, so that an upstream's error event in the
    same read as its last tokens leaves those tokens with the client: the decoder raises
    for the whole of what it is fed.
    """

    __slots__ = ("_decoder", "_whole")

    def __init__(self, decoder: Any) -> None:
        self._decoder = decoder
        self._whole = True  # the decoder holds no piece of an event

    def feed(self, chunk: bytes) -> tuple[list[ModelEvent], ToolwireError | None]:
        """The events ``chunk`` completes, and the error that stopped it if one did."""
        ends = chunk.endswith(b"\n\n")
        if not (self._whole and ends):
            held = not self._whole
            self._whole = ends  # after "\n\n" the decoder holds nothing
            if held or b"\r" in chunk:
                return self._lines(chunk)
            return self._generic(chunk)
        out: list[ModelEvent] = []
        decoder = self._decoder
        try:
            for event in chunk[:-2].split(b"\n\n"):
                item = _data_object(event)
                if item is not None:
                    out += decoder.feed(item)
                elif event:
                    out += decoder.feed_bytes(event + b"\n\n")
        except ToolwireError as exc:
            return out, exc
        return out, None

    def _lines(self, chunk: bytes) -> tuple[list[ModelEvent], ToolwireError | None]:
        """A read after a piece of an event, or one with CR line ends: fed a line at a
        time. Where an event ends is then known only to the decoder (the piece it holds
        may end in a line break that the read's first one makes a blank line; ``\r\n``
        is one break, a lone ``\r`` another), and a line completes at most one event, so
        an error event after complete ones leaves theirs with the client."""
        decoder = self._decoder
        out: list[ModelEvent] = []
        try:
            for line in _LINE.findall(chunk):
                out += decoder.feed_bytes(line)
        except ToolwireError as exc:
            return out, exc
        return out, None

    def _generic(self, chunk: bytes) -> tuple[list[ModelEvent], ToolwireError | None]:
        """A read after whole events, with LF line ends: each ``\n\n`` ends an event."""
        decoder = self._decoder
        out: list[ModelEvent] = []
        start = 0
        try:
            if chunk.count(b"\n\n") < 2:  # one event or part of one
                return decoder.feed_bytes(chunk), None
            while (end := chunk.find(b"\n\n", start)) != -1:
                out += decoder.feed_bytes(chunk[start : end + 2])
                start = end + 2
            if start < len(chunk):
                out += decoder.feed_bytes(chunk[start:])
        except ToolwireError as exc:
            return out, exc
        return out, None


# One line and its break (CRLF, CR or LF), or the unfinished rest of a read.
_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")


def _data_object(event: bytes) -> dict[str, Any] | None:
    """The JSON object of an event that is one ``data: {…}`` line; ``None`` for any
    other event (or data that does not parse: the decoder then says why)."""
    if not event.startswith(b"data: {") or b"\r" in event or b"\n" in event:
        return None
    try:
        item = loads_json(event[6:].decode())
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    return item if item.__class__ is dict else None


@asynccontextmanager
async def closing(events: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """``events``, closed when the block ends (an async generator's ``aclose``): a
    client that went away closes the upstream request, not the garbage collector."""
    try:
        yield events
    finally:
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True):  # also when cancelled: close it all
                await aclose()


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise ProtocolError(
            f"{UPSTREAM} sent a JSON content type with a body that is not JSON"
        ) from None


def warm_imports() -> None:
    """Import what the first chat request would (the Chat decoders, the formats)."""
    from .. import formats  # noqa: F401
    from ..wire import content_calls, openai_chat, openai_chat_body  # noqa: F401


def _chat_wire(call: ProxyCall) -> Wire:
    """The Chat decoders of one request, reading content with the family's parser."""
    from ..wire.openai_chat import OpenAIChatStream
    from ..wire.openai_chat_body import decode_openai_chat_response

    calls = _content_calls(call)
    return Wire(
        lambda: OpenAIChatStream(deltas=False, content_calls=calls()),
        lambda body: decode_openai_chat_response(body, content_calls=calls()),
    )


def _content_calls(call: ProxyCall) -> Callable[[], Any]:
    """A factory of the turn's ``ContentCalls`` (``None`` when no family is known)."""
    if call.family is None:
        return lambda: None
    from ..wire.content_calls import ContentCalls

    fmt = _format(call, call.family)
    return lambda: ContentCalls(fmt, apply=call.applies_calls)


_FORMATS: dict[tuple[Any, ...], Format] = {}


def _format(call: ProxyCall, family: tuple[str, str | None]) -> Format:
    """The request's family format, made once per family, prompt and tools.

    Building one (its marker sets, its regular expressions, the tool index) was the
    largest part of toolwire's own work before the first byte; a ``Format`` is
    configuration, each response parses with its own stream. Clients send the same
    tools turn after turn; the key is the tools as sent (another order is only a miss).
    """
    from .. import formats

    key = (*family, call.generation_prompt, call.tools_key)
    fmt = _FORMATS.get(key)
    if fmt is None:
        fmt = formats.get(*family, tools=call.tools, generation_prompt=call.generation_prompt)
        if len(_FORMATS) >= MAX_FORMATS:  # clients name tools: keep memory bounded
            _FORMATS.clear()
        _FORMATS[key] = fmt
    return fmt


class _ModelUpstream(Upstream):
    """An upstream driven through a toolwire ``Model`` (toolwire renders the prompt)."""

    async def turn(
        self, call: ProxyCall, headers: Mapping[str, str]
    ) -> AsyncGenerator[Batch, None]:
        """The neutral request of ``call``, streamed by the model, one event a batch."""
        stream = self.model(call).stream(model_request(call, self.settings(call)))
        async with closing(stream) as events:
            async for event in events:
                yield (event,)

    @abstractmethod
    def model(self, call: ProxyCall) -> Model:
        """The model that serves ``call``."""

    def settings(self, call: ProxyCall) -> dict[str, Any]:
        """The generation settings of ``call`` (every field the proxy does not read)."""
        out = {k: v for k, v in call.body.items() if k not in _CHAT_FIELDS}
        if "max_completion_tokens" in out:
            out["max_tokens"] = out.pop("max_completion_tokens")
        out["stream"] = call.stream
        return out


def model_request(call: ProxyCall, settings: dict[str, Any]) -> ModelRequest:
    """The neutral ``ModelRequest`` of a client request.

    Raises:
        HistoryError: The messages are not a history toolwire can hold (HTTP 400).
    """
    from ..history.openai_chat import from_openai_chat

    return ModelRequest(
        from_openai_chat(call.body["messages"]),
        list(call.tools),
        call.tool_choice,
        call.parallel,
        settings,
        deltas=False,  # the relay sends whole calls: no per-fragment events
    )


class CompletionsUpstream(_ModelUpstream, _HTTPUpstream):
    """A raw completions server: toolwire renders the prompt and parses the text."""

    def __init__(self, spec: UpstreamSpec, timeouts: Timeouts, max_connections: int) -> None:
        _HTTPUpstream.__init__(self, spec, timeouts, max_connections)
        self._models: dict[str, Model] = {}

    def model(self, call: ProxyCall) -> Model:
        """One ``CompletionsModel`` per served model name, on the shared pool."""
        model = self._models.get(call.model)
        if model is None:
            from ..providers.completions import CompletionsModel
            from .prompts import completion_prompt

            model = CompletionsModel(
                call.model,
                template=completion_prompt(call.family),
                format=call.family[0] if call.family else None,
                base_url=self.base_url,
                api_key="none",  # a self-hosted server; the client's key is not forwarded here
                timeouts=self.options.timeouts,
                retries=Retries(attempts=0),
                client=self.client,
            )
            if len(self._models) >= MAX_MODELS:  # clients name models: keep memory bounded
                self._models.clear()
            self._models[call.model] = model
        return model


class LocalUpstream(_ModelUpstream):
    """The embedded model, loaded once in this process."""

    def __init__(self, spec: UpstreamSpec) -> None:
        super().__init__(spec)
        self._model: Model | None = None

    def model(self, call: ProxyCall) -> Model:
        """The one embedded model, whatever the request names."""
        if self._model is None:
            from ..providers.local import LocalModel

            self._model = LocalModel(self.spec.location)
        return self._model

    def settings(self, call: ProxyCall) -> dict[str, Any]:
        """Only what the embedded generator takes."""
        out = super().settings(call)
        return {k: out[k] for k in _LOCAL_SETTINGS if k in out}

    async def aclose(self) -> None:
        """Nothing to release: the weights stay loaded for the process (llama.cpp's cache)."""

    async def models(self) -> tuple[int, Any]:
        """The embedded model, as the only one."""
        entry = {"id": self.spec.label, "object": "model", "created": 0, "owned_by": "toolwire"}
        return 200, {"object": "list", "data": [entry]}


def make_upstream(
    spec: UpstreamSpec,
    *,
    timeouts: Timeouts | None = None,
    max_connections: int = 1000,
) -> Upstream:
    """The upstream a spec names."""
    timeouts = timeouts or Timeouts()
    if spec.kind == "chat":
        return ChatUpstream(spec, timeouts, max_connections)
    if spec.kind == "completions":
        return CompletionsUpstream(spec, timeouts, max_connections)
    return LocalUpstream(spec)


class _TapTransport(httpx.AsyncBaseTransport):
    """httpx's transport, copying each response body into the request's :data:`RAW_TAP`."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        tap = RAW_TAP.get()
        if tap is None or not isinstance(response.stream, httpx.AsyncByteStream):
            return response
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_TapStream(response.stream, tap),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


class _TapStream(httpx.AsyncByteStream):
    """A response body stream that keeps a copy of what it yields."""

    def __init__(self, inner: httpx.AsyncByteStream, tap: list[bytes]) -> None:
        self._inner = inner
        self._tap = tap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._tap.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()
