"""MCP tool descriptions and results → toolwire tools and result text (pure).

* Names: providers accept ``[A-Za-z0-9_-]{1,64}``. Other characters become ``_``; a
  name still too long keeps its first 55 characters plus ``_`` and 8 hex digits of a
  hash of the original, so two long names stay apart. The server is always called by
  the original name.
* Annotations → policy. They are hints, and MCP's defaults are the cautious ones:
  ``readOnlyHint`` → concurrency-safe, no side effects; otherwise side effects
  (``destructiveHint`` defaults to true) and run alone; ``idempotentHint`` →
  idempotent, so the executor retries it under the run's retry settings.
* Results: text blocks as they are; structured content as JSON when no block carries
  text; images, audio and binary resources as a one-line placeholder that says what was
  left out (the model cannot read base64); ``isError`` → :class:`MCPToolError`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from ..errors import MCPServerError, MCPToolError, SchemaExtraMissingError, ToolDefinitionError
from ..tools import Tool

__all__ = ["build_tool", "policy_of", "result_text", "sanitize_name"]

_INVALID = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64


def sanitize_name(name: str, prefix: str | None = None) -> str:
    """The provider-safe name of an MCP tool (``prefix`` first, joined by ``_``)."""
    full = f"{prefix}_{name}" if prefix else name
    clean = _INVALID.sub("_", full) or "_"
    if len(clean) <= _MAX_NAME:
        return clean
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:8]
    return f"{clean[: _MAX_NAME - 9]}_{digest}"


def policy_of(annotations: Any) -> dict[str, Any]:
    """Executor policy from an MCP ``ToolAnnotations`` (or ``None``)."""
    read_only = bool(getattr(annotations, "read_only_hint", None))
    idempotent = bool(getattr(annotations, "idempotent_hint", None))
    return {
        "concurrency_safe": read_only,
        "side_effects": not read_only,
        "idempotent": idempotent or read_only,
    }


def build_tool(
    listed: Any,
    fn: Callable[[dict[str, Any]], Any],
    *,
    server: str,
    prefix: str | None,
    timeout: float | None,
    retries: int,
) -> Tool:
    """A toolwire tool for one listed MCP tool; ``fn`` calls the server.

    Raises:
        MCPServerError: The server's input schema is not valid JSON Schema.
    """
    policy = policy_of(listed.annotations)
    name = sanitize_name(listed.name, prefix)
    try:
        return Tool.from_schema(
            name,
            listed.description or "",
            dict(listed.input_schema),
            fn,
            timeout=timeout,
            retries=retries if policy["idempotent"] else 0,
            **policy,
        )
    except SchemaExtraMissingError:
        raise
    except ToolDefinitionError as exc:
        raise MCPServerError(
            f"MCP server {server} sent tool {listed.name!r} with an input schema that is "
            f"not valid JSON Schema: {exc.message}",
            server=server,
            hint="fix the tool's inputSchema in the server",
        ) from exc


def result_text(result: Any, *, server: str, tool: str) -> str:
    """The text the model reads for a ``CallToolResult``.

    Raises:
        MCPToolError: The result has ``isError`` set.
    """
    parts = [_block_text(block) for block in result.content]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False)
    if result.is_error:
        raise MCPToolError(text or f"MCP tool {tool!r} of server {server} reported an error")
    return text


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind} ({block.mime_type}, {_decoded_size(block.data)} bytes) returned by the tool, not shown]"
    if kind == "resource_link":
        return f"[resource link: {block.name} <{block.uri}>]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return str(text)
        mime = getattr(resource, "mime_type", None) or "binary"
        return f"[embedded resource {resource.uri} ({mime}, {_decoded_size(resource.blob)} bytes), not shown]"
    return f"[content of type {kind!r}, not shown]"


def _decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to (without decoding it)."""
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4
