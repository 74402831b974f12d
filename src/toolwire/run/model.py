"""The small protocol every model implements: stream one turn.

The agent loop knows no provider. It builds a ``ModelRequest`` (the neutral history,
the offered tools as neutral :class:`~toolwire.tooldef.ToolDef` objects, the tool choice) and iterates the
model's ``stream``: wire events as they arrive (``TextDelta``, ``ToolCallStarted``,
``ToolCallDelta``, ``ToolCallReady``, ...), then exactly one ``TurnDone`` carrying the
assembled ``Turn``. Providers (HTTP clients, the embedded local model, the scripted
test model) implement it by feeding their bytes or chunks through a wire decoder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message
from ..tooldef import ToolChoice, ToolDef
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
    ``prompt_cache_key`` (a ``prompt_cache_key`` in ``settings`` wins).
    """

    messages: Sequence[Message]
    tools: list[ToolDef] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    parallel_tool_calls: bool | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    cache_key: str | None = None


@dataclass(slots=True)
class TurnDone:
    """The last item of a model stream: the assembled turn."""

    turn: Turn


ModelEvent = Event | TurnDone


@runtime_checkable
class Model(Protocol):
    """A source of model turns."""

    @property
    def name(self) -> str:
        """A human-readable model name, e.g. ``openai:gpt-4.1-mini``."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one turn: events as they arrive, then one ``TurnDone``."""
        ...
