"""check_history's fast path for turns as a run appends them, against the full pass.

``check_history`` takes a turn whose calls are answered right after it, in call order,
with plain fields at once (``_plain_turn``) and leaves anything else to the checker's
full pass (``_Checker.check``), which also words every error. These properties break
generated histories the ways a caller or an observer could (fields of the wrong type,
repeated or foreign ids, results out of place, entries that are no message) and check
that ``check_history`` gives exactly the full pass's verdict and error. The table of
breaks at the end holds one row that only each of the fast path's conditions sees:
taking any one condition out fails it (each was tried); the properties add breadth.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.errors import HistoryError
from toolwire.history.check import _Checker, _plain_turn, check_history
from toolwire.messages import (
    AssistantMessage,
    Message,
    RefusalPart,
    SystemMessage,
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


class _Anything:
    """No string, yet equal to every one."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class _Call(ToolCall):
    pass


class _Result(ToolResult):
    pass


class _User(UserMessage):
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
    kinds += ["call", "rename", "rename"] if calls else []
    kinds += ["result", "result", "result"] if results else []
    if not kinds:
        return history
    kind = data.draw(st.sampled_from(kinds))
    if kind == "rename":  # a call and its result alike, as an observer might
        turn = data.draw(st.sampled_from([m for m in assistants if m.tool_calls]))
        call = data.draw(st.sampled_from(turn.tool_calls))
        if len(turn.tool_calls) > 1 and data.draw(st.booleans()):
            # Another id of the same turn: a repeat only the turn's own check sees.
            new_id = data.draw(st.sampled_from([c.id for c in turn.tool_calls if c is not call]))
        else:
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
            odd = [(TextPart("x"),), ("x",), ("x",), [], ()]
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


@settings(max_examples=200, deadline=None)
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


@settings(max_examples=300, deadline=None)
@given(histories(LIGHT), st.data())
def test_one_field_of_a_runs_turn_broken(history: list[Message], data: st.DataObject) -> None:
    """A run-shaped history (the fast path's) with one field of a call or a result
    changed in place, as an observer might: exactly the full pass's verdict and error."""
    history = _break(_in_call_order(history), data, fields_only=True)
    assert _outcome(check_history, history) == _outcome(_full, history)


@settings(max_examples=50, deadline=None)
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


def _run_history() -> list[Message]:
    """Two turns as a run appends them, and a final answer."""
    first = [ToolCall(f"c{i}", f"tool_{i}", "{}") for i in range(3)]
    second = [ToolCall("c0", "tool_0", '{"a": 1}')]  # ids may repeat across turns
    return [
        UserMessage("go"),
        AssistantMessage([TextPart("calling"), *first]),
        *(ToolResult(c.id, c.name, "ok") for c in first),
        UserMessage("again"),
        AssistantMessage(list(second)),
        *(ToolResult(c.id, c.name, "ok") for c in second),
        AssistantMessage([TextPart("done")]),
    ]


def _second_call(history: list[Message]) -> ToolCall:
    message = history[1]
    assert isinstance(message, AssistantMessage)
    call = message.parts[2]
    assert isinstance(call, ToolCall)
    return call


def _rename(field: str, value: Any) -> Callable[[list[Message]], None]:
    """The second call's id or name, and its result's, alike."""

    def rename(history: list[Message]) -> None:
        setattr(_second_call(history), field, value)
        setattr(history[3], "call_id" if field == "id" else "name", value)

    return rename


def _call(field: str, value: Any) -> Callable[[list[Message]], None]:
    return lambda history: setattr(_second_call(history), field, value)


def _result(field: str, value: Any) -> Callable[[list[Message]], None]:
    return lambda history: setattr(history[3], field, value)


def _parts(history: list[Message]) -> list[Any]:
    message = history[1]
    assert isinstance(message, AssistantMessage)
    return message.parts


def _answer_late(history: list[Message]) -> None:
    """The first turn's first result after the next turn (no message between them)."""
    late = history.pop(2)
    del history[4]  # the user message between the turns
    history.insert(6, late)


_BREAKS: dict[str, Callable[[list[Message]], Any]] = {
    "empty id": _rename("id", ""),
    "int id": _rename("id", 7),
    "subclass id": _rename("id", _Text("c1")),
    "repeated id": _rename("id", "c0"),
    "empty name": _rename("name", ""),
    "no name": _rename("name", None),
    "int name": _rename("name", 7),
    "subclass name": _rename("name", _Text("tool_1")),
    "an id equal to anything": _call("id", _Anything()),
    "dict arguments": _call("arguments", {}),
    "subclass arguments": _call("arguments", _Text("{}")),
    "result's subclass id": _result("call_id", _Text("c1")),
    "result's equal-to-all id": _result("call_id", _Equal("c1")),
    "result's other id": _result("call_id", "c2"),
    "result's other name": _result("name", "tool_0"),
    "result's subclass name": _result("name", _Text("tool_1")),
    "result's no content": _result("content", None),
    "result's subclass content": _result("content", _Text("ok")),
    "result's text status": _result("status", "ok"),
    "result's error status": _result("status", ToolStatus.ERROR),
    "result's bad part": _result("parts", ("x",)),
    "result's text part": _result("parts", (TextPart("x"),)),
    "result's empty list of parts": _result("parts", []),
    "a result subclass": lambda h: h.__setitem__(3, _Result("c1", "tool_1", "ok")),
    "a call subclass": lambda h: _parts(h).__setitem__(2, _Call("c1", "tool_1", "{}")),
    "parts a tuple": lambda h: setattr(h[1], "parts", tuple(_parts(h))),
    "parts none": lambda h: setattr(h[1], "parts", None),
    "parts a generator": lambda h: setattr(h[1], "parts", iter(_parts(h))),
    "a refusal part": lambda h: _parts(h).append(RefusalPart("no")),
    "results swapped": lambda h: h.__setitem__(slice(2, 4), [h[3], h[2]]),
    "last result dropped": lambda h: h.pop(-2),
    "the history ends before the last result": lambda h: h.__delitem__(slice(-2, None)),
    "a result after the next turn": _answer_late,
    "a message between": lambda h: h.insert(3, UserMessage("?")),
    # User and system messages are passed without the checker only while no call waits.
    "a system message between": lambda h: h.insert(3, SystemMessage("?")),
    "a user message subclass between": lambda h: h.insert(3, _User("?")),
    "a user message between the last call and its result": lambda h: h.insert(-2, UserMessage("?")),
    "not a message": lambda h: h.insert(3, cast(Message, 42)),
}


def test_each_break_of_a_runs_history_gets_the_full_passes_verdict() -> None:
    """Each break the fast path must see, one at a time (each of its conditions is the
    only one that sees some row: taking one out fails this test)."""
    assert _outcome(check_history, _run_history()) is None
    for name, breaks in _BREAKS.items():
        histories = _run_history(), _run_history()  # each pass its own (a generator...)
        for history in histories:
            breaks(history)
        assert _outcome(check_history, histories[0]) == _outcome(_full, histories[1]), name
