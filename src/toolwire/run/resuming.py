"""Going on with a logged run: paused for approval, or stopped by a crash.

``Agent.resume(run_id, approvals=...)`` loads the run from its store
(:mod:`toolwire.run.store`), checks that it can go on, claims it (one owner: a second
process resuming the same run gets a :class:`~toolwire.errors.RunClaimedError`),
records the approvals in the run's timeline, and hands the loop a :class:`Resumption`:
the history as logged, and the last turn's calls to answer before the next request.

Each call of the last turn gets exactly one result, across the crash:

* a result in the log is kept; the call never runs again;
* a call whose tool is gone is denied, with a reason (unless it was running:
  ``interrupted``);
* a call with a start row and no result was running when the process stopped: it runs
  again only if that is harmless (``side_effects=False`` or ``idempotent=True``);
  otherwise it is ``interrupted`` — the model is told that nobody knows whether it
  took effect, never silently re-run;
* a denied pending call (``False`` or a reason) gets a ``denied`` result;
* every other call (approved, never started, deferred behind a held call) runs now, in
  call order, through the executor and its permission gate (an unanswered pending call
  is asked about again: ``approve="pause"`` pauses the run again).

A call that may not run twice has its start committed to the store before it runs
(:func:`call_journal`): that row is what tells a crashed call from one that never
started.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..errors import CallerError, RunClaimedError, RunNotResumableError
from ..messages import AssistantMessage, Message, ToolCall, ToolResult
from ..tools import outcomes
from ..tools.tool import Tool
from ..turn import ToolRequest, Turn
from ..wire.assembler import parse_arguments
from .events import ToolResultReady
from .gate import Approval
from .pause import DECISIONS, PendingCall, check_approval, denial_reason, pending_calls
from .progress import ToolScope
from .runner import BeforeStart, describe
from .store import ApprovalRecord, CallStart, RunStore, SavedCall, SavedRun

if TYPE_CHECKING:
    from .events import RunEvent
    from .execute import Executor
    from .runner import ResultShaper, StartCallback

__all__ = ["Resumption", "answer_last_turn", "call_journal", "prepare_resume", "store_of"]

GONE_REASON = "the tool `{name}` is no longer available, so the call was not run"


@dataclass
class Resumption:
    """A logged run, claimed and ready to go on (see the module docstring).

    Attributes:
        saved: The run as the store loaded it.
        decisions: The approvals, by call id.
    """

    saved: SavedRun
    decisions: dict[str, Approval] = field(default_factory=dict)

    def history(self) -> list[Message]:
        """The history to go on from (up to and including the last turn)."""
        return list(self.saved.messages)


def store_of(hooks: object) -> RunStore | None:
    """The first of the agent's hooks that is a run store."""
    for hook in hooks if isinstance(hooks, tuple) else ():
        if isinstance(hook, RunStore):
            return hook
    return None


async def prepare_resume(
    store: RunStore | None,
    ref: str,
    approvals: Mapping[str, object] | None,
    by: str,
) -> Resumption:
    """Load, check and claim the run ``ref`` names; record its approvals.

    Raises:
        CallerError: No store (``Agent(log=...)``), or approvals for calls that are
            not pending, or an approval that is not ``True``, ``False`` or a reason.
        RunNotFoundError: No such run (the error lists the latest).
        RunNotResumableError: The run ended, or nothing of it was logged.
        RunClaimedError: Another process runs it (or claimed it first).
        AuditLogError: The log cannot be read (missing, damaged, a newer schema).
    """
    if store is None:
        raise CallerError(
            "resuming a run needs the agent's audit log, and this agent has none",
            hint="create the agent with log=toolwire.AuditLog(path) (the log the run was written to)",
        )
    if not isinstance(ref, str):
        raise CallerError(f"resume(run_id): a run id, prefix or 'last', not {ref!r}")
    saved = await asyncio.to_thread(store.load_run, ref)
    _check_resumable(saved)
    decisions = _check_approvals(saved, approvals or {})
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    await asyncio.to_thread(store.claim_run, saved, owner, by)
    records = [_record(saved, call_id, answer, by) for call_id, answer in decisions.items()]
    if records:
        await asyncio.to_thread(store.record_approvals, saved.run_id, records)
    return Resumption(saved, decisions)


def _check_resumable(saved: SavedRun) -> None:
    outcome = saved.outcome
    if outcome == "running":
        raise RunClaimedError(
            saved.run_id,
            saved.owner or f"process {saved.pid}",
            f"is still running (process {saved.pid} is alive)",
        )
    resumable = outcomes.is_resumable(outcome) or (
        outcome == "error" and _provider_failure(saved.error_type)
    )
    if not resumable:
        why = f"it ended with outcome {outcome!r}"
        if saved.error_type:
            why += f" ({saved.error_type})"
        raise RunNotResumableError(saved.run_id, outcome, why)
    if not saved.messages:
        raise RunNotResumableError(
            saved.run_id,
            outcome,
            "its process stopped before the first model turn reached the log",
            hint="run the prompt again",
        )


def _provider_failure(error_type: str | None) -> bool:
    from .. import errors

    cls = getattr(errors, error_type or "", None)
    return isinstance(cls, type) and issubclass(cls, errors.ProviderError)


def _check_approvals(saved: SavedRun, approvals: Mapping[str, object]) -> dict[str, Approval]:
    if not isinstance(approvals, Mapping):
        raise CallerError(
            f"approvals must be a dict of call id -> True/False/reason, not {approvals!r}"
        )
    pending = {c.call.id for c in saved.pending}
    unknown = [k for k in approvals if k not in pending]
    if unknown:
        listed = ", ".join(sorted(pending)) or "none"
        raise CallerError(
            f"approvals for calls that are not pending in run {saved.run_id}: "
            f"{', '.join(map(str, unknown))} (pending: {listed})",
            hint="answer only the calls listed in RunResult.pending",
        )
    return {k: check_approval(k, v) for k, v in approvals.items()}


def _record(saved: SavedRun, call_id: str, answer: Approval, by: str) -> ApprovalRecord:
    tool = next(c.call.name for c in saved.calls if c.call.id == call_id)
    reason = denial_reason(answer, tool)
    return ApprovalRecord(call_id, tool, reason is None, reason, by, time.time())


# -- the last turn ------------------------------------------------------------------------


class ResumedRun(Protocol):
    """What :func:`answer_last_turn` needs of the run that resumes (``agent._Run``)."""

    messages: list[Message]
    tool_calls: int
    pending: list[PendingCall]
    journal: BeforeStart | None

    @property
    def executor(self) -> Executor: ...

    def emit(self, event: RunEvent) -> None: ...

    def on_call_started(self) -> StartCallback: ...

    def result_shaper(self) -> ResultShaper: ...

    def call_listener(self) -> Callable[..., None] | None: ...

    def tool_scope(self) -> ToolScope: ...


async def answer_last_turn(run: ResumedRun, resumption: Resumption) -> Turn | None:
    """Answer the last turn's calls (see the module docstring); the history gets them.

    Returns:
        The turn the run ends with: the last turn when calls still wait for approval
        (the run pauses again), or when it made no call (its process stopped after the
        model's answer reached the log, before the run's end did: that answer is the
        run's); else ``None``: the loop goes on with the next request.
    """
    saved = resumption.saved
    message = saved.messages[-1]
    assert isinstance(message, AssistantMessage)  # the store's contract (SavedRun)
    if not message.tool_calls:
        return Turn(message, [], "stop")
    toolset = run.executor.toolset
    fixed: dict[str, ToolResult] = {}
    to_run: list[ToolRequest] = []
    for position, item in enumerate(saved.calls):
        answer = _known_answer(item, toolset.get(item.call.name), resumption.decisions)
        if answer is not None:
            fixed[item.call.id] = answer
            if item.result is None:  # new: the log and the listeners hear of it
                run.emit(ToolResultReady(position, answer, saved.round, None))
        else:
            to_run.append(_request(item.call, position))
    turn_run = run.executor.turn(
        early=False,
        on_call=run.call_listener(),
        shape_result=run.result_shaper(),
        on_start=run.on_call_started(),
        before_start=run.journal,
        scope=run.tool_scope(),
    )
    token = DECISIONS.set(resumption.decisions)
    held = False
    try:
        async with turn_run:
            # Each call keeps its place in the logged turn: its idempotency key is the
            # one it had before the pause or the crash.
            turn_run.bind(to_run, positions=[r.index for r in to_run])
            await turn_run.finish()
            held = bool(turn_run.held)
    finally:
        DECISIONS.reset(token)
        ran = {r.call_id: r for r in turn_run.results(keep_held=held)} if turn_run.bound else {}
        run.tool_calls += turn_run.executed
        for item in saved.calls:
            result = fixed.get(item.call.id) or ran.get(item.call.id)
            if result is not None:
                run.messages.append(result)
    run.pending = pending_calls(turn_run.held) if held else []
    if run.pending:
        return Turn(message, [], "tool_calls")
    return None


def _known_answer(
    item: SavedCall, tool: Tool | None, decisions: Mapping[str, Approval]
) -> ToolResult | None:
    """The call's result without running it, or ``None``: it runs now."""
    call = item.call
    if item.result is not None:
        return item.result
    harmless = tool is not None and (not tool.side_effects or tool.idempotent)
    if item.started and not harmless:
        return outcomes.interrupted_result(call.id, call.name)
    if tool is None:
        return outcomes.denied_result(call.id, call.name, GONE_REASON.format(name=call.name))
    if call.id in decisions:
        reason = denial_reason(decisions[call.id], call.name)
        if reason is not None:
            return outcomes.denied_result(call.id, call.name, reason)
    return None


def _request(call: ToolCall, index: int) -> ToolRequest:
    """The request of a logged call, parsed as the assembler parses a streamed one."""
    if call.freeform:
        request = ToolRequest(call.id, call.name, call.arguments, call.arguments, None, index)
        request.freeform = True
        return request
    value, error = parse_arguments(call.name, call.arguments)
    return ToolRequest(call.id, call.name, call.arguments, value, error, index)


# -- the journal ---------------------------------------------------------------------------


def call_journal(
    store: RunStore | None, run_id: str, round_of: Callable[[], int]
) -> BeforeStart | None:
    """The executor's ``before_start`` of a run with a store: commit each start row
    (off the event loop) before a call that may not run twice starts."""
    if store is None:
        return None

    async def before_start(request: ToolRequest, tool: Tool) -> str | None:
        start = CallStart(round_of(), request.index, request.id, request.name, time.time())
        try:
            await asyncio.to_thread(store.record_call_start, run_id, start)
        except Exception as exc:
            return (
                f"its start could not be written to the run's log ({describe(exc)}), and "
                "a call that may not run twice does not run unrecorded"
            )
        return None

    return before_start
