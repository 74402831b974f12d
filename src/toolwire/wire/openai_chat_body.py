"""OpenAI Chat Completions: the non-streaming body decoder, beside the stream's.

``decode_openai_chat_response`` feeds a response body's message through the same
:class:`~toolwire.wire.assembler.Assembler` as ``OpenAIChatStream`` feeds a stream, so
a body and the stream of the same turn give the same ``Turn``. ``assistant_parts`` and
``text_of`` read a Chat message's content and calls; ``toolwire.history.openai_chat``
uses them for caller histories too, with the caller's error instead of the provider's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ToolwireError
from ..messages import Part, ReasoningPart, RefusalPart, TextPart, ToolCall
from ..turn import Turn
from .assembler import Assembler
from .content_calls import ContentCalls, end_body
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
from .openai_chat import chat_citations, thinking_text
from .openai_chat import keep_logprobs as _keep_logprobs
from .usage import openai_usage

__all__ = ["assistant_parts", "decode_openai_chat_response", "text_of"]

JSONDict = dict[str, Any]


def assistant_parts(message: Mapping[str, Any], where: str, err: ErrorFactory) -> list[Part]:
    """The parts of a Chat assistant message (or response message): reasoning, text, calls."""
    if message.get("function_call") is not None:
        raise err("legacy 'function_call' has no call id; use 'tool_calls'", where)
    parts: list[Part] = []
    reasoning = opt_str(message, "reasoning_content", where, err) or opt_str(
        message, "reasoning", where, err
    )
    content = message.get("content")
    reasoning = (reasoning or "") + _thinking_of(content, f"{where}.content", err)
    if reasoning and isinstance(content, list):  # the thinking chunks are read: the rest is text
        content = [
            p for p in content if not (isinstance(p, Mapping) and p.get("type") == "thinking")
        ]
    if reasoning:
        parts.append(ReasoningPart(reasoning))
    text = text_of(content, f"{where}.content", err, allow_none=True)
    if text:
        parts.append(TextPart(text))
    refusal = _refusal_of(content, f"{where}.content", err)
    refusal += opt_str(message, "refusal", where, err) or ""
    if refusal:
        parts.append(RefusalPart(refusal))
    raw_calls = message.get("tool_calls")
    if raw_calls is not None:
        calls = as_list(raw_calls, f"{where}.tool_calls", err)
        parts.extend(
            _decode_call(call, f"{where}.tool_calls[{i}]", err) for i, call in enumerate(calls)
        )
    return parts


def _decode_call(raw: Any, where: str, err: ErrorFactory) -> ToolCall:
    call = as_object(raw, where, err)
    kind = call.get("type")  # null is absent: Mistral's SDK objects dump it as None
    if kind == "custom":  # a free-form input tool's call: the raw input is the argument
        custom = as_object(call.get("custom"), f"{where}.custom", err)
        made = ToolCall(
            req_str(call, "id", where, err),
            req_str(custom, "name", f"{where}.custom", err),
            opt_str(custom, "input", f"{where}.custom", err) or "",
        )
        made.freeform = True
        return made
    if kind is not None and kind != "function":
        raise err(f"tool call type {kind!r} is not supported (only 'function', 'custom')", where)
    function = as_object(call.get("function"), f"{where}.function", err)
    call_id = req_str(call, "id", where, err)
    name = req_str(function, "name", f"{where}.function", err)
    arguments = opt_str(function, "arguments", f"{where}.function", err)
    return ToolCall(call_id, name, arguments or "")


def _thinking_of(content: Any, where: str, err: ErrorFactory) -> str:
    """The ``thinking`` chunks of a content list (Mistral's Magistral dialect), joined."""
    if not isinstance(content, list):
        return ""
    pieces = []
    for i, part in enumerate(content):
        if isinstance(part, Mapping) and part.get("type") == "thinking":
            try:
                pieces.append(thinking_text(part.get("thinking"), f"{where}[{i}].thinking"))
            except ToolwireError as exc:
                raise err(str(exc.message), f"{where}[{i}]") from None
    return "".join(pieces)


def _refusal_of(content: Any, where: str, err: ErrorFactory) -> str:
    """The ``refusal`` content parts of a Chat ``content`` list, joined (checked by ``text_of``)."""
    if not isinstance(content, list):
        return ""
    return "".join(
        req_str(part, "refusal", f"{where}[{i}]", err)
        for i, part in enumerate(content)
        if isinstance(part, Mapping) and part.get("type") == "refusal"
    )


def text_of(content: Any, where: str, err: ErrorFactory, *, allow_none: bool = False) -> str:
    """The text of a Chat ``content``: a string, or a list of ``text`` parts (``refusal``
    parts are checked here and read by ``_refusal_of``)."""
    if isinstance(content, str):
        return content
    if content is None:
        if allow_none:
            return ""
        raise err("content is missing", where)
    pieces = []
    for i, raw in enumerate(as_list(content, where, err)):
        part = as_object(raw, f"{where}[{i}]", err)
        kind = part.get("type")
        if kind not in ("text", "refusal"):
            raise err(
                f"content part type {kind!r} has no place in toolwire's text-only messages",
                f"{where}[{i}]",
            )
        text = req_str(part, str(kind), f"{where}[{i}]", err)
        if kind == "text":
            pieces.append(text)
    return "".join(pieces)


def decode_openai_chat_response(
    response: Any, *, keep_logprobs: bool = False, content_calls: ContentCalls | None = None
) -> Turn:
    """Decode a non-streaming Chat Completions response into a Turn.

    The message goes through the same :class:`~toolwire.wire.assembler.Assembler` as a
    stream, so the same rules hold: a call without an id or a name, or a repeated id,
    raises ``TurnError``; arguments that are not JSON are recorded on that call. The
    first choice is decoded; ``refusal`` text is a ``RefusalPart`` (the turn is
    ``refused``), as in a stream.

    Args:
        response: The response body as a dict, or the SDK's ``ChatCompletion``.
        keep_logprobs: Keep the choice's ``logprobs`` on ``Turn.logprobs``.
        content_calls: Read ``content`` with a model family's call markup, as the
            stream decoder does (``toolwire.wire.content_calls``).

    Returns:
        The Turn, with ``finish_reason`` as the provider sent it and usage mapped by
        :func:`~toolwire.wire.usage.openai_usage`.

    Raises:
        ProviderAPIError: the body is an error object.
        ProtocolError: the body is not a Chat Completions response.
        TurnError: a tool call breaks the assembler's rules.
    """
    body = as_object(to_plain(response), "response", protocol_error)
    raise_api_error(body)
    choices = as_list(body.get("choices"), "response.choices", protocol_error)
    if not choices:
        raise protocol_error("the response has no choices", "response.choices")
    choice = as_object(choices[0], "response.choices[0]", protocol_error)
    message = as_object(choice.get("message"), "response.choices[0].message", protocol_error)
    assembler = Assembler()
    _feed_message(assembler, message, "response.choices[0].message", content_calls)
    chat_citations(assembler, {**body, "annotations": message.get("annotations")})
    if keep_logprobs:
        _keep_logprobs(assembler, choice.get("logprobs"), "response.choices[0].logprobs")
    finish = opt_str(choice, "finish_reason", "response.choices[0]", protocol_error)
    usage = body.get("usage")
    return end_body(
        assembler,
        finish,
        content_calls,
        openai_usage(usage) if isinstance(usage, Mapping) else None,
    )


def _feed_message(
    assembler: Assembler,
    message: Mapping[str, Any],
    where: str,
    content_calls: ContentCalls | None = None,
) -> None:
    if _is_placeholder(message.get("function_call")):
        # Some servers send an empty legacy function_call next to (or instead of) real
        # tool_calls; it carries nothing, so it is dropped, and said so.
        assembler.notice(
            "placeholder_ignored", "an empty legacy function_call placeholder was ignored"
        )
        message = {k: v for k, v in message.items() if k != "function_call"}
    index = 0  # the call's position in ``tool_calls``, as a stream's ``index`` would be
    for part in _response_parts(message, where):
        if isinstance(part, ReasoningPart):
            assembler.reasoning(part.text)
        elif isinstance(part, TextPart) and content_calls is not None:
            content_calls.text(assembler, part.text)
        elif isinstance(part, TextPart):
            assembler.text(part.text)
        elif isinstance(part, ToolCall) and part.freeform:
            assembler.custom_call(index, part.id or None, part.name or None, part.arguments)
            index += 1
        elif isinstance(part, RefusalPart):
            assembler.refusal(part.text)
        elif isinstance(part, ToolCall):
            assembler.tool_fragment(index, part.id or None, part.name or None, part.arguments)
            index += 1


def _is_placeholder(function_call: Any) -> bool:
    """True for ``{"name": "", "arguments": ""}`` (or with nulls): a call that says nothing."""
    return isinstance(function_call, Mapping) and not any(
        function_call.get(key) for key in ("name", "arguments")
    )


def _response_parts(message: Mapping[str, Any], where: str) -> list[Part]:
    """Like ``assistant_parts`` but lenient about a missing id or name: the assembler
    judges those, so the error is the same ``TurnError`` a stream would raise."""
    lenient = dict(message)
    raw_calls = message.get("tool_calls")
    calls = (
        as_list(raw_calls, f"{where}.tool_calls", protocol_error) if raw_calls is not None else []
    )
    lenient["tool_calls"] = [
        _with_placeholders(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
    ]
    return assistant_parts(lenient, where, protocol_error)


def _with_placeholders(raw: Any, where: str) -> JSONDict:
    call = dict(as_object(raw, where, protocol_error))
    call["id"] = opt_str(call, "id", where, protocol_error) or ""
    if call.get("type") == "custom":
        custom = dict(as_object(call.get("custom"), f"{where}.custom", protocol_error))
        custom["name"] = opt_str(custom, "name", f"{where}.custom", protocol_error) or ""
        call["custom"] = custom
        return call
    function = dict(as_object(call.get("function"), f"{where}.function", protocol_error))
    function["name"] = opt_str(function, "name", f"{where}.function", protocol_error) or ""
    call["function"] = function
    return call
