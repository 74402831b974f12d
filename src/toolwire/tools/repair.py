"""Lenient JSON parsing for malformed tool arguments.

Strategy, cheapest first:

1. A strict ``json.loads``. Valid JSON pays nothing else (bar one ``isinstance`` check
   for a double-encoded object: a JSON string that holds JSON).
2. A lenient recursive-descent parser, written here, that reads what models actually
   write: Markdown fences and prose or tags around the value, single and typographic
   quotes, unquoted keys and single-word values, Python literals and reprs, comments,
   trailing and missing commas, raw newlines and unescaped inner quotes in strings,
   Windows paths with single backslashes, and values cut off before their closing
   brackets.
3. ``json_repair`` as the fallback for any shape the lenient parser refuses.

The work is bounded: malformed text longer than ``MAX_REPAIR_CHARS`` is not repaired
(a ``RepairError`` tells the model to send valid JSON), and the ``json_repair``
fallback, which is much slower on junk (seconds for a megabyte of stray quotes), only
sees text up to ``_FALLBACK_MAX_CHARS``. Repair runs inside validation, on the agent's
event loop, so an unbounded repair would stall every other call's timeout. Numbers
longer than Python reads (``sys.get_int_max_str_digits``) and nesting deeper than
either parser follows are ``RepairError`` too, never a bare ``ValueError``.

Why a hand-written parser before ``json_repair``: ``bench/bench_repair.py`` measures
it. ``json_repair`` strips trailing whitespace inside string values (a file's final
newline is lost), decodes ``\\n`` inside ``C:\\new\\report`` as a newline, and returns
double-encoded objects as strings; the lenient parser keeps string contents exactly.

Two judgement calls, both about strings. An unescaped quote closes a string only
when what follows can continue the JSON (``:`` after a key, ``,`` then another
member, a closing bracket, or the end); otherwise it is content. And a string with
any invalid escape (``\\U``, ``\\D``) was written without escaping, so *all* its
backslashes are taken literally, except before a quote or another backslash.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from ..errors import RepairError

__all__ = ["MAX_REPAIR_CHARS", "loads_lenient", "repair_json"]

# Malformed arguments longer than this are not repaired (the lenient parser reads about
# 1 MB/s on junk; this bounds one repair to about a tenth of a second of the event loop).
MAX_REPAIR_CHARS = 128_000
# json_repair, the fallback, is far slower on junk (bench/bench_repair.py).
_FALLBACK_MAX_CHARS = 16_000

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n?(.*?)(?:\n?[ \t]*```|\Z)", re.DOTALL)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_WORD = re.compile(r"[A-Za-z_$][\w$-]*")
_WORD_END = frozenset(" \t\r\n,{}[]:\"'\u201c\u201d")
_VALUE_END = frozenset(",}]\n\r")
_LITERALS: dict[str, Any] = {
    "true": True, "false": False, "null": None,
    "True": True, "False": False, "None": None,
    "undefined": None,
}  # fmt: skip
_OPEN_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u201e": "\u201d"}
_ANY_QUOTE = frozenset("\"'\u201c\u201d\u2018\u2019\u201e")
_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_MAX_UNWRAP = 3  # JSON in a string in a string: deeper than this is not an accident


# Control flow inside repair_json, never raised to a caller (it becomes a RepairError),
# so it stays here and private rather than in toolwire.errors.
class _Refused(Exception):
    """The lenient parser met something it will not guess about."""


def repair_json(text: str) -> Any:
    """Recover the value a model meant from malformed JSON text.

    Args:
        text: The text as the model wrote it.

    Returns:
        The recovered value (valid JSON is returned as ``json.loads`` would, except
        that a JSON string holding an object or array is decoded once more).

    Raises:
        RepairError: Nothing sensible can be recovered (no JSON value in the text).
        CallerError: ``text`` is not a string.
    """
    return loads_lenient(text)[0]


def loads_lenient(text: str) -> tuple[Any, bool]:
    """Parse strictly, then repair: the value and whether repair was needed.

    Args:
        text: JSON text, possibly malformed.

    Returns:
        ``(value, repaired)``.

    Raises:
        RepairError: Nothing sensible can be recovered.
    """
    if not isinstance(text, str):
        from ..errors import CallerError

        raise CallerError(f"repair_json expects a str, got {type(text).__name__}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # ValueError: not JSON, or an int over the digit limit
        return _unwrap(_guarded_repair(text), 0), True
    if isinstance(value, str):
        unwrapped = _unwrap(value, 0)
        return unwrapped, unwrapped is not value
    return value, False


def _unwrap(value: Any, depth: int) -> Any:
    """Decode a string that holds a JSON object or array (double or triple encoding)."""
    if not isinstance(value, str) or depth >= _MAX_UNWRAP:
        return value
    inner = value.strip()
    if inner.startswith('"') and inner.endswith('"') and len(inner) > 1:
        try:
            decoded = json.loads(inner)
        except (ValueError, RecursionError):  # ValueError includes the int digit limit
            return value
    elif inner.startswith(("{", "[")):
        decoded = _decode_inner(inner)
    else:
        return value
    if decoded is None:
        return value
    unwrapped = _unwrap(decoded, depth + 1) if isinstance(decoded, str) else decoded
    return unwrapped if isinstance(unwrapped, (dict, list)) else value


def _decode_inner(inner: str) -> Any:
    """Parse the JSON inside a string, strictly or leniently; ``None`` if impossible."""
    try:
        return json.loads(inner)
    except (ValueError, RecursionError):  # ValueError includes the int digit limit
        pass
    try:
        return _guarded_repair(inner)
    except RepairError:
        return None


def _guarded_repair(text: str) -> Any:
    """Repair, turning runaway nesting and oversized input into a :class:`RepairError`."""
    if len(text) > MAX_REPAIR_CHARS:
        raise RepairError(
            f"the text is not valid JSON and, at {len(text):,} characters, too long to repair "
            f"(toolwire repairs up to {MAX_REPAIR_CHARS:,}): {_preview(text)}",
            hint="send valid JSON: escape quotes, backslashes and newlines inside strings",
        )
    try:
        return _repair(text)
    except RecursionError:
        raise RepairError(f"the value is nested too deeply to repair ({_preview(text)})") from None


def _repair(text: str) -> Any:
    """Lenient parser first, ``json_repair`` if it refuses."""
    body = _extract(text)
    if body is None:
        raise RepairError(f"no JSON value found in the text ({_preview(text)})")
    try:
        return _Parser(body).document()
    except _Refused:
        pass
    if len(body) > _FALLBACK_MAX_CHARS:
        raise RepairError(
            f"could not recover a JSON value from {len(body):,} characters of malformed text "
            f"({_preview(text)})",
            hint="send valid JSON: escape quotes, backslashes and newlines inside strings",
        )
    # Imported here, not at the top: only text both parsers before it refused gets this
    # far, and importing json_repair cost every process that imports the agent ~10 ms of
    # CPU (argparse, pathlib and urllib with it: bench/README.md, "Footprint").
    import json_repair

    try:
        value = json_repair.loads(body)
    except ValueError as exc:  # json_repair's own refusal, e.g. "nesting exceeds"
        raise RepairError(f"could not recover a JSON value ({exc}): {_preview(text)}") from None
    if value == "" and body.strip() not in ('""', "''"):
        raise RepairError(f"could not recover a JSON value from {_preview(text)}")
    return value


def _extract(text: str) -> str | None:
    """The part of the text that holds the value: inside a fence, from the first bracket."""
    # A fence counts only before the value starts: "```" inside a string is content.
    if "```" in text and not text.lstrip().startswith(("{", "[")):
        match = _FENCE.search(text)
        if match and match.group(1).strip():
            text = match.group(1)
    stripped = text.strip().lstrip("\ufeff")
    if not stripped:
        return None
    if stripped[0] in "{[" or stripped[0] in _ANY_QUOTE:
        return stripped
    starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
    if starts:
        return stripped[min(starts) :]
    return stripped if _is_scalar(stripped) else None


def _is_scalar(text: str) -> bool:
    """A lone number or literal is a value; prose is not."""
    return text in _LITERALS or _NUMBER.fullmatch(text) is not None


def _preview(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:60] + "...")


class _Parser:
    """Recursive descent over JSON-like text, tolerant of what models get wrong.

    Each ``_read_*`` method starts at ``self.pos`` and leaves it after what it read.
    End of input anywhere closes everything open (truncated output).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.end = len(text)

    def document(self) -> Any:
        """The first complete value; whatever follows it is ignored."""
        self._skip()
        if self.pos >= self.end:
            raise _Refused("empty")
        return self._read_value(closers="")

    # --- whitespace and comments --------------------------------------------------

    def _skip(self) -> None:
        """Skip whitespace and ``//``, ``/* */`` and ``# `` comments."""
        text, end = self.text, self.end
        while self.pos < end:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos) or _hash_comment(text, self.pos):
                newline = text.find("\n", self.pos)
                self.pos = end if newline < 0 else newline + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                self.pos = end if close < 0 else close + 2
            else:
                return

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < self.end else ""

    # --- values ---------------------------------------------------------------------

    def _read_value(self, closers: str) -> Any:
        ch = self._peek()
        if ch == "{":
            return self._read_object()
        if ch == "[":
            return self._read_array()
        if ch in _OPEN_QUOTES:
            return self._read_string(ch, key=False)
        if ch and (ch.isalnum() or ch in "-+._$/#"):
            return self._read_bare(closers)
        raise _Refused(f"unexpected {ch!r} at {self.pos}")

    def _read_object(self) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            self._skip_separators()
            ch = self._peek()
            if not ch:
                return result
            if ch in "}]":
                self.pos += 1
                return result
            key = self._read_key()
            self._skip()
            if self._peek() in (":", "="):
                self.pos += 1
                self._skip()
            if not self._peek() or self._peek() in ",}":
                continue  # a key without a value: truncated or empty, dropped
            result[key] = self._read_value(closers="}")

    def _read_array(self) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        while True:
            self._skip_separators()
            ch = self._peek()
            if not ch:
                return result
            if ch in "]}":
                self.pos += 1
                return result
            result.append(self._read_value(closers="]"))

    def _skip_separators(self) -> None:
        """Commas are optional: missing ones are implied, repeated or trailing ignored."""
        self._skip()
        while self._peek() == ",":
            self.pos += 1
            self._skip()

    def _read_key(self) -> str:
        ch = self._peek()
        if ch in _OPEN_QUOTES:
            return str(self._read_string(ch, key=True))
        start = self.pos
        while self.pos < self.end and self.text[self.pos] not in ":=\n,{}[]\"'":
            self.pos += 1
        key = self.text[start : self.pos].strip()
        if not key or self._peek() not in (":", "="):
            raise _Refused(f"cannot read a key at {start}")
        return key

    def _read_bare(self, closers: str) -> Any:
        """A number, a literal, or an unquoted word (or words) meant as a string."""
        start = self.pos
        while self.pos < self.end and self.text[self.pos] not in _WORD_END:
            self.pos += 1
        token = self.text[start : self.pos]
        if token in _LITERALS:
            return _LITERALS[token]
        if _NUMBER.fullmatch(token):
            return _number(token)
        # Unquoted text: runs to the end of the line or the next separator.
        while self.pos < self.end and self.text[self.pos] not in _VALUE_END:
            if self.text[self.pos] in closers:
                break
            self.pos += 1
        return self.text[start : self.pos].rstrip()

    # --- strings --------------------------------------------------------------------

    def _read_string(self, opener: str, *, key: bool) -> str:
        closer = _OPEN_QUOTES[opener]
        closers = {closer, '"'} if opener in "\u201c\u201e" else {closer}
        self.pos += 1
        start = self.pos
        text, end = self.text, self.end
        while self.pos < end:
            ch = text[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            if ch in closers and self._closes(self.pos + 1, key):
                raw = text[start : self.pos]
                self.pos += 1
                return _decode(raw)
            self.pos += 1
        self.pos = end
        return _decode(text[start:end].rstrip("\\"))  # cut off: close it

    def _closes(self, after: int, key: bool) -> bool:
        """Whether a quote at ``after - 1`` ends the string (else it is content)."""
        text, end = self.text, self.end
        nxt = _next_solid(text, after)
        if nxt >= end:
            return True
        ch = text[nxt]
        if key:
            return ch in ":="
        if ch in "}]:":
            return True
        if ch == ",":
            return _member_follows(text, nxt + 1)
        if ch in _ANY_QUOTE or text.startswith(("//", "/*"), nxt) or _hash_comment(text, nxt):
            # Another string or a comment: a missing comma, if a line break intervenes.
            return "\n" in text[after:nxt]
        return False


def _next_solid(text: str, pos: int) -> int:
    """The index of the next non-whitespace character (``len(text)`` if none)."""
    end = len(text)
    while pos < end and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _member_follows(text: str, pos: int) -> bool:
    """After a comma: does the JSON go on (a value, a key, a bracket, the end)?"""
    pos = _next_solid(text, pos)
    if pos >= len(text):
        return True
    ch = text[pos]
    if ch in _ANY_QUOTE or ch in "{}[]" or ch.isdigit() or ch == "-":
        return True
    word = _WORD.match(text, pos)  # at pos, not on text[pos:]: a copy per comma was quadratic
    if word is None:
        return False
    after = _next_solid(text, word.end())
    return word.group(0) in _LITERALS or (after < len(text) and text[after] in ":=")


def _hash_comment(text: str, pos: int) -> bool:
    """``# note`` is a comment; ``#fff`` is not."""
    return text.startswith("#", pos) and (pos + 1 >= len(text) or text[pos + 1] in " \t#")


def _number(token: str) -> int | float:
    if re.fullmatch(r"[-+]?\d+", token):
        try:
            return int(token)
        except ValueError:  # over Python's digit limit
            raise RepairError(
                f"a number of {len(token):,} digits is longer than Python reads "
                f"({sys.get_int_max_str_digits()} digits)",
                hint="write the number as a string, or with fewer digits",
            ) from None
    return float(token)


def _decode(raw: str) -> str:
    """Decode a string body, whatever its quoting, into its value.

    The body is rewritten as a strict JSON string literal (inner quotes escaped,
    invalid escapes made literal) and decoded by ``json.loads`` with ``strict=False``
    (raw control characters allowed), which also pairs ``\\u`` surrogates correctly.
    """
    if "\\" not in raw and '"' not in raw:
        return raw
    literal = _has_invalid_escape(raw)
    out: list[str] = []
    i, size = 0, len(raw)
    while i < size:
        ch = raw[i]
        if ch == "\\":
            nxt = raw[i + 1] if i + 1 < size else ""
            if nxt in ('"', "\\"):
                out.append("\\" + nxt)
                i += 2
            elif nxt == "'":
                out.append("'")
                i += 2
            elif literal or not nxt:
                out.append("\\\\")
                i += 1
            else:
                out.append("\\" + nxt)
                i += 2
        elif ch == '"':
            out.append('\\"')
            i += 1
        else:
            out.append(ch)
            i += 1
    try:
        return str(json.loads('"' + "".join(out) + '"', strict=False))
    except json.JSONDecodeError:
        return raw


def _has_invalid_escape(raw: str) -> bool:
    """Any backslash sequence JSON does not define (``\\U``, ``\\d``, short ``\\u``)."""
    i = raw.find("\\")
    while i >= 0:
        nxt = raw[i + 1] if i + 1 < len(raw) else ""
        if nxt not in _VALID_ESCAPES and nxt != "'":
            return True
        if nxt == "u" and not _HEX4.match(raw, i + 2):
            return True
        i = raw.find("\\", i + 2)
    return False
