"""What a durable run needs from its store: the log is the run's state.

``run/`` imports nothing from ``observe/``: this module says, as a protocol, what
pausing, resuming and crash recovery need from a run store, and
``toolwire.AuditLog`` implements it (``Agent(log=...)`` takes any :class:`RunStore`).
The store hands the loop neutral values (:class:`SavedRun`: messages, the last turn's
calls and what is known of each) and records what only it can make durable: who owns a
run, the approvals, and a call's start *before* the call runs.

Every method is blocking (SQLite); the run calls them off its event loop
(``asyncio.to_thread``). A method commits before it returns: a process killed right
after finds the row in the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message, ToolCall, ToolResult, Usage
from .events import RunStarted
from .observers import RunListener

__all__ = ["ApprovalRecord", "CallStart", "RunStore", "SavedCall", "SavedRun"]


@dataclass(frozen=True, slots=True)
class SavedCall:
    """One call of a logged run's last turn, and what the log knows of it.

    Attributes:
        call: The call as the model sent it (arguments as logged: redacted values stay
            redacted).
        result: Its logged result (``None``: none reached the log).
        started: Whether its start row is in the log (written before a call that may
            not run twice starts): it may have taken effect.
        pending: Whether it waits for approval (the run paused for it).
    """

    call: ToolCall
    result: ToolResult | None = None
    started: bool = False
    pending: bool = False


@dataclass(slots=True)
class SavedRun:
    """A logged run, as far as the loop can go on with it.

    Attributes:
        run_id: Its id.
        outcome: How the log says it ended (``paused``, ``interrupted``: its process
            is gone; ``running``: its process is alive; ``ok``, ``error``, ...).
        error_type: The class name of the error that stopped it, if any.
        owner: Who owns it now (a resumed run's claim), as the log records it.
        pid: The process that last ran it.
        model: The model's name.
        settings: What it was configured with (``toolwire run`` adds the tool specs).
        tools: The names of the tools it offered.
        messages: The history up to and including the last model turn (that turn's
            results are in ``calls``, not here).
        round: The last turn's round number.
        calls: The last turn's calls, in call order (empty: it made none).
        rounds: Rounds with tool calls so far (they count towards ``max_rounds``).
        requests: Model requests so far.
        usage: Tokens so far.
        claim: The store's own data for :meth:`RunStore.claim_run` (what it loaded).
    """

    run_id: str
    outcome: str
    model: str
    messages: list[Message]
    error_type: str | None = None
    owner: str | None = None
    pid: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)
    round: int = 0
    calls: list[SavedCall] = field(default_factory=list)
    rounds: int = 0
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    claim: Any = None

    @property
    def pending(self) -> list[SavedCall]:
        """The calls that wait for approval."""
        return [c for c in self.calls if c.pending and c.result is None]

    def with_calls(self, calls: Sequence[SavedCall]) -> SavedRun:
        """A copy with other calls (a test or a tool that changed them)."""
        return dataclasses.replace(self, calls=list(calls))


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One answer to a pending call, for the run's timeline.

    Attributes:
        call_id: The call.
        tool: Its tool.
        approved: Whether it may run.
        reason: The denial reason the model reads (``None`` for an approval).
        by: Who answered (``Agent.resume(by=...)``; the CLI says the terminal's user).
        at: When (``time.time()``).
    """

    call_id: str
    tool: str
    approved: bool
    reason: str | None
    by: str
    at: float


@dataclass(frozen=True, slots=True)
class CallStart:
    """A call about to run, written before it starts.

    Attributes:
        round: The round of its turn.
        index: The provider's index of the call in its turn.
        call_id: Its id.
        tool: Its tool.
        at: When (``time.time()``).
    """

    round: int
    index: int
    call_id: str
    tool: str
    at: float


@runtime_checkable
class RunStore(Protocol):
    """A durable home for runs (``toolwire.AuditLog`` is one). Also a run hook:
    ``begin`` gives the listener that records the run's events (a call's end among
    them)."""

    def begin(self, start: RunStarted) -> RunListener:
        """A listener for the run that starts (see :class:`~toolwire.run.observers.RunHook`)."""
        ...

    def load_run(self, ref: str) -> SavedRun:
        """The logged run that ``ref`` names (an id, a prefix, or ``last``).

        Raises:
            RunNotFoundError: No run matches (the error lists the latest).
            AuditLogError: The store cannot be read (missing, damaged, newer schema).
        """
        ...

    def claim_run(self, saved: SavedRun, owner: str, by: str) -> None:
        """Make ``owner`` the one process that runs ``saved`` from now on (committed).

        Raises:
            RunClaimedError: Someone else claimed it since it was loaded.
        """
        ...

    def record_approvals(self, run_id: str, approvals: Sequence[ApprovalRecord]) -> None:
        """Add the answers to the run's timeline (committed)."""
        ...

    def record_call_start(self, run_id: str, start: CallStart) -> None:
        """Commit the start of a call that may not run twice, before it runs."""
        ...
