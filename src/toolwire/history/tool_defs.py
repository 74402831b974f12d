"""Tool definitions and ``tool_choice`` across the three providers.

Tool definitions are written once, in OpenAI Chat form
(``{"type": "function", "function": {name, description?, parameters?, strict?}}``),
and mapped here:

============  =======================================================================
provider      tool definition
============  =======================================================================
Chat          unchanged (validated)
Responses     ``{"type": "function", name, description?, parameters, strict}``:
              flattened; ``strict`` is always sent, ``False`` when the Chat form
              omits it, because Responses otherwise defaults to strict mode
Anthropic     ``{name, description?, input_schema, strict?}``
============  =======================================================================

A free-form (custom) tool is written ``{"type": "custom", "custom": {name,
description?, format?}}`` (Chat's form); Responses gets it flattened, ``{"type":
"custom", name, description?, format?}``. Anthropic has no free-form tools: mapping
one for Anthropic is a ``ToolMappingError``.

A Chat definition may omit ``parameters`` ("no arguments"); Responses and Anthropic
get the empty object schema ``{"type": "object", "properties": {}}`` instead, since
Anthropic requires ``input_schema``.

``tool_choice`` is given in Chat form too — ``"auto"``, ``"required"``, ``"none"``, or a
named tool ``{"type": "function", "function": {"name": ...}}`` (the Responses form
``{"type": "function", "name": ...}`` is accepted as well):

============  ==========  ============  ==========  ===================================
provider      auto        required      none        named tool
============  ==========  ============  ==========  ===================================
Chat          ``"auto"``  ``"required"``  ``"none"``  ``{"type": "function",
                                                      "function": {"name"}}``
Responses     ``"auto"``  ``"required"``  ``"none"``  ``{"type": "function", "name"}``
Anthropic     ``auto``    ``any``       ``none``    ``{"type": "tool", "name"}``
============  ==========  ============  ==========  ===================================

Anthropic carries "no parallel calls" inside ``tool_choice``
(``disable_parallel_tool_use``) where OpenAI has a ``parallel_tool_calls`` parameter,
so :func:`to_anthropic_tool_choice` takes that flag too.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ToolMappingError

__all__ = [
    "EMPTY_PARAMETERS",
    "ChatToolDef",
    "ToolChoice",
    "custom_tool_names",
    "to_anthropic_tool_choice",
    "to_anthropic_tools",
    "to_openai_chat_tool_choice",
    "to_openai_chat_tools",
    "to_responses_tool_choice",
    "to_responses_tools",
]

JSONDict = dict[str, Any]
ChatToolDef = Mapping[str, Any]
"""A tool definition in OpenAI Chat form."""

ToolChoice = Literal["auto", "required", "none"] | Mapping[str, Any]
"""``"auto"``, ``"required"``, ``"none"`` or a named tool in Chat (or Responses) form."""

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
"""The schema sent for a tool that declares no parameters."""

_MODES = ("auto", "required", "none")
_ANTHROPIC_MODES = {"auto": "auto", "required": "any", "none": "none"}


@dataclass(frozen=True, slots=True)
class _Function:
    """The parts of one Chat tool definition the mappings need."""

    name: str
    description: str | None
    parameters: dict[str, Any] | None
    strict: bool | None


# -- tool definitions ------------------------------------------------------------------


def to_openai_chat_tools(tools: Sequence[ChatToolDef]) -> list[JSONDict]:
    """Validate Chat tool definitions and return copies of them.

    Args:
        tools: Tool definitions in Chat form.

    Returns:
        Deep copies (so that a caller's later edits do not change a sent request).

    Raises:
        ToolMappingError: a definition is malformed.
    """
    return [
        _custom(tool, position) or _tool_copy(tool, position)
        for position, tool in enumerate(_sequence(tools))
    ]


def to_responses_tools(tools: Sequence[ChatToolDef]) -> list[JSONDict]:
    """Map Chat tool definitions to Responses API function tools.

    Args:
        tools: Tool definitions in Chat form.

    Returns:
        ``{"type": "function", name, description?, parameters, strict}`` per tool.

    Raises:
        ToolMappingError: a definition is malformed.
    """
    mapped = []
    for position, tool in enumerate(_sequence(tools)):
        custom = _custom(tool, position)
        if custom is not None:  # a free-form tool: the same fields, flattened
            mapped.append({"type": "custom", **custom["custom"]})
            continue
        function = _function(tool, position)
        out: JSONDict = {"type": "function", "name": function.name}
        if function.description is not None:
            out["description"] = function.description
        out["parameters"] = _parameters(function)
        out["strict"] = bool(function.strict)
        mapped.append(out)
    return mapped


def to_anthropic_tools(tools: Sequence[ChatToolDef]) -> list[JSONDict]:
    """Map Chat tool definitions to Anthropic tools.

    Args:
        tools: Tool definitions in Chat form.

    Returns:
        ``{name, description?, input_schema, strict?}`` per tool (``strict`` only when
        the Chat form sets it).

    Raises:
        ToolMappingError: a definition is malformed.
    """
    mapped = []
    for position, tool in enumerate(_sequence(tools)):
        if _custom(tool, position) is not None:
            raise ToolMappingError(
                f"tools[{position}] is a custom (free-form input) tool, which Anthropic does "
                "not support",
                hint="offer free-form tools to OpenAI models only, or give the tool JSON "
                "parameters",
            )
        function = _function(tool, position)
        out: JSONDict = {"name": function.name}
        if function.description is not None:
            out["description"] = function.description
        out["input_schema"] = _parameters(function)
        if function.strict is not None:
            out["strict"] = function.strict
        mapped.append(out)
    return mapped


def _sequence(tools: Any) -> Sequence[Any]:
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
        raise ToolMappingError(
            f"tools must be a list of tool definitions, not a {type(tools).__name__}"
        )
    return tools


def _custom(tool: Any, position: int) -> JSONDict | None:
    """A copy of a custom (free-form) tool definition, checked; ``None`` for other tools."""
    if not isinstance(tool, Mapping) or tool.get("type") != "custom":
        return None
    where = f"tools[{position}]"
    custom, _ = _named_section(tool, "custom", where)
    _optional(custom, "description", str, where)
    _optional(custom, "format", dict, where)
    return copy.deepcopy(dict(tool))


def custom_tool_names(tools: Sequence[ChatToolDef]) -> set[str]:
    """The names of the custom (free-form input) tools among Chat tool definitions."""
    names = set()
    for tool in tools:
        custom = tool.get("custom") if tool.get("type") == "custom" else None
        if isinstance(custom, Mapping) and isinstance(custom.get("name"), str):
            names.add(custom["name"])
    return names


def _named_section(tool: Mapping[str, Any], key: str, where: str) -> tuple[Mapping[str, Any], str]:
    """``tool[key]`` (the ``function`` or ``custom`` object) and its non-empty name, checked."""
    section = tool.get(key)
    if not isinstance(section, Mapping):
        raise ToolMappingError(f'{where} has no "{key}" object')
    name = section.get("name")
    if not isinstance(name, str) or not name:
        raise ToolMappingError(f"{where}.{key}.name must be a non-empty string, got {name!r}")
    return section, name


def _tool_copy(tool: Any, position: int) -> JSONDict:
    _function(tool, position)  # validates
    return copy.deepcopy(dict(tool))


def _function(tool: Any, position: int) -> _Function:
    where = f"tools[{position}]"
    if not isinstance(tool, Mapping) or tool.get("type") != "function":
        raise ToolMappingError(f'{where} must be a dict with "type": "function"')
    function, name = _named_section(tool, "function", where)
    return _Function(
        name,
        _optional(function, "description", str, where),
        _optional(function, "parameters", dict, where),
        _optional(function, "strict", bool, where),
    )


def _optional(function: Mapping[str, Any], key: str, kind: type[Any], where: str) -> Any:
    value = function.get(key)
    if value is not None and not isinstance(value, kind):
        raise ToolMappingError(
            f"{where}.function.{key} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


def _parameters(function: _Function) -> dict[str, Any]:
    source = function.parameters if function.parameters is not None else EMPTY_PARAMETERS
    return copy.deepcopy(source)


# -- tool_choice -----------------------------------------------------------------------


def to_openai_chat_tool_choice(choice: ToolChoice) -> str | JSONDict:
    """Map a tool choice to Chat's ``tool_choice``.

    Args:
        choice: ``"auto"``, ``"required"``, ``"none"`` or a named tool.

    Returns:
        The mode string, or ``{"type": "function", "function": {"name": ...}}``.

    Raises:
        ToolMappingError: ``choice`` is none of these.
    """
    mode, name = _choice(choice)
    return mode if name is None else {"type": "function", "function": {"name": name}}


def to_responses_tool_choice(choice: ToolChoice) -> str | JSONDict:
    """Map a tool choice to the Responses API's ``tool_choice``.

    Args:
        choice: ``"auto"``, ``"required"``, ``"none"`` or a named tool.

    Returns:
        The mode string, or ``{"type": "function", "name": ...}``.

    Raises:
        ToolMappingError: ``choice`` is none of these.
    """
    mode, name = _choice(choice)
    return mode if name is None else {"type": "function", "name": name}


def to_anthropic_tool_choice(
    choice: ToolChoice, *, parallel_tool_calls: bool | None = None
) -> JSONDict:
    """Map a tool choice (and OpenAI's ``parallel_tool_calls``) to Anthropic's ``tool_choice``.

    Args:
        choice: ``"auto"``, ``"required"``, ``"none"`` or a named tool.
        parallel_tool_calls: ``False`` adds ``disable_parallel_tool_use: true`` (not
            for ``none``, which allows no call at all); ``None`` or ``True`` add nothing.

    Returns:
        ``{"type": "auto" | "any" | "none"}`` or ``{"type": "tool", "name": ...}``.

    Raises:
        ToolMappingError: ``choice`` is none of these.
    """
    mode, name = _choice(choice)
    out: JSONDict = (
        {"type": _ANTHROPIC_MODES[mode]} if name is None else {"type": "tool", "name": name}
    )
    if parallel_tool_calls is False and mode != "none":
        out["disable_parallel_tool_use"] = True
    return out


def _choice(choice: Any) -> tuple[str, str | None]:
    """``(mode, None)`` for a mode, ``("required", name)`` for a named tool."""
    if isinstance(choice, str):
        if choice in _MODES:
            return choice, None
        raise ToolMappingError(
            f"tool_choice {choice!r} is not one of {', '.join(_MODES)} or a named tool"
        )
    if isinstance(choice, Mapping) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, Mapping) else choice.get("name")
        if isinstance(name, str) and name:
            return "required", name
    raise ToolMappingError(f"tool_choice {choice!r} is not a mode or a named function tool")
