"""A llama.cpp grammar (GBNF) that makes tool calls well-formed by construction.

Small models often write broken calls: a name that is no tool, arguments that are not
JSON or miss a required field. Constrained decoding removes that class of failure: at
each step the sampler may only pick tokens that keep the output inside the grammar, so
what comes out is either

* a plain answer (``answer``: text that does not start a tool block), or
* one to ``max_calls`` Hermes blocks ``<tool_call>\\n{"name": N, "arguments": A}\\n</tool_call>``
  where ``N`` is one of the offered tool names and ``A`` matches that tool's JSON Schema.

``tool_choice`` narrows it: ``required`` removes the plain answer, a tool name keeps only
that tool, ``none`` keeps only the plain answer (the tools stay in the prompt, so that it
begins as the run's earlier ones did: the grammar keeps them from being called, or
written out as text). The grammar fixes the *shape*; the model still chooses which tool
and which values, and a 135M model often chooses badly.

Each tool's ``{"name", "arguments"}`` object is converted by llama-cpp-python's own
JSON-Schema-to-GBNF converter (a port of llama.cpp's ``json_schema_to_grammar.py``), so
``enum``, ``const``, ``required``, nested objects, arrays and ``$ref`` are handled the way
llama.cpp handles them; the rules around the blocks are toolwire's.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import CallerError, ToolMappingError
from ..history.tool_defs import ToolDefs, to_openai_chat_tools

__all__ = ["DEFAULT_MAX_CALLS", "LOCAL_INSTALL_HINT", "tool_call_grammar"]

DEFAULT_MAX_CALLS = 4
"""The most calls one turn may hold (parallel calls beyond this are cut off by the grammar)."""

LOCAL_INSTALL_HINT = (
    "in a toolwire checkout: pip install '.[local]' (toolwire[local] is not on the package "
    "index yet; where pip has no wheel it compiles llama-cpp-python), or use a hosted "
    "model: --model openai:gpt-4.1-mini"
)

# The plain-answer branch: text without "<", so it can never open a (broken) tool block.
_ANSWER_RULE = "[^<]+"


def tool_call_grammar(
    tools: ToolDefs,
    tool_choice: str = "auto",
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> str:
    """The GBNF grammar for a turn offering ``tools``.

    Args:
        tools: ``ToolDef`` objects (or OpenAI Chat dicts).
        tool_choice: ``auto``, ``required``, a tool name, or ``none`` (a plain answer
            only: no tool is needed then).
        max_calls: The most calls in one turn (at least 1).

    Returns:
        The grammar text, rooted at ``root``.

    Raises:
        CallerError: No tools (for a choice other than ``none``), an unknown tool
            name, ``max_calls`` < 1, or llama-cpp-python is not installed.
        ToolMappingError: A free-form (custom) tool is offered: the Hermes blocks
            carry JSON arguments only.
    """
    if tool_choice == "none":
        return f"answer ::= {_ANSWER_RULE}\nroot ::= answer\n"
    definitions = to_openai_chat_tools(tools)
    _refuse_custom(definitions)
    names = [definition["function"]["name"] for definition in definitions]
    if not names:
        raise CallerError("a tool-call grammar needs at least one tool")
    if max_calls < 1:
        raise CallerError(f"max_calls must be at least 1, got {max_calls}")
    if tool_choice not in ("auto", "required") and tool_choice not in names:
        raise CallerError(
            f"tool_choice {tool_choice!r} is not auto, required or one of the tools: {', '.join(names)}"
        )
    converter = _converter()
    alternatives = [
        _tool_rule(converter, position, definition["function"])
        for position, definition in enumerate(definitions)
        if tool_choice in ("auto", "required") or definition["function"]["name"] == tool_choice
    ]
    rules = [
        converter.format_grammar(),
        "call-json ::= " + " | ".join(alternatives),
        r'call ::= "<tool_call>\n" call-json "\n</tool_call>"',
        f'calls ::= call ("\\n" call){{0,{max_calls - 1}}}',
        f"answer ::= {_ANSWER_RULE}",
        "root ::= " + ("answer | calls" if tool_choice == "auto" else "calls"),
    ]
    return "\n".join(rules) + "\n"


def _refuse_custom(definitions: Sequence[Mapping[str, Any]]) -> None:
    """A free-form tool takes raw text, which a Hermes block (JSON arguments) cannot
    carry and its grammar (regex or Lark) has no GBNF translation here: refuse it."""
    custom = [
        str((d.get("custom") or {}).get("name") or "?")
        for d in definitions
        if d.get("type") == "custom" or "function" not in d
    ]
    if custom:
        raise ToolMappingError(
            "the local model cannot offer free-form (custom) tools: "
            + ", ".join(repr(name) for name in custom),
            hint="give the local model JSON tools (@tool without freeform= or format=), or "
            "use a hosted model that takes custom tools: --model responses:gpt-5 or openai:gpt-5",
        )


def _converter() -> Any:
    from .local_import import import_llama_cpp  # typed Any: holds with or without the extra

    try:
        module: Any = import_llama_cpp("llama_cpp.llama_grammar")
    except ImportError:
        raise CallerError(
            "grammar-constrained tool calls need llama-cpp-python", hint=LOCAL_INSTALL_HINT
        ) from None
    return module.SchemaConverter(
        prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False
    )


def _tool_rule(converter: Any, position: int, function: Mapping[str, Any]) -> str:
    """The rule of one tool's ``{"name": ..., "arguments": ...}`` object."""
    parameters = copy.deepcopy(function.get("parameters") or {"type": "object", "properties": {}})
    parameters = converter.resolve_refs(parameters, f"tool{position}")
    call_schema = {
        "type": "object",
        "properties": {"name": {"const": function["name"]}, "arguments": parameters},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }
    return str(converter.visit(call_schema, f"tool{position}"))
