"""Run-level events: what ``Agent.run_stream`` yields besides the model's wire events.

A streamed run yields, per round: ``RequestStarted``; the model's own events as they
arrive (``TextDelta``, ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallDelta``,
``ToolCallReady``, ``Finished``, ``UsageReported``, ``Notice`` from
:mod:`toolwire.wire.events`); a ``ToolCallRunning`` when a call's tool begins and a
``ToolResultReady`` per call as it ends (early-started
calls can end before the stream does); ``CallDiscarded`` and ``LoopWarning`` when they
happen; ``RoundEnd``. The last event of a successful run is ``RunFinished``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..messages import ToolResult
from ..turn import Turn
from ..wire.events import Event
from .model import ModelRequest

if TYPE_CHECKING:
    from .agent import RunResult

__all__ = [
    "CallDiscarded",
    "LoopWarning",
    "RequestStarted",
    "RoundEnd",
    "RunEvent",
    "RunFinished",
    "ToolCallRunning",
    "ToolResultReady",
]


@dataclass(slots=True)
class RequestStarted:
    """A model request is about to be sent.

    Attributes:
        round: The 1-based round number (the forced final request has its own).
        request: What is sent.
    """

    round: int
    request: ModelRequest


@dataclass(slots=True)
class ToolResultReady:
    """A call ended (or was answered without running).

    Attributes:
        index: The provider's index of the call in its turn.
        result: Its one result.
    """

    index: int
    result: ToolResult


@dataclass(slots=True)
class ToolCallRunning:
    """A call's tool function began: the time since its ``ToolCallReady`` was queueing
    (its batch, approval, a worker thread), the time until its result is its run.

    Attributes:
        index: The provider's index of the call in its turn.
    """

    index: int


@dataclass(slots=True)
class CallDiscarded:
    """A call started early was cancelled because the turn changed or failed.

    Attributes:
        index: The provider's index of the call.
        call_id: Its id.
        name: Its tool name.
        reason: Why.
    """

    index: int
    call_id: str
    name: str
    reason: str


@dataclass(slots=True)
class LoopWarning:
    """The model was warned that it repeats itself (see ``LoopPolicy``).

    Attributes:
        kind: ``repeated_call`` (the same name and arguments again) or
            ``no_progress`` (rounds that produced nothing new).
        tool: The tool whose result carries the warning.
        message: The warning text the model reads.
        count: Repetitions, or rounds without progress, so far.
    """

    kind: Literal["repeated_call", "no_progress"]
    tool: str
    message: str
    count: int


@dataclass(slots=True)
class RoundEnd:
    """A round ended: the turn and one result per call, in call order.

    Attributes:
        round: The 1-based round number.
        turn: The model's turn.
        results: The results appended to the history.
    """

    round: int
    turn: Turn
    results: list[ToolResult]


@dataclass(slots=True)
class RunFinished:
    """The run produced its final answer.

    Attributes:
        result: The run's result (output, history, usage).
    """

    result: RunResult


RunEvent: TypeAlias = (
    Event
    | RequestStarted
    | ToolCallRunning
    | ToolResultReady
    | CallDiscarded
    | LoopWarning
    | RoundEnd
    | RunFinished
)
"""Everything ``Agent.run_stream`` yields."""
