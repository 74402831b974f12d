"""Mistral ``[TOOL_CALLS]``: v3 JSON array, v11 ``NAME[CALL_ID]ID[ARGS]{json}``, v13.

Sources: ``mistralai/mistral-common`` ``src/mistral_common/tokens/tokenizers/instruct.py``
(``InstructTokenizerV3`` / ``V7`` / ``V11`` / ``V13``), ``.../tokenizers/tools.py``
(``decode_tool_calls``), ``tests/data/expected/*/expected.json`` (rendered
conversations); the Hugging Face ``chat_template.jinja`` of Mistral-Small-3.1 (v7 JSON
array, copy in llama.cpp ``models/templates/``) and Mistral-Small-3.2 / Magistral / Devstral
(``'[TOOL_CALLS]' + name + '[ARGS]' + arguments``); vLLM
``tests/tool_parsers/test_mistral_tool_parser.py`` and
``vllm/reasoning/mistral_reasoning_parser.py``.

The tokenizer versions write a call three ways:

* v2-v7: ``[TOOL_CALLS] [{"name": ..., "arguments": {...}, "id": "..."}, ...]`` (one JSON
  array; the id, and sometimes the name, come after the arguments);
* v11: ``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}`` per call, ``[CALL_ID]ID`` optional;
* v13 (and v15, which only adds ``[MODEL_SETTINGS]`` to the prompt): what changed is that
  the call id is no longer written, neither in calls (``[TOOL_CALLS]NAME[ARGS]{...}``) nor
  in results (``[TOOL_RESULTS]content[/TOOL_RESULTS]``), and the tool list moved to the
  first user message. v13 also brings ``[THINK]...[/THINK]`` reasoning (Magistral).

Strategy: every variant accepts every shape, decided per call by the first character
after ``[TOOL_CALLS]`` (``[`` or ``{`` starts the JSON form; anything else is a name),
because the variant guessed from a model id is not always right and the shapes cannot
be confused. The variant only names the model generation. A name ends at ``[ARGS]``,
``[CALL_ID]`` or at ``{`` (servers that drop special tokens from the text turn
``NAME[ARGS]{..}`` into ``NAME{..}``). Arguments stream as they arrive; a call is
complete the moment its JSON object closes (there is no end marker: the next
``[TOOL_CALLS]``, the end of output or ``</s>`` follows). Markers inside the arguments
JSON are part of its strings. In the JSON-array form a call is announced when its
array element closes, because the name and the id may follow the arguments; the
arguments are then emitted as the exact text the model wrote.

Decisions:

* **Truncated output** (ends inside a name, an id or an unclosed arguments object or
  array): :class:`~toolwire.formats.base.FormatError` at ``close()``.
* **Malformed calls** (an empty name, arguments that are not a JSON object, an array
  element that is not an object with a string ``name``): FormatError.
* Text after a call's JSON closes is content, verbatim; ``</s>`` ends the turn and is
  dropped. A generation prompt ending inside ``[THINK]`` starts the output in reasoning;
  inside reasoning only ``[/THINK]`` is a marker (a ``[TOOL_CALLS]`` there is
  mentioned). Reasoning written as text tags (``<think>...</think>`` at the start of
  the output, as Magistral checkpoints do) is read the same way.
* **Ids**: an id the model wrote (``[CALL_ID]``, ``"id"``) is kept; a generated one is
  9 letters and digits (:class:`~toolwire.formats.base.AlphanumericIds`), the only
  shape ``mistral_common`` and the templates accept back in the history.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import CallerError
from ..wire.jsonscan import ClosureScanner
from .base import Format, FormatStream
from .ids import AlphanumericIds
from .markers import MarkerSet, opens_reasoning, skip_whitespace

__all__ = ["VARIANTS", "MistralFormat", "MistralStream", "make"]

VARIANTS: tuple[str, ...] = ("v11", "v3", "v13")

TOOL_CALLS = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
THINK = "[THINK]"
END_THINK = "[/THINK]"
EOS = "</s>"

_MARKERS = MarkerSet((TOOL_CALLS, ARGS, CALL_ID, THINK, END_THINK, EOS))
_REASONING_END = MarkerSet((END_THINK,))
# Magistral checkpoints write reasoning as plain text tags at the start of the output
# (mistralai/Magistral-Small-2506's system prompt asks for <think>...</think>).
TEXT_THINK = "<think>"
TEXT_END_THINK = "</think>"
_TEXT_REASONING_END = MarkerSet((TEXT_END_THINK,))
_NAME_ENDS = MarkerSet((ARGS, CALL_ID, "{"))
_ID_ENDS = MarkerSet((ARGS, "{"))
_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder()


class _Mode(enum.Enum):
    CONTENT = "content"
    REASONING = "reasoning"
    CALL_START = "call_start"
    NAME = "name"
    CALL_ID = "call_id"
    ARGS = "args"
    ARRAY = "array"


class MistralStream(FormatStream):
    """Incremental parser of one Mistral output (see the module docstring).

    The unread input is ``_buf[_pos:]``: the steps move the cursor and the buffer is
    cut once per feed, so a whole output fed at once is never copied per marker
    (cutting the front off per step made parsing quadratic in the output length).
    """

    def __init__(self, fmt: MistralFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._pos = 0
        reasoning = opens_reasoning(fmt.generation_prompt, THINK, END_THINK)
        self._mode = _Mode.REASONING if reasoning else _Mode.CONTENT
        self._opening = not reasoning  # a text <think> may still open the output
        self._reasoning_end = _REASONING_END
        self._name: list[str] = []
        self._id: list[str] = []
        self._scanner = ClosureScanner()
        self._args_started = False  # the arguments' "{" was seen
        self._array: list[str] = []
        # The handler of each mode (built once: _step runs for every piece of input).
        self._steps: dict[_Mode, Callable[[], bool]] = {
            _Mode.CONTENT: self._step_text,
            _Mode.REASONING: self._step_text,
            _Mode.CALL_START: self._step_call_start,
            _Mode.NAME: self._step_name,
            _Mode.CALL_ID: self._step_call_id,
            _Mode.ARGS: self._step_args,
            _Mode.ARRAY: self._step_array,
        }

    # ---- FormatStream hooks

    def _feed(self, delta: str) -> None:
        self._buf += delta
        steps = self._steps  # dispatched here, without a call in between
        while self._pos < len(self._buf) and steps[self._mode]():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _close(self) -> None:
        if self._mode in (_Mode.CONTENT, _Mode.REASONING):
            # A held-back marker beginning is plain text once the output has ended.
            self._emit_text(self._buf)
            self._buf = ""
            return
        where = f"tool call {self._call_count}"
        if self._mode is _Mode.ARGS:
            where = f"tool call {self._call_count - 1}"
        raise self._error(
            f"output ended inside a tool call ({self._mode.value}); it was probably cut off "
            "by the token limit",
            where=where,
        )

    # ---- emitting

    def _emit_text(self, text: str) -> None:
        if self._mode is _Mode.REASONING:
            self._reasoning(text)
        else:
            self._text(text)

    def _take(self, end: int, skip: int = 0) -> str:
        """Consume the buffer up to ``end`` (returned) and ``skip`` characters more."""
        piece = self._buf[self._pos : end]
        self._pos = end + skip
        return piece

    # ---- content and reasoning

    def _step_text(self) -> bool:
        if self._opening and not self._open_text_think():
            return False
        buf, start = self._buf, self._pos
        # Inside reasoning only its end is a marker ([TOOL_CALLS] there is mentioned).
        markers = self._reasoning_end if self._mode is _Mode.REASONING else _MARKERS
        # The hot steps search the pattern and cut the buffer in place (no helper
        # calls: streaming a character at a time runs a step per character).
        found = markers.pattern.search(buf, start)
        if found is None:
            end = len(buf) - markers.holdback(buf, start)
            self._pos = end
            self._emit_text(buf[start:end])
            return False
        pos = found.start()
        marker = found.group()
        self._pos = pos + len(marker)
        self._emit_text(buf[start:pos])
        if marker == TOOL_CALLS:
            self._call_begins(self._at(buf, pos))
            self._mode = _Mode.CALL_START
        elif marker == THINK:
            self._mode = _Mode.REASONING
        elif marker in (END_THINK, TEXT_END_THINK):
            self._mode = _Mode.CONTENT
        # [ARGS], [CALL_ID] outside a call and </s> carry no text: dropped.
        return True

    def _open_text_think(self) -> bool:
        """At the start of the output: enter reasoning on a text ``<think>``.

        Returns whether to go on (``False``: the buffer may still grow into one).
        """
        start = skip_whitespace(self._buf, self._pos)
        head = self._buf[start : start + len(TEXT_THINK)]
        if head == TEXT_THINK:
            self._pos = start + len(TEXT_THINK)
            self._mode = _Mode.REASONING
            self._reasoning_end = _TEXT_REASONING_END
        elif TEXT_THINK.startswith(head):
            return False  # whitespace or a prefix of <think>: wait
        self._opening = False
        return True

    # ---- the two call shapes

    def _step_call_start(self) -> bool:
        self._pos = skip_whitespace(self._buf, self._pos)
        if self._pos == len(self._buf):
            return False
        if self._buf[self._pos] in "[{":
            self._mode = _Mode.ARRAY
            self._scanner = ClosureScanner()
            self._array = []
        else:
            self._mode = _Mode.NAME
            self._name = []
            self._id = []
        return True

    def _step_name(self) -> bool:
        return self._collect(self._name, _NAME_ENDS)

    def _step_call_id(self) -> bool:
        return self._collect(self._id, _ID_ENDS)

    def _collect(self, into: list[str], ends: MarkerSet) -> bool:
        """Collect name or id text up to its end marker."""
        buf, start = self._buf, self._pos
        found = ends.pattern.search(buf, start)
        if found is None:
            end = len(buf) - ends.holdback(buf, start)
            self._pos = end
            if end > start:
                into.append(buf[start:end])
            return False
        pos = found.start()
        marker = found.group()
        self._pos = pos + (len(marker) if marker != "{" else 0)
        into.append(buf[start:pos])
        if marker == CALL_ID:
            self._mode = _Mode.CALL_ID
        else:
            self._start_named_call()
        return True

    def _start_named_call(self) -> None:
        name = "".join(self._name).strip()
        if not name or _MARKERS.pattern.search(name):
            raise self._error(
                f"tool call name {name!r} is empty or malformed",
                where=f"tool call {self._call_count}",
            )
        call_id = "".join(self._id).strip() or None
        self._begin_call(name, call_id)
        self._mode = _Mode.ARGS
        self._scanner = ClosureScanner()
        self._args_started = False

    def _step_args(self) -> bool:
        buf, start = self._buf, self._pos
        if not self._args_started:
            first = skip_whitespace(buf, start)
            if first < len(buf):
                if buf[first] != "{":
                    raise self._error(
                        f"arguments must be a JSON object, got {buf[first : first + 20]!r}",
                        where=f"tool call {self._call_count - 1}",
                    )
                self._args_started = True
        # Scanned in place (a step per character when streaming one at a time).
        end = self._scanner.feed(buf, start)
        stop = len(buf) if end < 0 else end
        self._pos = stop
        self._arguments(buf[start:stop])
        if end < 0:
            return False
        self._mode = _Mode.CONTENT
        self._call_ends(self._at(self._buf, self._pos))
        return True

    def _step_array(self) -> bool:
        end = self._scanner.feed(self._buf, self._pos)
        self._array.append(self._take(len(self._buf) if end < 0 else end))
        if end < 0:
            return False
        self._emit_array("".join(self._array))
        self._mode = _Mode.CONTENT
        self._call_ends(self._at(self._buf, self._pos))
        return True

    def _emit_array(self, text: str) -> None:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise self._error(
                f"[TOOL_CALLS] JSON is invalid: {error}", where=f"tool call {self._call_count}"
            ) from None
        elements = value if isinstance(value, list) else [value]
        raw = _raw_elements(text) if isinstance(value, list) else [text.strip()]
        for element, element_text in zip(elements, raw, strict=True):
            self._emit_element(element, element_text)

    def _emit_element(self, element: Any, text: str) -> None:
        where = f"tool call {self._call_count}"
        if not isinstance(element, dict) or not isinstance(element.get("name"), str):
            raise self._error("each [TOOL_CALLS] element needs a string 'name'", where=where)
        name = element["name"].strip()
        if not name:
            raise self._error("tool call name is empty", where=where)
        call_id = element.get("id")
        self._begin_call(name, call_id if isinstance(call_id, str) and call_id else None)
        self._arguments(_arguments_text(element, _raw_members(text), where, self))


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


def _raw_elements(text: str) -> list[str]:
    """The exact text of each element of a JSON array (already known to be valid)."""
    pos = _skip_space(text, 0) + 1
    out: list[str] = []
    while True:
        pos = _skip_space(text, pos)
        if text[pos] == "]":
            return out
        _, end = _DECODER.raw_decode(text, pos)
        out.append(text[pos:end])
        pos = _skip_space(text, end)
        if text[pos] == ",":
            pos += 1


def _raw_members(text: str) -> dict[str, str]:
    """The exact text of each top-level member value of a JSON object (valid JSON)."""
    pos = _skip_space(text, 0) + 1
    members: dict[str, str] = {}
    while True:
        pos = _skip_space(text, pos)
        if text[pos] == "}":
            return members
        key, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_space(text, _skip_space(text, pos) + 1)  # past ':'
        _, end = _DECODER.raw_decode(text, pos)
        members[key] = text[pos:end]
        pos = _skip_space(text, end)
        if text[pos] == ",":
            pos += 1


def _arguments_text(
    element: dict[str, Any], raw: dict[str, str], where: str, stream: MistralStream
) -> str:
    """The arguments as the model wrote them (a JSON-encoded string is unwrapped)."""
    if "arguments" not in element:
        return "{}"
    value = element["arguments"]
    if isinstance(value, dict):
        return raw["arguments"]
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            return value
    raise stream._error("tool call arguments must be a JSON object", where=where)


class MistralFormat(Format):
    """Mistral's ``[TOOL_CALLS]`` format (variants ``v11``, ``v3``, ``v13``)."""

    family = "mistral"
    markers = (TOOL_CALLS, ARGS, CALL_ID, THINK, END_THINK, EOS)
    # Mistral's templates and mistral_common accept only 9-character alphanumeric call
    # ids when calls go back into the history.
    id_factory = AlphanumericIds

    def _open_stream(self, id_prefix: str | None) -> MistralStream:
        """Start an incremental parse of one output (the family's parser).

        Args:
            id_prefix: Seed of generated call ids (calls without a model-given id):
                its letters and digits, then the call index, 9 characters in all
                (``calltest0``); random 9-character ids when ``None``.
        """
        return MistralStream(self, id_prefix=id_prefix)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> MistralFormat:
    """Build the Mistral format (the registry's entry point).

    Args:
        variant: ``"v11"``, ``"v3"`` (also v2 and v7) or ``"v13"`` (also v15).
        tools: OpenAI-style tool definitions (Mistral arguments are JSON already).
        generation_prompt: The text after the last message; one ending inside
            ``[THINK]`` starts the output in reasoning.
    """
    if variant not in VARIANTS:
        raise CallerError(
            f"unknown {MistralFormat.family} variant {variant!r}; known: {', '.join(VARIANTS)}"
        )
    return MistralFormat(variant, tools=tools, generation_prompt=generation_prompt)
