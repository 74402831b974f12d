# DeepSeek markers are written with FULLWIDTH VERTICAL LINE (U+FF5C) and LOWER ONE
# EIGHTH BLOCK (U+2581) on purpose: that is what the tokenizer emits.
# ruff: noqa: RUF001, RUF002
"""DeepSeek tool-call formats: V3 / R1 / V3.1 full-width markers and V3.2 / V4 DSML.

Strategy: a cursor over a small buffer and one method per parser state
(:class:`MarkupStream`). Each state reads up to the next marker it cares about with
:class:`~toolwire.formats.base.MarkerSet` (only a possible marker prefix is held
back), so content and arguments stream as they arrive and the cost stays linear.
The same machinery (plus :class:`ArgumentWriter`, which builds an arguments object
from key/value pieces) is shared by the ``glm`` and ``kimi`` modules.

Layouts (sources: the official chat templates as mirrored in ggml-org/llama.cpp
``models/templates/deepseek-ai-DeepSeek-V3.1.jinja`` and
``deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja``; the V3.2 / V4 reference encoders
``encoding_dsv32.py`` / ``encoding_dsv4.py`` as vendored in sgl-project/sglang
``python/sglang/srt/entrypoints/openai/``):

* ``v3`` / ``r1``: ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME``
  ``\\n```json\\n{ARGS}\\n```<｜tool▁call▁end｜>`` ... ``<｜tool▁calls▁end｜>``; R1 thinks
  in ``<think>…</think>`` (its template pre-fills ``<think>\\n``).
* ``v3.1``: ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{ARGS}<｜tool▁call▁end｜>`` (no type,
  no code fence); thinking mode pre-fills ``<think>``, chat mode ``</think>``.
* ``v3.2`` / ``v4`` (DSML): ``\\n\\n<｜DSML｜function_calls>`` (V4: ``tool_calls``) holding
  ``<｜DSML｜invoke name="NAME">`` blocks of
  ``<｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>``. A value with
  ``string="true"`` is raw text (becomes a JSON string); ``string="false"`` is JSON
  text. The ``\\n\\n`` before the block belongs to the template, as the reference
  decoder treats it, so it is not content.

Decisions (documented per the issue):

* Reasoning: ``generation_prompt`` decides whether the output starts inside
  ``<think>``; when it is ``None`` the variant's default template prompt is assumed
  (R1 always pre-fills ``<think>``; the others start outside). A ``<think>`` at the very
  start of the output (after whitespace) opens reasoning too.
* Truncation: output that ends inside a call, or inside a tool-call section before
  any call completed, raises :class:`~toolwire.formats.base.FormatError` (its
  ``partial`` holds the content parsed before). A section whose calls all completed
  but whose closing marker is missing is accepted (the calls are whole).
* Malformed calls (unexpected text where a marker must come, an arguments value that
  is not a JSON object, a bad DSML header, a duplicate parameter, invalid JSON in a
  ``string="false"`` value) raise FormatError. Text after a closed section is content.
* The end-of-sentence token ``<｜end▁of▁sentence｜>`` is dropped if a server passes it
  (it also ends a section whose closing marker is missing).
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from ..errors import CallerError
from ..wire.events import ToolCallDelta
from ..wire.jsonscan import ClosureScanner
from .base import (
    Format,
    FormatStream,
    MarkerSet,
    opens_reasoning,
    schema_types,
    value_to_json,
)

__all__ = [
    "VARIANTS",
    "ArgumentWriter",
    "DeepSeekFormat",
    "MarkupStream",
    "ThinkStream",
    "make",
]

VARIANTS: tuple[str, ...] = ("v3.1", "v3", "r1", "v3.2", "v4")

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
EOS = "<｜end▁of▁sentence｜>"
CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
# R1 sometimes writes one merged token for "section begin + call begin" (quoted in
# ggml-org/llama.cpp tests/test-chat.cpp, COMMON_CHAT_FORMAT_DEEPSEEK_R1 cases).
CALLS_MERGED = "<｜tool▁calls｜>"
DSML = "｜DSML｜"
INVOKE_OPEN = f"<{DSML}invoke"
INVOKE_CLOSE = f"</{DSML}invoke>"
PARAM_OPEN = f"<{DSML}parameter"
PARAM_CLOSE = f"</{DSML}parameter>"

# The text each variant's official template appends with add_generation_prompt=True,
# assumed when the caller passes none.
DEFAULT_GENERATION_PROMPTS: Mapping[str, str] = {
    "v3": "<｜Assistant｜>",
    "r1": "<｜Assistant｜><think>\n",
    "v3.1": "<｜Assistant｜></think>",
    "v3.2": "<｜Assistant｜></think>",
    "v4": "<｜Assistant｜></think>",
}

_SPACE = re.compile(r"\s*")
_DSML_NAME = re.compile(r'\s*name="(.*)"\s*', re.DOTALL)
_DSML_PARAM = re.compile(r'\s*name="(.*?)"\s+string="(true|false)"\s*', re.DOTALL)


# --------------------------------------------------------------------------- shared machinery


class MarkupStream(FormatStream):
    """A buffer, a cursor and a current-state method: the skeleton of a marker parser.

    Each state method consumes what it can from ``_buf[_pos:]`` and returns ``True``
    to run the (possibly new) state again, ``False`` when it needs more input. The
    buffer is compacted once per feed, so a whole output fed at once is not copied
    per marker. Subclasses set ``_state`` and implement :meth:`_finish`.
    """

    def __init__(self, fmt: Format, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._pos = 0
        self._final = False
        self._state: Callable[[], bool] = self._finished
        self._json = ClosureScanner()
        self._json_after: Callable[[], bool] = self._finished
        self._tail: list[str] = []

    # ---- driving

    def _feed(self, delta: str) -> None:
        self._buf += delta
        self._pump()

    def _close(self) -> None:
        self._final = True
        self._pump()
        self._finish()

    def _pump(self) -> None:
        while self._state():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _finished(self) -> bool:
        return False

    def _arguments(self, text: str, index: int | None = None) -> None:
        # Merge with the previous fragment of the same call, as _text does for text:
        # an object built from many small pieces then costs one event per feed.
        target = self._call_count - 1 if index is None else index
        last = self._out[-1] if self._out else None
        if text and isinstance(last, ToolCallDelta) and last.index == target:
            last.arguments += text
        else:
            super()._arguments(text, index)

    @abstractmethod
    def _finish(self) -> None:
        """At end of output: raise FormatError unless the parser is at rest."""

    # ---- reading primitives

    def _until(self, markers: MarkerSet) -> tuple[str, str | None]:
        """Consume up to (and including) the earliest marker.

        Returns:
            ``(text before it, marker)``; or, when no marker is in the buffer, the text
            that cannot start one (everything, at end of output) and ``None``.
        """
        found = markers.search(self._buf, self._pos)
        if found is not None:
            at, marker = found
            chunk = self._buf[self._pos : at]
            self._pos = at + len(marker)
            return chunk, marker
        end = len(self._buf)
        if not self._final:
            end -= markers.holdback(self._buf, self._pos)
        chunk = self._buf[self._pos : end]
        self._pos = end
        return chunk, None

    def _peek(self, literal: str) -> bool | None:
        """Consume ``literal`` if the buffer starts with it.

        Returns:
            ``True`` (consumed), ``False`` (it is not there) or ``None`` (the buffer is
            a proper prefix of it: wait for more input).
        """
        if self._buf.startswith(literal, self._pos):
            self._pos += len(literal)
            return True
        # Slice at most len(literal) characters: the buffer may hold the whole output.
        rest = self._buf[self._pos : self._pos + len(literal)]
        if not self._final and len(rest) < len(literal) and literal.startswith(rest):
            return None
        return False

    def _skip_space(self) -> bool:
        """Skip whitespace; return whether a non-space character follows."""
        match = _SPACE.match(self._buf, self._pos)
        self._pos = match.end() if match else self._pos
        return self._pos < len(self._buf)

    def _expect(self, choices: Sequence[str], what: str) -> str | None:
        """After optional whitespace, consume one of ``choices``.

        Returns:
            The literal consumed, or ``None`` when more input is needed.

        Raises:
            FormatError: Something else is there.
        """
        # The whitespace skipped here is layout, so it is consumed even while waiting:
        # a long run fed one character at a time is then scanned once.
        if not self._skip_space():
            return None
        waiting = False
        for literal in choices:
            seen = self._peek(literal)
            if seen:
                return literal
            waiting = waiting or seen is None
        if waiting:
            return None
        found = self._buf[self._pos : self._pos + 40]
        raise self._error(f"expected {what}, found {found!r}", self._where())

    def _where(self) -> str:
        return f"tool call {self.call_count - 1}" if self.call_count else "tool-call section"

    # ---- JSON arguments (V3 / V3.1 / Kimi): streamed as scanned, marker-safe

    def _start_json_arguments(self, after: Callable[[], bool]) -> None:
        self._json = ClosureScanner()
        self._json_after = after
        self._tail = []
        self._state = self._st_json_arguments

    def _st_json_arguments(self) -> bool:
        scanner = self._json
        if not scanner.started:
            if not self._skip_space():
                return False
            if self._buf[self._pos] != "{":
                raise self._error("the arguments must be a JSON object", self._where())
        end = scanner.feed(self._buf, self._pos)
        stop = len(self._buf) if end < 0 else end
        self._arguments(self._buf[self._pos : stop])
        self._pos = stop
        if end < 0:
            return False
        self._state = self._json_after
        return True

    def _read_tail(self, markers: MarkerSet, closer: str, allowed: Sequence[str]) -> bool | None:
        """Read what follows a call's JSON up to ``closer``.

        Returns:
            ``None`` while waiting, ``True`` once ``closer`` was consumed.

        Raises:
            FormatError: Another marker came first, or the text in between is not one
                of ``allowed`` (after stripping whitespace).
        """
        chunk, marker = self._until(markers)
        self._tail.append(chunk)
        if marker is None:
            return None
        tail = "".join(self._tail).strip()
        self._tail = []
        if marker != closer or tail not in allowed:
            raise self._error(f"unexpected {tail or marker!r} after the arguments", self._where())
        return True


class ThinkStream(MarkupStream):
    """A :class:`MarkupStream` whose output may open with ``<think>…</think>``.

    Leading whitespace is held until it is clear whether ``<think>`` follows (GLM-4.5
    writes ``\\n<think>``); inside reasoning only ``</think>`` is a marker.
    """

    think_open: ClassVar[str] = THINK_OPEN
    think_close: ClassVar[str] = THINK_CLOSE
    # A separator the template writes right after </think>, dropped once (GLM: "\n").
    after_think: ClassVar[str] = ""

    def __init__(self, fmt: Format, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._think_end = MarkerSet([self.think_close])
        self._state = self._st_reasoning if reasoning_open else self._st_start

    @abstractmethod
    def _st_content(self) -> bool:
        """The state outside reasoning and calls."""

    def _st_start(self) -> bool:
        mark = self._pos
        self._skip_space()
        opened = self._peek(self.think_open)
        if opened is None:
            self._pos = mark
            return False
        if opened:
            self._state = self._st_reasoning
            return True
        self._pos = mark
        self._state = self._st_content
        return True

    def _st_reasoning(self) -> bool:
        chunk, marker = self._until(self._think_end)
        self._reasoning(chunk)
        if marker is None:
            return False
        self._state = self._st_after_think
        return True

    def _st_after_think(self) -> bool:
        if self.after_think and self._peek(self.after_think) is None:
            return False
        self._state = self._st_content
        return True

    def _at_rest(self) -> bool:
        return self._state in (
            self._st_start,
            self._st_reasoning,
            self._st_after_think,
            self._st_content,
        )


class ArgumentWriter:
    """Builds one call's arguments JSON object from key/value pieces as they arrive.

    ``emit`` receives the JSON text incrementally: ``{"city": "Bei`` … ``jing"}``. A
    value is streamed as a JSON string when it is text; typed values (a JSON tag, or a
    schema that allows more than a string) are buffered until they close, then
    converted, since their type is only known from the whole text.
    """

    __slots__ = ("_emit", "_keys", "_mode", "_pieces", "_schema")

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._keys: set[str] = set()
        self._mode = ""
        self._pieces: list[str] = []
        self._schema: Mapping[str, Any] | None = None

    @property
    def empty(self) -> bool:
        """Whether no key was written yet."""
        return not self._keys

    def key(self, name: str) -> bool:
        """Start the member ``name``; return ``False`` if it was already written."""
        if name in self._keys:
            return False
        self._emit(("{" if not self._keys else ", ") + json.dumps(name, ensure_ascii=False) + ": ")
        self._keys.add(name)
        return True

    def begin_text(self) -> None:
        """The value is raw text: stream it as a JSON string."""
        self._mode = "text"
        self._emit('"')

    def begin_json(self) -> None:
        """The value is JSON text (buffered, validated when it closes)."""
        self._mode = "json"
        self._pieces = []

    def begin_typed(self, schema: Mapping[str, Any] | None) -> None:
        """The value is text typed by ``schema`` (see :func:`base.coerce_value`)."""
        types = schema_types(schema)
        if not types or types == {"string"}:
            self.begin_text()
            return
        self._mode = "typed"
        self._schema = schema
        self._pieces = []

    def piece(self, text: str) -> None:
        """More of the current value."""
        if not text:
            return
        if self._mode == "text":
            self._emit(json.dumps(text, ensure_ascii=False)[1:-1])
        else:
            self._pieces.append(text)

    def end_value(self) -> str | None:
        """Close the current value; return an error message if it is invalid."""
        mode, self._mode = self._mode, ""
        if mode == "text":
            self._emit('"')
            return None
        text = "".join(self._pieces)
        self._pieces = []
        if mode == "typed":
            self._emit(value_to_json(text, self._schema))
            return None
        return self._emit_json(text)

    def _emit_json(self, text: str) -> str | None:
        try:
            json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return f"value {text[:40]!r} is not valid JSON"
        self._emit(text.strip())
        return None

    def close(self) -> None:
        """Close the object (``{}`` when it has no member)."""
        self._emit("}" if self._keys else "{}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# --------------------------------------------------------------------------- V3 / R1 / V3.1


class _MarkerStream(ThinkStream):
    """``<｜tool▁calls▁begin｜>`` sections (V3, R1, V3.1)."""

    def __init__(self, fmt: DeepSeekFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix, reasoning_open=reasoning_open)
        self._typed = fmt.variant in ("v3", "r1")
        self._content_markers = MarkerSet([CALLS_BEGIN, CALLS_MERGED, EOS])
        self._head_markers = MarkerSet([SEP, CALL_END, CALLS_END, CALL_BEGIN])
        self._name_markers = MarkerSet(["\n", SEP, CALL_END, CALLS_END, CALL_BEGIN])
        self._tail_markers = MarkerSet([CALL_END, CALLS_END, CALL_BEGIN, SEP])
        self._head: list[str] = []
        self._section_calls = 0

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker in (CALLS_BEGIN, CALLS_MERGED):
            self._section_calls = 0
            self._head = []
            self._state = self._st_section if marker == CALLS_BEGIN else self._st_head
        return marker is not None

    def _st_section(self) -> bool:
        # The end-of-sentence token also ends a section whose closing marker is missing.
        seen = self._expect((CALL_BEGIN, CALLS_END, EOS), f"{CALL_BEGIN} or {CALLS_END}")
        if seen is None:
            return False
        self._head = []
        self._state = self._st_head if seen == CALL_BEGIN else self._st_content
        return True

    def _st_head(self) -> bool:
        # V3/R1: the call type ("function"); V3.1: the function name.
        chunk, marker = self._until(self._head_markers)
        self._head.append(chunk)
        if marker is None:
            return False
        if marker != SEP:
            raise self._error(f"expected <｜tool▁sep｜> in the call header, found {marker!r}")
        head = "".join(self._head).strip()
        self._head = []
        if self._typed:
            self._state = self._st_name
            return True
        self._open_call(head)
        self._start_json_arguments(self._st_tail)
        return True

    def _st_name(self) -> bool:
        chunk, marker = self._until(self._name_markers)
        self._head.append(chunk)
        if marker is None:
            return False
        if marker != "\n":
            raise self._error(f"expected a newline after the function name, found {marker!r}")
        self._open_call("".join(self._head).strip())
        self._head = []
        self._state = self._st_fence
        return True

    def _st_fence(self) -> bool:
        # The template writes ```json before the arguments; accept them bare too.
        if not self._skip_space():
            return False
        opened = self._peek("```json")
        if opened is None:
            return False
        self._start_json_arguments(self._st_tail)
        return True

    def _st_tail(self) -> bool:
        done = self._read_tail(self._tail_markers, CALL_END, ("", "```") if self._typed else ("",))
        if done is None:
            return False
        self._section_calls += 1
        self._state = self._st_section
        return True

    def _open_call(self, name: str) -> None:
        if not name:
            raise self._error("a tool call has no function name", f"tool call {self.call_count}")
        self._begin_call(name)

    def _finish(self) -> None:
        if self._at_rest() or (self._state == self._st_section and self._section_calls):
            return
        raise self._error("the output ended inside a tool call (truncated?)", self._where())


# --------------------------------------------------------------------------- V3.2 / V4 DSML


class _DsmlStream(ThinkStream):
    """``<｜DSML｜function_calls>`` (V3.2) / ``<｜DSML｜tool_calls>`` (V4) blocks."""

    def __init__(self, fmt: DeepSeekFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix, reasoning_open=reasoning_open)
        self._block_open, self._block_close = _dsml_block(fmt.variant)
        self._content_markers = MarkerSet(["\n\n" + self._block_open, self._block_open, EOS])
        self._header_end = MarkerSet([">"])
        self._value_end = MarkerSet([PARAM_CLOSE])
        self._head: list[str] = []
        self._writer = ArgumentWriter(self._arguments)
        self._block_calls = 0

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker is not None and marker != EOS:
            self._block_calls = 0
            self._state = self._st_block
        return marker is not None

    def _st_block(self) -> bool:
        ends = (INVOKE_OPEN, self._block_close, EOS)
        seen = self._expect(ends, f"{INVOKE_OPEN} or {self._block_close}")
        if seen is None:
            return False
        self._head = []
        self._state = self._st_invoke_head if seen == INVOKE_OPEN else self._st_content
        return True

    def _read_header(self) -> str | None:
        chunk, marker = self._until(self._header_end)
        self._head.append(chunk)
        if marker is None:
            return None
        head = "".join(self._head)
        self._head = []
        return head

    def _st_invoke_head(self) -> bool:
        head = self._read_header()
        if head is None:
            return False
        match = _DSML_NAME.fullmatch(head)
        if match is None or not match.group(1):
            raise self._error(f"bad invoke header {head[:60]!r}", f"tool call {self.call_count}")
        self._begin_call(match.group(1))
        self._writer = ArgumentWriter(self._arguments)
        self._state = self._st_invoke_body
        return True

    def _st_invoke_body(self) -> bool:
        seen = self._expect((PARAM_OPEN, INVOKE_CLOSE), f"{PARAM_OPEN} or {INVOKE_CLOSE}")
        if seen is None:
            return False
        if seen == INVOKE_CLOSE:
            self._writer.close()
            self._block_calls += 1
            self._state = self._st_block
        else:
            self._state = self._st_param_head
        return True

    def _st_param_head(self) -> bool:
        head = self._read_header()
        if head is None:
            return False
        match = _DSML_PARAM.fullmatch(head)
        if match is None:
            raise self._error(f"bad parameter header {head[:60]!r}", self._where())
        if not self._writer.key(match.group(1)):
            raise self._error(f"duplicate parameter {match.group(1)!r}", self._where())
        if match.group(2) == "true":
            self._writer.begin_text()
        else:
            self._writer.begin_json()
        self._state = self._st_param_value
        return True

    def _st_param_value(self) -> bool:
        chunk, marker = self._until(self._value_end)
        self._writer.piece(chunk)
        if marker is None:
            return False
        problem = self._writer.end_value()
        if problem:
            raise self._error(problem, self._where())
        self._state = self._st_invoke_body
        return True

    def _finish(self) -> None:
        if self._at_rest() or (self._state == self._st_block and self._block_calls):
            return
        raise self._error("the output ended inside a tool call (truncated?)", self._where())


def _dsml_block(variant: str) -> tuple[str, str]:
    name = "tool_calls" if variant == "v4" else "function_calls"
    return f"<{DSML}{name}>", f"</{DSML}{name}>"


# --------------------------------------------------------------------------- the format


class DeepSeekFormat(Format):
    """The DeepSeek tool-call format of one variant (see the module docstring)."""

    family: ClassVar[str] = "deepseek"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise CallerError(
                f"unknown deepseek variant {variant!r}; known variants: {', '.join(VARIANTS)}"
            )
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        prompt = generation_prompt
        if prompt is None:
            prompt = DEFAULT_GENERATION_PROMPTS[variant]
        self.reasoning_open = opens_reasoning(prompt, THINK_OPEN, THINK_CLOSE)
        self.markers = _markers(variant)

    def stream(self, *, id_prefix: str | None = None) -> FormatStream:
        """Start an incremental parse of one output."""
        if self.variant in ("v3.2", "v4"):
            return _DsmlStream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)
        return _MarkerStream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)


def _markers(variant: str) -> tuple[str, ...]:
    common = (THINK_OPEN, THINK_CLOSE, EOS)
    if variant in ("v3.2", "v4"):
        block_open, block_close = _dsml_block(variant)
        return (
            *common,
            block_open,
            block_close,
            INVOKE_OPEN,
            INVOKE_CLOSE,
            PARAM_OPEN,
            PARAM_CLOSE,
        )
    return (*common, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP, CALLS_MERGED)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> DeepSeekFormat:
    """Build the DeepSeek format of ``variant`` (one of :data:`VARIANTS`).

    Raises:
        CallerError: Unknown variant, or malformed ``tools``.
    """
    return DeepSeekFormat(variant, tools=tools, generation_prompt=generation_prompt)
