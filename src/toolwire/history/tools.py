"""Renamed :mod:`toolwire.history.tool_defs`; this name keeps existing imports working."""

from __future__ import annotations

from .tool_defs import (
    EMPTY_PARAMETERS,
    ChatToolDef,
    JSONDict,
    ToolChoice,
    ToolMappingError,
    anthropic_tool_fields,
    chat_tool,
    custom_tool_names,
    openai_chat_tool_fields,
    responses_tool_fields,
    to_anthropic_tool_choice,
    to_anthropic_tools,
    to_openai_chat_tool_choice,
    to_openai_chat_tools,
    to_responses_tool_choice,
    to_responses_tools,
    tool_defs,
)

__all__ = [
    "EMPTY_PARAMETERS",
    "ChatToolDef",
    "JSONDict",
    "ToolChoice",
    "ToolMappingError",
    "anthropic_tool_fields",
    "chat_tool",
    "custom_tool_names",
    "openai_chat_tool_fields",
    "responses_tool_fields",
    "to_anthropic_tool_choice",
    "to_anthropic_tools",
    "to_openai_chat_tool_choice",
    "to_openai_chat_tools",
    "to_responses_tool_choice",
    "to_responses_tools",
    "tool_defs",
]
