"""Neutral history -> OpenAI Responses API input items (the encoder).

The history is one job split over three modules: this one encodes;
:mod:`.openai_responses_decode` decodes input items back (``from_responses_input``);
:mod:`.openai_responses_owed` answers what a request owes (approval requests and
client-run calls nobody answered). A response body is decoded in
:mod:`toolwire.wire.openai_responses_body`.

Mapping (``to_responses_input``; ``from_responses_input`` reverses it):

===================  ===========================================================
neutral              Responses input
===================  ===========================================================
SystemMessage        the first message of the history becomes ``instructions``;
                     any later one stays in place as ``{"type": "message", "role":
                     "system", "content"}`` (``developer`` decodes as system too)
UserMessage          ``{"type": "message", "role": "user", "content"}``; with
                     images, ``content`` is a list of ``input_text`` and
                     ``input_image`` parts (below), in order
TextPart             ``{"type": "message", "role": "assistant", "content"}``, one
                     item per part (``output_text`` content parts decode to one
                     TextPart each)
RefusalPart          ``{"type": "message", "id", "role": "assistant", "status":
                     "completed", "content": [{"type": "refusal", "refusal"}]}``
                     (the output message it came in); without an ``id`` (another
                     provider's refusal) a plain assistant message with its text
ReasoningPart        ``{"type": "reasoning", "id", "summary": [{"type":
                     "summary_text", "text"}], "encrypted_content"?}``; a part
                     without an ``id`` is left out: Responses accepts back only
                     reasoning items it produced, which always have one
ToolCall             ``{"type": "function_call", "call_id", "name", "arguments"}``
ToolCall (freeform)  ``{"type": "custom_tool_call", "call_id", "name", "input"}``
ToolResult           ``{"type": "function_call_output", "call_id", "output"}``;
                     ``{"type": "custom_tool_call_output", "call_id", "output"}``
                     when it answers a free-form (custom) call; a result with
                     images has a list as ``output`` (the documented list form):
                     ``{"type": "input_text", "text"}`` and ``{"type":
                     "input_image", "image_url": "data:<type>;base64,...",
                     "detail": "auto"}``, in order
ProviderPart         its ``data``, verbatim (``openai_responses`` parts only; a
                     ``local_shell_call_output`` that names its call ``id``, as
                     openai-python's type does, is sent with ``call_id``)
===================  ===========================================================

The encoder answers every ``mcp_approval_request`` and client-run call that nothing in
the history answers (:mod:`.openai_responses_owed`), so a request never leaves one
hanging.

Instructions go in ``instructions`` rather than a system item because that is where
the API documents them; later system messages keep their place. Consecutive
assistant-side items (messages, reasoning, function calls) decode into one
AssistantMessage, in item order. Like Chat, a tool output has no error flag: the
content is sent unchanged and decodes as ``ToolStatus.ERROR`` when it starts with
:data:`~toolwire.history.openai_chat.TOOL_ERROR_PREFIX`.

An assistant message with no part (after leaving out reasoning without an id) sends
no item at all. So a round trip neutral -> Responses -> neutral is lossless for
histories without two assistant messages in a row or an empty one, whose reasoning parts have an ``id`` and no
``signature``, and whose tool results are ``ok``, or ``error`` with the prefix.
A reasoning item's several summary parts decode joined by a blank line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..messages import (
    AssistantMessage,
    ContentPart,
    Image,
    Message,
    Part,
    ProviderPart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..wire.fields import history_error
from ..wire.openai_responses import PROVIDER
from ..wire.usage import RESPONSES_INCOMPLETE_REASONS
from ..wire.usage import responses_usage as usage_from_responses
from .openai_responses_owed import answer_approvals, answer_client_calls, keyed_by_call_id

__all__ = [
    "RESPONSES_INCOMPLETE_REASONS",
    "to_responses_input",
    "usage_from_responses",
]

JSONDict = dict[str, Any]


def to_responses_input(messages: Sequence[Message]) -> tuple[str | None, list[JSONDict]]:
    """Encode a neutral history as Responses ``instructions`` and ``input`` items.

    Args:
        messages: The neutral history, oldest first.

    Returns:
        ``(instructions, items)``: the first message's text if it is a SystemMessage
        (else ``None``), and the input items for the rest (see the module's table).

    Raises:
        HistoryError: an entry is not a toolwire message.
    """
    instructions: str | None = None
    start = 0
    if messages and isinstance(messages[0], SystemMessage):
        instructions, start = messages[0].content, 1
    items: list[JSONDict] = []
    custom: set[str] = set()  # ids of free-form calls: their results are custom outputs
    for position in range(start, len(messages)):
        message = messages[position]
        if isinstance(message, AssistantMessage):
            custom.update(p.id for p in message.parts if isinstance(p, ToolCall) and p.freeform)
        items.extend(_encode(position, message, custom))
    return instructions, answer_client_calls(answer_approvals(items))


def _encode(position: int, message: Message, custom: set[str]) -> list[JSONDict]:
    if isinstance(message, UserMessage) and message.parts:
        return [_message_item("user", _input_parts(message.parts))]
    if isinstance(message, (SystemMessage, UserMessage)):
        return [_message_item(message.role, message.content)]
    if isinstance(message, AssistantMessage):
        return [item for part in message.parts if (item := _encode_part(part)) is not None]
    if isinstance(message, ToolResult):
        kind = "custom_tool_call_output" if message.call_id in custom else "function_call_output"
        output = _input_parts(message.parts) if message.parts else message.content
        return [{"type": kind, "call_id": message.call_id, "output": output}]
    raise history_error(
        f"a {type(message).__name__} is not a toolwire message", f"position {position}"
    )


def _message_item(role: str, content: str | list[JSONDict]) -> JSONDict:
    return {"type": "message", "role": role, "content": content}


def _input_parts(parts: Sequence[ContentPart]) -> list[JSONDict]:
    """Text and image parts as Responses input content (``input_text``, ``input_image``).

    ``detail`` is sent as its documented default, ``auto``: a message's image requires
    the field (the SDK's ``ResponseInputImageParam``), a call output's allows it.
    """
    return [
        {"type": "input_image", "image_url": part.data_url(), "detail": "auto"}
        if isinstance(part, Image)
        else {"type": "input_text", "text": part.text}
        for part in parts
    ]


def _encode_part(part: Part) -> JSONDict | None:
    if isinstance(part, TextPart):
        return _message_item("assistant", part.text)
    if isinstance(part, RefusalPart):
        return _encode_refusal(part)
    if isinstance(part, ToolCall):
        if part.freeform:
            return {
                "type": "custom_tool_call",
                "call_id": part.id,
                "name": part.name,
                "input": part.arguments,
            }
        return {
            "type": "function_call",
            "call_id": part.id,
            "name": part.name,
            "arguments": part.arguments,
        }
    if isinstance(part, ProviderPart):  # a built-in tool item: back verbatim, to Responses only
        return keyed_by_call_id(dict(part.data)) if part.provider == PROVIDER else None
    return _encode_reasoning(part)


def _encode_refusal(part: RefusalPart) -> JSONDict:
    """A refusal goes back as the output message it came in (which needs its id)."""
    if part.id is None:
        return _message_item("assistant", part.text)
    return {
        "type": "message",
        "id": part.id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": part.text}],
    }


def _encode_reasoning(part: ReasoningPart) -> JSONDict | None:
    if part.id is None:
        return None  # not produced by Responses: it would reject the item
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    item: JSONDict = {"type": "reasoning", "id": part.id, "summary": summary}
    if part.redacted is not None:
        item["encrypted_content"] = part.redacted
    return item
