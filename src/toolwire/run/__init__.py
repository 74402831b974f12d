"""Running tools and the agent loop: async, structured, provider-agnostic.

* :mod:`.plan` — pure batch planning (which calls may run together).
* :mod:`.execute` — the executor: batches, worker threads, timeouts, retries, early
  execution, exactly one result per call.
* :mod:`.results` — tool return values → deterministic result text.
* :mod:`.agent` — ``Agent``: the loop over a :class:`~toolwire.run.model.Model`.
* :mod:`.resume` — answering the calls a saved history left open.
* :mod:`.mcp_approval` — answering the Responses API's MCP approval requests.
* :mod:`.builtin_calls` — answering its shell and apply_patch calls (run by the client).
* :mod:`.events` — what ``Agent.run_stream`` yields.
* :mod:`.model` — the ``Model`` protocol every provider implements.
* :mod:`.observers` — the hooks the audit log and tracing listen through.
"""

from __future__ import annotations

from .agent import Agent, AgentStream, RunResult, resolve_model
from .builtin_calls import BuiltinCall, BuiltinHandler, ShellOutput, builtin_calls
from .events import (
    CallDiscarded,
    LoopWarning,
    ObservedEvent,
    RequestStarted,
    ResponseDone,
    RoundEnd,
    RunEnded,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolCallRunning,
    ToolResultReady,
)
from .execute import CallRecord, Discarded, ExecutionOptions, Executor, TurnRun, default_retryable
from .mcp_approval import MCPApprovalRequest, MCPApprover, mcp_approval_requests
from .model import Model, ModelEvent, ModelRequest, ToolChoice, TurnDone
from .observers import RunHook, RunListener
from .plan import Batch, plan_batches
from .results import render_content
from .resume import answer_missing, not_executed_result

__all__ = [
    "Agent",
    "AgentStream",
    "Batch",
    "BuiltinCall",
    "BuiltinHandler",
    "CallDiscarded",
    "CallRecord",
    "Discarded",
    "ExecutionOptions",
    "Executor",
    "LoopWarning",
    "MCPApprovalRequest",
    "MCPApprover",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ObservedEvent",
    "RequestStarted",
    "ResponseDone",
    "RoundEnd",
    "RunEnded",
    "RunEvent",
    "RunFinished",
    "RunHook",
    "RunListener",
    "RunResult",
    "ShellOutput",
    "RunStarted",
    "ToolCallRunning",
    "ToolChoice",
    "ToolResultReady",
    "TurnDone",
    "TurnRun",
    "answer_missing",
    "builtin_calls",
    "default_retryable",
    "mcp_approval_requests",
    "not_executed_result",
    "plan_batches",
    "render_content",
    "resolve_model",
]
