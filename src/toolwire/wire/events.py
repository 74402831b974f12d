"""The one event vocabulary every decoder speaks.

Provider decoders (OpenAI Chat, OpenAI Responses, Anthropic) and the text-marker
parsers of ``toolwire.formats`` all describe a model turn with these events, and the
one assembler consumes them. Events are small slotted objects: the hot path creates
one per argument fragment, so they carry no more than they must.

They behave like dataclasses (keyword or positional construction, ``==`` by type and
fields, a readable ``repr``, ``__match_args__`` for ``match``) but their ``__init__`` is
written out: in the compiled build (hatch_build.py) a generated dataclass ``__init__``
would run in the interpreter, the largest cost left per fragment.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from ..messages import ToolCall, Usage
from ..turn import Notice, ToolRequest

__all__ = [
    "Event",
    "Finished",
    "Notice",
    "ReasoningDelta",
    "RefusalDelta",
    "TextDelta",
    "ToolCallDelta",
    "ToolCallReady",
    "ToolCallRetracted",
    "ToolCallStarted",
    "UsageReported",
]


class _Fields:
    """Equality, ``repr`` and field names for the event classes below."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__match_args__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Fields)
        return self._values() == other._values()

    def __hash__(self) -> int:
        raise TypeError(f"unhashable type: {type(self).__name__!r}")

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__match_args__)
        return f"{type(self).__name__}({fields})"


class TextDelta(_Fields):
    """A piece of answer text."""

    __slots__ = ("text",)
    __match_args__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ReasoningDelta(_Fields):
    """A piece of reasoning ("thinking") text."""

    __slots__ = ("text",)
    __match_args__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class ToolCallStarted(_Fields):
    """The first fragment of the tool call at ``index`` arrived.

    ``id`` and ``name`` are whatever that fragment carried (a provider may send them
    later, or split the name); the ``ToolCallReady`` event carries the final values.
    A decoder asked for no deltas (``deltas=False``) sends none for a call whole in the
    item that opens it: that call's ``ToolCallReady`` comes alone.
    """

    __slots__ = ("id", "index", "name")
    __match_args__ = ("index", "id", "name")

    def __init__(self, index: int, id: str | None, name: str | None) -> None:
        self.index = index
        self.id = id
        self.name = name


class ToolCallDelta(_Fields):
    """A fragment of the arguments text of the tool call at ``index``."""

    __slots__ = ("arguments", "index")
    __match_args__ = ("index", "arguments")

    def __init__(self, index: int, arguments: str) -> None:
        self.index = index
        self.arguments = arguments


class ToolCallReady(_Fields):
    """The call at ``index`` is complete: its arguments JSON has closed.

    Emitted the moment the closing bracket arrives, usually before the stream ends;
    this is what early execution waits for. ``request`` holds the parsed input (or
    the parse error) so nothing is parsed twice.
    """

    __slots__ = ("call", "index", "request")
    __match_args__ = ("index", "call", "request")

    def __init__(self, index: int, call: ToolCall, request: ToolRequest) -> None:
        self.index = index
        self.call = call
        self.request = request


class Finished(_Fields):
    """The provider said why the turn ended (OpenAI's vocabulary: ``stop``,
    ``tool_calls``, ``length``, ``content_filter``)."""

    __slots__ = ("reason",)
    __match_args__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


class UsageReported(_Fields):
    """The provider reported token usage (totals for the turn so far)."""

    __slots__ = ("_counts", "_usage")
    __match_args__ = ("usage",)

    def __init__(self, usage: Usage) -> None:
        self._usage: Usage | None = usage
        self._counts: tuple[int, int, int, int, int] = _NO_COUNTS

    @staticmethod
    def of_counts(counts: tuple[int, int, int, int, int]) -> UsageReported:
        """The report of ``Usage(*counts)``, which is built when ``usage`` is first read.

        Anthropic reports usage twice a turn (``message_start``, ``message_delta``) and
        most consumers read only the turn's last one: a ``Usage`` nobody reads cost more
        than the rest of its report (bench/count_assembly.py).
        """
        event = UsageReported(_PLACEHOLDER)
        event._usage = None
        event._counts = counts
        return event

    @property
    def usage(self) -> Usage:
        """The token counts reported."""
        usage = self._usage
        if usage is None:
            input, output, read, write, reasoning = self._counts
            usage = self._usage = Usage(input, output, read, write, reasoning)
        return usage

    @usage.setter
    def usage(self, usage: Usage) -> None:
        self._usage = usage


class ToolCallRetracted(_Fields):
    """The call at ``index`` that a text-format stream announced is not a call after all.

    A model's text can look like the start of a call and then turn out cut off or
    malformed; the stream then takes the call back (its text becomes content, with a
    ``Notice`` saying why), so the events after ``close()`` describe exactly what a
    non-streaming parse of the same text gives. A consumer that already started the
    call on the strength of ``ToolCallReady`` cancels it. No index is reused.
    """

    __slots__ = ("index", "reason")
    __match_args__ = ("index", "reason")

    def __init__(self, index: int, reason: str) -> None:
        self.index = index
        self.reason = reason


class RefusalDelta(_Fields):
    """A piece of the model's refusal message (OpenAI's ``refusal``), not answer text."""

    __slots__ = ("text",)
    __match_args__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


_NO_COUNTS: Final = (0, 0, 0, 0, 0)
_PLACEHOLDER: Final = Usage()  # never read: replaced before ``of_counts`` returns


def _new_by_slots() -> bool:
    """True where ``object.__new__`` can make an event (the pure build; a compiled class
    refuses it, its constructor is already a C function)."""
    try:
        OBJECT_NEW(ToolCallDelta)
    except TypeError:
        return False
    return True


# The pure build's ``ToolCallDelta``, one per fragment, is made on the flat ``feed``s'
# hot path as ``OBJECT_NEW(ToolCallDelta)`` and two slot stores: the interpreted
# ``__init__`` a constructor call runs cost about 500 instructions more per fragment
# (bench/count_assembly.py). The compiled build keeps the constructor.
OBJECT_NEW: Final[Any] = object.__new__
# Final: a C static in the compiled build, not a lookup in the module's dict per fragment.
NEW_BY_SLOTS: Final = _new_by_slots()

Event = (
    TextDelta
    | ReasoningDelta
    | RefusalDelta
    | ToolCallStarted
    | ToolCallDelta
    | ToolCallReady
    | ToolCallRetracted
    | Finished
    | UsageReported
    | Notice
)
