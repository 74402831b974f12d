"""Neutral history <-> Anthropic Messages.

Mapping (``to_anthropic``; ``from_anthropic`` reverses it):

===================  ===========================================================
neutral              Anthropic
===================  ===========================================================
SystemMessage        the ``system`` parameter: every system message's text, in
                     order, joined by a blank line (Messages has no system role)
UserMessage          a ``text`` block in a user turn; one with images: its parts
                     in order, ``text`` and ``image`` blocks (below)
AssistantMessage     an assistant turn with one block per part, in part order:
                     ``thinking`` (text + ``signature``), ``redacted_thinking``
                     (``data`` from ``redacted``), ``text`` (with its
                     ``citations``), ``tool_use`` with ``input`` = the arguments
                     parsed (``""`` -> ``{}``) and its ``caller`` when it has
                     one, a refusal part as ``text`` (Anthropic has no refusal
                     block; its refusals are a stop reason), and each Anthropic
                     ``ProviderPart`` (server tool use/result, container,
                     compaction block) as its ``data``, unchanged
ToolResult           a ``tool_result`` block (``tool_use_id``, ``content``, and
                     ``is_error: true`` for every status but ok); a result with
                     images has a list as ``content``: its parts in order, text as
                     ``{"type": "text", "text"}`` (empty ones left out), an image as
                     ``{"type": "image", "source": {"type": "base64",
                     "media_type", "data"}}`` (the shape Anthropic documents for
                     images inside a ``tool_result``)
===================  ===========================================================

Anthropic wants user and assistant turns to alternate and the results of a turn's
calls in the next user turn, so consecutive messages on the same side merge into one
turn: the results of one assistant message (and any user text after them) become ONE
user turn. Left out, because Anthropic would reject them: reasoning another provider
produced (a part with an ``id`` is OpenAI's; a part with neither ``signature`` nor
``redacted`` carries no proof Anthropic accepts), empty assistant text parts, and an
assistant message left with no block at all.

Arguments that are not a JSON object (invalid JSON, or an array, string, number) cannot
be a ``tool_use`` ``input``, which must be an object. Raising would end the
conversation over a model mistake that the call's error result already reports, so the
text is wrapped instead: ``input = {INVALID_ARGUMENTS_KEY: "<the text>"}``. The model
sees what it sent; the decoder unwraps it to the original string.

A round trip neutral -> Anthropic -> neutral is therefore lossless for histories with at
most one system message, first; no two assistant messages in a row, none empty; reasoning parts
that are either thinking (text + signature) or redacted (no text, no signature) and
have no ``id``; arguments in the form ``json.dumps`` writes (Anthropic keeps the parsed
object, so an exact string comes back re-serialized); and statuses ``ok`` or ``error``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..checks import reject_json_constant
from ..messages import (
    AssistantMessage,
    ContentPart,
    Image,
    Message,
    Part,
    ProviderPart,
    ReasoningPart,
    RefusalPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)
from ..wire.anthropic import PROVIDER
from ..wire.anthropic_body import INVALID_ARGUMENTS_KEY, assistant_part
from ..wire.fields import (
    ErrorFactory,
    as_list,
    as_object,
    history_error,
    req_str,
    to_plain,
)
from ..wire.usage import ANTHROPIC_STOP_REASONS
from ..wire.usage import anthropic_usage as usage_from_anthropic

__all__ = [
    "ANTHROPIC_STOP_REASONS",
    "from_anthropic",
    "input_from_arguments",
    "parse_object",
    "to_anthropic",
    "usage_from_anthropic",
]

JSONDict = dict[str, Any]


_SYSTEM_JOIN = "\n\n"


# -- neutral -> Anthropic --------------------------------------------------------------


def to_anthropic(messages: Sequence[Message]) -> tuple[str | None, list[JSONDict]]:
    """Encode a neutral history as Anthropic's ``system`` and ``messages``.

    Args:
        messages: The neutral history, oldest first.

    Returns:
        ``(system, turns)``: the system messages' text (``None`` if there are none) and
        alternating user/assistant turns (see the module's table).

    Raises:
        HistoryError: an entry is not a toolwire message.
    """
    system: list[str] = []
    turns: list[JSONDict] = []
    for position, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            system.append(message.content)
            continue
        role, blocks = _encode(position, message)
        if not blocks:
            continue  # an assistant message with nothing Anthropic accepts: it rejects empty turns
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    return (_SYSTEM_JOIN.join(system) if system else None), turns


def _encode(position: int, message: Message) -> tuple[str, list[JSONDict]]:
    if isinstance(message, UserMessage):
        if message.parts:
            return "user", _content_blocks(message.parts)
        return "user", [{"type": "text", "text": message.content}]
    if isinstance(message, ToolResult):
        return "user", [_encode_result(message)]
    if isinstance(message, AssistantMessage):
        return "assistant", [
            block for part in message.parts if (block := _encode_part(part)) is not None
        ]
    raise history_error(
        f"a {type(message).__name__} is not a toolwire message", f"position {position}"
    )


def _encode_result(result: ToolResult) -> JSONDict:
    block: JSONDict = {
        "type": "tool_result",
        "tool_use_id": result.call_id,
        "content": _content_blocks(result.parts) if result.parts else result.content,
    }
    if result.status.is_error:
        block["is_error"] = True
    return block


def _content_blocks(parts: Sequence[ContentPart]) -> list[JSONDict]:
    """Text and image parts as Anthropic content blocks (empty text left out: Anthropic
    rejects an empty text block)."""
    return [
        _image_block(part) if isinstance(part, Image) else {"type": "text", "text": part.text}
        for part in parts
        if isinstance(part, Image) or part.text
    ]


def _image_block(image: Image) -> JSONDict:
    source = {"type": "base64", "media_type": image.media_type, "data": image.base64()}
    return {"type": "image", "source": source}


def _encode_part(part: Part) -> JSONDict | None:
    if isinstance(part, ToolCall):
        block: JSONDict = {
            "type": "tool_use",
            "id": part.id,
            "name": part.name,
            "input": input_from_arguments(part.arguments),
        }
        if part.caller is not None:
            block["caller"] = part.caller
        return block
    if isinstance(part, RefusalPart):  # another provider's refusal: Anthropic reads it as text
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, TextPart):
        if part.citations:
            return {"type": "text", "text": part.text, "citations": part.citations}
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ProviderPart):  # a server tool block: back verbatim, to Anthropic only
        return dict(part.data) if part.provider == PROVIDER else None
    return _encode_reasoning(part)


def _encode_reasoning(part: ReasoningPart) -> JSONDict | None:
    if part.id is not None:
        return None  # an OpenAI Responses reasoning item: Anthropic cannot verify it
    if part.signature is not None:
        return {"type": "thinking", "thinking": part.text, "signature": part.signature}
    if part.redacted is not None:
        return {"type": "redacted_thinking", "data": part.redacted}
    return None  # unsigned reasoning (another provider's): Anthropic would reject it


def input_from_arguments(arguments: str) -> JSONDict:
    """The ``tool_use`` ``input`` for a call's arguments text.

    Args:
        arguments: The arguments exactly as the model sent them.

    Returns:
        The parsed object (``{}`` for empty text), or ``{INVALID_ARGUMENTS_KEY: text}``
        when the text is not a JSON object.
    """
    parsed = parse_object(arguments)
    return parsed if parsed is not None else {INVALID_ARGUMENTS_KEY: arguments}


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is out of a float's range")
    return value


def parse_object(arguments: str) -> dict[str, Any] | None:
    """Parse tool-call arguments as a JSON object, or return ``None`` if they are not one.

    Empty or blank arguments mean "no arguments" (``{}``), as the assembler treats them.
    ``NaN`` and ``Infinity`` are rejected: Python's parser accepts them, JSON does not;
    so is a number too large for a float (``1e999`` would be infinity), and a string
    holding an escaped lone surrogate: no provider's JSON encoder writes them back.
    """
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments, parse_constant=reject_json_constant, parse_float=_finite)
    except (ValueError, RecursionError):
        # RecursionError: nesting deeper than the parser's stack is not usable input.
        return None
    if not isinstance(value, dict):
        return None
    if "\\u" in arguments and not _utf8_safe(value):  # an escaped lone surrogate
        return None
    return value


def _utf8_safe(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- Anthropic -> neutral --------------------------------------------------------------


def from_anthropic(system: Any, messages: Sequence[Any]) -> list[Message]:
    """Decode Anthropic ``system`` and ``messages`` into a neutral history.

    Args:
        system: The ``system`` parameter: ``None``, a string, or a list of ``text``
            blocks (one SystemMessage each).
        messages: The turns as dicts (or SDK objects).

    Returns:
        The neutral history: system messages first, then one message per user text
        block, tool result and assistant turn, in order.

    Raises:
        HistoryError: a turn or block is malformed, of a kind toolwire's text-only
            model cannot hold (images, documents, server tools), or a ``tool_result``
            answers a ``tool_use`` no earlier turn made.
    """
    decoded = _decode_system(to_plain(system))
    names: dict[str, str] = {}  # tool_use id -> tool name, to name the results
    for position, raw in enumerate(as_list(to_plain(messages), "messages", history_error)):
        where = f"messages[{position}]"
        decoded.extend(_decode_turn(as_object(to_plain(raw), where, history_error), where, names))
    return decoded


def _decode_system(system: Any) -> list[Message]:
    if system is None:
        return []
    if isinstance(system, str):
        return [SystemMessage(system)]
    blocks = as_list(system, "system", history_error)
    return [SystemMessage(_block_text(block, f"system[{i}]")) for i, block in enumerate(blocks)]


def _block_text(raw: Any, where: str) -> str:
    block = as_object(raw, where, history_error)
    if block.get("type") != "text":
        raise history_error(
            f"block type {block.get('type')!r} is not supported here (only 'text')", where
        )
    return req_str(block, "text", where, history_error)


def _decode_turn(turn: Mapping[str, Any], where: str, names: dict[str, str]) -> list[Message]:
    role = turn.get("role")
    content = turn.get("content")
    if role == "assistant":
        assistant = AssistantMessage(_assistant_parts(content, f"{where}.content", history_error))
        names.update((call.id, call.name) for call in assistant.tool_calls)
        return [assistant]
    if role == "user":
        if isinstance(content, str):
            return [UserMessage(content)]
        blocks = as_list(content, f"{where}.content", history_error)
        return [
            _user_block(block, f"{where}.content[{i}]", names) for i, block in enumerate(blocks)
        ]
    raise history_error(f"role {role!r} is not 'user' or 'assistant'", where)


def _user_block(raw: Any, where: str, names: dict[str, str]) -> Message:
    block = as_object(raw, where, history_error)
    if block.get("type") != "tool_result":
        return UserMessage(_block_text(block, where))
    call_id = req_str(block, "tool_use_id", where, history_error)
    name = names.get(call_id)
    if name is None:
        raise history_error(
            f"tool_result answers tool_use {call_id!r}, which no earlier turn made", where
        )
    status = ToolStatus.ERROR if block.get("is_error") is True else ToolStatus.OK
    return ToolResult(call_id, name, _result_text(block.get("content"), f"{where}.content"), status)


def _result_text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    blocks = as_list(content, where, history_error)
    return "".join(_block_text(block, f"{where}[{i}]") for i, block in enumerate(blocks))


def _assistant_parts(content: Any, where: str, err: ErrorFactory) -> list[Part]:
    if isinstance(content, str):
        return [TextPart(content)] if content else []
    blocks = as_list(content, where, err)
    return [
        assistant_part(as_object(raw, f"{where}[{i}]", err), f"{where}[{i}]", err)
        for i, raw in enumerate(blocks)
    ]
