"""GLM tool-call format: ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...``.

Strategy: the shared marker machinery of :mod:`toolwire.formats.markup`
(:class:`~toolwire.formats.markup.ThinkStream`, one method per state, only a possible
marker prefix held back) and :class:`~toolwire.formats.markup.ArgumentWriter`,
which turns key/value pairs into an arguments JSON object as they stream; a value
ends where :func:`~toolwire.formats.values.value_end` says.

Layouts (sources: the official chat templates mirrored in ggml-org/llama.cpp
``models/templates/glm_4_5.jinja`` and ``GLM-4.6.jinja``; GLM-4.7's layout from
sgl-project/sglang ``python/sglang/srt/function_call/glm47_moe_detector.py`` and
vllm-project/vllm ``tests/tool_parsers/test_glm47_moe_tool_parser.py``):

* ``glm-4.5`` (also 4.6): the template writes ``\\n<think>R</think>``, ``\\nCONTENT`` and
  ``\\n<tool_call>NAME`` then ``\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>`` per
  argument and ``\\n</tool_call>``; the generation prompt is ``<|assistant|>`` (the
  model opens ``<think>`` itself).
* ``glm-4.7`` (also GLM-5): the same tags without the newlines, and the generation
  prompt pre-fills ``<think>`` (``</think>`` when thinking is off).

Values are text: each is typed by the tool's JSON Schema
(:func:`~toolwire.formats.base.coerce_value`: ``3`` is an integer only if the schema
says so); a value whose schema allows only a string, or has no schema, streams as it
arrives, a typed one is converted when it closes. Whitespace between the tags is
layout and ignored in both variants; the template's newline right before
``<tool_call>`` and right after ``</think>`` is dropped (the template adds it and
strips content, so it never belongs to the answer). Anything else is content verbatim.

Decisions: output ending inside a call raises
:class:`~toolwire.formats.base.FormatError` (truncated); unexpected text between the
tags of a call, a call without a name, or a duplicate key raises FormatError. Only
``</arg_value>`` ends a value, so ``<tool_call>`` or ``<arg_key>`` inside a value is
part of it. End-of-turn tokens (``<|observation|>``, ``<|user|>``, ``<|endoftext|>``)
are dropped if a server passes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .base import Format, FormatStream
from .markers import MarkerSet, opens_reasoning
from .markup import THINK_CLOSE, THINK_OPEN, ArgumentWriter, ThinkStream
from .values import value_end

__all__ = ["GlmFormat", "make"]


CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
KEY_OPEN = "<arg_key>"
KEY_CLOSE = "</arg_key>"
VALUE_OPEN = "<arg_value>"
VALUE_CLOSE = "</arg_value>"
END_OF_TURN = ("<|observation|>", "<|user|>", "<|endoftext|>")


# What may follow an argument value (constants: checked once per argument).
_BETWEEN = (KEY_OPEN, CALL_CLOSE)
_BETWEEN_WHAT = f"{KEY_OPEN} or {CALL_CLOSE}"
_AFTER_VALUE = (KEY_OPEN, CALL_CLOSE, CALL_OPEN, *END_OF_TURN)


# Shared by every stream (a stream's start builds no marker set).
_CONTENT_MARKERS = MarkerSet([CALL_OPEN, THINK_OPEN, *END_OF_TURN])
_NAME_MARKERS = MarkerSet([KEY_OPEN, CALL_CLOSE, VALUE_OPEN, CALL_OPEN, KEY_CLOSE])
_KEY_MARKERS = MarkerSet([KEY_CLOSE, KEY_OPEN, VALUE_OPEN, CALL_CLOSE])
_VALUE_END = MarkerSet([VALUE_CLOSE])


class _GlmStream(ThinkStream):
    after_think: ClassVar[str] = "\n"

    def __init__(self, fmt: GlmFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix, reasoning_open=reasoning_open)
        self._tools = fmt.tools
        # The template's newline before <tool_call> is separator whitespace, trimmed as
        # every family trims it (not part of the marker: "A\n\n<tool_call>" keeps the
        # same separator as in the other families).
        # A <think> later in the content opens reasoning again: GLM thinks between its
        # answers and calls (interleaved thinking; llama.cpp's GLM 4.5 parser tests read
        # "A\n<think>R2</think>B" as content A B and reasoning R2).
        self._content_markers = _CONTENT_MARKERS
        self._name_markers = _NAME_MARKERS
        self._key_markers = _KEY_MARKERS
        self._value_end = _VALUE_END
        self._head: list[str] = []
        self._name = ""
        self._key = ""
        self._writer = ArgumentWriter(self._arguments)

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker is None:
            return False
        if marker == CALL_OPEN:
            self._markup_begins(CALL_OPEN)
            self._head = []
            self._state = self._st_name
        elif marker == THINK_OPEN:
            self._state = self._st_reasoning
        return True  # (an end-of-turn token is dropped)

    def _st_name(self) -> bool:
        chunk, marker = self._until(self._name_markers)
        self._head.append(chunk)
        if marker is None:
            return False
        if marker not in (KEY_OPEN, CALL_CLOSE):
            raise self._error(
                f"unexpected {marker!r} in a call name", f"tool call {self.call_count}"
            )
        self._name = "".join(self._head).strip()
        self._head = []
        if not self._name:
            raise self._error("a tool call has no function name", f"tool call {self.call_count}")
        self._begin_call(self._name)
        self._writer = ArgumentWriter(self._arguments)
        self._state = self._st_key if marker == KEY_OPEN else self._st_content
        if marker == CALL_CLOSE:
            self._writer.close()
            self._markup_ends()
        return True

    def _st_key(self) -> bool:
        chunk, marker = self._until(self._key_markers)
        self._head.append(chunk)
        if marker is None:
            return False
        if marker != KEY_CLOSE:
            raise self._error(f"unexpected {marker!r} in an argument key", self._where())
        self._key = "".join(self._head).strip()
        self._head = []
        if not self._writer.key(self._key):
            raise self._error(f"duplicate argument {self._key!r}", self._where())
        self._state = self._st_before_value
        return True

    def _st_before_value(self) -> bool:
        if self._expect((VALUE_OPEN,), VALUE_OPEN) is None:
            return False
        self._writer.begin_typed(self._tools.property_schema(self._name, self._key))
        self._state = self._st_value
        return True

    def _st_value(self) -> bool:
        # </arg_value> inside a value ends it only when another key or the end of the
        # call follows.
        pos = self._pos
        stop, resume = value_end(self._buf, pos, self._value_end, _AFTER_VALUE, self._final)
        self._writer.piece(self._buf[pos:stop])
        if resume < 0:
            self._pos = stop
            return False
        self._pos = resume
        self._writer.end_value()
        self._state = self._st_between
        return True

    def _st_between(self) -> bool:
        seen = self._expect(_BETWEEN, _BETWEEN_WHAT)
        if seen is None:
            return False
        if seen == KEY_OPEN:
            self._state = self._st_key
        else:
            self._writer.close()
            self._markup_ends()
            self._state = self._st_content
        return True

    def _finish(self) -> None:
        if not self._at_rest():
            raise self._error("the output ended inside a tool call (truncated?)", self._where())


class GlmFormat(Format):
    """The GLM tool-call format of one variant (see the module docstring)."""

    family: ClassVar[str] = "glm"

    def __init__(
        self,
        variant: str,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        generation_prompt: str | None = None,
    ) -> None:
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.reasoning_open = opens_reasoning(self.prompt, THINK_OPEN, THINK_CLOSE)
        self.markers = (
            THINK_OPEN,
            THINK_CLOSE,
            CALL_OPEN,
            CALL_CLOSE,
            KEY_OPEN,
            KEY_CLOSE,
            VALUE_OPEN,
            VALUE_CLOSE,
            *END_OF_TURN,
        )

    def _open_stream(self, id_prefix: str | None) -> FormatStream:
        """Start an incremental parse of one output (the family's parser)."""
        return _GlmStream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> GlmFormat:
    """Build the GLM format of ``variant`` (one of the registry's).

    Raises:
        CallerError: Unknown variant, or malformed ``tools``.
    """
    return GlmFormat(variant, tools=tools, generation_prompt=generation_prompt)
