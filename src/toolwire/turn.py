"""A finished model turn, in its two shapes: the verbatim call and the execution request.

``Turn.tool_calls`` are the protocol-faithful calls that go back into history verbatim;
``Turn.requests`` are the execution requests (parsed input, or why parsing failed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .messages import AssistantMessage, ToolCall, Usage

try:  # read by mypyc when it compiles this module; a no-op at run time
    from mypy_extensions import mypyc_attr
except ImportError:  # not installed (it comes with mypy): the no-op is all that is needed

    def mypyc_attr(*_: str, **__: object) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls


__all__ = ["Notice", "NoticeKind", "ToolRequest", "Turn"]

NoticeKind = Literal[
    # the assembler, for every provider and format
    "arguments_mismatch",
    "arguments_repeated",
    "call_split",
    "changed_after_ready",
    "empty_call",
    "finish_reason_mismatch",
    "id_changed",
    "lone_surrogate",
    "missing_index",
    "name_repeated",
    # OpenAI Chat (and compatible servers)
    "arguments_not_string",
    "calls_from_content",
    "calls_in_content",
    "finish_reason_inferred",
    "other_choices_ignored",
    "placeholder_ignored",
    # Anthropic
    "pause_turn_continued",
    "refusal",
    "unknown_block",
    "unknown_delta",
    # OpenAI Responses
    "server_call_kept",
    "unsupported_item",
    # the open-weight text formats
    "malformed_call",
    "repaired_call",
    "truncated_call",
    # the HTTP providers
    "retry",
    # the fallback model
    "fallback",
    # the embedded model
    "repetition_stopped",
    # the agent loop
    "tool_choice_ignored",
    "call_shaped_text",
    # the proxy (toolwire serve)
    "arguments_repaired",
    "call_not_sent",
    "unknown_tool",
]
"""What a :class:`Notice` reports; each kind is described in its docstring."""


# The three classes below are built once per call or per turn by the compiled wire
# layer, and this module is compiled with it (hatch_build.py): there each is a native
# class, and a constructor written out (as the event classes' are) is a C function,
# where the one @dataclass generates runs interpreted, about 2,000 instructions a call
# (bench/README.md, "Per-turn assembly"). @dataclass still gives them equality, repr,
# fields() and replace(). Subclasses of one's own stay possible in both builds.
@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class Notice:
    """Something suspicious that did not make the turn unusable.

    ``index`` is the provider's index of the call it concerns, when it concerns one.
    ``kind`` (:data:`NoticeKind`) is one of:

    The assembler, whatever the provider or format:

    * ``arguments_mismatch`` — a final arguments text differs from the streamed
      fragments; the final text is kept.
    * ``arguments_repeated`` — a fragment with the call's id re-sent its arguments so
      far whole (cumulative, not a delta); only the new text is added.
    * ``call_split`` — a fragment with a new id and a name arrived on the index of a
      call that has an id (servers that put parallel calls all on ``index: 0``); a new
      call was started at the next free index.
    * ``changed_after_ready`` — a call changed after ``ToolCallReady`` announced it;
      the turn's call replaces the one announced (an early start is discarded).
    * ``empty_call`` — the finish reason is ``tool_calls`` but the turn has no call.
    * ``finish_reason_mismatch`` — the turn has calls but another finish reason.
    * ``id_changed`` — a later fragment named another id (and no name) for a call; the
      first is kept.
    * ``lone_surrogate`` — a lone surrogate in text, arguments or output was replaced
      by U+FFFD (it cannot be sent back to any provider).
    * ``missing_index`` — a call fragment without an index, merged into the only open
      call or starting a new one.
    * ``name_repeated`` — a fragment with the call's id re-sent its whole name (some
      servers send it with every fragment); it is kept once.

    OpenAI Chat and compatible servers:

    * ``arguments_not_string`` — a call's arguments arrived as an object, kept as JSON
      text.
    * ``calls_from_content`` — call markup a served open-weight model left in its
      answer text (the server did not parse it) was read as tool calls
      (``text_calls``; Chat and Responses).
    * ``calls_in_content`` — the answer text holds call markup, kept as text because no
      tools were offered or ``tool_choice`` was ``none``.
    * ``finish_reason_inferred`` — the stream ended with ``[DONE]`` but no finish
      reason; one was inferred.
    * ``other_choices_ignored`` — the response has more than one choice; only choice
      0 is assembled.
    * ``placeholder_ignored`` — an empty legacy ``function_call`` was dropped.

    Anthropic:

    * ``pause_turn_continued`` — the API paused a long server-tool turn
      (``pause_turn``); toolwire continued it with another request, and the caller
      gets one turn.
    * ``refusal`` — the model refused; the notice keeps ``stop_details``' category and
      explanation.
    * ``unknown_block`` — a content block of a type toolwire does not know, kept
      verbatim as a ``ProviderPart``.
    * ``unknown_delta`` — a ``content_block_delta`` of a type toolwire does not know,
      dropped.

    OpenAI Responses:

    * ``server_call_kept`` — a ``custom_tool_call`` of a tool the request never
      offered (xAI's server-side tools) was run by the server; kept verbatim as a
      ``ProviderPart``, not run here.
    * ``unsupported_item`` — an output item of a type toolwire does not run, kept
      verbatim as a ``ProviderPart``.

    The open-weight text formats (:mod:`toolwire.formats`):

    * ``malformed_call`` — a call's markup is malformed; its text from the first marker
      on is content.
    * ``truncated_call`` — the output ended inside a call (cut off by the token limit):
      the call is dropped and its text is not content either (an opening marker at the
      very end included); calls completed before it stay, and so does text before it.
    * ``repaired_call`` — a call recovered from markup missing its last closing tag
      (``ToolRequest.repaired``).

    The HTTP providers:

    * ``retry`` — a request failed and is tried again: why, which try, and the wait.

    The fallback model (``toolwire.FallbackModel``):

    * ``fallback`` — a model failed before any output; the request goes to the next
      model: which failed, why, and which is next.

    The embedded model (``toolwire.LocalModel``):

    * ``repetition_stopped`` — the generation's end was one piece of text repeated
      (the same JSON object or line again and again): it was stopped early and the turn
      ends with finish reason ``length`` (:mod:`toolwire.providers.local_repeat`).

    The agent loop:

    * ``tool_choice_ignored`` — the model answered without a call although
      ``tool_choice`` asked for one.
    * ``call_shaped_text`` — a turn without calls wrote text that looks like a tool
      call (a JSON object naming a tool, ``name`` with ``arguments``, or a family's
      call marker) that nothing read as one: no tool ran, and the text is not an
      answer the model meant (:mod:`toolwire.policies.call_shaped`).

    The proxy (``toolwire serve``), reported to its client:

    * ``arguments_repaired`` — a call's arguments were not a JSON object; the client
      got toolwire's repair of them.
    * ``call_not_sent`` — a call was not sent as a call (arguments beyond repair, no
      tools offered, or a second call with ``parallel_tool_calls: false``); its text
      is content.
    * ``unknown_tool`` — a call names a tool the request did not offer (sent as it is).
    """

    kind: NoticeKind
    message: str
    index: int | None = None

    def __init__(self, kind: NoticeKind, message: str, index: int | None = None) -> None:
        self.kind = kind
        self.message = message
        self.index = index


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class ToolRequest:
    """One call, ready for execution.

    ``input`` is the parsed arguments (``None`` when parsing failed), ``error`` is
    ``None`` or the reason the arguments are not valid JSON, and ``raw_arguments`` is
    the text exactly as received. ``index`` is the provider's index of the call.
    ``repaired`` is set when a text format recovered the call from markup with a
    missing closing tag: the tools' repair policy then decides whether it may run. The
    request a permission gate (an approver) gets carries the validated ``input`` the
    tool will run with, and ``repaired`` is also set there when repair recovered
    malformed JSON arguments (``raw_arguments`` keeps what the model sent).
    ``freeform`` marks a custom tool call: ``input`` is then the raw input text itself
    (never parsed as JSON) and only a free-form tool accepts it.
    """

    id: str
    name: str
    raw_arguments: str
    input: Any
    error: str | None = None
    index: int = 0
    repaired: bool = False
    freeform: bool = False

    def __init__(
        self,
        id: str,
        name: str,
        raw_arguments: str,
        input: Any,
        error: str | None = None,
        index: int = 0,
        repaired: bool = False,
        freeform: bool = False,
    ) -> None:
        self.id = id
        self.name = name
        self.raw_arguments = raw_arguments
        self.input = input
        self.error = error
        self.index = index
        self.repaired = repaired
        self.freeform = freeform


@mypyc_attr(allow_interpreted_subclasses=True)
@dataclass(slots=True)
class Turn:
    """Everything one model response produced.

    ``refused`` is set when the model declined to answer: a refusal part (OpenAI's
    ``refusal``) or Anthropic's ``stop_reason: "refusal"``. ``logprobs`` holds the
    provider's token log probabilities when the decoder was asked to keep them
    (``keep_logprobs=True``), in OpenAI Chat's shape ``{"content": [...],
    "refusal": [...]}`` (each list the provider's token entries, verbatim); ``None``
    otherwise. ``continuations`` counts the extra requests a model made to finish the
    turn itself (Anthropic's ``pause_turn``): usage limits count them as requests.
    ``model`` names the model that answered when a wrapper chose among several
    (``toolwire.FallbackModel``); ``None``: the model the request was sent to.
    """

    message: AssistantMessage
    requests: list[ToolRequest]
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    notices: list[Notice] = field(default_factory=list)
    refused: bool = False
    logprobs: dict[str, list[Any]] | None = None
    continuations: int = 0
    model: str | None = None

    def __init__(  # noqa: PLR0913, PLR0917 — the dataclass's fields, positional as before
        self,
        message: AssistantMessage,
        requests: list[ToolRequest],
        finish_reason: str | None = None,
        usage: Usage | None = None,
        notices: list[Notice] | None = None,
        refused: bool = False,
        logprobs: dict[str, list[Any]] | None = None,
        continuations: int = 0,
        model: str | None = None,
    ) -> None:
        """``usage`` and ``notices`` default to new empty ones (``Usage()``, ``[]``)."""
        self.message = message
        self.requests = requests
        self.finish_reason = finish_reason
        self.usage = Usage() if usage is None else usage
        self.notices = [] if notices is None else notices
        self.refused = refused
        self.logprobs = logprobs
        self.continuations = continuations
        self.model = model

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The calls as the model sent them, in index order."""
        return self.message.tool_calls

    @property
    def text(self) -> str:
        """The answer text."""
        return self.message.text

    @property
    def reasoning(self) -> str:
        """The reasoning text."""
        return self.message.reasoning

    @property
    def refusal(self) -> str:
        """The refusal text (empty unless the model refused in words)."""
        return self.message.refusal
