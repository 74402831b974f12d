"""``ToolContext`` at definition time: out of the schema, one per tool; the key function."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import ToolContext, tool
from toolwire.errors import ToolDefinitionError
from toolwire.tools import idempotency_key


def test_the_context_parameter_is_not_in_the_schema_and_not_validated() -> None:
    @tool
    def send(to: str, ctx: ToolContext, body: str = "") -> str:
        """Send a mail.

        Args:
            to: The address.
            body: The text.
        """
        return ctx.idempotency_key

    assert send.context_param == "ctx"
    assert set(send.parameters["properties"]) == {"to", "body"}
    assert send.parameters["required"] == ["to"]
    # The model cannot fill it in: an argument of that name is a hallucinated one.
    assert not send.validate('{"to": "a@b.c", "ctx": {}}').ok
    validation = send.validate('{"to": "a@b.c"}')
    assert validation.ok and validation.input == {"to": "a@b.c"}
    context = ToolContext("run", "call_1", "key-1")
    assert send.invoke(validation.input, context) == "key-1"


def test_two_context_parameters_are_a_definition_error() -> None:
    def twice(a: ToolContext, b: ToolContext) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="two parameters are annotated ToolContext"):
        tool(twice)


def test_an_optional_context_is_a_definition_error_that_says_how() -> None:
    def maybe(ctx: ToolContext | None = None) -> str:
        return ""

    with pytest.raises(ToolDefinitionError, match="annotated exactly ToolContext"):
        tool(maybe)


def test_a_strict_schema_leaves_the_context_out_too() -> None:
    @tool(strict=True)
    def read(path: str, ctx: ToolContext) -> str:
        """Read."""
        return path

    assert read.parameters["required"] == ["path"]
    assert set(read.parameters["properties"]) == {"path"}


def test_generators_are_recognised_at_definition_time() -> None:
    @tool
    def sync_steps() -> Iterator[int]:
        """Sync."""
        yield 1

    @tool
    async def async_steps() -> AsyncIterator[int]:
        """Async."""
        yield 1

    class Steps:
        def __call__(self) -> Iterator[int]:
            yield 1

    assert (sync_steps.generator, sync_steps.is_async, sync_steps.plain) == ("sync", False, False)
    assert (async_steps.generator, async_steps.plain) == ("async", False)
    assert tool(Steps(), name="steps").generator == "sync"  # type: ignore[call-overload]


def test_the_context_repr_names_deps_by_type_only() -> None:
    context = ToolContext("run", "call_1", "key", deps={"token": "sk-secret"})
    assert "sk-secret" not in repr(context) and "dict" in repr(context)


def test_progress_without_a_listener_goes_nowhere() -> None:
    ToolContext("run", "call_1", "key").progress("anything")  # no error, no effect


@given(st.text(max_size=40), st.integers(0, 10**6), st.integers(0, 10**4))
def test_the_key_is_a_pure_function_of_run_round_and_position(
    run_id: str, round_: int, position: int
) -> None:
    key = idempotency_key(run_id, round_, position)
    assert key == idempotency_key(run_id, round_, position)
    assert uuid.UUID(key).version == 5 and len(key) == 36


@given(
    st.tuples(st.text(max_size=12), st.integers(0, 50), st.integers(0, 50)),
    st.tuples(st.text(max_size=12), st.integers(0, 50), st.integers(0, 50)),
)
def test_different_calls_get_different_keys(
    one: tuple[str, int, int], other: tuple[str, int, int]
) -> None:
    if one != other:
        assert idempotency_key(*one) != idempotency_key(*other)
