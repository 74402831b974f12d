"""Run-level events: what ``Agent.run_stream`` yields besides the model's wire events.

A streamed run yields, per round: ``RequestStarted``; the model's own events as they
arrive (``TextDelta``, ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallDelta``,
``ToolCallReady``, ``Finished``, ``UsageReported``, ``Notice`` from
:mod:`toolwire.wire.events`); a ``ToolCallRunning`` when a call's tool begins, a
``ToolProgress`` for each progress value a tool reports (``ToolContext.progress``, or a
generator tool's yielded values but the last) and a
``ToolResultReady`` per call as it ends (early-started calls can end before the stream
does); ``ResponseDone`` when the model's stream ends (``RequestFailed`` when it raised
instead); ``CallDiscarded`` and
``LoopWarning`` when they happen; ``RoundEnd``. The last event of a successful run is
``RunFinished``.

Observers of a run (the audit log, OpenTelemetry; see :mod:`toolwire.run.observers`)
also get ``RunStarted`` before anything else and ``RunEnded`` after everything, whatever
the outcome; ``run_stream`` does not yield those two. Times are ``time.time()`` seconds.

The context policies (:mod:`toolwire.context`) add, right after ``RequestStarted``:
``HistoryCompressed`` when the history sent was cut to its budget, ``ToolsRouted`` when
routing chose the tools offered, ``CacheInvalidated`` (once) when the offered tool set
changed mid-run, and ``TokensCounted`` with the request's tokens by part.

A run with a structured ``output_type`` adds ``PartialOutput`` (:mod:`toolwire.output`)
after each fragment of its answer while it streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..context.events import CacheInvalidated, HistoryCompressed, TokensCounted, ToolsRouted
from ..messages import Message, ToolResult, Usage
from ..output.partial import PartialOutput
from ..tooldef import ToolDef
from ..tools.outcomes import RunOutcome
from ..turn import Turn
from ..wire.events import Event
from .calls import CallRecord
from .model import ModelRequest

if TYPE_CHECKING:
    from .agent import RunResult

__all__ = [
    "CallDiscarded",
    "LoopWarning",
    "ObservedEvent",
    "RequestFailed",
    "RequestStarted",
    "ResponseDone",
    "RoundEnd",
    "RunEnded",
    "RunEvent",
    "RunFinished",
    "RunStarted",
    "ToolCallRunning",
    "ToolProgress",
    "ToolResultReady",
]


@dataclass(slots=True)
class RequestStarted:
    """A model request is about to be sent.

    Attributes:
        round: The 1-based round number (the forced final request has its own).
        request: What is sent.
        at: When it was sent.
    """

    round: int
    request: ModelRequest
    at: float = 0.0


@dataclass(slots=True)
class ResponseDone:
    """The model's stream for one request ended with its turn.

    Attributes:
        round: The round of the request.
        turn: The assembled turn (text, calls as sent, usage, finish reason).
        started_at: When the request was sent.
        first_event_at: When the first event arrived (``None``: none did).
        ended_at: When the turn was complete.
    """

    round: int
    turn: Turn
    started_at: float
    first_event_at: float | None
    ended_at: float

    @property
    def latency_ms(self) -> float:
        """Milliseconds from the request to the complete turn."""
        return (self.ended_at - self.started_at) * 1000.0


@dataclass(slots=True)
class RequestFailed:
    """A model request failed: its stream raised instead of ending with a turn.

    Observers close the request here (the audit log writes its row with the error, the
    OpenTelemetry ``chat`` span ends with it). The run then either stops with the error
    or, for a provider's 400 about an image in the latest tool results, answers those
    calls with an error result and sends the request again
    (:mod:`toolwire.run.refused_images`).

    Attributes:
        round: The round of the request.
        error: What the stream raised (a ``ProviderError`` for a provider's refusal).
        started_at: When the request was sent.
        first_event_at: When the first event arrived (``None``: none did).
        ended_at: When it failed.
        answered: The calls whose images the provider refused, each as ``(the tool's
            result, the error result that replaced it in the history)``; the request is
            then sent again (empty: the run stops with ``error``).
    """

    round: int
    error: Exception
    started_at: float
    first_event_at: float | None
    ended_at: float
    answered: list[tuple[ToolResult, ToolResult]] = field(default_factory=list)

    @property
    def resent(self) -> bool:
        """Whether the loop sends the request again (refused images answered)."""
        return bool(self.answered)

    @property
    def status(self) -> int | None:
        """The HTTP status of a provider's error response (``None``: no response)."""
        status = getattr(self.error, "status", None)
        return status if isinstance(status, int) else None


@dataclass(slots=True)
class ToolResultReady:
    """A call ended (or was answered without running).

    Attributes:
        index: The provider's index of the call in its turn.
        result: Its one result (the text the model reads, possibly cut).
        round: The round of the call.
        call: How it ran: arguments as sent, repaired, early start, times, attempts
            (``None`` only for results built outside the executor).
    """

    index: int
    result: ToolResult
    round: int = 0
    call: CallRecord | None = None

    @property
    def latency_ms(self) -> float | None:
        """Milliseconds the call ran (``None``: it never started)."""
        return None if self.call is None else self.call.latency_ms


@dataclass(slots=True)
class ToolCallRunning:
    """A call's tool function began: the time since its ``ToolCallReady`` was queueing
    (its batch, approval, a worker thread), the time until its result is its run.

    Attributes:
        index: The provider's index of the call in its turn.
    """

    index: int


@dataclass(slots=True)
class ToolProgress:
    """A running call reported progress (before its result; never after it).

    A generator tool's yielded value is reported when the generator yields again (or
    returns a value): only then is it known not to be the last, which is the result.
    ``ToolContext.progress(value)`` reports at once.

    Attributes:
        call_id: The call's id.
        value: What the tool reported, as it gave it (the audit log stores its text,
            made as a result's is, and redacted).
        index: The provider's index of the call in its turn.
        round: The round of the call.
        name: The tool's name.
    """

    call_id: str
    value: Any
    index: int = 0
    round: int = 0
    name: str = ""


@dataclass(slots=True)
class CallDiscarded:
    """A call started early was cancelled because the turn changed or failed.

    Attributes:
        index: The provider's index of the call.
        call_id: Its id.
        name: Its tool name.
        reason: Why.
        round: The round of the call.
        call: How it ran until it was cancelled.
    """

    index: int
    call_id: str
    name: str
    reason: str
    round: int = 0
    call: CallRecord | None = None


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


@dataclass(slots=True)
class RunStarted:
    """A run begins (observers only; ``run_stream`` does not yield it).

    Attributes:
        run_id: The run's id (``RunResult.run_id``).
        model: The model's name.
        tools: The tools the caller registered, as neutral definitions.
        settings: What the run was configured with (tool choice, limits, provider options).
        messages: The history the run starts from (system prompt and user prompt included).
        at: When it began.
        resumed: Whether it goes on with a logged run (``Agent.resume``): the run is
            in the log already, under this id.
    """

    run_id: str
    model: str
    tools: list[ToolDef]
    settings: dict[str, Any]
    messages: list[Message]
    at: float
    resumed: bool = False


@dataclass(slots=True)
class RunEnded:
    """A run is over, whatever the outcome (observers only).

    Attributes:
        run_id: The run's id.
        outcome: ``ok``, ``length`` (it finished, its last turn cut at the token
            limit), ``error`` (an exception stopped it) or ``cancelled`` (cancellation,
            ``KeyboardInterrupt`` or ``SystemExit``); see :data:`~toolwire.tools.outcomes.RunOutcome`.
        at: When it ended.
        result: The result of a run that finished.
        error: The exception that stopped it (``None`` for ``ok``).
        rounds: Rounds with tool calls.
        requests: Model requests made.
        usage: Tokens, summed over every request.
    """

    run_id: str
    outcome: RunOutcome
    at: float
    result: RunResult | None
    error: BaseException | None
    rounds: int
    requests: int
    usage: Usage


RunEvent: TypeAlias = (
    Event
    | RequestStarted
    | ResponseDone
    | RequestFailed
    | ToolCallRunning
    | ToolProgress
    | ToolResultReady
    | CallDiscarded
    | LoopWarning
    | RoundEnd
    | RunFinished
    | ToolsRouted
    | CacheInvalidated
    | HistoryCompressed
    | TokensCounted
    | PartialOutput
)
"""Everything ``Agent.run_stream`` yields."""

ObservedEvent: TypeAlias = RunEvent | RunStarted | RunEnded
"""What a run's observers receive: the stream's events plus the run's start and end."""
