"""What a parse produces: calls, results, the error, and folding events into a result."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import CallerError
from ..turn import Notice
from ..wire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallRetracted,
    ToolCallStarted,
)

__all__ = [
    "MALFORMED",
    "REPAIRED",
    "TRUNCATED",
    "EventCollector",
    "ParseResult",
    "ParsedCall",
    "collect_events",
    "to_openai_delta",
]

#: Notice kinds a format stream emits (``Notice.kind``, see ``toolwire.turn.NoticeKind``).
MALFORMED: Final = "malformed_call"
TRUNCATED: Final = "truncated_call"
REPAIRED: Final = "repaired_call"


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call found in the output.

    Attributes:
        name: The function name.
        arguments: The arguments as a JSON text (``"{}"`` for a call without any).
        id: The id the format carried, or the one generated for it.
        repaired: The format recovered the call from markup with a missing closing
            tag (a ``repaired_call`` notice says which); the tools' repair policy
            decides whether such arguments may run.
    """

    name: str
    arguments: str
    id: str | None = None
    repaired: bool = False


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A whole model output, separated.

    Attributes:
        content: The answer text, or ``None`` when the output has none (nothing, or
            only whitespace). The separator whitespace a chat template puts at marker
            boundaries (after ``</think>``, between calls, before a call marker) and
            at the two ends is not part of it; whitespace inside the text is exact.
        reasoning: The reasoning ("thinking") text, trimmed the same way.
        tool_calls: The calls, in output order.
        notices: What was wrong with the markup and where (``malformed_call``,
            ``malformed_call``: the call's text is in ``content`` instead;
            ``truncated_call``: the output ended inside the call, which is dropped,
            its text with it;
            ``repaired_call``: the call was recovered and flagged).
    """

    content: str | None = None
    reasoning: str = ""
    tool_calls: tuple[ParsedCall, ...] = ()
    notices: tuple[Notice, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (what ``toolwire parse`` prints)."""
        out: dict[str, Any] = {
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments}
                | ({"repaired": True} if c.repaired else {})
                for c in self.tool_calls
            ],
        }
        if self.notices:
            out["notices"] = [
                {"kind": n.kind, "message": n.message, "index": n.index} for n in self.notices
            ]
        return out


@dataclass(slots=True)
class _CallSlot:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    repaired: bool = False


class EventCollector:
    """Folds format events into a :class:`ParseResult`.

    A ``ToolCallRetracted`` removes its call; a ``repaired_call`` notice flags its call.
    """

    __slots__ = ("_calls", "_content", "_notices", "_reasoning")

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, _CallSlot] = {}
        self._notices: list[Notice] = []

    def add(self, events: Iterable[Event]) -> None:
        """Fold more events in."""
        calls = self._calls
        for event in events:
            # The event classes are final: one identity test each (a whole parse folds
            # every event here), argument fragments first as the most frequent.
            if type(event) is ToolCallDelta:
                slot = calls.get(event.index)
                if slot is None:
                    slot = calls[event.index] = _CallSlot()
                slot.arguments.append(event.arguments)
            elif type(event) is TextDelta:
                self._content.append(event.text)
            elif type(event) is ToolCallStarted:
                calls[event.index] = _CallSlot(event.id, event.name or "")
            elif type(event) is ReasoningDelta:
                self._reasoning.append(event.text)
            elif isinstance(event, ToolCallRetracted):
                self._calls.pop(event.index, None)
            elif isinstance(event, Notice):
                self._notices.append(event)
                slot = self._calls.get(event.index) if event.index is not None else None
                if slot is not None and event.kind == REPAIRED:
                    slot.repaired = True

    def result(self) -> ParseResult:
        """Return everything folded in so far."""
        calls = tuple(
            ParsedCall(slot.name, "".join(slot.arguments), slot.id, slot.repaired)
            for _, slot in sorted(self._calls.items())
        )
        content = "".join(self._content)
        return ParseResult(content or None, "".join(self._reasoning), calls, tuple(self._notices))


def collect_events(events: Iterable[Event]) -> ParseResult:
    """Fold a sequence of format events into a :class:`ParseResult`."""
    collector = EventCollector()
    collector.add(events)
    return collector.result()


def to_openai_delta(event: Event) -> dict[str, Any] | None:
    """Turn a format event into an OpenAI chat-completion ``delta`` dict.

    An OpenAI delta cannot take a call back, so a ``ToolCallRetracted`` (a call that
    turned out cut off or malformed in the default streaming mode) raises
    :class:`~toolwire.errors.CallerError` instead of being dropped silently: a server
    that re-serves deltas streams with ``fmt.stream(hold_calls=True)``, which emits
    each call only once it is complete and never retracts one. Notices have no delta
    (``None``); the retracted call's text arrives afterwards as content.

    Returns:
        ``{"content": ...}``, ``{"reasoning_content": ...}`` or ``{"tool_calls": [...]}``
        (``index``, ``id``, ``type``, ``function.name``, ``function.arguments``, as an
        OpenAI-compatible server streams them), or ``None`` for events a delta cannot
        carry.

    Raises:
        CallerError: ``event`` is a ``ToolCallRetracted``.
    """
    if isinstance(event, TextDelta):
        return {"content": event.text}
    if isinstance(event, ReasoningDelta):
        return {"reasoning_content": event.text}
    if isinstance(event, ToolCallStarted):
        call = {
            "index": event.index,
            "id": event.id,
            "type": "function",
            "function": {"name": event.name, "arguments": ""},
        }
        return {"tool_calls": [call]}
    if isinstance(event, ToolCallDelta):
        return {"tool_calls": [{"index": event.index, "function": {"arguments": event.arguments}}]}
    if isinstance(event, ToolCallRetracted):
        raise CallerError(
            f"tool call {event.index} was retracted ({event.reason}); an OpenAI delta "
            "cannot take a call back",
            hint="stream with fmt.stream(hold_calls=True) when re-serving deltas",
        )
    return None
