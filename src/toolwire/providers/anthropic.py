"""Anthropic Messages (``POST {base_url}/v1/messages``).

Request mapping: history through :func:`toolwire.history.to_anthropic` (system messages
become ``system``), tools through :func:`toolwire.history.to_anthropic_tools`,
``tool_choice`` through :func:`toolwire.history.to_anthropic_tool_choice`, which also
carries ``parallel_tool_calls=False`` as ``disable_parallel_tool_use``. Headers:
``x-api-key`` (from ``ANTHROPIC_API_KEY``) and ``anthropic-version``.

Neutral settings: ``max_tokens`` (required by Anthropic; :data:`DEFAULT_MAX_TOKENS`
when absent); ``reasoning_effort`` (``low``/``medium``/``high``) becomes extended
thinking with the budget in :data:`THINKING_BUDGETS`, raising ``max_tokens`` above the
budget when needed (Anthropic rejects a budget that is not below it); ``stream: False``
asks for one JSON response. ``thinking`` itself passes through for full control.

The base URL is the API root without ``/v1`` (as Anthropic's SDK takes it); one ending
in ``/v1`` is accepted too.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..context.cache import anthropic_breakpoints
from ..history.anthropic import to_anthropic
from ..history.tool_defs import anthropic_tool_fields
from ..run.model import ModelRequest
from ..wire.anthropic import AnthropicStream
from ..wire.anthropic_body import decode_anthropic_response
from .hosted import HTTPModel, finish_body
from .http import HTTPRequest, Wire

__all__ = ["ANTHROPIC_VERSION", "AnthropicModel", "DEFAULT_MAX_TOKENS", "THINKING_BUDGETS"]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}


class AnthropicModel(HTTPModel):
    """A Claude model behind the Anthropic Messages API."""

    prefix: ClassVar[str] = "anthropic"
    provider: ClassVar[str] = "Anthropic Messages"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    key_env: ClassVar[str] = "ANTHROPIC_API_KEY"

    def build_request(self, request: ModelRequest) -> HTTPRequest:
        """The ``/v1/messages`` request for one turn."""
        settings = self.merged_settings(request)
        stream = bool(settings.pop("stream", True))
        system, messages = to_anthropic(request.messages)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": settings.pop("max_tokens", DEFAULT_MAX_TOKENS),
            "messages": messages,
            "stream": stream,
        }
        if system is not None:
            body["system"] = system
        if request.tools:
            body.update(
                anthropic_tool_fields(
                    request.tools, request.tool_choice, request.parallel_tool_calls
                )
            )
        self._thinking(body, settings.pop("reasoning_effort", None))
        finish_body(body, settings)
        if request.cache_key:
            anthropic_breakpoints(body)  # tools, system, the conversation so far
        return HTTPRequest(self.provider, self._url(), self._headers(), body, self.key_env)

    def _thinking(self, body: dict[str, Any], effort: Any) -> None:
        if effort is None:
            return
        budget = THINKING_BUDGETS.get(str(effort))
        if budget is None:
            from ..errors import CallerError

            raise CallerError(
                f"reasoning_effort {effort!r} is not one of {', '.join(THINKING_BUDGETS)}",
                hint='or pass settings={"thinking": {"type": "enabled", "budget_tokens": N}}',
            )
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if body["max_tokens"] <= budget:
            body["max_tokens"] = budget + DEFAULT_MAX_TOKENS

    def _url(self) -> str:
        root = self.base_url[: -len("/v1")] if self.base_url.endswith("/v1") else self.base_url
        return f"{root}/v1/messages"

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream, application/json",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if self.api_key:
            headers["x-api-key"] = self.api_key
        headers.update(self.headers)
        return headers

    def wire(self) -> Wire:
        """Anthropic event decoder and non-streaming decoder."""
        return Wire(AnthropicStream, decode_anthropic_response)
