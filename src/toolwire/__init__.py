"""toolwire: LLM tool calling that is correct, fast and observable, with any model."""

from __future__ import annotations

from .errors import (
    CallerError,
    HistoryError,
    ModelOutputError,
    ProtocolError,
    ProviderAPIError,
    ProviderError,
    RepairError,
    ToolExecutionError,
    ToolwireError,
    TurnError,
)
from .messages import (
    AssistantMessage,
    Message,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    Usage,
    UserMessage,
)
from .turn import ToolRequest, Turn

__version__ = "0.1.0"

__all__ = [
    "AssistantMessage",
    "CallerError",
    "HistoryError",
    "Message",
    "ModelOutputError",
    "ProtocolError",
    "ProviderAPIError",
    "ProviderError",
    "ReasoningPart",
    "RepairError",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolExecutionError",
    "ToolRequest",
    "ToolResult",
    "ToolStatus",
    "ToolwireError",
    "Turn",
    "TurnError",
    "Usage",
    "UserMessage",
    "__version__",
]
