"""Run events of the context policies (``Agent.run_stream`` yields them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .tokens import LazyTokens, RequestTokens

__all__ = ["CacheInvalidated", "HistoryCompressed", "TokensCounted", "ToolsRouted"]


@dataclass(slots=True)
class ToolsRouted:
    """Routing chose the tools offered on this request.

    Attributes:
        round: The 1-based round number.
        offered: The tool names sent, in their canonical (registration) order.
        scores: The ranked tools' BM25 scores, best first.
        reasons: Tool name -> why it is offered besides its rank (``always_include``,
            ``used``, ``tool_choice``, ``read_result``).
        registered: How many tools are registered.
    """

    round: int
    offered: list[str]
    scores: dict[str, float]
    reasons: dict[str, str] = field(default_factory=dict)
    registered: int = 0


@dataclass(slots=True)
class CacheInvalidated:
    """The tool set changed mid-run, so the provider's cached prefix no longer matches.

    Emitted once per run, at the first change.

    Attributes:
        round: The round whose request changed it.
        added: Tools offered now and not before.
        removed: Tools offered before and not now.
    """

    round: int
    added: list[str]
    removed: list[str]

    @property
    def message(self) -> str:
        """A one-line warning."""
        return (
            f"round {self.round}: the offered tool set changed (added {self.added or 'none'}, "
            f"removed {self.removed or 'none'}); the provider's cached prompt prefix is invalidated"
        )


@dataclass(slots=True)
class HistoryCompressed:
    """The history sent was compressed to fit ``max_history_tokens``.

    Attributes:
        round: The round of the request.
        method: ``window`` or ``summary``.
        dropped: Messages left out of this request (counted from the start of the run).
        tokens_before: History tokens without compression.
        tokens_after: History tokens sent.
    """

    round: int
    method: str
    dropped: int
    tokens_before: int
    tokens_after: int


class TokensCounted:
    """The tokens of the request about to be sent, by part.

    Counted when ``tokens`` is first read (an agent run nobody streams counts nothing);
    ``tokens`` may be given as the counts or as the function that counts them.

    Attributes:
        round: The round of the request.
        tokens: Tool definitions, calls, results and the rest.
    """

    __slots__ = ("_tokens", "round")

    def __init__(
        self, round: int, tokens: RequestTokens | Callable[[], RequestTokens] | LazyTokens
    ) -> None:
        self.round = round
        self._tokens = tokens if isinstance(tokens, LazyTokens) else LazyTokens(tokens)

    @property
    def tokens(self) -> RequestTokens:
        """The request's tokens by part."""
        return self._tokens.get()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokensCounted):
            return NotImplemented
        return (self.round, self.tokens) == (other.round, other.tokens)

    __hash__ = None  # type: ignore[assignment]  # mutable-equal, like the dataclass events

    def __repr__(self) -> str:
        return f"TokensCounted(round={self.round}, tokens={self.tokens!r})"
