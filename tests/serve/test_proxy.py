"""The proxy's rules, over real loopback HTTP with the official openai SDK as the client.

Native ``tool_calls`` through the one assembler (all on index 0, names sent twice),
arguments repaired or not sent (never silently: notices), Mistral's ids, ``tool_choice``
and ``parallel_tool_calls``, unknown fields passed on, ``chat_template_kwargs``,
errors in OpenAI's shape, a client that goes away, the audit log, the raw completions
upstream.
"""

from __future__ import annotations

import json
import re
import socket
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest

from .proxy import QWEN, chat, chat_body, running_proxy
from .recorded import RecordedUpstream, Reply

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    },
    {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}},
]
HERMES_TWO = (
    '<tool_call>{"name": "read", "arguments": {"path": "a.rs"}}</tool_call>\n'
    '<tool_call>{"name": "read", "arguments": {"path": "b.rs"}}</tool_call>'
)


@pytest.fixture
def serve() -> Iterator[Callable[..., tuple[RecordedUpstream, openai.OpenAI]]]:
    """``serve(script, **proxy_options)``: an upstream and the SDK client of a proxy."""
    with_blocks: list[Any] = []

    def start(
        script: Callable[[dict[str, Any]], Reply], **options: Any
    ) -> tuple[RecordedUpstream, openai.OpenAI]:
        upstream = RecordedUpstream(script).__enter__()
        with_blocks.append(upstream)
        proxy = running_proxy(upstream.url, **options)
        url = proxy.__enter__()
        with_blocks.append(proxy)
        return upstream, openai.OpenAI(base_url=url, api_key="none", max_retries=0)

    yield start
    for block in reversed(with_blocks):
        block.__exit__(None, None, None)


def ask(client: openai.OpenAI, *, model: str = QWEN, **options: Any) -> Any:
    options.setdefault("tools", TOOLS)
    return chat(client, model, **options)


def stream_of(client: openai.OpenAI, **options: Any) -> list[Any]:
    return list(ask(client, stream=True, **options).parse())


def calls_of(chunks: list[Any]) -> list[Any]:
    return [c for chunk in chunks for ch in chunk.choices for c in ch.delta.tool_calls or []]


def notices_of(response: Any) -> list[dict[str, Any]]:
    return json.loads(response.headers.get("x-toolwire-notices", "[]"))


def stream_notices(chunks: list[Any]) -> list[dict[str, Any]]:
    assert all(not (c.model_extra or {}).get("toolwire_notices") for c in chunks[:-1])
    return (chunks[-1].model_extra or {}).get("toolwire_notices") or []


def native(*fragments: dict[str, Any]) -> Reply:
    """A native tool_calls answer: these fragments streamed, the same calls whole."""
    calls: list[dict[str, Any]] = []
    for fragment in fragments:
        if fragment.get("id") and fragment["id"] not in [c["id"] for c in calls]:
            calls.append(
                {"id": fragment["id"], "type": "function", "function": dict(fragment["function"])}
            )
        else:
            calls[-1]["function"]["arguments"] += fragment["function"]["arguments"]
    return Reply(chunks=[{"tool_calls": [f]} for f in fragments], calls=calls, finish="tool_calls")


# -- native calls through the assembler ----------------------------------------------------


def test_the_clients_key_is_forwarded_and_only_its_own(serve: Any) -> None:
    """The upstream gets JSON/SSE headers and the client's ``Authorization`` as sent;
    a request without one sends none (not the previous client's)."""
    upstream, client = serve(lambda body: Reply(text="hi"))
    keyed = client.with_options(api_key="sk-client-key")
    stream_of(keyed)
    ask(keyed)
    base = str(client.base_url).rstrip("/")
    bare = httpx.post(f"{base}/chat/completions", json=chat_body(QWEN, stream=True), timeout=30)
    assert bare.status_code == 200
    first, second, third = upstream.request_headers
    assert first["authorization"] == second["authorization"] == "Bearer sk-client-key"
    assert "authorization" not in third
    for headers in (first, second, third):
        assert headers["content-type"] == "application/json"
        assert "text/event-stream" in headers["accept"]


def test_parallel_calls_all_on_index_zero_are_split(serve: Any) -> None:
    reply = native(
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": '},
        },
        {"index": 0, "function": {"arguments": '"a.rs"}'}},
        {
            "index": 0,
            "id": "call_b",
            "type": "function",
            "function": {"name": "read", "arguments": '{"path": "b.rs"}'},
        },
    )
    _, client = serve(lambda body: reply)
    body = ask(client).parse()
    calls = body.choices[0].message.tool_calls
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_a", "read", {"path": "a.rs"}),
        ("call_b", "read", {"path": "b.rs"}),
    ]
    streamed = calls_of(stream_of(client))
    assert [c.index for c in streamed] == [0, 1]
    assert [json.loads(c.function.arguments) for c in streamed] == [
        {"path": "a.rs"},
        {"path": "b.rs"},
    ]


def test_a_name_sent_with_every_fragment_is_kept_once(serve: Any) -> None:
    reply = native(
        {
            "index": 0,
            "id": "c1",
            "type": "function",
            "function": {"name": "read", "arguments": '{"pa'},
        },
        {
            "index": 0,
            "id": "c1",
            "type": "function",
            "function": {"name": "read", "arguments": 'th": "x"}'},
        },
    )
    _, client = serve(lambda body: reply)
    (call,) = calls_of(stream_of(client))
    assert call.function.name == "read" and json.loads(call.function.arguments) == {"path": "x"}


def test_broken_arguments_are_repaired_and_reported(serve: Any) -> None:
    reply = native(
        {
            "index": 0,
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "{'city': 'Paris',}"},
        }
    )
    _, client = serve(lambda body: reply)
    response = ask(client)
    (call,) = response.parse().choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"city": "Paris"}
    assert [n["kind"] for n in notices_of(response)] == ["arguments_repaired"]
    chunks = stream_of(client)
    assert json.loads(calls_of(chunks)[0].function.arguments) == {"city": "Paris"}
    assert [n["kind"] for n in stream_notices(chunks)] == ["arguments_repaired"]


def test_arguments_beyond_repair_are_not_a_call_and_stay_content(serve: Any) -> None:
    reply = native(
        {
            "index": 0,
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": "[1, 2]"},
        }
    )
    _, client = serve(lambda body: reply)
    response = ask(client)
    choice = response.parse().choices[0]
    assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert choice.message.content == "get_weather([1, 2])"
    assert [n["kind"] for n in notices_of(response)] == ["call_not_sent"]


def test_mistral_gets_nine_alphanumeric_ids(serve: Any) -> None:
    reply = native(
        {
            "index": 0,
            "id": "call_not_mistral",
            "type": "function",
            "function": {"name": "read", "arguments": "{}"},
        },
        {
            "index": 1,
            "id": "AbC123xyz",
            "type": "function",
            "function": {"name": "read", "arguments": "{}"},
        },
        {
            "index": 2,
            "id": "short",
            "type": "function",
            "function": {"name": "read", "arguments": "{}"},
        },
    )
    _, client = serve(lambda body: reply)
    ids = [
        c.id
        for c in calls_of(stream_of(client, model="mistralai/Mistral-Small-3.2-24B-Instruct-2506"))
    ]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", i) for i in ids)
    assert ids[1] == "AbC123xyz"


def test_mistral_calls_left_in_content_get_mistral_ids(serve: Any) -> None:
    text = '[TOOL_CALLS]read[ARGS]{"path": "a"}[TOOL_CALLS]read[ARGS]{"path": "b"}'
    _, client = serve(lambda body: Reply(text=text))
    model = "mistralai/Mistral-Small-3.2-24B-Instruct-2506"
    calls = ask(client, model=model).parse().choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [{"path": "a"}, {"path": "b"}]
    assert all(re.fullmatch(r"[A-Za-z0-9]{9}", c.id) for c in calls)


# -- the request's options -----------------------------------------------------------------


def test_tool_choice_none_keeps_markup_as_content_with_a_notice(serve: Any) -> None:
    _, client = serve(lambda body: Reply(text=HERMES_TWO))
    response = ask(client, tool_choice="none")
    choice = response.parse().choices[0]
    assert choice.message.tool_calls is None and choice.finish_reason == "stop"
    assert choice.message.content == HERMES_TWO
    assert [n["kind"] for n in notices_of(response)] == ["calls_in_content"]


def test_parallel_tool_calls_false_sends_the_first_call(serve: Any) -> None:
    upstream, client = serve(lambda body: Reply(text=HERMES_TWO))
    chunks = stream_of(client, parallel_tool_calls=False)
    assert [json.loads(c.function.arguments) for c in calls_of(chunks)] == [{"path": "a.rs"}]
    assert "call_not_sent" in [n["kind"] for n in stream_notices(chunks)]
    assert upstream.requests[-1]["parallel_tool_calls"] is False


def test_named_tool_choice_and_unknown_fields_reach_the_upstream_unchanged(serve: Any) -> None:
    upstream, client = serve(lambda body: Reply(text="ok"))
    choice = {"type": "function", "function": {"name": "read"}}
    ask(client, tool_choice=choice, extra_body={"top_k": 7, "repetition_penalty": 1.1})
    sent = upstream.requests[-1]
    assert (
        sent["tool_choice"] == choice and sent["top_k"] == 7 and sent["repetition_penalty"] == 1.1
    )
    assert sent["tools"] == TOOLS and not sent.get("stream")


def test_a_template_that_opens_think_is_known_from_the_model_name(serve: Any) -> None:
    # GLM 4.7's template ends the prompt with <think>: a server with no reasoning parser
    # returns the reasoning, then </think>, as content.
    _, client = serve(lambda body: Reply(text="let me see</think>It is sunny."))
    message = ask(client, model="zai-org/GLM-4.7").parse().choices[0].message
    assert message.content == "It is sunny."
    assert message.model_extra["reasoning_content"] == "let me see"


def test_chat_template_kwargs_are_honoured(serve: Any) -> None:
    upstream, client = serve(lambda body: Reply(text="I ponder</think>Done."))
    # DeepSeek V3.1 does not think unless asked: </think> is then plain text...
    plain = ask(client, model="deepseek-ai/DeepSeek-V3.1").parse().choices[0].message
    assert plain.content == "I ponder</think>Done."
    # ...and with thinking on (as vLLM takes it) the template opens <think>.
    kwargs = {"chat_template_kwargs": {"thinking": True}}
    message = (
        ask(client, model="deepseek-ai/DeepSeek-V3.1", extra_body=kwargs).parse().choices[0].message
    )
    assert message.content == "Done." and message.model_extra["reasoning_content"] == "I ponder"
    assert upstream.requests[-1]["chat_template_kwargs"] == {"thinking": True}


def test_format_option_forces_a_family(serve: Any) -> None:
    _, client = serve(lambda body: Reply(text=HERMES_TWO), format="hermes")
    calls = ask(client, model="my-finetune").parse().choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["read", "read"]


def test_reasoning_streams_as_reasoning_content(serve: Any) -> None:
    _, client = serve(lambda body: Reply(reasoning="thinking hard", text="Answer."))
    chunks = stream_of(client)
    reasoning = "".join(
        (ch.delta.model_extra or {}).get("reasoning_content") or ""
        for c in chunks
        for ch in c.choices
    )
    assert reasoning == "thinking hard"
    assert (
        sum(
            1
            for c in chunks
            for ch in c.choices
            if (ch.delta.model_extra or {}).get("reasoning_content")
        )
        > 1
    )


# -- errors --------------------------------------------------------------------------------


def test_an_upstream_that_is_down_is_a_502() -> None:
    with RecordedUpstream(lambda body: Reply()) as upstream:
        url = upstream.url
    with running_proxy(url) as proxy:
        client = openai.OpenAI(base_url=proxy, api_key="none", max_retries=0)
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as caught:
                ask(client, stream=stream)
            assert caught.value.status_code == 502
            assert "unreachable" in caught.value.body["message"]


def test_an_upstream_error_keeps_its_status_and_message(serve: Any) -> None:
    _, client = serve(lambda body: Reply(status=422, error="max_tokens is too large"))
    for stream in (False, True):
        with pytest.raises(openai.UnprocessableEntityError) as caught:
            ask(client, stream=stream)
        assert caught.value.body["message"] == "max_tokens is too large"


def test_an_upstream_error_after_output_began_ends_the_stream_with_an_error_event(
    serve: Any,
) -> None:
    _, client = serve(
        lambda body: Reply(text="partial answer", pieces=2, fail_after=3, error="engine died")
    )
    received: list[str] = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in ask(client, stream=True).parse():
            received += [c.delta.content or "" for c in chunk.choices]
    assert "engine died" in str(caught.value)
    assert "".join(received) == "partial answer"[:4]


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [{"role": "user", "content": "x"}]},
        {"model": "m", "messages": []},
        chat_body("m", stream="yes"),
        chat_body("m", tools=[{"type": "function"}]),
        chat_body("m", tools=TOOLS, tool_choice={"type": "function", "function": {"name": "nope"}}),
    ],
)
def test_an_invalid_request_is_a_400_in_openais_shape(serve: Any, body: dict[str, Any]) -> None:
    upstream, client = serve(lambda b: Reply(text="x"))
    response = httpx.post(f"{client.base_url}chat/completions", json=body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert upstream.requests == []


def test_a_body_that_is_not_json_is_a_400(serve: Any) -> None:
    _, client = serve(lambda b: Reply(text="x"))
    response = httpx.post(f"{client.base_url}chat/completions", content=b"{nope")
    assert response.status_code == 400 and response.json()["error"]["message"]


def test_a_client_that_disconnects_cancels_the_upstream_request(serve: Any) -> None:
    # The upstream goes silent after its first deltas: only the proxy's watch on the
    # client's connection can notice that the client left.
    upstream, client = serve(lambda body: Reply(text="a" * 60, pieces=1, hold=120))
    body = chat_body(stream=True)
    with httpx.stream("POST", f"{client.base_url}chat/completions", json=body) as response:
        first = next(response.iter_raw())
        assert first.startswith(b"data: ")
    assert upstream.disconnected.wait(30)
    assert upstream.open_streams == 0


def test_a_client_that_disconnects_before_a_whole_answer_cancels_the_upstream_request(
    serve: Any,
) -> None:
    # The upstream holds its whole answer back: only the proxy's watch on the client's
    # connection can notice that the client left before it came.
    upstream, client = serve(lambda body: Reply(text="late", hold=120))
    url = httpx.URL(str(client.base_url))
    payload = json.dumps(chat_body())
    head = (
        f"POST {url.path}chat/completions HTTP/1.1\r\nhost: {url.host}\r\n"
        f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
    )
    with socket.create_connection((url.host, url.port)) as conn:
        conn.sendall(head.encode() + payload.encode())
        assert upstream.received.wait(30)  # the proxy's request is at the upstream
    assert upstream.disconnected.wait(30)


# -- the audit log and the other upstreams ------------------------------------------------


def test_the_audit_log_keeps_the_raw_upstream_text_and_what_the_client_got(
    serve: Any, tmp_path: Any
) -> None:
    path = tmp_path / "serve.db"
    _, client = serve(lambda body: Reply(text=HERMES_TWO), log=str(path))
    stream_of(client)
    ask(client)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT status, raw, received, notices FROM proxied").fetchall()
        runs = conn.execute("SELECT outcome, model FROM runs").fetchall()
        requests = conn.execute("SELECT finish_reason FROM requests").fetchall()
    finally:
        conn.close()
    assert len(rows) == 2 and len(runs) == 2
    for status, raw, received, notices in rows:
        assert status == 200
        assert raw_content(raw) == HERMES_TWO  # the markup, as the upstream sent it
        assert '"read"' in received and "<tool_call>" not in received
        assert json.loads(notices)[0]["kind"] == "calls_from_content"
    assert {outcome for outcome, _ in runs} == {"ok"}
    assert requests == [("tool_calls",), ("tool_calls",)]


def raw_content(raw: str) -> str:
    """The content an upstream's body holds (an SSE stream or one JSON response)."""
    if raw.startswith("{"):
        return json.loads(raw)["choices"][0]["message"]["content"]
    out = []
    for line in raw.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                out.append(choice["delta"].get("content") or "")
    return "".join(out)


def test_a_raw_completions_upstream_gets_a_rendered_prompt(serve: Any) -> None:
    upstream, client = serve(lambda body: Reply(text=HERMES_TWO))
    del client
    completions = RecordedUpstream(lambda body: Reply(text=HERMES_TWO)).__enter__()
    try:
        with running_proxy(f"completions:{completions.url}") as url:
            sdk = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
            for stream in (False, True):
                response = ask(sdk, stream=stream).parse()
                if stream:
                    calls = calls_of(list(response))
                else:
                    calls = response.choices[0].message.tool_calls
                assert [json.loads(c.function.arguments) for c in calls] == [
                    {"path": "a.rs"},
                    {"path": "b.rs"},
                ]
        prompt = completions.requests[-1]["prompt"]
        assert "<tools>" in prompt and prompt.endswith("<|im_start|>assistant\n")
    finally:
        completions.__exit__(None, None, None)
    assert upstream.requests == []


def test_models_are_the_upstreams(serve: Any) -> None:
    _, client = serve(lambda body: Reply())
    assert [m.id for m in client.models.list()] == ["recorded"]


def test_a_raw_completions_upstream_gets_the_familys_own_prompt() -> None:
    text = '[TOOL_CALLS]read[ARGS]{"path": "a.rs"}'
    with RecordedUpstream(lambda body: Reply(text=text)) as completions:
        with running_proxy(f"completions:{completions.url}") as url:
            sdk = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
            model = "mistralai/Mistral-Small-3.2-24B-Instruct-2506"
            response = ask(sdk, model=model).parse()
            (call,) = response.choices[0].message.tool_calls
            assert json.loads(call.function.arguments) == {"path": "a.rs"}
            assert re.fullmatch(r"[A-Za-z0-9]{9}", call.id)
        sent = completions.requests[-1]
    assert "[AVAILABLE_TOOLS]" in sent["prompt"] and "<|im_start|>" not in sent["prompt"]
    assert sent["stop"]


@pytest.mark.parametrize("freeze", [False, True])
def test_freeze_gc_moves_the_start_ups_objects_out_of_the_collectors_reach(
    freeze: bool,
) -> None:
    """``create_app(freeze_gc=True)`` (what ``toolwire serve`` runs) freezes at start-up;
    the default leaves the process's collector alone."""
    import gc

    from starlette.testclient import TestClient

    from toolwire.serve import create_app

    gc.unfreeze()
    try:
        with TestClient(create_app("http://127.0.0.1:9/v1", freeze_gc=freeze)):
            assert (gc.get_freeze_count() > 0) is freeze
    finally:
        gc.unfreeze()
