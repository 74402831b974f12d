"""The pure mapping of MCP tools: names, annotations → policy, results → text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.errors import MCPToolError
from toolwire.integrations.mcp_tools import policy_of, result_text, sanitize_name

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@given(st.text(min_size=1, max_size=200), st.one_of(st.none(), st.text(min_size=1, max_size=20)))
def test_every_name_becomes_valid_and_stays_the_same(name: str, prefix: str | None) -> None:
    clean = sanitize_name(name, prefix)
    assert VALID.match(clean)
    assert sanitize_name(name, prefix) == clean


@given(
    st.text(alphabet="ab", min_size=65, max_size=90),
    st.text(alphabet="ab", min_size=65, max_size=90),
)
def test_long_names_that_differ_stay_apart(one: str, other: str) -> None:
    if one != other:
        assert sanitize_name(one) != sanitize_name(other)


def test_valid_names_are_kept_and_others_cleaned() -> None:
    assert sanitize_name("read_file") == "read_file"
    assert sanitize_name("files.read/v2") == "files_read_v2"
    assert sanitize_name("search", "web") == "web_search"


@pytest.fixture(scope="module")
def types() -> Any:
    """``mcp.types``, imported by a process that runs these tests, not by every one."""
    return pytest.importorskip("mcp.types")


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, (False, True, False)),
        ({"read_only_hint": True}, (True, False, True)),
        ({"destructive_hint": True}, (False, True, False)),
        ({"destructive_hint": False, "idempotent_hint": True}, (False, True, True)),
    ],
)
def test_annotations_map_to_policy(
    types: Any, annotations: dict[str, bool] | None, expected: tuple[bool, ...]
) -> None:
    tool_annotations = None if annotations is None else types.ToolAnnotations(**annotations)
    policy = policy_of(tool_annotations, trusted=True)
    assert (policy["concurrency_safe"], policy["side_effects"], policy["idempotent"]) == expected
    untrusted = policy_of(tool_annotations, trusted=False)
    assert (untrusted["concurrency_safe"], untrusted["side_effects"], untrusted["idempotent"]) == (
        False,
        True,
        False,
    )


def test_the_callers_policy_goes_over_the_annotations(types: Any) -> None:
    read_only = types.ToolAnnotations(read_only_hint=True)
    over = {"side_effects": True}
    assert policy_of(read_only, trusted=True, override=over)["side_effects"] is True
    assert policy_of(None, trusted=False, override={"idempotent": True})["idempotent"] is True


def test_results_become_text(types: Any) -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="hello"),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            types.ResourceLink(type="resource_link", name="spec", uri="file:///spec.md"),
        ]
    )
    assert result_text(result, server="s", tool="t") == (
        "hello\n[audio (audio/wav, 3 bytes) returned by the tool, not shown]\n"
        "[resource link: spec <file:///spec.md>]"
    )
    structured = types.CallToolResult(content=[], structured_content={"a": 1})
    assert result_text(structured, server="s", tool="t") == '{"a": 1}'


def test_is_error_raises_with_the_tools_text(types: Any) -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="nope")], is_error=True
    )
    with pytest.raises(MCPToolError, match="nope"):
        result_text(result, server="s", tool="t")
    empty = types.CallToolResult(content=[], is_error=True)
    with pytest.raises(MCPToolError, match="'t' of server s reported an error"):
        result_text(empty, server="s", tool="t")
