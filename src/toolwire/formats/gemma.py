"""Gemma 4 ``<|tool_call>call:NAME{key:value}<tool_call|>`` and FunctionGemma.

Sources: the official Gemma 4 chat template (Hugging Face ``google/gemma-4-*-it``
``chat_template.jinja``; copies in llama.cpp ``models/templates/gemma4.jinja`` and
``google-gemma-4-31B-it-interleaved.jinja``); the FunctionGemma template
(``google/functiongemma-270m-it``); vLLM ``tests/tool_parsers/test_gemma4_tool_parser.py``,
``test_functiongemma_tool_parser.py`` and ``vllm/reasoning/gemma4_reasoning_parser.py``.

Gemma 3 had no tool tokens (its tool use is prompt-defined, parsed by the ``llama``
family's pythonic variant). Gemma 4 is the current Gemma generation with native
tokens, and the default variant here:

* a call is ``<|tool_call>call:NAME{ARGS}<tool_call|>``; several calls follow each other;
  after its calls the model stops with ``<|tool_response>``;
* ``ARGS`` is Gemma's own object syntax, not JSON: ``key:value`` pairs separated by
  ``,``, keys bare, strings wrapped in the ``<|"|>`` token, numbers / ``true`` /
  ``false`` / ``null`` bare, nested ``{k:v}`` objects and ``[a,b]`` arrays;
* reasoning is ``<|channel>thought\\n ... <channel|>`` (the ``thought`` label is
  stripped); with thinking off the template pre-fills ``<|channel>thought\\n<channel|>``
  in the generation prompt; a turn ends with ``<turn|>``.

``functiongemma`` (FunctionGemma 270M) writes the same syntax with other tokens:
``<start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>``, no reasoning.

Strategy: one parser, a marker table per variant. Content and reasoning stream with
marker hold-back; inside a call the argument syntax is translated to JSON as it
arrives (a small stack machine: objects, arrays, strings, bare scalars), so arguments
stream incrementally as JSON text (``{"key": value, ...}``, ``json.dumps`` spacing).
Delimited strings stream character by character; a bare scalar is emitted when its
``,``/``}``/``]`` arrives. Typing: a bare scalar of a top-level argument is typed by the
tool's JSON Schema (:func:`~toolwire.formats.base.coerce_value`: ``3`` stays the string
``"3"`` when the schema says string); without a schema a bare scalar that is a JSON
literal is that literal (the template writes only non-strings bare), anything else a
string. A delimited string is a string, unless the schema of that argument does not
allow strings (FunctionGemma also delimits numbers): then it is typed by the schema.
Marker text inside a delimited string is part of the value.

Decisions:

* **Truncated output** (ends inside a call): :class:`~toolwire.formats.base.FormatError`
  at ``close()``; a truncated ``thought`` label is dropped.
* **Malformed calls** (no ``{`` after the name, an empty name, a key without ``:``,
  unbalanced brackets, text between the closing ``}`` and ``<tool_call|>``): FormatError.
  A missing ``<tool_call|>`` before the next call or the end of output is tolerated
  (the arguments had closed).
* Turn-structure tokens (``<turn|>``, ``<|tool_response>``, ...) are dropped; the text
  around them stays content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import Format, FormatStream, state_steps
from .coerce import coerce_value, json_string, json_text, schema_types
from .markers import marker_set, opens_reasoning, skip_whitespace

__all__ = ["GemmaFormat", "GemmaMarkers", "GemmaStream", "make"]


@dataclass(frozen=True, slots=True)
class GemmaMarkers:
    """The tokens one Gemma variant uses.

    Attributes:
        call_open: Starts a call.
        call_close: Ends a call.
        string: Delimits a string value (both sides).
        think_open: Starts reasoning (``None``: the variant has none).
        think_close: Ends reasoning.
        think_label: The channel label stripped from the start of reasoning.
        dropped: Turn-structure tokens that carry no text.
    """

    call_open: str
    call_close: str
    string: str
    think_open: str | None
    think_close: str | None
    think_label: str
    dropped: tuple[str, ...]

    def all(self) -> tuple[str, ...]:
        """Every marker of the variant."""
        think = tuple(m for m in (self.think_open, self.think_close) if m)
        return (self.call_open, self.call_close, self.string, *think, *self.dropped)


GEMMA4 = GemmaMarkers(
    call_open="<|tool_call>",
    call_close="<tool_call|>",
    string='<|"|>',
    think_open="<|channel>",
    think_close="<channel|>",
    think_label="thought\n",
    dropped=("<turn|>", "<|turn>", "<|tool_response>", "<tool_response|>"),
)
FUNCTIONGEMMA = GemmaMarkers(
    call_open="<start_function_call>",
    call_close="<end_function_call>",
    string="<escape>",
    think_open=None,
    think_close=None,
    think_label="",
    dropped=(
        "<end_of_turn>",
        "<start_of_turn>",
        "<start_function_response>",
        "<end_function_response>",
    ),
)
_BY_VARIANT = {"gemma4": GEMMA4, "functiongemma": FUNCTIONGEMMA}
_SPACE = " \t\r\n"
_BARE_END = re.compile(r"[,}\]]")
_KEY_END = re.compile(r"[:,}]")
_CALL_PREFIX = "call:"


class _Need(Exception):
    """More input is needed before the converter can go on (internal control flow)."""


class _ArgsToJson:
    """Translates Gemma argument syntax to JSON text, fed in pieces.

    ``feed`` consumes what it can from ``text[pos:]`` and returns ``(json_piece, pos,
    done)``; ``done`` is set once the top-level object closed, ``pos`` then points after
    its ``}``.
    """

    def __init__(self, stream: GemmaStream, name: str) -> None:
        self._stream = stream
        self._name = name
        self._string = stream.markers.string
        self._stack: list[str] = []  # "obj" / "arr"
        self._state = "start"
        self._pending_comma = False
        self._acc: list[str] = []  # a bare scalar or key being collected
        self._key = ""
        self._buffer_string = False  # a delimited string typed by schema at its end
        self._out: list[str] = []

    # ---- driver

    def feed(self, text: str, pos: int) -> tuple[str, int, bool]:
        self._out = []
        # A table of states by name, not the stream's bound-method state: this
        # converter changes state every few characters, and storing a bound method
        # allocates one. Counted (bench/README.md, "Parser style"): the bound-method
        # version parses FunctionGemma with 5% more instructions.
        steps = state_steps(type(self))
        try:
            while pos < len(text) and self._state != "done":
                pos = steps[self._state](self, text, pos)
        except _Need:
            pass
        return "".join(self._out), pos, self._state == "done"

    def _fail(self, message: str) -> Exception:
        return self._stream.call_error(message)

    # ---- helpers

    def _skip(self, text: str, pos: int) -> int:
        while pos < len(text) and text[pos] in _SPACE:
            pos += 1
        if pos >= len(text):
            raise _Need
        return pos

    def _starts_string(self, text: str, pos: int) -> bool:
        rest = text[pos : pos + len(self._string)]
        if rest == self._string:
            return True
        if self._string.startswith(rest):
            raise _Need  # could still become the delimiter
        return False

    def _comma(self) -> None:
        if self._pending_comma:
            self._out.append(", ")
            self._pending_comma = False

    def _schema(self) -> dict[str, Any] | None:
        if len(self._stack) != 1 or self._stack[0] != "obj":
            return None
        return self._stream.format.tools.property_schema(self._name, self._key)

    # ---- states

    def _on_start(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        if text[pos] != "{":
            raise self._fail(f"arguments must start with '{{', got {text[pos]!r}")
        self._stack.append("obj")
        self._out.append("{")
        self._state = "key_or_end"
        return pos + 1

    def _on_key_or_end(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        if text[pos] == "}":
            return self._close_container(pos, "}")
        if self._starts_string(text, pos):
            self._acc = []
            self._state = "key_string"
            return pos + len(self._string)
        self._acc = []
        self._state = "key_bare"
        return pos

    def _on_key_bare(self, text: str, pos: int) -> int:
        match = _KEY_END.search(text, pos)
        if match is None:
            self._acc.append(text[pos:])
            return len(text)
        if match.group() != ":":
            raise self._fail(
                f"argument {''.join(self._acc) + text[pos : match.start()]!r} has no ':'"
            )
        self._acc.append(text[pos : match.start()])
        self._emit_key("".join(self._acc).strip())
        return match.end()

    def _on_key_string(self, text: str, pos: int) -> int:
        end = text.find(self._string, pos)
        if end < 0:
            cut = _safe_end(text, pos, self._string)
            self._acc.append(text[pos:cut])
            return cut
        self._acc.append(text[pos:end])
        self._key = "".join(self._acc)
        self._state = "colon"
        return end + len(self._string)

    def _on_colon(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        if text[pos] != ":":
            raise self._fail(f"argument {self._key!r} has no ':'")
        self._emit_key(self._key)
        return pos + 1

    def _emit_key(self, key: str) -> None:
        if not key:
            raise self._fail("an argument has an empty name")
        self._key = key
        self._comma()
        self._out.append(json_string(key) + ": ")
        self._state = "value"

    def _on_value(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        char = text[pos]
        if char in "{[":
            self._comma()
            self._stack.append("obj" if char == "{" else "arr")
            self._out.append(char)
            self._state = "key_or_end" if char == "{" else "element_or_end"
            return pos + 1
        if self._starts_string(text, pos):
            self._comma()
            self._open_string()
            return pos + len(self._string)
        self._acc = []
        self._state = "bare"
        return pos

    def _on_element_or_end(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        if text[pos] == "]":
            return self._close_container(pos, "]")
        self._state = "value"
        return pos

    def _open_string(self) -> None:
        types = schema_types(self._schema())
        self._buffer_string = bool(types) and "string" not in types
        self._acc = []
        if not self._buffer_string:
            self._out.append('"')
        self._state = "string"

    def _on_string(self, text: str, pos: int) -> int:
        end = text.find(self._string, pos)
        if end < 0:
            cut = _safe_end(text, pos, self._string)
            self._string_piece(text[pos:cut])
            return cut
        self._string_piece(text[pos:end])
        if self._buffer_string:
            value = coerce_value("".join(self._acc), self._schema())
            self._out.append(json_text(value))
        else:
            self._out.append('"')
        self._state = "after_value"
        return end + len(self._string)

    def _string_piece(self, piece: str) -> None:
        if self._buffer_string:
            self._acc.append(piece)
        elif piece:
            # The piece as a JSON string minus its quotes: the same escaping as a whole string.
            self._out.append(json_string(piece)[1:-1])

    def _on_bare(self, text: str, pos: int) -> int:
        match = _BARE_END.search(text, pos)
        if match is None:
            self._acc.append(text[pos:])
            return len(text)
        self._acc.append(text[pos : match.start()])
        self._comma()
        self._out.append(self._bare_json("".join(self._acc).strip()))
        self._state = "after_value"
        return match.start()

    def _bare_json(self, value: str) -> str:
        schema = self._schema()
        if schema_types(schema):
            return json_text(coerce_value(value, schema))
        return json_text(_literal(value))

    def _on_after_value(self, text: str, pos: int) -> int:
        pos = self._skip(text, pos)
        char = text[pos]
        top = self._stack[-1]
        if char == ",":
            self._pending_comma = True
            self._state = "key_or_end" if top == "obj" else "element_or_end"
            return pos + 1
        if (char, top) in (("}", "obj"), ("]", "arr")):
            return self._close_container(pos, char)
        if top == "obj" and char not in "]:":
            # FunctionGemma sometimes omits the comma between pairs; after a closed
            # value a new key is unambiguous.
            self._pending_comma = True
            self._state = "key_or_end"
            return pos
        raise self._fail(f"unexpected {char!r} after an argument value")

    def _close_container(self, pos: int, char: str) -> int:
        self._stack.pop()
        self._pending_comma = False
        self._out.append(char)
        self._state = "after_value" if self._stack else "done"
        return pos + 1


def _safe_end(text: str, pos: int, marker: str) -> int:
    """Where ``text[pos:]`` can be consumed up to, holding back a suffix that could
    still grow into ``marker``; raises :class:`_Need` when nothing can be consumed."""
    held = 0
    for k in range(min(len(marker) - 1, len(text) - pos), 0, -1):
        if marker.startswith(text[len(text) - k :]):
            held = k
            break
    if len(text) - held == pos:
        raise _Need
    return len(text) - held


def _literal(value: str) -> Any:
    """A bare scalar without a schema: the JSON literal it spells, else the text."""
    if value in ("true", "false", "null"):
        return json.loads(value)
    try:
        number = json.loads(value)
    except (ValueError, RecursionError):
        return value
    return number if isinstance(number, (int, float)) else value


class GemmaStream(FormatStream):
    """Incremental parser of one Gemma 4 / FunctionGemma output (see the module docstring).

    The unread input is ``_buf[_pos:]``: the steps move the cursor and the buffer is
    cut once per feed, so a whole output fed at once is never copied per marker
    (cutting the front off per step made parsing quadratic in the output length).
    """

    def __init__(self, fmt: GemmaFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self.markers = fmt.gemma_markers
        self._marker_set = marker_set(*self.markers.all())
        self._buf = ""
        self._pos = 0
        self._state: Callable[[], bool] = self._st_text
        self._thinking = False  # the text state reads reasoning, not content
        self._label_pending = False
        self._name: list[str] = []
        self._converter: _ArgsToJson | None = None
        self._prime(fmt.generation_prompt)

    def _prime(self, prompt: str | None) -> None:
        opener, closer = self.markers.think_open, self.markers.think_close
        if prompt is not None and opener and closer and opens_reasoning(prompt, opener, closer):
            self._thinking = True
            tail = prompt[prompt.rfind(opener) + len(opener) :]
            self._label_pending = not tail

    def call_error(self, message: str) -> Exception:
        """A FormatError about the call being parsed."""
        return self._error(message, where=f"tool call {max(self._call_count - 1, 0)}")

    # ---- FormatStream hooks

    def _feed(self, delta: str) -> None:
        self._buf += delta
        while self._pos < len(self._buf) and self._state():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _close(self) -> None:
        rest = self._take(len(self._buf))
        state = self._state
        if state == self._st_text:
            if not self._thinking:
                self._text(rest)
            elif not self._label_pending:
                self._reasoning(rest)
        elif state != self._st_after_args:
            in_args = state == self._st_args
            raise self._error(
                f"output ended inside a tool call ({'args' if in_args else 'name'}); it was "
                "probably cut off by the token limit",
                where=f"tool call {self._call_count - in_args}",
            )

    def _take(self, end: int, skip: int = 0) -> str:
        """Consume the buffer up to ``end`` (returned) and ``skip`` characters more."""
        piece = self._buf[self._pos : end]
        self._pos = end + skip
        return piece

    # ---- content and reasoning

    def _emit(self, text: str) -> None:
        if self._thinking:
            self._reasoning(text)
        else:
            self._text(text)

    def _st_text(self) -> bool:
        if self._label_pending and not self._strip_label():
            return False
        buf = self._buf
        found = self._marker_set.search(buf, self._pos)
        if found is None:
            self._emit(self._take(len(buf) - self._marker_set.holdback(buf, self._pos)))
            return False
        pos, marker = found
        self._emit(self._take(pos, len(marker)))
        self._on_marker(marker)
        return True

    def _strip_label(self) -> bool:
        """Drop the ``thought`` label at the start of reasoning; False: need more text."""
        label = self.markers.think_label
        # Slice at most len(label) characters: the buffer may hold the whole output.
        head = self._buf[self._pos : self._pos + len(label)]
        if head == label:
            self._pos += len(label)
        elif len(head) < len(label) and label.startswith(head):
            return False
        self._label_pending = False
        return True

    def _on_marker(self, marker: str) -> None:
        m = self.markers
        if marker == m.call_open:
            self._call_begins(self._at(self._buf, self._pos - len(marker)))
            self._state = self._st_name
            self._name = []
        elif marker == m.think_open:
            self._thinking = True
            self._label_pending = True
        elif marker == m.think_close:
            self._thinking = False
            self._label_pending = False
        # Turn tokens, a stray string delimiter or call close carry no text: dropped.

    # ---- calls

    def _st_name(self) -> bool:
        brace = self._buf.find("{", self._pos)
        if brace < 0:
            self._name.append(self._take(len(self._buf)))
            return False
        self._name.append(self._take(brace))
        name = "".join(self._name).strip()
        name = name[len(_CALL_PREFIX) :].strip() if name.startswith(_CALL_PREFIX) else name
        if not name or any(marker in name for marker in self._marker_set.markers):
            raise self._error(
                f"tool call name {name!r} is empty or malformed",
                where=f"tool call {self._call_count}",
            )
        self._begin_call(name)
        self._converter = _ArgsToJson(self, name)
        self._state = self._st_args
        return True

    def _st_args(self) -> bool:
        assert self._converter is not None
        piece, self._pos, done = self._converter.feed(self._buf, self._pos)
        self._arguments(piece)
        if done:
            self._state = self._st_after_args
        return done

    def _st_after_args(self) -> bool:
        buf = self._buf
        self._pos = skip_whitespace(buf, self._pos)
        if self._pos == len(buf):
            return False
        marker = self._marker_set.match(buf, self._pos)
        if marker is not None:
            self._pos += len(marker)
            self._state = self._st_text
            self._thinking = False
            closed = marker == self.markers.call_close
            self._call_ends(self._at(buf, self._pos if closed else self._pos - len(marker)))
            if not closed:
                self._on_marker(marker)  # the close was missing: tolerated
            return True
        if self._marker_set.holdback(buf, self._pos) == len(buf) - self._pos:
            return False
        found = buf[self._pos : self._pos + 20]
        raise self.call_error(f"unexpected text {found!r} after the arguments")


class GemmaFormat(Format):
    """The Gemma tool-call format (variants ``gemma4``, ``functiongemma``)."""

    family = "gemma"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.gemma_markers = _BY_VARIANT[variant]
        self.markers = self.gemma_markers.all()

    def _open_stream(self, id_prefix: str | None) -> GemmaStream:
        """Start an incremental parse of one output (the family's parser).

        Args:
            id_prefix: Prefix of generated call ids; random per stream when ``None``.
        """
        return GemmaStream(self, id_prefix=id_prefix)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> GemmaFormat:
    """Build the Gemma format (the registry's entry point).

    Args:
        variant: ``"gemma4"`` or ``"functiongemma"``.
        tools: OpenAI-style tool definitions; they type bare argument values.
        generation_prompt: The text after the last message; one that leaves
            ``<|channel>`` open starts the output in reasoning.
    """
    return GemmaFormat(variant, tools=tools, generation_prompt=generation_prompt)
