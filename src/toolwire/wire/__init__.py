"""The sans-I/O wire layer: bytes or decoded items in, events and a Turn out.

No sockets, no asyncio, no httpx here (h11's discipline): every class is a state
machine fed by the caller. ``OpenAIChatStream``, ``OpenAIResponsesStream`` and
``AnthropicStream`` decode one streamed model turn each; beside each, a
``decode_*_response`` decodes the same provider's non-streaming response body (its
``*_body`` module). All of them share one ``Assembler``, so a stream and a body of the
same turn give the same ``Turn``.

Each name is imported from its module on first use (``toolwire._lazy``), so a process
that reads one decoder, or only the assembler, does not import the others.

``COMPILED`` says whether this layer runs compiled by mypyc (a wheel built with
``TOOLWIRE_COMPILE=1``, see hatch_build.py) or as pure Python; both behave the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports
from . import assembler

# Read here, not loaded lazily: every process that uses the layer imports the assembler.
COMPILED: bool = not (assembler.__file__ or "").endswith(".py")

# public name -> module of this package that defines it
_EXPORTS = {
    "AnthropicStream": "anthropic",
    "INVALID_ARGUMENTS_KEY": "anthropic_body",
    "decode_anthropic_response": "anthropic_body",
    "Assembler": "assembler",
    "parse_arguments": "assembler",
    "Event": "events",
    "Finished": "events",
    "Notice": "events",
    "ReasoningDelta": "events",
    "RefusalDelta": "events",
    "TextDelta": "events",
    "ToolCallDelta": "events",
    "ToolCallReady": "events",
    "ToolCallRetracted": "events",
    "ToolCallStarted": "events",
    "UsageReported": "events",
    "ClosureScanner": "jsonscan",
    "PartialJSON": "jsonscan",
    "OpenAIChatStream": "openai_chat",
    "decode_openai_chat_response": "openai_chat_body",
    "OpenAIResponsesStream": "openai_responses",
    "decode_responses_response": "openai_responses_body",
    "responses_finish_reason": "openai_responses_body",
    "SSEDecoder": "sse",
    "SSEEvent": "sse",
    "StreamDecoder": "stream",
}

__getattr__ = lazy_exports(globals(), _EXPORTS)

if TYPE_CHECKING:
    from .anthropic import AnthropicStream
    from .anthropic_body import INVALID_ARGUMENTS_KEY, decode_anthropic_response
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
    from .openai_chat_body import decode_openai_chat_response
    from .openai_responses import OpenAIResponsesStream
    from .openai_responses_body import decode_responses_response, responses_finish_reason
    from .sse import SSEDecoder, SSEEvent
    from .stream import StreamDecoder

__all__ = [
    "COMPILED",
    "INVALID_ARGUMENTS_KEY",
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
    "decode_anthropic_response",
    "decode_openai_chat_response",
    "decode_responses_response",
    "parse_arguments",
    "responses_finish_reason",
]
