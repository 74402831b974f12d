"""Anthropic Messages provider: request bodies, headers and turns over loopback HTTP."""

from __future__ import annotations

import pytest

from toolwire.errors import CallerError, MissingAPIKeyError
from toolwire.providers.anthropic import ANTHROPIC_VERSION, AnthropicModel

from .conftest import demo_request, recorded_stream, run
from .faultserver import FaultServer, sse


def test_missing_key_names_the_variable(no_keys: None) -> None:
    with pytest.raises(MissingAPIKeyError) as info:
        AnthropicModel("claude-sonnet-4-5")
    assert "ANTHROPIC_API_KEY" in str(info.value)


def test_headers_and_body(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    request = AnthropicModel("claude-sonnet-4-5").build_request(
        demo_request(tool_choice="required", parallel_tool_calls=False)
    )
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant"
    assert request.headers["anthropic-version"] == ANTHROPIC_VERSION
    body = request.body
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 4096
    assert body["tools"][1]["name"] == "get_weather" and "input_schema" in body["tools"][1]
    assert body["tool_choice"] == {"type": "any", "disable_parallel_tool_use": True}


def test_reasoning_effort_enables_thinking_below_max_tokens(no_keys: None) -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    body = model.build_request(
        demo_request(settings={"reasoning_effort": "medium", "max_tokens": 1000})
    ).body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] > 8192


def test_unknown_reasoning_effort_is_a_caller_error(no_keys: None) -> None:
    model = AnthropicModel("claude-sonnet-4-5", api_key="k")
    with pytest.raises(CallerError, match="reasoning_effort"):
        model.build_request(demo_request(settings={"reasoning_effort": "extreme"}))


@pytest.mark.parametrize("suffix", ["", "/v1"])
def test_base_url_with_or_without_v1(no_keys: None, suffix: str) -> None:
    model = AnthropicModel("claude-x", base_url=f"http://proxy:9000{suffix}")
    assert model.build_request(demo_request()).url == "http://proxy:9000/v1/messages"


def test_a_turn_over_http_keeps_thinking_and_calls(no_keys: None) -> None:
    with FaultServer(sse(recorded_stream("anthropic"), chunks=[17])) as server:
        _, turn = run(AnthropicModel("claude-sonnet-4-5", base_url=server.url), demo_request())
        assert server.requests[0].path == "/v1/messages"
    assert turn.reasoning == "The user wants both keywords searched."
    assert turn.message.parts[0].signature  # type: ignore[union-attr]
    assert [c.name for c in turn.tool_calls] == ["explore_code", "explore_code", "list_files"]
    assert turn.finish_reason == "tool_calls"
