"""Incremental JSON scanning, linear in the total input.

Two tools share one tokenizer (the regular expressions below, which let ``re`` walk
string bodies in C instead of a Python loop per character):

* ``ClosureScanner`` tracks only nesting depth and string state. The assembler feeds it
  a call's argument fragments and learns the moment the top-level object closes, which
  is when a call can start executing. It never re-reads text it has seen. The
  text-marker formats (``toolwire.formats``) use the same scanner, with
  ``any_value=True`` and a start offset, to find where arguments end inside a buffer
  that holds the rest of the model output too.
* ``PartialJSON`` builds the value as it arrives, for streaming UIs: ``.value`` is one
  object updated in place, readable after any delta, with an unfinished string showing
  its partial content.

Both process each character a constant number of times, so cost grows linearly with the
text, where re-parsing the buffer on every delta (what most partial parsers do) grows
quadratically.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import ModelOutputError

# The C string decoder behind json.loads: decodes one string body in one call.
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]

__all__ = ["ClosureScanner", "PartialJSON", "PartialJSONError"]

# A whole string literal, or a bracket, or a lone quote (a string still open at the end).
_STRUCT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]"]', re.S)
# A whole string literal.
_WHOLE_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
# The body of a string up to (not including) its closing quote or a trailing lone backslash.
_STR_BODY = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.S)
# Leading whitespace: ``\s`` is the set ``str.lstrip()`` strips, so skipping it with a
# match (which copies nothing) behaves as ``text[start:].lstrip()`` would.
_LEADING_SPACE = re.compile(r"\s*")
# What ends a bare top-level scalar (``12``, ``true``, ``null``): JSON layout or a
# closing bracket/comma of whatever surrounds it.
_SCALAR_END = re.compile(r"[\s,}\]]")

# Scanner states.
_FRESH, _NESTED, _CLOSED, _GAVE_UP, _STRING, _SCALAR = range(6)


class ClosureScanner:
    """Reports where a top-level JSON value closes, incrementally.

    ``feed(text)`` returns the offset just past the closing bracket within ``text``, or
    -1 while the value is still open. By default only an object or an array is
    tracked: a top-level value of another kind (or text that is not JSON at all) is
    never reported closed, and the assembler learns about it when the turn ends and
    the text is parsed.

    With ``any_value=True`` (what the text-marker formats use to find the end of a
    call's arguments or of one member of a call object) a top-level string closes at
    its closing quote, and a bare scalar (number, ``true``, ...) ends just *before*
    the first whitespace, ``,``, ``}`` or ``]`` after it, or at the end of the input
    (:meth:`finish`). The scanner tracks nesting and string state only; the consumer
    parses the finished text.

    Args:
        any_value: Track any top-level JSON value, not only objects and arrays.
    """

    __slots__ = ("_any", "_depth", "_escape", "_in_string", "_state")

    def __init__(self, *, any_value: bool = False) -> None:
        self._any = any_value
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._state = _FRESH

    @property
    def closed(self) -> bool:
        """True once the top-level value has closed."""
        return self._state == _CLOSED

    @property
    def started(self) -> bool:
        """True once the value's first non-whitespace character was fed."""
        return self._state != _FRESH

    def feed(self, text: str, start: int = 0) -> int:
        """Scan ``text[start:]``; return the offset in ``text`` just past the close, or -1.

        For a bare scalar (``any_value`` only) the offset is that of the character
        that ended it, which is not part of the value.
        """
        state = self._state
        if state == _NESTED:
            if self._in_string:
                start = self._string_tail(text, start)
                if start < 0:
                    return -1
            return self._scan(text, start)
        if state == _FRESH:
            return self._begin(text, start)
        if state == _STRING:
            return self._close_top_string(self._string_tail(text, start))
        if state == _SCALAR:
            return self._scan_scalar(text, start)
        return -1

    def closes(self, text: str) -> bool:
        """Consume ``text``; return True once the object or array has closed.

        The assembler's path. Instead of walking every string and bracket in Python, it
        removes whole strings with one regular expression and counts brackets with
        ``str.count`` (both in C): the value has closed when the depth is back to zero.
        Unlike ``feed`` it does not say where the value closed, and text that closes
        and reopens (``{}{``) counts as open; either way the arguments are parsed whole
        once they close, and such text is reported as invalid JSON then.
        """
        if self._state != _NESTED:
            return self.feed(text) >= 0
        if self._in_string:
            pos = self._string_tail(text, 0)
            if pos < 0:
                return False
            text = text[pos:]
        outside = _WHOLE_STRING.sub("", text)
        quote = outside.find('"')  # an unterminated string runs to the end of the text
        body = outside if quote < 0 else outside[:quote]
        depth = self._depth + body.count("{") + body.count("[") - body.count("}") - body.count("]")
        self._depth = depth
        if depth <= 0:
            self._state = _CLOSED
            return True
        if quote >= 0:
            self._in_string = True
            self._string_tail(text, len(text) - len(outside) + quote + 1)  # notes a trailing escape
        return False

    def finish(self) -> bool:
        """The input ended: return whether the value is complete.

        A bare scalar (``any_value`` only) is complete at the end of the input; an
        object, array or string still open is not.
        """
        if self._state == _SCALAR:
            self._state = _CLOSED
        return self._state == _CLOSED

    def _begin(self, text: str, start: int) -> int:
        pos = _LEADING_SPACE.match(text, start).end()  # type: ignore[union-attr]  # always matches
        if pos == len(text):
            return -1
        char = text[pos]
        if char in "{[":
            self._state = _NESTED
            return self._scan(text, pos)
        if not self._any:
            self._state = _GAVE_UP
            return -1
        if char == '"':
            self._state = _STRING
            self._in_string = True
            return self._close_top_string(self._string_tail(text, pos + 1))
        self._state = _SCALAR
        return self._scan_scalar(text, pos)

    def _close_top_string(self, end: int) -> int:
        if end >= 0:
            self._state = _CLOSED
        return end

    def _scan_scalar(self, text: str, pos: int) -> int:
        match = _SCALAR_END.search(text, pos)
        if match is None:
            return -1
        self._state = _CLOSED
        return match.start()

    def _scan(self, text: str, pos: int) -> int:
        depth = self._depth
        search = _STRUCT.search
        while (m := search(text, pos)) is not None:
            start, pos = m.span()
            char = text[start]
            if char == '"':
                if pos - start == 1:  # an open string runs to the end of this text
                    self._in_string = True
                    pos = self._string_tail(text, pos)
                    if pos < 0:
                        break
            elif char in "{[":
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    self._depth = 0
                    self._state = _CLOSED
                    return pos
        self._depth = depth
        return -1

    def _string_tail(self, text: str, pos: int) -> int:
        """Continue an open string from ``pos``; return the offset after it closes, or -1."""
        if self._escape:
            if pos >= len(text):
                return -1
            pos += 1
            self._escape = False
        end = _STR_BODY.match(text, pos).end()  # type: ignore[union-attr]  # always matches
        if end < len(text):
            if text[end] == '"':
                self._in_string = False
                return end + 1
            self._escape = True  # a lone backslash ends this piece; its partner comes next
        return -1


class PartialJSONError(ModelOutputError):
    """The text fed to ``PartialJSON`` cannot be the start of a JSON value."""


# One token outside strings: optional whitespace, then a complete string, a string that
# is still open, punctuation, a number, or a literal.
_TOKEN = re.compile(
    r"""[ \t\n\r]*(?:
        (?P<str>"[^"\\]*(?:\\.[^"\\]*)*")
      | (?P<open>")
      | (?P<punct>[{}\[\]:,])
      | (?P<num>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
      | (?P<lit>true|false|null)
    )""",
    re.S | re.X,
)
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
_MAYBE_PARTIAL = re.compile(
    r"[ \t\n\r]*(?:-?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]*)?|t|tr|tru|f|fa|fal|fals|n|nu|nul)\Z"
)
_WS = frozenset(" \t\n\r")
_NUM_MORE = frozenset(".eE+-0123456789")


_KEY, _COLON, _VALUE, _COMMA = range(4)  # what an open container expects next
_EXPECT_NAMES = ("key", "colon", "value", "comma")


class _Frame:
    """An open object or array on the parse stack."""

    __slots__ = ("container", "expect", "is_object", "key")

    def __init__(self, container: dict[str, Any] | list[Any]) -> None:
        self.container = container
        self.is_object = container.__class__ is dict
        self.key: str | None = None
        self.expect = _KEY if self.is_object else _VALUE


class PartialJSON:
    """A best-effort JSON value, readable after every delta, in linear total time.

    >>> p = PartialJSON()
    >>> p.feed('{"query": "log')
    >>> p.value
    {'query': 'log'}
    >>> p.feed('in", "n": 3}')
    >>> p.value, p.complete
    ({'query': 'login', 'n': 3}, True)

    ``value`` is the same object after every feed, updated in place (``None`` until a
    value starts). Numbers and literals appear once they are whole; keys once their
    value starts. Malformed input raises ``PartialJSONError`` and the parser stays failed.

    The common delta — more characters of a string — costs two substring tests and an
    append; an open string is joined and stored only when ``value`` is read.
    """

    __slots__ = (
        "_complete",
        "_dirty",
        "_error",
        "_frames",
        "_pending",
        "_root",
        "_str_key",
        "_str_parts",
    )

    def __init__(self) -> None:
        self._root: Any = None
        self._frames: list[_Frame] = []
        self._pending = ""  # text held back: a possibly unfinished number, literal or escape
        self._str_parts: list[str] | None = None  # raw pieces of the string now open
        self._str_key = False  # the open string is an object key
        self._dirty = False  # the open value string grew since it was last stored
        self._complete = False
        self._error: PartialJSONError | None = None

    @property
    def complete(self) -> bool:
        """True once a whole JSON value has been read."""
        return self._complete

    @property
    def value(self) -> Any:
        """The current best-effort value (the same object, updated in place)."""
        if self._dirty:
            self._set_open_string()
        return self._root

    def feed(self, text: str) -> None:
        """Add the next piece of JSON text."""
        if self._error is not None:
            raise self._error
        if self._pending:
            text = self._pending + text
            self._pending = ""
        pos = 0
        parts = self._str_parts
        if parts is not None:
            if '"' not in text and "\\" not in text:  # the common case: more string body
                parts.append(text)
                self._dirty = not self._str_key
                return
            pos = self._continue_string(text, 0)
            if pos < 0:
                return
        try:
            self._tokens(text, pos)
        except PartialJSONError as exc:
            self._error = exc
            raise

    # -- strings -------------------------------------------------------------------

    def _continue_string(self, text: str, pos: int) -> int:
        """Append to the open string; return where it closed (after the quote) or -1."""
        parts = self._str_parts
        assert parts is not None
        end = _STR_BODY.match(text, pos).end()  # type: ignore[union-attr]
        parts.append(text[pos:end])
        if end < len(text) and text[end] == '"':
            self._close_string()
            return end + 1
        self._pending = text[end:]  # a trailing backslash waits for its partner
        self._dirty = not self._str_key
        return -1

    def _close_string(self) -> None:
        parts = self._str_parts
        assert parts is not None
        raw = "".join(parts)
        self._str_parts = None
        self._dirty = False
        value = raw if "\\" not in raw else _decode_string(raw, final=True)
        frame = self._frames[-1] if self._frames else None
        if self._str_key:
            assert frame is not None
            frame.key = value
            frame.expect = _COLON
        else:
            self._put(frame, value)

    def _set_open_string(self) -> None:
        parts = self._str_parts
        assert parts is not None
        raw = "".join(parts)  # once per read; the joined text replaces its pieces
        self._str_parts = [raw]
        self._dirty = False
        value = raw if "\\" not in raw else _decode_string(raw, final=False)
        frames = self._frames
        if not frames:
            self._root = value
            return
        frame = frames[-1]
        if frame.is_object:
            frame.container[frame.key] = value  # type: ignore[index,call-overload,unused-ignore]
        else:
            frame.container[-1] = value  # type: ignore[index,call-overload,unused-ignore]

    def _put(self, frame: _Frame | None, value: str) -> None:
        """Store the open (or just closed) value string in the slot reserved for it."""
        if frame is None:
            self._root = value
            self._complete = self._str_parts is None
        elif frame.is_object:
            frame.container[frame.key] = value  # type: ignore[index,call-overload,unused-ignore]
        else:
            frame.container[-1] = value  # type: ignore[index,call-overload,unused-ignore]

    # -- tokens --------------------------------------------------------------------

    def _tokens(self, text: str, pos: int) -> None:
        # One regular-expression match per token; the frequent tokens (a string, a
        # comma or colon, a number going into an open container) are handled inline.
        n = len(text)
        match = _TOKEN.match
        frames = self._frames
        while pos < n:
            m = match(text, pos)
            kind = m.lastgroup if m is not None else None
            if kind is None or (kind == "num" and (m.end() == n or text[m.end()] in _NUM_MORE)):  # type: ignore[union-attr]
                self._hold_or_fail(text, pos)  # a number may go on in the next delta
                return
            assert m is not None
            pos = m.end()
            frame = frames[-1] if frames else None
            if kind == "punct":
                char = text[pos - 1]
                if frame is not None and char == "," and frame.expect == _COMMA:
                    frame.expect = _KEY if frame.is_object else _VALUE
                elif frame is not None and char == ":" and frame.expect == _COLON:
                    frame.expect = _VALUE
                else:
                    self._punct(frame, char)
                continue
            if kind == "str":
                raw = text[m.start(kind) + 1 : pos - 1]
                value: Any = raw if "\\" not in raw else _decode_string(raw, final=True)
                if frame is not None and frame.expect == _KEY:
                    frame.key = value
                    frame.expect = _COLON
                    continue
            elif kind == "open":
                self._open_string(frame)
                pos = self._continue_string(text, pos)
                if pos < 0:
                    return
                continue
            elif kind == "num":
                num = m.group(kind)
                value = float(num) if ("." in num or "e" in num or "E" in num) else int(num)
            else:
                value = _LITERALS[m.group(kind)]
            if frame is not None and frame.expect == _VALUE:
                if frame.is_object:
                    frame.container[frame.key] = value  # type: ignore[index,call-overload,unused-ignore]
                else:
                    frame.container.append(value)  # type: ignore[union-attr]
                frame.expect = _COMMA
            else:
                self._value(frame, value)

    def _hold_or_fail(self, text: str, pos: int) -> None:
        rest = text[pos:]
        if not rest.strip(" \t\n\r"):
            return
        if _MAYBE_PARTIAL.match(rest):
            self._pending = rest.lstrip(" \t\n\r")
            return
        raise PartialJSONError(f"not JSON: unexpected {rest[:20]!r}", hint="")

    def _open_string(self, frame: _Frame | None) -> None:
        self._str_key = frame is not None and frame.expect == _KEY
        self._str_parts = []
        if not self._str_key:
            self._value(frame, "")  # reserve the slot so the partial string shows where it belongs

    def _punct(self, frame: _Frame | None, char: str) -> None:
        if char in "{[":
            container: dict[str, Any] | list[Any] = {} if char == "{" else []
            self._value(frame, container)
            self._frames.append(_Frame(container))
            return
        if frame is None:
            raise PartialJSONError(f"unexpected {char!r} outside an object or array")
        expect = frame.expect
        if char == "," and expect == _COMMA:
            frame.expect = _KEY if frame.is_object else _VALUE
        elif char == ":" and expect == _COLON:
            frame.expect = _VALUE
        elif char in "}]":
            empty_ok = not frame.container and expect == (_KEY if frame.is_object else _VALUE)
            if (char == "}") != frame.is_object or not (expect == _COMMA or empty_ok):
                raise PartialJSONError(f"unexpected {char!r}")
            self._frames.pop()
            if not self._frames:
                self._complete = True
        else:
            raise PartialJSONError(
                f"unexpected {char!r} where a {_EXPECT_NAMES[expect]} was expected"
            )

    def _value(self, frame: _Frame | None, value: Any) -> None:
        if frame is None:
            if self._complete:
                raise PartialJSONError("extra data after a complete JSON value")
            self._root = value
            # A scalar at the top level is complete at once, unless it is a string still open.
            self._complete = not isinstance(value, (dict, list)) and self._str_parts is None
            return
        if frame.expect != _VALUE:
            raise PartialJSONError(f"a value where a {_EXPECT_NAMES[frame.expect]} was expected")
        if frame.is_object:
            frame.container[frame.key] = value  # type: ignore[index,call-overload,unused-ignore]
        else:
            frame.container.append(value)  # type: ignore[union-attr]
        frame.expect = _COMMA


def _decode_string(raw: str, *, final: bool) -> str:
    """Decode the body of a JSON string literal (without its quotes)."""
    try:
        return _scanstring(raw + '"', 0)[0]  # type: ignore[no-any-return]
    except ValueError:
        if final:
            raise PartialJSONError(f"invalid escape in string {raw[:40]!r}") from None
    # An unfinished escape at the end (e.g. "\\u00"): show the text before it.
    cut = raw.rfind("\\")
    return _decode_string(raw[:cut], final=False) if cut >= 0 else raw
