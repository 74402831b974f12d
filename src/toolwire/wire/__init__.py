"""The sans-I/O wire layer: bytes or decoded items in, events and a Turn out.

No sockets, no asyncio, no httpx here (h11's discipline): every class is a state
machine fed by the caller. ``OpenAIChatStream``, ``OpenAIResponsesStream`` and
``AnthropicStream`` decode one model turn each; they share one ``Assembler``.

``COMPILED`` says whether this layer runs compiled by mypyc (a wheel built with
``TOOLWIRE_COMPILE=1``, see hatch_build.py) or as pure Python; both behave the same.
"""

from __future__ import annotations

from . import assembler
from .anthropic import AnthropicStream
from .assembler import Assembler, parse_arguments
from .events import (
    Event,
    Finished,
    Notice,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallRetracted,
    ToolCallStarted,
    UsageReported,
)
from .jsonscan import ClosureScanner, PartialJSON
from .openai_chat import OpenAIChatStream
from .openai_responses import OpenAIResponsesStream
from .sse import SSEDecoder, SSEEvent
from .stream import StreamDecoder

COMPILED: bool = not (assembler.__file__ or "").endswith(".py")
"""True when the wire layer's modules are mypyc-compiled extension modules."""

__all__ = [
    "COMPILED",
    "AnthropicStream",
    "Assembler",
    "ClosureScanner",
    "Event",
    "Finished",
    "Notice",
    "OpenAIChatStream",
    "OpenAIResponsesStream",
    "PartialJSON",
    "ReasoningDelta",
    "RefusalDelta",
    "SSEDecoder",
    "SSEEvent",
    "StreamDecoder",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallRetracted",
    "ToolCallStarted",
    "UsageReported",
    "parse_arguments",
]
