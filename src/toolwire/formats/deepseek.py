# DeepSeek markers are written with FULLWIDTH VERTICAL LINE (U+FF5C) and LOWER ONE
# EIGHTH BLOCK (U+2581) on purpose: that is what the tokenizer emits.
# ruff: noqa: RUF001, RUF002, RUF003
"""DeepSeek tool-call formats: V3 / R1 / V3.1 full-width markers and V3.2 / V4 DSML.

Strategy: a cursor over a small buffer and one method per parser state
(:class:`~toolwire.formats.markup.MarkupStream`). Each state reads up to the next marker it cares about with
:class:`~toolwire.formats.base.MarkerSet` (only a possible marker prefix is held
back), so content and arguments stream as they arrive and the cost stays linear.
The machinery lives in :mod:`toolwire.formats.markup`, shared with ``glm`` and ``kimi``.

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
  text. V4.1 writes a space after the token and names the block ``calls``
  (``<｜DSML｜ calls>``, ``<｜DSML｜ invoke name="NAME">``, ``</｜DSML｜ parameter>``).
  Every spelling is read by every DSML variant through one table
  (``DSML_SPELLINGS`` × ``DSML_GAPS`` × ``DSML_BLOCKS``): the token as ``｜DSML｜``,
  ``|DSML|``, ``\u2016DSML\u2016`` or ``｜｜DSML｜｜``, with or without the space;
  a block's tags follow its opener's spelling.
  The ``\\n\\n`` before the block belongs to the template, as the reference
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

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from .base import Format, FormatStream
from .markers import MarkerSet, marker_set, opens_reasoning
from .markup import THINK_CLOSE, THINK_OPEN, ArgumentWriter, ThinkStream
from .values import value_end

__all__ = [
    "DeepSeekFormat",
    "make",
]


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


_SPACE = re.compile(r"\s*")
# What may follow a call inside a section (a constant: _st_section runs once a call).
_SECTION_NEXT = (CALL_BEGIN, CALLS_END, EOS)
_SECTION_NEXT_WHAT = f"{CALL_BEGIN} or {CALLS_END}"
_DSML_NAME = re.compile(r'\s*name="(.*)"\s*', re.DOTALL)
_DSML_PARAM = re.compile(r'\s*name="(.*?)"\s+string="(true|false)"\s*', re.DOTALL)


# --------------------------------------------------------------------------- V3 / R1 / V3.1

# Shared by every stream (a stream's start builds no marker set).
_CONTENT_MARKERS = MarkerSet([CALLS_BEGIN, CALLS_MERGED, CALL_BEGIN, EOS])
_HEAD_MARKERS = MarkerSet([SEP, CALL_END, CALLS_END, CALL_BEGIN])
_NAME_MARKERS = MarkerSet(["\n", SEP, CALL_END, CALLS_END, CALL_BEGIN])
_TAIL_MARKERS = MarkerSet([CALL_END, CALLS_END, CALL_BEGIN, SEP])


class _MarkerStream(ThinkStream):
    """``<｜tool▁calls▁begin｜>`` sections (V3, R1, V3.1)."""

    def __init__(self, fmt: DeepSeekFormat, *, id_prefix: str | None, reasoning_open: bool) -> None:
        super().__init__(fmt, id_prefix=id_prefix, reasoning_open=reasoning_open)
        self._typed = fmt.variant in ("v3", "r1")
        # A bare CALL_BEGIN (no section opener) also starts a call.
        self._content_markers = _CONTENT_MARKERS
        self._head_markers = _HEAD_MARKERS
        self._name_markers = _NAME_MARKERS
        self._tail_markers = _TAIL_MARKERS
        self._head: list[str] = []
        self._section_calls = 0

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker in (CALLS_BEGIN, CALLS_MERGED, CALL_BEGIN):
            self._markup_begins(marker)
            self._section_calls = 0
            self._head = []
            self._state = self._st_section if marker == CALLS_BEGIN else self._st_head
        return marker is not None

    def _st_section(self) -> bool:
        if not self._skip_space():
            return False
        if not self._buf.startswith("<", self._pos):
            # A call whose CALL_BEGIN is missing: its header starts here.
            self._call_begins(self._at(self._buf, self._pos))
            self._head = []
            self._state = self._st_head
            return True
        # The end-of-sentence token also ends a section whose closing marker is missing.
        seen = self._choose(_SECTION_NEXT, _SECTION_NEXT_WHAT)
        if seen is None:
            return False
        self._head = []
        if seen == CALL_BEGIN and self._anchor is None:  # else the section's anchor stays
            self._markup_begins(seen)
        self._state = self._st_head if seen == CALL_BEGIN else self._st_content
        return True

    def _st_head(self) -> bool:
        # V3/R1: the call type ("function"); V3.1: the function name.
        chunk, marker = self._until(self._head_markers)
        if marker is None:
            self._head.append(chunk)
            return False
        if marker != SEP:
            raise self._error(f"expected <｜tool▁sep｜> in the call header, found {marker!r}")
        head = self._take_head(chunk)
        if self._typed:  # the type is not checked (the template writes "function")
            self._state = self._st_name
            return True
        self._open_call(head.strip())
        self._start_json_arguments(self._st_tail)
        return True

    def _st_name(self) -> bool:
        chunk, marker = self._until(self._name_markers)
        if marker is None:
            self._head.append(chunk)
            return False
        if marker != "\n":
            raise self._error(f"expected a newline after the function name, found {marker!r}")
        self._open_call(self._take_head(chunk).strip())
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
        self._markup_ends()
        self._state = self._st_section
        return True

    def _take_head(self, chunk: str) -> str:
        """The header text read so far, ending with ``chunk`` (usually all of it)."""
        if not self._head:
            return chunk
        head = "".join(self._head) + chunk
        self._head = []
        return head

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
        self._block_close = ""  # the closing tag of the open block, spelled as it opened
        # Every block name in every variant, every spelling of the DSML token (the
        # table below), and a bare invoke without its block (sgl-project/sglang#40236).
        self._content_markers = _DSML_CONTENT
        self._bare = False
        self._header_end = _HEADER_END
        self._dsml = ""
        self._spell(DSML)
        self._head: list[str] = []
        self._writer = ArgumentWriter(self._arguments)
        self._block_calls = 0

    def _st_content(self) -> bool:
        chunk, marker = self._until(self._content_markers)
        self._text(chunk)
        if marker is not None and marker != EOS:
            self._markup_begins(marker)
            self._block_calls = 0
            self._spell(_spelling(marker))
            self._bare = marker == self._invoke_open
            if self._bare:
                self._head = []
                self._state = self._st_invoke_head
            else:
                self._block_close = "</" + marker[1:]
                self._state = self._st_block
        return marker is not None

    def _spell(self, dsml: str) -> None:
        """Use the tags of one spelling of the DSML token."""
        # Every block names its spelling, nearly always the one before: this returns
        # before even the shared set's look-up.
        if dsml == self._dsml:
            return
        self._dsml = dsml
        self._invoke_open = f"<{dsml}invoke"
        self._invoke_close = f"</{dsml}invoke>"
        self._param_open = f"<{dsml}parameter"
        self._value_end = marker_set(f"</{dsml}parameter>")
        # What may follow a value's closing tag (built once per spelling, not per value).
        self._after_value = (self._param_open, self._invoke_close)

    def _st_block(self) -> bool:
        invoke = self._invoke_open
        ends = (invoke, self._block_close, EOS)
        seen = self._expect(ends, f"{invoke} or {self._block_close}")
        if seen is None:
            return False
        self._head = []
        if seen == invoke and self._anchor is None:  # else the section's anchor stays
            self._markup_begins(seen)
        self._state = self._st_invoke_head if seen == invoke else self._st_content
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
        closed = head.rstrip().endswith("/")  # a self-closing invoke: no parameters
        match = _DSML_NAME.fullmatch(head.rstrip()[:-1] if closed else head)
        if match is None or not match.group(1):
            raise self._error(f"bad invoke header {head[:60]!r}", f"tool call {self.call_count}")
        self._begin_call(match.group(1))
        self._writer = ArgumentWriter(self._arguments)
        self._state = self._st_invoke_body
        if closed:
            self._end_invoke()
        return True

    def _end_invoke(self) -> None:
        self._writer.close()
        self._block_calls += 1
        self._markup_ends()
        self._state = self._st_content if self._bare else self._st_block

    def _st_invoke_body(self) -> bool:
        choices = (self._param_open, self._invoke_close)
        seen = self._expect(choices, " or ".join(choices))
        if seen is None:
            return False
        if seen == self._invoke_close:
            self._end_invoke()
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
        # A closing tag inside a value ends it only when the grammar goes on after it
        # (another parameter or the end of the invoke).
        pos = self._pos
        stop, resume = value_end(self._buf, pos, self._value_end, self._after_value, self._final)
        self._writer.piece(self._buf[pos:stop])
        if resume < 0:
            self._pos = stop
            return False
        self._pos = resume
        problem = self._writer.end_value()
        if problem:
            raise self._error(problem, self._where())
        self._state = self._st_invoke_body
        return True

    def _finish(self) -> None:
        if self._at_rest() or (self._state == self._st_block and self._block_calls):
            return
        raise self._error("the output ended inside a tool call (truncated?)", self._where())


# Every spelling of the DSML token, in one table: a block or invoke opener is matched
# against every row, and the tags inside follow the row of their opener (never a branch
# per spelling). Sources, one each (the fixtures cite theirs):
DSML_SPELLINGS = (
    DSML,  # V3.2 and V4 reference encoders (encoding_dsv32.py, encoding_dsv4.py)
    "|DSML|",  # ASCII bars: local-inference-lab/vllm#417, cline/cline#13348
    "\u2016DSML\u2016",  # DOUBLE VERTICAL LINE: lsdefine/GenericAgent#804
    "｜｜DSML｜｜",  # the full-width bar doubled: lsdefine/GenericAgent#804, V4 Flash leaks
)
# The gap between the token and the tag name: V4.1's encoder writes one space
# (``<｜DSML｜ calls>``, ``</｜DSML｜ parameter>``), earlier releases none.
DSML_GAPS = ("", " ")
# The block's name: V3.2 function_calls, V4 tool_calls, V4.1 calls (checkpoints mix them).
DSML_BLOCKS = ("function_calls", "tool_calls", "calls")
# A tag's spelling is the longest row it starts with after "<" (the spaced rows first).
_DSML_PREFIXES = tuple(
    sorted((token + gap for token in DSML_SPELLINGS for gap in DSML_GAPS), key=len, reverse=True)
)
_DSML_OPENERS = tuple(
    f"<{prefix}{tag}"
    for prefix in _DSML_PREFIXES
    for tag in (*(f"{block}>" for block in DSML_BLOCKS), "invoke")
)


# Built once: every opener of every spelling is a few hundred marker prefixes.
_DSML_CONTENT = MarkerSet([*_DSML_OPENERS, EOS])
_HEADER_END = MarkerSet([">"])


def _spelling(marker: str) -> str:
    """The DSML token, with its gap, that a block or invoke opener is written with."""
    return next(prefix for prefix in _DSML_PREFIXES if marker.startswith(prefix, 1))


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
        super().__init__(variant, tools=tools, generation_prompt=generation_prompt)
        self.reasoning_open = opens_reasoning(self.prompt, THINK_OPEN, THINK_CLOSE)
        self.markers = _markers(variant)

    def _open_stream(self, id_prefix: str | None) -> FormatStream:
        """Start an incremental parse of one output (the family's parser)."""
        if self.variant in ("v3.2", "v4"):
            return _DsmlStream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)
        return _MarkerStream(self, id_prefix=id_prefix, reasoning_open=self.reasoning_open)


# Every tag of every spelling (what must never reach content).
_DSML_MARKERS = tuple(
    f"{slash}{prefix}{tag}"
    for prefix in _DSML_PREFIXES
    for tag in (*(f"{block}>" for block in DSML_BLOCKS), "invoke", "parameter")
    for slash in ("<", "</")
)


def _markers(variant: str) -> tuple[str, ...]:
    common = (THINK_OPEN, THINK_CLOSE, EOS)
    if variant in ("v3.2", "v4"):
        return (*common, *_DSML_MARKERS)
    return (*common, CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP, CALLS_MERGED)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> DeepSeekFormat:
    """Build the DeepSeek format of ``variant`` (one of the registry's).

    Raises:
        CallerError: Unknown variant, or malformed ``tools``.
    """
    return DeepSeekFormat(variant, tools=tools, generation_prompt=generation_prompt)
