"""The proxy's audit log (``--log``): one run per proxied request.

Each request becomes a run of one model request in the ordinary audit log (so
``toolwire log``, ``inspect`` and ``trace`` show it: the history sent, the turn
toolwire assembled, usage), plus a ``proxied`` row with what a run has no place for:
the upstream's body exactly as received and what the client received, with the
notices it was told. It is the first thing to open when a client says a call was wrong.

Rows go through the log's writer thread (redacted like every row); the one blocking
step, waiting for the writer at the end of the run, runs in a worker thread.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..messages import Message, Usage
from ..observe.store import AuditLog, JsonValue
from ..run.events import RequestStarted, ResponseDone, RunEnded, RunStarted
from ..run.model import ModelRequest
from ..run.observers import new_run_id
from ..tools.outcomes import RunOutcome
from ..turn import Turn
from .request import ProxyCall

__all__ = ["Exchange", "ProxyLog"]


@dataclass(slots=True)
class Exchange:
    """One proxied request, as it went.

    Attributes:
        call: The client's request (``None``: it could not be read).
        status: The HTTP status the client got.
        raw: The upstream's body bytes as received (``None``: not an HTTP upstream).
        received: What the client received (SSE events or the JSON body).
        notices: What the client was told was repaired or dropped.
        turn: The assembled turn (``None``: the upstream failed first).
        outcome: ``ok``, ``error`` or ``cancelled`` (the client went away).
        error: What failed, if anything.
        started_at: When the request arrived.
        first_event_at: When the upstream's first event arrived.
    """

    call: ProxyCall | None
    status: int = 200
    raw: list[bytes] | None = None
    received: list[bytes] = field(default_factory=list)
    notices: list[dict[str, Any]] = field(default_factory=list)
    turn: Turn | None = None
    outcome: RunOutcome = "ok"
    error: BaseException | None = None
    started_at: float = field(default_factory=time.time)
    first_event_at: float | None = None


class ProxyLog:
    """Writes proxied requests to an :class:`~toolwire.observe.AuditLog`."""

    def __init__(self, path: str, upstream: str) -> None:
        self.log = AuditLog(path).open()
        self.upstream = upstream

    def record(self, exchange: Exchange) -> None:
        """Write one exchange (blocking: call it from a worker thread)."""
        call = exchange.call
        messages = _messages(call)
        tools = list(call.tools) if call else []
        run_id = new_run_id()
        settings = _settings(call)
        listener = self.log.begin(
            RunStarted(run_id, self._model(call), tools, settings, messages, exchange.started_at)
        )
        ended = time.time()
        request = ModelRequest(messages, tools, call.tool_choice if call else "auto")
        listener(RequestStarted(1, request, exchange.started_at))
        turn = exchange.turn
        if turn is not None:
            listener(ResponseDone(1, turn, exchange.started_at, exchange.first_event_at, ended))
        self.log.submit(
            (
                "INSERT INTO proxied (run_id, upstream, status, raw, received, notices)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    self.upstream,
                    exchange.status,
                    None if exchange.raw is None else _text(exchange.raw),
                    _text(exchange.received),
                    JsonValue(exchange.notices),
                ),
            )
        )
        usage = turn.usage if turn is not None else Usage()
        rounds = int(bool(turn is not None and turn.tool_calls))
        listener(RunEnded(run_id, exchange.outcome, ended, None, exchange.error, rounds, 1, usage))

    def close(self) -> None:
        """Flush and close the log."""
        self.log.close()

    def _model(self, call: ProxyCall | None) -> str:
        return f"serve:{call.model if call else '?'} via {self.upstream}"


def _messages(call: ProxyCall | None) -> list[Message]:
    """The client's history as neutral messages (none when it cannot be read)."""
    if call is None:
        return []
    from ..errors import ToolwireError
    from ..history.openai_chat import from_openai_chat

    try:
        return from_openai_chat(call.body["messages"])
    except ToolwireError:
        return []


def _settings(call: ProxyCall | None) -> dict[str, Any]:
    """The request's fields other than its history and tools."""
    if call is None:
        return {}
    skip = ("messages", "tools")
    return {k: v for k, v in call.body.items() if k not in skip}


def _text(parts: list[bytes]) -> str:
    return b"".join(parts).decode("utf-8", errors="replace")
