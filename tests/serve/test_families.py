"""Recorded raw outputs of every family, through the proxy, as the official openai SDK sees them.

The loopback upstream plays each fixture (tests/formats/fixtures, sources in their
headers) as ``content``, the way vLLM without a tool parser, llama.cpp or Ollama whose
parser failed would; the client is the ``openai`` SDK, streaming and not. What it gets
must be what toolwire's parser makes of the text: the same calls (names, arguments that
parse as JSON objects), the same answer text and reasoning, ids unique in the response
and a sequential index, ``finish_reason`` ``tool_calls`` exactly when there are calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.formats.conftest import load_fixture
from toolwire import formats
from toolwire.errors import RepairError
from toolwire.tools.repair import loads_lenient

from .proxy import chat, running_proxy
from .recorded import RecordedUpstream, Reply

# (family, fixture, the served model's name: the family and variant come from it)
CASES = [
    ("hermes", "vllm_back_to_back.txt", "Qwen/Qwen2.5-7B-Instruct"),
    ("hermes", "vllm_content_then_call.txt", "Qwen/Qwen2.5-7B-Instruct"),
    ("hermes", "qwen3_rendered_reasoning_two_calls.txt", "Qwen/Qwen3-8B"),
    ("hermes", "vllm_truncated_object.txt", "Qwen/Qwen2.5-7B-Instruct"),
    ("qwen3_coder", "vllm_parallel.txt", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
    ("qwen3_coder", "vllm_typed_params.txt", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
    ("llama", "json_text_around.txt", "meta-llama/Llama-3.1-8B-Instruct"),
    ("llama", "pythonic_parallel_no_spaces.txt", "meta-llama/Llama-4-Scout-17B-16E-Instruct"),
    ("mistral", "v11_rendered_call_id.txt", "mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
    ("mistral", "v3_generated_multiple.txt", "mistralai/Mistral-7B-Instruct-v0.3"),
    ("deepseek", "v31_rendered.txt", "deepseek-ai/DeepSeek-V3.1"),
    ("deepseek", "r1_prefilled_thinking.txt", "deepseek-ai/DeepSeek-R1"),
    ("deepseek", "v4_vllm.txt", "deepseek-ai/DeepSeek-V4"),
    ("glm", "glm45_vllm_newlines.txt", "zai-org/GLM-4.5"),
    ("glm", "glm47_sglang_two_calls.txt", "zai-org/GLM-4.7"),
    ("kimi", "k2_vllm_multiline.txt", "moonshotai/Kimi-K2-Instruct"),
    ("harmony", "several_calls.txt", "openai/gpt-oss-20b"),
    ("gemma", "gemma4_multiple_calls.txt", "google/gemma-4-27b-it"),
    ("gemma", "functiongemma_two_calls.txt", "google/functiongemma-270m-it"),
]


def expected(text: str, model: str) -> Any:
    """What toolwire's parser makes of ``text`` (the reference the client must match)."""
    return formats.for_model(model).parse(text)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[RecordedUpstream, openai.OpenAI, dict[str, str]]]:
    """One upstream and one proxy for the module; each request names its fixture."""
    texts: dict[str, str] = {}

    def script(body: dict[str, Any]) -> Reply:
        return Reply(text=texts[body["metadata"]["fixture"]], pieces=2)

    with RecordedUpstream(script) as upstream, running_proxy(upstream.url) as url:
        yield upstream, openai.OpenAI(base_url=url, api_key="none", max_retries=0), texts


TOOLS = [{"type": "function", "function": {"name": "any_tool", "parameters": {"type": "object"}}}]


def ask(client: openai.OpenAI, model: str, fixture: str, **options: Any) -> Any:
    return chat(client, model, tools=TOOLS, metadata={"fixture": fixture}, **options).parse()


def sendable(want: Any) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The calls a client may get (arguments that are, or repair to, a JSON object), and
    the text of the others, which stays content (``call_not_sent``)."""
    calls, text = [], ""
    for call in want.tool_calls:
        try:
            value, _ = loads_lenient(call.arguments or "{}")
        except RepairError:
            value = None
        if isinstance(value, dict):
            calls.append((call.name, value))
        else:
            text += f"{call.name}({call.arguments})"
    return calls, text


def check_calls(calls: list[tuple[str, str, str]], want: Any) -> None:
    """``calls``: (id, name, arguments) as the client got them."""
    got = [(name, json.loads(arguments)) for _, name, arguments in calls]
    assert got == sendable(want)[0]
    ids = [call_id for call_id, _, _ in calls]
    assert len(set(ids)) == len(ids) and all(ids)


def played(served: Any, family: str, fixture: str, model: str) -> tuple[openai.OpenAI, str, Any]:
    """The client, the request's fixture key (the upstream plays that text), the parse."""
    _, client, texts = served
    key = f"{family}/{fixture}"
    texts[key] = load_fixture(family, fixture)
    return client, key, expected(texts[key], model)


@pytest.mark.parametrize(("family", "fixture", "model"), CASES)
def test_a_whole_response_holds_the_parsers_calls(
    served: Any, family: str, fixture: str, model: str
) -> None:
    client, key, want = played(served, family, fixture, model)
    response = ask(client, model, key)
    message = response.choices[0].message
    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []]
    check_calls(calls, want)
    assert (message.content or "").strip() == ((want.content or "") + sendable(want)[1]).strip()
    assert (getattr(message, "reasoning_content", None) or "").strip() == want.reasoning.strip()
    assert response.choices[0].finish_reason == ("tool_calls" if calls else "stop")


@pytest.mark.parametrize(("family", "fixture", "model"), CASES)
def test_a_stream_sends_each_call_once_whole_with_a_sequential_index(
    served: Any, family: str, fixture: str, model: str
) -> None:
    client, key, want = played(served, family, fixture, model)
    stream = ask(client, model, key, stream=True, stream_options={"include_usage": True})
    calls: list[tuple[str, str, str]] = []
    indices: list[int] = []
    content, reasoning, finish, usage = [], [], None, None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            delta = choice.delta
            content.append(delta.content or "")
            reasoning.append(getattr(delta, "reasoning_content", None) or "")
            for call in delta.tool_calls or []:
                # whole at once: id, name and the complete arguments in one delta
                assert call.id and call.function and call.function.name
                indices.append(call.index)
                calls.append((call.id, call.function.name, call.function.arguments or ""))
            finish = choice.finish_reason or finish
    check_calls(calls, want)
    assert indices == list(range(len(calls)))
    assert "".join(content).strip() == ((want.content or "") + sendable(want)[1]).strip()
    assert "".join(reasoning).strip() == want.reasoning.strip()
    assert finish == ("tool_calls" if calls else "stop")
    assert usage is not None and usage.prompt_tokens == 11


def test_the_cases_hold_calls_of_every_family() -> None:
    families = {
        family
        for family, fixture, model in CASES
        if expected(load_fixture(family, fixture), model).tool_calls
    }
    assert families == {info.name for info in formats.families()}
