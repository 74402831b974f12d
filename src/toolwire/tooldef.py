"""What a request offers the model: neutral tool definitions and one tool choice.

A :class:`ToolDef` says what a tool is called, what it does and what input it takes,
in no provider's shape; :class:`~toolwire.tools.Tool` builds one
(``Tool.definition()``), the agent offers a list of them
(``ModelRequest.tools``), and each provider maps them to its own shape in one
function (``toolwire.history.tool_defs``). A :data:`ToolChoice` is a mode
(``"auto"``, ``"required"``, ``"none"``) or the name of the one tool the model must
call; the providers map it likewise.

This module sits beside ``messages`` at the bottom of the import order: it imports
only ``errors``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .errors import ToolMappingError

__all__ = [
    "MODES",
    "OutputFormat",
    "ToolChoice",
    "ToolDef",
    "ToolMode",
    "check_tool_choice",
    "chosen_tool",
]

ToolMode: TypeAlias = Literal["auto", "required", "none"]
"""May the model call tools: as it likes, at least one, or none."""

ToolChoice: TypeAlias = ToolMode | str
"""A :data:`ToolMode`, or the name of the one tool the model must call."""

MODES: tuple[ToolMode, ...] = ("auto", "required", "none")


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool as a request offers it, in no provider's shape.

    Attributes:
        name: The name the model calls it by.
        description: What it does (``None``: none is sent).
        parameters: The JSON Schema of its arguments (``None``: the tool takes none;
            providers that require a schema get the empty object schema).
        strict: Ask the provider to hold the model to the schema (``None``: the
            provider's default is not overridden where it can be left out).
        freeform: A free-form (custom) tool: it takes the model's raw text, not JSON
            arguments (OpenAI only); ``parameters`` and ``strict`` do not apply.
        format: A free-form tool's input format (``{"type": "text"}`` or a grammar);
            ``None``: any text, and no format is sent.

    Raises:
        ToolMappingError: A field has the wrong type, or a JSON tool has a ``format``.
    """

    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None
    freeform: bool = False
    format: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ToolMappingError(f"a tool's name must be a non-empty string, got {self.name!r}")
        _field(self, "description", str)
        _field(self, "parameters", dict)
        _field(self, "strict", bool)
        _field(self, "format", dict)
        if not isinstance(self.freeform, bool):
            raise ToolMappingError(f"tool {self.name!r}: freeform must be a bool")
        if not self.freeform and self.format is not None:
            raise ToolMappingError(
                f"tool {self.name!r} has an input format but is not free-form",
                hint="pass freeform=True with format=, or parameters= for JSON input",
            )


@dataclass(frozen=True, slots=True)
class OutputFormat:
    """The answer's required shape, for a provider's native structured output.

    A request that carries one asks the model to answer with JSON text matching
    ``schema`` (OpenAI's ``response_format`` JSON schema, Chat and Responses shapes);
    the agent sets it only under ``output_mode="native"`` on a model that says it
    has that mode (``native_output == "response_format"``).

    Attributes:
        name: The schema's name (``[A-Za-z0-9_-]``, as OpenAI requires).
        schema: The JSON Schema of the answer (an object; strict form when ``strict``).
        strict: Ask the provider to hold the model to the schema.
    """

    name: str
    schema: dict[str, Any]
    strict: bool = True


def _field(tool: ToolDef, key: str, kind: type[Any]) -> None:
    value = getattr(tool, key)
    if value is not None and not isinstance(value, kind):
        raise ToolMappingError(
            f"tool {tool.name!r}: {key} must be a {kind.__name__}, got {type(value).__name__}"
        )


def check_tool_choice(choice: object) -> ToolChoice:
    """``choice`` if it is a :data:`ToolChoice` (a mode or a non-empty tool name).

    Raises:
        ToolMappingError: ``choice`` is not a non-empty string.
    """
    if isinstance(choice, str) and choice:
        return choice
    raise ToolMappingError(
        f"tool_choice {choice!r} is not one of {', '.join(MODES)} or a tool name"
    )


def chosen_tool(choice: ToolChoice) -> str | None:
    """The tool that ``choice`` names; ``None`` for a mode.

    Raises:
        ToolMappingError: ``choice`` is not a :data:`ToolChoice`.
    """
    choice = check_tool_choice(choice)
    return None if choice in MODES else choice
