"""The tool decorator, Tool, Toolset and the validation pipeline."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from toolwire.errors import CallerError, SchemaExtraMissingError, ToolDefinitionError
from toolwire.tools import Tool, Toolset, tool
from toolwire.turn import ToolRequest


class Place(BaseModel):
    city: str
    country: str = "FR"


@tool(side_effects=False, concurrency_safe=True, timeout=5, retries=2, idempotent=True)
def get_weather(place: Place, unit: Literal["c", "f"] = "c", days: int = 1) -> str:
    """Get the forecast.

    Args:
        place: Where.
        unit: Temperature unit.
    """
    return f"{place.city}:{unit}:{days}"


@tool
def write_file(path: str, content: str) -> int:
    """Write a file."""
    return len(content)


def test_bare_decorator_keeps_function_behaviour():
    assert isinstance(write_file, Tool)
    assert write_file("a.txt", "abc") == 3
    assert write_file.name == "write_file"
    assert write_file.description == "Write a file."
    assert write_file.side_effects is True and write_file.concurrency_safe is False
    assert write_file.timeout is None and write_file.retries == 0 and not write_file.is_async


def test_options_are_carried():
    assert get_weather.timeout == 5 and get_weather.retries == 2
    assert get_weather.idempotent and not get_weather.side_effects
    assert get_weather.is_concurrency_safe({})


def test_definition_shape():
    definition = get_weather.definition()
    assert definition["type"] == "function"
    function = definition["function"]
    assert function["name"] == "get_weather"
    assert function["description"] == "Get the forecast."
    assert function["parameters"]["properties"]["unit"]["description"] == "Temperature unit."
    assert "strict" not in function
    json.dumps(definition)  # serialisable as is


def test_name_and_description_override():
    @tool(name="lookup", description="Look it up.")
    def f(q: str) -> str:
        """Ignored."""
        return q

    assert f.name == "lookup" and f.description == "Look it up."


def test_async_tool():
    @tool
    async def fetch(url: str) -> str:
        """Fetch."""
        return url.upper()

    assert fetch.is_async
    result = fetch.validate('{"url": "x"}')
    assert asyncio.run(fetch.invoke(result.input)) == "X"


def test_async_callable_object():
    class Caller:
        async def __call__(self, x: int) -> int:
            return x

    t = Tool.from_function(Caller(), name="caller")
    assert t.is_async


def test_concurrency_policy_as_function_of_input():
    @tool(concurrency_safe=lambda args: args["mode"] == "read")
    def files(path: str, mode: Literal["read", "write"]) -> None:
        """Files."""

    read = files.validate('{"path": "a", "mode": "read"}')
    write = files.validate('{"path": "a", "mode": "write"}')
    assert files.is_concurrency_safe(read.input) is True
    assert files.is_concurrency_safe(write.input) is False


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": "5"}, "timeout"),
        ({"retries": -1}, "retries"),
        ({"concurrency_safe": "yes"}, "concurrency_safe"),
        ({"name": "has space"}, "not valid"),
    ],
)
def test_bad_options_fail_at_definition(options: dict[str, Any], match: str):
    with pytest.raises(ToolDefinitionError, match=match):

        @tool(**options)
        def f(x: int) -> None:
            """F."""


def test_lambda_needs_a_name():
    with pytest.raises(ToolDefinitionError, match="name="):
        tool(lambda x: x)


# --- validation -------------------------------------------------------------------------


def test_valid_call_is_coerced_into_kwargs():
    result = get_weather.validate('{"place": {"city": "Paris"}, "days": "3"}')
    assert result.ok and bool(result)
    assert result.input == {"place": Place(city="Paris"), "days": 3}
    assert not result.repaired and result.original is None
    assert get_weather.invoke(result.input) == "Paris:c:3"


def test_defaults_not_sent_are_left_to_the_function():
    @tool
    def f(items: list[int] = []) -> list[int]:
        """F."""
        items.append(1)
        return items

    result = f.validate("{}")
    assert result.input == {}
    assert f.invoke(result.input) == [1]


def test_schema_violation_message_names_path_expected_and_got():
    result = get_weather.validate('{"place": {"city": 7}, "unit": "kelvin"}')
    assert not result.ok and result.kind == "schema_violation"
    assert "`place.city`" in result.message
    assert "`unit`" in result.message and '"kelvin"' in result.message
    assert "'c' or 'f'" in result.message
    assert "Expected arguments (JSON Schema):" in result.message
    assert {p.path for p in result.problems} == {"place.city", "unit"}


def test_missing_required():
    result = write_file.validate('{"path": "a"}')
    assert result.kind == "missing_required"
    assert "content" in result.message


def test_unexpected_parameter():
    result = write_file.validate('{"path": "a", "content": "b", "mode": "w"}')
    assert result.kind == "unexpected_parameter"
    assert "`mode`" in result.message


@pytest.mark.parametrize("raw", [None, "", "   ", "{}"])
def test_empty_call(raw: str | None):
    result = write_file.validate(raw)
    assert result.kind == "empty_call"
    assert "path, content" in result.message


def test_empty_call_is_fine_without_required_parameters():
    @tool
    def now() -> str:
        """Now."""
        return "now"

    assert now.validate("").ok and now.validate(None).input == {}


def test_arguments_must_be_an_object():
    result = write_file.validate("[1, 2]")
    assert result.kind == "schema_violation"
    assert "JSON object" in result.message


def test_invalid_json_that_cannot_be_recovered():
    result = write_file.validate("I will write the file now.")
    assert result.kind == "invalid_json"
    assert "I will write the file now." in result.message
    assert not result.repaired


def test_repaired_call_runs_for_tools_without_side_effects():
    raw = "{'place': {'city': 'Oslo'}, 'unit': 'f',}"
    result = get_weather.validate(raw)
    assert result.ok and result.repaired and result.original == raw
    assert result.input["unit"] == "f"


def test_repaired_call_goes_back_for_tools_with_side_effects():
    raw = "{'path': 'a.txt', 'content': 'x'}"
    result = write_file.validate(raw)
    assert not result.ok and result.kind == "invalid_json"
    assert result.repaired and result.original == raw
    assert "side effects" in result.message
    assert write_file.validate(raw, repair_policy="always").ok
    assert not get_weather.validate("{'place': {'city': 'x'}}", repair_policy="never").ok


def test_double_encoded_arguments_are_repaired():
    raw = json.dumps(json.dumps({"place": {"city": "Rome"}}))
    result = get_weather.validate(raw)
    assert result.ok and result.repaired


def test_parsed_input_skips_parsing():
    result = write_file.validate("ignored", parsed={"path": "a", "content": "b"})
    assert result.ok and result.input == {"path": "a", "content": "b"}


def test_validation_never_executes():
    calls = []

    @tool
    def spy(x: int) -> None:
        """Spy."""
        calls.append(x)

    spy.validate('{"x": 1}')
    spy.validate('{"x": "bad"}')
    assert calls == []


# --- raw schema tools ----------------------------------------------------------------------

SEND = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "format": "email"},
        "body": {"type": "string"},
        "cc": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["to", "body"],
    "additionalProperties": False,
}


def test_raw_schema_tool_validates_and_invokes_with_a_dict():
    send = Tool.from_schema("send", "Send mail.", SEND, sorted)
    result = send.validate('{"to": "a@b.co", "body": "hi"}')
    assert result.ok and result.input == {"to": "a@b.co", "body": "hi"}
    assert send.invoke(result.input) == ["body", "to"]
    assert send.definition()["function"]["parameters"] is SEND


def test_raw_schema_failures_are_classified():
    send = Tool.from_schema("send", "Send mail.", SEND, lambda args: None)
    assert send.validate('{"to": "a@b.co"}').kind == "missing_required"
    extra = send.validate('{"to": "a@b.co", "body": "x", "bcc": 1}')
    assert extra.kind == "unexpected_parameter" and "`bcc`" in extra.message
    bad = send.validate('{"to": "not-an-email", "body": "x", "cc": [1]}')
    assert bad.kind == "schema_violation"
    assert {p.path for p in bad.problems} == {"to", "cc[0]"}
    assert send.validate("{}").kind == "empty_call"


def test_invalid_raw_schema_fails_at_definition():
    with pytest.raises(ToolDefinitionError, match="invalid JSON Schema"):
        Tool.from_schema("x", "X.", {"type": "nonsense"}, lambda a: None)


def test_missing_jsonschema_extra(monkeypatch: pytest.MonkeyPatch):
    import importlib

    real = importlib.import_module

    def fake(name: str, *args: Any) -> Any:
        if name == "jsonschema":
            raise ImportError("no jsonschema")
        return real(name, *args)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(SchemaExtraMissingError) as info:
        Tool.from_schema("x", "X.", SEND, lambda a: None)
    assert "pip install '.[schema]'" in info.value.hint
    assert isinstance(info.value, CallerError)


# --- toolset ------------------------------------------------------------------------------


def test_toolset_registry():
    def plain(x: int) -> int:
        """Plain."""
        return x

    tools = Toolset([get_weather, write_file, plain])
    assert len(tools) == 3 and tools.names == ["get_weather", "write_file", "plain"]
    assert tools.get("plain") is not None and tools.get("nope") is None
    assert "write_file" in tools and [t.name for t in tools] == tools.names
    assert [d["function"]["name"] for d in tools.definitions()] == tools.names
    assert tools["plain"].name == "plain"
    with pytest.raises(CallerError):
        tools["nope"]


def test_toolset_rejects_duplicates_and_junk():
    with pytest.raises(CallerError, match="two tools"):
        Toolset([write_file, write_file])
    with pytest.raises(CallerError):
        Toolset([42])  # type: ignore[list-item]
    with pytest.raises(CallerError, match="repair_policy"):
        Toolset([], repair_policy="sometimes")  # type: ignore[arg-type]


def test_unknown_tool_lists_closest_names():
    tools = Toolset([get_weather, write_file])
    result = tools.validate(ToolRequest("c1", "get_wether", "{}", {}))
    assert result.kind == "unknown_tool" and result.tool == "get_wether"
    assert "did you mean: `get_weather`" in result.message
    assert "`write_file`" in result.message
    far = tools.validate(ToolRequest("c2", "zzz", "{}", {}))
    assert "did you mean" not in far.message and "available tools" in far.message


def test_toolset_uses_parsed_input_or_repairs():
    tools = Toolset([get_weather, write_file])
    parsed = tools.validate(
        ToolRequest("c1", "write_file", '{"path":"a","content":"b"}', {"path": "a", "content": "b"})
    )
    assert parsed.ok and not parsed.repaired
    broken = ToolRequest("c2", "get_weather", "{'place': {'city': 'Oslo'}", None, error="bad")
    assert tools.validate(broken).repaired
    strict = Toolset([write_file], repair_policy="never")
    assert not strict.validate(ToolRequest("c3", "write_file", "{'path': 'a'}", None, "bad")).ok
    empty = tools.validate(ToolRequest("c4", "write_file", "", None))
    assert empty.kind == "empty_call"
