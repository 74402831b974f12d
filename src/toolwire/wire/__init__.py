"""The sans-I/O wire layer: bytes or decoded items in, events and a Turn out.

No sockets, no asyncio, no httpx here (h11's discipline): every class is a state
machine fed by the caller. ``OpenAIChatStream``, ``OpenAIResponsesStream`` and
``AnthropicStream`` decode one model turn each; they share one ``Assembler``.
"""

from __future__ import annotations

from .anthropic import AnthropicStream
from .assembler import Assembler, parse_arguments
from .events import (
    Event,
    Finished,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from .jsonscan import ClosureScanner, PartialJSON, PartialJSONError
from .openai_chat import OpenAIChatStream
from .openai_responses import OpenAIResponsesStream
from .sse import SSEDecoder, SSEEvent
from .stream import StreamDecoder

__all__ = [
    "AnthropicStream",
    "Assembler",
    "ClosureScanner",
    "Event",
    "Finished",
    "Notice",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "PartialJSON",
    "PartialJSONError",
    "ReasoningDelta",
    "SSEDecoder",
    "SSEEvent",
    "StreamDecoder",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "UsageReported",
    "parse_arguments",
]
