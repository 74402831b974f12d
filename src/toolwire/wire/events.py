"""The one event vocabulary every decoder speaks.

Provider decoders (OpenAI Chat, OpenAI Responses, Anthropic) and the text-marker
parsers of ``toolwire.formats`` all describe a model turn with these events, and the
one assembler consumes them. Events are small slotted objects: the hot path creates
one per argument fragment, so they carry no more than they must.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..turn import Notice

if TYPE_CHECKING:
    from ..messages import ToolCall, Usage
    from ..turn import ToolRequest

__all__ = [
    "Event",
    "Finished",
    "Notice",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "UsageReported",
]


@dataclass(slots=True)
class TextDelta:
    """A piece of answer text."""

    text: str


@dataclass(slots=True)
class ReasoningDelta:
    """A piece of reasoning ("thinking") text."""

    text: str


@dataclass(slots=True)
class ToolCallStarted:
    """The first fragment of the tool call at ``index`` arrived.

    ``id`` and ``name`` are whatever that fragment carried (a provider may send them
    later, or split the name); the ``ToolCallReady`` event carries the final values.
    """

    index: int
    id: str | None
    name: str | None


@dataclass(slots=True)
class ToolCallDelta:
    """A fragment of the arguments text of the tool call at ``index``."""

    index: int
    arguments: str


@dataclass(slots=True)
class ToolCallReady:
    """The call at ``index`` is complete: its arguments JSON has closed.

    Emitted the moment the closing bracket arrives, usually before the stream ends;
    this is what early execution waits for. ``request`` holds the parsed input (or
    the parse error) so nothing is parsed twice.
    """

    index: int
    call: ToolCall
    request: ToolRequest


@dataclass(slots=True)
class Finished:
    """The provider said why the turn ended (OpenAI's vocabulary: ``stop``,
    ``tool_calls``, ``length``, ``content_filter``)."""

    reason: str


@dataclass(slots=True)
class UsageReported:
    """The provider reported token usage (totals for the turn so far)."""

    usage: Usage


Event = (
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallReady
    | Finished
    | UsageReported
    | Notice
)
