"""Free-form input tools: the model sends raw text, not a JSON object of arguments.

OpenAI's custom tools (Responses ``{"type": "custom", "name", "description",
"format"}``, Chat ``{"type": "custom", "custom": {...}}``) take one string, written by
the model in the tool's ``format``: ``{"type": "text"}`` (any text) or ``{"type":
"grammar", "syntax": "lark" | "regex", "definition": ...}`` (text the grammar
accepts). The model answers with a custom tool call whose ``input`` is that text
(``ToolRequest.freeform``); toolwire hands it to the tool as it is: no JSON parsing,
no JSON repair.

A regex grammar is checked here too, with Python's ``re`` (``fullmatch``), when the
pattern compiles in Python (OpenAI's regexes are Rust's ``regex`` syntax, mostly the
same); a Lark grammar is left to the provider's constrained sampling.

A custom call to a tool that takes JSON, or a function call to a free-form tool, is
not run: the model gets a ``schema_violation`` result saying how to call the tool.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ..errors import ToolDefinitionError
from .validate import Validation, echo, render_message

__all__ = ["TEXT_FORMAT", "FreeformSpec", "freeform_spec", "kind_mismatch"]

TEXT_FORMAT: dict[str, Any] = {"type": "text"}
"""The format of a free-form tool that accepts any text."""

_SYNTAXES = ("lark", "regex")


class FreeformSpec:
    """A free-form tool's input format, checked once at definition time.

    Attributes:
        format: The provider's ``format`` object (``{"type": "text"}`` or a grammar).
        pattern: The compiled regex of a ``regex`` grammar (``None``: not checked here).
    """

    __slots__ = ("format", "pattern")

    def __init__(self, format: dict[str, Any], pattern: re.Pattern[str] | None) -> None:
        self.format = format
        self.pattern = pattern

    def check(self, tool: str, text: str) -> Validation | None:
        """``None`` when ``text`` fits the format, else the failure the model reads."""
        if self.pattern is None or self.pattern.fullmatch(text) is not None:
            return None
        definition = self.format.get("definition")
        message = render_message(
            tool,
            "the input does not match the tool's grammar.",
            [f"- grammar (regex): {definition}", f"- you sent: {echo(text)}"],
            None,
        )
        return Validation.failure(tool, "schema_violation", message)


def freeform_spec(tool: str, value: bool | dict[str, Any]) -> FreeformSpec | None:
    """The spec for ``@tool(freeform=value)``: ``None`` for ``False``.

    Raises:
        ToolDefinitionError: ``value`` is neither a bool nor a valid format object.
    """
    if value is False:
        return None
    if value is True:
        return FreeformSpec(dict(TEXT_FORMAT), None)
    if not isinstance(value, dict):
        raise ToolDefinitionError(
            f"freeform must be True, False or a format object, got {type(value).__name__}",
            function=tool,
        )
    kind = value.get("type")
    if kind == "text":
        return FreeformSpec(copy.deepcopy(value), None)
    if kind != "grammar":
        raise ToolDefinitionError(
            f'freeform format type must be "text" or "grammar", got {kind!r}', function=tool
        )
    syntax, definition = value.get("syntax"), value.get("definition")
    if syntax not in _SYNTAXES or not isinstance(definition, str) or not definition:
        raise ToolDefinitionError(
            'a grammar format needs "syntax" ("lark" or "regex") and a non-empty '
            '"definition" string',
            function=tool,
        )
    return FreeformSpec(copy.deepcopy(value), _pattern(definition) if syntax == "regex" else None)


def _pattern(definition: str) -> re.Pattern[str] | None:
    """The regex compiled by Python, or ``None`` when Python's ``re`` cannot read it."""
    try:
        return re.compile(definition)
    except re.error:
        return None  # Rust-only syntax: the provider's sampler still enforces it


def kind_mismatch(tool: str, *, called_freeform: bool, schema: dict[str, Any] | None) -> Validation:
    """The result for a call of the wrong kind (custom call vs. function call)."""
    if called_freeform:
        headline = (
            "it takes JSON arguments, but was called as a custom tool with free-form text. "
            "Call it as a function with a JSON object of arguments."
        )
        return Validation.failure(
            tool, "schema_violation", render_message(tool, headline, [], schema)
        )
    headline = (
        "it is a custom tool that takes free-form text input, but was called as a function "
        "with JSON arguments. Call it as a custom tool, with the raw text as its input."
    )
    return Validation.failure(tool, "schema_violation", render_message(tool, headline, [], None))
