"""toolwire: LLM tool calling that is correct, fast and observable, with any model.

The names below are loaded on first use (PEP 562), so ``import toolwire`` stays cheap:
the CLI's ``--help`` and a process that only decodes streams never import pydantic,
httpx or a provider.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    # errors
    "ToolwireError": "errors",
    "CallerError": "errors",
    "HistoryError": "errors",
    "ProviderError": "errors",
    "ProtocolError": "errors",
    "TurnError": "errors",
    "ProviderAPIError": "errors",
    "ProviderStreamError": "errors",
    "ModelOutputError": "errors",
    "RepairError": "errors",
    "ToolExecutionError": "errors",
    "SandboxUnavailableError": "errors",
    "PathNotAllowedError": "errors",
    # the neutral conversation model and turns
    "Message": "messages",
    "SystemMessage": "messages",
    "UserMessage": "messages",
    "AssistantMessage": "messages",
    "TextPart": "messages",
    "ReasoningPart": "messages",
    "ProviderPart": "messages",
    "ToolCall": "messages",
    "ToolResult": "messages",
    "ToolStatus": "messages",
    "Usage": "messages",
    "Turn": "turn",
    "ToolRequest": "turn",
    # tools
    "tool": "tools",
    "Tool": "tools",
    "Toolset": "tools",
    "Validation": "tools",
    "ToolDefinitionError": "tools",
    "repair_json": "tools",
    "RetryPolicy": "policies",
    "FailureBudget": "policies",
    "BudgetExceeded": "tools",
    "RunDiagnostics": "policies",
    # history
    "check_history": "history",
    "missing_results": "history",
    # the agent loop
    "Agent": "run",
    "AgentStream": "run",
    "RunResult": "run",
    "ExecutionOptions": "run",
    "LoopPolicy": "policies",
    "UsageLimits": "policies",
    "LoopDetected": "run",
    "UsageLimitExceeded": "run",
    "MaxRoundsExceeded": "run",
    "Model": "run",
    "ModelRequest": "run",
    "TurnDone": "run",
    # safety: permissions, the sandbox, path guards
    "Permissions": "safety",
    "Sandbox": "safety",
    "SandboxResult": "safety",
    "sandbox_python_tool": "safety",
    "sandbox_shell_tool": "safety",
    "PathGuard": "safety",
    # observing runs: the audit log
    "AuditLog": "observe",
    "AuditLogError": "errors",
    "RunNotFoundError": "errors",
    # reach: MCP servers' tools, Ray (optional extras, imported on first use)
    "MCPToolset": "integrations",
    "RayBackend": "integrations",
    "run_many": "integrations",
    "iter_run_many": "integrations",
    "MCPServerError": "errors",
    "MCPToolError": "errors",
    "BackendError": "errors",
    # context-window economics
    "ContextPolicy": "context",
    "ToolRouter": "context",
    "count_tokens": "context",
}

__all__ = [
    "Agent",
    "AgentStream",
    "AssistantMessage",
    "AuditLog",
    "AuditLogError",
    "BackendError",
    "BudgetExceeded",
    "CallerError",
    "ContextPolicy",
    "ExecutionOptions",
    "FailureBudget",
    "HistoryError",
    "LoopDetected",
    "LoopPolicy",
    "MCPServerError",
    "MCPToolError",
    "MCPToolset",
    "MaxRoundsExceeded",
    "Message",
    "Model",
    "ModelOutputError",
    "ModelRequest",
    "PathGuard",
    "PathNotAllowedError",
    "Permissions",
    "ProtocolError",
    "ProviderAPIError",
    "ProviderError",
    "ProviderPart",
    "ProviderStreamError",
    "ReasoningPart",
    "RepairError",
    "RayBackend",
    "RetryPolicy",
    "RunDiagnostics",
    "RunNotFoundError",
    "RunResult",
    "Sandbox",
    "SandboxResult",
    "SandboxUnavailableError",
    "SystemMessage",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolExecutionError",
    "ToolRequest",
    "ToolResult",
    "ToolStatus",
    "Toolset",
    "ToolwireError",
    "Turn",
    "ToolRouter",
    "TurnDone",
    "TurnError",
    "Usage",
    "UsageLimitExceeded",
    "UsageLimits",
    "UserMessage",
    "Validation",
    "check_history",
    "iter_run_many",
    "count_tokens",
    "missing_results",
    "repair_json",
    "sandbox_python_tool",
    "sandbox_shell_tool",
    "run_many",
    "tool",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from .context import ContextPolicy, ToolRouter, count_tokens
    from .errors import (
        AuditLogError,
        BackendError,
        CallerError,
        HistoryError,
        MCPServerError,
        MCPToolError,
        ModelOutputError,
        PathNotAllowedError,
        ProtocolError,
        ProviderAPIError,
        ProviderError,
        ProviderStreamError,
        RepairError,
        RunNotFoundError,
        SandboxUnavailableError,
        ToolExecutionError,
        ToolwireError,
        TurnError,
    )
    from .history import check_history, missing_results
    from .integrations import MCPToolset, RayBackend, iter_run_many, run_many
    from .messages import (
        AssistantMessage,
        Message,
        ProviderPart,
        ReasoningPart,
        SystemMessage,
        TextPart,
        ToolCall,
        ToolResult,
        ToolStatus,
        Usage,
        UserMessage,
    )
    from .observe import AuditLog
    from .policies import FailureBudget, LoopPolicy, RetryPolicy, RunDiagnostics, UsageLimits
    from .run import (
        Agent,
        AgentStream,
        ExecutionOptions,
        LoopDetected,
        MaxRoundsExceeded,
        Model,
        ModelRequest,
        RunResult,
        TurnDone,
        UsageLimitExceeded,
    )
    from .safety import (
        PathGuard,
        Permissions,
        Sandbox,
        SandboxResult,
        sandbox_python_tool,
        sandbox_shell_tool,
    )
    from .tools import (
        BudgetExceeded,
        Tool,
        ToolDefinitionError,
        Toolset,
        Validation,
        repair_json,
        tool,
    )
    from .turn import ToolRequest, Turn
