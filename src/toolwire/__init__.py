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
    # every other error (all defined in errors.py)
    "DecoderStateError": "errors",
    "ToolMappingError": "errors",
    "MissingAPIKeyError": "errors",
    "ProviderConnectionError": "errors",
    "ProviderTimeoutError": "errors",
    "StreamInterruptedError": "errors",
    "UnknownModelSpecError": "errors",
    "EmbeddedModelHashError": "errors",
    "ModelDownloadError": "errors",
    "ReplayMismatchError": "errors",
    "ReplayedToolError": "errors",
    "FormatError": "errors",
    "SchemaExtraMissingError": "errors",
    "BudgetExceededError": "errors",
    "ToolBudgetExceededError": "errors",
    "PartialJSONError": "errors",
    "UsageLimitExceededError": "errors",
    "ResultError": "errors",
    "LoopDetectedError": "errors",
    "MaxRoundsExceededError": "errors",
    # the neutral conversation model and turns
    "Message": "messages",
    "SystemMessage": "messages",
    "UserMessage": "messages",
    "AssistantMessage": "messages",
    "TextPart": "messages",
    "ReasoningPart": "messages",
    "RefusalPart": "messages",
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
    "ToolDef": "tooldef",
    "Toolset": "tools",
    "Validation": "tools",
    "ToolDefinitionError": "errors",
    "repair_json": "tools",
    "RetryPolicy": "policies",
    "FailureBudget": "policies",
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
    "Model": "run",
    "ModelRequest": "run",
    "TurnDone": "run",
    "MCPApprovalRequest": "history.responses_mcp",
    "BuiltinCall": "history.responses_builtin",
    "ShellOutput": "history.responses_builtin",
    # safety: permissions, the sandbox, path guards
    "Permissions": "safety",
    "Sandbox": "safety",
    "SandboxResult": "safety",
    "sandbox_python_tool": "safety",
    "sandbox_shell_handler": "safety",
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
    "BuiltinCall",
    "CallerError",
    "ContextPolicy",
    "ExecutionOptions",
    "FailureBudget",
    "HistoryError",
    "LoopPolicy",
    "MCPApprovalRequest",
    "MCPServerError",
    "MCPToolError",
    "MCPToolset",
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
    "RefusalPart",
    "RepairError",
    "RayBackend",
    "RetryPolicy",
    "RunDiagnostics",
    "RunNotFoundError",
    "RunResult",
    "Sandbox",
    "SandboxResult",
    "SandboxUnavailableError",
    "ShellOutput",
    "SystemMessage",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolDef",
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
    "UsageLimits",
    "UserMessage",
    "Validation",
    "check_history",
    "iter_run_many",
    "count_tokens",
    "missing_results",
    "repair_json",
    "sandbox_python_tool",
    "sandbox_shell_handler",
    "sandbox_shell_tool",
    "run_many",
    "tool",
    "__version__",
    "DecoderStateError",
    "ToolMappingError",
    "MissingAPIKeyError",
    "ProviderConnectionError",
    "ProviderTimeoutError",
    "StreamInterruptedError",
    "UnknownModelSpecError",
    "EmbeddedModelHashError",
    "ModelDownloadError",
    "ReplayMismatchError",
    "ReplayedToolError",
    "FormatError",
    "SchemaExtraMissingError",
    "BudgetExceededError",
    "ToolBudgetExceededError",
    "PartialJSONError",
    "UsageLimitExceededError",
    "ResultError",
    "LoopDetectedError",
    "MaxRoundsExceededError",
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
        BudgetExceededError,
        CallerError,
        DecoderStateError,
        EmbeddedModelHashError,
        FormatError,
        HistoryError,
        LoopDetectedError,
        MaxRoundsExceededError,
        MCPServerError,
        MCPToolError,
        MissingAPIKeyError,
        ModelDownloadError,
        ModelOutputError,
        PartialJSONError,
        PathNotAllowedError,
        ProtocolError,
        ProviderAPIError,
        ProviderConnectionError,
        ProviderError,
        ProviderStreamError,
        ProviderTimeoutError,
        RepairError,
        ReplayedToolError,
        ReplayMismatchError,
        ResultError,
        RunNotFoundError,
        SandboxUnavailableError,
        SchemaExtraMissingError,
        StreamInterruptedError,
        ToolBudgetExceededError,
        ToolDefinitionError,
        ToolExecutionError,
        ToolMappingError,
        ToolwireError,
        TurnError,
        UnknownModelSpecError,
        UsageLimitExceededError,
    )
    from .history import check_history, missing_results
    from .history.responses_builtin import BuiltinCall, ShellOutput
    from .history.responses_mcp import MCPApprovalRequest
    from .integrations import MCPToolset, RayBackend, iter_run_many, run_many
    from .messages import (
        AssistantMessage,
        Message,
        ProviderPart,
        ReasoningPart,
        RefusalPart,
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
        Model,
        ModelRequest,
        RunResult,
        TurnDone,
    )
    from .safety import (
        PathGuard,
        Permissions,
        Sandbox,
        SandboxResult,
        sandbox_python_tool,
        sandbox_shell_handler,
        sandbox_shell_tool,
    )
    from .tooldef import ToolDef
    from .tools import Tool, Toolset, Validation, repair_json, tool
    from .turn import ToolRequest, Turn
