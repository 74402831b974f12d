"""OpenAI-compatible Chat Completions (``POST {base_url}/chat/completions``).

Serves OpenAI itself and every server that speaks its dialect: vLLM, SGLang,
llama.cpp's ``llama-server``, llama-cpp-python's server, Ollama, LM Studio, OpenRouter.
The key comes from ``OPENAI_API_KEY``; it is required only for OpenAI's own endpoint
(self-hosted servers usually need none).

Request mapping: history through :func:`toolwire.history.to_openai_chat`, tools as
given, ``tool_choice`` a mode or ``{"type": "function", "function": {"name"}}``,
``parallel_tool_calls`` when set, ``stream_options.include_usage`` so the last chunk
carries usage. Neutral settings: ``max_tokens`` and ``reasoning_effort`` keep their
names (both are Chat fields); ``stream: False`` asks for one JSON response. A request
with ``logprobs: True`` in its settings gets them back on ``Turn.logprobs`` (the
decoders keep them only then).

What the history sends back follows the server's dialect
(:mod:`toolwire.history.chat_dialects`): ``dialect="deepseek"`` (the default for
``https://api.deepseek.com``) sends reasoning back as DeepSeek's thinking mode requires,
``dialect="deepseek-r1"`` never sends it; every other server gets ``openai``.

Calls left in the answer text (``text_calls``): a served open-weight model whose server
did not parse its tool calls (vLLM without ``--enable-auto-tool-choice``, a failed
Ollama or llama.cpp parser) returns its own call markup as ``content``. With
``text_calls="auto"`` (the default) and a model name whose family
:func:`toolwire.formats.for_model` knows, the content is read with that family's
parser (:mod:`toolwire.wire.content_calls`): when tools were offered (and
``tool_choice`` is not ``none``) the markup becomes tool calls, with a
``calls_from_content`` notice; otherwise the content stays as it came, with a
``calls_in_content`` notice when it held markup. A family name (``"hermes"``,
``"qwen3_coder"``, ``"family:variant"``) forces one; ``False`` turns it off.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from ..context.images import OPENAI_IMAGES, ImageLimits
from ..history.chat_dialects import ChatDialect, chat_dialect
from ..history.openai_chat import to_openai_chat
from ..history.tool_defs import openai_chat_response_format, openai_chat_tool_fields
from ..run.model import ModelRequest
from ..wire.openai_chat import OpenAIChatStream
from ..wire.openai_chat_body import decode_openai_chat_response
from .hosted import HTTPModel, finish_body
from .http import HTTPRequest, Retries, Timeouts, Wire
from .text_calls import content_calls, text_family

if TYPE_CHECKING:
    import httpx

    from ..turn import Turn

__all__ = ["DIALECT_HOSTS", "OpenAIChatModel", "bearer_headers"]

DIALECT_HOSTS = {"api.deepseek.com": "deepseek"}
"""The dialect of a known endpoint's host, used when the model is given none."""


def bearer_headers(api_key: str | None, extra: dict[str, str]) -> dict[str, str]:
    """JSON and SSE headers, with ``Authorization: Bearer`` when there is a key."""
    headers = {"content-type": "application/json", "accept": "text/event-stream, application/json"}
    if api_key:
        headers["authorization"] = f"Bearer {api_key}"
    headers.update(extra)
    return headers


class OpenAIChatModel(HTTPModel):
    """A model behind an OpenAI-compatible Chat Completions endpoint.

    Example::

        OpenAIChatModel("gpt-4.1-mini")                                   # OpenAI
        OpenAIChatModel("Qwen/Qwen3-8B", base_url="http://localhost:8000/v1")  # vLLM
        OpenAIChatModel("deepseek-reasoner", base_url="https://api.deepseek.com")

    Args:
        model: The server's model name.
        dialect: The server's Chat dialect, by name (``openai``, ``deepseek``,
            ``deepseek-r1``) or as a ``ChatDialect``; ``None``: the dialect of the
            endpoint's host (:data:`DIALECT_HOSTS`), else ``openai``.
        text_calls: Tool calls the model left in its answer text: ``"auto"`` reads
            them with the family :func:`toolwire.formats.for_model` finds for
            ``model`` (none found: off); a family name, optionally with its variant
            (``"hermes"``, ``"qwen3_coder"``, ``"llama:llama3-json"``), forces one;
            ``False`` turns it off.
        base_url, api_key, headers, settings, timeouts, retries, client: As for
            :class:`~toolwire.providers.hosted.HTTPModel`.

    Raises:
        CallerError: ``dialect`` names no known dialect, or ``text_calls`` no known
            format family or variant.
    """

    prefix: ClassVar[str] = "openai"
    provider: ClassVar[str] = "OpenAI Chat Completions"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    image_limits: ClassVar[ImageLimits] = OPENAI_IMAGES
    #: Its native structured output (``Agent(output_mode="native")``): ``response_format``.
    native_output: ClassVar[str] = "response_format"

    def __init__(  # noqa: PLR0913 — HTTPModel's keywords, and the dialect
        self,
        model: str,
        *,
        dialect: str | ChatDialect | None = None,
        text_calls: str | bool = "auto",
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        settings: Mapping[str, Any] | None = None,
        timeouts: Timeouts | None = None,
        retries: Retries | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            headers=headers,
            settings=settings,
            timeouts=timeouts,
            retries=retries,
            client=client,
        )
        host = urlsplit(self.base_url).hostname or ""
        self.dialect = chat_dialect(dialect or DIALECT_HOSTS.get(host, "openai"))
        self.text_calls = text_calls
        self._text_family = text_family(model, text_calls)

    def build_request(self, request: ModelRequest, *, copied: bool = True) -> HTTPRequest:
        """The ``/chat/completions`` request for one turn; ``copied=False`` shares the tool
        definitions' schemas (the body :meth:`stream` sends)."""
        settings = self.merged_settings(request)
        stream = bool(settings.pop("stream", True))
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_chat(request.messages, dialect=self.dialect),
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body.update(
                openai_chat_tool_fields(
                    request.tools, request.tool_choice, request.parallel_tool_calls, copied=copied
                )
            )
        if request.output is not None:
            body["response_format"] = openai_chat_response_format(request.output)
        if request.cache_key and self.uses_default_endpoint:
            body["prompt_cache_key"] = request.cache_key  # a settings value overrides it
        finish_body(body, settings)
        return HTTPRequest(
            self.provider,
            f"{self.base_url}/chat/completions",
            bearer_headers(self.api_key, self.headers),
            body,
            self.key_env,
        )

    def _sent_request(self, request: ModelRequest) -> HTTPRequest:
        return self.build_request(request, copied=False)

    def wire(self) -> Wire:
        """Chat Completions chunk decoder and non-streaming decoder."""
        return Wire(OpenAIChatStream, decode_openai_chat_response)

    def wire_for(self, request: ModelRequest) -> Wire:
        """The decoders, keeping logprobs when the request's settings ask for them, and
        reading calls left in the answer text (``text_calls``)."""
        keep = bool(self.merged_settings(request).get("logprobs"))
        if self._text_family is None:
            if not keep:
                return self.wire()
            return Wire(
                partial(OpenAIChatStream, keep_logprobs=True),
                partial(decode_openai_chat_response, keep_logprobs=True),
            )
        calls = content_calls(self._text_family, request)

        def stream() -> OpenAIChatStream:
            return OpenAIChatStream(keep_logprobs=keep, content_calls=calls())

        def body(response: Any) -> Turn:
            return decode_openai_chat_response(response, keep_logprobs=keep, content_calls=calls())

        return Wire(stream, body)
