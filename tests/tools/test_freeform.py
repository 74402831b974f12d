"""Free-form input tools: ``@tool(freeform=...)``, their definitions and validation."""

from __future__ import annotations

import pytest

from toolwire.errors import CallerError, ToolDefinitionError, ToolMappingError
from toolwire.history.tool_defs import to_anthropic_tools, to_openai_chat_tools, to_responses_tools
from toolwire.tools import Tool, Toolset, tool
from toolwire.turn import ToolRequest

SQL = {"type": "grammar", "syntax": "regex", "definition": "SELECT .+"}


@tool(freeform=True)
def apply_patch(patch: str) -> str:
    """Apply a patch in the V4A diff format."""
    return f"applied {len(patch)} characters"


@tool(freeform=SQL)
def write_sql(query: str) -> str:
    """Run a SQL SELECT query."""
    return query


@tool
def read(path: str) -> str:
    """Read a file."""
    return path


def _request(name: str, text: str, *, freeform: bool) -> ToolRequest:
    request = ToolRequest("c1", name, text, text if freeform else None, None)
    request.freeform = freeform
    return request


def test_the_raw_text_is_the_one_argument_unparsed() -> None:
    text = '{"not": "parsed"'  # broken JSON: no repair, no complaint
    validation = Toolset([apply_patch]).validate(_request("apply_patch", text, freeform=True))
    assert validation.ok and validation.input == {"patch": text}
    assert not validation.repaired
    assert apply_patch.invoke(validation.input) == f"applied {len(text)} characters"


def test_definitions_are_custom_tools() -> None:
    assert apply_patch.freeform and apply_patch.input_format == {"type": "text"}
    assert apply_patch.definition() == {
        "type": "custom",
        "custom": {
            "name": "apply_patch",
            "description": "Apply a patch in the V4A diff format.",
            "format": {"type": "text"},
        },
    }
    # Responses: {"type": "custom", "name", "description", "format"} (API reference).
    assert to_responses_tools([write_sql.definition(), read.definition()])[0] == {
        "type": "custom",
        "name": "write_sql",
        "description": "Run a SQL SELECT query.",
        "format": SQL,
    }
    assert to_openai_chat_tools([write_sql.definition()]) == [write_sql.definition()]
    with pytest.raises(ToolMappingError, match="Anthropic"):
        to_anthropic_tools([read.definition(), write_sql.definition()])


def test_a_regex_grammar_is_checked() -> None:
    toolset = Toolset([write_sql])
    assert toolset.validate(_request("write_sql", "SELECT 1", freeform=True)).ok
    bad = toolset.validate(_request("write_sql", "DROP TABLE users", freeform=True))
    assert not bad.ok and bad.kind == "schema_violation"
    assert "SELECT .+" in bad.message and "DROP TABLE users" in bad.message


def test_a_custom_call_to_a_json_tool_is_told_how_to_call_it() -> None:
    validation = Toolset([read]).validate(_request("read", "a.txt", freeform=True))
    assert not validation.ok and validation.kind == "schema_violation"
    assert "called as a custom tool" in validation.message
    assert '"path"' in validation.message  # the schema it should have used


def test_a_function_call_to_a_free_form_tool_is_told_how_to_call_it() -> None:
    request = ToolRequest("c1", "apply_patch", '{"patch": "x"}', {"patch": "x"}, None)
    validation = Toolset([apply_patch]).validate(request)
    assert not validation.ok and validation.kind == "schema_violation"
    assert "free-form text input" in validation.message


def test_definition_errors() -> None:
    with pytest.raises(ToolDefinitionError, match="exactly one parameter"):

        @tool(freeform=True)
        def two(a: str, b: str) -> str:
            return a + b

    with pytest.raises(ToolDefinitionError, match="grammar"):
        tool(freeform={"type": "grammar", "syntax": "ebnf", "definition": "x"})(read.fn)
    with pytest.raises(ToolDefinitionError, match="format type"):
        tool(freeform={"type": "json"})(read.fn)
    with pytest.raises(ToolDefinitionError, match="freeform must be"):
        tool(freeform="text")(read.fn)  # type: ignore[arg-type]


def test_validate_takes_text_only() -> None:
    with pytest.raises(CallerError, match="takes its input as text"):
        apply_patch.validate(parsed={"patch": "x"})


def test_a_raw_schema_free_form_tool_gets_the_text_itself() -> None:
    pytest.importorskip("jsonschema")
    seen: list[object] = []
    raw = Tool.from_schema(
        "shell", "Run a shell line.", {"type": "object"}, seen.append, freeform=True
    )
    validation = Toolset([raw]).validate(_request("shell", "ls -la", freeform=True))
    assert validation.ok and validation.input == "ls -la"
    raw.invoke(validation.input)
    assert seen == ["ls -la"]


def test_tool_routing_reads_free_form_definitions() -> None:
    from toolwire.context.routing import ToolRouter

    router = ToolRouter([apply_patch.definition(), read.definition()])
    assert router.select("apply a patch", 1) == ["apply_patch"]
