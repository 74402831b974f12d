"""The shared machinery of every text-marker tool-call format.

Open-weight models write tool calls as text with special markers. Each family module
(``hermes``, ``llama``, ``mistral``, ...) subclasses :class:`Format` and
:class:`FormatStream`; this module holds what they share:

* **One code path.** :meth:`Format.parse` runs the family's own stream over the whole
  text and collects its events, so the non-streaming and the streaming result can
  never disagree.
* **Events** are the wire vocabulary of :mod:`toolwire.wire.events` (``TextDelta``,
  ``ReasoningDelta``, ``ToolCallStarted``, ``ToolCallDelta``); a call's ``index`` is its
  ordinal in the output, and the concatenation of its ``ToolCallDelta`` texts is its
  arguments JSON.
* **Marker hold-back.** :class:`MarkerSet` finds the earliest marker in a buffer (one
  compiled alternation, so each character is scanned once) and measures the longest
  buffer suffix that could still grow into a marker: only that suffix is held back,
  everything before it is emitted at once.
* **Incremental JSON.** The assembler's :class:`~toolwire.wire.jsonscan.ClosureScanner`
  (with ``any_value=True``) tells where one JSON value ends when it arrives in pieces,
  so JSON arguments stream as they come and the call closes the moment its closing
  bracket arrives. One scanner serves both layers, skipping string bodies with a
  regular expression instead of a Python loop per character.
* **Schema typing.** :func:`coerce_value` types an argument value that a format
  carries as text (XML-like formats) by the tool's JSON Schema: ``"3"`` becomes ``3``
  only if the schema says integer or number.
* **Errors.** Malformed or truncated calls raise :class:`FormatError` (the model's
  fault); misuse of a stream raises a :class:`~toolwire.errors.CallerError`.
"""

from __future__ import annotations

import ast
import json
import math
import re
import secrets
import string
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import CallerError, DecoderStateError, ModelOutputError
from ..wire.events import Event, ReasoningDelta, TextDelta, ToolCallDelta, ToolCallStarted
from ..wire.jsonscan import ClosureScanner

__all__ = [
    "Format",
    "FormatError",
    "CallObjectReader",
    "FormatStream",
    "IdFactory",
    "AlphanumericIds",
    "MarkerSet",
    "ParseResult",
    "ParsedCall",
    "ToolIndex",
    "coerce_value",
    "skip_whitespace",
    "collect_events",
    "opens_reasoning",
    "to_openai_delta",
    "value_to_json",
]


# --------------------------------------------------------------------------- errors


class FormatError(ModelOutputError):
    """The model wrote a tool call that cannot be used: malformed or cut off.

    Attributes:
        family: The format family that raised it (``"hermes"``, ``"llama"``, ...).
        where: Where the problem is (for example ``"tool call 1"`` or ``"offset 812"``).
        events: Events the failing ``feed``/``close`` produced before the error (text
            before the broken call); a streaming caller can still show them.
        partial: Set by :meth:`Format.parse`: everything parsed before the error.
    """

    default_hint = (
        "the model wrote a malformed or truncated tool call; send the reason back to "
        "the model, or raise the output token limit if it was cut off"
    )

    def __init__(
        self, message: str, *, family: str = "", where: str = "", hint: str | None = None
    ) -> None:
        self.family = family
        self.where = where
        self.events: list[Event] = []
        self.partial: ParseResult | None = None
        prefix = f"{family}: " if family else ""
        super().__init__(f"{prefix}{message}{' at ' + where if where else ''}", hint=hint)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call found in the output.

    Attributes:
        name: The function name.
        arguments: The arguments as a JSON text (``"{}"`` for a call without any).
        id: The id the format carried, or the one generated for it.
    """

    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A whole model output, separated.

    Attributes:
        content: The answer text, with the text around calls kept verbatim and in order.
        reasoning: The reasoning ("thinking") text.
        tool_calls: The calls, in output order.
    """

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ParsedCall, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (what ``toolwire parse`` prints)."""
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ],
        }


@dataclass(slots=True)
class _CallSlot:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class EventCollector:
    """Folds format events into a :class:`ParseResult`."""

    __slots__ = ("_calls", "_content", "_reasoning")

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _CallSlot] = {}

    def add(self, events: Iterable[Event]) -> None:
        """Fold more events in."""
        for event in events:
            if isinstance(event, TextDelta):
                self._content.append(event.text)
            elif isinstance(event, ReasoningDelta):
                self._reasoning.append(event.text)
            elif isinstance(event, ToolCallStarted):
                self._calls[event.index] = _CallSlot(event.id, event.name or "")
            elif isinstance(event, ToolCallDelta):
                self._calls.setdefault(event.index, _CallSlot()).arguments.append(event.arguments)

    def result(self) -> ParseResult:
        """Return everything folded in so far."""
        calls = tuple(
            ParsedCall(slot.name, "".join(slot.arguments), slot.id)
            for _, slot in sorted(self._calls.items())
        )
        return ParseResult("".join(self._content), "".join(self._reasoning), calls)


def collect_events(events: Iterable[Event]) -> ParseResult:
    """Fold a sequence of format events into a :class:`ParseResult`."""
    collector = EventCollector()
    collector.add(events)
    return collector.result()


def to_openai_delta(event: Event) -> dict[str, Any] | None:
    """Turn a format event into an OpenAI chat-completion ``delta`` dict.

    Returns:
        ``{"content": ...}``, ``{"reasoning_content": ...}`` or ``{"tool_calls": [...]}``
        (``index``, ``id``, ``type``, ``function.name``, ``function.arguments``, as an
        OpenAI-compatible server streams them), or ``None`` for events a delta cannot
        carry.
    """
    if isinstance(event, TextDelta):
        return {"content": event.text}
    if isinstance(event, ReasoningDelta):
        return {"reasoning_content": event.text}
    if isinstance(event, ToolCallStarted):
        call = {
            "index": event.index,
            "id": event.id,
            "type": "function",
            "function": {"name": event.name, "arguments": ""},
        }
        return {"tool_calls": [call]}
    if isinstance(event, ToolCallDelta):
        return {"tool_calls": [{"index": event.index, "function": {"arguments": event.arguments}}]}
    return None


# --------------------------------------------------------------------------- ids


class IdFactory:
    """Call ids for one stream: ``<prefix><index>`` (the default of every family).

    A family whose chat template constrains ids sets :attr:`Format.id_factory` to a
    subclass (see :class:`AlphanumericIds`). With an explicit prefix the ids are
    deterministic (tests, replays); without one a random token is drawn per stream,
    so ids never collide across turns.

    Args:
        prefix: The id prefix, or ``None`` for a random one.
    """

    __slots__ = ("prefix",)

    def __init__(self, prefix: str | None = None) -> None:
        self.prefix = prefix if prefix is not None else f"call_{secrets.token_hex(6)}_"

    def make(self, index: int) -> str:
        """Return the id of the call at ``index``."""
        return f"{self.prefix}{index}"


_ALNUM = string.ascii_letters + string.digits


class AlphanumericIds(IdFactory):
    """Call ids of exactly :attr:`LENGTH` characters from ``[A-Za-z0-9]``.

    ``mistral_common`` (``MistralRequestValidatorV3`` in
    ``src/mistral_common/protocol/instruct/validator.py``: ``^[a-zA-Z0-9]{9}$``) and
    Mistral's chat templates reject any other id when a call goes back into the
    history, so the generic ``call_<hex>_<n>`` would break the next request.

    With a prefix the id is deterministic: the prefix's letters and digits, then the
    call index, zero-padded in between (``"call_test_"`` gives ``calltest0``, and
    ``calltes10`` for call 10; a long prefix is cut so the index always fits).
    Without one each id is 9 random characters, as ``mistral_common`` draws them,
    redrawn in the unlikely case it repeats an earlier id of the same stream.

    Args:
        prefix: The id prefix, or ``None`` for random ids.
    """

    LENGTH = 9
    __slots__ = ("_issued", "_stem")

    def __init__(self, prefix: str | None = None) -> None:
        super().__init__("" if prefix is None else prefix)
        self._stem = None if prefix is None else "".join(c for c in prefix if c in _ALNUM)
        self._issued: set[str] = set()

    def make(self, index: int) -> str:
        """Return the id of the call at ``index``."""
        if self._stem is not None:
            # A stream never holds 10**9 calls, so the index fits in the 9 characters.
            digits = str(index)[-self.LENGTH :]
            stem = self._stem[: self.LENGTH - len(digits)]
            return stem + digits.rjust(self.LENGTH - len(stem), "0")
        while True:
            call_id = "".join(secrets.choice(_ALNUM) for _ in range(self.LENGTH))
            if call_id not in self._issued:
                self._issued.add(call_id)
                return call_id


# --------------------------------------------------------------------------- markers


class MarkerSet:
    """A fixed set of marker strings, searched in linear time.

    ``search`` uses one compiled alternation (longest marker first, so a marker that is
    a prefix of another never wins over it at the same position); ``holdback`` measures
    the longest suffix of a buffer that is a proper prefix of some marker, in time
    bounded by the longest marker, never by the buffer.
    """

    __slots__ = ("_first", "_max", "_pattern", "_prefixes", "markers")

    def __init__(self, markers: Iterable[str]) -> None:
        self.markers = tuple(sorted(set(markers), key=lambda m: (-len(m), m)))
        if not self.markers or "" in self.markers:
            raise CallerError("a MarkerSet needs at least one non-empty marker")
        self._pattern = re.compile("|".join(re.escape(m) for m in self.markers))
        self._prefixes = frozenset(m[:k] for m in self.markers for k in range(1, len(m)))
        self._max = max(len(m) for m in self.markers)
        self._first = re.compile("[" + "".join(re.escape(m[0]) for m in self.markers) + "]")

    def may_start(self, text: str, start: int = 0) -> bool:
        """Whether ``text[start:]`` holds any marker's first character.

        When it does not, the whole text is safe: no marker and no marker prefix. One
        C-level scan, which keeps plain text (the common case) cheap.
        """
        return self._first.search(text, start) is not None

    def search(self, text: str, start: int = 0) -> tuple[int, str] | None:
        """Return ``(position, marker)`` of the earliest marker at or after ``start``."""
        match = self._pattern.search(text, start)
        return (match.start(), match.group()) if match else None

    def match(self, text: str, pos: int) -> str | None:
        """Return the marker that starts exactly at ``pos`` (``None`` if none does)."""
        found = self._pattern.match(text, pos)
        return found.group() if found else None

    def holdback(self, text: str, start: int = 0) -> int:
        """Return the length of the longest suffix of ``text[start:]`` that could be a
        marker's beginning (0 when none)."""
        limit = min(self._max - 1, len(text) - start)
        for k in range(limit, 0, -1):
            if text[-k:] in self._prefixes:
                return k
        return 0

    def split_safe(self, text: str) -> tuple[str, str]:
        """Split a marker-free buffer into (safe to emit, held back)."""
        held = self.holdback(text)
        return (text[: len(text) - held], text[len(text) - held :]) if held else (text, "")


# --------------------------------------------------------------------------- json


_WHITESPACE = " \t\r\n"


def skip_whitespace(text: str, pos: int) -> int:
    """Return the index of the first non-whitespace character at or after ``pos``."""
    n = len(text)
    while pos < n and text[pos] in _WHITESPACE:
        pos += 1
    return pos


class CallObjectReader:
    """Reads one JSON call object, ``{"name": ..., "arguments": {...}}``, fed in pieces.

    The name is reported as soon as its string closes and an object-valued arguments
    member is reported fragment by fragment, verbatim, as it arrives (a value that
    comes before the name is held until the name is known). Members other than the
    name and arguments are skipped. Arguments given as a JSON string that holds an
    object (``"arguments": "{\\"a\\": 1}"``) are decoded once; ``null`` becomes
    ``{}``; any other value is passed on verbatim for the validator to reject.

    ``feed`` returns the operations found, in order: ``("name", NAME)`` then
    ``("args", FRAGMENT)``..., and the index just after the object's closing brace
    (``-1`` while it is open).
    """

    __slots__ = (
        "_args_done",
        "_args_pending",
        "_family",
        "_held",
        "_key",
        "_mode",
        "_scanner",
        "_state",
        "args_keys",
        "name",
        "name_keys",
    )

    def __init__(
        self,
        *,
        family: str,
        name_keys: tuple[str, ...] = ("name",),
        args_keys: tuple[str, ...] = ("arguments", "parameters"),
    ) -> None:
        self._family = family
        self.name_keys = name_keys
        self.args_keys = args_keys
        self.name: str | None = None
        self._state = "open"
        self._held: list[str] = []
        self._key = ""
        self._mode = ""
        self._scanner = ClosureScanner(any_value=True)
        self._args_done = False
        self._args_pending: str | None = None

    @property
    def done(self) -> bool:
        """Whether the object's closing brace arrived."""
        return self._state == "done"

    def feed(self, text: str, start: int = 0) -> tuple[list[tuple[str, str]], int]:
        """Read ``text[start:]``; see the class docstring for the return value.

        Raises:
            FormatError: The text is not a call object.
        """
        ops: list[tuple[str, str]] = []
        pos = start
        while pos < len(text) and self._state != "done":
            pos = self._STEPS[self._state](self, text, pos, ops)
            if pos < 0:
                return ops, -1
        return ops, (pos if self._state == "done" else -1)

    def _fail(self, message: str) -> FormatError:
        return FormatError(message, family=self._family, where="tool call JSON")

    def _expect(self, text: str, pos: int, allowed: str, what: str) -> tuple[int, str]:
        pos = skip_whitespace(text, pos)
        if pos >= len(text):
            return -1, ""
        if text[pos] not in allowed:
            raise self._fail(f"expected {what}, found {text[pos : pos + 20]!r}")
        return pos + 1, text[pos]

    def _on_open(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        pos, _ = self._expect(text, pos, "{", "'{' opening the call object")
        if pos >= 0:
            self._state = "key"
        return pos

    def _on_key(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        pos, char = self._expect(text, pos, '"}', "a member name or '}'")
        if pos < 0:
            return pos
        if char == "}":
            self._close_object(ops)
            return pos
        self._scanner = ClosureScanner(any_value=True)
        self._scanner.feed('"')
        self._held = ['"']
        self._state = "key_string"
        return pos

    def _on_key_string(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        end = self._scanner.feed(text, pos)
        self._held.append(text[pos:] if end < 0 else text[pos:end])
        if end < 0:
            return -1
        self._key = _load_json_string("".join(self._held), self._fail)
        self._held = []
        self._state = "colon"
        return end

    def _on_colon(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        pos, _ = self._expect(text, pos, ":", "':' after a member name")
        if pos >= 0:
            self._state = "value_start"
        return pos

    def _on_value_start(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        pos = skip_whitespace(text, pos)
        if pos >= len(text):
            return -1
        is_args = self._key in self.args_keys
        if is_args and self._args_done:
            raise self._fail(f"arguments given twice ({self._key!r})")
        stream = is_args and self.name is not None and text[pos] == "{"
        self._mode = "stream" if stream else ("args" if is_args else "buffer")
        self._scanner = ClosureScanner(any_value=True)
        self._held = []
        self._state = "value"
        return pos

    def _on_value(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        end = self._scanner.feed(text, pos)
        piece = text[pos:] if end < 0 else text[pos:end]
        if self._mode == "stream":
            if piece:
                ops.append(("args", piece))
        else:
            self._held.append(piece)
        if end < 0:
            return -1
        self._finish_value(ops)
        self._state = "after"
        return end

    def _on_after(self, text: str, pos: int, ops: list[tuple[str, str]]) -> int:
        pos, char = self._expect(text, pos, ",}", "',' or '}' after a member")
        if pos < 0:
            return pos
        if char == "}":
            self._close_object(ops)
        else:
            self._state = "key"
        return pos

    def _finish_value(self, ops: list[tuple[str, str]]) -> None:
        if self._mode == "stream":
            self._args_done = True
        elif self._mode == "args":
            self._args_done = True
            self._args_pending = _normalise_arguments("".join(self._held))
        elif self._key in self.name_keys:
            self._set_name("".join(self._held), ops)
        if self._args_pending is not None and self.name is not None:
            ops.append(("args", self._args_pending))
            self._args_pending = None

    def _set_name(self, raw: str, ops: list[tuple[str, str]]) -> None:
        try:
            name = json.loads(raw)
        except (ValueError, RecursionError):
            name = None
        if not isinstance(name, str) or not name.strip():
            raise self._fail(
                f"the call's name must be a non-empty string, got {raw.strip()[:40]!r}"
            )
        if self.name is not None:
            raise self._fail("the call object names its function twice")
        self.name = name
        ops.append(("name", name))

    def _close_object(self, ops: list[tuple[str, str]]) -> None:
        if self.name is None:
            raise self._fail("the call object has no function name")
        if not self._args_done:
            ops.append(("args", "{}"))
        self._state = "done"

    _STEPS: ClassVar[dict[str, Any]] = {
        "open": _on_open,
        "key": _on_key,
        "key_string": _on_key_string,
        "colon": _on_colon,
        "value_start": _on_value_start,
        "value": _on_value,
        "after": _on_after,
    }


def _load_json_string(raw: str, fail: Any) -> str:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise fail(f"invalid JSON string {raw[:40]!r}") from None
    return str(value)


def _normalise_arguments(raw: str) -> str:
    text = raw.strip()
    if text == "null":
        return "{}"
    if text.startswith('"'):
        try:
            inner = json.loads(text)
            if isinstance(inner, str) and isinstance(json.loads(inner), dict):
                return inner
        except (ValueError, RecursionError):
            pass
    return raw


# --------------------------------------------------------------------------- tools & typing


class ToolIndex:
    """Tool name → parameters JSON Schema, from OpenAI-style tool definitions.

    Accepts ``{"type": "function", "function": {"name", "parameters"}}``, the bare
    ``{"name", "parameters"}`` shape and Anthropic's ``input_schema``.
    """

    __slots__ = ("_schemas",)

    def __init__(self, tools: Sequence[Mapping[str, Any]] | None = None) -> None:
        self._schemas: dict[str, dict[str, Any]] = {}
        if tools is None:
            return
        if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
            raise CallerError(
                f"tools must be a list of tool definitions, got {type(tools).__name__}"
            )
        for position, tool in enumerate(tools):
            name, schema = _read_tool(tool, position)
            self._schemas[name] = schema

    def __contains__(self, name: object) -> bool:
        return name in self._schemas

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in definition order."""
        return tuple(self._schemas)

    def parameters(self, name: str) -> dict[str, Any] | None:
        """Return the parameters schema of tool ``name`` (``None`` if unknown)."""
        return self._schemas.get(name)

    def property_schema(self, name: str, key: str) -> dict[str, Any] | None:
        """Return the schema of argument ``key`` of tool ``name`` (``None`` if unknown)."""
        params = self._schemas.get(name)
        props = params.get("properties") if params else None
        prop = props.get(key) if isinstance(props, Mapping) else None
        return prop if isinstance(prop, dict) else None


def _read_tool(tool: Any, position: int) -> tuple[str, dict[str, Any]]:
    if not isinstance(tool, Mapping):
        raise CallerError(f"tools[{position}] must be a dict, got {type(tool).__name__}")
    spec = tool.get("function", tool)
    if not isinstance(spec, Mapping):
        raise CallerError(f"tools[{position}].function must be a dict")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise CallerError(f"tools[{position}] has no function name")
    schema = spec.get("parameters", spec.get("input_schema"))
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise CallerError(f"tools[{position}] ({name}): parameters must be a JSON Schema object")
    return name, schema


_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# Non-string types are tried in this order; a string type always comes last, so a
# union like ["integer", "string"] types "3" as 3 and "three" as "three".
_TYPE_ORDER = ("null", "boolean", "integer", "number", "object", "array")
# Python-ish type names some tool definitions use (seen in vLLM's Qwen3-Coder tests).
_TYPE_ALIASES = {
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "str": "string",
}


def schema_types(schema: Mapping[str, Any] | None) -> set[str]:
    """Return the JSON types a schema allows (empty: unknown)."""
    if not isinstance(schema, Mapping):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types = {_TYPE_ALIASES.get(declared, declared)}
    elif isinstance(declared, list):
        types = {_TYPE_ALIASES.get(t, t) for t in declared if isinstance(t, str)}
    else:
        types = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            types |= schema_types(sub)
    if not types and "properties" in schema:
        types.add("object")
    if not types and "items" in schema:
        types.add("array")
    if not types and isinstance(schema.get("enum"), list):
        types |= {_json_type(v) for v in schema["enum"]}
    return types


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


def coerce_value(text: str, schema: Mapping[str, Any] | None) -> Any:
    """Type an argument value carried as text, by its JSON Schema.

    ``"3"`` becomes ``3`` only when the schema allows integer (or number); ``"true"``
    becomes ``True`` only when it allows boolean; objects and arrays are parsed (JSON,
    or a Python literal as models sometimes write) only when the schema allows them.
    Anything else, including a value that does not fit its declared type, stays the
    exact text, whitespace included: the schema validator then reports the mismatch
    to the model instead of toolwire guessing.

    Args:
        text: The value as the model wrote it.
        schema: The argument's JSON Schema, or ``None`` when unknown.

    Returns:
        A JSON-ready Python value.
    """
    types = schema_types(schema)
    for kind in _TYPE_ORDER:
        if kind in types:
            ok, value = _COERCERS[kind](text.strip())
            if ok:
                return value
    return text


def value_to_json(text: str, schema: Mapping[str, Any] | None) -> str:
    """Return :func:`coerce_value`'s result as JSON text."""
    return json.dumps(coerce_value(text, schema), ensure_ascii=False)


def _as_null(text: str) -> tuple[bool, Any]:
    return (text in ("null", "None"), None)


def _as_bool(text: str) -> tuple[bool, Any]:
    lowered = text.lower()
    return (lowered in ("true", "false"), lowered == "true")


def _as_int(text: str) -> tuple[bool, Any]:
    if _INTEGER.fullmatch(text):
        return _read_int(text)
    ok, number = _as_number(text)
    if ok and isinstance(number, float) and number.is_integer():
        return True, int(number)
    return False, None


def _as_number(text: str) -> tuple[bool, Any]:
    if _INTEGER.fullmatch(text):
        return _read_int(text)
    if not _NUMBER.fullmatch(text):
        return False, None
    number = float(text)
    return (math.isfinite(number), number)


def _read_int(text: str) -> tuple[bool, Any]:
    """An integer, unless it has more digits than Python reads: then it stays text, and
    the tool's validation tells the model (never a bare ``ValueError`` from ``int``)."""
    try:
        return True, int(text)
    except ValueError:
        return False, None


def _as_container(kind: type) -> Any:
    def coerce(text: str) -> tuple[bool, Any]:
        value = _load_literal(text)
        return (isinstance(value, kind), value)

    return coerce


_NOT_JSON = object()


def _load_literal(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_JSON
    return value if _is_json_ready(value) else _NOT_JSON


def _is_json_ready(value: Any, depth: int = 0) -> bool:
    if depth > 200:
        return False
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_ready(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_ready(v, depth + 1) for k, v in value.items())
    return False


_COERCERS = {
    "null": _as_null,
    "boolean": _as_bool,
    "integer": _as_int,
    "number": _as_number,
    "object": _as_container(dict),
    "array": _as_container(list),
}


def opens_reasoning(generation_prompt: str | None, open_marker: str, close_marker: str) -> bool:
    """Whether a generation prompt leaves a reasoning block open.

    True when the prompt's last ``open_marker`` comes after its last ``close_marker``
    (Qwen3 thinking templates end with ``<think>\\n``; the no-thinking template ends
    with ``<think>\\n\\n</think>\\n\\n``, which is closed).
    """
    if not generation_prompt:
        return False
    opened = generation_prompt.rfind(open_marker)
    return opened >= 0 and opened > generation_prompt.rfind(close_marker)


# --------------------------------------------------------------------------- streams


class FormatStream(ABC):
    """An incremental parser of one model output.

    Subclasses implement :meth:`_feed` and :meth:`_close` and report what they find
    through :meth:`_text`, :meth:`_reasoning`, :meth:`_begin_call` and
    :meth:`_arguments`; the public :meth:`feed` / :meth:`close` wrap them with the
    misuse checks and collect the events.
    """

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        self.format = fmt
        self._ids = fmt.id_factory(id_prefix)
        self._out: list[Event] = []
        self._call_count = 0
        self._closed = False

    # ---- public API

    def feed(self, delta: str) -> list[Event]:
        """Parse the next piece of output.

        Returns:
            The events this piece completes (content not possibly a marker's
            beginning, reasoning, call starts, argument fragments).

        Raises:
            FormatError: The output holds a malformed tool call.
            DecoderStateError: The stream was already closed.
        """
        if self._closed:
            raise DecoderStateError(f"{self.format.family} stream fed after close()")
        if not isinstance(delta, str):
            raise CallerError(f"feed() takes str, got {type(delta).__name__}")
        out: list[Event] = []
        self._out = out
        try:
            self._feed(delta)
        except FormatError as error:
            self._closed = True
            error.events = out
            raise
        return out

    def close(self) -> list[Event]:
        """End the output: flush held-back text and check nothing is left open.

        Raises:
            FormatError: The output ended inside a tool call (truncated), or with a
                malformed one.
            DecoderStateError: The stream was already closed.
        """
        if self._closed:
            raise DecoderStateError(f"{self.format.family} stream closed twice")
        self._closed = True
        return self._run(lambda _: self._close(), "")

    @property
    def call_count(self) -> int:
        """How many calls have started so far."""
        return self._call_count

    # ---- for subclasses

    @abstractmethod
    def _feed(self, delta: str) -> None:
        """Consume ``delta``, reporting through the ``_text``/... helpers."""

    @abstractmethod
    def _close(self) -> None:
        """Flush at end of output; raise :class:`FormatError` if a call is open."""

    def _text(self, text: str) -> None:
        if text:
            last = self._out[-1] if self._out else None
            if isinstance(last, TextDelta):
                last.text += text
            else:
                self._out.append(TextDelta(text))

    def _reasoning(self, text: str) -> None:
        if text:
            last = self._out[-1] if self._out else None
            if isinstance(last, ReasoningDelta):
                last.text += text
            else:
                self._out.append(ReasoningDelta(text))

    def _begin_call(self, name: str, call_id: str | None = None) -> int:
        """Announce a new call; returns its index."""
        index = self._call_count
        self._call_count += 1
        self._out.append(ToolCallStarted(index, call_id or self._ids.make(index), name))
        return index

    def _arguments(self, text: str, index: int | None = None) -> None:
        """Emit an argument fragment of call ``index`` (default: the latest call)."""
        if text:
            self._out.append(ToolCallDelta(self._call_count - 1 if index is None else index, text))

    def _error(self, message: str, where: str = "") -> FormatError:
        return FormatError(message, family=self.format.family, where=where)

    def _run(self, step: Any, delta: str) -> list[Event]:
        out: list[Event] = []
        self._out = out
        try:
            step(delta)
        except FormatError as error:
            self._closed = True
            error.events = out
            raise
        return out


class Format(ABC):
    """A model family's tool-call format, configured for one variant and tool set.

    Attributes:
        family: The family name (registry key), for example ``"hermes"``.
        variant: The variant within the family, for example ``"qwen3"``.
        tools: The tool index used to type argument values.
        generation_prompt: The text the chat template appended after the last message.
        markers: The marker strings of this format (tests check none leaks out).
        id_factory: The :class:`IdFactory` class that makes the ids of calls the
            output does not name; a family whose template constrains ids overrides it.
    """

    family: ClassVar[str] = ""
    markers: tuple[str, ...] = ()
    id_factory: ClassVar[type[IdFactory]] = IdFactory

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        if generation_prompt is not None and not isinstance(generation_prompt, str):
            raise CallerError("generation_prompt must be a str or None")
        self.variant = variant
        self.tools = ToolIndex(tools)
        self.generation_prompt = generation_prompt

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.family}/{self.variant}>"

    @abstractmethod
    def stream(self, *, id_prefix: str | None = None) -> FormatStream:
        """Start an incremental parse of one output.

        Args:
            id_prefix: Prefix of generated call ids (``<prefix><index>``); a random
                one per stream when ``None``.
        """

    def parse(self, text: str, *, id_prefix: str | None = None) -> ParseResult:
        """Parse a whole output (the same code path as streaming, in one piece).

        Raises:
            FormatError: A malformed or truncated call; ``partial`` holds what was
                parsed before it.
        """
        stream = self.stream(id_prefix=id_prefix)
        collector = EventCollector()
        try:
            collector.add(stream.feed(text))
            collector.add(stream.close())
        except FormatError as error:
            collector.add(error.events)
            error.partial = collector.result()
            raise
        return collector.result()
