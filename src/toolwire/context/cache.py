"""Prompt-cache layout: a stable prefix, and where the provider may cache it.

Tools are offered in registration order with each definition computed once per run, so
the serialised tool list is byte-identical round after round as long as the selection
is stable. Anthropic caches only up to explicit ``cache_control`` breakpoints (at most
four per request): :func:`anthropic_breakpoints` marks the last tool definition, the
system prompt, the newest message and the end of the previous request's prompt, so the
next request reads the whole earlier conversation from the cache. OpenAI caches
automatically; the agent sends one ``prompt_cache_key`` per run so that its requests
land on the same cache.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_BREAKPOINTS", "anthropic_breakpoints"]

MAX_BREAKPOINTS = 4
_EPHEMERAL = {"type": "ephemeral"}
_CACHEABLE = ("text", "tool_result", "tool_use", "image", "document")


def anthropic_breakpoints(body: dict[str, Any]) -> int:
    """Add ``cache_control`` breakpoints to an Anthropic Messages request body in place.

    Breakpoints already in the body (set by the caller) count toward the limit of four
    and are kept. Returns how many breakpoints the body holds.
    """
    marks = _existing(body)
    targets: list[dict[str, Any]] = []
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[-1], dict):
        targets.append(tools[-1])
    system = body.get("system")
    if isinstance(system, str) and system:
        body["system"] = [{"type": "text", "text": system}]
    system = body.get("system")
    if isinstance(system, list) and system and isinstance(system[-1], dict):
        targets.append(system[-1])
    messages = body.get("messages")
    if isinstance(messages, list):
        for position in (len(messages) - 1, len(messages) - 3):
            block = _last_block(messages, position)
            if block is not None:
                targets.append(block)
    for target in targets:
        if marks >= MAX_BREAKPOINTS:
            break
        if "cache_control" not in target:
            target["cache_control"] = dict(_EPHEMERAL)
            marks += 1
    return marks


def _last_block(messages: list[Any], position: int) -> dict[str, Any] | None:
    if position < 0:
        return None
    message = messages[position]
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and content:
        message["content"] = content = [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        return None
    block = content[-1]
    if isinstance(block, dict) and block.get("type") in _CACHEABLE:
        return block
    return None


def _existing(body: dict[str, Any]) -> int:
    count = 0
    for key in ("tools", "system"):
        items = body.get(key)
        if isinstance(items, list):
            count += sum(1 for item in items if isinstance(item, dict) and "cache_control" in item)
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(1 for b in content if isinstance(b, dict) and "cache_control" in b)
    return count
