"""The request a hosted model sends is the one ``build_request`` describes.

``stream`` builds its body with the tool definitions' schemas shared (it is serialised
as it is sent); ``build_request``, public and pure, hands the caller a body of its own.
Checked over real loopback HTTP for the three hosted APIs.
"""

from __future__ import annotations

import json

import pytest

from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.hosted import HTTPModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel

from .conftest import demo_request, recorded_stream, run
from .faultserver import FaultServer, sse

MODELS = {
    "openai": lambda url: OpenAIChatModel("m", base_url=f"{url}/v1", api_key="k"),
    "responses": lambda url: OpenAIResponsesModel("m", base_url=f"{url}/v1", api_key="k"),
    "anthropic": lambda url: AnthropicModel("m", base_url=url, api_key="k"),
}


def _schemas(body: dict[str, object]) -> list[object]:
    tools = body["tools"]
    assert isinstance(tools, list)
    return [
        t.get("input_schema") or t.get("parameters") or t["function"]["parameters"] for t in tools
    ]


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_the_sent_body_is_build_requests_body(provider: str) -> None:
    request = demo_request(cache_key="run-1")
    with FaultServer(sse(recorded_stream(provider))) as server:
        model: HTTPModel = MODELS[provider](server.url)
        run(model, request)
        sent = server.requests[0].body
    assert sent == json.loads(json.dumps(model.build_request(request).body))
    assert [tool.parameters for tool in request.tools] == _schemas(sent)


@pytest.mark.parametrize("provider", sorted(MODELS))
def test_build_request_copies_the_schemas_and_the_sent_request_shares_them(
    provider: str,
) -> None:
    request = demo_request()
    model: HTTPModel = MODELS[provider]("http://127.0.0.1:9")
    originals = [tool.parameters for tool in request.tools]
    built = _schemas(dict(model.build_request(request).body))
    assert built == originals
    assert not any(a is b for a, b in zip(built, originals, strict=True))
    shared = _schemas(dict(model._sent_request(request).body))
    assert all(a is b for a, b in zip(shared, originals, strict=True))
