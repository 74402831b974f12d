"""One run's events, turned into audit-log rows.

This runs on the run's event loop, so it only copies what it needs into tuples and
queues them (:meth:`AuditLog.submit`); the few structured values (messages, tool
calls, tools, settings) are copied into plain data here, once per request, never per
fragment, and the writer thread redacts and encodes them
(:class:`~toolwire.observe.store.JsonValue`). A recorder that fails (a value it cannot
copy) records the failure as the log's error and never fails the run; before each
request after the first it waits for the writer off the event loop, within a bound
(:meth:`RunRecorder.settle`).

A request's row holds the messages added since the previous request, or all of them
when the history was rewritten in between (compacted, trimmed): then their count is
the row's ``history_length``.
"""

from __future__ import annotations

import asyncio
import enum
import json
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import AuditLogError
from ..history.tool_defs import chat_tool
from ..messages import ContentPart, Image, Message, ToolResult, UserMessage
from ..run.calls import CallRecord
from ..run.events import (
    CallDiscarded,
    ObservedEvent,
    RequestFailed,
    RequestStarted,
    ResponseDone,
    RunEnded,
    RunStarted,
    ToolProgress,
    ToolResultReady,
)
from ..run.pause import PendingCall
from ..run.progress import progress_text
from ..tools.outcomes import failure_class
from ..turn import Notice
from .store import SIGNED_FIELDS, AuditLogWarning, JsonValue

if TYPE_CHECKING:
    from .store import AuditLog, Row

__all__ = ["RunRecorder", "message_json"]

_INSERT_CALL = (
    "INSERT INTO calls (run_id, seq, round, idx, call_id, tool, arguments, repaired, status,"
    " result, started_at, ended_at, latency_ms, attempts, failure_class, early, reason, parts,"
    " retried) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_NOTICE = (
    "INSERT INTO notices (run_id, request, seq, kind, message, idx) VALUES (?, ?, ?, ?, ?, ?)"
)
# A call whose images the provider refused: its row becomes the error result that
# replaced the tool's (the call's latest row: ids may repeat across turns).
_IMAGES_REFUSED = (
    "UPDATE calls SET status = ?, failure_class = ?, result = ?, images_refused = 1"
    " WHERE run_id = ? AND seq = (SELECT MAX(seq) FROM calls"
    " WHERE run_id = ? AND call_id = ? AND status != 'discarded')"
)
# Plain ``?`` placeholders, the run id bound twice: Python 3.12.0-3.12.3 take a numbered
# one (``?4``) bound from a sequence for a named one and warn (an error in this suite).
_INSERT_IMAGE = "INSERT OR IGNORE INTO images (sha256, media_type, data) VALUES (?, ?, ?)"
# An image's key is a digest, never a secret: kept as it is by the redactor.
_IMAGE_KEYS = frozenset({"sha256"})


SETTLE_TIMEOUT = 30.0
"""Seconds a run waits (off its event loop) for the writer before a request and at
its end."""


def message_json(messages: list[Message]) -> str:
    """The neutral messages as JSON: their dataclass fields, enums by value (verbatim)."""
    return json.dumps([_plain(m) for m in messages])


def message_value(messages: list[Message]) -> JsonValue:
    """The neutral messages as a row value: redacted by the writer, except the signed
    and encrypted provider fields (thinking signatures, encrypted reasoning)."""
    return JsonValue([_plain(m) for m in messages], SIGNED_FIELDS | _IMAGE_KEYS)


def parts_json(parts: tuple[ContentPart, ...]) -> list[dict[str, Any]]:
    """Content parts as logged: text parts as they are, an image by its hash (its bytes
    go to the ``images`` table once)."""
    return [
        {"kind": "image", "sha256": p.sha256, "media_type": p.media_type, "bytes": len(p.data)}
        if isinstance(p, Image)
        else {"kind": "text", "text": p.text}
        for p in parts
    ]


def _untold(turn: list[Notice], heard: list[Notice]) -> list[Notice]:
    """The turn's notices that its stream did not announce. A streamed notice may be a
    copy of the turn's (its message scrubbed), so they are matched by kind and index."""
    told = Counter((n.kind, n.index) for n in heard)
    untold = []
    for notice in turn:
        key = (notice.kind, notice.index)
        if told[key]:
            told[key] -= 1
        else:
            untold.append(notice)
    return untold


def _copy(value: Any) -> Any:
    """A copy of JSON-like data (its containers; strings are immutable)."""
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """A message or part as a dict of its fields (``dataclasses.asdict`` without the
    deep copies: one message per result, once per request, on the event loop)."""
    out: dict[str, Any]
    if type(value) is ToolResult:  # the common case, written out
        out = {
            "call_id": value.call_id,
            "name": value.name,
            "content": value.content,
            "status": value.status.value,
            "role": "tool",
        }
        if value.parts:
            out["parts"] = parts_json(value.parts)
        return out
    out = {}
    for name in value.__dataclass_fields__:
        item = getattr(value, name)
        if name == "parts" and isinstance(item, tuple):  # a user message's content parts
            if not item:
                continue
            item = parts_json(item)
        elif isinstance(item, list):
            item = [_plain(part) if hasattr(part, "__dataclass_fields__") else _copy(part)
                    for part in item]  # fmt: skip
        elif isinstance(item, enum.Enum):
            item = item.value
        elif isinstance(item, dict):  # provider data, a caller: encoded in another thread
            item = _copy(item)
        out[name] = item
    return out


class RunRecorder:
    """The listener that writes one run to an :class:`~toolwire.observe.AuditLog`."""

    def __init__(self, log: AuditLog, start: RunStarted) -> None:
        self._log = log
        self._start = start
        self.run_id = start.run_id
        self._requests = 0
        self._driven = False  # a driver awaits settle() (Agent.run does; a relay may not)
        self._done = False  # RunEnded was recorded
        self._calls = 0
        self._progress = 0
        self._sent = 0  # messages already recorded with an earlier request
        self._last: Message | None = None  # the last of them
        self._request: RequestStarted | None = None
        self._images: set[str] = set()  # hashes of the images already submitted
        self._round = 0  # the round of the latest request
        self._open = False  # a request is in flight: its notices wait for its row
        self._heard: list[Notice] = []  # the notices streamed while it was
        self._noted = 0  # notices recorded for the latest request
        self._handlers: dict[type, Callable[[Any], None]] = {
            RequestStarted: self._started,
            ResponseDone: self._response,
            RequestFailed: self._failed,
            ToolResultReady: self._call,
            CallDiscarded: self._discarded,
            ToolProgress: self._progressed,
            Notice: self._noticed,
            RunEnded: self._ended,
        }

    def continue_after(
        self, requests: int, calls: int, round_: int, progress: int = 0, noted: int = 0
    ) -> None:
        """A resumed run: number its requests, calls, progress rows and the last
        request's notices after those in the log (its last round is the one it resumes
        in)."""
        self._requests, self._calls, self._round = requests, calls, round_
        self._progress, self._noted = progress, noted

    def start_row(self) -> Row:
        """The ``runs`` row (written before the first request)."""
        start = self._start
        prompts = [m.content for m in start.messages if isinstance(m, UserMessage)]
        return (
            "INSERT INTO runs (run_id, started_at, model, tools, settings, prompt, outcome, pid)"
            " VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
            (
                start.run_id,
                start.at,
                start.model,
                JsonValue([chat_tool(t) for t in start.tools]),  # fresh Chat dicts
                JsonValue(_copy(start.settings)),
                prompts[-1] if prompts else None,
                os.getpid(),
            ),
        )

    def __call__(self, event: ObservedEvent) -> None:
        """Record one event; one dict lookup for the many that need nothing (deltas)."""
        handler = self._handlers.get(type(event))
        if handler is None:
            return
        try:
            handler(event)
        except Exception as exc:
            if type(event) is RunEnded and isinstance(exc, AuditLogError):
                raise  # the strict log's error, raised on purpose
            self._log.error = AuditLogError(
                self._log.path, f"an event could not be recorded ({type(exc).__name__}: {exc})"
            )
            if type(event) is RunEnded:
                self._report()

    async def settle(self) -> None:
        """Wait, off the event loop and at most :data:`SETTLE_TIMEOUT`, until what was
        recorded is committed, so that the loop keeps running while a large row is
        written. Awaited before each request (a killed run loses at most the round in
        flight: one wait per request, not per call) and after a run that ended well
        (it is in the file when ``Agent.run`` returns; the log's errors are reported
        then).

        Raises:
            AuditLogError: Only when ``strict``: rows of the run could not be written.
        """
        self._driven = True
        if self._done:
            self._finish(await asyncio.to_thread(self._log.flush, SETTLE_TIMEOUT))
        elif self._requests:
            await asyncio.to_thread(self._log.flush, SETTLE_TIMEOUT)

    def _started(self, event: RequestStarted) -> None:
        self._request = event
        self._round = event.round
        self._open, self._heard = True, []

    def _extends(self, messages: list[Message]) -> bool:
        """Whether ``messages`` continue what the previous request sent (a history that
        was rewritten, e.g. compacted, is recorded whole)."""
        sent = self._sent
        return sent == 0 or (len(messages) >= sent and messages[sent - 1] is self._last)

    def _response(self, event: ResponseDone) -> None:
        request = self._request
        messages = list(request.request.messages) if request is not None else []
        new = messages[self._sent :] if self._extends(messages) else messages
        self._sent, self._last = len(messages), (messages[-1] if messages else None)
        for message in new:
            if isinstance(message, (ToolResult, UserMessage)) and message.parts:
                self._store_images(message.parts)
        turn = event.turn
        message = turn.message
        calls = [
            {"id": c.id, "name": c.name, "arguments": c.arguments}
            | ({"freeform": True} if c.freeform else {})  # a custom call: replayed as one
            for c in message.tool_calls
        ]
        usage = turn.usage
        self._log.submit(
            self._request_row(
                event,
                messages=message_value(new),
                finish_reason=turn.finish_reason,
                text=message.text,
                reasoning=message.reasoning,
                tool_calls=JsonValue(calls),
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                reasoning_tokens=usage.reasoning_tokens,
                refusal=message.refusal,
                refused=int(turn.refused),
                model=turn.model or self._start.model,  # a FallbackModel's: the one that answered
                message=message_value([message]),  # verbatim: a resumed run sends it back
            )
        )
        self._close_request(turn.notices)

    def _failed(self, event: RequestFailed) -> None:
        """The row of a request that failed: the error instead of a turn. Its messages
        are recorded with the next request that gets an answer (this row holds none),
        so a history rebuilt from the answered rows stays whole."""
        error = event.error
        self._log.submit(
            self._request_row(
                event,
                messages="[]",  # no turn: no text, no calls, no tokens
                text="",
                reasoning="",
                tool_calls="[]",
                input_tokens=0,
                output_tokens=0,
                model=self._start.model,
                error=getattr(error, "message", None) or str(error) or type(error).__name__,
                error_type=type(error).__name__,
                error_status=event.status,
            )
        )
        self._close_request([])  # a retry's notices say what was tried before it failed
        for _, answer in event.answered:  # calls whose images the provider refused
            status = answer.status
            row = (status.value, failure_class(None, status), answer.content, self.run_id,
                   self.run_id, answer.call_id)  # fmt: skip
            self._log.submit((_IMAGES_REFUSED, row), urgent=True)

    def _request_row(self, event: ResponseDone | RequestFailed, **columns: object) -> Row:
        """The next ``requests`` row: the columns every request has (the run, its
        number, its round and times, what was sent), then ``columns``: an answered
        turn's, or a failure's."""
        self._requests += 1
        sent = self._request.request if self._request is not None else None
        values = {
            "run_id": self.run_id,
            "seq": self._requests,
            "round": event.round,
            "started_at": event.started_at,
            "first_event_at": event.first_event_at,
            "ended_at": event.ended_at,
            "latency_ms": (event.ended_at - event.started_at) * 1000.0,
            "history_length": len(sent.messages) if sent is not None else 0,
            "tool_choice": sent.tool_choice if sent is not None else None,
        } | columns
        names, marks = ", ".join(values), ", ".join("?" * len(values))
        return f"INSERT INTO requests ({names}) VALUES ({marks})", tuple(values.values())

    def _noticed(self, notice: Notice) -> None:
        """A notice streamed while a request is in flight waits for that request's row;
        one the agent adds after the turn ended (text shaped like a call, a tool choice
        ignored) belongs to the latest request and is recorded at once."""
        if self._open:
            self._heard.append(notice)
        else:
            self._note(notice)

    def _close_request(self, turn: list[Notice]) -> None:
        """Record the notices of the request whose row was just submitted: those its
        stream told the caller, as told (an HTTP provider's copy has the request's
        credentials masked), then those only its turn carries (found as the turn was
        finished, e.g. ``empty_call``)."""
        heard, self._heard = self._heard, []
        self._open, self._noted = False, 0
        for notice in heard + _untold(turn, heard):
            self._note(notice)

    def _note(self, notice: Notice) -> None:
        self._noted += 1
        row = (self.run_id, self._requests, self._noted, notice.kind, notice.message, notice.index)
        self._log.submit((_INSERT_NOTICE, row))

    def _store_images(self, parts: tuple[ContentPart, ...]) -> None:
        """Submit each image not submitted yet: one row per distinct image, ever (the
        table's key makes a repeat across runs a no-op too)."""
        for part in parts:
            if isinstance(part, Image) and (digest := part.sha256) not in self._images:
                self._images.add(digest)
                self._log.submit((_INSERT_IMAGE, (digest, part.media_type, part.data)))

    def _call(self, event: ToolResultReady) -> None:
        result, call = event.result, event.call
        status = result.status
        parts = None
        if result.parts:
            self._store_images(result.parts)
            parts = JsonValue(parts_json(result.parts), _IMAGE_KEYS)
        if call is None:  # a result made outside the executor: what it says is all we know
            self._insert_call(event.round, event.index, result.call_id, result.name, status.value,
                              text=result.content, failure=failure_class(None, status),
                              parts=parts)  # fmt: skip
            return
        self._insert_call(
            event.round, call.index, call.call_id, call.name, status.value,
            call=call, text=call.full_result or result.content,
            failure=call.failure_class, parts=parts,
        )  # fmt: skip

    def _progressed(self, event: ToolProgress) -> None:
        """A progress row: its text made as a result's, redacted by the writer like any text."""
        self._progress += 1
        self._log.submit(
            (
                "INSERT INTO progress (run_id, seq, round, idx, call_id, tool, at, value)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    self.run_id,
                    self._progress,
                    event.round,
                    event.index,
                    event.call_id,
                    event.name,
                    time.time(),
                    progress_text(event.value),
                ),
            )
        )

    def _discarded(self, event: CallDiscarded) -> None:
        self._insert_call(event.round, event.index, event.call_id, event.name, "discarded",
                          call=event.call, reason=event.reason)  # fmt: skip

    def _insert_call(  # noqa: PLR0913 — one keyword per column of a call's row
        self,
        round_: int,
        index: int,
        call_id: str,
        tool: str,
        status: str,
        *,
        call: CallRecord | None = None,
        text: str = "",
        failure: str | None = None,
        reason: str | None = None,
        parts: JsonValue | None = None,
    ) -> None:
        self._calls += 1
        params = (
            self.run_id, self._calls, round_, index, call_id, tool,
            call.arguments if call else "", int(call.repaired) if call else 0,
            status, text,
            call.started_at if call else None, call.ended_at if call else time.time(),
            call.latency_ms if call else None, call.attempts if call else 0,
            failure, int(call.early) if call else 0, reason, parts,
            json.dumps(call.retried) if call and call.retried else None,
        )  # fmt: skip
        self._log.submit((_INSERT_CALL, params), urgent=True)  # durable as soon as it ends

    def _ended(self, event: RunEnded) -> None:
        error = event.error
        usage = event.usage
        output = event.result.output if event.result is not None else None
        self._log.submit(
            (
                "UPDATE runs SET ended_at = ?, outcome = ?, error = ?, error_type = ?, output = ?,"
                " rounds = ?, requests = ?, input_tokens = ?, output_tokens = ?,"
                " cache_read_tokens = ?, cache_write_tokens = ?, reasoning_tokens = ?"
                " WHERE run_id = ?",
                (
                    event.at,
                    event.outcome,
                    None if error is None else (str(error) or type(error).__name__),
                    None if error is None else type(error).__name__,
                    output,
                    event.rounds,
                    event.requests,
                    usage.input_tokens,
                    usage.output_tokens,
                    usage.cache_read_tokens,
                    usage.cache_write_tokens,
                    usage.reasoning_tokens,
                    self.run_id,
                ),
            )
        )
        result = event.result
        if result is not None and result.paused:
            self._log.submit(self._paused_row(event.at, result.pending))
        self._done = True
        if not self._driven or event.outcome != "ok":
            # Nobody awaits settle() after this (a failed or cancelled run, a relay):
            # the wait for the last rows is here, bounded.
            self._finish(self._log.flush(SETTLE_TIMEOUT))

    def _paused_row(self, at: float, pending: list[PendingCall]) -> Row:
        """The timeline row of a paused run: the calls that wait for approval."""
        from .durable import timeline_row

        detail = {
            "pending": [p.call_id for p in pending],
            "calls": [{"call_id": p.call_id, "tool": p.tool, "arguments": p.raw_arguments}
                      for p in pending],
        }  # fmt: skip
        return timeline_row(self.run_id, at, "paused", detail, round_=self._round)

    def _finish(self, flushed: bool) -> None:
        """The run ended and its rows were waited for: report what went wrong."""
        if not flushed:
            self._log.error = AuditLogError(
                self._log.path,
                f"the writer did not finish within {SETTLE_TIMEOUT:g} s (the last rows are"
                " written later, or lost if the process ends first)",
            )
        self._report()

    def _report(self) -> None:
        """Warn about (or, strict, raise) what the log failed to write during the run."""
        error, self._log.error = self._log.error, None
        if error is not None:  # the writer thread failed after the run began
            if self._log.strict:
                raise error
            warnings.warn(f"{error}; rows of the run were lost", AuditLogWarning, stacklevel=3)
