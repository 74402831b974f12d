"""Streaming-safe parsers for the tool-call formats of open-weight models.

Open-weight models write tool calls as text with special markers; these parsers turn
that text into content, reasoning and tool calls on the client, with the same result
however the text is split::

    from toolwire import formats

    fmt = formats.for_model("Qwen/Qwen3-8B", tools=tools,
                            generation_prompt="<|im_start|>assistant\\n<think>\\n")
    result = fmt.parse(output_text)          # .content, .reasoning, .tool_calls
    stream = fmt.stream(hold_calls=True)     # a proxy: calls only once complete
    for delta in deltas:
        for event in stream.feed(delta):
            send(formats.to_openai_delta(event))
    stream.close()

What the model wrote is data: a malformed or cut-off call is passed through as content
with a ``Notice`` in ``result.notices`` (``strict=True`` raises :class:`FormatError`),
and after ``close()`` a stream's events describe exactly what ``parse`` returns. In the
default mode a call announced early and then found broken is retracted
(``ToolCallRetracted``).

The family table and model-id rules live in :mod:`toolwire.formats.registry`; the
stream wrapper every family shares in :mod:`toolwire.formats.base`, and its pieces in
``markers``, ``callobject``, ``coerce``, ``ids``, ``results`` and ``trim``; one module
per family.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_exports
from ..tooldef import ToolDef
from .registry import FAMILIES, make_format, resolve_model

# Loaded on first use (toolwire/_lazy.py): a hosted model asks the registry only whether
# its model id names a family (``text_calls="auto"``), and the parsers' shared stream,
# decoder and results come with the first format it makes.
_EXPORTS = {
    "Format": "base",
    "FormatStream": "base",
    "TextTurnDecoder": "decode",
    "ParsedCall": "results",
    "ParseResult": "results",
    "to_openai_delta": "results",
}

__getattr__ = lazy_exports(globals(), _EXPORTS)

if TYPE_CHECKING:
    from .base import Format, FormatStream
    from .decode import TextTurnDecoder
    from .results import ParsedCall, ParseResult, to_openai_delta

__all__ = [
    "FamilySummary",
    "Format",
    "FormatStream",
    "ParseResult",
    "ParsedCall",
    "TextTurnDecoder",
    "families",
    "for_model",
    "get",
    "to_openai_delta",
]


@dataclass(frozen=True, slots=True)
class FamilySummary:
    """One row of ``toolwire formats``.

    Attributes:
        name: The family name, as :func:`get` takes it.
        variants: Its variants; the first is the default.
        model_patterns: Regular expressions of the model ids that select it (searched
            in the lower-cased id without its organisation).
        description: One line about the format.
    """

    name: str
    variants: tuple[str, ...]
    model_patterns: tuple[str, ...]
    description: str


def for_model(
    model: str,
    *,
    tools: Sequence[Mapping[str, Any] | Any] | Any | None = None,
    generation_prompt: str | None = None,
) -> Format:
    """Return the tool-call format of a Hugging Face model id.

    Args:
        model: A model id such as ``"Qwen/Qwen3-8B"`` or ``"openai/gpt-oss-20b"``
            (case-insensitive; the organisation is optional).
        tools: The tools, used to type argument values that the format carries as
            text: ``toolwire.Tool`` objects, a ``Toolset``, or OpenAI-style tool
            definitions (dicts), mixed freely.
        generation_prompt: The text the chat template appended after the last message
            (``add_generation_prompt``); when it opens a reasoning block (``<think>\\n``),
            the output is parsed as starting inside reasoning.

    Raises:
        CallerError: The model matches no known family (the message lists them), or a
            tool is neither a definition nor an object with ``definition()``.
    """
    family, variant = resolve_model(model)
    return make_format(
        family, variant, tools=_tool_definitions(tools), generation_prompt=generation_prompt
    )


def _tool_definitions(tools: Any) -> list[Mapping[str, Any] | ToolDef] | None:
    """Tool definitions (``ToolDef`` objects or OpenAI-style dicts) from ``Tool`` objects, a
    ``Toolset`` or definitions.

    Duck-typed (``definition()`` / ``definitions()``): this layer sits below the tools
    package and does not import it.

    Raises:
        CallerError: An item is neither a ``ToolDef``, a mapping nor has ``definition()``.
    """
    from ..errors import CallerError

    if tools is None:
        return None
    if callable(getattr(tools, "definitions", None)):
        return list(tools.definitions())
    out: list[Mapping[str, Any] | ToolDef] = []
    for item in tools:
        if isinstance(item, (Mapping, ToolDef)):
            out.append(item)
        elif callable(getattr(item, "definition", None)):
            out.append(item.definition())
        else:
            raise CallerError(
                f"tools: an item of type {type(item).__name__} is neither a Tool nor a tool "
                "definition",
                hint="pass toolwire.Tool or toolwire.ToolDef objects, or OpenAI-style tool dicts",
            )
    return out


def get(
    family: str,
    variant: str | None = None,
    *,
    tools: Sequence[Mapping[str, Any] | Any] | Any | None = None,
    generation_prompt: str | None = None,
) -> Format:
    """Return a format by family name (and variant; the family's default if ``None``).

    Raises:
        CallerError: Unknown family or variant (the message lists the known ones).
    """
    return make_format(
        family, variant, tools=_tool_definitions(tools), generation_prompt=generation_prompt
    )


def families() -> list[FamilySummary]:
    """List every family with its variants and model-id patterns."""
    return [
        FamilySummary(info.name, info.variants, info.model_patterns, info.description)
        for info in FAMILIES
    ]
