"""Issue 25 through the public models against a loopback server: every quirk of the
fixtures in ``tests/wire/fixtures/servers`` (sources in its README), streamed and as a
non-streaming body where the quirk has one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, UsageLimits
from toolwire.errors import CallerError, UsageLimitExceededError
from toolwire.messages import ProviderPart, TextPart, UserMessage
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel
from toolwire.run.model import ModelRequest
from toolwire.turn import Turn
from toolwire.wire.events import Notice, ToolCallReady, ToolCallStarted

from .conftest import demo_request, run
from .faultserver import FaultServer, json_reply, sse

FIXTURES = Path(__file__).parent.parent / "wire" / "fixtures"
SERVERS = FIXTURES / "servers"


def _chunks(name: str, folder: Path = SERVERS) -> list[dict[str, Any]]:
    lines = (folder / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _sse(name: str, *, done: bool = True, folder: Path = SERVERS) -> bytes:
    text = "".join(f"data: {json.dumps(c)}\n\n" for c in _chunks(name, folder))
    return (text + ("data: [DONE]\n\n" if done else "")).encode()


def _body(name: str) -> Any:
    return json.loads((SERVERS / name).read_text(encoding="utf-8"))


def _calls(turn: Turn) -> list[tuple[str, str, str]]:
    return [(c.id, c.name, c.arguments) for c in turn.tool_calls]


def _chat(name: str, model: str = "m", request: ModelRequest | None = None, **options: Any) -> Any:
    with FaultServer(sse(_sse(name), chunks=[7, 1, 31])) as server:
        chat = OpenAIChatModel(model, base_url=f"{server.url}/v1", **options)
        return run(chat, request or demo_request())


def _chat_body(name: str, model: str = "m", request: ModelRequest | None = None) -> Turn:
    with FaultServer(json_reply(_body(name))) as server:
        chat = OpenAIChatModel(model, base_url=f"{server.url}/v1", settings={"stream": False})
        return run(chat, request or demo_request())[1]


# -- (a) parallel calls on index 0, (b) names and arguments re-sent whole ---------------------


def test_parallel_calls_on_index_0_are_separate_calls_stream_and_body() -> None:
    events, turn = _chat("chat-vllm-index0-whole.chunks.txt")
    assert [c.name for c in turn.tool_calls] == ["add_numbers", "get_weather"]
    assert [r.input for r in turn.requests] == [
        {"b": 2, "a": 2},
        {"unit": "celsius", "location": "Tokyo"},
    ]
    assert [r.index for r in turn.requests] == [0, 1]
    assert [e.index for e in events if isinstance(e, ToolCallReady)] == [0, 1]
    assert [n.kind for n in turn.notices] == ["call_split"]
    body = _chat_body("chat-vllm-index0-whole.json")
    assert _calls(body) == _calls(turn)
    assert [r.index for r in body.requests] == [0, 1]


def test_fragments_on_index_0_extend_the_call_opened_there_last() -> None:
    events, turn = _chat("chat-index0-fragments.chunks.txt")
    assert _calls(turn) == [
        ("call_a1", "read", '{"path": "a.rs"}'),
        ("call_b2", "read", '{"path": "b.rs"}'),
    ]
    assert [(e.index, e.id) for e in events if isinstance(e, ToolCallStarted)] == [
        (0, "call_a1"),
        (1, "call_b2"),
    ]


def test_a_name_and_arguments_re_sent_whole_are_kept_once() -> None:
    _, kimi = _chat("chat-kimi-name-repeated.chunks.txt")
    assert _calls(kimi) == [("functions.search_files:99", "search_files", '{"pattern": "login"}')]
    _, cumulative = _chat("chat-arguments-cumulative.chunks.txt")
    assert cumulative.requests[0].input == {"city": "Zurich", "unit": "C"}


# -- (c) calls left in content --------------------------------------------------------------


def test_calls_left_in_content_become_calls_when_tools_were_offered() -> None:
    events, turn = _chat("chat-vllm-hermes-in-content.chunks.txt", "Qwen/Qwen3-8B")
    assert [(c.name, r.input) for c, r in zip(turn.tool_calls, turn.requests, strict=True)] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
    ]
    assert turn.text.strip() == "I will check both."
    assert "<tool_call>" not in turn.text
    assert turn.finish_reason == "tool_calls"
    assert [n.kind for n in turn.notices] == ["calls_from_content"]
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == 2
    body = _chat_body("chat-vllm-hermes-in-content.json", "Qwen/Qwen3-8B")
    assert [(c.name, c.arguments) for c in body.tool_calls] == [
        (c.name, c.arguments) for c in turn.tool_calls
    ]
    assert body.text == turn.text and body.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    "request_",
    [ModelRequest([UserMessage("weather?")]), demo_request(tool_choice="none")],
    ids=["no tools", "tool_choice none"],
)
def test_content_stays_content_without_tools_or_with_tool_choice_none(
    request_: ModelRequest,
) -> None:
    _, turn = _chat("chat-vllm-hermes-in-content.chunks.txt", "Qwen/Qwen3-8B", request_)
    assert turn.tool_calls == []
    assert turn.text.count("<tool_call>") == 2 and turn.finish_reason == "stop"
    assert [n.kind for n in turn.notices] == ["calls_in_content"]


def test_text_calls_off_or_an_unknown_family_leave_content_alone() -> None:
    _, off = _chat("chat-vllm-hermes-in-content.chunks.txt", "Qwen/Qwen3-8B", text_calls=False)
    _, unknown = _chat("chat-vllm-hermes-in-content.chunks.txt", "my-finetune")
    for turn in (off, unknown):
        assert turn.tool_calls == [] and turn.notices == []
        assert turn.text.count("<tool_call>") == 2


def test_a_family_name_forces_the_markup() -> None:
    _, turn = _chat("chat-vllm-hermes-in-content.chunks.txt", "my-finetune", text_calls="hermes")
    assert len(turn.tool_calls) == 2
    _, variant = _chat(
        "chat-vllm-hermes-in-content.chunks.txt", "my-finetune", text_calls="hermes:qwen2.5"
    )
    assert _calls(variant)[0][1:] == _calls(turn)[0][1:]


@pytest.mark.parametrize("value", ["nope", "hermes:v9", True, ""])
def test_an_unknown_text_calls_value_is_the_callers_error(value: Any) -> None:
    with pytest.raises(CallerError):
        OpenAIChatModel("m", base_url="http://h/v1", text_calls=value)


# -- (d) Anthropic pause_turn ---------------------------------------------------------------


def _paused_server() -> FaultServer:
    return FaultServer(
        sse(_sse("anthropic-pause-turn.1.chunks.txt", done=False), chunks=[9, 40]),
        sse(_sse("anthropic-pause-turn.2.chunks.txt", done=False)),
    )


def test_a_paused_turn_is_continued_and_returned_as_one_turn() -> None:
    with _paused_server() as server:
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.url, api_key="k")
        events, turn = run(model, ModelRequest([UserMessage("quantum news?")]))
        first, second = (seen.body for seen in server.requests)
    assert len(server.requests) == 2
    # The paused assistant turn goes back as it is, last; no user message is added.
    assert second["messages"][:-1] == first["messages"]
    sent = second["messages"][-1]
    assert sent["role"] == "assistant"
    assert [b["type"] for b in sent["content"]] == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert [type(p).__name__ for p in turn.message.parts] == [
        "TextPart",
        "ProviderPart",
        "ProviderPart",
        "TextPart",
    ]
    assert turn.finish_reason == "stop" and turn.continuations == 1
    assert turn.usage.output_tokens == 100
    assert [n.kind for n in turn.notices] == ["pause_turn_continued"]
    assert any(isinstance(e, Notice) and e.kind == "pause_turn_continued" for e in events)


def test_each_continuation_counts_against_the_usage_limits() -> None:
    with _paused_server() as server:
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.url, api_key="k")
        with pytest.raises(UsageLimitExceededError):
            Agent(model, limits=UsageLimits(max_requests=1)).run_sync("quantum news?")
    with _paused_server() as server:
        model = AnthropicModel("claude-sonnet-4-6", base_url=server.url, api_key="k")
        result = Agent(model, limits=UsageLimits(max_requests=2), max_rounds=1).run_sync("go")
    assert "Quantum computers got faster." in result.output


# -- (e) xAI's server-side calls ----------------------------------------------------------


def _xai(stream: bool) -> Turn:
    reply = (
        sse(_sse("responses-xai-server-calls.chunks.txt", done=False))
        if stream
        else json_reply(_body("responses-xai-server-calls.json"))
    )
    with FaultServer(reply) as server:
        model = OpenAIResponsesModel(
            "grok-4.6", base_url=f"{server.url}/v1", settings={"stream": stream}
        )
        return run(model, demo_request())[1]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_xai_server_calls_are_provider_parts_not_client_calls(stream: bool) -> None:
    turn = _xai(stream)
    assert turn.requests == [] and turn.finish_reason == "stop"
    kept = [p for p in turn.message.parts if isinstance(p, ProviderPart)]
    assert [(p.type, p.data["name"]) for p in kept] == [("custom_tool_call", "x_keyword_search")]
    assert kept[0].data["status"] == "completed"
    assert turn.text == "People on X say toolwire is fast."
    assert [n.kind for n in turn.notices] == ["server_call_kept"]


def test_xai_stream_and_body_agree() -> None:
    assert _xai(True).message == _xai(False).message


# -- (f) citations on the Chat endpoint -----------------------------------------------------


def _citations(turn: Turn) -> list[dict[str, Any]]:
    return [c for p in turn.message.parts if isinstance(p, TextPart) for c in p.citations or []]


def test_chat_annotations_become_text_citations_stream_and_body() -> None:
    _, turn = _chat("chat-openai-search-annotations.chunks.txt", "gpt-4o-search-preview")
    body = _chat_body("chat-openai-search-annotations.json", "gpt-4o-search-preview")
    for got in (turn, body):
        assert [c["url_citation"]["url"] for c in _citations(got)] == [
            "https://example.com/paris?utm_source=openai"
        ]
    assert turn.message == body.message


def test_perplexity_citations_become_text_citations() -> None:
    recorded = FIXTURES / "recorded"
    with FaultServer(sse(_sse("chat-perplexity-citations.chunks.txt", folder=recorded))) as server:
        _, turn = run(OpenAIChatModel("sonar", base_url=f"{server.url}/v1"), demo_request())
    urls = [c["url"] for c in _citations(turn)]
    assert urls[:2] == [
        "https://populationstat.com/united-states/san-francisco",
        "https://en.wikipedia.org/wiki/San_Francisco",
    ]
    assert len(urls) == len(set(urls)) == 7
    body = json.loads((recorded / "chat-perplexity-citations.json").read_text(encoding="utf-8"))
    with FaultServer(json_reply(body)) as server:
        chat = OpenAIChatModel("sonar", base_url=f"{server.url}/v1", settings={"stream": False})
        decoded = run(chat, demo_request())[1]
    assert [c["url"] for c in _citations(decoded)] == body["citations"]


# -- (c) on the Responses endpoint ----------------------------------------------------------


def _responses_text_stream(text: str) -> bytes:
    """A Responses stream whose output text is ``text`` (vLLM's ``/v1/responses`` shape)."""
    message = {"id": "msg_1", "type": "message", "role": "assistant", "content": []}
    done = {**message, "content": [{"type": "output_text", "text": text, "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [done]}
    events = [
        {"type": "response.output_item.added", "output_index": 0, "item": message},
        *(
            {"type": "response.output_text.delta", "output_index": 0, "delta": text[i : i + 9]}
            for i in range(0, len(text), 9)
        ),
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {"type": "response.completed", "response": response},
    ]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


def test_the_responses_model_reads_calls_left_in_its_text_too() -> None:
    text = _body("chat-vllm-hermes-in-content.json")["choices"][0]["message"]["content"]
    with FaultServer(sse(_responses_text_stream(text))) as server:
        model = OpenAIResponsesModel("Qwen/Qwen3-8B", base_url=f"{server.url}/v1")
        _, turn = run(model, demo_request())
        _, untouched = run(
            OpenAIResponsesModel("Qwen/Qwen3-8B", base_url=f"{server.url}/v1", text_calls=False),
            demo_request(),
        )
    assert [r.input for r in turn.requests] == [{"city": "Paris"}, {"city": "Rome"}]
    assert turn.finish_reason == "tool_calls"
    assert [n.kind for n in turn.notices] == ["calls_from_content"]
    assert untouched.text == text and untouched.tool_calls == []
