"""The shared HTTP transport over real loopback HTTP: retries, timeouts, cuts, errors."""

from __future__ import annotations

import email.utils
import random
import ssl
import time

import certifi
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import (
    ProtocolError,
    ProviderAPIError,
    ProviderConnectionError,
    ProviderTimeoutError,
    StreamInterruptedError,
)
from toolwire.providers import http
from toolwire.providers.http import (
    MAX_ERROR_BODY,
    Retries,
    Timeouts,
    api_error,
    events_from_turn,
    parse_retry_after,
    tls_context,
)
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.run.model import TurnDone
from toolwire.wire.events import TextDelta, ToolCallDelta, ToolCallReady, ToolCallStarted

from .conftest import SleepRecorder, demo_request, recorded_stream, run
from .faultserver import FaultServer, Reply, json_reply, sse, status

STREAM = recorded_stream("openai")


def model(server: FaultServer, sleeps: SleepRecorder, **kwargs: object) -> OpenAIChatModel:
    chat = OpenAIChatModel("gpt-4.1-mini", base_url=f"{server.url}/v1", **kwargs)  # type: ignore[arg-type]
    chat.options.sleep = sleeps
    return chat


def test_replays_a_recorded_stream(sleeps: SleepRecorder) -> None:
    with FaultServer(sse(STREAM, chunks=[7])) as server:
        events, turn = run(model(server, sleeps), demo_request())
    assert [call.name for call in turn.tool_calls] == ["explore_code", "explore_code"]
    assert [r.input for r in turn.requests] == [
        {"query": "login"},
        {"query": "session", "path": "auth"},
    ]
    assert turn.usage.input_tokens == 182
    assert sum(isinstance(e, ToolCallReady) for e in events) == 2
    assert sleeps.delays == []


def test_429_honours_retry_after_then_succeeds(sleeps: SleepRecorder) -> None:
    limited = status(
        429, {"error": {"message": "Rate limit reached", "type": "requests"}}, Retry_After="2"
    )
    with FaultServer(limited, sse(STREAM)) as server:
        _, turn = run(model(server, sleeps), demo_request())
        assert len(server.requests) == 2
    assert sleeps.delays == [2.0]
    assert len(turn.tool_calls) == 2


def test_retry_after_ms_wins_over_retry_after(sleeps: SleepRecorder) -> None:
    limited = status(
        429, {"error": {"message": "slow down"}}, Retry_After="9", retry_after_ms="250"
    )
    with FaultServer(limited, sse(STREAM)) as server:
        run(model(server, sleeps), demo_request())
    assert sleeps.delays == [0.25]


def test_500_is_retried_with_growing_backoff(sleeps: SleepRecorder) -> None:
    failing = status(500, {"error": {"message": "The server had an error"}})
    with FaultServer(failing, failing, sse(STREAM)) as server:
        _, turn = run(
            model(server, sleeps, retries=Retries(attempts=3, base_delay=1.0)), demo_request()
        )
        assert len(server.requests) == 3
    assert len(turn.tool_calls) == 2
    first, second = sleeps.delays
    assert 0.5 <= first <= 1.0 and 1.0 <= second <= 2.0


def test_500_gives_up_after_the_retries(sleeps: SleepRecorder) -> None:
    failing = status(503, {"error": {"message": "overloaded right now"}})
    with FaultServer(failing) as server, pytest.raises(ProviderAPIError) as info:
        run(model(server, sleeps, retries=Retries(attempts=2)), demo_request())
    assert info.value.status == 503
    assert "overloaded right now" in str(info.value)
    assert len(sleeps.delays) == 2


def test_a_retry_after_longer_than_allowed_fails_at_once(sleeps: SleepRecorder) -> None:
    limited = status(429, {"error": {"message": "quota"}}, Retry_After="3600")
    with FaultServer(limited) as server, pytest.raises(ProviderAPIError) as info:
        run(model(server, sleeps), demo_request())
    assert info.value.status == 429
    assert sleeps.delays == []


@pytest.mark.parametrize("code", [400, 404, 422])
def test_4xx_is_raised_with_the_provider_message_and_not_retried(
    sleeps: SleepRecorder, code: int
) -> None:
    rejected = status(
        code,
        {"error": {"message": "Invalid 'tools[0].function.name'", "type": "invalid_request_error"}},
    )
    with FaultServer(rejected) as server, pytest.raises(ProviderAPIError) as info:
        run(model(server, sleeps), demo_request())
    assert len(server.requests) == 1
    assert info.value.status == code
    assert info.value.error_type == "invalid_request_error"
    assert "Invalid 'tools[0].function.name'" in str(info.value)
    assert "\n" not in str(info.value)


def test_401_hint_names_the_key_variable(sleeps: SleepRecorder) -> None:
    with FaultServer(status(401, {"error": {"message": "Incorrect API key provided"}})) as server:
        with pytest.raises(ProviderAPIError) as info:
            run(model(server, sleeps, api_key="sk-wrong"), demo_request())
        assert server.requests[0].headers["authorization"] == "Bearer sk-wrong"
    assert "OPENAI_API_KEY" in str(info.value)


def test_cut_before_any_output_is_retried(sleeps: SleepRecorder) -> None:
    # 200 bytes hold only the role chunk, which produces no event.
    with FaultServer(sse(STREAM, drop_after=200), sse(STREAM)) as server:
        _, turn = run(model(server, sleeps), demo_request())
        assert len(server.requests) == 2
    assert len(turn.tool_calls) == 2
    assert len(sleeps.delays) == 1


def test_cut_after_output_raises_instead_of_retrying(sleeps: SleepRecorder) -> None:
    cut_at = STREAM.index(b'"login') + 3
    with FaultServer(sse(STREAM, drop_after=cut_at, chunks=[50]), sse(STREAM)) as server:
        with pytest.raises(StreamInterruptedError) as info:
            run(model(server, sleeps), demo_request())
        assert len(server.requests) == 1
    assert sleeps.delays == []
    assert "did not retry silently" in str(info.value)


def test_a_stream_ending_early_without_cutting_keeps_the_partial_turn(
    sleeps: SleepRecorder,
) -> None:
    cut_at = STREAM.index(b'finish_reason":"tool_calls')
    truncated = STREAM[: STREAM.rindex(b"\n\n", 0, cut_at) + 2]
    with FaultServer(sse(truncated)) as server, pytest.raises(StreamInterruptedError) as info:
        run(model(server, sleeps), demo_request())
        assert len(server.requests) == 1
    partial = info.value.partial
    assert partial is not None
    assert [call.id for call in partial.tool_calls] == ["call_a", "call_b"]


def test_garbage_lines_that_are_not_sse_fields_are_ignored(sleeps: SleepRecorder) -> None:
    noisy = b"garbage line without a colon\n: a comment\nretry: abc\n\n" + STREAM
    with FaultServer(sse(noisy, chunks=[5])) as server:
        _, turn = run(model(server, sleeps), demo_request())
    assert len(turn.tool_calls) == 2


def test_garbage_data_is_a_protocol_error(sleeps: SleepRecorder) -> None:
    with FaultServer(sse(b"data: {this is not json\n\n" + STREAM)) as server:
        with pytest.raises(ProtocolError) as info:
            run(model(server, sleeps), demo_request())
        assert len(server.requests) == 1
    assert "not JSON" in str(info.value)


def test_stall_before_output_times_out_then_retries(sleeps: SleepRecorder) -> None:
    with FaultServer(sse(STREAM, stall_after=0), sse(STREAM)) as server:
        _, turn = run(model(server, sleeps, timeouts=Timeouts(read=0.3)), demo_request())
        assert len(server.requests) == 2
    assert len(turn.tool_calls) == 2


def test_stall_before_output_gives_a_timeout_error_when_retries_run_out(
    sleeps: SleepRecorder,
) -> None:
    with FaultServer(sse(STREAM, stall_after=0)) as server, pytest.raises(ProviderTimeoutError):
        run(
            model(server, sleeps, timeouts=Timeouts(read=0.2), retries=Retries(attempts=1)),
            demo_request(),
        )


def test_stall_after_output_is_not_retried(sleeps: SleepRecorder) -> None:
    stall_at = STREAM.index(b'"login')
    with FaultServer(sse(STREAM, stall_after=stall_at), sse(STREAM)) as server:
        with pytest.raises(StreamInterruptedError) as info:
            run(model(server, sleeps, timeouts=Timeouts(read=0.3)), demo_request())
        assert len(server.requests) == 1
    assert "timed out" in str(info.value)


def test_total_timeout_bounds_the_whole_turn(sleeps: SleepRecorder) -> None:
    with FaultServer(sse(STREAM, stall_after=0)) as server, pytest.raises(ProviderTimeoutError):
        run(model(server, sleeps, timeouts=Timeouts(read=30, total=0.3)), demo_request())


def test_unreachable_endpoint_is_a_connection_error(sleeps: SleepRecorder) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    chat = OpenAIChatModel("m", base_url=f"http://127.0.0.1:{port}/v1", retries=Retries(attempts=2))
    chat.options.sleep = sleeps
    with pytest.raises(ProviderConnectionError) as info:
        run(chat, demo_request())
    assert len(sleeps.delays) == 2
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "--base-url" in message and "\n" not in message


def test_overloaded_error_event_before_output_is_retried(sleeps: SleepRecorder) -> None:
    from toolwire.providers.anthropic import AnthropicModel

    overloaded = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    with FaultServer(sse(overloaded), sse(recorded_stream("anthropic"))) as server:
        claude = AnthropicModel("claude-sonnet-4-5", base_url=server.url, api_key="k")
        claude.options.sleep = sleeps
        _, turn = run(claude, demo_request())
    assert [call.id for call in turn.tool_calls] == ["toolu_01A", "toolu_01B", "toolu_01C"]
    assert len(sleeps.delays) == 1


JSON_BODY = {
    "id": "c1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {
                        "id": "c_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Beijing"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7},
}
"""A Chat response with text and one call, for the JSON-body tests."""


def test_a_json_response_is_decoded_as_a_whole_turn(sleeps: SleepRecorder) -> None:
    with FaultServer(json_reply(JSON_BODY)) as server:
        events, turn = run(model(server, sleeps), demo_request(settings={"stream": False}))
        assert server.requests[0].body["stream"] is False
    assert turn.requests[0].input == {"city": "Beijing"}
    assert isinstance(events[0], TextDelta)
    assert events_from_turn(turn) == events
    assert not any(isinstance(e, TurnDone) for e in events)


def test_a_json_response_without_deltas_announces_each_call_by_its_ready_alone(
    sleeps: SleepRecorder,
) -> None:
    # As a stream decoder does for a call that came whole when nobody reads deltas.
    with FaultServer(json_reply(JSON_BODY)) as server:
        events, expected = run(model(server, sleeps), demo_request(settings={"stream": False}))
    with FaultServer(json_reply(JSON_BODY)) as server:
        quiet, turn = run(
            model(server, sleeps), demo_request(settings={"stream": False}, deltas=False)
        )
    assert turn == expected
    assert quiet == [e for e in events if not isinstance(e, (ToolCallStarted, ToolCallDelta))]
    assert [type(e) for e in quiet[:2]] == [TextDelta, ToolCallReady]
    assert events_from_turn(turn, deltas=False) == quiet


def _count_ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every CA-bundle TLS context httpx makes from here on, each recorded."""
    import httpx

    made: list[object] = []
    real = httpx.create_ssl_context

    def create() -> object:
        made.append(real())
        return made[-1]

    monkeypatch.setattr(http, "_TLS_CONTEXTS", {})
    monkeypatch.setattr(httpx, "create_ssl_context", create)
    return made


def test_the_clients_a_model_makes_share_one_tls_context(
    sleeps: SleepRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each turn without a client of the caller's makes its own client; loading the CA
    # bundle for each was most of a turn's CPU. Nothing listens on the discard port:
    # each turn fails to connect after making its client.
    made = _count_ca_loads(monkeypatch)
    chat = OpenAIChatModel("gpt-4.1-mini", base_url="https://127.0.0.1:9/v1", api_key="k")
    chat.options.sleep = sleeps
    for _ in range(2):
        with pytest.raises(ProviderConnectionError):
            run(chat, demo_request())
    assert len(made) == 1
    assert tls_context() is made[0]
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())  # honoured as httpx honours it
    assert tls_context() is not made[0] and len(made) == 2


def test_a_plain_http_endpoint_loads_no_ca_bundle(
    sleeps: SleepRecorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A local server (llama.cpp, Ollama, a loopback) is spoken to without TLS: its
    # client's TLS context trusts nothing, and making it reads no CA bundle.
    made = _count_ca_loads(monkeypatch)
    with FaultServer(sse(STREAM)) as server:
        _, turn = run(model(server, sleeps, api_key="k"), demo_request())
    assert len(turn.tool_calls) == 2 and made == []
    context = http._trust_nothing()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs() == []


# -- pure helpers --------------------------------------------------------------------


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "20"}) == 0.02
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (parse_retry_after({"retry-after": later}) or 0) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert parse_retry_after({"retry-after": past}) == 0.0


@settings(max_examples=1000, deadline=None)
@given(st.integers(1, 10), st.floats(0.01, 5), st.floats(0.1, 60), st.integers(0, 2**32))
def test_backoff_grows_within_its_bounds(failures: int, base: float, cap: float, seed: int) -> None:
    policy = Retries(attempts=10, base_delay=base, max_delay=cap)
    delay = policy.delay(failures, None, random.Random(seed))
    step = min(cap, base * 2 ** (failures - 1))
    assert delay is not None and step / 2 <= delay <= step


def test_backoff_gives_up_after_the_attempts() -> None:
    assert Retries(attempts=2).delay(3, None, random.Random(0)) is None
    assert Retries(attempts=2).delay(1, 5.0, random.Random(0)) == 5.0


def test_api_error_reads_the_shapes_providers_use() -> None:
    anthropic = api_error(
        400,
        b'{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too big"}}',
        "A",
    )
    assert (
        anthropic.error_type == "invalid_request_error"
        and "max_tokens: too big" in anthropic.message
    )
    fastapi = api_error(422, b'{"detail":"field required"}', "S")
    assert "field required" in fastapi.message
    text = api_error(502, b"<html>Bad\ngateway</html>", "P")
    assert text.message == "P returned HTTP 502: <html>Bad gateway</html>"
    empty = api_error(500, b"", "P")
    assert "no error message" in empty.message


# -- hostile bodies: every read guarded, bounded, and typed -------------------------------


def test_a_body_that_is_not_the_gzip_it_claims_is_a_protocol_error(sleeps: SleepRecorder) -> None:
    reply = sse(STREAM, headers={"content-encoding": "gzip"})
    with FaultServer(reply) as server, pytest.raises(ProtocolError, match="Content-Encoding"):
        run(model(server, sleeps), demo_request())


def test_a_500_with_an_endless_body_reads_only_its_start(sleeps: SleepRecorder) -> None:
    """The body was read whole (1.4 GB before the test server gave up); now at most
    MAX_ERROR_BODY bytes of it are kept, and the error names the status."""
    import tracemalloc

    endless = Reply(status=500, body=b'{"error": {"message": "boom"' + b" " * 65_000, endless=True)
    tracemalloc.start()
    try:
        with FaultServer(endless) as server, pytest.raises(ProviderAPIError) as info:
            run(model(server, sleeps, retries=Retries(attempts=0)), demo_request())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.status == 500
    assert peak < 20 * MAX_ERROR_BODY


def test_a_500_whose_body_stalls_is_still_a_typed_error(sleeps: SleepRecorder) -> None:
    stalled = Reply(status=500, body=b'{"error": {"mess', stall_after=5)
    with FaultServer(stalled) as server, pytest.raises(ProviderAPIError) as info:
        run(
            model(server, sleeps, timeouts=Timeouts(read=0.2), retries=Retries(attempts=0)),
            demo_request(),
        )
    assert info.value.status == 500


def test_a_json_response_whose_body_stalls_is_a_timeout(sleeps: SleepRecorder) -> None:
    stalled = Reply(body=b'{"choices": [', content_type="application/json", stall_after=5)
    with FaultServer(stalled) as server, pytest.raises(ProviderTimeoutError):
        run(
            model(server, sleeps, timeouts=Timeouts(read=0.2), retries=Retries(attempts=0)),
            demo_request(),
        )


def test_an_error_body_nested_too_deeply_is_still_a_typed_error() -> None:
    error = api_error(500, b"[" * 100_000, "P")
    assert error.status == 500 and "HTTP 500" in str(error)


def test_each_retry_is_announced_before_its_wait() -> None:
    import anyio

    from toolwire.turn import Notice

    seen: list[object] = []
    announced_at_sleep: list[int] = []

    async def sleep(seconds: float) -> None:
        announced_at_sleep.append(sum(isinstance(e, Notice) for e in seen))
        await anyio.sleep(0)

    async def go(server: FaultServer) -> None:
        chat = OpenAIChatModel("gpt-4.1-mini", base_url=f"{server.url}/v1", api_key="sk-secret")
        chat.options.sleep = sleep
        async for item in chat.stream(demo_request()):
            seen.append(item)

    failing = status(503, {"error": {"message": "busy, key sk-secret"}}, Retry_After="1.5")
    with FaultServer(failing, sse(STREAM)) as server:
        anyio.run(go, server)
    notices = [e for e in seen if isinstance(e, Notice)]
    assert [n.kind for n in notices] == ["retry"]
    assert notices[0].message == (
        "OpenAI Chat Completions returned HTTP 503: busy, key ***; try 2 of 4 in 1.5 s"
    )
    assert announced_at_sleep == [1]  # yielded before the backoff sleep began
    assert seen.index(notices[0]) == 0 and isinstance(seen[-1], TurnDone)
