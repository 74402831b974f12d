"""A provider's 400 about an image a tool returned becomes that call's error result.

Each provider is a loopback server: the model calls ``screenshot`` (text and a PNG)
and ``weather`` (text) in one turn; the next request is answered 400 with the
provider's documented error body; the loop answers ``screenshot`` with an error
result (its sibling keeps its result) and sends the request again, once.

The error bodies have the shapes the providers document:

* Anthropic (https://docs.anthropic.com/en/api/errors): ``{"type": "error", "error":
  {"type": "invalid_request_error", "message": ...}, "request_id": ...}``; the
  message as its API words an oversized image ("messages.N....image.source.base64:
  image exceeds 5 MB maximum: N bytes > 5242880 bytes", quoted in
  ``toolwire.context.images`` from the vision guide, and in reports such as
  anthropics/claude-code#14887) or a many-image request ("At least one of the image
  dimensions exceed max allowed size for many-image requests: 2000 pixels",
  anthropics/claude-code#13480).
* OpenAI (https://platform.openai.com/docs/guides/error-codes, the error object
  ``{"error": {"message", "type", "param", "code"}}``): "You uploaded an unsupported
  image. Please make sure your image is below 20 MB in size and is of one the
  following formats: ['png', 'jpeg', 'gif', 'webp']." (``invalid_request_error``,
  code ``invalid_image_format``; reported in openai/openai-node#1463), and "Invalid
  image." for bytes it cannot decode.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, AuditLog, Image, ProviderAPIError
from toolwire.messages import ToolResult, ToolStatus
from toolwire.observe.replay import assert_replays
from toolwire.providers.anthropic import AnthropicModel
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel
from toolwire.run.events import RequestFailed
from toolwire.run.refused_images import about_image

from .faultserver import FaultServer, json_reply, status

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
B64 = base64.b64encode(PNG).decode()


def screenshot() -> list[Any]:
    """Take a screenshot of the page."""
    return ["The page:", Image(PNG, media_type="image/png")]


def weather() -> str:
    """The weather."""
    return "sunny"


ANTHROPIC_400 = {
    "type": "error",
    "error": {
        "type": "invalid_request_error",
        "message": "messages.2.content.0.content.1.image.source.base64: image exceeds 5 MB "
        "maximum: 5316852 bytes > 5242880 bytes",
    },
    "request_id": "req_011CUwN6c6rsPmwqeLiuEovd",
}
OPENAI_400 = {
    "error": {
        "message": "You uploaded an unsupported image. Please make sure your image is below "
        "20 MB in size and is of one the following formats: ['png', 'jpeg', 'gif', 'webp'].",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_image_format",
    }
}
# A 400 that names an item type, not an image: it fails the run as before.
OPENAI_400_NOT_IMAGE = {
    "error": {
        "message": "Invalid value: 'output_text'. Supported values are: 'input_text', "
        "'input_image', and 'input_file'.",
        "type": "invalid_request_error",
        "param": "input[2].output[0]",
        "code": "invalid_value",
    }
}

_USAGE_CHAT = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
_USAGE_RESPONSES = {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}
_USAGE_ANTHROPIC = {"input_tokens": 5, "output_tokens": 2}


def _chat() -> list[dict[str, Any]]:
    calls = [
        {"id": f"call_{n}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for n, name in ((1, "screenshot"), (2, "weather"))
    ]
    first = {"role": "assistant", "content": None, "tool_calls": calls}
    answer = {"role": "assistant", "content": "Sunny; no picture."}
    return [
        {"id": "c1", "object": "chat.completion", "usage": _USAGE_CHAT,
         "choices": [{"index": 0, "message": first, "finish_reason": "tool_calls"}]},
        {"id": "c2", "object": "chat.completion", "usage": _USAGE_CHAT,
         "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]},
    ]  # fmt: skip


def _responses() -> list[dict[str, Any]]:
    calls = [
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
         "arguments": "{}", "status": "completed"}
        for n, name in ((1, "screenshot"), (2, "weather"))
    ]  # fmt: skip
    text = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Sunny; no picture.", "annotations": []}]}  # fmt: skip
    return [
        {"id": "r1", "object": "response", "status": "completed", "output": calls,
         "usage": _USAGE_RESPONSES},
        {"id": "r2", "object": "response", "status": "completed", "output": [text],
         "usage": _USAGE_RESPONSES},
    ]  # fmt: skip


def _anthropic() -> list[dict[str, Any]]:
    uses = [
        {"type": "tool_use", "id": f"call_{n}", "name": name, "input": {}}
        for n, name in ((1, "screenshot"), (2, "weather"))
    ]
    return [
        {"id": "m1", "type": "message", "role": "assistant", "content": uses,
         "stop_reason": "tool_use", "usage": _USAGE_ANTHROPIC},
        {"id": "m2", "type": "message", "role": "assistant",
         "content": [{"type": "text", "text": "Sunny; no picture."}], "stop_reason": "end_turn",
         "usage": _USAGE_ANTHROPIC},
    ]  # fmt: skip


PROVIDERS = {
    "chat": (OpenAIChatModel, _chat, OPENAI_400, "/v1"),
    "responses": (OpenAIResponsesModel, _responses, OPENAI_400, "/v1"),
    "anthropic": (AnthropicModel, _anthropic, ANTHROPIC_400, ""),
}


def _results(messages: list[Any]) -> dict[str, ToolResult]:
    return {m.call_id: m for m in messages if isinstance(m, ToolResult)}


def _sent_image(body: dict[str, Any]) -> bool:
    return B64 in json.dumps(body)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_refused_image_becomes_the_calls_error_result(provider: str, tmp_path: Path) -> None:
    model_class, bodies, error, base = PROVIDERS[provider]
    first, answer = bodies()
    log = tmp_path / "runs.db"
    events: list[Any] = []
    with FaultServer(json_reply(first), status(400, error), json_reply(answer)) as server:
        model = model_class("m", base_url=server.url + base, api_key="sk-secret-key")
        agent = Agent(model, [screenshot, weather], log=log)

        async def run() -> Any:
            async with agent.run_stream("What is on the page, and the weather?") as stream:
                async for event in stream:
                    events.append(event)
            return stream.result

        import asyncio

        result = asyncio.run(run())
        sent = [seen.body for seen in server.requests]

    assert result.output == "Sunny; no picture."
    assert result.requests == 3 and len(sent) == 3
    assert _sent_image(sent[1]) and not _sent_image(sent[2])  # resent without the image
    results = _results(result.messages)
    assert set(results) == {"call_1", "call_2"}  # one result per call
    refused, sibling = results["call_1"], results["call_2"]
    assert refused.status is ToolStatus.ERROR and not refused.parts
    assert "image 1: image/png, 70 bytes" in refused.content
    assert "HTTP 400" in refused.content and (
        "5 MB" in refused.content or "20 MB" in refused.content
    )
    assert "The page:" in refused.content  # the tool's text is kept
    assert "sk-secret-key" not in refused.content
    assert sibling.status is ToolStatus.OK and sibling.content == "sunny"
    assert json.dumps(refused.content)[1:-1] in json.dumps(sent[2])  # what the model read
    (failed,) = [e for e in events if isinstance(e, RequestFailed)]
    assert failed.resent and failed.status == 400 and failed.round == 2
    assert [f.kind for f in result.diagnostics.failures] == ["tool_error"]

    AuditLog(log).close()
    conn = sqlite3.connect(log)
    rows = conn.execute(
        "SELECT seq, round, error, error_type, error_status, tool_calls FROM requests ORDER BY seq"
    ).fetchall()
    conn.close()
    assert [r[:2] for r in rows] == [(1, 1), (2, 2), (3, 2)]
    assert rows[0][2] is None and rows[2][2] is None
    assert rows[1][3:5] == ("ProviderAPIError", 400) and "HTTP 400" in rows[1][2]
    assert rows[1][5] == "[]"
    # The refused call's row is the error result the model read, counted failed as the
    # diagnostics count it; its parts are still the tool's (the trace shows the image).
    conn = sqlite3.connect(log)
    selected = "SELECT call_id, status, failure_class, images_refused, result, parts FROM calls"
    calls = {row[0]: row[1:] for row in conn.execute(selected)}
    conn.close()
    assert calls["call_1"][:4] == ("error", "tool_error", 1, refused.content)
    assert '"kind": "image"' in calls["call_1"][4]
    assert calls["call_2"][:4] == ("ok", None, 0, "sunny")
    (logged,) = AuditLog(log).runs()
    assert logged["failures"] == len(result.diagnostics.failures) == 1
    replayed = assert_replays(log)  # the logged 400 comes again, and is answered again
    assert _results(replayed.messages)["call_1"].content == refused.content


def test_a_400_about_something_else_still_fails_the_run() -> None:
    first, answer = _responses()
    with FaultServer(
        json_reply(first), status(400, OPENAI_400_NOT_IMAGE), json_reply(answer)
    ) as server:
        model = OpenAIResponsesModel("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderAPIError, match="output_text"):
            Agent(model, [screenshot, weather]).run_sync("Go")
        assert len(server.requests) == 2


def test_the_request_is_resent_once_at_most() -> None:
    first, answer = _chat()
    with FaultServer(json_reply(first), status(400, OPENAI_400), json_reply(answer)) as server:
        server.replies = [json_reply(first), status(400, OPENAI_400)]  # then 400 for ever
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderAPIError, match="unsupported image"):
            Agent(model, [screenshot, weather]).run_sync("Go")
        assert len(server.requests) == 3  # the first turn, the refused request, one resend
        assert not _sent_image(server.requests[2].body)


def test_images_of_an_earlier_round_are_not_the_calls_of_this_one() -> None:
    """The round that got the 400 carried no image in its results: the error stands."""
    first, answer = _chat()
    second = json.loads(json.dumps(first).replace('"screenshot"', '"weather"'))
    second["choices"][0]["message"]["tool_calls"] = second["choices"][0]["message"]["tool_calls"][
        1:
    ]
    replies = [json_reply(first), json_reply(second), status(400, OPENAI_400), json_reply(answer)]
    with FaultServer(*replies) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderAPIError, match="unsupported image"):
            Agent(model, [screenshot, weather]).run_sync("Go")
        assert len(server.requests) == 3


def test_the_failed_requests_span_ends_with_its_error() -> None:
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import StatusCode

    from toolwire.observe.otel import Instrumentation

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    first, answer = _anthropic()
    with FaultServer(json_reply(first), status(400, ANTHROPIC_400), json_reply(answer)) as server:
        model = AnthropicModel("m", base_url=server.url, api_key="k")
        hook = Instrumentation(tracer_provider=provider)
        result = Agent(model, [screenshot, weather], log=hook).run_sync("Go")
    assert result.output == "Sunny; no picture."
    chats = sorted(
        (s for s in exporter.get_finished_spans() if s.name.startswith("chat")),
        key=lambda s: s.start_time,
    )
    assert len(chats) == 3
    failed = chats[1]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "ProviderAPIError"
    assert failed.attributes["http.response.status_code"] == 400
    assert failed.end_time <= chats[2].start_time  # closed before the resend began
    assert all(s.status.status_code is not StatusCode.ERROR for s in (chats[0], chats[2]))
    # The refused call's span ends as the log counts it: failed, with the error result's
    # reason; its sibling's span stays ok.
    tools = {s.attributes["gen_ai.tool.name"]: s for s in exporter.get_finished_spans()
             if s.name.startswith("execute_tool")}  # fmt: skip
    refused, sibling = tools["screenshot"], tools["weather"]
    refused_result = next(
        m for m in result.messages if isinstance(m, ToolResult) and m.name == "screenshot"
    )
    assert refused.status.status_code is StatusCode.ERROR
    assert refused.status.description == refused_result.content[:200]
    assert "refused the image" in refused.status.description
    assert refused.attributes["error.type"] == "tool_error"
    assert refused.attributes["toolwire.tool.status"] == "error"
    assert refused.attributes["toolwire.tool.images_refused"] is True
    assert refused.end_time <= failed.start_time  # its time is still the tool's run
    assert sibling.status.status_code is StatusCode.UNSET
    assert sibling.attributes["toolwire.tool.status"] == "ok"
    assert "error.type" not in sibling.attributes


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (OPENAI_400, True),
        (ANTHROPIC_400, True),
        ({"error": {"message": "Invalid image.", "type": "invalid_request_error"}}, True),
        ({"error": {"message": "Too much media: 0 document pages + 102 images > 100"}}, True),
        (OPENAI_400_NOT_IMAGE, False),
        ({"error": {"message": "max_tokens: 100000 > 64000, the maximum for this model"}}, False),
    ],
)
def test_which_400s_are_about_an_image(body: dict[str, Any], expected: bool) -> None:
    from toolwire.providers.http import api_error

    error = api_error(400, json.dumps(body).encode(), "provider")
    assert about_image(error) is expected
    same_at_500 = api_error(500, json.dumps(body).encode(), "provider")
    assert about_image(same_at_500) is False


def test_a_run_stopped_by_a_failed_request_resumes_from_its_answered_rows(
    tmp_path: Path,
) -> None:
    """The failed request's row holds no turn: a resumed run rebuilds its history from the
    answered rows, counts the failed request as made, and sends the results again."""
    first, answer = _chat()
    log = tmp_path / "runs.db"
    with FaultServer(json_reply(first), status(400, OPENAI_400_NOT_IMAGE)) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderAPIError):
            Agent(model, [screenshot, weather], log=log).run_sync("Go")
    conn = sqlite3.connect(log)
    failed = conn.execute("SELECT seq, error_status, error FROM requests WHERE error IS NOT NULL")
    ((seq, code, text),) = failed.fetchall()
    (outcome,) = conn.execute("SELECT outcome FROM runs").fetchone()
    conn.close()
    assert (seq, code, outcome) == (2, 400, "error") and "output_text" in text
    with FaultServer(json_reply(answer)) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        result = Agent(model, [screenshot, weather], log=log).resume_sync("last")
        (sent,) = [seen.body for seen in server.requests]
    assert result.output == "Sunny; no picture."
    assert result.requests == 3  # two logged (one failed), one now
    tool_messages = [m for m in sent["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2"]
    assert _sent_image(sent)  # the logged image, sent again


def test_a_run_that_failed_after_the_resend_resumes_without_the_refused_image(
    tmp_path: Path,
) -> None:
    """The resend failed too: a resumed run sends the refused call's error result, as the
    resend did, not the tool's image again."""
    first, answer = _chat()
    log = tmp_path / "runs.db"
    replies = [json_reply(first), status(400, OPENAI_400), status(400, OPENAI_400_NOT_IMAGE)]
    with FaultServer(*replies) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        with pytest.raises(ProviderAPIError, match="output_text"):
            Agent(model, [screenshot, weather], log=log).run_sync("Go")
        resent = server.requests[2].body
    with FaultServer(json_reply(answer)) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        result = Agent(model, [screenshot, weather], log=log).resume_sync("last")
        (sent,) = [seen.body for seen in server.requests]
    assert result.output == "Sunny; no picture."
    assert not _sent_image(sent)
    tools = [m for m in sent["messages"] if m["role"] == "tool"]
    assert tools == [m for m in resent["messages"] if m["role"] == "tool"]
    assert "the provider refused the image" in tools[0]["content"]
    (logged,) = AuditLog(log).runs()
    assert logged["failures"] == 1 and logged["outcome"] == "ok"


def test_inspect_flags_the_refused_call_and_an_older_log_still_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log written before schema 12 kept the tool's own result in the refused call's
    row: it replays as it did."""
    from toolwire.cli import main

    first, answer = _chat()
    log = tmp_path / "runs.db"
    with FaultServer(json_reply(first), status(400, OPENAI_400), json_reply(answer)) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        Agent(model, [screenshot, weather], log=log).run_sync("Go")
    capsys.readouterr()
    assert main(["inspect", "last", "--db", str(log)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "] screenshot(" in x]
    assert " error " in line and line.endswith("[images refused]")
    assert_replays(log)
    conn = sqlite3.connect(log)
    conn.execute(
        "UPDATE calls SET status = 'ok', failure_class = NULL, result = 'The page:',"
        " images_refused = 0 WHERE call_id = 'call_1'"
    )  # what the row held before
    conn.commit()
    conn.close()
    assert _results(assert_replays(log).messages)["call_1"].status is ToolStatus.ERROR


def photo() -> list[Any]:
    """A photo of the page."""
    return ["The photo:", Image(PNG + b"\0" * 10, media_type="image/png")]


def _two_images(provider: str) -> tuple[dict[str, Any], dict[str, Any]]:
    first, answer = {
        "anthropic": _anthropic,
        "responses": _responses,
        "chat": _chat,
    }[provider]()
    return json.loads(json.dumps(first).replace('"weather"', '"photo"')), answer


@pytest.mark.parametrize(
    ("provider", "error", "path"),
    [
        (
            "anthropic",
            {"type": "error", "error": {"type": "invalid_request_error", "message":
             "messages.2.content.1.content.1.image.source.base64.data: At least one of the "
             "image dimensions exceed max allowed size for many-image requests: 2000 pixels"}},
            ("messages", 2, "content", 1),
        ),
        (
            "responses",
            {"error": {"message": "Invalid image.", "type": "invalid_request_error",
                       "param": "input[4].output[1]", "code": "invalid_image"}},
            ("input", 4),
        ),
    ],
)  # fmt: skip
def test_the_call_the_error_points_at_is_the_only_one_answered(
    provider: str, error: dict[str, Any], path: tuple[Any, ...]
) -> None:
    model_class, _, _, base = PROVIDERS[provider]
    first, answer = _two_images(provider)
    with FaultServer(json_reply(first), status(400, error), json_reply(answer)) as server:
        model = model_class("m", base_url=server.url + base, api_key="k")
        result = Agent(model, [screenshot, photo]).run_sync("Go")
        sent = [seen.body for seen in server.requests]
    pointed: Any = sent[1]
    for key in path:
        pointed = pointed[key]
    assert "call_2" in (pointed.get("tool_use_id"), pointed.get("call_id"))  # photo's result
    results = _results(result.messages)
    assert results["call_2"].status is ToolStatus.ERROR and "80 bytes" in results["call_2"].content
    assert results["call_1"].status is ToolStatus.OK and results["call_1"].images
    assert _sent_image(sent[2])  # the screenshot's image goes again; the photo's does not
    photo_b64 = base64.b64encode(PNG + b"\0" * 10).decode()
    assert photo_b64 in json.dumps(sent[1]) and photo_b64 not in json.dumps(sent[2])


def test_chat_names_no_call_so_every_image_result_of_the_round_is_answered() -> None:
    first, answer = _two_images("chat")
    with FaultServer(json_reply(first), status(400, OPENAI_400), json_reply(answer)) as server:
        model = OpenAIChatModel("m", base_url=server.url + "/v1", api_key="k")
        result = Agent(model, [screenshot, photo]).run_sync("Go")
    results = _results(result.messages)
    assert {r.status for r in results.values()} == {ToolStatus.ERROR}
    assert "70 bytes" in results["call_1"].content and "80 bytes" in results["call_2"].content
