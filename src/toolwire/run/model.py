"""The small protocol every model implements: stream one turn.

The agent loop knows no provider. It builds a ``ModelRequest`` (the neutral history,
the offered tools as neutral :class:`~toolwire.tooldef.ToolDef` objects, the tool choice) and iterates the
model's ``stream``: wire events as they arrive (``TextDelta``, ``ToolCallStarted``,
``ToolCallDelta``, ``ToolCallReady``, ...), then exactly one ``TurnDone`` carrying the
assembled ``Turn``. Providers (HTTP clients, the embedded local model, the scripted
test model) implement it by feeding their bytes or chunks through a wire decoder.
A ``ModelRequest`` checks its history when it is built, so a model never has to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..history.check import check_history
from ..messages import Message
from ..tooldef import OutputFormat, ToolChoice, ToolDef
from ..turn import Turn
from ..wire.events import Event

__all__ = ["Model", "ModelEvent", "ModelRequest", "TurnDone"]


@dataclass(slots=True)
class ModelRequest:
    """Everything a model needs for one turn.

    ``tools`` are neutral :class:`~toolwire.tooldef.ToolDef` objects; each provider
    maps them, with ``tool_choice`` (``"auto"``, ``"required"``, ``"none"`` or a tool
    name), to its own shape (``toolwire.history.tool_defs``). ``settings`` carries provider options
    (``max_tokens``, ``temperature``, ...) through unchanged. ``cache_key`` (set by
    the agent per run when its ``ContextPolicy.prompt_cache`` is on) asks the provider
    to cache the stable prefix: Anthropic cache breakpoints, OpenAI's
    ``prompt_cache_key`` (a ``prompt_cache_key`` in ``settings`` wins). ``output``
    asks for a JSON answer of that shape in the provider's native mode (set by the
    agent under ``output_mode="native"``; a model without the mode never gets one).
    ``deltas``: whether the caller reads a ``ToolCallDelta`` per arguments fragment;
    the agent sets it to ``False`` when nothing listens to its events, and a model may
    then skip them (its decoder's ``deltas=False``: the turn is the same, and a call
    whole in one chunk streams as its ``ToolCallReady`` alone, without its
    ``ToolCallStarted``).

    Building one checks ``messages`` (:func:`toolwire.history.check_history`) and
    raises ``HistoryError`` for a history that breaks the one-result-per-call rule.
    """

    messages: Sequence[Message]
    tools: list[ToolDef] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None
    output: OutputFormat | None = None
    deltas: bool = True

    def __post_init__(self) -> None:
        # The one history check of a request (see ``Model``): nothing reaches a model
        # unchecked, whoever builds the request, and nothing checks it twice.
        check_history(self.messages)

    @property
    def may_call(self) -> bool:
        """Whether the model may call a tool this turn: tools are offered and
        ``tool_choice`` is not ``"none"`` (else its output is text, whatever it holds)."""
        return bool(self.tools) and self.tool_choice != "none"


@dataclass(slots=True)
class TurnDone:
    """The last item of a model stream: the assembled turn."""

    turn: Turn


ModelEvent = Event | TurnDone


@runtime_checkable
class Model(Protocol):
    """A source of model turns.

    Checking the history is not a model's duty: a ``ModelRequest`` checks its
    ``messages`` when it is built (:func:`toolwire.history.check_history`: every tool
    call answered by exactly one result, after it; ``HistoryError`` otherwise), so each
    request is checked once, whoever builds it (the agent loop, or a caller using a
    model directly), before anything is sent or logged. A model relies on that and does
    not check again.
    """

    @property
    def name(self) -> str:
        """A human-readable model name, e.g. ``openai:gpt-4.1-mini``."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: events as they arrive, then one ``TurnDone``."""
        ...
