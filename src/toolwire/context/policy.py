"""``ContextPolicy``: the budgets that keep a run inside its context window."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

from ..checks import check_int
from ..errors import CallerError
from .routing import METHODS

__all__ = ["COMPRESSIONS", "TOOL_LIMITS", "ContextPolicy", "tool_limit"]

COMPRESSIONS = ("window", "summary")
TOOL_LIMITS = {"OpenAI Chat Completions": 128, "OpenAI Responses": 128}
"""The most tools a provider accepts in one request, by ``Model.provider``."""


@dataclass(frozen=True)
class ContextPolicy:
    """How a run spends its context window.

    Attributes:
        max_result_tokens: A tool result over this many tokens is cut to its head and
            tail (``None``: never cut). A tool may set its own with
            ``@tool(max_result_tokens=...)``.
        route_top_k: With routing on, the relevant tools offered per request.
        route_min_tokens: Routing starts when the tool definitions cost more than this
            many tokens per request (or when there are more tools than the provider
            accepts: OpenAI's limit is 128). Below it every tool is offered: routing
            saves little there, and costs recall (the right tool is sometimes left out).
        route_threshold: A tool count: when set, routing starts when more tools than this
            are registered, whatever they cost (``route_min_tokens`` is then not used).
        always_include: Tool names offered on every request, whatever the routing.
        max_history_tokens: The history budget per request (``None``: no compression).
        compression: ``"window"`` (drop the oldest rounds) or ``"summary"`` (drop them
            and add a model-written summary of what was dropped).
        route_method: ``"bm25"`` (``"embeddings"``/``"hybrid"`` need an extra).
        prompt_cache: Ask the provider to cache the stable prefix (Anthropic cache
            breakpoints, an OpenAI ``prompt_cache_key`` per run).

    Raises:
        CallerError: A budget or ``k`` that is not a positive int, an unknown
            compression or method, an ``always_include`` that is not a list of names.
    """

    max_result_tokens: int | None = 4000
    route_top_k: int = 15
    route_min_tokens: int = 4000
    route_threshold: int | None = None
    always_include: tuple[str, ...] = ()
    max_history_tokens: int | None = None
    compression: Literal["window", "summary"] = "window"
    route_method: str = "bm25"
    prompt_cache: bool = True

    def __post_init__(self) -> None:
        if self.max_result_tokens is not None:
            check_int("ContextPolicy.max_result_tokens", self.max_result_tokens, minimum=1)
        check_int("ContextPolicy.route_top_k", self.route_top_k, minimum=1)
        check_int("ContextPolicy.route_min_tokens", self.route_min_tokens, minimum=1)
        if self.route_threshold is not None:
            check_int("ContextPolicy.route_threshold", self.route_threshold, minimum=1)
        if self.max_history_tokens is not None:
            check_int("ContextPolicy.max_history_tokens", self.max_history_tokens, minimum=1)
        if isinstance(self.always_include, str) or not all(
            isinstance(n, str) for n in _iterable("always_include", self.always_include)
        ):
            raise CallerError(
                f"ContextPolicy.always_include must be a list of tool names, got {self.always_include!r}"
            )
        object.__setattr__(self, "always_include", tuple(self.always_include))
        if self.compression not in COMPRESSIONS:
            raise CallerError(
                f"ContextPolicy.compression={self.compression!r} is unknown",
                hint=f"use one of {', '.join(map(repr, COMPRESSIONS))}",
            )
        if self.route_method not in METHODS:
            raise CallerError(
                f"ContextPolicy.route_method={self.route_method!r} is unknown",
                hint=f"use one of {', '.join(map(repr, METHODS))}",
            )
        if not isinstance(self.prompt_cache, bool):
            raise CallerError(
                f"ContextPolicy.prompt_cache must be a bool, got {self.prompt_cache!r}"
            )


def _iterable(name: str, value: object) -> list[object]:
    try:
        return list(cast(Iterable[object], value))
    except TypeError:
        raise CallerError(
            f"ContextPolicy.{name} must be a list of tool names, got {value!r}"
        ) from None


def tool_limit(model: object) -> int | None:
    """The most tools ``model``'s provider accepts per request (``None``: no known limit)."""
    return TOOL_LIMITS.get(str(getattr(model, "provider", "")))
