"""OpenAI Responses API stream decoder (``response.*`` events).

A function call is an output item: ``response.output_item.added`` opens it (with
``call_id`` and ``name``) at its ``output_index``, which is the assembler's index;
``response.function_call_arguments.delta`` adds fragments and ``.done`` carries the
full text (authoritative: it replaces the fragments if they differ, with a notice).
A ``custom_tool_call`` item (a free-form input tool) is a client call too: its raw
``input`` text is the call's argument, streamed by ``response.custom_tool_call_input.delta``
and finished by ``.done`` or the item's ``output_item.done`` (see ``Assembler.custom_call``).
Text comes from ``response.output_text.delta``, a refusal part (the turn is then
``refused``) from ``response.refusal.delta``, reasoning from ``response.reasoning_summary_text.delta`` / ``response.reasoning_text.delta``
(and a reasoning item's ``encrypted_content`` is kept so it can be sent back).
``response.completed`` / ``response.incomplete`` end the turn; ``response.failed`` and
``error`` raise ``ProviderAPIError``.

Reasoning summary parts are joined with a blank line (``REASONING_SUMMARY_JOIN``),
exactly as the non-streaming decoder joins a body's ``summary`` list, so both give the
same turn. ``response.output_text.annotation.added`` annotations are kept on the text
part (``TextPart.citations``). Every other output item (built-in tools: web search,
file search, code interpreter, image generation, the MCP connector...) becomes a
``ProviderPart`` in its place, kept verbatim and sent back unchanged; an item that is
not documented (a future kind) is kept the same way with an ``unsupported_item``
notice: toolwire does not run it. An ``mcp_approval_request`` is kept without a notice:
the next request answers it (``toolwire.history.responses_mcp``); so are the calls the
client runs (``local_shell_call``, ``shell_call``, ``apply_patch_call``: answered by
``toolwire.history.responses_builtin``, or as not executed).

A ``custom_tool_call`` of a tool the request never offered (xAI's server-side tools,
``x_keyword_search``, ``view_x_video``: the server ran them and answers in the same
response) is kept as a ``ProviderPart`` with a ``server_call_kept`` notice, not made a
client call, when the decoder is told the offered names (``offered_tools=``; the
model that made the request always tells it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, NoReturn

from ..errors import ProviderAPIError
from ..messages import ProviderPart
from .assembler import Assembler
from .content_calls import ContentCalls, finish_turn
from .events import Event
from .fields import (
    api_error,
    as_index,
    as_list,
    as_object,
    as_text,
    field,
    opt_text,
    protocol_error,
    raise_api_error,
)
from .stream import StreamDecoder
from .usage import RESPONSES_INCOMPLETE_REASONS, responses_usage

__all__ = [
    "PROVIDER",
    "REASONING_SUMMARY_JOIN",
    "OpenAIResponsesStream",
    "is_client_item",
    "is_server_call",
    "is_server_item",
    "responses_finish_reason",
]

PROVIDER = "openai_responses"
"""``ProviderPart.provider`` of the items kept verbatim."""

REASONING_SUMMARY_JOIN = "\n\n"
"""What separates two summary parts of one reasoning item (stream and body alike)."""

# Output items the provider runs itself: kept and sent back, nothing for toolwire to do.
SERVER_ITEMS = frozenset(
    {
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",  # answered by the next request, see history/responses_mcp.py
    }
)


def is_server_item(kind: str) -> bool:
    """True for an output item kind that a built-in (provider-run) tool produces."""
    return kind in SERVER_ITEMS


# Built-in calls the client runs: answered by the next request (history/responses_builtin.py).
CLIENT_ITEMS = frozenset({"local_shell_call", "shell_call", "apply_patch_call"})


def is_client_item(kind: str) -> bool:
    """True for a built-in tool's call item that the client executes (shell, patch)."""
    return kind in CLIENT_ITEMS


def is_server_call(name: Any, offered_tools: Collection[str] | None) -> bool:
    """True for a ``custom_tool_call`` the server ran itself: a tool never offered.

    xAI's server-side tools (``x_keyword_search``, ``view_x_video``...) arrive as
    ``custom_tool_call`` items the server has already run, and it answers in the same
    response; a call of a tool the request never offered cannot be the client's. Only
    told apart when the offered names are known (``None``: every call is the client's).
    """
    return offered_tools is not None and name not in offered_tools


class OpenAIResponsesStream(StreamDecoder):
    """Decodes one OpenAI Responses API streamed response into a ``Turn``."""

    provider = "OpenAI Responses"

    def __init__(
        self,
        *,
        keep_logprobs: bool = False,
        deltas: bool = True,
        offered_tools: Collection[str] | None = None,
        content_calls: ContentCalls | None = None,
    ) -> None:
        """``keep_logprobs``: keep token log probabilities on ``Turn.logprobs["content"]``.
        ``deltas=False``: no ``ToolCallDelta`` per arguments fragment, and a call whole
        in the event that opens it comes as its ``ToolCallReady`` alone (see ``Assembler``).
        ``offered_tools``: the names of the tools the request offered; a
        ``custom_tool_call`` of any other name is a server-run call (xAI's server-side
        tools), kept as a ``ProviderPart`` (see :func:`is_server_call`).
        ``content_calls``: read output text with a model family's call markup (calls a
        served model left in its answer, see ``wire.content_calls``); one per turn."""
        super().__init__(deltas=deltas)
        self._content = content_calls
        self._offered: frozenset[str] | None = (
            None if offered_tools is None else frozenset(offered_tools)
        )
        self._has_calls = False
        self._items_kept: dict[int, ProviderPart] = {}
        # Keep ``logprobs`` of output text deltas on Turn.logprobs["content"].
        self._keep_logprobs = keep_logprobs

    def feed(self, item: Any) -> list[Event]:
        """Consume one ``response.*`` event (a dict or an SDK object); return events."""
        return self._decode_with(self._handle, item)

    def _handle(self, item: dict[str, Any]) -> None:
        kind = field(item, "type")
        if kind == "response.function_call_arguments.delta":
            self._assembler.arguments(_index(item), as_text(field(item, "delta"), "delta"))
            return
        handler = _HANDLERS.get(kind) if kind.__class__ is str else None
        if handler is not None:
            handler(self, item)

    def _on_args_done(self, item: dict[str, Any]) -> None:
        arguments = as_text(field(item, "arguments"), "arguments")
        self._assembler.tool_arguments_done(_index(item), arguments)

    def _on_item_added(self, item: dict[str, Any]) -> None:
        out = as_object(field(item, "item"), "item")
        self._assembler.part_break()
        kind = field(out, "type")
        if kind not in _MAPPED_ITEMS or self._server_call(kind, out):
            name = as_text(kind, "item.type")
            self._items_kept[_index(item)] = self._assembler.provider_part(PROVIDER, dict(out))
            if kind == "custom_tool_call":
                server_call_notice(self._assembler, out, _index(item))
            elif not is_server_item(name) and not is_client_item(name):
                self._assembler.notice(
                    "unsupported_item",
                    f"output item of type {name!r} kept verbatim; toolwire does not run it",
                    _index(item),
                )
        elif kind == "function_call":
            self._has_calls = True
            self._assembler.tool_fragment(
                _index(item),
                opt_text(out.get("call_id"), "item.call_id"),
                opt_text(out.get("name"), "item.name"),
                opt_text(out.get("arguments") or None, "item.arguments"),
            )
        elif kind == "custom_tool_call":
            self._has_calls = True
            self._assembler.custom_call(
                _index(item),
                opt_text(out.get("call_id"), "item.call_id"),
                opt_text(out.get("name"), "item.name"),
                opt_text(out.get("input") or None, "item.input"),
            )

    def _on_item_done(self, item: dict[str, Any]) -> None:
        out = as_object(field(item, "item"), "item")
        kind = field(out, "type")
        if kind == "reasoning":
            self._assembler.reasoning_meta(
                redacted=opt_text(out.get("encrypted_content"), "item.encrypted_content"),
                id=opt_text(out.get("id"), "item.id"),
            )
        elif kind == "function_call" and out.get("arguments") is not None:
            arguments = as_text(out["arguments"], "item.arguments")
            self._assembler.tool_arguments_done(_index(item), arguments)
        elif kind == "custom_tool_call" and not self._server_call(kind, out):
            if _index(item) not in self._assembler.calls:  # done without added
                self._on_item_added(item)
            if out.get("input") is not None:
                self._assembler.tool_arguments_done(
                    _index(item), as_text(out["input"], "item.input")
                )
        elif kind not in _MAPPED_ITEMS or kind == "custom_tool_call":
            kept = self._items_kept.pop(_index(item), None)
            if kept is None:  # done without added: keep it now, in arrival order
                self._on_item_added(item)
            else:  # the finished item is the one to send back
                kept.data.clear()
                kept.data.update(out)

    def _server_call(self, kind: Any, out: dict[str, Any]) -> bool:
        return kind == "custom_tool_call" and is_server_call(out.get("name"), self._offered)

    def _on_custom_input(self, item: dict[str, Any]) -> None:
        if _index(item) in self._items_kept:  # a server-run call: its item holds the input
            return
        self._assembler.custom_input(_index(item), as_text(field(item, "delta"), "delta"))

    def _on_custom_input_done(self, item: dict[str, Any]) -> None:
        if _index(item) in self._items_kept:
            return
        self._assembler.tool_arguments_done(_index(item), as_text(field(item, "input"), "input"))

    def _on_text(self, item: dict[str, Any]) -> None:
        text = as_text(field(item, "delta"), "delta")
        if self._content is not None:
            self._content.text(self._assembler, text)
        else:
            self._assembler.text(text)
        if self._keep_logprobs and item.get("logprobs") is not None:
            self._assembler.logprobs("content", as_list(item["logprobs"], "logprobs"))

    def _on_refusal(self, item: dict[str, Any]) -> None:
        item_id = item.get("item_id")
        self._assembler.refusal(
            as_text(field(item, "delta"), "delta"),
            None if item_id is None else as_text(item_id, "item_id"),
        )

    def _on_reasoning(self, item: dict[str, Any]) -> None:
        self._assembler.reasoning(as_text(field(item, "delta"), "delta"))

    def _on_summary_part(self, item: dict[str, Any]) -> None:
        """A reasoning summary part starts: all but the first are set off by a blank line."""
        summary_index = item.get("summary_index")
        if summary_index is not None and as_index(summary_index, "summary_index") > 0:
            self._assembler.reasoning(REASONING_SUMMARY_JOIN)

    def _on_annotation(self, item: dict[str, Any]) -> None:
        self._assembler.citation(as_object(field(item, "annotation"), "annotation"))

    def _on_completed(self, item: dict[str, Any]) -> None:
        self._end(item, "completed")

    def _on_incomplete(self, item: dict[str, Any]) -> None:
        self._end(item, "incomplete")

    def _end(self, item: dict[str, Any], status: str) -> None:
        """The turn's end: usage, then the finish reason as a body of the same turn gives it."""
        response = as_object(field(item, "response"), "response")
        self._usage(response)
        reason = responses_finish_reason(response, has_tool_calls=self._has_calls, status=status)
        finish_turn(self._assembler, reason, self._content)
        self._ended = True

    def _on_failed(self, item: dict[str, Any]) -> None:
        error = as_object(field(item, "response"), "response").get("error") or {}
        raise api_error(error, item, prefix="response failed: ", kinds=("code",))

    def _on_error(self, item: dict[str, Any]) -> None:
        raise api_error(item, item, kinds=("code",))

    def _usage(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        if usage:
            self._assembler.set_usage(responses_usage(as_object(usage, "usage")))


def server_call_notice(asm: Assembler, item: dict[str, Any], index: int | None) -> None:
    """Say that a call of a tool never offered was kept as the server's own item."""
    asm.notice(
        "server_call_kept",
        f"custom_tool_call {item.get('name')!r} names no offered tool: the server ran it "
        "(kept as a provider item, not run here)",
        index,
    )


_MAPPED_ITEMS = frozenset({"function_call", "custom_tool_call", "message", "reasoning"})


def _index(item: dict[str, Any]) -> int:
    return as_index(field(item, "output_index"), "output_index")


_HANDLERS = {
    "response.function_call_arguments.done": OpenAIResponsesStream._on_args_done,
    "response.custom_tool_call_input.delta": OpenAIResponsesStream._on_custom_input,
    "response.custom_tool_call_input.done": OpenAIResponsesStream._on_custom_input_done,
    "response.output_item.added": OpenAIResponsesStream._on_item_added,
    "response.output_item.done": OpenAIResponsesStream._on_item_done,
    "response.output_text.delta": OpenAIResponsesStream._on_text,
    "response.refusal.delta": OpenAIResponsesStream._on_refusal,
    "response.reasoning_summary_text.delta": OpenAIResponsesStream._on_reasoning,
    "response.reasoning_text.delta": OpenAIResponsesStream._on_reasoning,
    "response.reasoning_summary_part.added": OpenAIResponsesStream._on_summary_part,
    "response.output_text.annotation.added": OpenAIResponsesStream._on_annotation,
    "response.completed": OpenAIResponsesStream._on_completed,
    "response.incomplete": OpenAIResponsesStream._on_incomplete,
    "response.failed": OpenAIResponsesStream._on_failed,
    "error": OpenAIResponsesStream._on_error,
}


def responses_finish_reason(
    response: Mapping[str, Any], *, has_tool_calls: bool, status: str | None = None
) -> str | None:
    """The finish reason (OpenAI Chat vocabulary) of a finished Responses API response.

    Args:
        response: The response object (a non-streaming body, or the ``response`` of a
            ``response.completed`` / ``response.incomplete`` stream event).
        has_tool_calls: Whether the output holds a function call.
        status: The status the stream event implies (``completed`` for
            ``response.completed``), used when the response carries none.

    Returns:
        ``tool_calls`` or ``stop`` for ``completed``, the mapped
        ``incomplete_details.reason`` for ``incomplete`` (see
        :data:`RESPONSES_INCOMPLETE_REASONS`), ``None`` when there is no status.

    Raises:
        ProviderAPIError: the status is ``failed`` or ``cancelled``.
        ProtocolError: the status says the response is not finished, or is unknown.
    """
    # Any: a malformed body's status is data to report (compiled, a str local rejects it).
    found: Any = response.get("status") or status
    if found is None or found == "completed":
        return None if found is None else ("tool_calls" if has_tool_calls else "stop")
    if found == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return RESPONSES_INCOMPLETE_REASONS.get(str(reason), str(reason)) if reason else "length"
    if found in ("failed", "cancelled"):
        _raise_unfinished(response, str(found))
    raise protocol_error(f"response status {found!r} is not a finished response", "response.status")


def _raise_unfinished(response: Mapping[str, Any], status: str) -> NoReturn:
    """Raise the provider's error for a failed or cancelled response."""
    raise_api_error(response)  # the response's own ``error`` says most
    raise ProviderAPIError(f"the response {status}", error_type=status, body=dict(response))
