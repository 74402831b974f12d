"""Neutral history <-> OpenAI Responses API input items, and the non-streaming decoder.

Mapping (``to_responses_input``; ``from_responses_input`` reverses it):

===================  ===========================================================
neutral              Responses input
===================  ===========================================================
SystemMessage        the first message of the history becomes ``instructions``;
                     any later one stays in place as ``{"type": "message", "role":
                     "system", "content"}`` (``developer`` decodes as system too)
UserMessage          ``{"type": "message", "role": "user", "content"}``
TextPart             ``{"type": "message", "role": "assistant", "content"}``, one
                     item per part (``output_text`` content parts decode to one
                     TextPart each)
RefusalPart          ``{"type": "message", "id", "role": "assistant", "status":
                     "completed", "content": [{"type": "refusal", "refusal"}]}``
                     (the output message it came in); without an ``id`` (another
                     provider's refusal) a plain assistant message with its text
ReasoningPart        ``{"type": "reasoning", "id", "summary": [{"type":
                     "summary_text", "text"}], "encrypted_content"?}``; a part
                     without an ``id`` is left out: Responses accepts back only
                     reasoning items it produced, which always have one
ToolCall             ``{"type": "function_call", "call_id", "name", "arguments"}``
ToolCall (freeform)  ``{"type": "custom_tool_call", "call_id", "name", "input"}``
ToolResult           ``{"type": "function_call_output", "call_id", "output"}``;
                     ``{"type": "custom_tool_call_output", "call_id", "output"}``
                     when it answers a free-form (custom) call
ProviderPart         its ``data``, verbatim (``openai_responses`` parts only; a
                     ``local_shell_call_output`` that names its call ``id``, as
                     openai-python's type does, is sent with ``call_id``)
===================  ===========================================================

Every ``mcp_approval_request`` item is answered in the same request: a history
without an ``mcp_approval_response`` for it (a part the agent adds, see
:mod:`toolwire.run.mcp_approval`) gets one that denies it, with a reason, right after
it, so a request never leaves an approval unanswered and never approves by default.
In the same way every ``local_shell_call``, ``shell_call`` and ``apply_patch_call``
(run by the client, see :mod:`toolwire.run.builtin_calls`) without its output item
gets one that says it was not executed (``answer_client_calls``).

Instructions go in ``instructions`` rather than a system item because that is where
the API documents them; later system messages keep their place. Consecutive
assistant-side items (messages, reasoning, function calls) decode into one
AssistantMessage, in item order. Like Chat, a tool output has no error flag: the
content is sent unchanged and decodes as ``ToolStatus.ERROR`` when it starts with
:data:`~toolwire.history.openai_chat.TOOL_ERROR_PREFIX`.

An assistant message with no part (after leaving out reasoning without an id) sends
no item at all. So a round trip neutral -> Responses -> neutral is lossless for
histories without two assistant messages in a row or an empty one, whose reasoning parts have an ``id`` and no
``signature``, and whose tool results are ``ok``, or ``error`` with the prefix.
A reasoning item's several summary parts decode joined by a blank line.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, NoReturn

from ..errors import ProviderAPIError
from ..messages import (
    TOOL_ERROR_PREFIX,
    AssistantMessage,
    Message,
    Part,
    ProviderPart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..turn import Turn
from ..wire.assembler import Assembler
from ..wire.content_calls import ContentCalls
from ..wire.openai_responses import (
    CLIENT_ITEMS,
    PROVIDER,
    REASONING_SUMMARY_JOIN,
    SERVER_ITEMS,
    is_client_item,
    is_server_call,
    is_server_item,
    server_call_notice,
)
from ..wire.usage import RESPONSES_INCOMPLETE_REASONS
from ..wire.usage import responses_usage as usage_from_responses
from ._common import (
    ErrorFactory,
    as_list,
    as_mapping,
    history_error,
    opt_str,
    protocol_error,
    raise_api_error,
    req_str,
    status_from_text,
    to_plain,
)

__all__ = [
    "RESPONSES_INCOMPLETE_REASONS",
    "CLIENT_CALL_OUTPUTS",
    "NOT_EXECUTED",
    "UNANSWERED_APPROVAL_REASON",
    "UNANSWERED_CALL_REASON",
    "answer_approvals",
    "answer_client_calls",
    "decode_responses_response",
    "from_responses_input",
    "not_executed_item",
    "responses_finish_reason",
    "to_responses_input",
    "usage_from_responses",
]

JSONDict = dict[str, Any]


_SUMMARY_JOIN = REASONING_SUMMARY_JOIN


# -- neutral -> Responses --------------------------------------------------------------


def to_responses_input(messages: Sequence[Message]) -> tuple[str | None, list[JSONDict]]:
    """Encode a neutral history as Responses ``instructions`` and ``input`` items.

    Args:
        messages: The neutral history, oldest first.

    Returns:
        ``(instructions, items)``: the first message's text if it is a SystemMessage
        (else ``None``), and the input items for the rest (see the module's table).

    Raises:
        HistoryError: an entry is not a toolwire message.
    """
    instructions: str | None = None
    start = 0
    if messages and isinstance(messages[0], SystemMessage):
        instructions, start = messages[0].content, 1
    items: list[JSONDict] = []
    custom: set[str] = set()  # ids of free-form calls: their results are custom outputs
    for position in range(start, len(messages)):
        message = messages[position]
        if isinstance(message, AssistantMessage):
            custom.update(p.id for p in message.parts if isinstance(p, ToolCall) and p.freeform)
        items.extend(_encode(position, message, custom))
    return instructions, answer_client_calls(answer_approvals(items))


def answer_approvals(items: list[JSONDict]) -> list[JSONDict]:
    """``items`` with a denying ``mcp_approval_response`` after each unanswered request.

    An ``mcp_approval_request`` that no ``mcp_approval_response`` of ``items`` answers
    would be left hanging; toolwire never approves on anyone's behalf, so it denies it,
    saying why. ``items`` itself is returned when every request is answered.
    """
    answered = {
        str(item.get("approval_request_id"))
        for item in items
        if item.get("type") == "mcp_approval_response"
    }
    pending = [
        item
        for item in items
        if item.get("type") == "mcp_approval_request" and str(item.get("id")) not in answered
    ]
    if not pending:
        return items
    out: list[JSONDict] = []
    for item in items:
        out.append(item)
        if any(item is request for request in pending):
            out.append(
                {
                    "type": "mcp_approval_response",
                    "approval_request_id": item.get("id"),
                    "approve": False,
                    "reason": UNANSWERED_APPROVAL_REASON,
                }
            )
    return out


CLIENT_CALL_OUTPUTS = {
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
"""Client-executed built-in call item -> the type of the output item that answers it."""

NOT_EXECUTED = f"{TOOL_ERROR_PREFIX}toolwire did not execute this call"
"""The start of the text of every output that answers a call nobody executed."""

UNANSWERED_CALL_REASON = "nothing answered it before the next request"
"""Why the encoder answers a shell or apply_patch call itself (see ``answer_client_calls``)."""

_CANNOT_EXECUTE = 126  # a shell's exit status for a command that could not be run


def answer_client_calls(items: list[JSONDict]) -> list[JSONDict]:
    """``items`` with a not-executed output after each unanswered shell or patch call.

    A ``local_shell_call``, ``shell_call`` or ``apply_patch_call`` is run by the client;
    the API rejects a request that carries one without its output. One that no output
    item of ``items`` answers (by ``call_id``) gets :func:`not_executed_item` right
    after it. ``items`` itself is returned when every call is answered.
    """
    outputs = set(CLIENT_CALL_OUTPUTS.values())
    answered = {str(item.get("call_id")) for item in items if _kind(item) in outputs}
    if not any(
        _kind(item) in CLIENT_CALL_OUTPUTS and str(item.get("call_id")) not in answered
        for item in items
    ):
        return items
    out: list[JSONDict] = []
    for item in items:
        out.append(item)
        if _kind(item) in CLIENT_CALL_OUTPUTS and str(item.get("call_id")) not in answered:
            answered.add(str(item.get("call_id")))  # one output per call, even if repeated
            out.append(not_executed_item(item, UNANSWERED_CALL_REASON))
    return out


def _kind(item: Mapping[str, Any]) -> str:
    """An item's ``type`` ("" when it is not a string: a kept item may hold anything)."""
    kind = item.get("type")
    return kind if isinstance(kind, str) else ""


def not_executed_item(call: Mapping[str, Any], why: str) -> JSONDict:
    """The output item that answers a shell or apply_patch ``call`` item as not run.

    ``apply_patch_call_output`` has status ``failed``; a ``shell_call_output`` has one
    entry per command with exit code 126 ("cannot execute") and the text on stderr; a
    ``local_shell_call_output`` has the text as its output. The text is
    :data:`NOT_EXECUTED` followed by ``why``.
    """
    kind = str(call.get("type"))
    answer: JSONDict = {"type": CLIENT_CALL_OUTPUTS[kind], "call_id": call.get("call_id")}
    text = f"{NOT_EXECUTED}: {why}"
    if kind == "apply_patch_call":
        answer.update(status="failed", output=text)
    elif kind == "shell_call":
        action = call.get("action")
        commands = action.get("commands") if isinstance(action, Mapping) else None
        count = len(commands) if isinstance(commands, list) and commands else 1
        outcome = {"type": "exit", "exit_code": _CANNOT_EXECUTE}
        answer["output"] = [
            {"stdout": "", "stderr": text, "outcome": dict(outcome)} for _ in range(count)
        ]
    else:
        answer["output"] = text
    return answer


UNANSWERED_APPROVAL_REASON = (
    "no one approved this MCP tool call (toolwire denies approval requests nobody answered)"
)
"""The ``reason`` of the denial sent for an approval request nobody answered."""


def _encode(position: int, message: Message, custom: set[str]) -> list[JSONDict]:
    if isinstance(message, (SystemMessage, UserMessage)):
        return [_message_item(message.role, message.content)]
    if isinstance(message, AssistantMessage):
        return [item for part in message.parts if (item := _encode_part(part)) is not None]
    if isinstance(message, ToolResult):
        kind = "custom_tool_call_output" if message.call_id in custom else "function_call_output"
        return [{"type": kind, "call_id": message.call_id, "output": message.content}]
    raise history_error(
        f"a {type(message).__name__} is not a toolwire message", f"position {position}"
    )


def _message_item(role: str, text: str) -> JSONDict:
    return {"type": "message", "role": role, "content": text}


def _encode_part(part: Part) -> JSONDict | None:
    if isinstance(part, TextPart):
        return _message_item("assistant", part.text)
    if isinstance(part, RefusalPart):
        return _encode_refusal(part)
    if isinstance(part, ToolCall):
        if part.freeform:
            return {
                "type": "custom_tool_call",
                "call_id": part.id,
                "name": part.name,
                "input": part.arguments,
            }
        return {
            "type": "function_call",
            "call_id": part.id,
            "name": part.name,
            "arguments": part.arguments,
        }
    if isinstance(part, ProviderPart):  # a built-in tool item: back verbatim, to Responses only
        return _keyed_by_call_id(dict(part.data)) if part.provider == PROVIDER else None
    return _encode_reasoning(part)


def _keyed_by_call_id(item: JSONDict) -> JSONDict:
    """A ``local_shell_call_output`` that names its call ``id`` sent with ``call_id``.

    The API matches an output to its call by ``call_id``: the OpenAPI spec's
    ``LocalShellToolCallOutput`` requires it (openai-python, ``api_reference/
    openapi.transformed.yml``), and with ``id`` alone the API answers 400 "No tool output
    found for local shell call". openai-python's ``LocalShellCallOutput`` type, made
    from the spec's properties, has only ``id`` ("the unique ID of the local shell tool
    call"), so an item written to that type carries the call's id there: it moves to
    ``call_id``. An item with a ``call_id`` goes back as it is.
    """
    if item.get("type") != "local_shell_call_output" or "call_id" in item or "id" not in item:
        return item
    return {("call_id" if key == "id" else key): value for key, value in item.items()}


def _encode_refusal(part: RefusalPart) -> JSONDict:
    """A refusal goes back as the output message it came in (which needs its id)."""
    if part.id is None:
        return _message_item("assistant", part.text)
    return {
        "type": "message",
        "id": part.id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": part.text}],
    }


def _encode_reasoning(part: ReasoningPart) -> JSONDict | None:
    if part.id is None:
        return None  # not produced by Responses: it would reject the item
    summary = [{"type": "summary_text", "text": part.text}] if part.text else []
    item: JSONDict = {"type": "reasoning", "id": part.id, "summary": summary}
    if part.redacted is not None:
        item["encrypted_content"] = part.redacted
    return item


# -- Responses -> neutral --------------------------------------------------------------


def from_responses_input(instructions: str | None, items: Sequence[Any]) -> list[Message]:
    """Decode Responses ``instructions`` and ``input`` items into a neutral history.

    Args:
        instructions: The request's ``instructions``, or ``None``.
        items: The input items as dicts (or SDK objects); a response's ``output``
            items decode too.

    Returns:
        The neutral history (see the module's table).

    Raises:
        HistoryError: an item is malformed, of a type toolwire does not model (item
            references, images, an unknown kind), or a function output answers a call
            no earlier item made. Built-in tool items, shell and patch calls and MCP
            approval requests and responses decode as ``ProviderPart``.
    """
    decoder = _InputDecoder()
    if instructions is not None:
        if not isinstance(instructions, str):
            raise history_error("instructions must be a string or None", "instructions")
        decoder.messages.append(SystemMessage(instructions))
    for position, raw in enumerate(as_list(to_plain(items), "input", history_error)):
        where = f"input[{position}]"
        decoder.item(as_mapping(to_plain(raw), where, history_error), where)
    return decoder.messages


class _InputDecoder:
    """Collects consecutive assistant-side items into one AssistantMessage."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.names: dict[str, str] = {}  # call id -> tool name, to name the outputs
        self.assistant: AssistantMessage | None = None

    def item(self, item: Mapping[str, Any], where: str) -> None:
        kind = item.get("type", "message")
        if kind == "message":
            self._message(item, where)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self._output(item, where)
        elif kind in ("reasoning", "function_call", "custom_tool_call"):
            self._part(_decode_part(item, where, history_error))
        elif isinstance(kind, str) and kind in _KEPT_INPUT_ITEMS:
            self._part(ProviderPart(PROVIDER, str(kind), _keyed_by_call_id(dict(item))))
        else:
            raise history_error(f"input item type {kind!r} is not supported", where)

    def _message(self, item: Mapping[str, Any], where: str) -> None:
        role = item.get("role")
        if role == "assistant":
            for part in _message_parts(item, f"{where}.content", history_error):
                self._part(part)
            return
        text = "".join(_texts(item.get("content"), f"{where}.content", history_error))
        if role in ("system", "developer"):
            self._append(SystemMessage(text))
        elif role == "user":
            self._append(UserMessage(text))
        else:
            raise history_error(
                f"message role {role!r} is not one of system, developer, user, assistant", where
            )

    def _output(self, item: Mapping[str, Any], where: str) -> None:
        call_id = req_str(item, "call_id", where, history_error)
        name = self.names.get(call_id)
        if name is None:
            raise history_error(
                f"function_call_output answers call {call_id!r}, which no earlier item made", where
            )
        content = "".join(_texts(item.get("output"), f"{where}.output", history_error))
        self._append(ToolResult(call_id, name, content, status_from_text(content)))

    def _part(self, part: Part) -> None:
        if self.assistant is None:
            self.assistant = AssistantMessage()
            self.messages.append(self.assistant)
        self.assistant.parts.append(part)
        if isinstance(part, ToolCall):
            self.names[part.id] = part.name

    def _append(self, message: Message) -> None:
        self.assistant = None
        self.messages.append(message)


def _decode_part(item: Mapping[str, Any], where: str, err: ErrorFactory) -> Part:
    """A ``reasoning``, ``function_call`` or ``custom_tool_call`` item as a neutral part."""
    kind = item.get("type")
    if kind == "function_call":
        return _decode_call(item, where, err)
    if kind == "custom_tool_call":
        call_id = req_str(item, "call_id", where, err)
        name = req_str(item, "name", where, err)
        call = ToolCall(call_id, name, opt_str(item, "input", where, err) or "")
        call.freeform = True
        return call
    return _decode_reasoning(item, where, err)


# Assistant-side items kept verbatim when a history is decoded: the built-in tools'
# items, shell and patch calls, and the MCP approval request with its answer.
_KEPT_INPUT_ITEMS = (
    SERVER_ITEMS
    | CLIENT_ITEMS
    | {"mcp_approval_response"}
    | {f"{kind}_output" for kind in CLIENT_ITEMS}
)


def _decode_call(item: Mapping[str, Any], where: str, err: ErrorFactory) -> ToolCall:
    call_id = req_str(item, "call_id", where, err)
    name = req_str(item, "name", where, err)
    return ToolCall(call_id, name, opt_str(item, "arguments", where, err) or "")


def _decode_reasoning(item: Mapping[str, Any], where: str, err: ErrorFactory) -> ReasoningPart:
    return ReasoningPart(
        _reasoning_text(item, where, err),
        redacted=opt_str(item, "encrypted_content", where, err),
        id=opt_str(item, "id", where, err),
    )


def _reasoning_text(item: Mapping[str, Any], where: str, err: ErrorFactory) -> str:
    """The summary texts (OpenAI) or, without a summary, the ``reasoning_text`` content
    (open-weight servers such as vLLM serving gpt-oss)."""
    summary = item.get("summary")
    texts = _part_texts(summary, f"{where}.summary", err, ("summary_text",)) if summary else []
    if not texts and item.get("content"):
        texts = _part_texts(item.get("content"), f"{where}.content", err, ("reasoning_text",))
    return _SUMMARY_JOIN.join(texts)


def _message_parts(
    item: Mapping[str, Any], where: str, err: ErrorFactory
) -> list[TextPart | RefusalPart]:
    """An assistant message's content: a TextPart per text part, a RefusalPart (with the
    message's id, to send it back) per ``refusal`` part."""
    content = item.get("content")
    if not isinstance(content, list):
        return [TextPart(text) for text in _texts(content, where, err)]
    item_id = opt_str(item, "id", where, err)
    texts = _texts(content, where, err)  # checks every part
    return [
        RefusalPart(text, item_id)
        if isinstance(raw, Mapping) and raw.get("type") == "refusal"
        else TextPart(text)
        for raw, text in zip(content, texts, strict=True)
    ]


def _texts(content: Any, where: str, err: ErrorFactory) -> list[str]:
    """A message's text pieces: a string, or a list of text content parts."""
    if isinstance(content, str):
        return [content]
    kinds = ("input_text", "output_text", "text", "refusal")
    return _part_texts(content, where, err, kinds)


def _part_texts(content: Any, where: str, err: ErrorFactory, kinds: tuple[str, ...]) -> list[str]:
    texts = []
    for i, raw in enumerate(as_list(content, where, err)):
        part = as_mapping(raw, f"{where}[{i}]", err)
        kind = part.get("type")
        if kind not in kinds:
            raise err(
                f"content part type {kind!r} has no place in toolwire's text-only messages",
                f"{where}[{i}]",
            )
        texts.append(
            req_str(part, "refusal" if kind == "refusal" else "text", f"{where}[{i}]", err)
        )
    return texts


# -- non-streaming response -> Turn ----------------------------------------------------


def decode_responses_response(
    response: Any,
    *,
    keep_logprobs: bool = False,
    offered_tools: Collection[str] | None = None,
    content_calls: ContentCalls | None = None,
) -> Turn:
    """Decode a non-streaming Responses API response into a Turn.

    Output items go, in order, through the same
    :class:`~toolwire.wire.assembler.Assembler` as a stream (a function call's index is
    its position in ``output``), so the same rules hold. A ``custom_tool_call`` is a
    free-form call (``ToolRequest.freeform``). Items of built-in tools (web search,
    file search...) are kept verbatim as ``ProviderPart``; an item kind toolwire does
    not know is kept the same way with a Notice of kind ``unsupported_item``.

    A ``refusal`` content part is a ``RefusalPart`` (the turn is ``refused``), as in a
    stream.

    Args:
        response: The response body as a dict, or the SDK's ``Response``.
        keep_logprobs: Keep the output text parts' ``logprobs`` on
            ``Turn.logprobs["content"]``.
        offered_tools: The names of the tools the request offered: a
            ``custom_tool_call`` of another name was run by the server (xAI) and is
            kept as a ``ProviderPart`` (``is_server_call``).
        content_calls: Read output text with a model family's call markup, as the
            stream decoder does (``toolwire.wire.content_calls``).

    Returns:
        The Turn, finish reason from :func:`responses_finish_reason`, usage from
        :func:`usage_from_responses`.

    Raises:
        ProviderAPIError: the response failed or was cancelled.
        ProtocolError: the body is not a finished Responses API response.
        TurnError: a function call breaks the assembler's rules.
    """
    body = as_mapping(to_plain(response), "response", protocol_error)
    raise_api_error(body)
    output = as_list(body.get("output", []), "response.output", protocol_error)
    assembler = Assembler()
    has_calls = False
    for index, raw in enumerate(output):
        where = f"response.output[{index}]"
        item = as_mapping(raw, where, protocol_error)
        if item.get("type") == "custom_tool_call" and is_server_call(
            item.get("name"), offered_tools
        ):
            assembler.part_break()
            assembler.provider_part(PROVIDER, dict(item))
            server_call_notice(assembler, dict(item), index)
            continue
        has_calls |= _feed_item(assembler, index, item, where, content_calls)
    if keep_logprobs:
        _keep_logprobs(assembler, output)
    finish = responses_finish_reason(body, has_tool_calls=has_calls)
    if content_calls is not None:
        finish = content_calls.finish_reason(assembler, finish)
    if finish is not None:
        assembler.finish(finish)
    usage = body.get("usage")
    if isinstance(usage, Mapping):
        assembler.set_usage(usage_from_responses(usage))
    return assembler.close()


def _feed_item(
    assembler: Assembler,
    index: int,
    item: Mapping[str, Any],
    where: str,
    content_calls: ContentCalls | None = None,
) -> bool:
    """Feed one output item; return True if it is a function call."""
    kind = item.get("type")
    if kind == "function_call":
        call_id = opt_str(item, "call_id", where, protocol_error)
        name = opt_str(item, "name", where, protocol_error)
        assembler.tool_fragment(
            index, call_id, name, opt_str(item, "arguments", where, protocol_error)
        )
        return True
    if kind == "custom_tool_call":  # a free-form input tool: the raw input is the argument
        call_id = opt_str(item, "call_id", where, protocol_error)
        name = opt_str(item, "name", where, protocol_error)
        assembler.custom_call(index, call_id, name, opt_str(item, "input", where, protocol_error))
        return True
    if kind == "message":
        assembler.part_break()
        for content in _message_parts(item, f"{where}.content", protocol_error):
            if isinstance(content, RefusalPart):
                assembler.refusal(content.text, content.id)
            elif content.text and content_calls is not None:
                content_calls.text(assembler, content.text)
            elif content.text:  # as in a stream, where an empty text part sends no delta
                assembler.text(content.text)
        for annotation in _annotations(item.get("content"), f"{where}.content"):
            assembler.citation(annotation)
    elif kind == "reasoning":
        part = _decode_reasoning(item, where, protocol_error)
        assembler.part_break()
        assembler.reasoning(part.text)
        assembler.reasoning_meta(redacted=part.redacted, id=part.id)
    else:
        # A built-in tool's item: kept verbatim in place and sent back, never run here.
        name = req_str(item, "type", where, protocol_error)
        assembler.part_break()
        assembler.provider_part(PROVIDER, dict(item))
        if not is_server_item(name) and not is_client_item(name):
            assembler.notice(
                "unsupported_item",
                f"output item of type {name!r} kept verbatim; toolwire does not run it",
                index,
            )
    return False


def _keep_logprobs(assembler: Assembler, output: list[Any]) -> None:
    """The ``logprobs`` of every output text part, in order, as ``content`` logprobs."""
    for index, item in enumerate(output):
        if not isinstance(item, Mapping) or item.get("type") != "message":
            continue
        content = item.get("content")
        for i, part in enumerate(content if isinstance(content, list) else ()):
            logprobs = part.get("logprobs") if isinstance(part, Mapping) else None
            if logprobs is not None:
                where = f"response.output[{index}].content[{i}].logprobs"
                assembler.logprobs("content", as_list(logprobs, where, protocol_error))


def _annotations(content: Any, where: str) -> list[dict[str, Any]]:
    """The annotations of a message's output text parts, verbatim and in order."""
    if not isinstance(content, list):
        return []
    found: list[dict[str, Any]] = []
    for i, raw in enumerate(content):
        annotations = raw.get("annotations") if isinstance(raw, Mapping) else None
        for annotation in as_list(annotations or [], f"{where}[{i}].annotations", protocol_error):
            found.append(
                dict(as_mapping(annotation, f"{where}[{i}].annotations[]", protocol_error))
            )
    return found


def responses_finish_reason(response: Mapping[str, Any], *, has_tool_calls: bool) -> str | None:
    """The finish reason (OpenAI Chat vocabulary) of a finished Responses API response.

    Args:
        response: The response object (a non-streaming body, or the ``response`` of a
            ``response.completed`` / ``response.incomplete`` stream event).
        has_tool_calls: Whether the output holds a function call.

    Returns:
        ``tool_calls`` or ``stop`` for ``completed``, the mapped
        ``incomplete_details.reason`` for ``incomplete`` (see
        :data:`RESPONSES_INCOMPLETE_REASONS`), ``None`` when there is no status.

    Raises:
        ProviderAPIError: the status is ``failed`` or ``cancelled``.
        ProtocolError: the status says the response is not finished, or is unknown.
    """
    status = response.get("status")
    if status is None or status == "completed":
        return None if status is None else ("tool_calls" if has_tool_calls else "stop")
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return RESPONSES_INCOMPLETE_REASONS.get(str(reason), str(reason)) if reason else "length"
    if status in ("failed", "cancelled"):
        _raise_unfinished(response, str(status))
    raise protocol_error(
        f"response status {status!r} is not a finished response", "response.status"
    )


def _raise_unfinished(response: Mapping[str, Any], status: str) -> NoReturn:
    """Raise the provider's error for a failed or cancelled response."""
    raise_api_error(response)  # the response's own ``error`` says most
    raise ProviderAPIError(f"the response {status}", error_type=status, body=dict(response))
