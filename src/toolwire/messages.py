"""The provider-neutral conversation model.

One history shape serves every provider; encoders in ``toolwire.history`` map it to
and from OpenAI Chat, OpenAI Responses and Anthropic Messages. An assistant message
keeps its parts in the order the model produced them (Anthropic and Responses
interleave text, reasoning and tool calls), and a tool call keeps its arguments as
the exact string the model sent, so what goes back to a provider is what it sent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "TOOL_ERROR_PREFIX",
    "AssistantMessage",
    "Message",
    "Part",
    "ProviderPart",
    "ReasoningPart",
    "RefusalPart",
    "SystemMessage",
    "TextPart",
    "ToolCall",
    "ToolResult",
    "ToolStatus",
    "Usage",
    "UserMessage",
]


@dataclass(slots=True)
class ToolCall:
    """A tool call exactly as the model sent it: the shape kept in history.

    ``arguments`` is the verbatim JSON text (never re-serialised), which keeps the
    history byte-identical for prompt caching and protocol-faithful for the provider.
    ``freeform`` marks a custom tool call (OpenAI's free-form input tools): then
    ``arguments`` is the model's raw input text, not JSON, and the call goes back as a
    ``custom_tool_call`` (Responses) or a ``custom`` tool call (Chat).
    ``caller`` is Anthropic's ``caller`` object of a programmatic call (a ``tool_use``
    made by code the provider ran, e.g. ``{"type": "code_execution_20250825",
    "tool_id": ...}``), kept verbatim and sent back with the call; ``None`` otherwise.
    """

    id: str
    name: str
    arguments: str
    kind: Literal["tool_call"] = "tool_call"
    freeform: bool = False
    caller: dict[str, Any] | None = None


@dataclass(slots=True)
class TextPart:
    """Visible answer text.

    ``citations`` holds the provider's citation objects for this text exactly as sent
    (Anthropic's ``citations`` of a text block), or ``None``; they go back with it.
    """

    text: str
    citations: list[dict[str, Any]] | None = None
    kind: Literal["text"] = "text"


@dataclass(slots=True)
class ReasoningPart:
    """Reasoning ("thinking") text, with whatever the provider needs to accept it back.

    ``signature`` is Anthropic's thinking signature; ``redacted`` holds Anthropic's
    redacted-thinking data or the Responses API's ``encrypted_content``; ``id`` is the
    Responses API's reasoning item id.
    """

    text: str
    signature: str | None = None
    redacted: str | None = None
    id: str | None = None
    kind: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ProviderPart:
    """A provider-side item of an assistant turn, kept verbatim and never executed.

    Server tools run at the provider (Anthropic's ``server_tool_use`` and
    ``mcp_tool_use`` blocks and their ``*_tool_result`` blocks, container and
    compaction blocks; the Responses API's built-in tool items). toolwire does not run
    them; it keeps each block in its place in the turn and sends it back unchanged in
    the next request to the same provider (a ``pause_turn`` continuation requires it).
    ``provider`` says whose wire shape ``data`` is (``"anthropic"`` or
    ``"openai_responses"``); encoders for another provider leave the part out.
    ``type`` is the block's or item's ``type``.
    """

    provider: str
    type: str
    data: dict[str, Any]
    kind: Literal["provider"] = "provider"


@dataclass(slots=True)
class RefusalPart:
    """The model declined to answer: its refusal message, apart from answer text.

    OpenAI sends a refusal in its own field (Chat's ``refusal``, a Responses
    ``refusal`` content part); it is kept here rather than merged into the text, and
    the turn says ``refused``. ``id`` is the Responses API's output message id (needed
    to send the refusal back as a ``refusal`` content part), or ``None``.
    """

    text: str
    id: str | None = None
    kind: Literal["refusal"] = "refusal"


Part = TextPart | ReasoningPart | ToolCall | ProviderPart | RefusalPart


class ToolStatus(str, enum.Enum):
    """How a tool call ended. Every call in a history has exactly one result."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    DENIED = "denied"
    NOT_EXECUTED = "not_executed"
    INTERRUPTED = "interrupted"
    """The process stopped while the call ran: whether it took effect is unknown."""

    @property
    def is_error(self) -> bool:
        """True for every status but ``ok``: providers mark these results as errors."""
        return self is not ToolStatus.OK


TOOL_ERROR_PREFIX = "Tool error: "
"""How a failed tool result's text starts: everything toolwire writes as an error result.

OpenAI Chat and Responses have no error flag on a tool result, so the text is the only
place a failure can show; their history decoders read a result starting with this prefix
as ``ToolStatus.ERROR`` and any other as ``ToolStatus.OK``. Defined here, in the core,
so every package that writes or reads such a result uses the same text.
"""


@dataclass(slots=True)
class Usage:
    """Token counts reported by the provider (zero when it reported none)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class SystemMessage:
    """Instructions for the model."""

    content: str
    role: Literal["system"] = "system"


@dataclass(slots=True)
class UserMessage:
    """A user turn."""

    content: str
    role: Literal["user"] = "user"


@dataclass(slots=True)
class AssistantMessage:
    """One model turn: text, reasoning and tool calls, in the order produced."""

    parts: list[Part] = field(default_factory=list)
    role: Literal["assistant"] = "assistant"

    @property
    def text(self) -> str:
        """All answer text, concatenated."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def reasoning(self) -> str:
        """All reasoning text, concatenated."""
        return "".join(p.text for p in self.parts if isinstance(p, ReasoningPart))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls, in the order the model emitted them."""
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def refusal(self) -> str:
        """All refusal text, concatenated (empty when the model did not refuse in words)."""
        return "".join(p.text for p in self.parts if isinstance(p, RefusalPart))


@dataclass(slots=True)
class ToolResult:
    """The one answer to one tool call.

    ``content`` is the text the model will read; ``status`` says how the call ended
    (anything but ``ok`` is sent to the provider as an error result).
    """

    call_id: str
    name: str
    content: str
    status: ToolStatus = ToolStatus.OK
    role: Literal["tool"] = "tool"


Message = SystemMessage | UserMessage | AssistantMessage | ToolResult
