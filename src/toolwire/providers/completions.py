"""Raw-completion mode: an open-weight model served as plain text completions.

``POST {base_url}/completions`` with a prompt toolwire renders itself in the model
family's own format (:mod:`toolwire.prompts`: the model's own chat template when the
caller gives it, else the published one toolwire ships for the family; ChatML with
Hermes tool calls for a model of no known family), and the streamed text is parsed on
the client by the model's format from :mod:`toolwire.formats`. This works with a server whose own tool-call parser is broken
or missing (vLLM without ``--tool-call-parser``, llama.cpp without ``--jinja``): the
server only has to generate text.

With ``grammar=True`` the request also carries a GBNF grammar built from the tools'
JSON Schemas (:mod:`.grammar`), which llama.cpp's and llama-cpp-python's servers
accept as the ``grammar`` field: the output is then a well-formed call or a plain
answer by construction.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from ..context.images import ImageLimits, reject_images
from ..errors import CallerError, ProtocolError, ProviderAPIError
from ..formats import Format
from ..formats.decode import TextTurnDecoder
from ..history.tool_defs import to_openai_chat_tools
from ..prompts import Prompt, PromptTemplate, TemplateArg, prompt_template
from ..run.model import ModelEvent, ModelRequest
from ..tooldef import ToolDef
from ..turn import Turn
from ..wire.events import Event
from ..wire.sse import SSEDecoder
from ..wire.usage import openai_usage
from .hosted import HTTPModel, finish_body
from .http import HTTPRequest, Wire
from .openai_chat import bearer_headers
from .prompt import chatml_hermes

if TYPE_CHECKING:
    import httpx

    from .http import Retries, Timeouts

__all__ = ["CompletionsModel", "CompletionsStream", "decode_completion"]

DEFAULT_MAX_TOKENS = 1024


class CompletionsStream:
    """Decodes a streamed ``/completions`` response (SSE of text chunks) through a format."""

    def __init__(self, fmt: Format, *, calls: bool = True) -> None:
        """``calls=False``: no tool may be called; the text stays text (``TextTurnDecoder``)."""
        self._sse = SSEDecoder()
        self._turn = TextTurnDecoder(fmt, require_end=True, calls=calls)
        self._items = 0

    def feed_bytes(self, data: bytes) -> list[Event]:
        """Consume raw SSE bytes; return the events they complete."""
        out: list[Event] = []
        for payload in self._sse.feed(data):
            out += self._payload(payload.data)
        return out

    def close(self) -> Turn:
        """End of body: the turn, or ``ProtocolError`` (with the partial turn) if cut."""
        for payload in self._sse.close():
            self._payload(payload.data)
        return self._turn.close()

    def _payload(self, data: str) -> list[Event]:
        if data == "[DONE]":
            return []
        self._items += 1
        try:
            item = json.loads(data)
        except (ValueError, RecursionError):
            raise ProtocolError(
                f"completion chunk is not JSON: {data[:80]!r}", where=f"SSE event {self._items}"
            ) from None
        if not isinstance(item, dict):
            raise ProtocolError(
                "completion chunk is not a JSON object", where=f"SSE event {self._items}"
            )
        return _item_events(self._turn, item, f"SSE event {self._items}")


def _item_events(turn: TextTurnDecoder, item: dict[str, Any], where: str) -> list[Event]:
    if "error" in item:
        error = item["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ProviderAPIError(f"completion failed: {message}", body=item)
    out: list[Event] = []
    for choice in item.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        text = choice.get("text")
        if text is not None and not isinstance(text, str):
            raise ProtocolError(
                f"choices[0].text must be a string, got {type(text).__name__}", where=where
            )
        if text:
            out += turn.text(text)
        if choice.get("finish_reason"):
            out += turn.end(str(choice["finish_reason"]))
    usage = item.get("usage")
    if isinstance(usage, dict):
        out += turn.usage(openai_usage(usage))
    return out


def decode_completion(fmt: Format, body: Any, *, strict: bool = False, calls: bool = True) -> Turn:
    """Decode a non-streaming ``/completions`` response body into a Turn.

    A malformed or cut-off call in the text is content with a notice (``strict``:
    ``FormatError``).
    """
    if not isinstance(body, dict):
        raise ProtocolError("completion response is not a JSON object")
    turn = TextTurnDecoder(fmt, strict=strict, require_end=True, calls=calls)
    _item_events(turn, body, "response")
    if not turn.ended:
        turn.end(None)
    return turn.close()


def _family(model: str, format: str | None) -> tuple[str | None, str | None]:
    """The ``(family, variant)`` of a served model: ``format`` when given (with the
    variant the model id names, if it names one of that family), else the model id's;
    ``(None, None)`` when neither says."""
    from ..formats.registry import family_info, resolve_model

    try:
        resolved: tuple[str | None, str | None] = resolve_model(model)
    except CallerError:
        resolved = (None, None)
    if format is None:
        return resolved
    family = family_info(format).name
    return resolved if resolved[0] == family else (family, None)


class CompletionsModel(HTTPModel):
    """An open-weight model behind a plain ``/completions`` endpoint.

    Args:
        model: The served model name; also selects the tool-call format family and
            variant (``toolwire.formats.resolve_model``) unless ``format`` is given.
        template: Renders the prompt. ``None``: the template toolwire ships for the
            family's variant (:mod:`toolwire.prompts`), or ChatML with Hermes calls for
            a model of no known family. The model's own: its Jinja text, a
            ``chat_template.jinja`` or ``tokenizer_config.json`` path, or the model
            folder. Or any ``PromptTemplate`` callable.
        format: The tool-call format family name (``"hermes"``, ``"llama"``...) when
            the model name does not say it.
        grammar: Send a GBNF grammar built from the tools (llama.cpp servers); it
            writes Hermes calls, so only for the ``hermes`` family (or a model of no
            known family).
        **kwargs: As for :class:`~toolwire.providers.hosted.HTTPModel`.
    """

    prefix: ClassVar[str] = "completions"
    provider: ClassVar[str] = "OpenAI-compatible Completions"
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    key_env: ClassVar[str] = "OPENAI_API_KEY"
    image_limits: ClassVar[ImageLimits] = ImageLimits.none("a raw-completions model")

    def __init__(  # noqa: PLR0913 — keyword-only server settings, each documented
        self,
        model: str,
        *,
        template: PromptTemplate | TemplateArg = None,
        format: str | None = None,
        grammar: bool = False,
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
        self.family, self.variant = _family(model, format)
        self.template: PromptTemplate = self._template(template)
        self.grammar = grammar
        self._format_for([])  # fail now, not at the first turn, on an unknown family
        if grammar and self.family not in (None, "hermes"):
            # The grammar writes Hermes <tool_call> blocks (grammar.py): under another
            # family's prompt and parser its calls would be neither asked for nor read.
            raise CallerError(
                f"grammar=True constrains the output to Hermes <tool_call> blocks, but "
                f"{model!r} writes {self.family} calls",
                hint="drop the grammar, or serve a Hermes-format model (format='hermes')",
            )

    def _template(self, template: PromptTemplate | TemplateArg) -> PromptTemplate:
        if callable(template):
            return template  # a ChatTemplate or the caller's own function
        if self.family is not None:
            return prompt_template(self.family, self.variant, template=template)
        if template is None:
            return chatml_hermes  # no known family: ChatML, read as Hermes calls
        raise CallerError(
            f"no tool-call format known for model {self.model!r} to render its template with",
            hint="name the family: format='hermes', 'llama', 'mistral'...",
        )

    def _format_for(
        self, tools: Sequence[ToolDef | Mapping[str, Any]], prompt: Prompt | None = None
    ) -> Format:
        from .. import formats

        generation = prompt.generation_prompt if prompt else None
        if self.family is not None:
            return formats.get(self.family, self.variant, tools=tools, generation_prompt=generation)
        if self.template is chatml_hermes:  # the default template writes Hermes calls
            return formats.get("hermes", "qwen2.5", tools=tools, generation_prompt=generation)
        return formats.for_model(self.model)  # raises: the model names no known family

    def build_request(self, request: ModelRequest) -> HTTPRequest:
        """The ``/completions`` request for one turn."""
        return self._build(
            request,
            self.template(
                request.messages, to_openai_chat_tools(request.tools), request.tool_choice
            ),
        )

    def _build(self, request: ModelRequest, prompt: Prompt) -> HTTPRequest:
        reject_images(request.messages, self.image_limits)  # a text prompt drops images
        settings = self.merged_settings(request)
        stream = bool(settings.pop("stream", True))
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": prompt.text,
            "max_tokens": settings.pop("max_tokens", DEFAULT_MAX_TOKENS),
            "stop": list(prompt.stop),
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        settings.pop("reasoning_effort", None)  # raw text has no such switch
        if self.grammar and request.may_call:
            from .grammar import tool_call_grammar

            body["grammar"] = tool_call_grammar(request.tools, request.tool_choice)
        finish_body(body, settings)
        return HTTPRequest(
            self.provider,
            f"{self.base_url}/completions",
            bearer_headers(self.api_key, self.headers),
            body,
            self.key_env,
        )

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn (see :meth:`HTTPModel.stream`); the format is set per request."""
        from .http import prepared_turn

        return prepared_turn(partial(self._prepare, request), self.options)

    def _prepare(self, request: ModelRequest) -> tuple[HTTPRequest, Wire]:
        """The request with the prompt, and the decoders of the format it is read with."""
        prompt = self.template(
            request.messages, to_openai_chat_tools(request.tools), request.tool_choice
        )
        fmt = self._format_for(request.tools, prompt)
        calls = request.may_call  # else the text stays text
        wire = Wire(
            lambda: CompletionsStream(fmt, calls=calls),
            lambda body: decode_completion(fmt, body, calls=calls),
        )
        return self._build(request, prompt), wire

    def wire(self) -> Wire:
        """Decoders for the tool-less default format (``stream`` builds per-request ones)."""
        fmt = self._format_for([])
        return Wire(lambda: CompletionsStream(fmt), lambda body: decode_completion(fmt, body))
