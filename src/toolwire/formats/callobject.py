"""The JSON call object reader shared by the Hermes and Llama formats.

The assembler's :class:`~toolwire.wire.jsonscan.ClosureScanner` (with
``any_value=True``) tells where one JSON value ends when it arrives in pieces, so JSON
arguments stream as they come and the call closes the moment its closing bracket
arrives. One scanner serves both layers, skipping string bodies with a regular
expression instead of a Python loop per character.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from ..errors import FormatError
from ..wire.jsonscan import ClosureScanner
from .markers import skip_whitespace

__all__ = ["CallObjectReader", "raw_elements", "raw_members"]

_DECODER = json.JSONDecoder()


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
        end = len(text)
        # A table of states by name, not the families' bound-method state: this reader
        # changes state every few characters, and storing a bound method allocates
        # one. Counted (bench/README.md, "Parser style"): the bound-method version
        # parses Hermes with 4% more instructions (1-character streams: 1% fewer).
        steps = self._STEPS
        while pos < end:
            state = self._state
            if state == "done":
                return ops, pos
            pos = steps[state](self, text, pos, ops)
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
        # A member name that arrived whole, without escapes or control characters, is
        # its own text (what json.loads would return); anything else is scanned.
        close = text.find('"', pos)
        if close >= 0:
            key = text[pos:close]
            if "\\" not in key and key.isprintable():
                self._key = key
                self._state = "colon"
                return close + 1
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
        name: object = _plain_string(raw)
        if name is None:
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


def _plain_string(raw: str) -> str | None:
    """The value of a JSON string without escapes or control characters (what
    json.loads gives, at a fraction of its cost), or ``None`` for anything else."""
    text = raw.strip(" \t\n\r")
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        inner = text[1:-1]
        if '"' not in inner and "\\" not in inner and inner.isprintable():
            return inner
    return None


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


def raw_members(text: str) -> dict[str, str]:
    """The exact text of each top-level member value of a JSON object.

    For a call object already known to be valid JSON (``json.loads`` accepted it), so
    that its arguments can be passed on exactly as the model wrote them.
    """
    pos = skip_whitespace(text, 0) + 1
    members: dict[str, str] = {}
    while True:
        pos = skip_whitespace(text, pos)
        if text[pos] == "}":
            return members
        key, pos = _DECODER.raw_decode(text, pos)
        pos = skip_whitespace(text, skip_whitespace(text, pos) + 1)  # past ':'
        _, end = _DECODER.raw_decode(text, pos)
        members[key] = text[pos:end]
        pos = skip_whitespace(text, end)
        if text[pos] == ",":
            pos += 1


def raw_elements(text: str) -> list[str]:
    """The exact text of each element of a JSON array (valid JSON, as above)."""
    pos = skip_whitespace(text, 0) + 1
    out: list[str] = []
    while True:
        pos = skip_whitespace(text, pos)
        if text[pos] == "]":
            return out
        _, end = _DECODER.raw_decode(text, pos)
        out.append(text[pos:end])
        pos = skip_whitespace(text, end)
        if text[pos] == ",":
            pos += 1
