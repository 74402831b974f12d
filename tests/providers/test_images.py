"""A tool that returns an image, run against each provider over loopback HTTP.

Each run: the model calls ``screenshot``; the tool returns text and a PNG; the next
request must carry the image in the shape that provider documents; the model answers.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from toolwire import Agent, Image
from toolwire.messages import ToolStatus
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.completions import CompletionsModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel

from .faultserver import FaultServer, json_reply

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
DATA_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def screenshot() -> list[Any]:
    """Take a screenshot of the page."""
    return ["The page:", Image(PNG, media_type="image/png")]


_USAGE_CHAT = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
_USAGE_RESPONSES = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
_USAGE_ANTHROPIC = {"input_tokens": 5, "output_tokens": 2}


def _chat_bodies() -> list[dict[str, Any]]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "screenshot", "arguments": "{}"},
    }
    first = {"role": "assistant", "content": None, "tool_calls": [call]}
    return [
        {"id": "c1", "object": "chat.completion", "usage": _USAGE_CHAT,
         "choices": [{"index": 0, "message": first, "finish_reason": "tool_calls"}]},
        {"id": "c2", "object": "chat.completion", "usage": _USAGE_CHAT,
         "choices": [{"index": 0, "message": {"role": "assistant", "content": "A red dot."},
                      "finish_reason": "stop"}]},
    ]  # fmt: skip


def _responses_bodies() -> list[dict[str, Any]]:
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "screenshot",
            "arguments": "{}", "status": "completed"}  # fmt: skip
    text = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "A red dot.", "annotations": []}]}  # fmt: skip
    return [
        {"id": "r1", "object": "response", "status": "completed", "output": [call],
         "usage": _USAGE_RESPONSES},
        {"id": "r2", "object": "response", "status": "completed", "output": [text],
         "usage": _USAGE_RESPONSES},
    ]  # fmt: skip


def _anthropic_bodies() -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": "toolu_1", "name": "screenshot", "input": {}}
    return [
        {"id": "m1", "type": "message", "role": "assistant", "content": [use],
         "stop_reason": "tool_use", "usage": _USAGE_ANTHROPIC},
        {"id": "m2", "type": "message", "role": "assistant",
         "content": [{"type": "text", "text": "A red dot."}], "stop_reason": "end_turn",
         "usage": _USAGE_ANTHROPIC},
    ]  # fmt: skip


def _run(model_class: type, bodies: list[dict[str, Any]], base: str = "") -> tuple[Any, Any]:
    with FaultServer(*(json_reply(b) for b in bodies)) as server:
        model = model_class("m", base_url=server.url + base, api_key="k")
        result = Agent(model, [screenshot]).run_sync("What is on the page?")
        return result, server.requests[1].body


def test_anthropic_gets_an_image_block_inside_the_tool_result() -> None:
    result, sent = _run(AnthropicModel, _anthropic_bodies())
    assert result.output == "A red dot."
    block = sent["messages"][-1]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_1"
    assert block["content"] == [
        {"type": "text", "text": "The page:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(PNG).decode()}},
    ]  # fmt: skip


def test_responses_gets_an_input_image_in_the_call_output() -> None:
    result, sent = _run(OpenAIResponsesModel, _responses_bodies(), "/v1")
    assert result.output == "A red dot."
    item = sent["input"][-1]
    assert item["type"] == "function_call_output" and item["call_id"] == "call_1"
    assert item["output"] == [
        {"type": "input_text", "text": "The page:"},
        {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
    ]


def test_chat_gets_the_tool_message_then_a_user_message_with_the_image() -> None:
    result, sent = _run(OpenAIChatModel, _chat_bodies(), "/v1")
    assert result.output == "A red dot."
    tool, user = sent["messages"][-2:]
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    assert isinstance(tool["content"], str) and tool["content"].startswith("The page:")
    assert user["role"] == "user"
    assert user["content"][1:] == [{"type": "image_url", "image_url": {"url": DATA_URL}}]
    assert "call_1" in user["content"][0]["text"]


def test_a_model_that_takes_no_images_gets_an_error_result_instead() -> None:
    completion = {"id": "x", "object": "text_completion", "usage": _USAGE_CHAT,
                  "choices": [{"index": 0, "finish_reason": "stop",
                               "text": '<tool_call>\n{"name": "screenshot", "arguments": {}}\n</tool_call>'}]}  # fmt: skip
    answer = {"id": "y", "object": "text_completion", "usage": _USAGE_CHAT,
              "choices": [{"index": 0, "finish_reason": "stop", "text": "I cannot see it."}]}  # fmt: skip
    with FaultServer(json_reply(completion), json_reply(answer)) as server:
        model = CompletionsModel("qwen2.5", base_url=server.url + "/v1", api_key="k")
        result = Agent(model, [screenshot]).run_sync("What is on the page?")
        prompt = server.requests[1].body["prompt"]
    (tool_result,) = [m for m in result.messages if getattr(m, "role", "") == "tool"]
    assert tool_result.status is ToolStatus.ERROR
    assert "takes no images" in tool_result.content and "raw-completions" in tool_result.content
    assert "takes no images" in prompt and "iVBOR" not in prompt


@pytest.mark.parametrize(
    ("model_class", "limit"),
    [(AnthropicModel, 5 * 1024 * 1024), (OpenAIChatModel, 50 * 1024 * 1024)],
)
def test_an_image_over_the_provider_limit_is_an_error_result_not_a_request(
    model_class: type, limit: int
) -> None:
    big = PNG + b"\0" * (limit // 4 * 3)  # base64 of this is just over the limit

    def huge() -> Image:
        """A huge image."""
        return Image(big)

    bodies = _anthropic_bodies() if model_class is AnthropicModel else _chat_bodies()
    bodies[0] = _rename(bodies[0], "huge")
    with FaultServer(*(json_reply(b) for b in bodies)) as server:
        model = model_class("m", base_url=server.url + "/v1", api_key="k")
        result = Agent(model, [huge]).run_sync("Show me")
        raw = server.requests[1].raw
    (tool_result,) = [m for m in result.messages if getattr(m, "role", "") == "tool"]
    assert tool_result.status is ToolStatus.ERROR and not tool_result.parts
    assert f"limit of {limit} bytes per image" in tool_result.content
    assert len(raw) < 100_000  # the image was never sent


def _rename(body: dict[str, Any], name: str) -> dict[str, Any]:
    import json

    return json.loads(json.dumps(body).replace('"screenshot"', f'"{name}"'))


def test_a_user_image_for_a_text_only_model_is_a_caller_error() -> None:
    from toolwire import CallerError
    from toolwire.messages import UserMessage
    from toolwire.run.model import ModelRequest

    model = CompletionsModel("qwen2.5", base_url="http://127.0.0.1:9/v1", api_key="k")
    request = ModelRequest([UserMessage.from_parts(["What is this?", Image(PNG)])])
    with pytest.raises(CallerError, match="takes no images"):
        model.build_request(request)
