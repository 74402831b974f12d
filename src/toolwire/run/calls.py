"""One call of a turn as the executor holds it: one explicit state, and how it went.

A :class:`TurnCall` is always in exactly one :class:`CallState`, and moves only along
:data:`TRANSITIONS` (one table, as h11 keeps a connection's states): a flag per fact
would let a call be, say, both answered and about to run. What a call *is* (its
request, validation, tool, whether it is concurrency-safe) does not change and is not
state; how it went (when it started, how many attempts, the full result text) is what
:class:`CallRecord` reports to observers.
"""

from __future__ import annotations

import asyncio
import enum
import time
from dataclasses import dataclass, field
from typing import Any

from ..messages import ToolResult
from ..tools import outcomes
from ..tools.outcomes import FailureClass
from ..tools.tool import Tool
from ..tools.validate import Validation, valid
from ..turn import ToolRequest

__all__ = ["TRANSITIONS", "CallRecord", "CallState", "Discarded", "TurnCall"]


@dataclass(slots=True)  # not frozen: a frozen __init__ costs ~1 µs more per call
class CallRecord:
    """How one call went, for observers (the audit log, tracing): what the model sent,
    what was done with it, and when.

    Attributes:
        index: The provider's index of the call.
        call_id: Its id.
        name: Its tool name.
        arguments: The arguments text exactly as the model sent it.
        repaired: Whether the arguments were malformed JSON that repair recovered.
        validation_kind: The validation failure class (``None``: the call was valid).
        early: Whether it started while the model was still streaming.
        started_at: When it started (``time.time()``; ``None``: it never ran).
        ended_at: When it got its result (or was discarded).
        attempts: How many times the tool ran (retries included; 0: never).
        full_result: The whole result text when the model got a cut one (``None``:
            the model saw it all).
        failure_class: Why it failed (:func:`toolwire.tools.outcomes.failure_class`;
            ``None``: it did not fail, or it was stopped).
        retried: For each attempt that failed and was retried: when it failed and when
            the next attempt began (after the backoff); empty when it ran once.
    """

    index: int
    call_id: str
    name: str
    arguments: str
    repaired: bool
    validation_kind: str | None
    early: bool
    started_at: float | None
    ended_at: float
    attempts: int
    full_result: str | None = None
    failure_class: FailureClass | None = None
    retried: tuple[tuple[float, float], ...] = ()

    @property
    def latency_ms(self) -> float | None:
        """Milliseconds from start to result (``None``: it never started)."""
        if self.started_at is None:
            return None
        return (self.ended_at - self.started_at) * 1000.0


@dataclass(frozen=True, slots=True)
class Discarded:
    """A call that started early and was then cancelled because the turn changed.

    Attributes:
        index: The provider's index of the call.
        call_id: Its id.
        name: Its tool name.
        reason: Why it was cancelled.
        ran: Whether its tool had already started (or finished) when it was discarded.
        call: How it ran until then.
    """

    index: int
    call_id: str
    name: str
    reason: str
    ran: bool = False
    call: CallRecord | None = field(default=None, compare=False)


class CallState(enum.Enum):
    """Where a call of a turn is."""

    WAITING = "waiting"
    """Valid; waits for an early start or for its batch. (An invalid call is answered
    when it is prepared, and goes straight to ``DONE``.)"""
    ASKING = "asking"
    """The permission gate is deciding (asked again if a batch budget cut it short)."""
    ALLOWED = "allowed"
    """It may run (the gate allowed it, or there is none); its tool has not begun."""
    RUNNING = "running"
    """Its tool is known to have begun (a sync tool's once its thread took the job):
    stopping it now answers ``cancelled``, not ``not_executed``. It stays here when a
    batch budget cuts it and it runs again."""
    DONE = "done"
    """It has its one result."""
    HELD = "held"
    """The gate held it for a decision made outside the run (a paused run): it gets
    no result in this run; a resumed run asks again."""
    DISCARDED = "discarded"
    """An early start that the final turn replaced or that the stream retracted."""

    # Members are singletons compared by identity: hash them by identity too. (Enum's
    # own __hash__ is Python code, and every transition hashes a state.)
    __hash__ = object.__hash__

    successors: frozenset[CallState]
    """Where this state may go: :data:`TRANSITIONS`, plus ``DISCARDED`` from any state but
    ``DISCARDED`` (set below, once: one set test per move)."""


TRANSITIONS: dict[CallState, frozenset[CallState]] = {
    CallState.WAITING: frozenset({CallState.ASKING, CallState.ALLOWED, CallState.DONE}),
    CallState.ASKING: frozenset(
        {CallState.ASKING, CallState.ALLOWED, CallState.DONE, CallState.HELD}
    ),
    CallState.ALLOWED: frozenset({CallState.RUNNING, CallState.DONE}),
    CallState.RUNNING: frozenset({CallState.DONE}),
    CallState.DONE: frozenset(),
    CallState.HELD: frozenset({CallState.DONE}),  # the run stopped: answered after all
    CallState.DISCARDED: frozenset(),
}
"""Where each state may go. Any state but ``DISCARDED`` may also become ``DISCARDED``
(a started or answered early call whose reading the final turn replaced)."""

for _state in CallState:
    _state.successors = TRANSITIONS[_state] | (
        frozenset() if _state is CallState.DISCARDED else {CallState.DISCARDED}
    )
del _state

# The states as module constants, for the code that reads one per call: on Python 3.11
# the enum metaclass defines ``__getattr__``, so every read of an attribute of an enum
# class (``CallState.DONE``) takes the generic slot path, about 1,000 instructions, where
# a module global costs tens.
WAITING = CallState.WAITING
ASKING = CallState.ASKING
ALLOWED = CallState.ALLOWED
RUNNING = CallState.RUNNING
DONE = CallState.DONE
HELD = CallState.HELD
DISCARDED = CallState.DISCARDED


class TurnCall:
    """One call of a turn: what it is, its state, and what observers are told."""

    __slots__ = (
        "attempts",
        "early",
        "full_result",
        "harmless",
        "index",
        "input",
        "request",
        "result",
        "retried",
        "runnable",
        "safe",
        "started_at",
        "state",
        "task",
        "tool",
        "verdict",
    )

    def __init__(
        self,
        request: ToolRequest,
        validation: Validation | None,
        tool: Tool | None,
        value: Any = None,
    ) -> None:
        """A call of ``tool`` (``None``: no such tool) with its ``validation``, or, for a
        call :meth:`Toolset.admit <toolwire.tools.tool.Toolset.admit>` admitted without
        one (``None``), its valid input ``value``."""
        self.index = request.index
        self.request = request
        # Its verdict (None: admitted as the common call, whose Validation is made only
        # when read: the validation property) and the input its tool runs with.
        self.verdict = validation
        self.input = value if validation is None else validation.input
        self.tool = tool
        # Valid and naming a known tool: it may be executed. What a call is does not
        # change, so this is worked out once, not by a property read three times a call.
        self.runnable = runnable = tool is not None and (validation is None or validation.ok)
        self.state = WAITING
        self.result: ToolResult | None = None  # set on DONE (or DISCARDED)
        # Concurrency-safe: it may share a batch. Asked once, of a runnable call only; a
        # policy that is a bool (the common tool) needs no call to say so. This and
        # harmless are the tool's call facts, worked out once per tool (Tool's).
        safe = tool._safe if runnable else False  # type: ignore[union-attr]
        self.safe = is_safe(tool, self.input) if safe is None else safe
        # Running it and then discarding it is harmless: no side effects, or idempotent.
        self.harmless = tool is not None and tool._harmless
        # The task running it, once launched; a call that ended as its task started (an
        # eager start) has the turn's done future instead (TurnRun._launch).
        self.task: asyncio.Future[None] | None = None
        # For observers (CallRecord): set when the call is launched and run.
        self.early = False
        self.started_at: float | None = None
        self.attempts = 0
        self.retried: tuple[tuple[float, float], ...] = ()  # (failed at, next began at)
        self.full_result: str | None = None

    @property
    def validation(self) -> Validation:
        """Its verdict: the one it came with, or, for an admitted call, ``valid(tool.name,
        input)``, made at the first read (a call record, the round's validations) and
        kept, so every read gets the same object."""
        verdict = self.verdict
        if verdict is None:
            assert self.tool is not None  # admitted: a call of a known tool
            verdict = self.verdict = valid(self.tool.name, self.input)
        return verdict

    def advance(self, state: CallState) -> None:
        """Move to ``state``, along :data:`TRANSITIONS` only.

        Raises:
            AssertionError: The move is not in the table (a bug in the executor).
        """
        # One set test on the current state's own table row (a member attribute): the
        # check runs on every move, three per call, so it is kept to that.
        assert state in self.state.successors, f"call {self.state} -> {state}"
        self.state = state

    def answer(self, result: ToolResult) -> None:
        """Its one result: ``DONE``."""
        self.advance(DONE)
        self.result = result

    def began(self) -> None:
        """Its tool is known to have begun (no change unless it was ``ALLOWED``)."""
        if self.state is ALLOWED:
            self.advance(RUNNING)

    @property
    def answered(self) -> bool:
        """Whether it has its result (answered, or discarded with one)."""
        return self.result is not None

    @property
    def started(self) -> bool:
        """Whether its tool began (so that stopping it is ``cancelled``)."""
        return self.state is RUNNING

    @property
    def needs_permission(self) -> bool:
        """Whether the permission gate has yet to allow it."""
        return self.state in (WAITING, ASKING)

    def same_request(self, other: ToolRequest) -> bool:
        """Whether ``other`` is the same call (id, name and arguments text)."""
        mine = self.request
        if mine is other:  # the decoder's close reuses the request it announced
            return True
        return (mine.id, mine.name, mine.raw_arguments) == (
            other.id,
            other.name,
            other.raw_arguments,
        )

    def record(self, result: ToolResult | None = None) -> CallRecord:
        """How the call went so far (ended now, with ``result`` when it has one)."""
        request, validation = self.request, self.validation
        return CallRecord(
            index=self.index,
            call_id=request.id,
            name=request.name,
            arguments=request.raw_arguments,
            repaired=validation.repaired,
            validation_kind=validation.kind,
            early=self.early,
            started_at=self.started_at,
            ended_at=time.time(),
            attempts=self.attempts,
            full_result=self.full_result,
            retried=self.retried,
            failure_class=None
            if result is None
            else outcomes.failure_class(validation.kind, result.status),
        )

    def unfinished(self, reason: str) -> ToolResult:
        """Its result if stopped now: ``cancelled`` if its tool began, else ``not_executed``."""
        request = self.request
        return outcomes.unfinished_result(request.id, request.name, reason, started=self.started)


def is_safe(tool: Tool | None, value: Any) -> bool:
    """Evaluate the concurrency policy; a policy that raises means "not safe"."""
    if tool is None:
        return False
    try:
        return tool.is_concurrency_safe(value)
    except Exception:  # the user's policy function failed: run the call alone
        return False
