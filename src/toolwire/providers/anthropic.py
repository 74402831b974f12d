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

A paused turn (``stop_reason: "pause_turn"``: the API paused a long server-tool turn)
is continued here, as the API documents: the paused assistant turn is sent back as it
is, as the last message, and the request is made again (no user message is added),
up to :data:`MAX_PAUSE_CONTINUATIONS` times. The caller gets one turn: the parts,
calls, usage and notices of every response joined, a ``pause_turn_continued`` notice
(an event, and in the turn) per continuation, and ``Turn.continuations`` counting the
extra requests, which the agent counts against its usage limits.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any, ClassVar

from ..context.cache import anthropic_breakpoints
from ..context.images import ANTHROPIC_IMAGES, ImageLimits
from ..history.anthropic import to_anthropic
from ..history.tool_defs import anthropic_tool_fields
from ..messages import AssistantMessage
from ..run.model import ModelEvent, ModelRequest, TurnDone
from ..turn import Notice, Turn
from ..wire.anthropic import AnthropicStream
from ..wire.anthropic_body import decode_anthropic_response
from .hosted import HTTPModel, finish_body
from .http import HTTPRequest, Wire

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicModel",
    "DEFAULT_MAX_TOKENS",
    "MAX_PAUSE_CONTINUATIONS",
    "THINKING_BUDGETS",
]

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24576}
MAX_PAUSE_CONTINUATIONS = 10
"""How many times one turn paused by the API (``pause_turn``) is continued; a turn still
paused after that is returned as it is (finish reason ``pause_turn``)."""


class AnthropicModel(HTTPModel):
    """A Claude model behind the Anthropic Messages API."""

    prefix: ClassVar[str] = "anthropic"
    provider: ClassVar[str] = "Anthropic Messages"
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    key_env: ClassVar[str] = "ANTHROPIC_API_KEY"
    image_limits: ClassVar[ImageLimits] = ANTHROPIC_IMAGES
    #: Its native structured output (``Agent(output_mode="native")``): the output tool,
    #: forced with ``tool_choice``.
    native_output: ClassVar[str] = "tool_forcing"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn (see :meth:`HTTPModel.stream`), continuing it while the API
        pauses it (``pause_turn``): one ``TurnDone`` for the whole turn."""
        paused: list[Turn] = []
        current = request
        while True:
            turn: Turn | None = None
            async for item in super().stream(current):
                if isinstance(item, TurnDone):
                    turn = item.turn
                else:
                    yield item
            assert turn is not None  # HTTPModel.stream ends with one TurnDone
            if turn.finish_reason != "pause_turn" or len(paused) == MAX_PAUSE_CONTINUATIONS:
                yield TurnDone(_joined([*paused, turn]))
                return
            notice = Notice(
                "pause_turn_continued",
                f"the API paused a long server-tool turn; continued it with request "
                f"{len(paused) + 2} of this turn (the paused turn sent back as it is)",
            )
            turn.notices.append(notice)
            paused.append(turn)
            yield notice
            so_far = AssistantMessage([part for t in paused for part in t.message.parts])
            current = replace(request, messages=[*request.messages, so_far])

    def build_request(self, request: ModelRequest, *, copied: bool = True) -> HTTPRequest:
        """The ``/v1/messages`` request for one turn; ``copied=False`` shares the tool
        definitions' schemas (the body :meth:`stream` sends)."""
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
                    request.tools, request.tool_choice, request.parallel_tool_calls, copied=copied
                )
            )
        self._thinking(body, settings.pop("reasoning_effort", None))
        finish_body(body, settings)
        if request.cache_key:
            anthropic_breakpoints(body)  # tools, system, the conversation so far
        return HTTPRequest(self.provider, self._url(), self._headers(), body, self.key_env)

    def _sent_request(self, request: ModelRequest) -> HTTPRequest:
        return self.build_request(request, copied=False)

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


def _joined(turns: list[Turn]) -> Turn:
    """One turn from a paused turn's responses, in order (the last one's finish)."""
    if len(turns) == 1:
        return turns[0]
    last = turns[-1]
    usage = turns[0].usage
    for turn in turns[1:]:
        usage = usage + turn.usage
    joined = Turn(
        AssistantMessage([part for turn in turns for part in turn.message.parts]),
        [request for turn in turns for request in turn.requests],
        last.finish_reason,
        usage,
        [notice for turn in turns for notice in turn.notices],
        any(turn.refused for turn in turns),
        last.logprobs,
    )
    joined.continuations = len(turns) - 1
    return joined
