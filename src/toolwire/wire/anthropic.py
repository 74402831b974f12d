"""Anthropic Messages stream decoder (``message_start`` … ``message_stop``).

Content blocks share one index space: a ``tool_use`` block's ``index`` is the
assembler's index, ``input_json_delta.partial_json`` fragments are its arguments, and
``content_block_stop`` says they are final (so a tool without input is ready too).
``text_delta`` is text, ``thinking_delta`` reasoning, ``signature_delta`` and
``redacted_thinking`` blocks are kept so the thinking can be sent back.
``message_delta.stop_reason`` maps to the OpenAI finish vocabulary
(``wire.usage.ANTHROPIC_STOP_REASONS``); ``message_stop`` ends the turn; ``error`` raises ``ProviderAPIError``.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ProviderAPIError
from .events import Event, ToolCallDelta
from .stream import StreamDecoder, as_dict, cause
from .usage import ANTHROPIC_STOP_REASONS, anthropic_usage

__all__ = ["AnthropicStream"]


class AnthropicStream(StreamDecoder):
    """Decodes one Anthropic Messages streamed response into a ``Turn``."""

    provider = "Anthropic Messages"

    def __init__(self) -> None:
        super().__init__()
        self._tool_blocks: set[int] = set()
        self._usage: dict[str, Any] = {}  # merged raw counts: deltas omit what did not change

    def feed(self, item: Any) -> list[Event]:
        """Consume one Messages stream event (a dict or an SDK object); return events."""
        if self._dead:
            self._check_open()
        asm = self._assembler
        out: list[Event] = []
        asm.events = out
        self._items += 1
        try:
            # Typed locals: dict operations in the compiled build (see OpenAIChatStream.feed).
            event: dict[str, Any] = item if type(item) is dict else as_dict(item)
            if event["type"] == "content_block_delta":
                # Nearly every event of a turn: an arguments fragment goes through
                # Assembler.arguments, written out (see its comment).
                delta: dict[str, Any] = event["delta"]
                if delta["type"] == "input_json_delta":
                    text = delta["partial_json"]
                    index = event["index"]
                    call = asm.calls.get(index)
                    if call is not None and isinstance(text, str) and text:
                        fragment: str = text
                        call.parts.append(fragment)
                        out.append(ToolCallDelta(call.index, fragment))
                        if "}" in fragment and not call.ready and fragment.rstrip()[-1] == "}":
                            asm.scan(call)
                    else:
                        asm.tool_fragment(index, None, None, text)
                elif delta["type"] == "text_delta":
                    asm.text(delta["text"])
                else:
                    self._on_delta(delta)
            else:
                self._on_event(event)
        except Exception as exc:
            raise self._fail(exc) from cause(exc)
        return out

    def _on_event(self, item: dict[str, Any]) -> None:
        """Every event but ``content_block_delta``."""
        kind = item["type"]
        if kind == "content_block_start":
            self._on_block_start(item["index"], item["content_block"])
        elif kind == "content_block_stop":
            if item["index"] in self._tool_blocks:
                self._assembler.tool_arguments_done(item["index"])
        elif kind == "message_start":
            self._on_usage(item["message"].get("usage"))
        elif kind == "message_delta":
            self._on_message_delta(item)
        elif kind == "message_stop":
            self._ended = True
        elif kind == "error":
            error = item.get("error") or {}
            raise ProviderAPIError(
                str(error.get("message") or error), error_type=error.get("type"), body=item
            )
        # "ping" and event types added later carry nothing for the turn.

    def _on_delta(self, delta: dict[str, Any]) -> None:
        """The less frequent deltas (``citations_delta`` and later kinds carry nothing)."""
        kind = delta["type"]
        if kind == "thinking_delta":
            self._assembler.reasoning(delta["thinking"])
        elif kind == "signature_delta":
            self._assembler.reasoning_meta(signature=delta["signature"])

    def _on_block_start(self, index: int, block: dict[str, Any]) -> None:
        kind = block["type"]
        asm = self._assembler
        asm.part_break()
        if kind == "tool_use":
            self._tool_blocks.add(index)
            start_input = block.get("input")
            # Streaming sends input {} here and the JSON as deltas; a non-empty input
            # here (seen from proxies that do not stream tool input) is the whole input.
            args = json.dumps(start_input, ensure_ascii=False) if start_input else None
            asm.tool_fragment(index, block["id"], block["name"], args)
        elif kind == "text":
            if block.get("text"):
                asm.text(block["text"])
        elif kind == "thinking":
            asm.reasoning(block.get("thinking") or "")
            if block.get("signature"):
                asm.reasoning_meta(signature=block["signature"])
        elif kind == "redacted_thinking":
            asm.reasoning("")
            asm.reasoning_meta(redacted=block["data"])

    def _on_message_delta(self, item: dict[str, Any]) -> None:
        self._on_usage(item.get("usage"))
        reason = (item.get("delta") or {}).get("stop_reason")
        if reason:
            self._assembler.finish(ANTHROPIC_STOP_REASONS.get(reason, reason))

    def _on_usage(self, usage: dict[str, Any] | None) -> None:
        if usage:
            self._usage.update((k, v) for k, v in usage.items() if v is not None)
            self._assembler.set_usage(anthropic_usage(self._usage))
