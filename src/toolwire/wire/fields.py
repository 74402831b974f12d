"""Helpers shared by the provider mappings: checked field access and small conventions.

Every decoder here reads JSON-like data somebody else produced. Field access goes
through these helpers so that a missing key or a value of the wrong type becomes a
toolwire error naming the field path (``messages[3].tool_calls[0].function.name``)
instead of a bare ``KeyError`` or ``TypeError``. Which error depends on whose data it
is: a history handed in by the caller raises :class:`~toolwire.errors.HistoryError`
(caller fault), a provider response raises :class:`~toolwire.errors.ProtocolError`
(provider fault); a decoder picks by passing an :data:`ErrorFactory`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from ..checks import reject_json_constant
from ..errors import HistoryError, ProtocolError, ProviderAPIError, ToolwireError
from ..messages import TOOL_ERROR_PREFIX, ToolStatus

__all__ = [
    "TOOL_ERROR_PREFIX",
    "ErrorFactory",
    "as_list",
    "as_mapping",
    "history_error",
    "opt_str",
    "parse_object",
    "protocol_error",
    "raise_api_error",
    "req_str",
    "status_from_text",
    "to_plain",
]

ErrorFactory = Callable[[str, str], ToolwireError]
"""Builds the error to raise from ``(message, where)``."""


def history_error(message: str, where: str) -> ToolwireError:
    """The error for malformed caller-supplied history (caller fault)."""
    return HistoryError(f"{message} at {where}" if where else message)


def protocol_error(message: str, where: str) -> ToolwireError:
    """The error for a malformed provider response (provider fault)."""
    return ProtocolError(message, where=where)


def to_plain(value: Any) -> Any:
    """Return ``value`` as plain JSON-like data, dumping SDK (pydantic) objects first."""
    dump = getattr(value, "to_dict", None) or getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, Mapping):
        # SDK objects keep provider extras (vLLM's ``reasoning_content``) only when
        # dumped with their extra fields, which both dumps do by default. The SDKs'
        # ``to_dict`` leaves out fields the provider never sent (``model_dump`` writes
        # them as ``None``), as the stream decoders' ``as_dict`` does: a block kept
        # verbatim (``ProviderPart``) is then the same from a stream and from a body.
        return dump(mode="json", warnings=False)
    return value


def as_mapping(value: Any, where: str, err: ErrorFactory) -> Mapping[str, Any]:
    """Return ``value`` if it is a JSON object, else raise ``err``."""
    if not isinstance(value, Mapping):
        raise err(f"expected a JSON object, got {type(value).__name__}", where)
    return value


def as_list(value: Any, where: str, err: ErrorFactory) -> list[Any]:
    """Return ``value`` if it is a JSON array (list or tuple), else raise ``err``."""
    if not isinstance(value, (list, tuple)):
        raise err(f"expected a JSON array, got {type(value).__name__}", where)
    return list(value)


def req_str(obj: Mapping[str, Any], key: str, where: str, err: ErrorFactory) -> str:
    """Return the string at ``obj[key]``; a missing or non-string value raises ``err``."""
    value = obj.get(key)
    if not isinstance(value, str):
        found = "missing" if value is None else f"a {type(value).__name__}"
        raise err(f"field {key!r} must be a string, but is {found}", where)
    return value


def opt_str(obj: Mapping[str, Any], key: str, where: str, err: ErrorFactory) -> str | None:
    """Return the string at ``obj[key]``, or ``None`` when absent or null."""
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise err(f"field {key!r} must be a string or null, but is a {type(value).__name__}", where)


def status_from_text(content: str) -> ToolStatus:
    """Read a tool result's status back from its text (see :data:`TOOL_ERROR_PREFIX`)."""
    return ToolStatus.ERROR if content.startswith(TOOL_ERROR_PREFIX) else ToolStatus.OK


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


def raise_api_error(body: Mapping[str, Any]) -> None:
    """Raise ``ProviderAPIError`` if a response body carries a non-null ``error``."""
    error = body.get("error")
    if error is None:
        return
    details = error if isinstance(error, Mapping) else {"message": str(error)}
    message = details.get("message")
    kind = details.get("type") or details.get("code")
    raise ProviderAPIError(
        str(message) if message else "the provider returned an error",
        error_type=str(kind) if kind is not None else None,
        body=dict(body),
    )
