"""``formats.for_model`` / ``formats.get`` take ``Tool`` objects as readily as definitions."""

from __future__ import annotations

import json

import pytest

from toolwire import formats
from toolwire.errors import CallerError
from toolwire.tools import Toolset, tool

# Qwen3-Coder carries argument values as text; the tool's schema types them.
OUTPUT = (
    "<tool_call>\n<function=scale>\n<parameter=factor>\n3\n</parameter>\n"
    "<parameter=label>\n7\n</parameter>\n</function>\n</tool_call>"
)


@tool(side_effects=False)
def scale(factor: int, label: str) -> str:
    """Scale something."""
    return label * factor


def _arguments(fmt: formats.Format) -> object:
    return json.loads(fmt.parse(OUTPUT).tool_calls[0].arguments)


@pytest.mark.parametrize(
    "tools",
    [[scale], Toolset([scale]), [scale.definition()], (scale,)],
    ids=["tools", "toolset", "definitions", "tuple"],
)
def test_tools_objects_toolsets_and_definitions_type_the_same(tools: object) -> None:
    fmt = formats.for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct", tools=tools)
    assert _arguments(fmt) == {"factor": 3, "label": "7"}
    assert _arguments(formats.get("qwen3_coder", tools=tools)) == {"factor": 3, "label": "7"}


def test_something_else_is_a_caller_error() -> None:
    with pytest.raises(CallerError, match="item of type int is neither a Tool") as info:
        formats.for_model("Qwen/Qwen3-Coder-30B-A3B-Instruct", tools=[3])
    assert "OpenAI-style tool dicts" in info.value.hint
