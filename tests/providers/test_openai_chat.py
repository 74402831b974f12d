"""OpenAI Chat Completions provider: request bodies, keys, and turns over loopback HTTP."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.errors import HistoryError, MissingAPIKeyError
from toolwire.messages import AssistantMessage, ToolCall, UserMessage
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.run.model import ModelRequest
from toolwire.wire.events import ToolCallDelta

from .conftest import demo_request, recorded_stream, run
from .faultserver import FaultServer, sse

STREAM = recorded_stream("openai")


def test_missing_key_for_openai_is_a_one_line_error(no_keys: None) -> None:
    with pytest.raises(MissingAPIKeyError) as info:
        OpenAIChatModel("gpt-4.1-mini")
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "\n" not in message
    assert info.value.fault == "caller"


def test_key_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    request = OpenAIChatModel("gpt-4.1-mini").build_request(demo_request())
    assert request.headers["authorization"] == "Bearer sk-env"
    assert request.url == "https://api.openai.com/v1/chat/completions"


def test_a_self_hosted_server_needs_no_key(no_keys: None) -> None:
    model = OpenAIChatModel("Qwen/Qwen3-8B", base_url="http://localhost:8000/v1/")
    request = model.build_request(demo_request())
    assert "authorization" not in request.headers
    assert request.url == "http://localhost:8000/v1/chat/completions"
    assert model.name == "openai:Qwen/Qwen3-8B"


def test_body_carries_tools_choice_parallel_and_usage(no_keys: None) -> None:
    model = OpenAIChatModel("m", base_url="http://h/v1", settings={"temperature": 0})
    body = model.build_request(
        demo_request(
            tool_choice="get_weather", parallel_tool_calls=False, settings={"max_tokens": 50}
        )
    ).body
    assert body["model"] == "m" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in body["tools"]] == ["explore_code", "get_weather"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    assert body["parallel_tool_calls"] is False
    assert body["max_tokens"] == 50 and body["temperature"] == 0
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}


def test_reasoning_effort_passes_through_and_none_drops_a_default(no_keys: None) -> None:
    model = OpenAIChatModel("o4-mini", base_url="http://h/v1")
    body = model.build_request(
        demo_request(settings={"reasoning_effort": "low", "stream_options": None})
    ).body
    assert body["reasoning_effort"] == "low"
    assert "stream_options" not in body


def test_no_tools_sends_no_tool_fields(no_keys: None) -> None:
    body = (
        OpenAIChatModel("m", base_url="http://h/v1")
        .build_request(ModelRequest([UserMessage("hi")]))
        .body
    )
    assert "tools" not in body and "tool_choice" not in body and "parallel_tool_calls" not in body


def test_a_broken_history_fails_before_any_request(no_keys: None) -> None:
    dangling = [
        UserMessage("hi"),
        AssistantMessage([ToolCall("c1", "get_weather", "{}")]),
        UserMessage("and?"),
    ]
    with FaultServer(sse(STREAM)) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1")
        with pytest.raises(HistoryError):
            run(model, ModelRequest(dangling))
        assert server.requests == []


def test_a_turn_over_http_matches_the_recorded_calls(no_keys: None) -> None:
    with FaultServer(sse(STREAM, chunks=[1, 13, 64])) as server:
        _, turn = run(OpenAIChatModel("gpt-4.1-mini", base_url=f"{server.url}/v1"), demo_request())
        assert server.requests[0].path == "/v1/chat/completions"
        assert server.requests[0].body["tools"][0]["function"]["name"] == "explore_code"
    assert turn.text == "Let me search both keywords."
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [
        ("call_a", '{"query":"login"}'),
        ("call_b", '{"query":"session","path":"auth"}'),
    ]
    assert turn.finish_reason == "tool_calls"


def test_a_request_without_deltas_streams_no_tool_call_delta(no_keys: None) -> None:
    # The agent asks for none when nothing listens (ModelRequest.deltas=False).
    with FaultServer(sse(STREAM)) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k")
        events, expected = run(model, demo_request())
    with FaultServer(sse(STREAM)) as server:
        model = OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k")
        quiet, turn = run(model, demo_request(deltas=False))
    assert any(isinstance(e, ToolCallDelta) for e in events)
    assert quiet == [e for e in events if not isinstance(e, ToolCallDelta)]
    assert turn == expected


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=6))
def test_any_server_chunking_gives_the_same_turn(chunks: list[int]) -> None:
    with FaultServer(sse(STREAM)) as server:
        _, expected = run(
            OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k"), demo_request()
        )
    with FaultServer(sse(STREAM, chunks=chunks)) as server:
        _, turn = run(
            OpenAIChatModel("m", base_url=f"{server.url}/v1", api_key="k"), demo_request()
        )
    assert turn == expected
