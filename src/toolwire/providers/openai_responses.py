"""The OpenAI Responses API (``POST {base_url}/responses``).

Request mapping: history through :func:`toolwire.history.to_responses_input` (system
messages become ``instructions``), tools flattened by
:func:`toolwire.history.tool_defs.responses_tool_fields` (with ``tool_choice``, a mode
or ``{"type": "function", "name"}``, and ``parallel_tool_calls`` when set). Neutral settings:
``max_tokens`` becomes ``max_output_tokens``; ``reasoning_effort`` becomes
``reasoning: {effort, summary: "auto"}`` (so reasoning summaries stream as reasoning
deltas); ``stream: False`` asks for one JSON response. The key comes from
``OPENAI_API_KEY``. A request whose settings ask for logprobs (``include`` holding
``"message.output_text.logprobs"``) gets them back on ``Turn.logprobs``.

``builtin_tools`` (a setting) is a list of the API's own tool objects, appended to
``tools`` as they are: ``[{"type": "shell"}]``, ``[{"type": "apply_patch"}]``,
``[{"type": "web_search"}]``... (the shell and patch calls they bring are answered by
``Agent(builtin_handlers=...)``, see :mod:`toolwire.history.responses_builtin`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, ClassVar

from ..context.images import OPENAI_IMAGES, ImageLimits
from ..errors import CallerError
from ..history.openai_responses import to_responses_input
from ..history.tool_defs import responses_text_format, responses_tool_fields
from ..run.model import ModelRequest
from ..turn import Turn
from ..wire.openai_responses import OpenAIResponsesStream
from ..wire.openai_responses_body import decode_responses_response
from .hosted import HTTPModel, finish_body, offered_tool_names
from .http import HTTPRequest, Wire
from .openai_chat import bearer_headers
from .text_calls import content_calls, text_family

__all__ = ["OpenAIResponsesModel"]

LOGPROBS_INCLUDE = "message.output_text.logprobs"
"""The ``include`` value that asks the Responses API for output text logprobs."""


class OpenAIResponsesModel(HTTPModel):
    """A model behind the OpenAI Responses API."""

    prefix: ClassVar[str] = "responses"
    provider: ClassVar[str] = "OpenAI Responses"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    image_limits: ClassVar[ImageLimits] = OPENAI_IMAGES
    #: Its native structured output (``Agent(output_mode="native")``): ``text.format``.
    native_output: ClassVar[str] = "response_format"

    def build_request(self, request: ModelRequest, *, copied: bool = True) -> HTTPRequest:
        """The ``/responses`` request for one turn; ``copied=False`` shares the tool
        definitions' schemas (the body :meth:`stream` sends)."""
        settings = self.merged_settings(request)
        stream = bool(settings.pop("stream", True))
        instructions, items = to_responses_input(request.messages)
        body: dict[str, Any] = {"model": self.model, "input": items, "stream": stream}
        if instructions is not None:
            body["instructions"] = instructions
        if request.tools:
            body.update(
                responses_tool_fields(
                    request.tools, request.tool_choice, request.parallel_tool_calls, copied=copied
                )
            )
        builtin = _builtin_tools(settings.pop("builtin_tools", None))
        if builtin:
            body["tools"] = [*body.get("tools", []), *builtin]
        if "max_tokens" in settings:
            body["max_output_tokens"] = settings.pop("max_tokens")
        effort = settings.pop("reasoning_effort", None)
        if effort is not None:
            body["reasoning"] = {"effort": effort, "summary": "auto"}
        if request.output is not None:
            body["text"] = responses_text_format(request.output)
        if request.cache_key and self.uses_default_endpoint:
            body["prompt_cache_key"] = request.cache_key  # a settings value overrides it
        finish_body(body, settings)
        return HTTPRequest(
            self.provider,
            f"{self.base_url}/responses",
            bearer_headers(self.api_key, self.headers),
            body,
            self.key_env,
        )

    def _sent_request(self, request: ModelRequest) -> HTTPRequest:
        return self.build_request(request, copied=False)

    def wire(self) -> Wire:
        """Responses event decoder and non-streaming decoder."""
        return Wire(OpenAIResponsesStream, decode_responses_response)

    def __init__(self, model: str, *, text_calls: str | bool = "auto", **options: Any) -> None:
        """``text_calls``: calls a served model left in its answer text, read with its
        family's markup, as for :class:`~toolwire.providers.openai_chat.OpenAIChatModel`;
        ``options``: as for :class:`~toolwire.providers.hosted.HTTPModel`.

        Raises:
            CallerError: ``text_calls`` names no known format family or variant.
        """
        super().__init__(model, **options)
        self.text_calls = text_calls
        self._text_family = text_family(model, text_calls)

    def wire_for(self, request: ModelRequest) -> Wire:
        """The decoders for one request: told the offered tools' names (a custom call of
        another name is the server's own, xAI), keeping logprobs when the request's
        ``include`` asks for them, reading calls left in the answer text."""
        include = self.merged_settings(request).get("include")
        keep = isinstance(include, (list, tuple)) and LOGPROBS_INCLUDE in include
        offered = offered_tool_names(request.tools)
        family = self._text_family
        if family is None:
            return Wire(
                partial(OpenAIResponsesStream, keep_logprobs=keep, offered_tools=offered),
                partial(decode_responses_response, keep_logprobs=keep, offered_tools=offered),
            )
        calls = content_calls(family, request)

        def stream() -> OpenAIResponsesStream:
            return OpenAIResponsesStream(
                keep_logprobs=keep, offered_tools=offered, content_calls=calls()
            )

        def body(response: Any) -> Turn:
            return decode_responses_response(
                response, keep_logprobs=keep, offered_tools=offered, content_calls=calls()
            )

        return Wire(stream, body)


def _builtin_tools(value: Any) -> list[dict[str, Any]]:
    """The ``builtin_tools`` setting, checked: a list of tool objects with a ``type``."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(t, dict) and isinstance(t.get("type"), str) for t in value
    ):
        raise CallerError(
            f"settings['builtin_tools'] must be a list of Responses tool objects, got {value!r}",
            hint='e.g. settings={"builtin_tools": [{"type": "shell"}, {"type": "apply_patch"}]}',
        )
    return [dict(t) for t in value]
