"""One client request to ``POST /v1/chat/completions``, read and checked at the door.

The body is kept as the client sent it (the chat upstream forwards it, unknown fields
included); what the proxy itself needs is read out of it once: the model name, whether
to stream, whether the client wants usage, the offered tools as neutral ``ToolDef``s,
the ``tool_choice`` as a mode or a tool name, ``parallel_tool_calls``, and which model
family's call markup the answer is read with (the request's ``model`` through
:func:`toolwire.formats.for_model`'s table, or the server's ``--format``). Anything a
client got wrong is a :class:`~toolwire.errors.CallerError` (HTTP 400).
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import CallerError
from ..history.tool_defs import tool_defs
from ..tooldef import MODES, ToolChoice, ToolDef
from .thinking import generation_prompt

__all__ = ["ProxyCall", "read_call", "resolve_family"]

MAX_TOOL_SETS = 64  # the tools of this many requests kept read (clients resend theirs)


@dataclass(slots=True)
class ProxyCall:
    """What the proxy knows of one client request.

    Attributes:
        body: The client's JSON body, as sent (forwarded to a chat upstream).
        model: The requested model name.
        stream: Whether the client asked for a stream.
        include_usage: Whether a stream ends with a usage chunk.
        tools: The offered tools.
        tool_choice: ``auto``, ``none``, ``required`` or a tool name.
        parallel: ``parallel_tool_calls`` (``None``: not given).
        family: The (family, variant) whose call markup is read, or ``None``.
        generation_prompt: What the served template appends after the last message,
            as the family's format should assume (``None``: the variant's default).
        tools_key: The ``tools`` as sent, as JSON text (what the tools are cached by).
        response_id: The ``chatcmpl-…`` id of the response.
        created: The response's ``created`` time (Unix seconds).
    """

    body: dict[str, Any]
    model: str
    stream: bool
    include_usage: bool
    tools: list[ToolDef]
    tool_choice: ToolChoice
    parallel: bool | None
    family: tuple[str, str | None] | None
    generation_prompt: str | None
    tools_key: str = "null"
    response_id: str = field(default_factory=lambda: f"chatcmpl-{secrets.token_hex(12)}")
    created: int = field(default_factory=lambda: int(time.time()))

    @property
    def applies_calls(self) -> bool:
        """Whether calls may be sent (tools offered and ``tool_choice`` not ``none``)."""
        return bool(self.tools) and self.tool_choice != "none"


def read_call(body: Any, forced: tuple[str, str | None] | None) -> ProxyCall:
    """Read and check a ``/v1/chat/completions`` body.

    Args:
        body: The decoded JSON body.
        forced: The server's ``--format`` (family, variant), which wins over the model
            name; ``None``: the family comes from the model name.

    Raises:
        CallerError: The body is not a chat completion request this proxy can serve.
    """
    if not isinstance(body, dict):
        raise CallerError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise CallerError("'model' must be a non-empty string", hint="name the served model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise CallerError("'messages' must be a non-empty array of messages")
    stream = _flag(body, "stream", False)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, Mapping):
        raise CallerError("'stream_options' must be an object")
    include_usage = bool(stream and options and options.get("include_usage"))
    tools, tools_key = _tools(body.get("tools"))
    choice = _tool_choice(body.get("tool_choice"), tools)
    parallel = body.get("parallel_tool_calls")
    if parallel is not None and not isinstance(parallel, bool):
        raise CallerError("'parallel_tool_calls' must be a boolean")
    family = forced if forced is not None else resolve_family(model)
    kwargs = body.get("chat_template_kwargs")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise CallerError("'chat_template_kwargs' must be an object")
    prompt = generation_prompt(family, kwargs or {})
    return ProxyCall(
        body, model, stream, include_usage, tools, choice, parallel, family, prompt, tools_key
    )


def _tools(raw: Any) -> tuple[list[ToolDef], str]:
    """The offered tools, read once per distinct ``tools`` (an agent sends the same ones
    with every request; reading ten of them cost more than the rest of the request's
    set-up), and their JSON text, the key."""
    try:
        key = json.dumps(raw)
    except (TypeError, ValueError):  # not from a JSON body: nothing to key it by
        raise CallerError("'tools' must be JSON") from None
    return list(_tool_set(key)), key


@functools.lru_cache(maxsize=MAX_TOOL_SETS)  # clients name tools: bounded
def _tool_set(key: str) -> tuple[ToolDef, ...]:
    """The tools whose JSON text is ``key`` (a bad definition raises ``ToolMappingError``,
    a CallerError, and is not kept: it is a 400 every time)."""
    return tuple(tool_defs(json.loads(key) or []))


@functools.lru_cache(maxsize=256)  # a client names the model: bounded
def resolve_family(model: str) -> tuple[str, str | None] | None:
    """The (family, variant) the model name selects, or ``None`` (no family known)."""
    from ..formats.registry import resolve_model

    try:
        return resolve_model(model)
    except CallerError:
        return None


def _flag(body: Mapping[str, Any], key: str, default: bool) -> bool:
    value = body.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise CallerError(f"'{key}' must be a boolean, got {value!r}")
    return value


def _tool_choice(raw: Any, tools: list[ToolDef]) -> ToolChoice:
    """OpenAI's ``tool_choice`` as toolwire's: a mode, or the name of a tool offered."""
    if raw is None:
        return "auto" if tools else "none"
    if isinstance(raw, str):
        if raw not in MODES:
            raise CallerError(f"'tool_choice' must be one of {', '.join(MODES)}, got {raw!r}")
        return raw
    name = None
    if isinstance(raw, Mapping) and isinstance(raw.get("function"), Mapping):
        name = raw["function"].get("name")
    if not isinstance(name, str) or not name:
        raise CallerError(
            '\'tool_choice\' must be a mode or {"type": "function", "function": {"name": ...}}'
        )
    if name not in {tool.name for tool in tools}:
        raise CallerError(f"'tool_choice' names {name!r}, which is not among the tools offered")
    return name
