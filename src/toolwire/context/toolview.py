"""One tool set's definitions, their token counts and its routing index, built once.

Every run of every agent that offers the same tools (the same ``Tool`` objects, in the
same order; toolwire's own ``read_result`` is one object for all) shares one
:class:`ToolView`: the definitions are computed once (so the
serialised tool list is byte-identical request after request), each definition's
estimated tokens are counted once, and the routing index is built the first time a
run routes. A run whose tool set changes (an MCP server's ``list_changed``) gets the
view of its new set. What a request offers when nothing is routed out (every tool, with
or without ``read_result``) is a tuple of names and one of definitions made once here:
a request copies the list in C rather than looking up each name. What a policy makes
of the set (its counts, each tool's cap, whether it is routed) is a
:class:`PolicyView`, kept per policy and provider tool limit: a run's context starts
with one lookup, not five.

The views are kept in a small cache (the most recent :data:`MAX_VIEWS` tool sets);
a view holds its tools, so a cached key's object ids cannot be reused by others. A
``Toolset`` finds its view without listing its tools (:func:`toolset_view`): a run
starts with one dict lookup, not a key of every tool's id.

What a run's context starts from (:func:`context_base`: the view, the policy's view of
it, the model's counter) is kept too, by the objects it was made from: a run of the
same agent starts with one dict lookup, not the view's, the policy's hash and the
model's counter worked out again.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from ..tooldef import ToolDef
from .policy import ContextPolicy, tool_limit
from .routing import ToolRouter
from .tokens import (
    MAX_TOKENS_PER_CHAR,
    definition_tokens,
    estimate_text_tokens,
    memoised,
    text_counter,
)
from .truncate import READ_RESULT, is_read_result

__all__ = [
    "MAX_VIEWS",
    "ContextBase",
    "PolicyView",
    "ToolView",
    "context_base",
    "result_limit",
    "tool_view",
    "toolset_view",
]

MAX_VIEWS = 64
"""Tool sets whose views are kept (least recently used dropped first)."""

_MAX_POLICIES = 8  # the policy views a view keeps (all dropped when one more comes)

_views: OrderedDict[tuple[int, ...], ToolView] = OrderedDict()
_lock = threading.Lock()  # runs may start in several threads (run_sync, workers)
# id(toolset) -> (the toolset, its size then, its view): a Toolset only grows (a name is
# added once, never replaced or removed), so the same object at the same size holds the
# same tools; the entry holds the toolset, so its id cannot be reused while kept.
_by_toolset: OrderedDict[int, tuple[Any, int, ToolView]] = OrderedDict()
# (id(toolset), its size, id(policy), the model's class, its provider) -> the base; the
# base holds the toolset and the policy, so their ids cannot be reused while kept.
_bases: dict[tuple[int, int, int, type, str], ContextBase] = {}


class PolicyView:
    """What a run's context reads of a :class:`ToolView` under one policy, worked out
    once for every run with the same policy and provider tool limit (the estimate's
    counts; a model's own tokenizer gets one per run). Shared: read only.

    Attributes:
        tokens: Tool name -> its definition's tokens.
        limits: Tool -> the token cap of its results (``None``: never cut).
        uncut: Tool -> the longest result text that is never cut.
        offers_reader: Whether ``read_result`` is offered (the set has it and a result
            can be cut).
        router: The routing index when this tool set is routed, else ``None``.
    """

    __slots__ = ("limits", "offers_reader", "router", "tokens", "uncut")

    def __init__(
        self, view: ToolView, policy: ContextPolicy, count: Callable[[str], int], model: object
    ) -> None:
        default = policy.max_result_tokens
        self.tokens = view.tokens(count, model)
        self.limits = view.result_limits(default)
        self.uncut = view.uncut_lengths(default)
        self.offers_reader = view.reader is not None and view.can_cut(default)
        routed = _routes(view, policy, count, model)
        self.router = view.router(policy.route_method) if routed else None


def _routes(
    view: ToolView, policy: ContextPolicy, count: Callable[[str], int], model: object
) -> bool:
    """Whether ``view``'s tool set is routed: by count when ``route_threshold`` is set,
    else by cost (its definitions over ``route_min_tokens``) or over the provider's
    tool limit."""
    if policy.route_threshold is not None:
        return len(view.names) > policy.route_threshold
    limit = tool_limit(model)
    if limit is not None and len(view.names) > limit:
        return True
    return view.total_tokens(count, model) > policy.route_min_tokens


class ToolView:
    """The definitions, token counts and routing index of one tool set.

    Attributes:
        tools: The tools, in registration order.
        definitions: Tool name -> its definition (shared: never mutate), toolwire's
            ``read_result`` included.
        names: The names of the tools routing may choose from (all but ``read_result``),
            in registration order.
        reader: The name of toolwire's ``read_result`` tool, if the set has it.
        with_reader: ``names`` then ``read_result`` (``None`` when the set lacks it): what
            a request offers when nothing is routed out and a result may be cut.
        plain: Whether every tool is ``plain`` (none takes a ``ToolContext`` or is a
            generator): then no call of the set reads a round's ``ToolScope``.
    """

    __slots__ = (
        "_all",
        "_all_reader",
        "_cuts",
        "_estimates",
        "_exact",
        "_limits",
        "_policies",
        "_routable",
        "_routers",
        "_uncut",
        "definitions",
        "names",
        "plain",
        "reader",
        "tools",
        "with_reader",
    )

    def __init__(self, tools: Sequence[Any]) -> None:
        self.tools = tuple(tools)
        self._routable = tuple(t for t in tools if not is_read_result(t))
        reader = next((t for t in tools if is_read_result(t)), None)
        self.reader: str | None = None if reader is None else reader.name
        self.definitions: dict[str, ToolDef] = {t.name: t.definition() for t in tools}
        self.names = tuple(t.name for t in self._routable)
        self.with_reader = None if reader is None else (*self.names, READ_RESULT)
        self.plain = all(getattr(t, "plain", False) for t in tools)  # unknown: not plain
        # The definitions of the two unrouted offers, in their order.
        self._all = tuple(map(self.definitions.__getitem__, self.names))
        self._all_reader = self._all + (() if reader is None else (self.definitions[READ_RESULT],))
        self._estimates: tuple[dict[str, int], int] | None = None  # counts, routable total
        # id(model) -> (the model, its counts, the routable total)
        self._exact: dict[int, tuple[object, dict[str, int], int]] = {}
        self._routers: dict[str, ToolRouter] = {}
        self._cuts = _cuts(self._routable)
        self._limits: dict[int | None, dict[Any, int | None]] = {}  # by the policy's cap
        self._uncut: dict[int | None, dict[Any, int]] = {}  # by the policy's cap
        # (policy, the provider's tool limit) -> the policy's view, for estimated counts
        self._policies: dict[tuple[ContextPolicy, int | None], PolicyView] = {}

    def under(
        self, policy: ContextPolicy, count: Callable[[str], int], model: object
    ) -> PolicyView:
        """This tool set under ``policy`` (a ``ContextPolicy``), for a run of ``model``
        counting with ``count``: made once per policy and tool limit (one dict lookup a
        run), or per run for a model's own tokenizer."""
        if getattr(count, "exact", False):
            return PolicyView(self, policy, count, model)
        key = (policy, tool_limit(model))  # a frozen policy: equal ones share
        found = self._policies.get(key)
        if found is None:
            if len(self._policies) >= _MAX_POLICIES:
                self._policies.clear()
            found = self._policies[key] = PolicyView(self, policy, count, model)
        return found

    def result_limits(self, default: int | None) -> dict[Any, int | None]:
        """Tool -> the token cap of its results under a policy cap of ``default``
        (``None``: never cut), worked out once per tool set and cap, not per result."""
        limits = self._limits.get(default)
        if limits is None:
            limits = self._limits[default] = {t: result_limit(t, default) for t in self.tools}
        return limits

    def uncut_lengths(self, default: int | None) -> dict[Any, int]:
        """Tool -> the longest text of its results that is never cut under a policy cap
        of ``default``, whatever its count (at most ``MAX_TOKENS_PER_CHAR`` tokens a
        character): a result's length decides, once per tool set and cap, what its count
        would (``sys.maxsize``: never cut)."""
        lengths = self._uncut.get(default)
        if lengths is None:
            lengths = self._uncut[default] = {
                t: sys.maxsize if limit is None else int(limit // MAX_TOKENS_PER_CHAR)
                for t, limit in self.result_limits(default).items()
            }
        return lengths

    def can_cut(self, default: int | None) -> bool:
        """Whether a result of some tool can be cut under a policy cap of ``default``."""
        own, default_applies = self._cuts
        return own or (default is not None and default_applies)

    def definitions_of(self, names: Sequence[str]) -> list[ToolDef]:
        """The definitions of ``names``, a new list: for :attr:`names` or
        :attr:`with_reader` themselves (the same objects), a copy of the tuple made once."""
        if names is self.names:
            return list(self._all)
        if names is self.with_reader:
            return list(self._all_reader)
        definitions = self.definitions
        return [definitions[n] for n in names]

    def tokens(self, count: Callable[[str], int], model: object = None) -> dict[str, int]:
        """Tool name -> its definition's tokens, counted once per tool set: once ever for
        the estimate, once per model for a model's own tokenizer."""
        return self._counts(count, model)[0]

    def total_tokens(self, count: Callable[[str], int], model: object = None) -> int:
        """The routable definitions' tokens together (summed once, with the counts)."""
        return self._counts(count, model)[1]

    def _counts(self, count: Callable[[str], int], model: object) -> tuple[dict[str, int], int]:
        if getattr(count, "exact", False):
            found = self._exact.get(id(model))
            if found is None or found[0] is not model:
                tokens = self._count(count)
                found = self._exact[id(model)] = (model, tokens, self._total(tokens))
            return found[1], found[2]
        if self._estimates is None:
            tokens = self._count(estimate_text_tokens)
            self._estimates = (tokens, self._total(tokens))
        return self._estimates

    def _count(self, count: Callable[[str], int]) -> dict[str, int]:
        return {n: definition_tokens(d, count) for n, d in self.definitions.items()}

    def _total(self, tokens: dict[str, int]) -> int:
        return sum(map(tokens.__getitem__, self.names))

    def router(self, method: str) -> ToolRouter:
        """The routing index of this tool set for ``method``, built on first use."""
        router = self._routers.get(method)
        if router is None:
            router = self._routers[method] = ToolRouter(self._routable, method=method)
        return router


def result_limit(tool: Any, default: int | None) -> int | None:
    """The token cap of ``tool``'s results (``None``: never cut): its own
    ``max_result_tokens``, else the policy's ``default``; ``False`` and toolwire's own
    ``read_result`` are never cut."""
    cap = getattr(tool, "max_result_tokens", None)
    if cap is False or is_read_result(tool):
        return None
    return cap if isinstance(cap, int) and cap > 0 else default


def _cuts(tools: Sequence[Any]) -> tuple[bool, bool]:
    """(some tool has a cap of its own, some tool takes the policy's cap)."""
    caps = [getattr(t, "max_result_tokens", None) for t in tools]
    own = any(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in caps)
    return own, any(c is not False and not (isinstance(c, int) and c > 0) for c in caps)


def toolset_view(toolset: Any) -> ToolView:
    """The (shared) view of a ``Toolset``'s tools as they are now."""
    size = len(toolset)
    found = _by_toolset.get(id(toolset))
    if found is not None and found[0] is toolset and found[1] == size:
        return found[2]
    view = tool_view(list(toolset))
    with _lock:
        _by_toolset[id(toolset)] = (toolset, size, view)
        while len(_by_toolset) > MAX_VIEWS:
            _by_toolset.popitem(last=False)
    return view


def tool_view(tools: Sequence[Any]) -> ToolView:
    """The (shared) view of ``tools``."""
    key = tuple(map(id, tools))
    with _lock:
        view = _views.get(key)
        if view is not None:
            _views.move_to_end(key)
            return view
    view = ToolView(tools)
    with _lock:
        _views[key] = view
        while len(_views) > MAX_VIEWS:
            _views.popitem(last=False)
    return view


class ContextBase:
    """What a run's context starts from for one tool set (at its size), policy and
    model: shared by every run with the same ones, read only.

    Attributes:
        toolset: The tool set (held: its id is part of the key).
        policy: The ``ContextPolicy`` (held: its id is part of the key).
        size: The tool set's size the base was made at.
        counter: The model's text counter (:func:`~.tokens.text_counter`), not memoised.
        view: The tool set's :class:`ToolView`.
        under: What ``policy`` makes of it for the model (:meth:`ToolView.under`).
        unknown: The names of ``policy.always_include`` the tool set lacks.

    Raises:
        CallerError: ``model`` is neither a spec string nor a model.
    """

    __slots__ = ("counter", "policy", "size", "toolset", "under", "unknown", "view")

    def __init__(self, toolset: Any, policy: ContextPolicy, model: object) -> None:
        self.toolset = toolset
        self.policy = policy
        self.size = len(toolset)
        self.counter = text_counter(model)
        self.view = toolset_view(toolset)
        self.under = self.view.under(policy, memoised(self.counter), model)
        self.unknown = [n for n in policy.always_include if n not in toolset]


def context_base(toolset: Any, policy: ContextPolicy, model: object) -> ContextBase:
    """The base of a run's context over ``toolset`` (a ``Toolset``) under ``policy`` for
    ``model``: made once per tool set, size and policy object, and per class and
    provider of the model (a model changes between runs; what the base reads of it, its
    provider's tool limit and whether it is a model, is its class's and its provider's).
    A model with a tokenizer of its own gets a base per call: its counts are its own.

    Raises:
        CallerError: ``model`` is neither a spec string nor a model.
    """
    if getattr(model, "count_text_tokens", None) is not None:
        return ContextBase(toolset, policy, model)
    provider = str(getattr(model, "provider", ""))  # what tool_limit reads
    key = (id(toolset), len(toolset), id(policy), model.__class__, provider)
    found = _bases.get(key)
    if found is None:
        found = ContextBase(toolset, policy, model)
        with _lock:
            _bases[key] = found
            while len(_bases) > MAX_VIEWS:
                del _bases[next(iter(_bases))]  # the oldest first
    return found
