"""Neutral history <-> OpenAI Chat Completions messages, and the non-streaming decoder.

Mapping (``to_openai_chat``; ``from_openai_chat`` reverses it):

===================  ===========================================================
neutral              OpenAI Chat message
===================  ===========================================================
SystemMessage        ``{"role": "system", "content"}`` (``developer`` decodes too)
UserMessage          ``{"role": "user", "content"}``
AssistantMessage     ``{"role": "assistant", "content", "tool_calls"?,
                     "reasoning_content"?}``: ``content`` is all text parts joined
                     (``None`` when empty and there are calls, ``""`` otherwise);
                     ``tool_calls`` is ``[{id, type: "function", function: {name,
                     arguments}}]`` with ``arguments`` the verbatim string, left out
                     when there are no calls (OpenAI rejects an empty list); a
                     free-form call is ``{id, type: "custom", custom: {name,
                     input}}``;
                     reasoning text joined goes in ``reasoning_content``, the field
                     vLLM, DeepSeek and SGLang use (``reasoning`` decodes too), on
                     the messages the dialect's ``reasoning_echo`` says
                     (:mod:`.chat_dialects`: DeepSeek's wants it only in tool-call
                     turns, R1's never);
                     refusal parts joined go in ``refusal`` (the assistant
                     message's own field; a ``refusal`` content part decodes too)
ToolResult           ``{"role": "tool", "tool_call_id", "content"}``
===================  ===========================================================

What Chat cannot carry, and so what a round trip neutral -> Chat -> neutral keeps:
an assistant message comes back as ``[reasoning?, text?, calls...]`` with at most one
reasoning part (without signature, redacted data or id, which Chat has no field for)
and one non-empty text part. A tool result has no error flag in Chat: its content is
sent unchanged and decodes as ``ToolStatus.ERROR`` when it starts with
:data:`TOOL_ERROR_PREFIX` (the executor's convention), else ``ToolStatus.OK``; the
precise non-ok status (timeout, denied...) lives only in the neutral history. A tool
message's tool name is recovered from the call it answers (or its own ``name`` field,
which Mistral's API sends).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ToolwireError
from ..messages import (
    AssistantMessage,
    Message,
    Part,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..turn import Turn
from ..wire.assembler import Assembler
from ..wire.content_calls import ContentCalls
from ..wire.openai_chat import chat_citations, thinking_text
from ..wire.openai_chat import keep_logprobs as _keep_logprobs
from ..wire.usage import openai_usage as usage_from_openai_chat
from ._common import (
    TOOL_ERROR_PREFIX,
    ErrorFactory,
    as_list,
    as_mapping,
    history_error,
    opt_str,
    protocol_error,
    raise_api_error,
    req_str,
    status_from_text,
    to_plain,
)
from .chat_dialects import ChatDialect, chat_dialect, echoed_reasoning

__all__ = [
    "TOOL_ERROR_PREFIX",
    "decode_openai_chat_response",
    "from_openai_chat",
    "to_openai_chat",
    "usage_from_openai_chat",
]

JSONDict = dict[str, Any]


# -- neutral -> Chat -------------------------------------------------------------------


def to_openai_chat(
    messages: Sequence[Message], *, dialect: str | ChatDialect = "openai"
) -> list[JSONDict]:
    """Encode a neutral history as OpenAI Chat Completions ``messages``.

    Args:
        messages: The neutral history, oldest first.
        dialect: The server's dialect, by name or as a
            :class:`~toolwire.history.chat_dialects.ChatDialect`: it says which
            assistant messages send their reasoning back (``openai``: all of them).

    Returns:
        One Chat message per neutral message, in order (see the module's table).

    Raises:
        HistoryError: an entry is not a toolwire message.
        CallerError: ``dialect`` names no known dialect.
    """
    reasoning = echoed_reasoning(messages, chat_dialect(dialect).reasoning_echo)
    return [
        _encode(position, message, reasoning.get(position))
        for position, message in enumerate(messages)
    ]


def _encode(position: int, message: Message, reasoning: str | None) -> JSONDict:
    if isinstance(message, (SystemMessage, UserMessage)):
        return {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        return _encode_assistant(message, reasoning)
    if isinstance(message, ToolResult):
        return {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
    raise history_error(
        f"a {type(message).__name__} is not a toolwire message", f"position {position}"
    )


def _encode_assistant(message: AssistantMessage, reasoning: str | None) -> JSONDict:
    """``reasoning``: what goes in ``reasoning_content`` (``None``: no such field)."""
    calls = message.tool_calls
    text = message.text
    out: JSONDict = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        out["tool_calls"] = [_encode_call(call) for call in calls]
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    refusal = message.refusal
    if refusal:
        out["refusal"] = refusal
    return out


def _encode_call(call: ToolCall) -> JSONDict:
    if call.freeform:  # a custom tool call: its raw input text goes back as sent
        return {
            "id": call.id,
            "type": "custom",
            "custom": {"name": call.name, "input": call.arguments},
        }
    function = {"name": call.name, "arguments": call.arguments}
    return {"id": call.id, "type": "function", "function": function}


# -- Chat -> neutral -------------------------------------------------------------------


def from_openai_chat(messages: Sequence[Any]) -> list[Message]:
    """Decode OpenAI Chat Completions ``messages`` into a neutral history.

    Args:
        messages: Chat messages as dicts (or SDK objects with ``model_dump``).

    Returns:
        The neutral history (see the module's table for what comes back).

    Raises:
        HistoryError: a message is malformed, has a role or content part toolwire's
            text-only model cannot hold (images, legacy ``function`` messages), or a
            tool message answers a call no earlier assistant message made.
    """
    names: dict[str, str] = {}  # call id -> tool name, to name the tool results
    decoded: list[Message] = []
    for position, raw in enumerate(as_list(to_plain(messages), "messages", history_error)):
        where = f"messages[{position}]"
        message = as_mapping(to_plain(raw), where, history_error)
        decoded.append(_decode(message, where, names))
    return decoded


def _decode(message: Mapping[str, Any], where: str, names: dict[str, str]) -> Message:
    role = message.get("role")
    if role in ("system", "developer"):
        return SystemMessage(_text_of(message.get("content"), f"{where}.content", history_error))
    if role == "user":
        return UserMessage(_text_of(message.get("content"), f"{where}.content", history_error))
    if role == "assistant":
        assistant = AssistantMessage(_assistant_parts(message, where, history_error))
        names.update((call.id, call.name) for call in assistant.tool_calls)
        return assistant
    if role == "tool":
        return _decode_tool(message, where, names)
    raise history_error(
        f"role {role!r} is not one of system, developer, user, assistant, tool", where
    )


def _decode_tool(message: Mapping[str, Any], where: str, names: dict[str, str]) -> ToolResult:
    call_id = req_str(message, "tool_call_id", where, history_error)
    name = opt_str(message, "name", where, history_error) or names.get(call_id)
    if name is None:
        raise history_error(
            f"tool message answers call {call_id!r}, which no earlier assistant message made", where
        )
    content = _text_of(message.get("content"), f"{where}.content", history_error)
    return ToolResult(call_id, name, content, status_from_text(content))


def _assistant_parts(message: Mapping[str, Any], where: str, err: ErrorFactory) -> list[Part]:
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
    text = _text_of(content, f"{where}.content", err, allow_none=True)
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
    call = as_mapping(raw, where, err)
    kind = call.get("type")  # null is absent: Mistral's SDK objects dump it as None
    if kind == "custom":  # a free-form input tool's call: the raw input is the argument
        custom = as_mapping(call.get("custom"), f"{where}.custom", err)
        made = ToolCall(
            req_str(call, "id", where, err),
            req_str(custom, "name", f"{where}.custom", err),
            opt_str(custom, "input", f"{where}.custom", err) or "",
        )
        made.freeform = True
        return made
    if kind is not None and kind != "function":
        raise err(f"tool call type {kind!r} is not supported (only 'function', 'custom')", where)
    function = as_mapping(call.get("function"), f"{where}.function", err)
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
    """The ``refusal`` content parts of a Chat ``content`` list, joined (checked by ``_text_of``)."""
    if not isinstance(content, list):
        return ""
    return "".join(
        req_str(part, "refusal", f"{where}[{i}]", err)
        for i, part in enumerate(content)
        if isinstance(part, Mapping) and part.get("type") == "refusal"
    )


def _text_of(content: Any, where: str, err: ErrorFactory, *, allow_none: bool = False) -> str:
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
        part = as_mapping(raw, f"{where}[{i}]", err)
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


# -- non-streaming response -> Turn ----------------------------------------------------


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
        :func:`usage_from_openai_chat`.

    Raises:
        ProviderAPIError: the body is an error object.
        ProtocolError: the body is not a Chat Completions response.
        TurnError: a tool call breaks the assembler's rules.
    """
    body = as_mapping(to_plain(response), "response", protocol_error)
    raise_api_error(body)
    choices = as_list(body.get("choices"), "response.choices", protocol_error)
    if not choices:
        raise protocol_error("the response has no choices", "response.choices")
    choice = as_mapping(choices[0], "response.choices[0]", protocol_error)
    message = as_mapping(choice.get("message"), "response.choices[0].message", protocol_error)
    assembler = Assembler()
    _feed_message(assembler, message, "response.choices[0].message", content_calls)
    chat_citations(assembler, {**body, "annotations": message.get("annotations")})
    if keep_logprobs:
        _keep_logprobs(assembler, choice.get("logprobs"), "response.choices[0].logprobs")
    finish = opt_str(choice, "finish_reason", "response.choices[0]", protocol_error)
    if content_calls is not None:
        finish = content_calls.finish_reason(assembler, finish)
    if finish is not None:
        assembler.finish(finish)
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        assembler.set_usage(usage_from_openai_chat(usage))
    return assembler.close()


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
    """Like ``_assistant_parts`` but lenient about a missing id or name: the assembler
    judges those, so the error is the same ``TurnError`` a stream would raise."""
    lenient = dict(message)
    raw_calls = message.get("tool_calls")
    calls = (
        as_list(raw_calls, f"{where}.tool_calls", protocol_error) if raw_calls is not None else []
    )
    lenient["tool_calls"] = [
        _with_placeholders(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
    ]
    return _assistant_parts(lenient, where, protocol_error)


def _with_placeholders(raw: Any, where: str) -> JSONDict:
    call = dict(as_mapping(raw, where, protocol_error))
    call["id"] = opt_str(call, "id", where, protocol_error) or ""
    if call.get("type") == "custom":
        custom = dict(as_mapping(call.get("custom"), f"{where}.custom", protocol_error))
        custom["name"] = opt_str(custom, "name", f"{where}.custom", protocol_error) or ""
        call["custom"] = custom
        return call
    function = dict(as_mapping(call.get("function"), f"{where}.function", protocol_error))
    function["name"] = opt_str(function, "name", f"{where}.function", protocol_error) or ""
    call["function"] = function
    return call
