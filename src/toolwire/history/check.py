"""The one-result-per-call check, run on a history before every request.

Providers reject a history where a tool call has no result, a result answers no call,
or the results of one assistant turn are interrupted by another message (OpenAI Chat
needs the ``tool`` messages right after the assistant message; Anthropic needs the
``tool_result`` blocks first in the very next user turn). A 400 from the provider names
none of this, so the check runs first and names the offending call and its position.

The rule enforced, in one pass (linear time, one dictionary lookup per message):

* the results of an assistant message's calls come right after it — each call answered
  exactly once, in any order — before any user, system or assistant message;
* every result answers a call of the assistant message before it; a result's tool name
  is its call's name;
* call ids are unique within one assistant message. Across messages they may repeat:
  some servers number calls per turn (``call_0`` in every turn), and since results
  belong to the turn right before them, a call is known by (its turn, its id).

The history is checked again before every request, and most of it is turns as a run
appends them: every call answered right after its message, in call order. Such a turn
is taken at once, each condition tested for all its calls and results together in C;
the checker's pass decides everything else and words every error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import cast

from ..errors import HistoryError
from ..messages import (
    IS_CALL,
    AssistantMessage,
    Image,
    Message,
    ProviderPart,
    ReasoningPart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)

__all__ = ["check_history", "missing_results", "unanswered_by_turn"]


def check_history(messages: Sequence[Message]) -> None:
    """Raise if ``messages`` breaks the one-result-per-call rule.

    Args:
        messages: The history about to be sent, oldest first.

    Raises:
        HistoryError: naming the orphan call or result (``call_id``) and its position:
            a call without a result, a result without a call, a second result, a
            repeated call id, a result whose tool name differs from its call's, a
            message between a call and its result, or an entry that is not a message.
    """
    if not _passes(messages):
        _Checker().check(messages)  # raises, naming what is wrong


def _passes(messages: Sequence[Message]) -> bool:
    """Whether ``check_history`` passes ``messages``, each turn as a run appends it taken
    at once by :func:`_plain_turn` and anything else by the checker.

    The run sends its whole history again with every request, and most of it is such
    turns (a call's share of the checker's pass was two dictionary stores, a lookup and
    a delete). Skipped turns leave the checker's record of ids and positions behind,
    which only an error's words read: a history that fails here is checked again from
    the start, and that pass raises.
    """
    history = messages if messages.__class__ is list else list(messages)
    # Made at the first message the checker must see: a history of user and system
    # messages and plain turns (every run's first request) makes none.
    checker: _Checker | None = None
    position, end = 0, len(history)
    try:
        while position < end:
            message = history[position]
            if checker is None or not checker.waiting:  # no call waits for its result
                if message.__class__ is AssistantMessage:
                    answered = _plain_turn(message, history, position)
                    if answered >= 0:
                        position += 1 + answered
                        continue
                elif message.__class__ in _OPEN:  # what the checker's step would pass at once
                    position += 1
                    continue
            if checker is None:
                checker = _Checker()
            checker.step(position, message)
            position += 1
        if checker is not None:
            checker.require_answered("the end of the history")
    except HistoryError:
        return False
    return True


def _plain_turn(message: AssistantMessage, history: list[Message], position: int) -> int:
    """How many results answer the assistant ``message`` at ``position`` when it and they
    are what a run appends: parts of the four kinds the checker allows, each call's id,
    name and arguments strings, the ids unique and each call answered by the result at
    its place right after the message, that result a plain-text one with a ``ToolStatus``
    — all of it exact types, so that the checker would pass them in the same way
    (tests/history/test_check_fast.py); -1 otherwise, and the checker decides.

    Each condition is tested for the whole turn at once (a list of each field of the
    calls and the results, a set of their types, a comparison of two lists): a Python
    step per call was most of the check. The lists are comprehensions, not
    ``map(attrgetter(...))``: their ``LOAD_ATTR`` reads a slot at a fixed offset where
    ``attrgetter`` looks the name up for every item (less than half the instructions an
    item, bench/README.md). Types are tested before anything is compared, and the names
    compared the checker's way round (the call's first).
    """
    parts = message.parts
    if parts.__class__ is not list or not _TURN_PARTS.issuperset(map(type, parts)):
        return -1
    calls = list(filter(IS_CALL, parts))
    count = len(calls)
    window = history[position + 1 : position + 1 + count]
    if len(window) != count or not _RESULT.issuperset(map(type, window)):
        return -1
    results = cast("list[ToolResult]", window)  # each one's exact type tested just above
    ids = [call.id for call in calls]
    names = [call.name for call in calls]
    answers = [result.call_id for result in results]
    texts = chain(
        ids, names, [call.arguments for call in calls], answers, [r.content for r in results]
    )
    if not (
        _STR.issuperset(map(type, texts))
        and _STATUS.issuperset([type(r.status) for r in results])
        and "" not in ids
        and "" not in names
        and ids == answers
        and names == [r.name for r in results]  # the checker's comparison, the same way round
        and not [r for r in results if r.parts]
        and len(set(ids)) == count  # a repeated id: the checker words it
    ):
        return -1
    return count


_OPEN = frozenset({UserMessage, SystemMessage})  # passed while no call waits, exact types
_TURN_PARTS = frozenset({ToolCall, TextPart, ReasoningPart, ProviderPart})
_RESULT = frozenset({ToolResult})
_STR = frozenset({str})
_STATUS = frozenset({ToolStatus})


def missing_results(messages: Sequence[Message]) -> list[ToolCall]:
    """Return the calls that no later tool result answers, in history order.

    A loop that resumes from a saved history (after a crash, say) answers these as
    ``not_executed`` before sending the history again. Unlike :func:`check_history`
    this does not judge the rest of the history: it only finds what is unanswered. A
    result answers the latest earlier assistant message that made its call id (ids may
    repeat across turns).

    Args:
        messages: A history, oldest first.

    Returns:
        The unanswered calls (the first of several calls sharing an id stands for all).

    Raises:
        HistoryError: an entry of ``messages`` is not a toolwire message.
    """
    return [call for calls in unanswered_by_turn(messages).values() for call in calls]


def unanswered_by_turn(messages: Sequence[Message]) -> dict[int, list[ToolCall]]:
    """The unanswered calls of each assistant message, by its position (see
    :func:`missing_results`, which flattens this)."""
    turns: dict[int, dict[str, ToolCall]] = {}  # position -> its unanswered calls by id
    latest: dict[str, int] = {}  # call id -> the latest assistant message that made it
    for position, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            pending: dict[str, ToolCall] = {}
            for call in message.tool_calls:
                pending.setdefault(call.id, call)
                latest[call.id] = position
            turns[position] = pending
        elif isinstance(message, ToolResult):
            where = latest.get(message.call_id)
            if where is not None:
                turns[where].pop(message.call_id, None)
        elif not isinstance(message, (UserMessage, SystemMessage)):
            raise _not_a_message(position, message)
    return {position: list(calls.values()) for position, calls in turns.items() if calls}


@dataclass(slots=True)
class _Checker:
    """State of the single pass: the open turn's calls, by id (ids are per turn)."""

    made: dict[str, int] = field(default_factory=dict)  # call id -> its number in the turn
    answered: dict[str, int] = field(default_factory=dict)  # call id -> position of result
    waiting: dict[str, ToolCall] = field(default_factory=dict)  # calls of the open turn
    turn_position: int = -1  # position of the assistant message whose calls wait
    earlier: dict[str, int] = field(default_factory=dict)  # call id -> its latest older turn

    def check(self, messages: Sequence[Message]) -> None:
        """The full pass: raise for the first thing wrong in ``messages``."""
        for position, message in enumerate(messages):
            self.step(position, message)
        self.require_answered(f"the end of the history (length {len(messages)})")

    def step(self, position: int, message: object) -> None:
        if type(message) is ToolResult:
            # _result's common case written out: well-typed text result, its call open,
            # the same tool name. Anything else goes to _result, which words the error.
            call_id = message.call_id
            call = self.waiting.get(call_id) if call_id.__class__ is str else None
            if (
                call is not None
                and call.name == message.name
                and message.content.__class__ is str
                and message.status.__class__ is ToolStatus
                and not message.parts
            ):
                del self.waiting[call_id]
                self.answered[call_id] = position
            else:
                self._result(position, message)
        else:
            self.visit(position, message)

    def visit(self, position: int, message: object) -> None:
        if isinstance(message, ToolResult):
            self._result(position, message)
        elif isinstance(message, AssistantMessage):
            self.require_answered(f"the assistant message at position {position}")
            self._calls(position, message)
        elif isinstance(message, (UserMessage, SystemMessage)):
            self.require_answered(f"the {message.role} message at position {position}")
        else:
            raise _not_a_message(position, message)

    def require_answered(self, before: str) -> None:
        """Raise for the first call of the open turn that still has no result."""
        for call in self.waiting.values():
            raise HistoryError(
                f"tool call {call.id!r} ({call.name}) in the assistant message at position "
                f"{self.turn_position} has no result before {before}",
                call_id=call.id,
            )

    def _calls(self, position: int, message: AssistantMessage) -> None:
        for call_id in self.made:
            self.earlier[call_id] = self.turn_position
        self.turn_position = position
        made = self.made = {}
        self.answered = {}
        waiting = self.waiting
        for number, part in enumerate(message.parts):
            if part.__class__ is ToolCall:
                # _call's common case written out (once per call of every request): its
                # fields well typed and its id new in the turn; else _call words why.
                call_id, name = part.id, part.name
                if (
                    call_id.__class__ is str
                    and call_id
                    and name.__class__ is str
                    and name
                    and part.arguments.__class__ is str
                    and call_id not in made
                ):
                    made[call_id] = number
                    waiting[call_id] = part
                else:
                    self._call(position, number, part)
            elif isinstance(part, ToolCall):
                self._call(position, number, part)
            elif not isinstance(part, (TextPart, ReasoningPart, ProviderPart)):
                # A ProviderPart (a server tool's item) is answered by the provider.
                raise HistoryError(
                    f"part {number} of the assistant message at position {position} is a "
                    f"{type(part).__name__}, not a TextPart, ReasoningPart, ProviderPart or "
                    "ToolCall"
                )

    def _call(self, position: int, number: int, call: ToolCall) -> None:
        call_id, name = call.id, call.name
        # The fields' common case tested here (once per call of every request); the
        # function finds and words what is wrong.
        if not (call_id.__class__ is str and call_id and name.__class__ is str and name) or (
            call.arguments.__class__ is not str
        ):
            _check_call_fields(position, number, call)
        earlier = self.made.get(call.id)
        if earlier is not None:
            raise HistoryError(
                f"tool call id {call.id!r} (call {number}) in the assistant message at "
                f"position {position} repeats the id of call {earlier} of the same message",
                call_id=call.id,
                hint="call ids must be unique within one assistant message",
            )
        self.made[call.id] = number
        self.waiting[call.id] = call

    def _result(self, position: int, result: ToolResult) -> None:
        if (  # as in _call: the common case here, the words in the function
            result.call_id.__class__ is not str
            or result.content.__class__ is not str
            or result.status.__class__ is not ToolStatus
            or result.parts
        ):
            _check_result_fields(position, result)
        call = self.waiting.pop(result.call_id, None)
        if call is None:
            raise self._orphan(position, result)
        if result.name != call.name:
            raise HistoryError(
                f"tool result at position {position} names tool {result.name!r}, but call "
                f"{call.id!r} called {call.name!r}",
                call_id=call.id,
            )
        self.answered[call.id] = position

    def _orphan(self, position: int, result: ToolResult) -> HistoryError:
        call_id = result.call_id
        if call_id in self.answered:
            reason = f"is a second result for call {call_id!r} (answered at position "
            reason += f"{self.answered[call_id]})"
        elif call_id in self.earlier:
            reason = (
                f"answers call id {call_id!r}, which the assistant message at position "
                f"{self.earlier[call_id]} made; a result must follow its own turn's "
                "assistant message, before any other message"
            )
        else:
            reason = f"answers call id {call_id!r}, which no earlier assistant message made"
        return HistoryError(f"tool result at position {position} {reason}", call_id=call_id)


def _check_call_fields(position: int, number: int, call: ToolCall) -> None:
    """Reject a call whose id, name or arguments cannot be sent to any provider."""
    for name in ("id", "name"):
        value = getattr(call, name)
        if not isinstance(value, str) or not value:
            raise HistoryError(
                f"tool call {number} of the assistant message at position {position} has "
                f"{name} {value!r}; it must be a non-empty string",
                call_id=call.id if isinstance(call.id, str) else None,
            )
    if not isinstance(call.arguments, str):
        raise HistoryError(
            f"tool call {call.id!r} at position {position} has arguments of type "
            f"{type(call.arguments).__name__}; keep them as the JSON text the model sent",
            call_id=call.id,
        )


def _check_result_fields(position: int, result: ToolResult) -> None:
    """Reject a result whose fields have types no encoder can send."""
    if not isinstance(result.call_id, str) or not isinstance(result.content, str):
        raise HistoryError(
            f"tool result at position {position} must have a string call_id and string "
            f"content, got {type(result.call_id).__name__} and {type(result.content).__name__}"
        )
    if not isinstance(result.status, ToolStatus):
        raise HistoryError(
            f"tool result at position {position} has status {result.status!r}, not a ToolStatus",
            call_id=result.call_id,
        )
    if result.parts and not all(isinstance(p, (TextPart, Image)) for p in result.parts):
        raise HistoryError(
            f"tool result at position {position} has a part that is neither a TextPart nor "
            "an Image",
            call_id=result.call_id,
            hint="build it with ToolResult.from_parts([...text and toolwire.Image...])",
        )


def _not_a_message(position: int, value: object) -> HistoryError:
    return HistoryError(
        f"history entry at position {position} is a {type(value).__name__}, not a "
        "SystemMessage, UserMessage, AssistantMessage or ToolResult",
        hint="decode provider-shaped messages with toolwire.history.from_openai_chat and friends",
    )
