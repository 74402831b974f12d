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

* **Truncated output** (ends inside a name, an id, an unclosed arguments object or a
  list): :class:`~toolwire.formats.base.FormatError` at ``close()``; the objects of a
  list that closed before the cut stay calls (``_call_complete``), the cut one is
  dropped (``truncated_call``). Malformed JSON anywhere in a list makes the whole
  list content: one unit, one verdict.
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

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..wire.jsonscan import ClosureScanner
from .base import Format, FormatStream
from .callobject import raw_members
from .ids import AlphanumericIds
from .markers import MarkerSet, opens_reasoning, skip_whitespace

__all__ = ["MistralFormat", "MistralStream", "make"]


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
_DECODER = json.JSONDecoder()
_NAME_ENDS = MarkerSet((ARGS, CALL_ID, "{"))
_ID_ENDS = MarkerSet((ARGS, "{"))


class MistralStream(FormatStream):
    """Incremental parser of one Mistral output (see the module docstring).

    Written the one way (ARCHITECTURE.md): the current state is a bound method in
    ``_state``, one ``_st_<name>`` per state, run by ``_feed`` in its loop; each state
    consumes what it can of ``_buf[_pos:]`` and returns ``True`` to run the (possibly
    new) state again, ``False`` when it needs more input. The buffer is cut once per
    feed, so a whole output fed at once is never copied per marker (cutting the front
    off per step made parsing quadratic in the output length).
    """

    def __init__(self, fmt: MistralFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._pos = 0
        reasoning = opens_reasoning(fmt.generation_prompt, THINK, END_THINK)
        self._state: Callable[[], bool] = (
            self._st_reasoning if reasoning else self._st_opening  # a text <think> may open
        )
        self._reasoning_end = _REASONING_END
        self._name: list[str] = []
        self._id: list[str] = []
        self._scanner = ClosureScanner()
        self._args_started = False  # the arguments' "{" was seen
        self._element: list[str] = []  # the JSON form: the open object's text
        self._in_list = False  # the JSON form: the objects are in a list

    # ---- FormatStream hooks

    def _feed(self, delta: str) -> None:
        self._buf += delta
        while self._pos < len(self._buf) and self._state():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _close(self) -> None:
        state = self._state
        if state in (self._st_content, self._st_opening):
            # A held-back marker beginning is plain text once the output has ended.
            self._text(self._buf[self._pos :])
        elif state == self._st_reasoning:
            self._reasoning(self._buf[self._pos :])
        else:
            # The open call (its name, id, arguments, or an object of the JSON form)
            # was cut off; the objects of a list already whole stay (_call_complete).
            where = self._call_count - 1 if state == self._st_args else self._call_count
            raise self._error(
                "output ended inside a tool call; it was probably cut off by the token limit",
                where=f"tool call {where}",
            )
        self._buf = ""
        self._pos = 0

    # ---- content and reasoning

    def _st_opening(self) -> bool:
        """At the start of the output: a text ``<think>`` opens reasoning."""
        start = skip_whitespace(self._buf, self._pos)
        head = self._buf[start : start + len(TEXT_THINK)]
        if head == TEXT_THINK:
            self._pos = start + len(TEXT_THINK)
            self._reasoning_end = _TEXT_REASONING_END
            self._state = self._st_reasoning
            return True
        if TEXT_THINK.startswith(head):
            return False  # whitespace or a prefix of <think>: wait
        self._state = self._st_content
        return True

    def _st_content(self) -> bool:
        # The hot states search the pattern and cut the buffer in place (no helper
        # calls: streaming a character at a time runs a state per character).
        buf, start = self._buf, self._pos
        found = _MARKERS.pattern.search(buf, start)
        if found is None:
            end = len(buf) - _MARKERS.holdback(buf, start)
            self._pos = end
            self._text(buf[start:end])
            return False
        pos = found.start()
        marker = found.group()
        self._pos = pos + len(marker)
        self._text(buf[start:pos])
        if marker == TOOL_CALLS:
            self._call_begins(self._at(buf, pos))
            self._state = self._st_call_start
        elif marker == THINK:
            self._state = self._st_reasoning
        # [/THINK], [ARGS], [CALL_ID] outside their place and </s> carry no text: dropped.
        return True

    def _st_reasoning(self) -> bool:
        # Inside reasoning only its end is a marker ([TOOL_CALLS] there is mentioned).
        buf, start = self._buf, self._pos
        markers = self._reasoning_end
        found = markers.pattern.search(buf, start)
        if found is None:
            end = len(buf) - markers.holdback(buf, start)
            self._pos = end
            self._reasoning(buf[start:end])
            return False
        pos = found.start()
        self._pos = found.end()
        self._reasoning(buf[start:pos])
        self._state = self._st_content
        return True

    # ---- after [TOOL_CALLS]: a name, or the JSON form

    def _st_call_start(self) -> bool:
        self._pos = skip_whitespace(self._buf, self._pos)
        if self._pos == len(self._buf):
            return False
        first = self._buf[self._pos]
        if first == "[":
            self._pos += 1
            self._in_list = True
            self._state = self._st_list_first
        elif first == "{":
            self._in_list = False
            return self._open_object()
        else:
            self._name = []
            self._id = []
            self._state = self._st_name
        return True

    # ---- the named form: NAME[CALL_ID]ID[ARGS]{...}

    def _st_name(self) -> bool:
        return self._collect(self._name, _NAME_ENDS)

    def _st_call_id(self) -> bool:
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
            self._state = self._st_call_id
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
        self._scanner = ClosureScanner()
        self._args_started = False
        self._state = self._st_args

    def _st_args(self) -> bool:
        buf, start = self._buf, self._pos
        if not self._args_started:
            # Whitespace after [ARGS] (a SentencePiece tokenizer decodes one there) is
            # the separator's, not the arguments'.
            start = self._pos = skip_whitespace(buf, start)
            if start == len(buf):
                return False
            if buf[start] != "{":
                raise self._error(
                    f"arguments must be a JSON object, got {buf[start : start + 20]!r}",
                    where=f"tool call {self._call_count - 1}",
                )
            self._args_started = True
        # Scanned in place (a state per character when streaming one at a time).
        end = self._scanner.feed(buf, start)
        stop = len(buf) if end < 0 else end
        self._pos = stop
        self._arguments(buf[start:stop])
        if end < 0:
            return False
        self._call_ends(self._at(buf, stop))
        self._state = self._st_content
        return True

    # ---- the JSON form: [{...}, {...}] or one {...}; a call per object as it closes

    def _st_list_first(self) -> bool:
        """After ``[``: the first object, or ``]`` (an empty list)."""
        pos = self._pos = skip_whitespace(self._buf, self._pos)
        if pos == len(self._buf):
            return False
        if self._buf[pos] == "]":
            return self._end_list(pos)
        return self._open_object()

    def _st_list_item(self) -> bool:
        """After ``,``: the next object."""
        self._pos = skip_whitespace(self._buf, self._pos)
        if self._pos == len(self._buf):
            self._state = self._st_list_item  # (run directly, it stores itself to wait)
            return False
        return self._open_object()

    def _open_object(self) -> bool:
        buf, pos = self._buf, self._pos
        if buf[pos] != "{":
            raise self._error(
                "each [TOOL_CALLS] element needs a string 'name'",
                where=f"tool call {self._call_count}",
            )
        # An object already whole in the buffer (a whole output parsed at once) is
        # decoded in one C call, with no scanner; otherwise (still arriving, or not
        # valid JSON) the scanner finds where it closes. One attempt per object.
        try:
            element, end = _DECODER.raw_decode(buf, pos)
        except (ValueError, RecursionError):
            self._scanner = ClosureScanner()
            self._element = []
            self._state = self._st_object
            return True
        self._pos = end
        self._emit_element(buf[pos:end], element)
        if self._object_done(buf, end):
            self._state = self._st_list_next
        return True

    def _st_object(self) -> bool:
        buf, start = self._buf, self._pos
        end = self._scanner.feed(buf, start)
        stop = len(buf) if end < 0 else end
        self._pos = stop
        self._element.append(buf[start:stop])
        if end < 0:
            return False
        self._emit_element("".join(self._element))
        # What follows is usually there already: decided without storing a state.
        return self._st_list_next() if self._object_done(buf, stop) else True

    def _object_done(self, buf: str, end: int) -> bool:
        """An object closed before ``buf[end]``; returns whether a list goes on."""
        if not self._in_list:
            self._call_ends(self._at(buf, end))
            self._state = self._st_content
            return False
        # Whole: a list cut off later keeps this call (a malformed one does not).
        self._call_complete()
        return True

    def _st_list_next(self) -> bool:
        """After an object of the list: ``,`` or ``]``."""
        pos = self._pos = skip_whitespace(self._buf, self._pos)
        if pos == len(self._buf):
            self._state = self._st_list_next  # (run directly, it stores itself to wait)
            return False
        char = self._buf[pos]
        if char == "]":
            return self._end_list(pos)
        if char != ",":
            raise self._error(
                f"[TOOL_CALLS] JSON is invalid: expected ',' or ']', got {char!r}",
                where=f"tool call {self._call_count}",
            )
        self._pos = pos + 1
        return self._st_list_item()

    def _end_list(self, pos: int) -> bool:
        self._pos = pos + 1
        self._call_ends(self._at(self._buf, pos + 1))
        self._state = self._st_content
        return True

    def _emit_element(self, text: str, element: Any = None) -> None:
        """Announce the call of one whole object (its text, from ``{`` to ``}``, and
        the object when it was decoded already)."""
        if element is None:
            try:
                element, end = _DECODER.raw_decode(text)
            except (ValueError, RecursionError) as error:
                raise self._malformed(f"[TOOL_CALLS] JSON is invalid: {error}") from None
            if end != len(text):
                element = None
        name = element.get("name") if isinstance(element, dict) else None
        if not isinstance(name, str):
            raise self._malformed("each [TOOL_CALLS] element needs a string 'name'")
        name = name.strip()
        if not name:
            raise self._malformed("tool call name is empty")
        arguments = _arguments_text(element, text)
        if arguments is None:
            raise self._malformed("tool call arguments must be a JSON object")
        call_id = element.get("id")
        self._begin_call(name, call_id if isinstance(call_id, str) and call_id else None)
        self._arguments(arguments)

    def _malformed(self, message: str) -> FormatError:
        return self._error(message, where=f"tool call {self._call_count}")


def _arguments_text(element: dict[str, Any], text: str) -> str | None:
    """The arguments as the model wrote them (a JSON-encoded string is unwrapped);
    ``None`` when they are not a JSON object."""
    if "arguments" not in element:
        return "{}"
    value = element["arguments"]
    if isinstance(value, dict):
        return raw_members(text)["arguments"]
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return None
        if isinstance(decoded, dict):
            return value
    return None


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
    return MistralFormat(variant, tools=tools, generation_prompt=generation_prompt)
