"""Llama tool calls: JSON objects (Llama 3.x) and pythonic call lists (Llama 4, others).

**JSON (``llama3-json``).** The Llama 3.1 / 3.2 / 3.3 chat templates
(``meta-llama/Llama-3.1-8B-Instruct`` ``tokenizer_config.json``) render a custom tool
call as ``{"name": "NAME", "parameters": {...}}``; the model may put ``<|python_tag|>``
before it, and (vLLM ``tests/tool_parsers/test_llama3_json_tool_parser.py``) writes
parallel calls separated by ``;`` or newlines, sometimes with text around them, and
sometimes ``"arguments"`` instead of ``"parameters"``. A call starts at a ``{`` that is
followed by ``"name":``; the object is read by
:class:`~toolwire.formats.base.CallObjectReader`, so arguments stream verbatim and a
brace inside a string never ends them. Separators (``;`` and whitespace) between two
calls are dropped; text elsewhere is content, verbatim. ``<|eom_id|>`` and
``<|eot_id|>`` (end-of-message tokens a server may leave in) are dropped.

**Pythonic (``pythonic``, ``llama4-pythonic``).** ``[get_weather(city="SF"), f(a=1)]``,
as in vLLM ``tests/tool_parsers/test_pythonic_tool_parser.py`` and
``test_llama4_pythonic_tool_parser.py``; Llama 4 may wrap the list in
``<|python_start|>`` / ``<|python_end|>``. A list counts as calls only when it starts
like one (``[NAME(`` followed by ``)`` or ``KEY=``), so prose such as ``[see(this)]``
stays content. Nothing is ever evaluated: a small scanner finds each keyword value
(brackets and Python string quotes tracked) and :func:`ast.literal_eval` turns that
one literal into data (tuples become arrays; sets, bytes, complex numbers and
non-finite floats are refused). Each call is announced at its ``(`` and its arguments
stream one keyword value at a time.

Truncated and malformed output:

* Output cut off inside a call (object or list not closed) raises
  :class:`FormatError` from ``close()``.
* A JSON call object with a bad structure, or a pythonic call with a positional
  argument, a non-literal value (a name, an f-string, an expression) or a missing
  ``,``/``)``, raises :class:`FormatError` at once.
* Text that only looks like the start of a call (``{"title": ...}``, ``[1, 2]``) is
  content.
"""

from __future__ import annotations

import ast
import json
import math
import re
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .base import Format, FormatStream
from .callobject import CallObjectReader
from .coerce import json_text
from .markers import marker_set, skip_whitespace

__all__ = ["LlamaFormat", "LlamaJsonStream", "PythonicStream", "make"]


PYTHON_TAG = "<|python_tag|>"
PYTHON_START = "<|python_start|>"
PYTHON_END = "<|python_end|>"
END_TOKENS = ("<|eom_id|>", "<|eot_id|>")

_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_KEY = re.compile(r"[A-Za-z_]\w*")
_SEPARATORS = " \t\r\n;"


class LlamaFormat(Format):
    """Llama 3.x JSON calls or pythonic call lists, by variant."""

    family = "llama"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.pythonic = variant != "llama3-json"
        if self.pythonic:
            self.markers = (PYTHON_START, PYTHON_END, *END_TOKENS)
            self.content_markers = marker_set("[", PYTHON_START, PYTHON_END, *END_TOKENS)
        else:
            self.markers = (PYTHON_TAG, *END_TOKENS)
            self.content_markers = marker_set("{", PYTHON_TAG, *END_TOKENS)

    def _open_stream(self, id_prefix: str | None) -> FormatStream:
        """Start an incremental parse of one output (the family's parser)."""
        if self.pythonic:
            return PythonicStream(self, id_prefix=id_prefix)
        return LlamaJsonStream(self, id_prefix=id_prefix)


# --------------------------------------------------------------------------- helpers


def _head_match(text: str, pos: int, parts: Sequence[str | re.Pattern[str]]) -> bool | None:
    """Match ``parts`` (literals or patterns, whitespace allowed between) at ``pos``.

    Returns True (matches), False (cannot match) or None (text ends first: maybe).
    """
    for part in parts:
        pos = skip_whitespace(text, pos)
        if pos >= len(text):
            return None
        if isinstance(part, str):
            chunk = text[pos : pos + len(part)]
            if chunk != part:
                return None if part.startswith(chunk) and len(chunk) < len(part) else False
            pos += len(part)
        else:
            match = part.match(text, pos)
            if match is None:
                return False
            if match.end() == len(text):
                return None
            pos = match.end()
    return True


_JSON_HEAD: tuple[str, ...] = ("{", '"name"', ":")
# Some Llama 3.x outputs put the OpenAI-style "type" key first (vLLM's llama3_json
# parser tests accept {"type": "function", "name": ..., "parameters": ...}).
_TYPED_JSON_HEAD: tuple[str, ...] = ("{", '"type"', ":", '"function"', ",", '"name"', ":")


# The heads after their shared "{", by the first key's opening two characters
# (_json_head matches the "{" itself).
_HEAD_BY_KEY: dict[str, tuple[str, ...]] = {'"n': _JSON_HEAD[1:], '"t': _TYPED_JSON_HEAD[1:]}


def _any_head(
    text: str, pos: int, heads: tuple[tuple[str | re.Pattern[str], ...], ...]
) -> bool | None:
    """Whether one of ``heads`` starts at ``pos`` (``None``: cannot tell yet)."""
    undecided = False
    for head in heads:
        matched = _head_match(text, pos, head)
        if matched:
            return True
        undecided = undecided or matched is None
    return None if undecided else False


def _json_head(text: str, pos: int) -> bool | None:
    """Whether a JSON call object starts at ``pos`` (``None``: cannot tell yet).

    The same answer as ``_any_head`` over both heads, in one pass: they share the
    ``{`` and differ at the first key's second character (``"n`` or ``"t``), so the
    head is chosen there and only that one is matched on. A stream held at every
    character of an undecided head calls this once per delta.
    """
    key = skip_whitespace(text, pos)
    if key >= len(text):
        return None
    if text[key] != "{":
        return False
    key = skip_whitespace(text, key + 1)
    opening = text[key : key + 2]
    if len(opening) < 2:  # the text ends at or right after the key's quote
        return None if opening in ("", '"') else False
    head = _HEAD_BY_KEY.get(opening)
    return False if head is None else _head_match(text, key, head)


_PY_HEAD_CALL: tuple[str | re.Pattern[str], ...] = ("[", _IDENT, "(", ")")
_PY_HEAD_KW: tuple[str | re.Pattern[str], ...] = ("[", _IDENT, "(", _KEY, "=")


def _pythonic_head(text: str, pos: int) -> bool | None:
    """Whether a pythonic call list starts at ``pos`` (``None``: cannot tell yet)."""
    return _any_head(text, pos, (_PY_HEAD_KW, _PY_HEAD_CALL))  # the usual call first


class _TextScanner(FormatStream):
    """Shared content handling: markers, drop-only tokens, call-head detection."""

    format: LlamaFormat

    def __init__(self, fmt: LlamaFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._state: Callable[[str, int], int] = self._st_content

    def _feed(self, delta: str) -> None:
        text = self._buf + delta
        self._buf = ""
        pos = 0
        while pos >= 0:
            pos = self._state(text, pos)

    def _hold(self, text: str, pos: int) -> int:
        self._buf = text[pos:]
        return -1

    def _st_content(self, text: str, pos: int) -> int:
        markers = self.format.content_markers
        if not markers.may_start(text, pos):  # fast path: plain text
            self._text(text[pos:] if pos else text)
            return -1
        while True:
            found = markers.search(text, pos)
            if found is None:
                held = markers.holdback(text, pos)
                self._text(text[pos : len(text) - held])
                return self._hold(text, len(text) - held)
            start, marker = found
            self._text(text[pos:start])
            if marker in END_TOKENS:
                pos = start + len(marker)
                continue
            decided = self._on_marker(text, start, marker)
            if decided is None:
                return self._hold(text, start)
            if decided >= 0:
                return decided
            self._text(marker)  # looked like a call start but is not one
            pos = start + len(marker)

    @abstractmethod
    def _on_marker(self, text: str, start: int, marker: str) -> int | None:
        """Handle a marker at ``start``: new position, None (undecided), -1 (content)."""

    def _truncated(self) -> None:
        raise self._error(
            "the output ended inside a tool call (cut off by the token limit?)",
            where=f"tool call {max(self.call_count - 1, 0)}",
        )


# --------------------------------------------------------------------------- JSON


class LlamaJsonStream(_TextScanner):
    """Incremental parser of Llama 3.x JSON tool calls."""

    def __init__(self, fmt: LlamaFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._reader = CallObjectReader(family=fmt.family)
        self._after_tag = False

    def _on_marker(self, text: str, start: int, marker: str) -> int | None:
        if marker == PYTHON_TAG:
            self._call_begins(self._at(text, start))
            self._after_tag = True
            self._state = self._st_tagged
            return start + len(marker)
        head = _json_head(text, start)
        if head is None:
            return None
        if not head:
            return -1
        self._call_begins(self._at(text, start))
        self._start_object()
        return start

    def _start_object(self) -> None:
        self._reader = CallObjectReader(family=self.format.family)
        self._state = self._st_call

    def _st_tagged(self, text: str, pos: int) -> int:
        # After <|python_tag|> a JSON call object must follow.
        head = _json_head(text, pos)
        if head is None:
            return self._hold(text, pos)
        if not head:
            raise self._error(
                f"expected a JSON call after <|python_tag|>, found {text[pos : pos + 30]!r}",
                where=f"tool call {self.call_count}",
            )
        self._start_object()
        return pos

    def _st_call(self, text: str, pos: int) -> int:
        ops, end = self._reader.feed(text, pos)
        for kind, value in ops:
            if kind == "name":
                self._begin_call(value)
            else:
                self._arguments(value)
        if end < 0:
            return -1
        self._call_ends(self._at(text, end))
        self._state = self._st_between
        return end

    def _st_between(self, text: str, pos: int) -> int:
        # Separators after a call are dropped only if another call follows.
        end = pos
        while end < len(text) and text[end] in _SEPARATORS:
            end += 1
        if end == len(text):
            return self._hold(text, pos)
        head = _json_head(text, end)
        if head:  # the next call starts right here
            self._call_begins(self._at(text, end))
            self._start_object()
            return end
        if text.startswith(PYTHON_TAG, end):
            self._state = self._st_content
            return end
        rest = len(text) - end
        if head is None or (rest < len(PYTHON_TAG) and PYTHON_TAG.startswith(text[end:])):
            return self._hold(text, pos)
        self._state = self._st_content
        return pos

    def _close(self) -> None:
        if self._state == self._st_call or (self._state == self._st_tagged and self._buf.strip()):
            self._truncated()
        if self._state in (self._st_content, self._st_between):
            self._text(self._buf)
        self._buf = ""


# --------------------------------------------------------------------------- pythonic


_PY_OUTSIDE = re.compile(r"[\[\](){}'\",]")
_NOT_JSON = object()


class _PyValueScanner:
    """Finds the end of one Python literal (before a top-level ``,`` or ``)``).

    State (bracket depth, open string delimiter) carries across pieces; when a
    decision needs characters that have not arrived (a quote that may open a
    triple-quoted string, a trailing backslash), ``scan`` stops early and the caller
    holds the rest of the text back for the next piece.
    """

    __slots__ = ("depth", "quote")

    def __init__(self) -> None:
        self.depth = 0
        self.quote = ""  # the open string's delimiter: ', ", \'\'\' or """

    def scan(self, text: str, pos: int) -> tuple[int, int]:
        """Scan ``text[pos:]``.

        Returns:
            ``(terminator, stop)``: the index of the terminating ``,`` or ``)`` (or -1),
            and, when there is none, how far the text was consumed.
        """
        while True:
            if self.quote:
                pos = self._skip_string(text, pos)
                if self.quote:
                    return -1, pos
                continue
            match = _PY_OUTSIDE.search(text, pos)
            if match is None:
                return -1, len(text)
            char, at = match.group(), match.start()
            if char in "'\"":
                if at + 3 > len(text):
                    return -1, at  # may open a triple-quoted string: wait for more
                self.quote = char * 3 if text.startswith(char * 3, at) else char
                pos = at + len(self.quote)
            elif char in "([{":
                self.depth += 1
                pos = at + 1
            elif self.depth == 0 and char in ",)":
                return at, at
            else:  # a nested "," or a closing bracket
                self.depth -= char != ","
                pos = at + 1

    def _skip_string(self, text: str, pos: int) -> int:
        # The next quote is found once and searched again only after an escape
        # passes it: searching for it after every backslash would be quadratic.
        quote = self.quote
        close = text.find(quote, pos)
        while True:
            if close < 0:
                slash = text.find("\\", pos)
                if slash < 0:
                    # Keep a possibly partial closing triple quote for the next piece.
                    return max(pos, len(text) - len(quote) + 1)
            else:
                slash = text.find("\\", pos, close)
                if slash < 0:
                    self.quote = ""
                    return close + len(quote)
            if slash + 1 >= len(text):
                return slash  # the escaped character has not arrived
            pos = slash + 2
            if 0 <= close < pos:
                close = text.find(quote, pos)


def _literal_to_json(source: str) -> Any:
    try:
        tree = ast.parse(source.strip(), mode="eval")
        value = ast.literal_eval(tree)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_JSON
    return _jsonable(value, 0)


def _jsonable(value: Any, depth: int) -> Any:  # noqa: PLR0911 — one return per kind of value
    if depth > 100:
        return _NOT_JSON
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _NOT_JSON
    if isinstance(value, (list, tuple)):
        items = [_jsonable(v, depth + 1) for v in value]
        return _NOT_JSON if any(i is _NOT_JSON for i in items) else items
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            return _NOT_JSON
        pairs = {k: _jsonable(v, depth + 1) for k, v in value.items()}
        return _NOT_JSON if any(v is _NOT_JSON for v in pairs.values()) else pairs
    return _NOT_JSON


class PythonicStream(_TextScanner):
    """Incremental parser of pythonic call lists ``[f(a=1), g(b="x")]``."""

    def __init__(self, fmt: LlamaFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._keys: set[str] = set()
        self._value: list[str] = []
        self._scanner = _PyValueScanner()

    def _on_marker(self, text: str, start: int, marker: str) -> int | None:
        if marker == PYTHON_END:
            return start + len(marker)
        at = start + len(marker) if marker == PYTHON_START else start
        head = _pythonic_head(text, at)
        if head is None:
            return None
        if not head:
            # A wrapper token is never content; a bare "[" that starts no call is.
            return at if marker == PYTHON_START else -1
        self._call_begins(self._at(text, start))  # the whole list is one unit
        self._state = self._st_call_name
        return skip_whitespace(text, at) + 1  # past the "["

    def _where(self) -> str:
        return f"tool call {max(self.call_count - 1, 0)}"

    def _st_call_name(self, text: str, pos: int) -> int:
        pos = skip_whitespace(text, pos)
        match = _IDENT.match(text, pos)
        paren = skip_whitespace(text, match.end()) if match else pos
        if match is None or paren >= len(text):
            if match is None and pos < len(text):
                raise self._error(
                    f"expected a function call, found {text[pos : pos + 30]!r}", where=self._where()
                )
            return self._hold(text, pos)
        if text[paren] != "(":
            raise self._error(f"expected '(' after {match.group()!r}", where=self._where())
        self._begin_call(match.group())
        self._arguments("{")
        self._keys = set()
        self._state = self._st_key
        return paren + 1

    def _st_key(self, text: str, pos: int) -> int:
        pos = skip_whitespace(text, pos)
        if pos >= len(text):
            return self._hold(text, pos)
        if text[pos] == ")":
            return self._end_call(text, pos + 1)
        match = _KEY.match(text, pos)
        equals = skip_whitespace(text, match.end()) if match else pos
        if match is None or equals >= len(text):
            if match is None:
                raise self._error(
                    f"expected KEY=VALUE, found {text[pos : pos + 30]!r}", where=self._where()
                )
            return self._hold(text, pos)
        if text[equals] != "=" or text.startswith("==", equals):
            raise self._error(
                f"positional argument {text[pos : pos + 30]!r} (keywords only)", where=self._where()
            )
        key = match.group()
        if key in self._keys:
            raise self._error(f"argument {key!r} given twice", where=self._where())
        self._arguments(f"{', ' if self._keys else ''}{json.dumps(key)}: ")
        self._keys.add(key)
        # No new scanner: one that found a value's end is at rest (depth 0, no string).
        self._value = []
        self._state = self._st_value
        return equals + 1

    def _st_value(self, text: str, pos: int) -> int:
        end, stop = self._scanner.scan(text, pos)
        if end < 0:
            self._value.append(text[pos:stop])
            return self._hold(text, stop)
        self._value.append(text[pos:end])
        source, self._value = "".join(self._value), []
        value = _literal_to_json(source)
        if value is _NOT_JSON or not source.strip():
            raise self._error(
                f"argument value is not a literal: {source.strip()[:40]!r}", where=self._where()
            )
        self._arguments(json_text(value))
        if text[end] == ")":
            return self._end_call(text, end + 1)
        self._state = self._st_key
        return end + 1

    def _end_call(self, text: str, pos: int) -> int:
        self._arguments("}")
        self._call_complete()  # kept if the output is cut off later in the list
        if text[pos : pos + 1] in (",", "]"):  # what follows is here: no state between
            return self._st_after_call(text, pos)
        self._state = self._st_after_call
        return pos

    def _st_after_call(self, text: str, pos: int) -> int:
        pos = skip_whitespace(text, pos)
        if pos >= len(text):
            return self._hold(text, pos)
        if text[pos] == ",":
            self._state = self._st_call_name
            return pos + 1
        if text[pos] == "]":
            self._state = self._st_content
            self._call_ends(self._at(text, pos + 1))
            return pos + 1
        raise self._error(
            f"expected ',' or ']' after a call, found {text[pos : pos + 30]!r}", where=self._where()
        )

    def _close(self) -> None:
        if self._state != self._st_content:
            self._truncated()
        if self._buf.startswith(PYTHON_START):  # the output ended right after it
            self._call_begins(self._at(self._buf, 0))
            self._truncated()
        self._text(self._buf)
        self._buf = ""


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> LlamaFormat:
    """Build the Llama format of ``variant`` (one of the registry's)."""
    return LlamaFormat(variant, tools=tools, generation_prompt=generation_prompt)
