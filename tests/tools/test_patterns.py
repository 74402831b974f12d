"""Raw-schema patterns run in linear time, with JSON Schema's meaning."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from toolwire.errors import ToolDefinitionError
from toolwire.tools import Tool
from toolwire.tools.patterns import search

pytest.importorskip("jsonschema")


def raw_tool(schema: dict[str, Any]) -> Tool:
    return Tool.from_schema("t", "a raw-schema tool", schema, lambda arguments: "ok")


def text_schema(pattern: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"text": {"type": "string", "pattern": pattern}}}


_CHECK = """
from toolwire.tools import Tool
schema = {"type": "object", "properties": {"text": {"type": "string", "pattern": "^(a+)+$"}}}
tool = Tool.from_schema("t", "", schema, lambda arguments: "ok")
print(tool.validate('{"text": "' + "a" * 36 + '!"}').ok, tool.validate('{"text": "aaaa"}').ok)
"""


def test_a_catastrophic_pattern_is_checked_without_backtracking() -> None:
    """``^(a+)+$`` on 36 a's and a ``!`` takes hours with Python's ``re`` (holding the
    GIL): checked in a child process, which the bound can stop."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=60, check=True
        )
    except subprocess.TimeoutExpired:
        pytest.fail("checking the pattern did not finish: it backtracks")
    assert done.stdout.split() == ["False", "True"]


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("b", "abc", True),  # a search, not a full match
        ("^b", "abc", False),
        ("^a$", "a\n", False),  # ECMA-262: $ is the end, not before a final newline
        ("^[0-9]{3}$", "123", True),
        ("\\p{L}+", "été", True),
    ],
)
def test_json_schema_semantics(pattern: str, text: str, found: bool) -> None:
    assert search(pattern, text) is found


def test_pattern_properties_and_additional_properties() -> None:
    tool = raw_tool(
        {
            "type": "object",
            "patternProperties": {"^x_(a+)+$": {"type": "integer"}},
            "additionalProperties": False,
        }
    )
    assert tool.validate('{"x_aaa": 1}').ok
    assert not tool.validate('{"x_aaa": "one"}').ok
    refused = tool.validate('{"x_' + "a" * 40 + '!": 1}')
    assert not refused.ok and refused.kind == "unexpected_parameter"
    plain = raw_tool({"type": "object", "properties": {"a": {}}, "additionalProperties": False})
    assert not plain.validate('{"b": 1}').ok and plain.validate('{"a": 1}').ok


@pytest.mark.parametrize(
    "schema",
    [
        text_schema("(?=a)b"),  # lookahead
        text_schema("(a)\\1"),  # a backreference
        {"type": "object", "patternProperties": {"^x": {}}, "unevaluatedProperties": False},
    ],
)
def test_what_the_linear_engine_cannot_check_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ToolDefinitionError, match="unsupported JSON Schema"):
        raw_tool(schema)
