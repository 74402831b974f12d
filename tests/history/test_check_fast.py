"""check_history's fast path for turns as a run appends them, against the full pass.

``check_history`` takes a turn whose calls are answered right after it, in call order,
with plain fields at once (``_plain_turn``) and leaves anything else to the checker's
full pass (``_Checker.check``), which also words every error. These properties break
generated histories the ways a caller or an observer could (fields of the wrong type,
repeated or foreign ids, results out of place, entries that are no message) and check
that ``check_history`` gives exactly the full pass's verdict and error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import HistoryError
from toolwire.history.check import _Checker, _plain_turn, check_history
from toolwire.messages import (
    AssistantMessage,
    Message,
    RefusalPart,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)

from .strategies import LIGHT, histories


class _Text(str):
    """A string of a subclass: the full pass accepts it where a string is required."""


class _Equal(str):
    """Equal to anything and unhashable: what the two paths must not tell apart."""

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class _Call(ToolCall):
    pass


class _Result(ToolResult):
    pass


_ODD_TEXTS: list[Any] = ["", None, 7, _Text("get_weather"), _Equal("x"), "other"]


def _outcome(check: Callable[[list[Message]], None], history: list[Message]) -> object:
    """What ``check`` does with ``history``: nothing, or the error it raises, in full."""
    try:
        check(history)
    except HistoryError as exc:
        return (HistoryError, str(exc), exc.call_id, exc.hint)
    except Exception as exc:  # the paths must fail alike, whatever the type
        return (type(exc), str(exc))
    return None


def _full(history: list[Message]) -> None:
    _Checker().check(history)


def _in_call_order(history: list[Message]) -> list[Message]:
    """``history`` with each turn's results in the order of its calls, as a run appends them."""
    ordered: list[Message] = []
    for message in history:
        if isinstance(message, ToolResult):
            continue
        ordered.append(message)
        if isinstance(message, AssistantMessage):
            answers = {r.call_id: r for r in history if isinstance(r, ToolResult)}
            ordered.extend(answers[c.id] for c in message.tool_calls if c.id in answers)
    return ordered


def _break(history: list[Message], data: st.DataObject, fields_only: bool = False) -> list[Message]:
    """One thing a caller or an observer could do to ``history`` (in place or not);
    ``fields_only``: to one field of a call or a result."""
    calls = [c for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    results = [m for m in history if isinstance(m, ToolResult)]
    assistants = [m for m in history if isinstance(m, AssistantMessage)]
    kinds = [] if fields_only else ["insert", "drop", "duplicate", "swap"]
    kinds += ["part", "subclass"] if assistants and not fields_only else []
    kinds += ["call", "rename"] if calls else []
    kinds += ["result", "result"] if results else []
    if not kinds:
        return history
    kind = data.draw(st.sampled_from(kinds))
    if kind == "rename":  # a call and its result alike, as an observer might
        call = data.draw(st.sampled_from(calls))
        new_id = data.draw(st.sampled_from([*_ODD_TEXTS, *(c.id for c in calls)]))
        for result in results:
            if result.call_id == call.id:
                result.call_id = new_id
        call.id = new_id
    elif kind == "call":
        call = data.draw(st.sampled_from(calls))
        field = data.draw(st.sampled_from(["id", "name", "arguments", "repeat"]))
        if field == "repeat":
            call.id = data.draw(st.sampled_from(calls)).id
        else:
            setattr(call, field, data.draw(st.sampled_from([*_ODD_TEXTS, {}])))
    elif kind == "result":
        result = data.draw(st.sampled_from(results))
        field = data.draw(st.sampled_from(["call_id", "name", "content", "status", "parts"]))
        odd: list[Any] = [*_ODD_TEXTS, *(r.call_id for r in results)]
        if field == "status":
            odd = ["ok", None, ToolStatus.ERROR]
        elif field == "parts":
            odd = [(TextPart("x"),), ("x",), [], ()]
        setattr(result, field, data.draw(st.sampled_from(odd)))
    elif kind == "part":
        message = data.draw(st.sampled_from(assistants))
        parts = list(message.parts)
        if data.draw(st.booleans()):
            message.parts = tuple(parts)  # type: ignore[assignment]
        else:
            parts.insert(data.draw(st.integers(0, len(parts))), RefusalPart("no"))
            message.parts = parts
    elif kind == "subclass":
        position = data.draw(st.sampled_from(range(len(history))))
        entry = history[position]
        if isinstance(entry, ToolResult):
            history[position] = _Result(entry.call_id, entry.name, entry.content)
        elif isinstance(entry, AssistantMessage):
            entry.parts = [_Call(p.id, p.name, p.arguments) if isinstance(p, ToolCall) else p
                             for p in entry.parts]  # fmt: skip
    else:
        position = data.draw(st.integers(0, max(len(history) - 1, 0)))
        if kind == "insert":
            added: Any = data.draw(st.sampled_from([UserMessage("hi"), 42, AssistantMessage()]))
            history.insert(position, added)
        elif history and kind == "drop":
            del history[position]
        elif history and kind == "duplicate":
            history.insert(position, history[position])
        elif position + 1 < len(history):
            history[position], history[position + 1] = history[position + 1], history[position]
    return history


@settings(max_examples=400, deadline=None)
@given(histories(LIGHT), st.booleans(), st.sampled_from([0, 1, 1, 1, 2]), st.data())
def test_the_verdict_and_error_are_the_full_passes(
    history: list[Message], ordered: bool, breaks: int, data: st.DataObject
) -> None:
    """On any history — a run's, a caller's, one broken in place after it was appended —
    ``check_history`` raises exactly what the full pass raises, or passes as it does."""
    if ordered:
        history = _in_call_order(history)
    for _ in range(breaks):
        history = _break(history, data)
    assert _outcome(check_history, history) == _outcome(_full, history)


@settings(max_examples=400, deadline=None)
@given(histories(LIGHT), st.data())
def test_one_field_of_a_runs_turn_broken(history: list[Message], data: st.DataObject) -> None:
    """A run-shaped history (the fast path's) with one field of a call or a result
    changed in place, as an observer might: exactly the full pass's verdict and error."""
    history = _break(_in_call_order(history), data, fields_only=True)
    assert _outcome(check_history, history) == _outcome(_full, history)


@settings(max_examples=200, deadline=None)
@given(histories(LIGHT))
def test_a_runs_turns_take_the_fast_path(history: list[Message]) -> None:
    """The fast path is taken: every turn of a run-shaped history, results in call order."""
    history = _in_call_order(history)
    for position, message in enumerate(history):
        if isinstance(message, AssistantMessage):
            assert _plain_turn(message, history, position) == len(message.tool_calls)


def test_a_tuple_history_is_checked_alike() -> None:
    call = ToolCall("a", "get_weather", "{}")
    history = (AssistantMessage([call]), UserMessage("?"))
    assert _outcome(check_history, list(history)) is not None
    assert _outcome(lambda h: check_history(tuple(h)), list(history)) == _outcome(
        _full, list(history)
    )
