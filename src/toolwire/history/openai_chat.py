"""Neutral history <-> OpenAI Chat Completions messages.

Mapping (``to_openai_chat``; ``from_openai_chat`` reverses it):

===================  ===========================================================
neutral              OpenAI Chat message
===================  ===========================================================
SystemMessage        ``{"role": "system", "content"}`` (``developer`` decodes too)
UserMessage          ``{"role": "user", "content"}``; with images, ``content``
                     is a list of ``{"type": "text", "text"}`` and ``{"type":
                     "image_url", "image_url": {"url": "data:..."}}`` parts
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
ToolResult (images)  Chat's tool messages carry text only, so a result with images
                     is its tool message (its text, and a line saying the images
                     follow) plus, after the last tool message of that turn (a
                     user message between two tool messages would be refused), ONE
                     user message holding every image of those results, each
                     labelled with its call: ``{"role": "user", "content":
                     [{"type": "text", "text": "Images returned by call ..."},
                     {"type": "image_url", "image_url": {"url": "data:..."}}]}``
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

from ..messages import (
    TOOL_ERROR_PREFIX,
    AssistantMessage,
    ContentPart,
    Image,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)
from ..wire.fields import (
    as_list,
    as_object,
    history_error,
    opt_str,
    req_str,
    to_plain,
)
from ..wire.openai_chat_body import assistant_parts, text_of
from ..wire.usage import openai_usage as usage_from_openai_chat
from .chat_dialects import ChatDialect, chat_dialect, echoed_reasoning

__all__ = [
    "TOOL_ERROR_PREFIX",
    "from_openai_chat",
    "status_from_text",
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
    echo = chat_dialect(dialect).reasoning_echo
    # Under "always" (OpenAI's) an assistant message sends its own reasoning, read where
    # it is encoded; the other echoes depend on its user turn: a pass over the history.
    echoed = None if echo == "always" else echoed_reasoning(messages, echo)
    out: list[JSONDict] = []
    images: list[JSONDict] = []  # image parts of the tool results just encoded
    for position, message in enumerate(messages):
        if type(message) is ToolResult and not message.parts:
            # A text result, most of a long history: _encode's last case, written out.
            out.append(
                {"role": "tool", "tool_call_id": message.call_id, "content": message.content}
            )
            continue
        if images and not isinstance(message, ToolResult):
            out.append({"role": "user", "content": images})
            images = []
        out.append(_encode(position, message, echoed))
        if isinstance(message, ToolResult) and message.parts:
            images.extend(_result_images(message))
    if images:
        out.append({"role": "user", "content": images})
    return out


def _encode(position: int, message: Message, echoed: dict[int, str] | None) -> JSONDict:
    """``echoed``: the reasoning each assistant message sends, by position (``None``:
    its own, if it has any)."""
    if isinstance(message, UserMessage) and message.parts:
        return {"role": "user", "content": _content_parts(message.parts)}
    if isinstance(message, (SystemMessage, UserMessage)):
        return {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        reasoning = (message.reasoning or None) if echoed is None else echoed.get(position)
        return _encode_assistant(message, reasoning)
    if isinstance(message, ToolResult):
        content = message.content
        if message.parts:
            count = len(message.images)
            content += f"\n[{count} image(s) of this result follow in a user message.]"
        return {"role": "tool", "tool_call_id": message.call_id, "content": content}
    raise history_error(
        f"a {type(message).__name__} is not a toolwire message", f"position {position}"
    )


def _content_parts(parts: Sequence[ContentPart]) -> list[JSONDict]:
    """Text and image parts as Chat content parts (``text``, ``image_url``)."""
    return [
        {"type": "image_url", "image_url": {"url": part.data_url()}}
        if isinstance(part, Image)
        else {"type": "text", "text": part.text}
        for part in parts
    ]


def _result_images(result: ToolResult) -> list[JSONDict]:
    """The user-message parts that carry a tool result's images (Chat tool messages
    cannot): a line naming the call, then each image."""
    label = f"Images returned by call {result.call_id} ({result.name}):"
    return [{"type": "text", "text": label}, *_content_parts(result.images)]


def _encode_assistant(message: AssistantMessage, reasoning: str | None) -> JSONDict:
    """``reasoning``: what goes in ``reasoning_content`` (``None``: no such field)."""
    calls = message.tool_calls
    text = message.text
    out: JSONDict = {"role": "assistant", "content": text if text or not calls else None}
    if calls:
        # A function call's two dicts made here, not in a call per call (most of a
        # 100-call turn's encoding was the calls' frames); a free-form call by
        # _encode_custom_call.
        out["tool_calls"] = [
            _encode_custom_call(call)
            if call.freeform
            else {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in calls
        ]
    if reasoning is not None:
        out["reasoning_content"] = reasoning
    refusal = message.refusal
    if refusal:
        out["refusal"] = refusal
    return out


def _encode_custom_call(call: ToolCall) -> JSONDict:
    """A custom (free-form) tool call: its raw input text goes back as sent."""
    return {"id": call.id, "type": "custom", "custom": {"name": call.name, "input": call.arguments}}


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
        message = as_object(to_plain(raw), where, history_error)
        decoded.append(_decode(message, where, names))
    return decoded


def _decode(message: Mapping[str, Any], where: str, names: dict[str, str]) -> Message:
    role = message.get("role")
    if role in ("system", "developer"):
        return SystemMessage(text_of(message.get("content"), f"{where}.content", history_error))
    if role == "user":
        return UserMessage(text_of(message.get("content"), f"{where}.content", history_error))
    if role == "assistant":
        assistant = AssistantMessage(assistant_parts(message, where, history_error))
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
    content = text_of(message.get("content"), f"{where}.content", history_error)
    return ToolResult(call_id, name, content, status_from_text(content))


def status_from_text(content: str) -> ToolStatus:
    """Read a tool result's status back from its text (see :data:`TOOL_ERROR_PREFIX`)."""
    return ToolStatus.ERROR if content.startswith(TOOL_ERROR_PREFIX) else ToolStatus.OK
