"""Anthropic Messages stream decoder (``message_start`` … ``message_stop``).

Content blocks share one index space: a ``tool_use`` block's ``index`` is the
assembler's index, ``input_json_delta.partial_json`` fragments are its arguments, and
``content_block_stop`` says they are final: a call is reported ready (``ToolCallReady``)
there, right after its last fragment, and not guessed earlier from its text (a tool
without input is ready there too).
``text_delta`` is text, ``thinking_delta`` reasoning, ``signature_delta`` and
``redacted_thinking`` blocks are kept so the thinking can be sent back.
``message_delta.stop_reason`` maps to the OpenAI finish vocabulary
(``wire.usage.ANTHROPIC_STOP_REASONS``), and ``refusal`` also marks the turn
``refused`` (its ``stop_details``, category and explanation, in a ``refusal`` notice); a ``tool_use`` block's ``caller`` (programmatic tool calling) is kept on
its ``ToolCall``; ``message_stop`` ends the turn; ``error`` raises ``ProviderStreamError`` (with the partial turn).

Every other block kind runs at the provider or belongs to it: server tool uses
(``server_tool_use``, ``mcp_tool_use``: web search, web fetch, code execution, tool
search, the MCP connector), their ``*_tool_result`` blocks, container uploads and
compaction. Each becomes a ``ProviderPart`` in its place, kept verbatim (a server tool
use's streamed ``input_json_delta`` fragments are parsed into its ``input`` when the
block stops), never assembled as a client call and never executed; the encoder sends
it back unchanged. A block kind toolwire does not know is kept the same way, with a
notice. Programmatic tool calling may put whole blocks and the stop reason into
``message_start`` itself; they are decoded as if streamed.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import ProtocolError, ProviderStreamError, ToolwireError
from ..messages import ProviderPart
from .assembler import Assembler, _Call, dump_json, loads_json
from .events import NEW_BY_SLOTS, OBJECT_NEW, Event, ToolCallDelta
from .fields import as_dict, as_index, as_list, as_object, as_text, field, loose_text
from .stream import StreamDecoder
from .usage import (
    ANTHROPIC_STOP_REASONS,
    ANTHROPIC_UNREPORTED,
    AnthropicReported,
    anthropic_merge,
    anthropic_reported_counts,
)

__all__ = ["PROVIDER", "AnthropicStream", "is_known_provider_block", "refusal_details"]

PROVIDER = "anthropic"
"""``ProviderPart.provider`` of the blocks kept verbatim."""

# Block kinds that are the provider's own and need nothing from toolwire but to be kept
# and sent back; any ``*_tool_result`` block is one too (see is_known_provider_block).
_PROVIDER_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use", "container_upload", "compaction"})

# What a decoder holds until its first provider block: one shared empty table, read and
# never written (``_on_block_start`` gives the decoder its own), so that the common turn,
# which has none, does not make and free two per turn.
_NO_BLOCKS: Final[dict[int, Any]] = {}


def is_known_provider_block(kind: str) -> bool:
    """True for a block kind that is a documented provider-side block (no notice)."""
    return kind in _PROVIDER_BLOCKS or kind.endswith("_tool_result")


class AnthropicStream(StreamDecoder):
    """Decodes one Anthropic Messages streamed response into a ``Turn``."""

    provider = "Anthropic Messages"

    def __init__(self, *, deltas: bool = True) -> None:
        """``deltas=False``: no ``ToolCallDelta`` per arguments fragment, and no
        ``ToolCallStarted`` for a call whole in the event that opens it (its
        ``ToolCallReady`` alone), for a consumer that wants only whole calls and the
        turn, which is the same."""
        super().__init__(deltas=deltas)
        # A tool_use block is one of the assembler's calls (``calls`` by block index);
        # a block kept verbatim is in these two, with a server tool use's streamed
        # input (see _NO_BLOCKS).
        self._provider_blocks: dict[int, ProviderPart] = _NO_BLOCKS
        self._provider_input: dict[int, list[str]] = _NO_BLOCKS
        # The usage reported so far: message_delta leaves out what did not change.
        self._reported: AnthropicReported = ANTHROPIC_UNREPORTED

    def feed(self, item: Any) -> list[Event]:  # noqa: PLR0911, PLR0912 — the flat feed of the hot path (ARCHITECTURE)
        """Consume one Messages stream event (a dict or an SDK object); return events."""
        if self._dead:
            self._check_open()
        self._items += 1
        asm = self._assembler
        call: _Call | None = None
        if type(item) is dict:
            # Nearly every event of a turn is an arguments fragment of an open call; it
            # is read with subscripts, cheaper than ``.get`` and a test per key. A key
            # that is missing (another kind of event, or a malformed one) is a KeyError,
            # a ``delta`` that is not an object a TypeError (JSON's other values cannot
            # be subscripted with a string), and ``_on_item`` reads the event again with
            # every check. Nothing changes before the lookups are done. The typed
            # locals make the two kind tests string compares in C in the compiled build
            # (an untyped ``==`` is a generic rich comparison, several times the cost);
            # a value of another type fails their run-time check there, a TypeError too.
            event: dict[str, Any] = item
            try:
                kind: str = event["type"]
                if kind == "content_block_delta":
                    delta: dict[str, Any] = event["delta"]
                    delta_kind: str = delta["type"]
                    if delta_kind == "input_json_delta":
                        index = event["index"]
                        text = delta["partial_json"]
                        if type(index) is int and type(text) is str:
                            call = asm.calls[index]  # a KeyError: not a client call
            except (KeyError, TypeError):
                pass
        if call is None:
            return self._on_item(asm, item)
        # Assembler.arguments, written out, without its closure scan: Anthropic says
        # when a call's arguments are final (``content_block_stop``, right after the
        # last fragment), so the call is reported ready there, not guessed from the
        # text (the scan is for OpenAI Chat, which has no per-call end).
        fragment: str = text
        if not fragment:
            # Anthropic opens every tool block's input with an empty fragment: nothing
            # to add (``tool_fragment`` would do nothing either), no event.
            if not asm.events:
                return []
            return asm.take_events()
        call.parts.append(fragment)
        if not self._deltas:
            if not asm.events:
                return []
            return asm.take_events()
        ev: ToolCallDelta
        if NEW_BY_SLOTS:  # the pure build (events.py)
            ev = OBJECT_NEW(ToolCallDelta)
            ev.index = call.index
            ev.arguments = fragment
        else:
            ev = ToolCallDelta(call.index, fragment)
        out = asm.events  # empty unless an assembler method was called between feeds
        if not out:
            # The common fragment: its one event in a list of its own, and the
            # assembler's (empty) list stays for the next feed.
            return [ev]
        out.append(ev)
        asm.events = []
        return out

    def _on_item(self, asm: Assembler, item: Any) -> list[Event]:  # noqa: PLR0912 — one dispatch, kept flat
        """Every event but an arguments fragment of an open call (``feed``'s own path)."""
        out = asm.events  # the assembler's own list: the flat path appends to it too
        try:
            # Typed locals: dict operations in the compiled build; every value's type is
            # tested inline before it reaches one (see OpenAIChatStream.feed).
            event: dict[str, Any] = item if type(item) is dict else as_dict(item)
            raw_kind = event.get("type")
            # A typed local, for string compares in C (see ``feed``); any other value
            # matches no kind below and takes the last branch.
            kind: str = raw_kind if type(raw_kind) is str else _plain_kind(raw_kind)
            if kind == "content_block_delta":
                raw_delta: Any = event.get("delta")
                delta: dict[str, Any] = (
                    raw_delta
                    if type(raw_delta) is dict
                    else as_object(field(event, "delta"), "delta")
                )
                delta_kind = delta.get("type")
                if delta_kind == "input_json_delta":
                    index = event.get("index")
                    if type(index) is int and index in self._provider_blocks:
                        self._provider_input[index].append(
                            as_text(field(delta, "partial_json"), "partial_json")
                        )
                    else:
                        asm.tool_fragment(
                            as_index(field(event, "index"), "index"),
                            None,
                            None,
                            as_text(field(delta, "partial_json"), "partial_json"),
                        )
                elif delta_kind == "text_delta":
                    asm.text(as_text(field(delta, "text"), "text_delta.text"))
                else:
                    self._on_delta(field(delta, "type"), delta, event.get("index"))
            elif kind == "content_block_stop":
                # A tool block's arguments are final: the call is ready now.
                index = event.get("index")
                call = asm.calls.get(index) if type(index) is int else None
                if call is not None:
                    # Assembler.tool_arguments_done, written out: the block's call is open.
                    call.done = True
                    if not call.ready:
                        asm._emit_ready(call)
                else:
                    self._on_event(kind, event)
            elif kind == "content_block_start":
                self._on_block_event(event)
            elif kind == "message_start":
                self._on_message_event(event)
            elif kind == "message_delta":
                self._on_message_delta(event)
            elif kind == "message_stop":
                self._ended = True
            elif kind == "ping":
                pass  # keep-alive: nothing for the turn
            else:  # a missing type is an error, a null one an event to ignore
                self._on_event(raw_kind if raw_kind is not None else field(event, "type"), event)
        except ToolwireError as exc:  # malformed data, checked at the door; bugs propagate
            raise self._fail(exc) from None
        # Assembler.take_events, written out: ``out`` is the list the assembler
        # appended to, as nothing takes events during a feed.
        asm.events = []
        return out

    def _on_block_event(self, event: dict[str, Any]) -> None:
        """``content_block_start``: ``_on_event``'s checks inline for the common one."""
        index = event.get("index")
        block = event.get("content_block")
        if type(index) is int and type(block) is dict:
            self._on_block_start(index, block)
        else:
            self._on_event("content_block_start", event)

    def _on_message_event(self, event: dict[str, Any]) -> None:
        """``message_start``: ``_on_event``'s check inline for the common one."""
        message = event.get("message")
        if type(message) is dict:
            self._on_message_start(message)
        else:
            self._on_event("message_start", event)

    def _on_event(self, kind: Any, item: dict[str, Any]) -> None:
        """Every event but ``content_block_delta``."""
        if kind == "content_block_start":
            self._on_block_start(
                as_index(field(item, "index"), "index"),
                as_object(field(item, "content_block"), "content_block"),
            )
        elif kind == "content_block_stop":
            index = as_index(field(item, "index"), "index")
            if index in self._assembler.calls:
                self._assembler.tool_arguments_done(index)
            elif index in self._provider_blocks:
                self._provider_block_done(index)
        elif kind == "message_start":
            self._on_message_start(as_object(field(item, "message"), "message"))
        elif kind == "message_delta":
            self._on_message_delta(item)
        elif kind == "message_stop":
            self._ended = True
        elif kind == "error":
            error = item.get("error") or {}
            partial = self._partial_turn()  # how far the turn got before the provider failed
            if type(error) is not dict:
                raise ProviderStreamError(str(error), body=item, partial=partial)
            raise ProviderStreamError(
                str(error.get("message") or error),
                error_type=loose_text(error.get("type")),
                body=item,
                partial=partial,
            )
        # "ping" and event types added later carry nothing for the turn.

    def _on_message_start(self, message: dict[str, Any]) -> None:
        """Usage, and (programmatic tool calling) whole blocks and the stop reason."""
        self._on_usage(message.get("usage"))
        content = message.get("content")
        if content:
            for index, raw in enumerate(as_list(content, "message.content")):
                block = as_object(raw, "message.content[]")
                self._on_block_start(index, block)
                if index in self._assembler.calls:
                    self._assembler.tool_arguments_done(index)
                self._provider_blocks.pop(index, None)  # complete already: no input deltas
                self._provider_input.pop(index, None)
        reason = message.get("stop_reason")
        if reason:
            self._stop_reason(as_text(reason, "message.stop_reason"), message.get("stop_details"))

    def _stop_reason(self, reason: str, details: Any) -> None:
        if reason == "refusal":
            refusal_details(self._assembler, details)
        self._assembler.finish(ANTHROPIC_STOP_REASONS.get(reason, reason))

    def _provider_block_done(self, index: int) -> None:
        """A server tool use stopped: its streamed input JSON becomes its ``input``."""
        part = self._provider_blocks.pop(index)
        text = "".join(self._provider_input.pop(index, []))
        if text and not text.isspace():
            try:
                part.data["input"] = loads_json(text)
            except (ValueError, RecursionError) as exc:
                raise ProtocolError(
                    f"the input of {part.type} block {index} is not JSON ({exc})"
                ) from None

    def _on_delta(self, kind: Any, delta: dict[str, Any], index: Any) -> None:
        """The less frequent deltas; one toolwire does not know is reported, not dropped."""
        asm = self._assembler
        if kind == "thinking_delta":
            asm.reasoning(as_text(field(delta, "thinking"), "thinking_delta.thinking"))
        elif kind == "signature_delta":
            signature = as_text(field(delta, "signature"), "signature_delta.signature")
            asm.reasoning_meta(signature=signature)
        elif kind == "citations_delta":
            asm.citation(as_object(field(delta, "citation"), "citations_delta.citation"))
        elif kind == "compaction_delta" and type(index) is int and index in self._provider_blocks:
            data = self._provider_blocks[index].data
            content = as_text(field(delta, "content"), "compaction_delta.content")
            data["content"] = as_text(data.get("content") or "", "compaction.content") + content
        else:
            asm.notice(
                "unknown_delta",
                f"a content_block_delta of type {str(kind)[:40]!r} was not understood and dropped",
                index if type(index) is int else None,
            )

    def _on_block_start(self, index: int, block: dict[str, Any]) -> None:
        raw_kind = block.get("type")
        # A typed local, for string compares in C (see ``feed``); a str subclass passes.
        kind: str = (
            raw_kind
            if type(raw_kind) is str
            else as_text(field(block, "type"), "content_block.type")
        )
        asm = self._assembler
        asm.part_break()
        if kind == "tool_use":
            start_input = block.get("input")
            # Streaming sends input {} here and the JSON as deltas; a non-empty input
            # here (seen from proxies that do not stream tool input) is the whole input.
            args = dump_json(start_input, "tool_use.input") if start_input else None
            caller = block.get("caller")
            tool_id = block.get("id")  # checked inline: a call per check is most of a start
            name = block.get("name")
            asm.tool_fragment(
                index,
                tool_id if type(tool_id) is str else as_text(field(block, "id"), "tool_use.id"),
                name if type(name) is str else as_text(field(block, "name"), "tool_use.name"),
                None if caller else args,
            )
            if caller:  # before the arguments: the call may be ready with them
                asm.tool_caller(index, as_object(caller, "tool_use.caller"))
                if args is not None:
                    asm.tool_fragment(index, None, None, args)
        elif kind == "text":
            if block.get("text"):
                asm.text(as_text(block["text"], "text.text"))
            citations = block.get("citations")
            if citations:  # a whole block (message_start): its citations come with it
                for citation in as_list(citations, "text.citations"):
                    asm.citation(as_object(citation, "text.citations[]"))
        elif kind == "thinking":
            asm.reasoning(as_text(block.get("thinking") or "", "thinking.thinking"))
            if block.get("signature"):
                asm.reasoning_meta(signature=as_text(block["signature"], "thinking.signature"))
        elif kind == "redacted_thinking":
            asm.reasoning("")
            asm.reasoning_meta(redacted=as_text(field(block, "data"), "redacted_thinking.data"))
        else:
            self._on_provider_block(index, kind, block)

    def _on_provider_block(self, index: int, name: str, block: dict[str, Any]) -> None:
        """A block that runs at the provider or belongs to it: kept verbatim."""
        asm = self._assembler
        if self._provider_blocks is _NO_BLOCKS:
            self._provider_blocks, self._provider_input = {}, {}
        # A copy: the input streamed later is written into it, the event stays as sent.
        self._provider_blocks[index] = asm.provider_part(PROVIDER, dict(block))
        self._provider_input[index] = []
        if not is_known_provider_block(name):
            asm.notice(
                "unknown_block",
                f"content block of type {name!r} kept verbatim; toolwire does not interpret it",
                index,
            )

    def _on_message_delta(self, item: dict[str, Any]) -> None:
        self._on_usage(item.get("usage"))
        raw_delta = item.get("delta")
        delta: dict[str, Any] = (
            raw_delta
            if type(raw_delta) is dict
            else as_object(raw_delta or {}, "message_delta.delta")
        )
        reason = delta.get("stop_reason")
        if reason:
            self._stop_reason(
                reason if type(reason) is str else as_text(reason, "stop_reason"),
                delta.get("stop_details"),
            )

    def _on_usage(self, usage: Any) -> None:
        if usage:
            counts: dict[str, Any] = usage if type(usage) is dict else as_object(usage, "usage")
            reported = self._reported = anthropic_merge(counts, self._reported)
            self._assembler.report_counts(anthropic_reported_counts(reported))


def _plain_kind(value: Any) -> str:
    """An event's ``type`` that is not exactly a ``str``: a str subclass as a plain str,
    anything else as ``""`` (no kind)."""
    return str.__str__(value) if isinstance(value, str) else ""


def refusal_details(asm: Assembler, details: Any) -> None:
    """The turn is refused; the ``stop_details`` of a refusal (category, explanation)
    become a ``refusal`` notice, so the reason is not lost."""
    asm.mark_refused()
    if details is None:
        return
    found = as_object(details, "stop_details")
    said = [str(found[k]) for k in ("category", "explanation") if found.get(k)]
    if said:
        asm.notice("refusal", "the model refused: " + "; ".join(said))
