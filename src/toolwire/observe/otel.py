"""OpenTelemetry spans for runs, following the GenAI semantic conventions.

``Agent(..., instrument=True)`` adds an :class:`Instrumentation` hook. Per run it opens
one ``invoke_agent`` span; each model request is a ``chat {model}`` span and each tool
call an ``execute_tool {tool}`` span, all children of the run's span, so that the
calls of a parallel batch are siblings and show overlapping in any trace viewer. Span
times are the event times the run reports (a call's span covers exactly its run, an
early-started call begins inside its ``chat`` span's time). Spans go through the
global tracer provider: configure an SDK and exporter as usual; with only
``opentelemetry-api`` installed they are no-ops.

Attributes used (https://opentelemetry.io/docs/specs/semconv/gen-ai/):
``gen_ai.operation.name``, ``gen_ai.request.model``, ``gen_ai.provider.name`` (from a
``provider:model`` spec), ``gen_ai.agent.name``,
``gen_ai.conversation.id`` (the run id), ``gen_ai.response.finish_reasons``,
``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``, ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.type``, ``error.type`` (a failed request's
``chat`` span also ``http.response.status_code``, when the provider answered one); toolwire's own under
``toolwire.*`` (the call's status, round, early start, repair, attempts, images refused).

A call whose result holds images keeps its span open (its times already set) until the
next request is answered or fails: a provider's 400 about those images turns the call
into an error result (:mod:`toolwire.run.refused_images`), and its span then ends with
that error, as the audit log and the run's diagnostics count it. A span cannot change
once ended, so it waits.
"""

from __future__ import annotations

from typing import Any

from ..errors import CallerError
from ..messages import ToolResult
from ..run.calls import CallRecord
from ..run.events import (
    CallDiscarded,
    ObservedEvent,
    RequestFailed,
    RequestStarted,
    ResponseDone,
    RunEnded,
    RunStarted,
    ToolResultReady,
)
from ..run.observers import RunListener
from ..tools.outcomes import failure_class

__all__ = ["Instrumentation"]


def _ns(seconds: float) -> int:
    return int(seconds * 1e9)


def _model_attributes(spec: str) -> dict[str, str]:
    """``gen_ai.request.model`` and, for a spec such as ``openai:gpt-4.1-mini``,
    ``gen_ai.provider.name`` (the part before the colon)."""
    provider, colon, model = spec.partition(":")
    if not colon or not provider or not model:
        return {"gen_ai.request.model": spec}
    return {"gen_ai.request.model": model, "gen_ai.provider.name": provider}


class Instrumentation:
    """The OpenTelemetry hook (:class:`~toolwire.run.observers.RunHook`).

    Args:
        tracer_provider: Where spans go (default: the global tracer provider).

    Raises:
        CallerError: ``opentelemetry-api`` is not installed (``toolwire[otel]``).
    """

    def __init__(self, tracer_provider: Any = None) -> None:
        try:
            from opentelemetry import trace
        except ImportError:
            raise CallerError(
                "instrument=True needs the opentelemetry-api package",
                hint="pip install 'toolwire[otel]' (and an OpenTelemetry SDK to export spans)",
            ) from None
        from .. import __version__

        self._trace = trace
        self._tracer = trace.get_tracer("toolwire", __version__, tracer_provider=tracer_provider)

    def begin(self, start: RunStarted) -> RunListener:
        """Open the run's span; the listener adds the rest."""
        return _RunSpans(self._trace, self._tracer, start)


class _RunSpans:
    """The spans of one run."""

    def __init__(self, trace: Any, tracer: Any, start: RunStarted) -> None:
        self._trace = trace
        self._tracer = tracer
        self._model = start.model
        self._run_id = start.run_id
        self._span = tracer.start_span(
            "invoke_agent toolwire",
            kind=trace.SpanKind.INTERNAL,
            start_time=_ns(start.at),
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "toolwire",
                **_model_attributes(start.model),
                "gen_ai.conversation.id": start.run_id,
                "toolwire.run_id": start.run_id,
            },
        )
        self._context = trace.set_span_in_context(self._span)
        self._chat: Any = None
        # Spans of calls whose results hold images (call id: span, end time): waiting
        # for the next request, then in flight with it (an early call's result can
        # come while the request before is still streaming).
        self._imaged: dict[str, tuple[Any, int | None]] = {}
        self._sent: dict[str, tuple[Any, int | None]] = {}
        self._handlers = {
            RequestStarted: self._request,
            ResponseDone: self._response,
            RequestFailed: self._failed,
            ToolResultReady: self._result,
            CallDiscarded: self._discarded,
            RunEnded: self._ended,
        }

    def __call__(self, event: ObservedEvent) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)  # type: ignore[operator]

    def _request(self, event: RequestStarted) -> None:
        self._sent.update(self._imaged)  # this request carries their images
        self._imaged = {}
        self._chat = self._tracer.start_span(
            f"chat {_model_attributes(self._model)['gen_ai.request.model']}",
            context=self._context,
            kind=self._trace.SpanKind.CLIENT,
            start_time=_ns(event.at),
            attributes={
                "gen_ai.operation.name": "chat",
                **_model_attributes(self._model),
                "gen_ai.conversation.id": self._run_id,
                "toolwire.round": event.round,
            },
        )

    def _response(self, event: ResponseDone) -> None:
        span, self._chat = self._chat, None
        if span is None:
            return
        turn = event.turn
        span.set_attribute("gen_ai.usage.input_tokens", turn.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", turn.usage.output_tokens)
        if turn.finish_reason is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [turn.finish_reason])
        span.set_attribute("toolwire.tool_calls", len(turn.requests))
        if turn.model is not None:  # a FallbackModel's: the model that answered
            span.set_attribute("gen_ai.response.model", turn.model)
        span.end(end_time=_ns(event.ended_at))
        self._end_sent()  # the provider took the images

    def _failed(self, event: RequestFailed) -> None:
        """The request's span ends with its error (the run may go on: a resent request
        has a span of its own)."""
        for _, answer in event.answered:  # the calls whose images the provider refused
            self._end_refused(answer)
        self._end_sent()
        span, self._chat = self._chat, None
        if span is None:
            return
        if event.status is not None:
            span.set_attribute("http.response.status_code", event.status)
        self._end_failed(span, event.error, event.ended_at)

    def _end_failed(self, span: Any, error: BaseException, at: float) -> None:
        span.set_attribute("error.type", type(error).__name__)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error)))
        span.end(end_time=_ns(at))

    def _tool_span(
        self, name: str, call_id: str, round_: int, call: CallRecord | None, status: str
    ) -> Any:
        ended = call.ended_at if call is not None else None
        started = call.started_at if call is not None and call.started_at is not None else ended
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
            "toolwire.round": round_,
            "toolwire.tool.status": status,
        }
        if call is not None:
            attributes["toolwire.tool.early"] = call.early
            attributes["toolwire.tool.repaired"] = call.repaired
            attributes["toolwire.tool.attempts"] = call.attempts
        span = self._tracer.start_span(
            f"execute_tool {name}",
            context=self._context,
            kind=self._trace.SpanKind.INTERNAL,
            start_time=None if started is None else _ns(started),
            attributes=attributes,
        )
        return span, ended

    def _result(self, event: ToolResultReady) -> None:
        result = event.result
        status = result.status.value
        span, ended = self._tool_span(result.name, result.call_id, event.round, event.call, status)
        call = event.call
        kind = call.failure_class if call is not None else failure_class(None, result.status)
        if kind is not None:
            self._set_error(span, kind, result.content)
        end = None if ended is None else _ns(ended)
        if result.parts and result.images:  # the provider may still refuse them
            self._imaged[result.call_id] = (span, end)
        else:
            span.end(end_time=end)

    def _set_error(self, span: Any, kind: str, reason: str) -> None:
        span.set_attribute("error.type", kind)
        span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, reason[:200]))

    def _end_refused(self, answer: ToolResult) -> None:
        """End a refused-image call's span as its error result (the call's time stays
        the tool's run)."""
        held = self._sent.pop(answer.call_id, None)
        if held is None:
            return
        span, end = held
        span.set_attribute("toolwire.tool.status", answer.status.value)
        span.set_attribute("toolwire.tool.images_refused", True)
        kind = failure_class(None, answer.status)
        self._set_error(span, kind or answer.status.value, answer.content)
        span.end(end_time=end)

    def _end_sent(self) -> None:
        """End the spans of the calls whose images the latest request carried and the
        provider did not refuse."""
        held, self._sent = self._sent, {}
        for span, end in held.values():
            span.end(end_time=end)

    def _discarded(self, event: CallDiscarded) -> None:
        span, ended = self._tool_span(
            event.name, event.call_id, event.round, event.call, "discarded"
        )
        span.set_attribute("toolwire.tool.discard_reason", event.reason)
        span.end(end_time=None if ended is None else _ns(ended))

    def _ended(self, event: RunEnded) -> None:
        error = event.error
        if self._chat is not None:  # the run stopped while its request was in flight
            if error is not None:
                self._end_failed(self._chat, error, event.at)
            else:
                self._chat.end(end_time=_ns(event.at))
            self._chat = None
        self._sent.update(self._imaged)  # the run ended: no request will carry them
        self._imaged = {}
        self._end_sent()
        span = self._span
        span.set_attribute("gen_ai.usage.input_tokens", event.usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", event.usage.output_tokens)
        span.set_attribute("toolwire.rounds", event.rounds)
        span.set_attribute("toolwire.outcome", event.outcome)
        if error is not None:
            span.set_attribute("error.type", type(error).__name__)
            span.record_exception(error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(error)))
        span.end(end_time=_ns(event.at))
