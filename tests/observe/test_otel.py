"""OpenTelemetry spans (GenAI semantic conventions), checked with the SDK's in-memory exporter."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Permissions
from toolwire.cli import main
from toolwire.observe.replay import assert_replays
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import CorrectingModel, search, write

sdk_trace = pytest.importorskip(
    "opentelemetry.sdk.trace", reason="opentelemetry-sdk is not installed"
)
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import StatusCode  # noqa: E402

_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The global tracer provider (set once per process, as OpenTelemetry allows)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, sdk_trace.TracerProvider):
        provider = sdk_trace.TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def _by_name(exporter: InMemorySpanExporter) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


def test_spans_of_a_run(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel(
        [
            tool_call_turn(
                ("search", {"q": "a"}),
                ("search", {"q": "b"}),
                ("write", {"path": "p"}),
                fragment=3,
                usage={"prompt_tokens": 10, "completion_tokens": 4},
            ),
            text_turn("done", usage={"prompt_tokens": 20, "completion_tokens": 2}),
        ],
        chunk_delay=0.001,
    )
    result = Agent(model, [search, write], instrument=True).run_sync("go")
    found = _by_name(spans)
    [run] = found["invoke_agent toolwire"]
    chats = found["chat scripted"]
    tools = found["execute_tool search"] + found["execute_tool write"]
    assert run.parent is None and run.attributes["gen_ai.conversation.id"] == result.run_id
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert len(chats) == 2 and len(tools) == 3
    for span in chats + tools:  # siblings under the run's span
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id
    first = min(chats, key=lambda s: s.start_time)
    assert first.attributes["gen_ai.request.model"] == "scripted"
    assert first.attributes["gen_ai.usage.input_tokens"] == 10
    assert first.attributes["gen_ai.usage.output_tokens"] == 4
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert first.kind == trace.SpanKind.CLIENT
    by_id = {s.attributes["gen_ai.tool.call.id"]: s for s in tools}
    assert set(by_id) == {m.id for m in result.messages[1].tool_calls}  # type: ignore[union-attr]
    searches = [s for s in tools if s.attributes["gen_ai.tool.name"] == "search"]
    # The two searches started early, while the model was still streaming, and overlap.
    assert all(s.attributes["toolwire.tool.early"] for s in searches)
    assert all(s.start_time < first.end_time for s in searches)
    [failed] = found["execute_tool write"]
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.attributes["toolwire.tool.status"] == "error"
    assert all(s.status.status_code is StatusCode.UNSET for s in searches)
    assert run.start_time <= min(s.start_time for s in chats + tools)
    assert run.end_time >= max(s.end_time for s in chats + tools)


def test_a_failed_run_marks_its_span(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([tool_call_turn(("search", {"q": "a"}))])
    with pytest.raises(Exception, match="ran out of turns"):
        Agent(model, [search], instrument=True).run_sync("go")
    found = _by_name(spans)
    [run] = found["invoke_agent toolwire"]
    assert run.status.status_code is StatusCode.ERROR
    assert run.attributes["error.type"] == "CallerError"
    assert [c.status.status_code for c in found["chat scripted"]] == [
        StatusCode.UNSET,
        StatusCode.ERROR,
    ]


def test_discarded_calls_get_a_span(spans: InMemorySpanExporter) -> None:
    Agent(CorrectingModel(), [search], instrument=True).run_sync("go")
    statuses = sorted(
        s.attributes["toolwire.tool.status"] for s in _by_name(spans)["execute_tool search"]
    )
    assert statuses == ["discarded", "ok"]


def test_off_unless_asked(spans: InMemorySpanExporter) -> None:
    Agent(ScriptedModel([text_turn("x")]), []).run_sync("go")
    assert spans.get_finished_spans() == ()


def test_a_provider_spec_splits_into_provider_and_model(spans: InMemorySpanExporter) -> None:
    model = ScriptedModel([text_turn("x")], name="openai:gpt-4.1-mini")
    Agent(model, [], instrument=True).run_sync("go")
    [chat] = _by_name(spans)["chat gpt-4.1-mini"]
    assert chat.attributes["gen_ai.request.model"] == "gpt-4.1-mini"
    assert chat.attributes["gen_ai.provider.name"] == "openai"


def test_a_denied_call_has_one_failure_class_everywhere(
    spans: InMemorySpanExporter, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Diagnostics, the audit log, ``toolwire log``, the span and replay agree: ``denied``."""
    path = tmp_path / "runs.db"
    model = ScriptedModel(
        [tool_call_turn(("write", {"path": "p"}), ("search", {"q": "a"})), text_turn("done")]
    )
    deny = Permissions(deny=["write"])
    result = Agent(model, [search, write], permissions=deny, log=path, instrument=True).run_sync(
        "go"
    )
    assert [(f.kind, f.tool) for f in result.diagnostics.failures] == [("denied", "write")]
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT tool, status, failure_class FROM calls ORDER BY idx").fetchall()
    conn.close()
    assert rows == [("write", "denied", "denied"), ("search", "ok", None)]
    capsys.readouterr()
    assert main(["log", "--db", str(path), "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert (listed["calls"], listed["failures"]) == (2, 1)
    [span] = _by_name(spans)["execute_tool write"]
    assert span.attributes["error.type"] == "denied"
    assert span.attributes["toolwire.tool.status"] == "denied"
    assert span.status.status_code is StatusCode.ERROR
    assert_replays(path, permissions=deny)  # the same class again, read from the log
    with pytest.raises(AssertionError, match="failure class was 'denied', now 'tool_error'"):
        assert_replays(path)  # without the permissions, the call runs (and fails: no answer)


def test_a_fallback_models_answering_model_is_on_its_chat_span(
    spans: InMemorySpanExporter,
) -> None:
    from toolwire import FallbackModel, ProviderConnectionError

    class Unreachable:
        name = "unreachable"

        async def stream(self, request: Any) -> Any:
            raise ProviderConnectionError("connection refused")
            yield

    backup = ScriptedModel([text_turn("hi")], name="backup")
    Agent(FallbackModel(Unreachable(), backup), instrument=True).run_sync("go")
    [chat] = [s for s in spans.get_finished_spans() if s.name.startswith("chat ")]
    assert chat.attributes["gen_ai.response.model"] == "backup"


def test_a_call_with_an_image_ends_ok_once_the_provider_took_it(
    spans: InMemorySpanExporter,
) -> None:
    """Its span waits for the next request's answer (a 400 about the image would make
    it an error), then ends ok with the tool's own times."""
    from toolwire import Image

    png = b"\x89PNG\r\n\x1a\n" + bytes(16)

    def screenshot() -> list[Any]:
        """Take a screenshot."""
        return ["The page:", Image(png, media_type="image/png")]

    model = ScriptedModel([tool_call_turn(("screenshot", {})), text_turn("seen")])
    result = Agent(model, [screenshot], instrument=True).run_sync("look")
    assert result.output == "seen"
    found = _by_name(spans)
    [call] = found["execute_tool screenshot"]
    second = max(found["chat scripted"], key=lambda s: s.start_time)
    assert call.status.status_code is StatusCode.UNSET
    assert call.attributes["toolwire.tool.status"] == "ok"
    assert "toolwire.tool.images_refused" not in call.attributes
    assert call.end_time <= second.start_time  # the tool's time, not the wait


def test_an_early_calls_refused_image_marks_its_span() -> None:
    """An early call's result (with an image) comes while its own turn still streams;
    the turn's end does not end its span: the next request carries the image, and its
    400 about the image makes the span an error, as the log counts it."""
    from toolwire import Image, ProviderAPIError
    from toolwire.messages import ToolResult, Usage
    from toolwire.observe.otel import Instrumentation
    from toolwire.run.events import (
        RequestFailed,
        RequestStarted,
        ResponseDone,
        RunEnded,
        RunStarted,
        ToolResultReady,
    )
    from toolwire.run.model import ModelRequest
    from toolwire.tools.outcomes import refused_image_result
    from toolwire.wire.assembler import Assembler

    exporter = InMemorySpanExporter()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    shot = ToolResult.from_parts(
        "c1", "shot", ["page", Image(b"\x89PNG\r\n\x1a\n" + bytes(8), "image/png")]
    )
    refused = refused_image_result(shot, "image exceeds 5 MB maximum")
    error = ProviderAPIError("image exceeds 5 MB maximum", status=400)
    request = ModelRequest([])
    spans = Instrumentation(tracer_provider=provider).begin(RunStarted("r1", "m", [], {}, [], 1.0))
    spans(RequestStarted(1, request, 1.0))
    spans(ToolResultReady(0, shot, 1))  # early: before its turn ended
    spans(ResponseDone(1, Assembler().close(), 1.0, 1.1, 1.2))
    assert not [s for s in exporter.get_finished_spans() if s.name == "execute_tool shot"]
    spans(RequestStarted(2, request, 1.3))
    spans(RequestFailed(2, error, 1.3, None, 1.4, [(shot, refused)]))
    [span] = [s for s in exporter.get_finished_spans() if s.name == "execute_tool shot"]
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "tool_error"
    assert span.attributes["toolwire.tool.images_refused"] is True
    spans(RunEnded("r1", "completed", 1.5, None, None, 2, 2, Usage()))
