"""Anthropic Messages: the non-streaming body decoder, beside the stream's.

``decode_anthropic_response`` feeds a response body's content blocks through the same
:class:`~toolwire.wire.assembler.Assembler` as ``AnthropicStream`` feeds a stream, so a
body and the stream of the same turn give the same ``Turn``. ``assistant_part`` reads
one assistant content block; ``toolwire.history.anthropic`` uses it for caller
histories too, with the caller's error instead of the provider's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..messages import Part, ProviderPart, ReasoningPart, TextPart, ToolCall
from ..turn import Turn
from .anthropic import PROVIDER, is_known_provider_block, refusal_details
from .assembler import Assembler
from .fields import (
    ErrorFactory,
    as_list,
    as_object,
    opt_str,
    protocol_error,
    raise_api_error,
    req_str,
    to_plain,
)
from .usage import ANTHROPIC_STOP_REASONS, anthropic_usage

__all__ = [
    "INVALID_ARGUMENTS_KEY",
    "arguments_from_input",
    "assistant_part",
    "decode_anthropic_response",
]

INVALID_ARGUMENTS_KEY = "_toolwire_invalid_arguments"
"""The key under which arguments that are not a JSON object travel to Anthropic."""


def arguments_from_input(value: Any) -> str:
    """The arguments text for a ``tool_use`` ``input`` (the inverse of the encoding).

    Args:
        value: The decoded ``input`` value.

    Returns:
        ``json.dumps(value, ensure_ascii=False)`` (the spacing Anthropic's own streamed
        ``input_json_delta`` uses), or the original text of a wrapped invalid input.

    Raises:
        TypeError: ``value`` holds something that is not JSON data (possible only
            with SDK objects); callers wrap it in their own toolwire error.
    """
    if isinstance(value, Mapping) and len(value) == 1:
        wrapped = value.get(INVALID_ARGUMENTS_KEY)
        if isinstance(wrapped, str):
            return wrapped
    return json.dumps(value, ensure_ascii=False)


def assistant_part(block: Mapping[str, Any], where: str, err: ErrorFactory) -> Part:
    """One assistant content block as a neutral part; ``err`` builds the error for a bad one."""
    kind = block.get("type")
    if kind == "text":
        citations = block.get("citations")
        if citations is not None:
            items = as_list(citations, f"{where}.citations", err)
            kept = [dict(as_object(c, f"{where}.citations[]", err)) for c in items]
            return TextPart(req_str(block, "text", where, err), kept or None)
        return TextPart(req_str(block, "text", where, err))
    if kind == "thinking":
        return ReasoningPart(
            req_str(block, "thinking", where, err),
            signature=opt_str(block, "signature", where, err),
        )
    if kind == "redacted_thinking":
        return ReasoningPart("", redacted=req_str(block, "data", where, err))
    if kind == "tool_use":
        call_id, name = req_str(block, "id", where, err), req_str(block, "name", where, err)
        return ToolCall(
            call_id, name, _arguments(block, where, err), caller=_caller(block, where, err)
        )
    if isinstance(kind, str) and is_known_provider_block(kind):
        return ProviderPart(PROVIDER, kind, dict(block))
    raise err(f"assistant block type {kind!r} is not supported", where)


def _caller(block: Mapping[str, Any], where: str, err: ErrorFactory) -> dict[str, Any] | None:
    """A ``tool_use`` block's ``caller`` (programmatic tool calling), or ``None``."""
    caller = block.get("caller")
    return None if caller is None else dict(as_object(caller, f"{where}.caller", err))


def _arguments(block: Mapping[str, Any], where: str, err: ErrorFactory) -> str:
    value = block.get("input", {})
    if not isinstance(value, Mapping):
        raise err(f"tool_use input must be an object, got {type(value).__name__}", where)
    try:
        return arguments_from_input(value)
    except (TypeError, ValueError) as exc:  # not JSON data (only possible from SDK objects)
        raise err(f"tool_use input is not JSON data: {exc}", where) from None


def decode_anthropic_response(response: Any) -> Turn:
    """Decode a non-streaming Anthropic Messages response into a Turn.

    Content blocks go, in order, through the same
    :class:`~toolwire.wire.assembler.Assembler` as a stream (a call's index is its
    block's position), so the same rules hold. ``tool_use`` ``input`` becomes the
    arguments text via ``json.dumps`` (see :func:`arguments_from_input`). Blocks of
    server tools (``server_tool_use``, ``web_search_tool_result``...), containers and
    compaction become ``ProviderPart``s, kept verbatim in place and never executed; a
    block kind toolwire does not know is kept the same way with an ``unknown_block``
    notice.

    Args:
        response: The response body as a dict, or the SDK's ``Message``.

    Returns:
        The Turn, ``stop_reason`` mapped by :data:`ANTHROPIC_STOP_REASONS`, usage by
        :func:`~toolwire.wire.usage.anthropic_usage`.

    Raises:
        ProviderAPIError: the body is an error object.
        ProtocolError: the body is not a Messages response.
        TurnError: a ``tool_use`` block breaks the assembler's rules.
    """
    body = as_object(to_plain(response), "response", protocol_error)
    raise_api_error(body)
    content = as_list(body.get("content"), "response.content", protocol_error)
    assembler = Assembler()
    for index, raw in enumerate(content):
        where = f"response.content[{index}]"
        _feed_block(assembler, index, as_object(raw, where, protocol_error), where)
    stop = opt_str(body, "stop_reason", "response", protocol_error)
    if stop == "refusal":
        refusal_details(assembler, body.get("stop_details"))
    if stop is not None:
        assembler.finish(ANTHROPIC_STOP_REASONS.get(stop, stop))
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        assembler.set_usage(anthropic_usage(usage))
    return assembler.close()


def _feed_block(assembler: Assembler, index: int, block: Mapping[str, Any], where: str) -> None:
    kind = block.get("type")
    if kind == "tool_use":
        call_id = opt_str(block, "id", where, protocol_error)
        name = opt_str(block, "name", where, protocol_error)
        caller = _caller(block, where, protocol_error)
        assembler.tool_fragment(index, call_id, name, None)
        if caller is not None:
            assembler.tool_caller(index, caller)
        assembler.tool_fragment(index, None, None, _arguments(block, where, protocol_error))
    elif kind in ("text", "thinking", "redacted_thinking"):
        part = assistant_part(block, where, protocol_error)
        if isinstance(part, TextPart):
            assembler.part_break()  # each text block is its own part, as in a stream
            if part.text:
                assembler.text(part.text)
            for citation in part.citations or ():
                assembler.citation(citation)
        elif isinstance(part, ReasoningPart):
            assembler.part_break()
            assembler.reasoning(part.text)
            assembler.reasoning_meta(signature=part.signature, redacted=part.redacted)
    else:
        # A server tool use or result, container or compaction block: kept verbatim in
        # its place, never executed, sent back unchanged (as the stream decoder does).
        name = req_str(block, "type", where, protocol_error)
        assembler.provider_part(PROVIDER, dict(block))
        if not is_known_provider_block(name):
            assembler.notice(
                "unknown_block",
                f"content block of type {name!r} kept verbatim; toolwire does not interpret it",
                index,
            )
