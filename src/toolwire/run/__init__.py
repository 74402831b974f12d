"""Running tools and the agent loop: async, structured, provider-agnostic.

* :mod:`.plan` — pure batch planning (which calls may run together).
* :mod:`.execute` — the executor: batches, worker threads, timeouts, retries, early
  execution, exactly one result per call; :mod:`.early` (which calls start while the
  turn streams), :mod:`.runner` (one call to its result), :mod:`.calls` (a call's state).
* :mod:`.options` — ``Agent``'s options in groups (request, stop, safety, observe).
* :mod:`.results` — tool return values → deterministic result text.
* :mod:`.agent` — ``Agent``: the loop over a :class:`~toolwire.run.model.Model`.
* :mod:`.resume` — answering the calls a saved history left open.
* :mod:`.pause` — ``approve="pause"``: held calls, ``PendingCall``, applying approvals.
* :mod:`.store` — what durable runs need from a run store (``AuditLog`` is one).
* :mod:`.resuming` — ``Agent.resume``: going on with a paused or crashed run.
* :mod:`.answers` — asking the handlers of the items a turn owes an answer (MCP
  approval requests, client-run built-in calls: ``toolwire.history.owed``).
* :mod:`.events` — what ``Agent.run_stream`` yields.
* :mod:`.model` — the ``Model`` protocol every provider implements.
* :mod:`.observers` — the hooks the audit log and tracing listen through.
"""

from __future__ import annotations

from .agent import Agent, AgentStream, RunResult, resolve_model
from .calls import CallRecord, Discarded
from .events import (
    CallDiscarded,
    LoopWarning,
    ObservedEvent,
    RequestFailed,
    RequestStarted,
    ResponseDone,
    RoundEnd,
    RunEnded,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolCallRunning,
    ToolProgress,
    ToolResultReady,
)
from .execute import ExecutionOptions, Executor, TurnRun, default_retryable
from .model import Model, ModelEvent, ModelRequest, TurnDone
from .observers import RunHook, RunListener
from .options import ObserveOptions, RequestOptions, SafetyOptions, StopOptions
from .pause import PendingCall
from .plan import Batch, plan_batches
from .results import render_content
from .resume import answer_missing, not_executed_result
from .store import RunStore, SavedCall, SavedRun

__all__ = [
    "Agent",
    "AgentStream",
    "Batch",
    "CallDiscarded",
    "CallRecord",
    "Discarded",
    "ExecutionOptions",
    "Executor",
    "LoopWarning",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ObserveOptions",
    "ObservedEvent",
    "PendingCall",
    "RequestOptions",
    "RequestFailed",
    "RequestStarted",
    "ResponseDone",
    "RoundEnd",
    "RunEnded",
    "RunEvent",
    "RunFinished",
    "RunHook",
    "RunListener",
    "RunResult",
    "RunStarted",
    "RunStore",
    "SavedCall",
    "SavedRun",
    "SafetyOptions",
    "StopOptions",
    "ToolCallRunning",
    "ToolProgress",
    "ToolResultReady",
    "TurnDone",
    "TurnRun",
    "answer_missing",
    "default_retryable",
    "not_executed_result",
    "plan_batches",
    "render_content",
    "resolve_model",
]
