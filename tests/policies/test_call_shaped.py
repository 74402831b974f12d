"""Answer text that looks like a tool call is told apart from an answer."""

from __future__ import annotations

import pytest

from toolwire import formats
from toolwire.policies.call_shaped import CALL_MARKERS, MAX_SCAN, call_shape

TOOLS = ("get_weather", "explore_code")


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        (
            '{"name": "get_weather", "arguments": {"city": "Beijing"}}',
            "a JSON tool call to get_weather",
        ),
        ('  {"name": "lookup", "parameters": {}}', "a JSON tool call to lookup"),  # any name
        (
            '[{"name": "get_weather", "arguments": {}}, {"name": "x"}]',
            "a JSON tool call to get_weather",
        ),
        ('Here it is:\n```json\n{"name": "explore_code"}\n```', "a JSON tool call to explore_code"),
        ('Sure.\n{"function": {"name": "f", "arguments": "{}"}}', "a JSON tool call to f"),
        ('{"tool": "get_weather", "city": "Beijing"}', "a JSON tool call to get_weather"),
        ('{"get_weather": {"city": "Beijing"}}', "a JSON tool call to get_weather"),
        ('<tool_call>\n{"name": "get_weather"}\n</tool_call>', "the call marker <tool_call>"),
        ("I will call [TOOL_CALLS]get_weather", "the call marker [TOOL_CALLS]"),
        ('<｜DSML｜invoke name="f">', "the call marker <｜DSML｜invoke"),
    ],
)
def test_call_shaped_text_is_named(text: str, shape: str) -> None:
    assert call_shape(text, TOOLS) == shape


@pytest.mark.parametrize(
    "text",
    [
        "Tomorrow Beijing is cloudy, 1°C to 9°C; Shanghai overcast, 11°C to 17°C.",
        '{"city": "Beijing", "forecast": "cloudy"}',  # JSON data, no call
        '{"name": "Ada Lovelace", "born": 1815}',  # a name, but no tool and no arguments
        'The key "name" with "arguments" is how calls are written.',  # prose about calls
        "{not json at all",
        "",
    ],
)
def test_answers_are_not_call_shaped(text: str) -> None:
    assert call_shape(text, TOOLS) is None


@pytest.mark.parametrize("marker", CALL_MARKERS)
def test_every_marker_is_named_inside_prose(marker: str) -> None:
    # The scan first looks for what a shape can start with (a text with none of it is
    # no call): a marker it missed would pass for an answer.
    text = f"Sure, here goes. {marker} get_weather, done."
    assert call_shape(text, TOOLS) == f"the call marker {marker}"


@pytest.mark.parametrize("bars", ["｜", "|", "‖", "｜｜", "||"])
def test_every_dsml_spelling_is_named_inside_prose(bars: str) -> None:
    text = f"Calling now: <{bars}DSML{bars}function_calls> then more prose"
    assert call_shape(text, TOOLS) == f"the call marker <{bars}DSML{bars}function_calls"


def test_every_format_family_has_its_opening_marker_listed() -> None:
    # A family added to toolwire.formats without its marker here would let its calls,
    # written as text, pass for an answer.
    for family in formats.families():
        for variant in family.variants:
            markers = formats.get(family.name, variant).markers
            found = [m for m in markers if call_shape(f"x {m} y", ()) is not None]
            assert found, f"{family.name}/{variant}: none of {markers} is a listed call marker"


def test_hostile_text_is_scanned_within_its_bounds() -> None:
    deep = "[" * 100_000  # nested past the JSON decoder's recursion limit: no crash
    assert call_shape(deep, TOOLS) is None
    blanks = "```" + " " * 200_000 + "x"
    assert call_shape(blanks, TOOLS) is None
    late = "x" * MAX_SCAN + '{"name": "get_weather", "arguments": {}}'
    assert call_shape(late, TOOLS) is None  # only the head is looked at
    many = "\n{}" * 50 + '\n{"name": "get_weather", "arguments": {}}'
    assert call_shape(many, TOOLS) is None  # at most MAX_TRIES values are decoded
