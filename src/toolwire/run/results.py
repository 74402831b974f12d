"""Tool return values → the text the model reads. Deterministic, or a clear error.

The same value always gives the same text, byte for byte, so a history is stable
across runs (prompt caching) and tests can compare results exactly:

==============================  ======================================================
return value                    content
==============================  ======================================================
``str``                         the string itself
``None``                        ``null``
``bool``, ``int``, ``float``    JSON (``true``, ``3``, ``0.5``)
``dict``, ``list``, ``tuple``   JSON, keys in the order the dict holds them, non-ASCII
                                kept as is
pydantic model                  its JSON-mode dump, as JSON
dataclass instance              ``dataclasses.asdict``, as JSON
``bytes`` and friends           the text when it is valid UTF-8, else
                                ``(binary, N bytes, base64) ...``
``set``, ``frozenset``          a JSON list, sorted (by JSON text when mixed)
``toolwire.Image``              content parts: the image (:func:`content_parts`)
list holding an ``Image``       content parts: each ``str`` a text part, each
                                ``Image`` an image part, anything else its text by
                                this table; a list with no ``Image`` is JSON
``enum.Enum``                   its value
date, time, datetime            ISO 8601
UUID, Decimal, Path             ``str()``
anything else                   not guessed (``repr`` often holds a memory address,
                                which is not deterministic): the call gets an error
                                result naming the type
==============================  ======================================================

Nested values follow the same table. Circular structures are an error. The text is
whole: cutting a long result to fit the context is the run's ``ContextPolicy``
(:mod:`toolwire.context.truncate`), the one place results are cut.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import json
import pathlib
import uuid
from typing import Any

import pydantic

from ..errors import ResultError
from ..messages import ContentPart, Image, TextPart
from ..wire.assembler import sendable_text

__all__ = ["content_parts", "render_content"]


_PARTS = (Image, TextPart)  # kept as they are in a list of content parts


def content_parts(value: Any) -> tuple[ContentPart, ...] | None:
    """The content parts of a return value that holds images; ``None`` for any other.

    An :class:`~toolwire.messages.Image`, or a list (or tuple) with at least one
    ``Image`` in it, is content parts (its ``TextPart`` members kept as they are);
    every other value (a list of strings included) is text by the module's table, as
    before images existed.

    Raises:
        ResultError: A non-image member of such a list has no deterministic text.
    """
    cls = value.__class__
    if cls is Image:
        return (value,)
    if (cls is not list and cls is not tuple) or not any(type(v) is Image for v in value):
        return None
    return tuple(v if type(v) in _PARTS else TextPart(render_content(v)) for v in value)


def render_content(value: Any) -> str:
    """The result text for a tool's return value (see the module's table).

    Args:
        value: What the tool returned.

    Returns:
        The content of the tool result.

    Raises:
        ResultError: The value (or something inside it) has no deterministic text.
    """
    # A lone surrogate (a path read with surrogateescape, say) cannot be sent to any
    # provider: replaced by U+FFFD here, like the model's own text at the decoder.
    if value.__class__ is str:  # the common case first
        return sendable_text(value)
    return sendable_text(_to_text(value))


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(value))
    try:
        return json.dumps(value, ensure_ascii=False, default=_convert)
    except ResultError:
        raise
    except RecursionError as exc:
        raise ResultError("the tool returned a structure nested too deeply") from exc
    except (TypeError, ValueError) as exc:  # a non-string key, a circular reference
        raise ResultError(f"the tool returned a value that cannot be serialised: {exc}") from exc


def _bytes_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        encoded = base64.b64encode(data).decode("ascii")
        return f"(binary, {len(data)} bytes, base64) {encoded}"


def _convert(value: Any) -> Any:  # noqa: PLR0911 — one return per kind of value
    """``json.dumps``'s ``default``: a JSON-ready form of a non-JSON value, or an error.

    ``json.dumps`` calls it again for whatever the returned form holds, so nested
    values follow the same table.
    """
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, decimal.Decimal, pathlib.PurePath)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _bytes_text(bytes(value))
    if isinstance(value, (set, frozenset)):
        return _sorted_members(value)
    raise ResultError(
        f"the tool returned a {type(value).__module__}.{type(value).__qualname__}, which "
        "toolwire cannot turn into text deterministically"
    )


def _sorted_members(members: set[Any] | frozenset[Any]) -> list[Any]:
    """A set as a list in a stable order: by value when comparable, else by JSON text."""
    try:
        return sorted(members)
    except TypeError:
        return sorted(
            members,
            key=lambda m: json.dumps(m, sort_keys=True, ensure_ascii=False, default=_convert),
        )
