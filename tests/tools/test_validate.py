"""Validation results and message helpers."""

from __future__ import annotations

from toolwire.tools.validate import (
    MISSING,
    Problem,
    Validation,
    format_path,
    overall_kind,
    render_message,
    schema_text,
)


def test_success_and_failure_constructors():
    ok = Validation.success("t", {"a": 1})
    assert ok.ok and ok.input == {"a": 1} and ok.kind is None and ok.original is None
    bad = Validation.failure("t", "schema_violation", "msg", repaired=True, original="{")
    assert not bad and bad.kind == "schema_violation" and bad.original == "{"
    assert Validation.failure("t", "invalid_json", "m", original="x").original is None


def test_missing_is_a_singleton_with_a_name():
    assert MISSING is type(MISSING)() and repr(MISSING) == "MISSING"


def test_format_path():
    assert format_path(["items", 2, "name"]) == "items[2].name"
    assert format_path([0]) == "[0]"
    assert format_path([]) == ""


def test_overall_kind_prefers_the_most_specific():
    problems = [
        Problem("schema_violation", "a", "x"),
        Problem("unexpected_parameter", "b", "y"),
        Problem("missing_required", "c", "z"),
    ]
    assert overall_kind(problems) == "missing_required"
    assert overall_kind(problems[:2]) == "unexpected_parameter"
    assert overall_kind([]) == "schema_violation"


def test_render_message_includes_schema_and_instructions():
    text = render_message("t", "bad.", ["- `a`: wrong"], {"type": "object"})
    assert text.splitlines() == [
        "Tool error: the call to `t` was not run: bad.",
        "- `a`: wrong",
        'Expected arguments (JSON Schema): {"type":"object"}',
        "Call `t` again with arguments that match this schema.",
    ]
    assert "JSON Schema" not in render_message("t", "no such tool.", [], None)


def test_long_schemas_are_cut():
    big = {"enum": ["x" * 100] * 100}
    assert schema_text(big).endswith("(schema truncated)")
