"""OpenAI Chat Completions stream decoder (``chat.completion.chunk`` objects).

Maps ``choices[0].delta`` to the assembler: ``content`` is answer text, ``refusal`` a
refusal part of its own (the turn is then ``refused``),
``reasoning_content`` / ``reasoning`` (DeepSeek, vLLM, OpenRouter) are reasoning, and
each ``tool_calls[]`` entry is a fragment keyed by its ``index`` (a ``custom`` entry,
``{"type": "custom", "custom": {name?, input?}}``, is a free-form call whose input
fragments are raw text). A ``finish_reason``
ends the turn; a usage-only chunk (``stream_options.include_usage``) may follow it.
Only choice 0 is assembled (``n > 1`` is reported with a notice, once).

Dialects of OpenAI-compatible servers: ``null`` in an optional field is absent (SDK
objects dump missing fields as ``None``); ``delta.content`` as a list of content
chunks (Mistral's dialect) is decoded when every chunk is text or thinking (reasoning),
and rejected with an error naming the dialect otherwise; a stream that sends ``[DONE]`` without ever
sending a finish reason ended normally (the reason is inferred, with a notice: tool
calls present means ``tool_calls``); an ``error`` object in any chunk raises
``ProviderStreamError`` carrying the partial turn. ``[DONE]`` may also be fed to
``feed`` as the string ``"[DONE]"``.

Sources: ``delta.annotations`` (``url_citation`` objects: OpenAI's search models,
OpenRouter) and Perplexity's top-level ``citations`` (URLs) and ``search_results``
(repeated in every chunk; those of the last chunk before the finish are kept) become ``TextPart.citations``, as the
Responses and Anthropic ones do (:func:`chat_citations`). Perplexity sends usage in
every chunk, so its sources are read where usage is, off the per-fragment path.

``OpenAIChatStream(keep_logprobs=True)`` keeps ``choices[0].logprobs`` (its ``content``
and ``refusal`` token lists) on ``Turn.logprobs``. Off by default, and then nothing is
looked at for it: the check sits on the text path, never on a call's fragment.
"""

from __future__ import annotations

from typing import Any, Final

from ..errors import ProtocolError, ProviderStreamError, ToolwireError
from .assembler import Assembler, dump_json
from .content_calls import ContentCalls, finish_turn
from .events import NEW_BY_SLOTS, OBJECT_NEW, Event, ToolCallDelta
from .fields import api_error, as_dict, as_index, as_list, as_object, as_text, opt_text
from .stream import StreamDecoder
from .usage import openai_usage

__all__ = ["OpenAIChatStream", "chat_citations", "keep_logprobs", "thinking_text"]

_NO_ITEMS: Final[list[Any]] = []  # a chunk without choices loops over this (never changed)


class OpenAIChatStream(StreamDecoder):
    """Decodes one OpenAI Chat Completions streamed response into a ``Turn``."""

    provider = "OpenAI Chat Completions"

    def __init__(
        self,
        *,
        keep_logprobs: bool = False,
        deltas: bool = True,
        content_calls: ContentCalls | None = None,
    ) -> None:
        """``keep_logprobs``: keep token log probabilities on ``Turn.logprobs``.
        ``deltas=False``: no ``ToolCallDelta`` per arguments fragment, and no
        ``ToolCallStarted`` for a call whole in the chunk that opens it (its
        ``ToolCallReady`` alone), for a consumer that wants only whole calls and the
        turn, which is the same.
        ``content_calls``: read ``content`` with a model family's call markup (calls a
        server left in the answer text, see ``wire.content_calls``); one per turn."""
        super().__init__(deltas=deltas)
        self._content = content_calls
        self._other_choices = False
        self._keep_logprobs = keep_logprobs
        self._sources: dict[str, Any] | None = None  # the last chunk with top-level sources
        self._cited = False  # they were attached (once: Perplexity repeats them)

    def feed(self, item: Any) -> list[Event]:  # noqa: PLR0912, PLR0915 — the flat feed of the hot path (ARCHITECTURE)
        """Consume one ``chat.completion.chunk`` (a dict or an SDK object); return events.

        This is the per-fragment hot loop of every streamed turn, measured against a
        hand-written floor in bench/bench_assembly.py, so it is written flat: the common
        chunk (one arguments fragment of an open call) costs a few dict lookups, an
        append and one event, with no further Python call. Everything else goes
        through the helpers below and the assembler's methods.
        """
        if self._dead:
            self._check_open()
        asm = self._assembler
        out = asm.events  # the assembler's own list: the flat path appends to it too
        self._items += 1
        # The locals are typed so that the compiled build (hatch_build.py) uses dict
        # operations directly; every value's type is tested before it reaches one, so a
        # wrong type is a ProtocolError by decision. The tests are written inline (a
        # class comparison each), and the as_* helper is called only to raise: a call
        # per test cost half again the per-fragment time (bench/bench_assembly.py).
        # Only toolwire's own errors are caught: anything else is a bug and propagates.
        try:
            chunk: dict[str, Any] = item if type(item) is dict else self._as_chunk(item)
            raw_choices = chunk.get("choices")
            if raw_choices and type(raw_choices) is not list:
                as_list(raw_choices, "choices")
            # Lists typed once tested: the compiled build loops over them by index, in C,
            # where an untyped value's loop made an iterator object (bench/README.md).
            choices: list[Any] = raw_choices or _NO_ITEMS  # read, never changed
            choice: dict[str, Any]
            for raw_choice in choices:
                if type(raw_choice) is not dict:
                    as_object(raw_choice, "choices[]")
                choice = raw_choice
                if choice.get("index", 0):
                    self._other_choice()
                    continue
                raw_delta = choice.get("delta")
                if raw_delta:
                    if type(raw_delta) is not dict:
                        as_object(raw_delta, "choices[].delta")
                    delta: dict[str, Any] = raw_delta
                    raw_calls = delta.get("tool_calls")
                    if raw_calls:
                        if type(raw_calls) is not list:
                            as_list(raw_calls, "delta.tool_calls")
                        tool_calls: list[Any] = raw_calls
                        tc: dict[str, Any]
                        for raw_tc in tool_calls:
                            if type(raw_tc) is not dict:
                                as_object(raw_tc, "delta.tool_calls[]")
                            tc = raw_tc
                            raw_fn = tc.get("function")
                            if type(raw_fn) is not dict:
                                if raw_fn is not None:
                                    as_object(raw_fn, "tool_calls[].function")
                                self._tool_call(tc, None)  # a custom call, or an id or index alone
                                continue
                            fn: dict[str, Any] = raw_fn
                            if "id" not in tc and "name" not in fn:
                                args = fn.get("arguments")
                                # Any, not int: a missing or odd index must miss here
                                # (and be checked by the assembler), not fail the
                                # compiled build's type check.
                                index: Any = tc.get("index")
                                call = asm.calls.get(index) if type(index) is int else None
                                if call is not None and type(args) is str and args:
                                    # Assembler.arguments, written out (see its comment).
                                    text: str = args
                                    call.parts.append(text)
                                    # The flag read here, not once a chunk: a chunk that
                                    # opens a call never needs it (bench/README.md,
                                    # thirteenth pass).
                                    if self._deltas:
                                        ev: ToolCallDelta
                                        if NEW_BY_SLOTS:  # the pure build (events.py)
                                            ev = OBJECT_NEW(ToolCallDelta)
                                            ev.index = call.index
                                            ev.arguments = text
                                        else:
                                            ev = ToolCallDelta(call.index, text)
                                        out.append(ev)
                                    if "}" in text and not call.ready and text.rstrip()[-1] == "}":
                                        asm.scan(call)
                                    continue
                            else:
                                # A call's first fragment: its four values tested here
                                # as _tool_call's checks would, then opened by
                                # start_call, past tool_fragment's general path.
                                start: Any = tc.get("index")
                                call_id: Any = tc.get("id")
                                call_name: Any = fn.get("name")
                                call_args: Any = fn.get("arguments", "")
                                if (
                                    type(start) is int
                                    and type(call_id) is str
                                    and type(call_name) is str
                                    and type(call_args) is str
                                ):
                                    asm.start_call(start, call_id, call_name, call_args)
                                    continue
                            self._tool_call(tc, fn)
                        if len(delta) > 1:
                            self._delta_text(delta)
                            if self._keep_logprobs:
                                self._logprobs(choice)
                    else:
                        self._delta_text(delta)
                        if self._keep_logprobs:
                            self._logprobs(choice)
                elif self._keep_logprobs:
                    self._logprobs(choice)
                if choice.get("finish_reason"):
                    self._finish(choice["finish_reason"])
            if chunk.get("usage") or "error" in chunk:
                self._usage_or_error(chunk)
        except ToolwireError as exc:  # malformed data, checked at the door; bugs propagate
            raise self._fail(exc) from None
        # Assembler.take_events, written out: a call per chunk cost 3% of the pure
        # build's per-fragment time (bench/count_assembly.py). ``out`` is the list the
        # assembler appended to, as nothing takes events during a feed.
        asm.events = []
        return out

    def _as_chunk(self, item: Any) -> dict[str, Any]:
        """An SDK object as a dict; the string ``"[DONE]"`` as the end marker (an empty chunk)."""
        if item == "[DONE]":
            self._on_done_marker()
            return {}
        return as_dict(item)

    def _other_choice(self) -> None:
        if not self._other_choices:
            self._other_choices = True
            self._assembler.notice(
                "other_choices_ignored", "only choice 0 is assembled; ask for n=1"
            )

    def _tool_call(self, tc: dict[str, Any], fn: dict[str, Any] | None) -> None:
        raw_index = tc.get("index")
        index = None if raw_index is None else as_index(raw_index, "tool_calls[].index")
        id = opt_text(tc.get("id"), "tool_calls[].id")
        if not fn:
            custom = tc.get("custom")
            if custom is not None or tc.get("type") == "custom":
                self._custom_call(index, id, custom)
                return
            self._assembler.tool_fragment(index, id, None, None)
            return
        args = fn.get("arguments")
        if args is not None and type(args) is not str:
            args = self._coerce_arguments(args)
        name = opt_text(fn.get("name"), "tool_calls[].function.name")
        self._assembler.tool_fragment(index, id, name, args)

    def _custom_call(self, index: int | None, id: str | None, custom: Any) -> None:
        """A fragment of a custom (free-form input) tool call: ``custom: {name?, input?}``."""
        if index is None:
            raise ProtocolError("a custom tool call fragment has no index")
        fields = as_object(custom, "tool_calls[].custom") if custom is not None else {}
        name = opt_text(fields.get("name"), "tool_calls[].custom.name")
        text = opt_text(fields.get("input"), "tool_calls[].custom.input")
        self._assembler.custom_call(index, id, name, text)

    def _delta_text(self, delta: dict[str, Any]) -> None:
        asm = self._assembler
        content = delta.get("content")
        if content:
            if content.__class__ is list:
                _content_chunks(asm, content)
            elif self._content is not None:
                self._content.text(asm, as_text(content, "delta.content"))
            else:
                asm.text(as_text(content, "delta.content"))
        # A streamed text delta holds its content alone (the first one its role too):
        # nothing else to look up then, where each of the four other keys read below was
        # a lookup per text chunk (bench/README.md, eleventh pass).
        if not len(delta) - ("content" in delta) - ("role" in delta):
            return
        annotations = delta.get("annotations")
        if annotations:
            chat_citations(asm, {"annotations": annotations})
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            asm.reasoning(as_text(reasoning, "delta.reasoning_content"))
        refusal = delta.get("refusal")
        if refusal:
            asm.refusal(as_text(refusal, "delta.refusal"))

    def _logprobs(self, choice: dict[str, Any]) -> None:
        """Keep a choice's token log probabilities (only with ``keep_logprobs``)."""
        keep_logprobs(self._assembler, choice.get("logprobs"), "choices[].logprobs")

    def _finish(self, reason: Any) -> None:
        if self._sources is not None:
            self._cite(self._sources)
        finish_turn(self._assembler, as_text(reason, "finish_reason"), self._content)
        self._ended = True

    def _usage_or_error(self, item: dict[str, Any]) -> None:
        error = item.get("error")
        if error is not None:
            # Also when the chunk still has choices (OpenRouter sends the error in a
            # chunk with finish_reason "error"): the turn did not finish, whatever came.
            raise self._stream_error(error)
        usage = item.get("usage")
        if usage:
            self._assembler.set_usage(openai_usage(as_object(usage, "usage")))
        if item.get("citations") or item.get("search_results"):
            if self._assembler.finish_reason is None:
                self._sources = item  # attached when the turn finishes
            else:
                self._cite(item)

    def _cite(self, holder: dict[str, Any]) -> None:
        """Attach the top-level sources once, at the end of the text."""
        self._sources = None
        if not self._cited:
            self._cited = True
            chat_citations(self._assembler, holder)

    def _coerce_arguments(self, args: Any) -> str:
        """Some servers send arguments as an object; keep it, as JSON text, and say so."""
        if isinstance(args, (dict, list)):
            self._assembler.notice(
                "arguments_not_string",
                "tool-call arguments arrived as an object, not a JSON string",
            )
            return dump_json(args, "tool_calls[].function.arguments")
        raise ProtocolError(
            f"tool_calls[].function.arguments must be a string, got {type(args).__name__}"
        )

    def _stream_error(self, error: Any) -> ProviderStreamError:
        base = api_error(error, error)
        return ProviderStreamError(
            base.message, error_type=base.error_type, body=base.body, partial=self._partial_turn()
        )

    def _on_done_marker(self) -> None:
        asm = self._assembler
        if self._sources is not None:
            self._cite(self._sources)
        if asm.finish_reason is None:
            if self._content is not None:
                self._content.finish_reason(asm, None)  # flushed: the calls are known
            # [DONE] is the server's own end marker: the stream ended normally, only the
            # finish reason is missing (some OpenAI-compatible servers never send one).
            reason = "tool_calls" if asm.call_count() else "stop"
            asm.notice(
                "finish_reason_inferred",
                f"the stream ended with [DONE] but no finish reason; inferred {reason!r}",
            )
            asm.finish(reason)
        self._ended = True


def keep_logprobs(asm: Assembler, logprobs: Any, name: str) -> None:
    """Hand a Chat ``logprobs`` object's ``content`` and ``refusal`` lists to ``asm``."""
    if logprobs is None:
        return
    found = as_object(logprobs, name)
    for key in ("content", "refusal"):
        entries = found.get(key)
        if entries is not None:
            asm.logprobs(key, as_list(entries, f"{name}.{key}"))


def chat_citations(asm: Assembler, holder: dict[str, Any]) -> None:
    """Attach the sources a Chat message or chunk carries to the text being built.

    ``annotations`` (each kept verbatim: ``{"type": "url_citation", "url_citation":
    {...}}``), and Perplexity's top-level ``search_results`` (each kept with ``"type":
    "search_result"``) and ``citations`` (URLs; each one no search result names becomes
    ``{"type": "url_citation", "url": ...}``).
    """
    for raw in as_list(holder.get("annotations") or [], "annotations"):
        asm.citation(as_object(raw, "annotations[]"))
    named: set[str] = set()
    for raw in as_list(holder.get("search_results") or [], "search_results"):
        result = as_object(raw, "search_results[]")
        url = result.get("url")
        if url.__class__ is str:
            named.add(url)
        asm.citation({"type": "search_result", **result})
    for raw in as_list(holder.get("citations") or [], "citations"):
        url = as_text(raw, "citations[]")
        if url not in named:
            asm.citation({"type": "url_citation", "url": url})


def _content_chunks(asm: Assembler, chunks: list[Any]) -> None:
    """``delta.content`` as a list of typed chunks (Mistral's dialect, not OpenAI's):
    ``text`` chunks are text, ``thinking`` chunks (Magistral) reasoning."""
    for raw in chunks:
        chunk = as_object(raw, "delta.content[]")
        kind = chunk.get("type")
        if kind == "text":
            asm.text(as_text(chunk.get("text"), "delta.content[].text"))
        elif kind == "thinking":
            asm.reasoning(thinking_text(chunk.get("thinking"), "delta.content[].thinking"))
        else:
            raise ProtocolError(
                f"delta.content holds a {kind!r} chunk: this server streams content as a list "
                "of typed chunks (Mistral's dialect, not OpenAI's), and only text and thinking "
                "chunks can be decoded"
            )


def thinking_text(value: Any, name: str) -> str:
    """A Mistral ``thinking`` chunk's text: a string, or a list of ``text`` chunks."""
    if value.__class__ is str:
        return str(value)
    pieces: list[str] = []
    for raw in as_list(value, name):
        chunk = as_object(raw, f"{name}[]")
        if chunk.get("type") != "text":
            raise ProtocolError(f"{name} holds a {chunk.get('type')!r} chunk, not text")
        pieces.append(as_text(chunk.get("text"), f"{name}[].text"))
    return "".join(pieces)
