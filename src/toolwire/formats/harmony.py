"""gpt-oss Harmony: messages with channels, tool calls addressed to ``functions.NAME``.

Sources: ``openai/harmony`` ``docs/format.md`` and ``tests/test_harmony.py``; the
``openai/gpt-oss-20b`` Hugging Face ``chat_template.jinja``; llama.cpp
``tests/test-chat.cpp`` (gpt-oss section); vLLM ``tests/tool_parsers/test_openai_tool_parser.py``.

A Harmony output is a run of messages ``<|start|>{header}<|message|>{body}{end}`` where
the header holds the role, ``<|channel|>NAME``, an optional recipient ``to=RECIPIENT``
(written before *or* after the channel) and an optional content type
(``<|constrain|>json``, or a bare ``json`` as the Hugging Face template renders it), and
``{end}`` is ``<|end|>``, ``<|call|>`` (a tool call) or ``<|return|>`` (the final
answer). Generation starts after the prompt ``<|start|>assistant``, so the first header
arrives without its ``<|start|>`` (sometimes as `` to=functions.f<|channel|>...``).

Strategy: a small state machine (between messages, in a header, in a content,
reasoning or built-in tool body, in a tool-call body). A header is buffered until ``<|message|>`` (headers
are a few words) and then classified: a recipient makes the body a tool call
(``functions.`` is stripped from the name; built-in recipients such as ``python`` or
``browser.search`` keep their full name), the ``analysis`` channel is reasoning, and
everything else (``final``, a ``commentary`` preamble without recipient, no channel) is
content. Bodies stream as soon as they cannot be the start of a marker. The generation
prompt is run through the same machine first, so ``<|start|>assistant`` (the default),
``<|start|>assistant<|channel|>final<|message|>`` or an empty prompt all set the start
state without special cases.

Tool-call bodies are kept verbatim as the arguments. A body that starts with ``{``,
``[`` or ``"`` is scanned as JSON and markers are not looked for until the JSON value
closes, so marker-like text inside an argument value stays part of the value. A body
that ends without ``<|call|>`` (servers strip stop tokens) is complete when its JSON
value closed. An empty body becomes ``"{}"``.

Decisions:

* **Truncated output** (the token limit hit inside a call's header or its arguments
  JSON): :class:`~toolwire.formats.base.FormatError` at ``close()``, never a partial call
  presented as complete. A truncated header of a non-call message carries no text and
  is dropped.
* **Malformed calls**: a recipient without a name (``to=functions.``) or a call header
  cut by ``<|end|>`` before ``<|message|>`` raise FormatError (passed through from that
  header on, with a notice, unless ``strict``). A body that is not valid
  JSON but was ended by ``<|call|>`` is passed through verbatim (Harmony allows other
  content types such as ``code``; the assembler records the JSON failure for that call
  only).
* Stray text between messages is content, verbatim. Output without any marker stays
  buffered as a would-be header until ``close()``, then is emitted as content.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..wire.jsonscan import ClosureScanner
from .base import Format, FormatStream
from .markers import MarkerSet

__all__ = ["HarmonyFormat", "HarmonyStream", "make"]


START = "<|start|>"
END = "<|end|>"
MESSAGE = "<|message|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
RETURN = "<|return|>"
CALL = "<|call|>"
# The tokenizer's end of text, the third stop token of gpt-oss's generation_config.json
# (eos_token_id: <|return|>, <|endoftext|>, <|call|>): a server that keeps special
# tokens passes it on. It ends a message as <|end|> does, and is dropped.
END_OF_TEXT = "<|endoftext|>"

_MARKERS = MarkerSet((START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL, END_OF_TEXT))
_MESSAGE_ENDS = frozenset((END, RETURN, CALL, END_OF_TEXT))
_HEADER_OPENERS = frozenset((START, CHANNEL))
# Inside an analysis message only what ends it (or starts the next one) is a marker:
# a <|call|> or <|channel|> there is mentioned, not written.
_REASONING_MARKERS = MarkerSet((START, END, RETURN, END_OF_TEXT))
# The text steps skip the marker search for a buffer without "<" (the first character
# of every marker).
assert all(marker.startswith("<") for marker in _MARKERS.markers)
_FUNCTIONS = "functions."
# ``to=`` must start a word, so ``auto=x`` in a role name is not a recipient.
_RECIPIENT = re.compile(r"(?<![\w.])to=([^\s<]*)")
_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*([^\s<]*)")
_JSON_OPENERS = frozenset('{["')
# ``\s`` is the whitespace ``str.strip`` removes (and ClosureScanner skips).
_LEADING_SPACE = re.compile(r"\s*")


# The recipients of gpt-oss's built-in tools (openai/harmony: the browser and python
# tool namespaces, and "container" in the chat template's builtin_tools).
_BUILT_IN = frozenset({"python", "browser", "container"})


class HarmonyStream(FormatStream):
    """Incremental parser of one gpt-oss Harmony output (see the module docstring).

    Written the one way (ARCHITECTURE.md): the current state is a bound method in
    ``_state``, one ``_st_<name>`` per state (between messages, a header, a content,
    reasoning or built-in tool body, a call's arguments), run by ``_feed`` in its loop;
    each consumes what it can of ``_buf[_pos:]`` and returns ``True`` to run the
    (possibly new) state again, ``False`` when it needs more input. The buffer is cut
    once per feed, so a whole output fed at once is never copied per marker (cutting
    the front off per step made parsing quadratic in the output length).
    """

    def __init__(self, fmt: HarmonyFormat, *, id_prefix: str | None = None) -> None:
        super().__init__(fmt, id_prefix=id_prefix)
        self._buf = ""
        self._pos = 0
        self._state: Callable[[], bool] = self._st_between
        self._header: list[str] = []
        self._header_generated_from = 0  # where the output's own header text begins
        self._header_from_prompt = False  # the header was opened by the prompt
        self._scanner: ClosureScanner | None = None
        self._plain_args = False
        self._args_open = False  # JSON arguments whose value has not closed yet
        self._args_emitted = False
        self._args_space = ""  # whitespace after a JSON value, held (_args_after)
        self._marker_pos = 0  # buffer index of the last marker read
        self._header_at = 0  # output offset where the current header began
        self._prime(fmt.prompt)

    # ---- priming with the generation prompt

    def _prime(self, prompt: str | None) -> None:
        # Run the prompt through the machine and forget its events: the state it leaves
        # (in a header, in a final body, between messages) is where the output starts.
        self._feed(prompt or "")
        self._forget_events()
        self._header_generated_from = sum(len(piece) for piece in self._header) + len(self._buf)
        if self._state == self._st_header:
            self._header.append(self._buf)
            self._buf = ""
            self._header_from_prompt = True

    # ---- FormatStream hooks

    def _feed(self, delta: str) -> None:
        self._buf += delta
        while self._pos < len(self._buf) and self._state():
            pass
        self._buf = self._buf[self._pos :]
        self._pos = 0

    def _close(self) -> None:
        state = self._state
        rest = self._buf[self._pos :]
        self._pos = len(self._buf)
        # Whatever a text state held back could only have been a marker's beginning;
        # the output ended, so it is plain text after all.
        if state in (self._st_reasoning, self._st_built_in):
            self._reasoning(rest)
        elif state == self._st_header:
            self._close_header("".join(self._header) + rest)
        elif state == self._st_args:
            self._close_args(rest)
        else:
            self._text(rest)

    # ---- text bodies and the space between messages

    def _read_text(self, markers: MarkerSet, emit: Callable[[str], None]) -> str | None:
        """Emit text up to the next marker of ``markers`` and consume it.

        Returns the marker, or ``None`` when the buffer holds none (all but a possible
        marker beginning was emitted).
        """
        # Searched in place (streaming a character at a time runs this per character).
        buf, start = self._buf, self._pos
        if "<" not in buf:  # every marker begins with "<": none here, none beginning
            self._pos = len(buf)
            emit(buf[start:] if start else buf)
            return None
        found = markers.pattern.search(buf, start)
        if found is None:
            end = len(buf) - markers.holdback(buf, start)
            self._pos = end
            emit(buf[start:end])
            return None
        pos = found.start()
        marker = found.group()
        self._pos = pos + len(marker)
        emit(buf[start:pos])
        self._marker_pos = pos
        return marker

    def _st_between(self) -> bool:
        """Between messages: stray text is content; ``<|message|>`` opens a body."""
        marker = self._read_text(_MARKERS, self._text)
        if marker is None:
            return False
        if marker == MESSAGE:
            self._state = self._st_content
        else:
            self._on_marker(marker)
        return True

    def _st_content(self) -> bool:
        """A final answer, a preamble or a message without channel."""
        marker = self._read_text(_MARKERS, self._text)
        if marker is None:
            return False
        self._on_marker(marker)
        return True

    def _st_reasoning(self) -> bool:
        """An analysis message: only what ends it (or starts the next) is a marker."""
        marker = self._read_text(_REASONING_MARKERS, self._reasoning)
        if marker is None:
            return False
        self._on_marker(marker)
        return True

    def _st_built_in(self) -> bool:
        """A message to a built-in tool (``python``, ``browser``): reasoning."""
        marker = self._read_text(_MARKERS, self._reasoning)
        if marker is None:
            return False
        self._on_marker(marker)
        return True

    def _on_marker(self, marker: str, at: int | None = None) -> None:
        """Act on a marker (``at``: its output offset, when the caller has it)."""
        if marker == START:
            self._open_header("", at)
        elif marker == CHANNEL:
            # A message that skipped <|start|> (or <|end|>): the header begins here.
            self._open_header(CHANNEL, at)
        elif marker in _MESSAGE_ENDS:
            self._state = self._st_between
        # <|constrain|>, or <|message|> inside a body, carry nothing there: dropped.

    # ---- headers

    def _open_header(self, initial: str, at: int | None = None) -> None:
        # The output offset only when a header opens (most markers open none); the
        # buffer is still the one the marker was found in. The prompt's header: 0.
        if at is None:
            at = self._at(self._buf, self._marker_pos)
        self._header_at = max(at, 0)
        self._state = self._st_header
        self._header = [initial]
        self._header_generated_from = 0
        self._header_from_prompt = False

    def _st_header(self) -> bool:
        buf, start = self._buf, self._pos
        if "<" not in buf:  # every marker begins with "<": none here, none beginning
            self._pos = len(buf)
            self._header.append(buf[start:] if start else buf)
            return False
        found = _MARKERS.pattern.search(buf, start)
        if found is None:
            end = len(buf) - _MARKERS.holdback(buf, start)
            self._pos = end
            if end > start:
                self._header.append(buf[start:end])
            return False
        pos = found.start()
        marker = found.group()
        self._pos = pos + len(marker)
        head = buf[start:pos]
        self._marker_pos = pos
        if marker == MESSAGE:
            self._header.append(head)
            self._open_body("".join(self._header))
        elif marker == START:
            if self._header_from_prompt:
                self._text_before_header(head)
            self._open_header("")
        elif marker == CHANNEL and self._header_from_prompt and self._text_before_header(head):
            self._open_header(CHANNEL)
        elif marker in _MESSAGE_ENDS:
            self._header.append(head)
            self._abandon_header("".join(self._header), marker)
        else:
            self._header.append(head + marker)
        return True

    def _text_before_header(self, head: str) -> bool:
        """Plain text the output wrote before its first marker, in the prompt's header.

        The prompt leaves a header open (``<|start|>assistant``); an output that writes
        text there and then a header of its own (``Let me search.\\n<|channel|>...``,
        as SGLang's gpt-oss parser tests feed) wrote content, not a role. A recipient
        (`` to=functions.f``) or Harmony markup there is the header's, as before.
        Returns whether the text was content.
        """
        generated = "".join(self._header)[self._header_generated_from :] + head
        if not generated.strip() or "<|" in generated or _recipient(generated) is not None:
            return False
        self._text(generated)
        return True

    def _abandon_header(self, header: str, marker: str) -> None:
        if _recipient(header) is not None:
            self._call_begins(self._header_at)
            raise self._error(
                f"tool call header {header!r} ended with {marker} before any arguments",
                where=f"tool call {self._call_count}",
            )
        self._state = self._st_between

    def _open_body(self, header: str) -> None:
        recipient = _recipient(header)
        if recipient is not None and recipient not in ("assistant", "user"):
            if not self._built_in(recipient):
                self._open_call(recipient)
                return
            # The model using its own built-in tool (python, browser): not a call of
            # the caller's; the message is part of its reasoning.
            self._state = self._st_built_in
            return
        analysis = _channel(header) == "analysis"
        self._state = self._st_reasoning if analysis else self._st_content

    def _built_in(self, recipient: str) -> bool:
        """A built-in recipient (``python``, ``browser.search``) not offered as a tool."""
        if recipient.startswith(_FUNCTIONS):
            return False
        root = recipient.split(".", 1)[0]
        return root in _BUILT_IN and recipient not in self.format.tools

    # ---- tool-call bodies

    def _open_call(self, recipient: str) -> None:
        name = recipient[len(_FUNCTIONS) :] if recipient.startswith(_FUNCTIONS) else recipient
        # The call's markup begins at its header, named or not: a broken call gives back
        # the text from there, not from the last call's end (which would repeat the
        # messages in between, already reported as reasoning or content).
        self._call_begins(self._header_at)
        if not name:
            raise self._error(
                f"tool call recipient {recipient!r} has no function name",
                where=f"tool call {self._call_count}",
            )
        self._begin_call(name)
        self._state = self._st_args
        self._scanner = None
        self._plain_args = False
        self._args_open = False
        self._args_emitted = False
        self._args_space = ""

    def _args_text(self, text: str) -> None:
        if text:
            self._args_emitted = True
            self._arguments(text)

    def _st_args(self) -> bool:
        if self._scanner is None and not self._plain_args and not self._choose_args_kind():
            return False
        scanner = self._scanner
        if self._args_open and scanner is not None:
            # Scanned in place (a state per character when streaming one at a time).
            buf, start = self._buf, self._pos
            end = scanner.feed(buf, start)
            stop = len(buf) if end < 0 else end
            self._pos = stop
            self._args_text(buf[start:stop])
            if end < 0:
                return False
            self._args_open = False
        buf, start = self._buf, self._pos
        found = _MARKERS.pattern.search(buf, start)
        if found is None:
            end = len(buf) - _MARKERS.holdback(buf, start)
            self._pos = end
            self._args_after(buf[start:end])
            return False
        pos = found.start()
        marker = found.group()
        self._pos = pos + len(marker)
        self._args_after(buf[start:pos])
        self._end_call()
        at = self._at(buf, pos)  # one offset for the call's end and the next header
        # A marker that opens the next header is not the call's: if that header breaks,
        # its text is given back from the marker on.
        self._call_ends(at if marker in _HEADER_OPENERS else at + len(marker))
        self._marker_pos = pos
        self._state = self._st_between  # <|message|> or <|constrain|>: not an end
        self._on_marker(marker, at)
        return True

    def _args_after(self, text: str) -> None:
        """Arguments text after a JSON value closed (or plain arguments).

        Whitespace between the value and the end marker is the template's, not the
        arguments': held until more text follows (then it is theirs, and the validator
        rejects what is not JSON), dropped at the end marker.
        """
        if self._plain_args:
            self._args_text(text)
            return
        kept = text.rstrip()
        if kept:
            self._args_text(self._args_space + kept)
            self._args_space = text[len(kept) :]
        else:
            self._args_space += text

    def _choose_args_kind(self) -> bool:
        """Decide JSON or plain arguments at the first non-space character."""
        first = _LEADING_SPACE.match(self._buf, self._pos).end()  # type: ignore[union-attr]
        if first == len(self._buf):
            self._pos = first  # whitespace before the value: not the arguments'
            return False
        if self._buf[first] in _JSON_OPENERS:
            self._pos = first
            self._scanner = ClosureScanner(any_value=True)
            self._args_open = True
        else:
            self._plain_args = True
        return True

    def _end_call(self) -> None:
        if not self._args_emitted:
            self._arguments("{}")
        self._scanner = None
        self._plain_args = False
        self._args_open = False

    # ---- end of output

    def _close_header(self, header: str) -> None:
        if _recipient(header) is not None:
            self._call_begins(self._header_at)
            raise self._error(
                f"output ended inside the header of a tool call ({header!r}); "
                "it was probably cut off by the token limit",
                where=f"tool call {self._call_count}",
            )
        generated = header[self._header_generated_from :]
        if self._header_from_prompt and "<|" not in generated:
            # The output never left the prompt's header and holds no Harmony structure:
            # it was plain text. A header the output opened itself is structure: dropped.
            self._text(generated)

    def _close_args(self, rest: str) -> None:
        scanner = self._scanner
        unfinished = scanner is not None and not scanner.closed
        if unfinished or (scanner is None and not self._plain_args):
            raise self._error(
                "output ended inside the arguments of tool call "
                f"{self._call_count - 1}; it was probably cut off by the token limit",
                where=f"tool call {self._call_count - 1}",
            )
        if self._plain_args:
            self._args_text(rest)


def _recipient(header: str) -> str | None:
    match = _RECIPIENT.search(header)
    return match.group(1) if match else None


def _channel(header: str) -> str | None:
    match = _CHANNEL_NAME.search(header)
    return match.group(1) if match else None


class HarmonyFormat(Format):
    """The gpt-oss Harmony format (one variant, ``"gpt-oss"``)."""

    family = "harmony"
    markers = (START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL, END_OF_TEXT)

    def _open_stream(self, id_prefix: str | None) -> HarmonyStream:
        """Start an incremental parse of one output (the family's parser).

        Args:
            id_prefix: Prefix of generated call ids; random per stream when ``None``.
        """
        return HarmonyStream(self, id_prefix=id_prefix)


def make(
    variant: str,
    *,
    tools: Sequence[Mapping[str, Any]] | None = None,
    generation_prompt: str | None = None,
) -> HarmonyFormat:
    """Build the Harmony format (the registry's entry point).

    Args:
        variant: ``"gpt-oss"``.
        tools: OpenAI-style tool definitions (Harmony arguments are JSON, so they are
            not needed for typing).
        generation_prompt: The text after the last message; ``None`` means the
            standard ``<|start|>assistant``.
    """
    return HarmonyFormat(variant, tools=tools, generation_prompt=generation_prompt)
