"""Incremental JSON scanning, linear in the total input.

Two tools, which skip string bodies in C (``str.find`` for the closing quote, or a
regular expression that walks a string with escapes) instead of a Python loop per
character:

* ``ClosureScanner`` tracks only nesting depth and string state. The assembler feeds it
  a call's argument fragments and learns the moment the top-level object closes, which
  is when a call can start executing. It never re-reads text it has seen. The
  text-marker formats (``toolwire.formats``) use the same scanner, with
  ``any_value=True`` and a start offset, to find where arguments end inside a buffer
  that holds the rest of the model output too.
* ``PartialJSON`` builds the value as it arrives, for streaming UIs: ``.value`` is one
  object updated in place, readable after any delta, with an unfinished string showing
  its partial content. Deltas hold a few characters each, so it is written for a low
  cost per delta: punctuation is read one character at a time in Python (cheaper than a
  regular-expression call for a character or two), string bodies with ``str.find``,
  numbers with json's own scanner.

Both process each character a constant number of times (``PartialJSON`` reads again
only what it held back at the end of a delta: a number, a literal or an escape cut in
two), so cost grows linearly with the text, where re-parsing the buffer on every delta
(what most partial parsers do) grows quadratically.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any, Final

from ..errors import PartialJSONError

# The C string decoder behind json.loads: decodes one string body in one call.
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]

__all__ = ["ClosureScanner", "PartialJSON"]

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

# How ``ClosureScanner.closes`` skips strings, measured per build (instructions for the
# closing-brace pieces of a 2 KB call with characters outside the BMP): compiled, one
# regular expression that removes whole strings costs about 240,000 and two ``str.find``
# per string about 100,000; interpreted, the regular expression costs 300,000 and the
# finds, each a method call of the interpreter, 530,000. Decided once at import.
_FIND_STRINGS: Final = not (__file__ or "").endswith(".py")  # compiled: a .so

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
        skips strings in C (``str.find``, or one regular expression in the pure build:
        see ``_FIND_STRINGS``) and counts the brackets between them with ``str.count``:
        the value has closed when the depth is back to zero.
        Unlike ``feed`` it does not say where the value closed, and text that closes
        and reopens (``{}{``) counts as open; either way the arguments are parsed whole
        once they close, and such text is reported as invalid JSON then.
        """
        state = self._state
        pos = 0
        if state != _NESTED:
            if state != _FRESH or self._any:
                return self.feed(text) >= 0
            # The first piece (often long: the assembler scans only at a closing brace)
            # goes to the bracket count below too, not to ``feed``'s token walk.
            pos = _LEADING_SPACE.match(text).end()  # type: ignore[union-attr]  # always matches
            if pos == len(text):
                return False
            if text[pos] not in "{[":
                self._state = _GAVE_UP
                return False
            self._state = _NESTED
        elif self._in_string:
            pos = self._string_tail(text, 0)
            if pos < 0:
                return False
        # The text between strings (punctuation, numbers), counted in one piece in C.
        if _FIND_STRINGS:
            between = self._between_strings(text, pos)
        else:
            between = self._between_strings_re(text[pos:] if pos else text)
        depth = (
            self._depth
            + between.count("{")
            + between.count("[")
            - between.count("}")
            - between.count("]")
        )
        self._depth = depth
        if depth <= 0:
            self._state = _CLOSED
            return True
        return False

    def _between_strings(self, text: str, pos: int) -> str:
        """The text of ``text[pos:]`` outside strings (``pos`` is outside one), up to a
        string left open at the end, whose state is kept for the next piece."""
        gaps: list[str] = []
        while True:
            quote = text.find('"', pos)
            if quote < 0:
                gaps.append(text[pos:])
                break
            gaps.append(text[pos:quote])
            close = text.find('"', quote + 1)
            if close > 0 and text[close - 1] != "\\":  # the common string: no escape at its end
                pos = close + 1
                continue
            self._in_string = True
            pos = self._string_tail(text, quote + 1)
            if pos < 0:  # the string runs past this text
                break
        return "".join(gaps)

    def _between_strings_re(self, text: str) -> str:
        """``_between_strings(text, 0)`` with one regular expression (the pure build)."""
        outside = _WHOLE_STRING.sub("", text)
        quote = outside.find('"')  # an unterminated string runs to the end of the text
        if quote < 0:
            return outside
        self._in_string = True
        self._string_tail(text, len(text) - len(outside) + quote + 1)  # notes a trailing escape
        return outside[:quote]

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
        """Continue an open string from ``pos``; return the offset after it closes, or -1.

        ``str.find`` for each quote (in C, where a regular expression for the string
        body costs tens of instructions a character); a quote after an odd run of
        backslashes is escaped and the search goes on after it.
        """
        if self._escape:
            if pos >= len(text):
                return -1
            pos += 1
            self._escape = False
        while True:
            quote = text.find('"', pos)
            if quote < 0:
                # A lone backslash ends this piece: its partner comes first in the next.
                self._escape = _odd_backslashes(text, pos, len(text))
                return -1
            if quote == pos or text[quote - 1] != "\\" or not _odd_backslashes(text, pos, quote):
                self._in_string = False
                return quote + 1
            pos = quote + 1  # an escaped quote: the string goes on


def _odd_backslashes(text: str, start: int, stop: int) -> bool:
    """True when ``text[start:stop]`` ends in an odd run of backslashes (an escape that
    takes the character at ``stop``)."""
    pos = stop
    while pos > start and text[pos - 1] == "\\":
        pos -= 1
    return (stop - pos) % 2 == 1


def _not_json(name: str) -> Any:
    raise PartialJSONError(f"not JSON: {name}", hint="")


# json's own scanner (in C where available) reads a number in one call, cheaper than a
# regular expression and int() or float(): ``(value, offset after it)``. PartialJSON
# calls it where a number starts ("-" or a digit), so it never parses anything else;
# NaN and -Infinity, which are not JSON, are rejected through ``parse_constant``.
_scan_number: Callable[[str, int], tuple[Any, int]]
_scan_number = json.JSONDecoder(parse_constant=_not_json).scan_once  # type: ignore[attr-defined]
# What may follow a number. A number with anything else after it may still go on in the
# next delta ("1." may be "1.5"), if it is the start of a number to the end of the text.
_AFTER_NUMBER = " \t\n\r,]}"
_NUMBER_START = re.compile(r"-?[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]*)?\Z")
_WORDS: dict[str, tuple[str, Any]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}
# An open string shorter than this is stored in its slot on every delta; a longer one only
# when ``value`` is read, so that feeding stays linear however long a string grows.
_STORE_AT_ONCE_BELOW = 1024

# What the innermost open container (or the top level) expects next: one int, which
# ``PartialJSON.feed`` keeps in a local.
_KEY = 0  # an object wants a key, or "}" while it is empty
_OBJ_VALUE = 1  # an object has a key and its colon and wants the value
_ARR_VALUE = 2  # an array wants a value, or "]" while it is empty
_COLON = 3  # an object has a key and wants ":"
_TOP = 4  # nothing read yet: a value starts the document
_DONE = 5  # the document is complete: only whitespace may follow
_OBJ_COMMA = 6  # after a value in an object: "," or "}"
_ARR_COMMA = 7  # after a value in an array: "," or "]"
_EXPECTED = (
    "a key or '}'",
    "a value",
    "a value or ']'",
    "':'",
    "a value",
    "nothing (the value is complete)",
    "',' or '}'",
    "',' or ']'",
)


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
    value starts; an escape once it is whole (and the first half of a surrogate pair
    with its second half). Malformed input raises ``PartialJSONError`` and the parser
    stays failed. (Control characters in strings are let through, where ``json.loads``
    rejects them by default.)

    Deltas are short, a few characters each from most models, so what counts is the
    cost per delta (see ``feed``). The common delta, more characters of an open string,
    costs two substring tests, a concatenation and a store. A string longer than
    ``_STORE_AT_ONCE_BELOW`` is instead joined when ``value`` is read, so feeding stays
    linear however long it grows. Text that may still grow (a number or literal at the
    end of a delta, an escape cut in two) is held back and read again with the next
    delta.
    """

    __slots__ = (
        "_complete",
        "_container",
        "_dirty",
        "_error",
        "_expect",
        "_held",
        "_key",
        "_pending",
        "_root",
        "_stack",
        "_str",
        "_str_key",
        "_str_more",
        "_str_slot",
        "_str_target",
    )

    def __init__(self) -> None:
        self._root: Any = None
        self._stack: list[Any] = []  # the open containers, outermost first
        self._container: Any = None  # the innermost open container (``_stack[-1]``)
        self._expect = _TOP
        self._key = ""  # the innermost object's key whose value is expected or open
        self._pending = ""  # text held back: a possibly unfinished number, literal or escape
        self._held: list[str] = []  # digits that continue a held-back number, not yet joined
        # The string now open (None: none is), decoded. A long one holds the text up to
        # the last read of ``value``; what came since is in ``_str_more``.
        self._str: str | None = None
        self._str_more: list[str] = []
        self._str_key = False  # the open string is an object key
        # Where the open value string is shown: its container (None for a key or the
        # root) and its key there, or -1 (the array's last item).
        self._str_target: Any = None
        self._str_slot: Any = None
        self._dirty = False  # ``_str_more`` holds text that ``value`` does not show yet
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
            self._show_long_string()
        return self._root

    def feed(self, text: str) -> None:  # noqa: PLR0912, PLR0915 — one function per delta on purpose (ARCHITECTURE: PartialJSON)
        """Add the next piece of JSON text."""
        # Written for a low cost per delta, as measured (bench/bench_partial_json.py):
        # - Everything a usual delta needs is in this one function; a Python call costs
        #   as much as reading several characters. Rare paths (errors, escapes, strings
        #   that open, the top level) are calls.
        # - Outside strings the text is read one character at a time, with the tests in
        #   order of frequency. A regular expression that reads a whole step at once
        #   loses: its call alone costs as much as a few characters read here, and a
        #   delta holds only a few.
        # - ``expect`` changes with almost every character, so it is a local, stored
        #   back once; the rest of the state is used about once per delta and stays on
        #   ``self``.
        if self._pending:
            if text.isdigit() and text.isascii() and self._pending[0] in "-0123456789":
                # More digits of a held-back number: keep them, read the number once when
                # it ends (re-reading it per delta was quadratic in its length).
                self._held.append(text)
                return
            if self._held:
                self._held.append(text)
                text = self._pending + "".join(self._held)
                self._held.clear()
            else:
                text = self._pending + text
            self._pending = ""
        string = self._str
        if string is not None and '"' not in text and "\\" not in text:
            # The common delta: more of an open string (``_add_to_string`` for a piece
            # without escapes, written out: one Python call less per delta). A short one
            # is stored in its slot at once: a copy costs less than joining pieces on a read.
            if len(string) < _STORE_AT_ONCE_BELOW:
                string += text
                self._str = string
                if self._str_target is not None:
                    self._str_target[self._str_slot] = string
                elif not self._str_key:
                    self._root = string
            else:
                self._str_more.append(text)
                self._dirty = not self._str_key
            return
        if self._error is not None:  # a failed parser has no open string: it comes here
            raise self._error
        try:
            n = len(text)
            pos = 0
            expect = self._expect  # a local: it changes with almost every character
            if string is not None:  # the open string ends in this delta, or has an escape
                if "\\" in text:
                    pos = _STR_BODY.match(text).end()  # type: ignore[union-attr]  # always matches
                    if pos == n or text[pos] != '"':
                        self._add_to_string(text[:pos], text[pos:])
                        return
                    piece = _decode_string(text[:pos])
                else:
                    pos = text.find('"')
                    piece = text[:pos]
                pos += 1
                if self._str_more:
                    string += "".join(self._str_more)
                    self._str_more.clear()
                    self._dirty = False
                string += piece
                self._str = None
                if self._str_key:
                    self._key = string
                    expect = _COLON
                elif self._str_target is not None:
                    self._str_target[self._str_slot] = string
                else:
                    self._root = string
                    self._complete = True
            while pos < n:
                char = text[pos]
                if char == ",":
                    if expect == _OBJ_COMMA:
                        expect = _KEY
                    elif expect == _ARR_COMMA:
                        expect = _ARR_VALUE
                    else:
                        raise _unexpected(text, pos, expect)
                    pos += 1
                    if pos < n and text[pos] == " ":  # ", " in one step
                        pos += 1
                    continue
                if char == '"':
                    if "\\" in text:
                        end = _STR_BODY.match(text, pos + 1).end()  # type: ignore[union-attr]
                        if end == n or text[end] != '"':  # the string runs past this delta
                            piece, self._pending = _decode_open(text[pos + 1 : end], text[end:])
                            self._open_string(piece, expect)
                            return
                        value: Any = _decode_string(text[pos + 1 : end])
                    else:
                        end = text.find('"', pos + 1)
                        if end < 0:  # the string runs past this delta
                            self._open_string(text[pos + 1 :], expect)
                            return
                        value = text[pos + 1 : end]
                    pos = end + 1
                    if expect == _KEY:
                        self._key = value
                        expect = _COLON
                        continue
                elif char in "-0123456789":
                    try:
                        value, end = _scan_number(text, pos)
                    except StopIteration:  # "-" and no digit yet
                        end = pos
                    except ValueError:  # more digits than int() reads (sys.get_int_max_str_digits)
                        raise _too_long_number(text, pos) from None
                    if end == n or text[end] not in _AFTER_NUMBER:
                        # It may go on in the next delta ("12" may be "123", "1." "1.5").
                        if end < n and _NUMBER_START.match(text, pos) is None:
                            raise _bad_number(text, pos, end, expect)
                        self._pending = text[pos:]
                        break
                    pos = end
                elif char == ":":
                    if expect != _COLON:
                        raise _unexpected(text, pos, expect)
                    expect = _OBJ_VALUE
                    pos += 1
                    if pos < n and text[pos] == " ":  # ": " in one step
                        pos += 1
                    continue
                elif char in _WORDS:
                    word, value = _WORDS[char]
                    if not text.startswith(word, pos):
                        if not word.startswith(text[pos:]):
                            raise _unexpected(text, pos, expect)
                        self._pending = text[pos:]  # the rest of the word is in the next delta
                        break
                    pos += len(word)
                elif char in "]}":
                    container = self._container
                    if char == "}":
                        ok = expect == _OBJ_COMMA or (expect == _KEY and not container)
                    else:
                        ok = expect == _ARR_COMMA or (expect == _ARR_VALUE and not container)
                    if not ok:
                        raise _unexpected(text, pos, expect)
                    stack = self._stack
                    stack.pop()
                    if stack:
                        container = self._container = stack[-1]
                        expect = _OBJ_COMMA if container.__class__ is dict else _ARR_COMMA
                    else:
                        self._container = None
                        expect = _DONE
                        self._complete = True
                    pos += 1
                    continue
                elif char in "[{":
                    value = {} if char == "{" else []
                    if expect == _OBJ_VALUE:
                        self._container[self._key] = value
                    elif expect == _ARR_VALUE:
                        self._container.append(value)
                    else:
                        self._root_value(expect, value)
                    self._stack.append(value)
                    self._container = value
                    expect = _KEY if char == "{" else _ARR_VALUE
                    pos += 1
                    continue
                elif char in " \n\r\t":
                    pos += 1
                    continue
                else:
                    raise _unexpected(text, pos, expect)
                # A whole scalar: store it where the container expects it.
                if expect == _OBJ_VALUE:
                    self._container[self._key] = value
                    expect = _OBJ_COMMA
                elif expect == _ARR_VALUE:
                    self._container.append(value)
                    expect = _ARR_COMMA
                else:
                    expect = self._root_value(expect, value)
            self._expect = expect
        except PartialJSONError as exc:
            self._error = exc
            self._str = None  # so that every later feed comes to the check above
            raise

    def _root_value(self, expect: int, value: Any) -> int:
        """A value outside any container: the document itself, or an error."""
        if expect != _TOP:
            raise _unexpected(json.dumps(value), 0, expect)
        self._root = value
        self._complete = value.__class__ is not dict and value.__class__ is not list
        return _DONE

    # -- strings that span deltas ------------------------------------------------

    def _open_string(self, string: str, expect: int) -> None:
        """A string starts, ``string`` so far, and runs past this delta."""
        self._str = string
        self._str_key = expect == _KEY
        if expect == _OBJ_VALUE:
            self._container[self._key] = string  # the partial string shows in place
            self._str_target, self._str_slot = self._container, self._key
            expect = _OBJ_COMMA
        elif expect == _ARR_VALUE:
            self._container.append(string)
            self._str_target, self._str_slot = self._container, -1
            expect = _ARR_COMMA
        elif expect == _KEY:
            self._str_target = None
        else:
            expect = self._root_value(expect, string)
            self._complete = False  # until the string closes
            self._str_target = None
        self._expect = expect

    def _add_to_string(self, piece: str, tail: str) -> None:
        """Add the raw ``piece`` to the open string; hold back ``tail`` (a lone backslash)."""
        piece, self._pending = _decode_open(piece, tail)
        string = self._str
        assert string is not None
        if len(string) < _STORE_AT_ONCE_BELOW:  # as in ``feed``
            string += piece
            self._str = string
            if self._str_target is not None:
                self._str_target[self._str_slot] = string
            elif not self._str_key:
                self._root = string
        else:
            self._str_more.append(piece)
            self._dirty = not self._str_key

    def _show_long_string(self) -> None:
        """Store the open string's text so far: a long one, when ``value`` is read."""
        assert self._str is not None
        string = self._str + "".join(self._str_more)
        self._str = string
        self._str_more.clear()
        self._dirty = False
        if self._str_target is not None:
            self._str_target[self._str_slot] = string
        else:
            self._root = string


def _unexpected(text: str, pos: int, expect: int) -> PartialJSONError:
    what = repr(text[pos : pos + 20])
    if expect == _DONE:
        return PartialJSONError(f"extra data after a complete JSON value: {what}", hint="")
    return PartialJSONError(f"not JSON: {what} where {_EXPECTED[expect]} was expected", hint="")


def _too_long_number(text: str, pos: int) -> PartialJSONError:
    digits = sys.get_int_max_str_digits()
    return PartialJSONError(
        f"a number at {text[pos : pos + 20]!r}... has more than {digits} digits, which Python "
        "does not read",
        hint="write the number as a string, or with fewer digits",
    )


def _bad_number(text: str, start: int, end: int, expect: int) -> PartialJSONError:
    if end == start:  # no number at all
        return _unexpected(text, start, expect)
    # A number, then something that cannot follow it: say what was expected there.
    after = {_OBJ_VALUE: _OBJ_COMMA, _ARR_VALUE: _ARR_COMMA, _TOP: _DONE}.get(expect, expect)
    return _unexpected(text, end, after)


def _decode_string(body: str) -> str:
    """Decode the body of a JSON string literal (without its quotes).

    Control characters are let through, as they are in strings without escapes (which
    are never decoded).
    """
    try:
        return _scanstring(body + '"', 0, False)[0]  # type: ignore[no-any-return]
    except ValueError:
        raise PartialJSONError(f"invalid escape in string {body[:40]!r}", hint="") from None


def _decode_open(body: str, tail: str) -> tuple[str, str]:
    """Decode the start of an open string: ``(text, tail to read again with the next delta)``.

    ``body`` holds whole escapes, except perhaps a ``\\u`` escape cut off at its end: that,
    and a whole ``\\uD83D`` (the first half of a surrogate pair, whose second half may
    come next), go to the front of ``tail``.
    """
    if "\\" not in body:
        return body, tail
    try:
        text = _scanstring(body + '"', 0, False)[0]
    except ValueError as exc:
        cut = exc.pos - 1  # type: ignore[attr-defined]  # the backslash of a bad \u escape
        if not (body.startswith("\\u", cut) and len(body) - cut < 6):
            raise PartialJSONError(f"invalid escape in string {body[:40]!r}", hint="") from None
        return _decode_open(body[:cut], body[cut:] + tail)
    if text and 0xD800 <= ord(text[-1]) <= 0xDBFF and body.startswith("\\u", len(body) - 6):
        return text[:-1], body[-6:] + tail
    return text, tail
