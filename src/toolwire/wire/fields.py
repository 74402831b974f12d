"""Checks at the door: provider and caller data is ``Any`` until one of these looked at it.

Every decoder reads JSON-like data somebody else produced: a stream's items, a response
body, a history handed in by the caller. Field access goes through these helpers so
that a missing key or a value of the wrong type is a toolwire error naming the field
(``delta.content[].text must be a string, got null``), by decision, never a bare
``KeyError`` or ``TypeError``. Which error depends on whose data it is: a provider's
(the default) raises :class:`~toolwire.errors.ProtocolError` (provider fault), a
history handed in by the caller :class:`~toolwire.errors.HistoryError` (caller
fault); a decoder picks by passing an :data:`ErrorFactory`.

Each check is a class test and a return on the good path: in the compiled build they
stand before a typed local, so a wrong type is never the ``TypeError`` of a failed
run-time annotation check. A stream decoder names the field alone (``"delta"``) and its
``StreamDecoder._fail`` adds the item number; a body or history decoder names the path
(``response.choices[0].message``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import HistoryError, ProtocolError, ProviderAPIError, ToolwireError

__all__ = [
    "ErrorFactory",
    "as_dict",
    "as_index",
    "as_list",
    "as_object",
    "api_error",
    "as_text",
    "field",
    "history_error",
    "loose_text",
    "opt_str",
    "opt_text",
    "protocol_error",
    "raise_api_error",
    "req_str",
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


def field(item: dict[str, Any], key: str) -> Any:
    """``item[key]``, or a ``ProtocolError`` naming the missing field."""
    if key in item:
        return item[key]
    raise ProtocolError(f"malformed item: the field {key!r} is missing")


def as_object(value: Any, name: str, err: ErrorFactory | None = None) -> dict[str, Any]:
    """``value`` if it is a JSON object (any mapping, as a dict), else ``err``'s error."""
    if value.__class__ is dict:
        return value
    if isinstance(value, Mapping):  # caller data may be any mapping; JSON never is
        return dict(value)
    raise (err or protocol_error)(f"{name} must be an object, got {_kind(value)}", "")


def as_list(value: Any, name: str, err: ErrorFactory | None = None) -> list[Any]:
    """``value`` if it is a JSON array (a tuple, as a list), else ``err``'s error."""
    if value.__class__ is list:
        return value
    if isinstance(value, tuple):  # caller data may be a tuple; JSON never is
        return list(value)
    raise (err or protocol_error)(f"{name} must be an array, got {_kind(value)}", "")


def as_text(value: Any, name: str, err: ErrorFactory | None = None) -> str:
    """``value`` if it is a string, else ``err``'s error naming ``name``."""
    if value.__class__ is str:
        return value
    if isinstance(value, str):  # a str subclass (caller data)
        return value
    raise (err or protocol_error)(f"{name} must be a string, got {_kind(value)}", "")


def opt_text(value: Any, name: str, err: ErrorFactory | None = None) -> str | None:
    """``value`` if it is a string, ``None`` if it is null, else ``err``'s error."""
    return None if value is None else as_text(value, name, err)


def req_str(obj: Mapping[str, Any], key: str, where: str, err: ErrorFactory) -> str:
    """The string at ``obj[key]``, ``obj`` being the object at path ``where``."""
    return as_text(obj.get(key), f"{where}.{key}", err)


def opt_str(obj: Mapping[str, Any], key: str, where: str, err: ErrorFactory) -> str | None:
    """The string at ``obj[key]``, or ``None`` when it is absent or null."""
    return opt_text(obj.get(key), f"{where}.{key}", err)


def as_index(value: Any, name: str) -> int:
    """``value`` if it is an integer (not a bool, not ``"1"``), else a ``ProtocolError``."""
    if value.__class__ is int:
        return value
    raise ProtocolError(f"{name} must be an integer, got {_kind(value)} {str(value)[:20]!r}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def to_plain(value: Any) -> Any:
    """``value`` as plain JSON-like data, dumping an SDK (pydantic) object first.

    The SDKs' ``to_dict`` leaves out fields the provider never sent (``model_dump``
    writes them as ``None``), so a stream's items and a body give the same keys, and a
    block kept verbatim (``ProviderPart``) is the same from both. Extra fields
    (vLLM's ``reasoning_content``) are kept: both dumps keep them by default.
    Serializer warnings are off: a dialect's field of another type than the SDK
    declares (Mistral's ``content`` list) is data to check, not a reason to warn.
    """
    if value.__class__ is dict or value.__class__ is list or isinstance(value, Mapping):
        return value
    for method in ("to_dict", "model_dump"):
        dump = getattr(value, method, None)
        if callable(dump):
            try:
                return dump(mode="json", warnings=False)
            except TypeError:  # a dump method without those keywords
                return dump()
    return value


def as_dict(item: Any) -> dict[str, Any]:
    """A stream item (a dict, or an official SDK object) as a dict."""
    plain = to_plain(item)
    if isinstance(plain, Mapping):
        return as_object(plain, "item")
    raise ProtocolError(f"expected a dict or an SDK object, got {type(item).__name__}")


def loose_text(value: Any) -> str | None:
    """A field as text, or None (a provider may send an error's type or code as a number)."""
    return None if value is None else str(value)


def api_error(
    error: Any, body: Any, *, prefix: str = "", kinds: tuple[str, ...] = ("type", "code")
) -> ProviderAPIError:
    """The ``ProviderAPIError`` for an error object a provider sent (or any other value).

    Its message is the object's ``message`` (else the whole object) after ``prefix``; its
    type is the first of ``kinds`` the object has, as text (OpenRouter's code is a number).
    """
    if not isinstance(error, Mapping):
        return ProviderAPIError(f"{prefix}{error}", body=body)
    kind = next((error[key] for key in kinds if error.get(key)), None)
    return ProviderAPIError(
        f"{prefix}{error.get('message') or error}", error_type=loose_text(kind), body=body
    )


def raise_api_error(body: Mapping[str, Any]) -> None:
    """Raise ``ProviderAPIError`` if a response body carries a non-null ``error``."""
    error = body.get("error")
    if error is None:
        return
    if isinstance(error, Mapping) and not error.get("message"):
        error = {**error, "message": "the provider returned an error"}
    raise api_error(error, dict(body))
