"""A finished model turn, in its two shapes: the verbatim call and the execution request.

``Turn.tool_calls`` are the protocol-faithful calls that go back into history verbatim;
``Turn.requests`` are the execution requests (parsed input, or why parsing failed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .messages import AssistantMessage, ToolCall, Usage

__all__ = ["Notice", "ToolRequest", "Turn"]


@dataclass(slots=True)
class Notice:
    """Something suspicious that did not make the turn unusable.

    ``kind`` is one of ``empty_call`` (finish reason ``tool_calls`` without a call),
    ``finish_reason_mismatch`` (calls with another finish reason), ``missing_index``
    (a fragment without an index, merged into the only open call),
    ``arguments_mismatch`` (a final arguments text that differs from the fragments),
    ``trailing_data`` (text after the arguments JSON closed).
    """

    kind: str
    message: str
    index: int | None = None


@dataclass(slots=True)
class ToolRequest:
    """One call, ready for execution.

    ``input`` is the parsed arguments (``None`` when parsing failed), ``error`` is
    ``None`` or the reason the arguments are not valid JSON, and ``raw_arguments`` is
    the text exactly as received. ``index`` is the provider's index of the call.
    ``repaired`` is set when a text format recovered the call from markup with a
    missing closing tag: the tools' repair policy then decides whether it may run.
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
    """

    message: AssistantMessage
    requests: list[ToolRequest]
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    notices: list[Notice] = field(default_factory=list)
    refused: bool = False
    logprobs: dict[str, list[Any]] | None = None
    continuations: int = 0

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
