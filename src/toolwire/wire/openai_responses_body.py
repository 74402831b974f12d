"""OpenAI Responses: the non-streaming body decoder, beside the stream's.

``decode_responses_response`` feeds a response body's output items through the same
:class:`~toolwire.wire.assembler.Assembler` as ``OpenAIResponsesStream`` feeds a
stream (a function call's index is its position in ``output``), so a body and the
stream of the same turn give the same ``Turn``. ``decode_part``, ``message_parts`` and
``texts_of`` read one item; ``toolwire.history`` uses them for caller histories too,
with the caller's error instead of the provider's.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

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
from .openai_responses import (
    PROVIDER,
    REASONING_SUMMARY_JOIN,
    is_client_item,
    is_server_call,
    is_server_item,
    responses_finish_reason,
    server_call_notice,
)
from .usage import responses_usage

__all__ = [
    "decode_part",
    "decode_responses_response",
    "message_parts",
    "responses_finish_reason",
    "texts_of",
]


def decode_part(item: Mapping[str, Any], where: str, err: ErrorFactory) -> Part:
    """A ``reasoning``, ``function_call`` or ``custom_tool_call`` item as a neutral part."""
    kind = item.get("type")
    if kind == "function_call":
        return _decode_call(item, where, err)
    if kind == "custom_tool_call":
        call_id = req_str(item, "call_id", where, err)
        name = req_str(item, "name", where, err)
        call = ToolCall(call_id, name, opt_str(item, "input", where, err) or "")
        call.freeform = True
        return call
    return _decode_reasoning(item, where, err)


def _decode_call(item: Mapping[str, Any], where: str, err: ErrorFactory) -> ToolCall:
    call_id = req_str(item, "call_id", where, err)
    name = req_str(item, "name", where, err)
    return ToolCall(call_id, name, opt_str(item, "arguments", where, err) or "")


def _decode_reasoning(item: Mapping[str, Any], where: str, err: ErrorFactory) -> ReasoningPart:
    return ReasoningPart(
        _reasoning_text(item, where, err),
        redacted=opt_str(item, "encrypted_content", where, err),
        id=opt_str(item, "id", where, err),
    )


def _reasoning_text(item: Mapping[str, Any], where: str, err: ErrorFactory) -> str:
    """The summary texts (OpenAI) or, without a summary, the ``reasoning_text`` content
    (open-weight servers such as vLLM serving gpt-oss)."""
    summary = item.get("summary")
    texts = _part_texts(summary, f"{where}.summary", err, ("summary_text",)) if summary else []
    if not texts and item.get("content"):
        texts = _part_texts(item.get("content"), f"{where}.content", err, ("reasoning_text",))
    return REASONING_SUMMARY_JOIN.join(texts)


def message_parts(
    item: Mapping[str, Any], where: str, err: ErrorFactory
) -> list[TextPart | RefusalPart]:
    """An assistant message's content: a TextPart per text part, a RefusalPart (with the
    message's id, to send it back) per ``refusal`` part."""
    content = item.get("content")
    if not isinstance(content, list):
        return [TextPart(text) for text in texts_of(content, where, err)]
    item_id = opt_str(item, "id", where, err)
    texts = texts_of(content, where, err)  # checks every part
    return [
        RefusalPart(text, item_id)
        if isinstance(raw, Mapping) and raw.get("type") == "refusal"
        else TextPart(text)
        for raw, text in zip(content, texts, strict=True)
    ]


def texts_of(content: Any, where: str, err: ErrorFactory) -> list[str]:
    """A message's text pieces: a string, or a list of text content parts."""
    if isinstance(content, str):
        return [content]
    kinds = ("input_text", "output_text", "text", "refusal")
    return _part_texts(content, where, err, kinds)


def _part_texts(content: Any, where: str, err: ErrorFactory, kinds: tuple[str, ...]) -> list[str]:
    texts = []
    for i, raw in enumerate(as_list(content, where, err)):
        part = as_object(raw, f"{where}[{i}]", err)
        kind = part.get("type")
        if kind not in kinds:
            raise err(
                f"content part type {kind!r} has no place in toolwire's text-only messages",
                f"{where}[{i}]",
            )
        texts.append(
            req_str(part, "refusal" if kind == "refusal" else "text", f"{where}[{i}]", err)
        )
    return texts


def decode_responses_response(
    response: Any,
    *,
    keep_logprobs: bool = False,
    offered_tools: Collection[str] | None = None,
    content_calls: ContentCalls | None = None,
) -> Turn:
    """Decode a non-streaming Responses API response into a Turn.

    Output items go, in order, through the same
    :class:`~toolwire.wire.assembler.Assembler` as a stream (a function call's index is
    its position in ``output``), so the same rules hold. A ``custom_tool_call`` is a
    free-form call (``ToolRequest.freeform``). Items of built-in tools (web search,
    file search...) are kept verbatim as ``ProviderPart``; an item kind toolwire does
    not know is kept the same way with a Notice of kind ``unsupported_item``.

    A ``refusal`` content part is a ``RefusalPart`` (the turn is ``refused``), as in a
    stream.

    Args:
        response: The response body as a dict, or the SDK's ``Response``.
        keep_logprobs: Keep the output text parts' ``logprobs`` on
            ``Turn.logprobs["content"]``.
        offered_tools: The names of the tools the request offered: a
            ``custom_tool_call`` of another name was run by the server (xAI) and is
            kept as a ``ProviderPart`` (``is_server_call``).
        content_calls: Read output text with a model family's call markup, as the
            stream decoder does (``toolwire.wire.content_calls``).

    Returns:
        The Turn, finish reason from :func:`responses_finish_reason`, usage from
        :func:`~toolwire.wire.usage.responses_usage`.

    Raises:
        ProviderAPIError: the response failed or was cancelled.
        ProtocolError: the body is not a finished Responses API response.
        TurnError: a function call breaks the assembler's rules.
    """
    body = as_object(to_plain(response), "response", protocol_error)
    raise_api_error(body)
    output = as_list(body.get("output", []), "response.output", protocol_error)
    assembler = Assembler()
    has_calls = False
    for index, raw in enumerate(output):
        where = f"response.output[{index}]"
        item = as_object(raw, where, protocol_error)
        if item.get("type") == "custom_tool_call" and is_server_call(
            item.get("name"), offered_tools
        ):
            assembler.part_break()
            assembler.provider_part(PROVIDER, dict(item))
            server_call_notice(assembler, dict(item), index)
            continue
        has_calls |= _feed_item(assembler, index, item, where, content_calls)
    if keep_logprobs:
        _keep_logprobs(assembler, output)
    finish = responses_finish_reason(body, has_tool_calls=has_calls)
    usage = body.get("usage")
    return end_body(
        assembler,
        finish,
        content_calls,
        responses_usage(usage) if isinstance(usage, Mapping) else None,
    )


def _feed_item(
    assembler: Assembler,
    index: int,
    item: Mapping[str, Any],
    where: str,
    content_calls: ContentCalls | None = None,
) -> bool:
    """Feed one output item; return True if it is a function call."""
    kind = item.get("type")
    if kind == "function_call":
        call_id = opt_str(item, "call_id", where, protocol_error)
        name = opt_str(item, "name", where, protocol_error)
        assembler.tool_fragment(
            index, call_id, name, opt_str(item, "arguments", where, protocol_error)
        )
        return True
    if kind == "custom_tool_call":  # a free-form input tool: the raw input is the argument
        call_id = opt_str(item, "call_id", where, protocol_error)
        name = opt_str(item, "name", where, protocol_error)
        assembler.custom_call(index, call_id, name, opt_str(item, "input", where, protocol_error))
        return True
    if kind == "message":
        assembler.part_break()
        for content in message_parts(item, f"{where}.content", protocol_error):
            if isinstance(content, RefusalPart):
                assembler.refusal(content.text, content.id)
            elif content.text and content_calls is not None:
                content_calls.text(assembler, content.text)
            elif content.text:  # as in a stream, where an empty text part sends no delta
                assembler.text(content.text)
        for annotation in _annotations(item.get("content"), f"{where}.content"):
            assembler.citation(annotation)
    elif kind == "reasoning":
        part = _decode_reasoning(item, where, protocol_error)
        assembler.part_break()
        assembler.reasoning(part.text)
        assembler.reasoning_meta(redacted=part.redacted, id=part.id)
    else:
        # A built-in tool's item: kept verbatim in place and sent back, never run here.
        name = req_str(item, "type", where, protocol_error)
        assembler.part_break()
        assembler.provider_part(PROVIDER, dict(item))
        if not is_server_item(name) and not is_client_item(name):
            assembler.notice(
                "unsupported_item",
                f"output item of type {name!r} kept verbatim; toolwire does not run it",
                index,
            )
    return False


def _keep_logprobs(assembler: Assembler, output: list[Any]) -> None:
    """The ``logprobs`` of every output text part, in order, as ``content`` logprobs."""
    for index, item in enumerate(output):
        if not isinstance(item, Mapping) or item.get("type") != "message":
            continue
        content = item.get("content")
        for i, part in enumerate(content if isinstance(content, list) else ()):
            logprobs = part.get("logprobs") if isinstance(part, Mapping) else None
            if logprobs is not None:
                where = f"response.output[{index}].content[{i}].logprobs"
                assembler.logprobs("content", as_list(logprobs, where, protocol_error))


def _annotations(content: Any, where: str) -> list[dict[str, Any]]:
    """The annotations of a message's output text parts, verbatim and in order."""
    if not isinstance(content, list):
        return []
    found: list[dict[str, Any]] = []
    for i, raw in enumerate(content):
        annotations = raw.get("annotations") if isinstance(raw, Mapping) else None
        for annotation in as_list(annotations or [], f"{where}[{i}].annotations", protocol_error):
            found.append(dict(as_object(annotation, f"{where}[{i}].annotations[]", protocol_error)))
    return found
