"""One of each: the shared argument checks, the error-result prefix, the JSON constant hook."""

from __future__ import annotations

import ast
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolwire
from toolwire.checks import check_int, check_number, reject_json_constant
from toolwire.errors import CallerError, ToolDefinitionError
from toolwire.messages import TOOL_ERROR_PREFIX

PACKAGE = Path(toolwire.__file__).resolve().parent

# -- check_int / check_number --------------------------------------------------------


@given(st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=3), st.none()))
def test_check_int_accepts_exactly_the_ints_at_or_above_the_minimum(value: object) -> None:
    for minimum in (0, 1):
        good = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
        if good:
            assert check_int("n", value, minimum=minimum) == value
        else:
            with pytest.raises(CallerError, match=r"^n must be (an int >= 0|a positive int), got "):
                check_int("n", value, minimum=minimum)


@given(st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=3), st.none()))
def test_check_number_accepts_exactly_the_numbers_in_range(value: object) -> None:
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    for positive in (True, False):
        for finite in (True, False):
            good = (
                is_number
                and (value > 0 if positive else value >= 0)  # type: ignore[operator]
                and not (finite and isinstance(value, float) and math.isinf(value))
            )
            if good:
                assert check_number("t", value, positive=positive, finite=finite) == value
            else:
                with pytest.raises(CallerError, match=r"^t must be a (finite )?number >=? 0, got "):
                    check_number("t", value, positive=positive, finite=finite)


def test_a_huge_int_is_compared_not_converted() -> None:
    assert check_number("t", 10**400, finite=True) == 10**400


def test_the_error_can_be_a_caller_error_subclass_with_its_fields() -> None:
    def error(message: str) -> ToolDefinitionError:
        return ToolDefinitionError(message, function="f")

    with pytest.raises(ToolDefinitionError) as info:
        check_int("retries", -1, error=error)
    assert info.value.function == "f" and "retries must be an int >= 0, got -1" in str(info.value)


# -- every setting that used its own copy of the check -------------------------------


def _tool(**options: Any) -> Callable[[], object]:
    def make() -> object:
        def f() -> str:
            return ""

        return toolwire.tool(**options)(f)

    return make


def _sandbox(tmp: Path, **options: Any) -> Callable[[], object]:
    return lambda: toolwire.Sandbox(tmp, allow_unisolated=True, **options)


def _settings(tmp: Path) -> list[tuple[Callable[[], object], str]]:
    from toolwire.integrations.mcp_toolset import MCPToolset
    from toolwire.integrations.ray_backend import RayBackend
    from toolwire.policies import LoopPolicy
    from toolwire.testing import ScriptedModel

    stdio = ("true", [], None, None)
    return [
        (
            lambda: toolwire.UsageLimits(max_requests=-1),
            "UsageLimits.max_requests must be an int >= 0",
        ),
        (lambda: LoopPolicy(repeat_stop=True), "LoopPolicy.repeat_stop must be an int >= 0"),
        (lambda: toolwire.RetryPolicy(breaker=1.5), "RetryPolicy: breaker must be an int >= 0"),
        (
            lambda: toolwire.RetryPolicy(budgets={"invalid_json": -1}),
            "budget for invalid_json must be an int >= 0",
        ),
        (lambda: toolwire.ExecutionOptions(max_threads=0), "max_threads must be a positive int"),
        (lambda: toolwire.ExecutionOptions(batch_budget=0), "batch_budget must be a number > 0"),
        (
            lambda: toolwire.ExecutionOptions(backoff_base=float("nan")),
            "backoff_base must be a number >= 0",
        ),
        (lambda: toolwire.ContextPolicy(route_top_k=0), "route_top_k must be a positive int"),
        (lambda: ScriptedModel([], chunk_delay=-1), "chunk_delay must be a number >= 0"),
        (
            lambda: toolwire.Agent(ScriptedModel([]), max_rounds=-2),
            "max_rounds must be an int >= 0",
        ),
        (_tool(retries=-1), "retries must be an int >= 0"),
        (_tool(timeout=0), "timeout must be a number > 0"),
        (_tool(max_result_tokens=0), "max_result_tokens must be a positive int"),
        (lambda: MCPToolset(label="x", stdio=stdio, retries=-1), "retries must be an int >= 0"),
        (lambda: MCPToolset(label="x", stdio=stdio, timeout=0), "timeout must be a number > 0"),
        (_sandbox(tmp, cpu_seconds=math.inf), "cpu_seconds must be a finite number > 0"),
        (_sandbox(tmp, processes=2.0), "processes must be a positive int"),
        (lambda: RayBackend(cancel_grace=-1), "RayBackend cancel_grace must be a number >= 0"),
    ]


def test_every_setting_names_itself_in_one_wording(tmp_path: Path) -> None:
    for make, message in _settings(tmp_path):
        with pytest.raises(CallerError) as info:
            make()
        assert message in str(info.value)


def test_tool_router_k() -> None:
    router = toolwire.ToolRouter([])
    with pytest.raises(CallerError, match="k must be a positive int"):
        router.select("query", k=0)


# -- the error-result prefix -----------------------------------------------------------


def test_the_prefix_is_one_constant() -> None:
    from toolwire import history
    from toolwire.history import openai_chat

    assert history.TOOL_ERROR_PREFIX is TOOL_ERROR_PREFIX
    assert openai_chat.TOOL_ERROR_PREFIX is TOOL_ERROR_PREFIX


def _string_pieces(path: Path) -> list[str]:
    """Every string literal, and every literal piece of an f-string, in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def test_no_module_writes_the_prefix_by_hand() -> None:
    written = [
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(piece.startswith(TOOL_ERROR_PREFIX) for piece in _string_pieces(path))
    ]
    assert written == ["messages.py"]


def test_error_results_start_with_the_prefix() -> None:
    from toolwire.tools.error_results import failure_result

    result = failure_result("c1", "lookup", ValueError("no such key"))
    assert result.content.startswith(TOOL_ERROR_PREFIX)


# -- NaN and Infinity are not JSON ------------------------------------------------------


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}'])
def test_reject_json_constant(text: str) -> None:
    from toolwire.history._common import parse_object

    with pytest.raises(ValueError, match="is not valid JSON"):
        json.loads(text, parse_constant=reject_json_constant)
    assert parse_object(text) is None
