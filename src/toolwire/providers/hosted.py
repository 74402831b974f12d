"""What the hosted providers share: configuration, settings and the ``stream`` method.

A provider subclass only says how a ``ModelRequest`` becomes its HTTP request
(``build_request``, pure, so tests can check bodies without a server) and which decoders
read its responses (``wire``). Everything that touches the network is in :mod:`.http`.

Settings are passed through to the request body unchanged, except a few neutral keys
each provider maps to its own field (:data:`NEUTRAL_SETTINGS`); a key set to ``None``
is removed from the body (to drop a default such as ``stream_options`` for a server
that rejects it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import CallerError
from ..run.model import ModelEvent, ModelRequest
from ..tooldef import ToolDef
from .http import (
    HTTPOptions,
    HTTPRequest,
    Retries,
    StreamDecoderLike,
    Timeouts,
    Wire,
    check_base_url,
    prepared_turn,
    require_key,
)
from .redact import redact_url

if TYPE_CHECKING:
    import httpx

__all__ = ["HTTPModel", "NEUTRAL_SETTINGS", "offered_tool_names"]

NEUTRAL_SETTINGS = ("max_tokens", "reasoning_effort", "stream")
"""Settings every provider understands and maps to its own request field."""


class HTTPModel(ABC):
    """A model served over HTTP.

    Args:
        model: The provider's model name (``gpt-4.1-mini``).
        base_url: The API root; the provider's public endpoint when ``None``.
        api_key: The key; read from the provider's environment variable when ``None``.
        headers: Extra request headers.
        settings: Default settings merged under each request's own.
        timeouts: Connect, read and total timeouts.
        retries: The retry policy.
        client: An ``httpx.AsyncClient`` to reuse (the caller closes it).

    Raises:
        CallerError: ``model`` is empty, or ``base_url`` is not an http(s) URL with a
            host and a valid port.
        MissingAPIKeyError: The public endpoint is used and no key is available.
    """

    prefix: ClassVar[str] = ""
    provider: ClassVar[str] = ""
    default_base_url: ClassVar[str] = ""
    key_env: ClassVar[str] = ""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
        timeouts: Timeouts | None = None,
        retries: Retries | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise CallerError(
                f"{self.provider} needs a model name, got {model!r}",
                hint=f"write {self.prefix}:MODEL",
            )
        self.model = model.strip()
        self.base_url = check_base_url(
            (base_url or self.default_base_url).rstrip("/"), self.provider
        )
        self.api_key = self._key(api_key)
        self.headers = dict(headers or {})
        self.settings = dict(settings or {})
        self.options = HTTPOptions(timeouts or Timeouts(), retries or Retries(), client)

    @property
    def name(self) -> str:
        """The model spec that builds this model, e.g. ``openai:gpt-4.1-mini``."""
        return f"{self.prefix}:{self.model}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} at {redact_url(self.base_url)}>"

    @property
    def uses_default_endpoint(self) -> bool:
        """True when talking to the provider's own public API (which needs a key)."""
        return self.base_url == self.default_base_url.rstrip("/")

    def _key(self, api_key: str | None) -> str | None:
        """A key is required by the public endpoint; self-hosted servers may not need one."""
        import os

        if self.uses_default_endpoint:
            return require_key(api_key, self.key_env, self.provider)
        return api_key or os.environ.get(self.key_env) or None

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: events as they arrive, then one ``TurnDone``.

        The request is built at the first iteration (an error building it is raised
        there), and the events come straight from the transport's generator.

        Raises:
            ProviderError: See :func:`toolwire.providers.http.stream_turn`.
        """
        return prepared_turn(partial(self._prepare, request), self.options)

    def _prepare(self, request: ModelRequest) -> tuple[HTTPRequest, Wire]:
        """The HTTP request of one turn and the decoders of its response."""
        http_request = self._sent_request(request)
        wire = self.wire_for(request)
        if not request.deltas:  # nobody reads per-fragment events: the decoder skips them
            wire = without_deltas(wire)
        return http_request, wire

    def merged_settings(self, request: ModelRequest) -> dict[str, Any]:
        """This model's default settings overlaid with the request's."""
        return {**self.settings, **request.settings}

    @abstractmethod
    def build_request(self, request: ModelRequest) -> HTTPRequest:
        """The HTTP request for one turn (pure: no I/O)."""

    def _sent_request(self, request: ModelRequest) -> HTTPRequest:
        """The request :meth:`stream` sends: :meth:`build_request`'s. The built-in
        providers build it with the tool definitions' schemas shared, not copied (the
        body is serialised as it is sent, and nothing edits it): a deep copy of every
        schema was most of the cost of building a request."""
        return self.build_request(request)

    @abstractmethod
    def wire(self) -> Wire:
        """The decoders of this provider's responses."""

    def wire_for(self, request: ModelRequest) -> Wire:
        """The decoders for one request (a provider may keep more when its settings ask)."""
        return self.wire()


def without_deltas(wire: Wire) -> Wire:
    """``wire`` with stream decoders that report no ``ToolCallDelta`` (those that can:
    ``toolwire.wire``'s ``drop_deltas``; another decoder keeps its events), and a JSON
    response's calls as their ``ToolCallReady`` alone."""
    make = wire.stream

    def stream() -> StreamDecoderLike:
        decoder = make()
        drop = getattr(decoder, "drop_deltas", None)
        if drop is not None:
            drop()
        return decoder

    return Wire(stream, wire.decode_json, deltas=False)


def offered_tool_names(tools: Iterable[ToolDef]) -> frozenset[str]:
    """The names of the tools a request offers (``ModelRequest.tools``): what a decoder
    needs to tell the server's own calls from the client's."""
    return frozenset(tool.name for tool in tools)


def finish_body(body: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """Add pass-through settings to ``body``; a ``None`` value removes the key."""
    for key, value in extra.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body
