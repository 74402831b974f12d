"""What the client receives of one turn: toolwire's events made into Chat deltas.

The upstream's answer has been decoded into toolwire's events (the one assembler, with
calls left in ``content`` read by the family's parser, ``hold_calls``); :class:`Relay`
decides what of it the client gets, the same for a stream and a whole response:

- text as ``content`` and reasoning as ``reasoning_content``, as they arrive;
- each tool call once, when it is complete, with a sequential ``index`` and an id
  unique in the response in the form the family accepts back (Mistral's nine
  alphanumerics: the format's id factory); an upstream id is kept when it is both;
- arguments that always parse as a JSON object: repaired where toolwire's repair can
  (``arguments_repaired``), otherwise the call is not sent and its text is content
  (``call_not_sent``); ``parallel_tool_calls: false`` sends the first call only;
- ``finish_reason`` ``tool_calls`` exactly when calls were sent.

Every notice (the assembler's and the formats', and these) is reported to the client,
never silently: :attr:`Relay.notices`.
"""

from __future__ import annotations

import functools
import json
import re
from typing import TYPE_CHECKING, Any

from ..errors import RepairError
from ..messages import ToolCall, Usage
from ..run.model import TurnDone
from ..tools.repair import loads_lenient
from ..turn import Notice, ToolRequest, Turn
from ..wire.events import (
    Finished,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallReady,
    UsageReported,
)
from .request import ProxyCall
from .upstream import UpstreamItem

if TYPE_CHECKING:
    from ..formats.ids import IdFactory

__all__ = ["Delta", "Relay"]

Delta = dict[str, Any]
"""One Chat ``delta``: ``{"content": …}``, ``{"reasoning_content": …}``,
``{"refusal": …}`` or ``{"tool_calls": [call]}``."""

_ALNUM9 = re.compile(r"[A-Za-z0-9]{9}\Z")


class CallIds:
    """Ids unique in one response, in the form the family accepts back."""

    def __init__(self, family: tuple[str, str | None] | None) -> None:
        from ..formats.ids import AlphanumericIds

        factory = _factory_class(family)
        self._factory = factory()
        self._strict = issubclass(factory, AlphanumericIds)
        self._issued: set[str] = set()

    def accept(self, upstream: str, index: int) -> str:
        """``upstream`` when it is usable and new, else a fresh id."""
        ok = bool(upstream) and upstream not in self._issued
        if ok and self._strict:
            ok = _ALNUM9.match(upstream) is not None
        call_id = upstream if ok else self._fresh(index)
        self._issued.add(call_id)
        return call_id

    def _fresh(self, index: int) -> str:
        call_id = self._factory.make(index)
        while call_id in self._issued:  # only a caller's own id can collide with ours
            call_id = self._factory.make(index + len(self._issued))
        return call_id


class Relay:
    """Turns one turn's events into the client's deltas (see the module docstring)."""

    def __init__(self, call: ProxyCall) -> None:
        self._call = call
        self._ids: CallIds | None = None  # made for the first call sent (most turns: none)
        self._done: set[int] = set()  # assembler indices already decided
        self.sent = 0  # calls sent to the client
        self.upstream_finish: str | None = None
        self.usage: Usage | None = None
        self.turn: Turn | None = None
        self.notices: list[dict[str, Any]] = []

    def feed(self, item: UpstreamItem) -> list[Delta]:
        """One event (or the closing ``TurnDone``): the deltas the client gets now."""
        kind = type(item)
        if kind is TextDelta or kind is ReasoningDelta or kind is RefusalDelta:
            text: str = item.text  # type: ignore[union-attr]
            if not text:
                return []
            if kind is TextDelta:
                return [{"content": text}]
            return [{"reasoning_content" if kind is ReasoningDelta else "refusal": text}]
        if kind is ToolCallReady:
            assert isinstance(item, ToolCallReady)
            return self._decide(item.index, item.call, item.request)
        if kind is Finished:
            self.upstream_finish = item.reason  # type: ignore[union-attr]
        elif kind is UsageReported:
            self.usage = item.usage  # type: ignore[union-attr]
        elif kind is TurnDone:
            assert isinstance(item, TurnDone)
            return self._close(item.turn)
        return []

    @property
    def finish_reason(self) -> str:
        """``tool_calls`` when calls were sent; else the upstream's (``stop`` if none)."""
        if self.sent:
            return "tool_calls"
        reason = self.upstream_finish
        return "stop" if reason in (None, "tool_calls") else reason

    def _close(self, turn: Turn) -> list[Delta]:
        """The end of the turn: calls not yet decided (their arguments never closed)."""
        self.turn = turn
        self.usage = turn.usage
        self.upstream_finish = turn.finish_reason or self.upstream_finish
        self.notices[:0] = [notice_json(n) for n in turn.notices]
        calls = {call.id: call for call in turn.tool_calls}
        out: list[Delta] = []
        for request in sorted(turn.requests, key=lambda r: r.index):
            call = calls.get(request.id)
            if call is not None:
                out += self._decide(request.index, call, request)
        return out

    def _decide(self, index: int, call: ToolCall, request: ToolRequest) -> list[Delta]:
        if index in self._done:
            return []
        self._done.add(index)
        if not self._call.applies_calls:
            return self._not_sent(call, "no tools were offered, or tool_choice was none")
        if self._call.parallel is False and self.sent:
            return self._not_sent(call, "parallel_tool_calls is false and a call was sent")
        arguments = self._arguments(call, request)
        if arguments is None:
            return self._not_sent(call, "its arguments are not a JSON object toolwire can repair")
        if call.name not in {tool.name for tool in self._call.tools}:
            self.notices.append(
                _notice("unknown_tool", f"call to {call.name!r}, a tool not offered", index)
            )
        if self._ids is None:
            self._ids = CallIds(self._call.family)
        position = self.sent
        self.sent += 1
        function = {"name": call.name, "arguments": arguments}
        wire = {"index": position, "id": self._ids.accept(call.id, position), "type": "function"}
        wire["function"] = function
        return [{"tool_calls": [wire]}]

    def _arguments(self, call: ToolCall, request: ToolRequest) -> str | None:
        """The arguments as a JSON object's text, repaired if need be; ``None``: unusable."""
        if request.error is None and isinstance(request.input, dict):
            return call.arguments
        try:
            value, _ = loads_lenient(call.arguments or "{}")
        except RepairError:
            return None
        if not isinstance(value, dict):
            return None
        self.notices.append(
            _notice(
                "arguments_repaired",
                f"the arguments of {call.name!r} were not a JSON object and were repaired",
                request.index,
            )
        )
        return json.dumps(value, ensure_ascii=False)

    def _not_sent(self, call: ToolCall, why: str) -> list[Delta]:
        self.notices.append(
            _notice("call_not_sent", f"a call to {call.name!r} was not sent as a call: {why}")
        )
        text = f"{call.name}({call.arguments})"
        return [{"content": text}]


@functools.lru_cache(maxsize=64)
def _factory_class(family: tuple[str, str | None] | None) -> type[IdFactory]:
    """The id factory class of a family's format (the default one when none)."""
    from ..formats.ids import IdFactory

    if family is None:
        return IdFactory
    from ..formats.registry import make_format

    return make_format(*family).id_factory


def notice_json(notice: Notice) -> dict[str, Any]:
    """A turn's notice as the client is told it."""
    out: dict[str, Any] = {"kind": notice.kind, "message": notice.message}
    if notice.index is not None:
        out["index"] = notice.index
    return out


def _notice(kind: str, message: str, index: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "message": message}
    if index is not None:
        out["index"] = index
    return out
