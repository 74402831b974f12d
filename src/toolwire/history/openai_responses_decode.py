"""OpenAI Responses API input items -> neutral history (the decoder).

The inverse of :func:`toolwire.history.openai_responses.to_responses_input`, whose
module holds the mapping table. Consecutive assistant-side items (messages, reasoning,
function calls) decode into one AssistantMessage, in item order; a tool output decodes
as ``ToolStatus.ERROR`` when its text starts with ``TOOL_ERROR_PREFIX``. Items are read
by the same functions as a response body's (:mod:`toolwire.wire.openai_responses_body`),
with the caller's error (``HistoryError``) instead of the provider's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..messages import (
    AssistantMessage,
    Message,
    Part,
    ProviderPart,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..wire.fields import as_list, as_object, history_error, req_str, to_plain
from ..wire.openai_responses import CLIENT_ITEMS, PROVIDER, SERVER_ITEMS
from ..wire.openai_responses_body import decode_part, message_parts, texts_of
from .openai_chat import status_from_text
from .openai_responses_owed import keyed_by_call_id

__all__ = ["from_responses_input"]


def from_responses_input(instructions: str | None, items: Sequence[Any]) -> list[Message]:
    """Decode Responses ``instructions`` and ``input`` items into a neutral history.

    Args:
        instructions: The request's ``instructions``, or ``None``.
        items: The input items as dicts (or SDK objects); a response's ``output``
            items decode too.

    Returns:
        The neutral history (see the module's table).

    Raises:
        HistoryError: an item is malformed, of a type toolwire does not model (item
            references, images, an unknown kind), or a function output answers a call
            no earlier item made. Built-in tool items, shell and patch calls and MCP
            approval requests and responses decode as ``ProviderPart``.
    """
    decoder = _InputDecoder()
    if instructions is not None:
        if not isinstance(instructions, str):
            raise history_error("instructions must be a string or None", "instructions")
        decoder.messages.append(SystemMessage(instructions))
    for position, raw in enumerate(as_list(to_plain(items), "input", history_error)):
        where = f"input[{position}]"
        decoder.item(as_object(to_plain(raw), where, history_error), where)
    return decoder.messages


class _InputDecoder:
    """Collects consecutive assistant-side items into one AssistantMessage."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.names: dict[str, str] = {}  # call id -> tool name, to name the outputs
        self.assistant: AssistantMessage | None = None

    def item(self, item: Mapping[str, Any], where: str) -> None:
        kind = item.get("type", "message")
        if kind == "message":
            self._message(item, where)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item, where)
        elif kind in ("reasoning", "function_call", "custom_tool_call"):
            self._part(decode_part(item, where, history_error))
        elif isinstance(kind, str) and kind in _KEPT_INPUT_ITEMS:
            self._part(ProviderPart(PROVIDER, str(kind), keyed_by_call_id(dict(item))))
        else:
            raise history_error(f"input item type {kind!r} is not supported", where)

    def _message(self, item: Mapping[str, Any], where: str) -> None:
        role = item.get("role")
        if role == "assistant":
            for part in message_parts(item, f"{where}.content", history_error):
                self._part(part)
            return
        text = "".join(texts_of(item.get("content"), f"{where}.content", history_error))
        if role in ("system", "developer"):
            self._append(SystemMessage(text))
        elif role == "user":
            self._append(UserMessage(text))
        else:
            raise history_error(
                f"message role {role!r} is not one of system, developer, user, assistant", where
            )

    def _output(self, item: Mapping[str, Any], where: str) -> None:
        call_id = req_str(item, "call_id", where, history_error)
        name = self.names.get(call_id)
        if name is None:
            raise history_error(
                f"function_call_output answers call {call_id!r}, which no earlier item made", where
            )
        content = "".join(texts_of(item.get("output"), f"{where}.output", history_error))
        self._append(ToolResult(call_id, name, content, status_from_text(content)))

    def _part(self, part: Part) -> None:
        if self.assistant is None:
            self.assistant = AssistantMessage()
            self.messages.append(self.assistant)
        self.assistant.parts.append(part)
        if isinstance(part, ToolCall):
            self.names[part.id] = part.name

    def _append(self, message: Message) -> None:
        self.assistant = None
        self.messages.append(message)


# Assistant-side items kept verbatim when a history is decoded: the built-in tools'
# items, shell and patch calls, and the MCP approval request with its answer.
_KEPT_INPUT_ITEMS = (
    SERVER_ITEMS
    | CLIENT_ITEMS
    | {"mcp_approval_response"}
    | {f"{kind}_output" for kind in CLIENT_ITEMS}
)
