"""Tool definitions and ``tool_choice``: from the neutral form to each provider's.

A request offers :class:`~toolwire.tooldef.ToolDef` objects (``Tool.definition()``)
and one :data:`~toolwire.tooldef.ToolChoice` (a mode or a tool name). Each provider
maps both, with OpenAI's ``parallel_tool_calls``, in one function
(:func:`openai_chat_tool_fields`, :func:`responses_tool_fields`,
:func:`anthropic_tool_fields`); the functions per part below are what they are made of.

============  =======================================================================
provider      tool definition
============  =======================================================================
Chat          ``{"type": "function", "function": {name, description?, parameters?,
              strict?}}``
Responses     ``{"type": "function", name, description?, parameters, strict}``:
              flattened; ``strict`` is always sent, ``False`` when the tool leaves it
              unset, because Responses otherwise defaults to strict mode
Anthropic     ``{name, description?, input_schema, strict?}``
============  =======================================================================

A free-form (custom) tool is ``{"type": "custom", "custom": {name, description?,
format?}}`` for Chat and ``{"type": "custom", name, description?, format?}`` for
Responses. Anthropic has no free-form tools: mapping one for Anthropic is a
``ToolMappingError``.

A tool without ``parameters`` ("no arguments") is sent to Chat without them;
Responses and Anthropic get the empty object schema ``{"type": "object",
"properties": {}}`` instead, since Anthropic requires ``input_schema``.

``tool_choice``:

============  ==========  ============  ==========  ===================================
provider      auto        required      none        named tool
============  ==========  ============  ==========  ===================================
Chat          ``"auto"``  ``"required"``  ``"none"``  ``{"type": "function",
                                                      "function": {"name"}}``
Responses     ``"auto"``  ``"required"``  ``"none"``  ``{"type": "function", "name"}``
Anthropic     ``auto``    ``any``       ``none``    ``{"type": "tool", "name"}``
============  ==========  ============  ==========  ===================================

A named free-form tool is ``{"type": "custom", "custom": {"name"}}`` (Chat) and
``{"type": "custom", "name"}`` (Responses). Anthropic carries "no parallel calls"
inside ``tool_choice`` (``disable_parallel_tool_use``) where OpenAI has a
``parallel_tool_calls`` parameter, so :func:`to_anthropic_tool_choice` takes that flag
too.

Tool definitions may also be given as OpenAI Chat dicts (the spelling most tool
definitions on disk use): :func:`tool_defs` reads them into ``ToolDef`` objects,
checking each, so every mapping accepts both.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, cast

from ..errors import ToolMappingError
from ..tooldef import OutputFormat, ToolChoice, ToolDef, chosen_tool

__all__ = [
    "EMPTY_PARAMETERS",
    "ChatToolDef",
    "anthropic_tool_fields",
    "chat_tool",
    "custom_tool_names",
    "openai_chat_response_format",
    "openai_chat_tool_fields",
    "responses_text_format",
    "responses_tool_fields",
    "shared_chat_tools",
    "to_anthropic_tool_choice",
    "to_anthropic_tools",
    "to_openai_chat_tool_choice",
    "to_openai_chat_tools",
    "to_responses_tool_choice",
    "to_responses_tools",
    "tool_defs",
]

JSONDict = dict[str, Any]
ChatToolDef = Mapping[str, Any]
"""A tool definition in OpenAI Chat form."""

ToolDefs = Sequence[ToolDef | ChatToolDef]
"""Tool definitions: ``ToolDef`` objects or OpenAI Chat dicts."""

EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
"""The schema sent for a tool that declares no parameters."""

_ANTHROPIC_MODES = {"auto": "auto", "required": "any", "none": "none"}


# -- one function per provider -----------------------------------------------------------


def openai_chat_tool_fields(
    tools: ToolDefs,
    choice: ToolChoice,
    parallel_tool_calls: bool | None,
    *,
    copied: bool = True,
) -> JSONDict:
    """Chat's ``tools``, ``tool_choice`` and ``parallel_tool_calls`` (when set).

    ``copied=False`` shares the definitions' schemas instead of copying them (as
    :func:`chat_tool`): for a body serialised as it is sent and never edited.

    Raises:
        ToolMappingError: A definition or the choice is malformed.
    """
    return _openai_fields(
        partial(to_openai_chat_tools, copied=copied),
        to_openai_chat_tool_choice,
        tools,
        choice,
        parallel_tool_calls,
    )


def responses_tool_fields(
    tools: ToolDefs,
    choice: ToolChoice,
    parallel_tool_calls: bool | None,
    *,
    copied: bool = True,
) -> JSONDict:
    """The Responses API's ``tools``, ``tool_choice`` and ``parallel_tool_calls`` (when set);
    ``copied`` as for :func:`openai_chat_tool_fields`.

    Raises:
        ToolMappingError: A definition or the choice is malformed.
    """
    return _openai_fields(
        partial(to_responses_tools, copied=copied),
        to_responses_tool_choice,
        tools,
        choice,
        parallel_tool_calls,
    )


def _openai_fields(
    map_tools: Callable[[list[ToolDef]], list[JSONDict]],
    map_choice: Callable[[ToolChoice, list[ToolDef]], str | JSONDict],
    tools: ToolDefs,
    choice: ToolChoice,
    parallel_tool_calls: bool | None,
) -> JSONDict:
    """Both OpenAI APIs: the mapped tools and choice (a named free-form tool is chosen as
    ``custom``), and ``parallel_tool_calls`` only when set."""
    defs = tool_defs(tools)
    fields: JSONDict = {"tools": map_tools(defs), "tool_choice": map_choice(choice, defs)}
    if parallel_tool_calls is not None:
        fields["parallel_tool_calls"] = parallel_tool_calls
    return fields


def anthropic_tool_fields(
    tools: ToolDefs,
    choice: ToolChoice,
    parallel_tool_calls: bool | None,
    *,
    copied: bool = True,
) -> JSONDict:
    """Anthropic's ``tools`` and ``tool_choice`` (which carries the parallel flag);
    ``copied`` as for :func:`openai_chat_tool_fields`.

    Raises:
        ToolMappingError: A definition or the choice is malformed, or a tool is free-form.
    """
    return {
        "tools": to_anthropic_tools(tools, copied=copied),
        "tool_choice": to_anthropic_tool_choice(choice, parallel_tool_calls=parallel_tool_calls),
    }


def openai_chat_response_format(output: OutputFormat) -> JSONDict:
    """Chat's ``response_format`` asking for JSON text of ``output``'s schema."""
    schema = {"name": output.name, "schema": copy.deepcopy(output.schema), "strict": output.strict}
    return {"type": "json_schema", "json_schema": schema}


def responses_text_format(output: OutputFormat) -> JSONDict:
    """The Responses API's ``text`` field asking for JSON text of ``output``'s schema
    (the same fields as Chat's, flat in ``text.format``)."""
    return {
        "format": {
            "type": "json_schema",
            "name": output.name,
            "schema": copy.deepcopy(output.schema),
            "strict": output.strict,
        }
    }


# -- tool definitions ----------------------------------------------------------------------


def to_openai_chat_tools(tools: ToolDefs, *, copied: bool = True) -> list[JSONDict]:
    """Chat tool definitions (fresh dicts: a caller's later edits change no sent request;
    ``copied=False`` shares the schemas, as :func:`chat_tool`).

    Raises:
        ToolMappingError: A definition is malformed.
    """
    return [chat_tool(t, copied=copied) for t in tool_defs(tools)]


def chat_tool(tool: ToolDef, *, copied: bool = True) -> JSONDict:
    """One tool in OpenAI Chat form (also the form text-format prompts and the audit log use).

    Args:
        tool: The tool.
        copied: Copy its schemas (``False`` shares them: for a reader that only
            serialises the result, such as a token count).
    """
    clone = copy.deepcopy if copied else _same
    if tool.freeform:
        return {"type": "custom", "custom": _freeform(tool, clone)}
    function: JSONDict = {"name": tool.name}
    if tool.description is not None:
        function["description"] = tool.description
    if tool.parameters is not None:
        function["parameters"] = clone(tool.parameters)
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


_SHARED: dict[int, tuple[ToolDef, JSONDict]] = {}  # id -> (the definition, its Chat form)
_SHARED_MAX = 4096  # definitions kept; then forgotten together (a bound, not an LRU)


def shared_chat_tools(tools: Sequence[ToolDef]) -> list[JSONDict]:
    """Chat forms of ``tools`` for a reader that never edits them (a record of what was
    offered): each definition's form is made once and shared by every list it is in.

    A definition is frozen, and an agent offers the same definition objects request
    after request and run after run, so its form is kept by identity (with the
    definition itself, so that the identity is not reused while kept).
    """
    shared = _SHARED
    found = list(map(shared.get, map(id, tools)))
    if found and None not in found:  # each one kept: checked and listed in C
        defs, forms = zip(*cast("list[tuple[ToolDef, JSONDict]]", found), strict=True)
        if list(defs) == list(tools):  # identity first: a kept id is its definition
            return list(forms)
    out: list[JSONDict] = []
    for tool in tools:
        entry = shared.get(id(tool))
        if entry is None or entry[0] is not tool:
            if len(shared) >= _SHARED_MAX:
                shared.clear()
            entry = shared[id(tool)] = (tool, chat_tool(tool, copied=False))
        out.append(entry[1])
    return out


def to_responses_tools(tools: ToolDefs, *, copied: bool = True) -> list[JSONDict]:
    """Responses API tools: ``{"type": "function", name, description?, parameters, strict}``
    (``copied=False`` shares the schemas, as :func:`chat_tool`).

    Raises:
        ToolMappingError: A definition is malformed.
    """
    clone = copy.deepcopy if copied else _same
    mapped = []
    for tool in tool_defs(tools):
        if tool.freeform:
            mapped.append({"type": "custom", **_freeform(tool, clone)})
            continue
        out: JSONDict = {"type": "function", "name": tool.name}
        if tool.description is not None:
            out["description"] = tool.description
        out["parameters"] = _parameters(tool, clone)
        out["strict"] = bool(tool.strict)
        mapped.append(out)
    return mapped


def to_anthropic_tools(tools: ToolDefs, *, copied: bool = True) -> list[JSONDict]:
    """Anthropic tools: ``{name, description?, input_schema, strict?}`` (``copied=False``
    shares the schemas, as :func:`chat_tool`).

    Raises:
        ToolMappingError: A definition is malformed, or a tool is free-form.
    """
    clone = copy.deepcopy if copied else _same
    mapped = []
    for position, tool in enumerate(tool_defs(tools)):
        if tool.freeform:
            raise ToolMappingError(
                f"tools[{position}] is a custom (free-form input) tool, which Anthropic does "
                "not support",
                hint="offer free-form tools to OpenAI models only, or give the tool JSON "
                "parameters",
            )
        out: JSONDict = {"name": tool.name}
        if tool.description is not None:
            out["description"] = tool.description
        out["input_schema"] = _parameters(tool, clone)
        if tool.strict is not None:
            out["strict"] = tool.strict
        mapped.append(out)
    return mapped


def custom_tool_names(tools: ToolDefs) -> set[str]:
    """The names of the free-form (custom) tools among ``tools``."""
    return {t.name for t in tool_defs(tools) if t.freeform}


def _freeform(tool: ToolDef, clone: Callable[[Any], Any] = copy.deepcopy) -> JSONDict:
    out: JSONDict = {"name": tool.name}
    if tool.description is not None:
        out["description"] = tool.description
    if tool.format is not None:
        out["format"] = clone(tool.format)
    return out


def _same(value: Any) -> Any:
    return value


def _parameters(tool: ToolDef, clone: Callable[[Any], Any] = copy.deepcopy) -> dict[str, Any]:
    schema = tool.parameters if tool.parameters is not None else EMPTY_PARAMETERS
    return cast("dict[str, Any]", clone(schema))


# -- reading OpenAI Chat dicts -----------------------------------------------------------------


def tool_defs(tools: ToolDefs) -> list[ToolDef]:
    """``tools`` as ``ToolDef`` objects; Chat dicts are read and checked.

    Raises:
        ToolMappingError: ``tools`` is not a list, or a definition is malformed.
    """
    # A list (what every request holds) needs neither ABC test.
    if tools.__class__ is not list and (
        isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable)
    ):
        raise ToolMappingError(
            f"tools must be a list of tool definitions, not a {type(tools).__name__}"
        )
    listed = list(tools)
    if all(map(_IS_TOOLDEF, listed)):  # what an agent's request holds: checked in C
        return cast("list[ToolDef]", listed)
    return [t if isinstance(t, ToolDef) else _from_chat(t, i) for i, t in enumerate(listed)]


_IS_TOOLDEF = cast("Callable[[object], bool]", ToolDef.__instancecheck__)


def _from_chat(tool: Any, position: int) -> ToolDef:
    where = f"tools[{position}]"
    kind = tool.get("type") if isinstance(tool, Mapping) else None
    if kind not in ("function", "custom"):
        raise ToolMappingError(
            f'{where} must be a ToolDef or a dict with "type": "function" (or "custom")'
        )
    section = tool.get(kind)
    if not isinstance(section, Mapping):
        raise ToolMappingError(f'{where} has no "{kind}" object')
    name = section.get("name")
    if not isinstance(name, str) or not name:
        raise ToolMappingError(f"{where}.{kind}.name must be a non-empty string, got {name!r}")
    description = _optional(section, "description", str, f"{where}.{kind}")
    if kind == "custom":
        return ToolDef(
            name,
            description,
            freeform=True,
            format=copy.deepcopy(_optional(section, "format", dict, f"{where}.custom")),
        )
    return ToolDef(
        name,
        description,
        copy.deepcopy(_optional(section, "parameters", dict, f"{where}.function")),
        _optional(section, "strict", bool, f"{where}.function"),
    )


def _optional(section: Mapping[str, Any], key: str, kind: type[Any], where: str) -> Any:
    value = section.get(key)
    if value is not None and not isinstance(value, kind):
        raise ToolMappingError(
            f"{where}.{key} must be a {kind.__name__}, got {type(value).__name__}"
        )
    return value


# -- tool_choice ---------------------------------------------------------------------------


def to_openai_chat_tool_choice(choice: ToolChoice, tools: ToolDefs = ()) -> str | JSONDict:
    """Chat's ``tool_choice``: the mode, or the named function (or custom) tool.

    Args:
        choice: A mode or a tool name.
        tools: The tools offered, to tell a free-form tool's name from a function's.

    Raises:
        ToolMappingError: ``choice`` is not a mode or a tool name.
    """
    name = chosen_tool(choice)
    if name is None:
        return choice
    if name in custom_tool_names(tools):
        return {"type": "custom", "custom": {"name": name}}
    return {"type": "function", "function": {"name": name}}


def to_responses_tool_choice(choice: ToolChoice, tools: ToolDefs = ()) -> str | JSONDict:
    """The Responses API's ``tool_choice``: the mode, or ``{"type": "function" | "custom",
    "name"}``.

    Raises:
        ToolMappingError: ``choice`` is not a mode or a tool name.
    """
    name = chosen_tool(choice)
    if name is None:
        return choice
    kind = "custom" if name in custom_tool_names(tools) else "function"
    return {"type": kind, "name": name}


def to_anthropic_tool_choice(
    choice: ToolChoice, *, parallel_tool_calls: bool | None = None
) -> JSONDict:
    """Anthropic's ``tool_choice``, carrying OpenAI's ``parallel_tool_calls``.

    Args:
        choice: A mode or a tool name.
        parallel_tool_calls: ``False`` adds ``disable_parallel_tool_use: true`` (not
            for ``none``, which allows no call at all); ``None`` or ``True`` add nothing.

    Returns:
        ``{"type": "auto" | "any" | "none"}`` or ``{"type": "tool", "name": ...}``.

    Raises:
        ToolMappingError: ``choice`` is not a mode or a tool name.
    """
    name = chosen_tool(choice)
    out: JSONDict = (
        {"type": _ANTHROPIC_MODES[choice]} if name is None else {"type": "tool", "name": name}
    )
    if parallel_tool_calls is False and choice != "none":
        out["disable_parallel_tool_use"] = True
    return out
