"""OpenAI Responses provider: request bodies and turns over loopback HTTP."""

from __future__ import annotations

import pytest

from toolwire.errors import MissingAPIKeyError
from toolwire.providers.openai_responses import OpenAIResponsesModel

from .conftest import demo_request, recorded_stream, run
from .faultserver import FaultServer, sse


def test_missing_key(no_keys: None) -> None:
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        OpenAIResponsesModel("gpt-5-mini")


def test_body_maps_instructions_tools_choice_and_reasoning(no_keys: None) -> None:
    model = OpenAIResponsesModel("gpt-5-mini", api_key="k")
    request = model.build_request(
        demo_request(
            tool_choice="explore_code",
            parallel_tool_calls=True,
            settings={"max_tokens": 300, "reasoning_effort": "low", "store": False},
        )
    )
    body = request.body
    assert request.url == "https://api.openai.com/v1/responses"
    assert body["instructions"] == "Be brief."
    assert body["input"][0]["role"] == "user"
    assert body["tools"][0]["name"] == "explore_code" and body["tools"][0]["strict"] is False
    assert body["tool_choice"] == {"type": "function", "name": "explore_code"}
    assert body["parallel_tool_calls"] is True
    assert body["max_output_tokens"] == 300 and "max_tokens" not in body
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["store"] is False


def test_a_turn_over_http(no_keys: None) -> None:
    with FaultServer(sse(recorded_stream("responses"), chunks=[33])) as server:
        model = OpenAIResponsesModel("gpt-5-mini", base_url=f"{server.url}/v1")
        _, turn = run(model, demo_request())
        assert server.requests[0].path == "/v1/responses"
    assert [request.name for request in turn.requests] == ["explore_code", "explore_code"]
    assert all(request.error is None for request in turn.requests)
    assert turn.usage.input_tokens > 0
