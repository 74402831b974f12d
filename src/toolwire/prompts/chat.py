"""The history as chat templates read it: OpenAI Chat messages, arguments as objects.

Hugging Face's ``apply_chat_template`` hands a template OpenAI Chat messages whose call
arguments are objects, and templates print them three ways: ``| tojson`` (most),
key by key (Qwen3-Coder, GLM, Gemma) or by string concatenation (DeepSeek's official
V3.1 template writes ``name + SEP + arguments``). :class:`Arguments` is a
``dict`` that also concatenates and prints as the JSON text the model wrote, so one
message shape serves every template.

Some families need more than the shape, as their own serving stacks do it:

* ``mistral``: Mistral's templates refuse a call id that is not nine letters and
  digits, so other ids are mapped to nine (the same id always to the same nine);
* ``kimi``: Kimi writes and reads its ids as ``functions.NAME:INDEX`` (vLLM's Kimi
  parser and Moonshot's docs), so other ids are renumbered that way;
* ``harmony`` and Llama 3's JSON calls: the gpt-oss template renders only an assistant
  message's first call and Llama 3.1's refuses a second, so a message with several
  calls becomes consecutive messages of one call each (what those models write: one
  call per turn).

A text prompt cannot carry images: a tool result or user message with images
(``parts``) is flattened to its text, each image named by a placeholder line, so the
model reads that an image was there (the providers that render prompts refuse such a
history before it gets here: ``toolwire.context.images.reject_images``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..history import to_openai_chat
from ..messages import Image, Message, ToolResult, UserMessage

__all__ = ["Arguments", "template_messages"]

Chat = list[dict[str, Any]]


class Arguments(dict[str, Any]):
    """A call's arguments: a ``dict`` to a template, and the model's JSON text as a string.

    ``str()``, ``|string``, ``~`` and ``+`` with a string give :attr:`text` (what the
    model wrote), ``|tojson`` and ``|items`` see the object.
    """

    __slots__ = ("text",)

    def __init__(self, value: dict[str, Any], text: str) -> None:
        super().__init__(value)
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __add__(self, other: object) -> str:
        if isinstance(other, str):
            return self.text + other
        return NotImplemented

    def __radd__(self, other: object) -> str:
        if isinstance(other, str):
            return other + self.text
        return NotImplemented


def template_messages(
    messages: Sequence[Message], family: str | None = None, variant: str | None = None
) -> Chat:
    """``messages`` as a chat template expects them, with the family's conventions."""
    chat = [_for_template(message) for message in to_openai_chat(_flattened(messages))]
    steps = _SHAPING.get(f"{family}:{variant}", _SHAPING.get(family or "", ()))
    for step in steps:
        chat = step(chat)
    return chat


def _flattened(messages: Sequence[Message]) -> Sequence[Message]:
    """``messages`` with every image part replaced by a placeholder line (text only)."""
    if not any(isinstance(m, (ToolResult, UserMessage)) and m.parts for m in messages):
        return messages  # the common case: nothing to flatten
    return [_flat(m) if isinstance(m, (ToolResult, UserMessage)) else m for m in messages]


def _flat(message: ToolResult | UserMessage) -> ToolResult | UserMessage:
    text = "".join(
        f"\n[image: {p.media_type}, {len(p.data)} bytes; not shown in a text prompt]\n"
        if isinstance(p, Image)
        else p.text
        for p in message.parts
    )
    return dataclasses.replace(message, content=text, parts=()) if message.parts else message


def _for_template(message: dict[str, Any]) -> dict[str, Any]:
    out = dict(message)
    if out.get("content") is None:
        out["content"] = ""
    calls = out.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {**call, "function": {**call["function"], "arguments": _arguments(call)}}
            for call in calls
        ]
    return out


def _arguments(call: dict[str, Any]) -> Any:
    text = call["function"].get("arguments") or "{}"
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text  # kept verbatim: the model sees what it wrote
    return Arguments(value, text) if isinstance(value, dict) else text


def _one_call_per_message(chat: Chat) -> Chat:
    out: Chat = []
    for message in chat:
        calls = message.get("tool_calls") or []
        if message["role"] != "assistant" or len(calls) < 2:
            out.append(message)
            continue
        out.append({**message, "tool_calls": calls[:1]})
        out += [{"role": "assistant", "content": "", "tool_calls": [call]} for call in calls[1:]]
    return out


def _renamed_ids(chat: Chat, rename: Callable[[str, str, int], str]) -> Chat:
    """Every call id renamed by ``rename(id, name, ordinal)``, results following."""
    names: dict[str, str] = {}
    out: Chat = []
    for message in chat:
        renamed = message
        if message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                new = names.setdefault(
                    call["id"], rename(call["id"], call["function"]["name"], len(names))
                )
                calls.append({**call, "id": new})
            renamed = {**message, "tool_calls": calls}
        elif message["role"] == "tool" and message.get("tool_call_id") in names:
            renamed = {**message, "tool_call_id": names[message["tool_call_id"]]}
        out.append(renamed)
    return out


_NINE = re.compile(r"[A-Za-z0-9]{9}")
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _mistral_id(call_id: str, name: str, ordinal: int) -> str:
    if _NINE.fullmatch(call_id):
        return call_id
    number = int.from_bytes(hashlib.sha256(call_id.encode()).digest()[:8], "big")
    digits = []
    for _ in range(9):
        number, digit = divmod(number, len(_ALPHABET))
        digits.append(_ALPHABET[digit])
    return "".join(digits)


_KIMI = re.compile(r"functions\.[^:\s]+:\d+")


def _kimi_id(call_id: str, name: str, ordinal: int) -> str:
    return call_id if _KIMI.fullmatch(call_id) else f"functions.{name}:{ordinal}"


def _mistral_ids(chat: Chat) -> Chat:
    return _renamed_ids(chat, _mistral_id)


def _kimi_ids(chat: Chat) -> Chat:
    return _renamed_ids(chat, _kimi_id)


def _harmony_thinking(chat: Chat) -> Chat:
    """gpt-oss's template reads reasoning as ``thinking`` and refuses it beside content."""
    out: Chat = []
    for message in chat:
        shaped = {key: value for key, value in message.items() if key != "reasoning_content"}
        reasoning = message.get("reasoning_content")
        if reasoning and not (message.get("content") and message.get("tool_calls")):
            shaped["thinking"] = reasoning
        out.append(shaped)
    return out


_SHAPING: dict[str, tuple[Callable[[Chat], Chat], ...]] = {
    "mistral": (_mistral_ids,),
    "kimi": (_kimi_ids,),
    "harmony": (_harmony_thinking, _one_call_per_message),
    "llama:llama3-json": (_one_call_per_message,),
}
