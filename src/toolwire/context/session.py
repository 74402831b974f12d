"""``RunContext``: the context policies' state for one run, called by the agent loop.

The loop stays small: before each request it asks :meth:`RunContext.prepare` for the
history to send and the tools to offer (plus the events to emit); after each turn it
calls :meth:`RunContext.observe`; the executor cuts each result through
:meth:`RunContext.shape_result`. Everything here is pure and synchronous.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import filterfalse
from operator import attrgetter
from typing import Any, TypeGuard, TypeVar, cast, overload

from ..errors import CallerError
from ..messages import (
    AssistantMessage,
    ContentPart,
    Image,
    Message,
    ToolResult,
    Usage,
    UserMessage,
    parts_text,
)
from ..tooldef import ToolDef
from ..tools.tool import Tool, Toolset
from ..turn import ToolRequest
from .compress import Compressor, summary_prompt
from .events import CacheInvalidated, HistoryCompressed, TokensCounted, ToolsRouted
from .images import IMAGE_TOKENS, check_images, image_limits
from .policy import ContextPolicy
from .routing import ToolRouter
from .tokens import (
    MAX_TOKENS_PER_CHAR,
    PER_REQUEST,
    LazyTokens,
    RequestTokens,
    account,
    memoised,
    message_tokens,
)
from .toolview import ToolView, context_base, result_limit
from .truncate import (
    READ_RESULT,
    ResultStore,
    result_handle,
    truncate_middle,
    truncate_parts,
)

__all__ = ["Prepared", "RequestRecord", "RunContext", "UNLIMITED"]

_Cut = TypeVar("_Cut", str, tuple[ContentPart, ...])

UNLIMITED = False
"""``@tool(max_result_tokens=False)``: never cut this tool's results."""

_Counted = dict[int, tuple[Message, int, int, int]]
"""A run's message counts: id -> the message and its tokens (calls, results, other)."""

_FREE_CHOICES = ("auto", "none")  # tool_choice values that force no call
_QUERY_MESSAGES = 6  # the user and assistant messages routing reads, newest first
# C predicates for filter(): no Python call per item (typed as the isinstance they are).
_IS_USER = cast("Callable[[object], TypeGuard[UserMessage]]", UserMessage.__instancecheck__)
_IS_RESULT = cast("Callable[[object], TypeGuard[ToolResult]]", ToolResult.__instancecheck__)
_NAME = attrgetter("name")


class RequestRecord:
    """One request's token accounting and, once the turn is in, the provider's usage.

    The tokens are counted when first read (:attr:`tokens`), not when the request is
    sent: a run nobody asks about counts nothing, and a counted message is not counted
    again (the run's context keeps each message's count).

    Attributes:
        round: The request's round (0 for a summary request).
        usage: The provider's usage for the request's turn.
        summary: Whether it is the summary request of a history compression.
    """

    __slots__ = ("_tokens", "round", "summary", "usage")

    def __init__(
        self,
        round: int,
        tokens: RequestTokens | Callable[[], RequestTokens] | LazyTokens,
        usage: Usage | None = None,
        summary: bool = False,
    ) -> None:
        self.round = round
        self.usage = usage
        self.summary = summary
        self._tokens = tokens if isinstance(tokens, LazyTokens) else LazyTokens(tokens)

    @property
    def tokens(self) -> RequestTokens:
        """The request's tokens by part (counted on first read)."""
        return self._tokens.get()

    def __repr__(self) -> str:
        return f"RequestRecord(round={self.round}, tokens={self.tokens!r}, usage={self.usage!r})"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready record."""
        usage = self.usage or Usage()
        tokens = self.tokens
        return {
            "round": self.round,
            **tokens.as_dict(),
            # which counts are exact: ours by a tokenizer or estimated; the provider's own
            "counted_by": "tokenizer" if tokens.exact else "estimate",
            "usage_from": "provider" if self.usage is not None else None,
            "input_tokens": usage.input_tokens,
            "cache_read_tokens": usage.cache_read_tokens,
            "cache_write_tokens": usage.cache_write_tokens,
            "summary": self.summary,
        }


@dataclass(slots=True)
class Prepared:
    """What :meth:`RunContext.prepare` decided for one request."""

    messages: list[Message]
    tools: list[ToolDef]
    events: list[Any] = field(default_factory=list)
    cache_key: str | None = None


class RunContext:
    """Token accounting, routing, truncation, compression and cache layout of one run.

    Args:
        policy: The budgets.
        toolset: The registered tools (registration order is the canonical order).
        model: The run's model (a tokenizer of its own makes counts exact).

    Raises:
        CallerError: ``always_include`` names a tool that is not registered.
    """

    # What the tool set's base gives (_index_tools, from __init__ on); shared: read only.
    _indexed: int  # the tool set's size when its base was read
    _counter: Callable[[str], int]  # the model's counter, not memoised
    _unknown: list[str]  # the names of always_include the tool set lacks
    _view: ToolView  # the tool set's view
    _definitions: dict[str, ToolDef]
    _tool_tokens: dict[str, int]
    _all: tuple[str, ...]  # every routable name
    _reader: str | None
    _offers_reader: bool
    router: ToolRouter | None
    _limits: dict[Any, int | None]  # tool -> its results' cap
    uncut_lengths: Mapping[Any, int]
    """Tool -> the longest result text :meth:`shape_result` returns as it is, whatever its
    count (``sys.maxsize``: never cut), for the tools offered now: a caller can skip the
    call for such a result. Read only; replaced when the tools change. (An attribute, not
    a property: the loop reads it every round, and a property is a function a run starts,
    which a cold cache charges for: bench/README.md, issue 30's twelfth pass.)"""

    plain_tools: bool
    """Whether every tool offered now is ``plain`` (:attr:`ToolView.plain`): no call
    reads the round's ``ToolScope``, which the loop then does not make. Read only;
    replaced when the tools change."""

    def __init__(self, policy: ContextPolicy, toolset: Toolset, model: object = None) -> None:
        self.policy = policy
        self.toolset = toolset
        self.model = model
        # What belongs to the tool set, the policy and the model is made once for every
        # run with the same ones; what follows is the run's own.
        self._indexed = -1
        self._index_tools()
        if self._unknown:
            raise CallerError(
                f"ContextPolicy.always_include names unknown tools: {', '.join(self._unknown)}",
                hint=f"tools: {', '.join(toolset.names) or 'none'}",
            )
        self.count = memoised(self._counter)  # the run's memo: it lives as long as the history
        self._store: ResultStore | None = None  # made at the first cut (store)
        self.requests: list[RequestRecord] = []
        self.used: set[str] = set()
        # Random hex as a run id is (run/observers.py new_run_id): no uuid.UUID object.
        self.cache_key = f"toolwire-{os.urandom(16).hex()}" if policy.prompt_cache else None
        self._counted: _Counted = {}  # id -> message, counts
        self.compressor = (
            Compressor(policy.max_history_tokens, policy.compression == "summary")
            if policy.max_history_tokens is not None
            else None
        )
        self._offered: tuple[str, ...] | None = None
        self._summary_prompt: list[Message] = []
        self._warned = False
        self._round = 0  # the round of the latest request (the handles of its cut results)

    def __getstate__(self) -> dict[str, Any]:
        """What crosses a process boundary with a finished run's result (a ``RunResult``
        from a Ray worker): the report and the full results, not the live tools (an MCP
        server's session cannot travel) or the model."""
        for record in self.requests:
            record.tokens  # noqa: B018 — counted now: the counter stays behind
        state = dict(self.__dict__)
        state["_counted"] = {}
        state["_limits"] = state["uncut_lengths"] = {}  # keyed by the live tools
        for live in ("toolset", "model", "count", "_counter", "router", "compressor", "_view"):
            state[live] = None
        return state

    def use_toolset(self, toolset: Toolset) -> None:
        """Offer ``toolset`` from now on (the run's tools, once its sources opened or
        refreshed); definitions and the routing index are rebuilt when it changed."""
        if toolset is self.toolset:
            return
        self.toolset = toolset
        self._indexed = -1

    def _index_tools(self) -> None:
        """Definitions, their tokens and the routing index, again only when tools were
        added; all shared with every run that offers the same tools, under the same
        policy, for the same kind of model (:func:`.toolview.context_base`)."""
        if len(self.toolset) == self._indexed:  # a Python __len__: read once
            return
        base = context_base(self.toolset, self.policy, self.model)
        self._indexed = base.size
        self._counter, self._unknown = base.counter, base.unknown
        view = self._view = base.view
        # One definition per tool, computed once: the serialised list stays byte-identical.
        self._definitions = view.definitions
        self._reader = view.reader
        self.plain_tools = view.plain
        self._all = view.names
        # What the policy makes of the set (counts, caps, routing), shared: read only.
        under = base.under
        self._tool_tokens, self._limits = under.tokens, under.limits
        self.uncut_lengths = under.uncut
        self._offers_reader, self.router = under.offers_reader, under.router

    # -- before a request ------------------------------------------------------------------

    def compress(self, messages: Sequence[Message], round_number: int) -> list[Any]:
        """Move the compression cut if the history is over budget; the events that say so.

        Raises:
            CallerError: The budget is smaller than the prefix plus the latest round.
        """
        compressor = self.compressor
        if compressor is None or not compressor.advance(messages, self._history_tokens):
            return []
        before = self._history_tokens(messages)
        after = self._history_tokens(compressor.view(messages))
        method = "summary" if compressor.summarise else "window"
        dropped = compressor.dropped(messages)
        return [HistoryCompressed(round_number, method, dropped, before, after)]

    def prepare(
        self,
        messages: Sequence[Message],
        tool_choice: str,
        round_number: int,
        *,
        listened: bool = True,
    ) -> Prepared:
        """The history to send, the tools to offer, and the events that say why.

        The request's tokens are counted when first read (the record's and the
        :class:`TokensCounted` event's ``tokens``), each message once per run.
        ``listened=False`` (a run nobody streams or observes): the same request, without
        the ``ToolsRouted``, ``TokensCounted`` and ``CacheInvalidated`` events nobody
        would read (routing's reasons, sorted, were most of a routed request's cost in
        the context layer).
        """
        events: list[Any] = []
        self._round = round_number
        self._index_tools()
        sent = self.compressor.view(messages) if self.compressor else list(messages)
        names, routed = self._offer(messages, tool_choice, round_number, listened)
        if routed is not None:
            events.append(routed)
        self._track_cache(names, round_number, events, listened)
        tools = self._view.definitions_of(names)
        counts = self._tool_tokens  # this request's tool set, should it change later
        # Counted from the run's counter and counts, not from self: a request's record
        # is kept by the run, and a closure over the run would make a cycle that leaves
        # the run's history to the garbage collector.
        count = partial(_request_tokens, self._counted, self.count, sent, names, counts)
        tokens = LazyTokens(count)
        self.requests.append(RequestRecord(round_number, tokens))
        if listened:
            events.append(TokensCounted(round_number, tokens))
        return Prepared(sent, tools, events, self.cache_key)

    def _history_tokens(self, messages: Sequence[Message]) -> int:
        total = PER_REQUEST
        for message in messages:
            total += sum(_message_tokens(self._counted, self.count, message))
        return total

    def _offer(
        self, messages: Sequence[Message], tool_choice: str, round_number: int, listened: bool
    ) -> tuple[Sequence[str], ToolsRouted | None]:
        """The names to offer, and the ``ToolsRouted`` that says why (when routed and
        ``listened``)."""
        names = self._all
        # read_result is offered from the first request of a run that can cut a result,
        # so that the tools stay byte-identical (a cached prefix starts with them);
        # never while a call is forced: a small model could satisfy it with read_result.
        extra = self._offers_reader and tool_choice in _FREE_CHOICES
        view = self._view
        # The view's own tuples: their definitions are at hand (no lookup per name).
        every = view.with_reader if extra and view.with_reader else names
        if self.router is None:
            return every, None
        ranked = self.router.rank(routing_query(messages), self.policy.route_top_k)
        chosen = {name for name, _ in ranked}
        # What the model used stays offered (one name per tool of a long run: in C).
        chosen.update(self.policy.always_include, self.used)
        named = tool_choice in self._definitions
        if named:
            chosen.add(tool_choice)
        offered: Sequence[str]
        if chosen.issuperset(names):  # every tool chosen (a run that used them all)
            offered = every
        else:  # registration order, not rank order: a stable selection is a stable prefix
            offered = list(filter(chosen.__contains__, names))
            if extra:
                offered.append(READ_RESULT)
        if not listened:
            return offered, None
        named_tool = tool_choice if named else None
        return offered, self._routed(round_number, list(offered), ranked, named_tool, extra)

    def _routed(
        self,
        round_number: int,
        offered: list[str],
        ranked: list[tuple[str, float]],
        named: str | None,
        reader: bool,
    ) -> ToolsRouted:
        """The event that says why each tool of ``offered`` is: its reason, for those
        routing did not rank (``named``: the tool ``tool_choice`` names; ``reader``:
        ``read_result`` was added)."""
        reasons = dict.fromkeys(self.policy.always_include, "always_include")
        used = self.used.difference(reasons) if reasons else self.used
        reasons.update(dict.fromkeys(sorted(used), "used"))
        if named is not None:
            reasons.setdefault(named, "tool_choice")
        if reader:
            reasons[READ_RESULT] = "read_result"
        return ToolsRouted(round_number, offered, dict(ranked), reasons, len(self._all))

    def _track_cache(
        self, names: Sequence[str], round_number: int, events: list[Any], listened: bool
    ) -> None:
        """The ``CacheInvalidated`` of the first request whose tools differ from the
        previous one's (built for a listener only: nothing else reads it)."""
        current = tuple(names)
        previous, self._offered = self._offered, current
        if previous is None or previous == current or self._warned:
            return
        self._warned = True
        if not listened:
            return
        # Set lookups, in C: a test of each name against a tuple was a scan of the other.
        added = list(filterfalse(set(previous).__contains__, current))
        removed = list(filterfalse(set(current).__contains__, previous))
        events.append(CacheInvalidated(round_number, added, removed))

    # -- summary compression ---------------------------------------------------------------

    def summary_request(self, messages: Sequence[Message]) -> list[Message] | None:
        """The messages of the summary request due now, or ``None``."""
        compressor = self.compressor
        if compressor is None or not compressor.summarise:
            return None
        pending = compressor.pending(messages)
        if not pending:
            return None
        self._summary_prompt = summary_prompt(compressor.summary, pending)
        return self._summary_prompt

    def set_summary(self, text: str, usage: Usage) -> None:
        """Record the model's summary of everything dropped so far, and its request."""
        compressor = self.compressor
        if compressor is None:
            raise CallerError("set_summary() without a history budget")
        compressor.summary = text.strip() or compressor.summary
        compressor.summarised_upto = compressor.cut
        prompt = self._summary_prompt
        self.requests.append(
            RequestRecord(0, partial(account, prompt, count=self.count), usage, summary=True)
        )

    @property
    def store(self) -> ResultStore:
        """The full text of the run's cut results (made at the first cut or read: most
        runs cut none)."""
        store = self._store
        if store is None:
            store = self._store = ResultStore()
        return store

    def store_binding(self) -> tuple[ResultStore, int, Any]:
        """What the ``read_result`` tool reads: the store, the page size, the counter."""
        return self.store, self.policy.max_result_tokens or 4000, self.count

    # -- after a turn ------------------------------------------------------------------------

    def observe(self, message: AssistantMessage, usage: Usage) -> None:
        """Remember the tools the model used and the request's reported usage."""
        if self.router is not None:  # what the model used stays offered while routing
            calls = message.tool_calls
            self.used.update(filter(self._definitions.__contains__, map(_NAME, calls)))
        if self.requests:
            self.requests[-1].usage = usage

    @overload
    def shape_result(self, request: ToolRequest, tool: Tool, content: str, /) -> str: ...
    @overload
    def shape_result(
        self, request: ToolRequest, tool: Tool, content: tuple[ContentPart, ...], /
    ) -> tuple[ContentPart, ...]: ...
    def shape_result(
        self, request: ToolRequest, tool: Tool, content: str | tuple[ContentPart, ...], /
    ) -> str | tuple[ContentPart, ...]:
        """A result's text, cut to its cap (the full text kept in :attr:`store`, under a
        handle of the call's round and index: ids may repeat across turns).

        A result with images (its content parts) has its images checked against what
        the model accepts and only its text cut, each image counted as
        :data:`~toolwire.context.images.IMAGE_TOKENS` of the cap.

        Raises:
            ImageError: An image the model cannot take (the call's error result).
        """
        if content.__class__ is str and len(content) <= self.uncut_lengths.get(tool, -1):
            return content  # short enough for its tool's cap whatever its count: not counted
        if not isinstance(content, str):
            return self._shape_parts(request, tool, content)
        # Each tool's cap is worked out once per tool set (this runs for every result);
        # a tool outside the set offered (none, unless the caller passes one) is asked.
        limits = self._limits
        limit = limits[tool] if tool in limits else self._result_limit(tool)
        if limit is None or len(content) * MAX_TOKENS_PER_CHAR <= limit:
            return content  # short enough whatever the count: not counted
        cut = self._keep_cut(
            request, content, lambda handle: truncate_middle(content, limit, handle, self.count)
        )
        return content if cut is None else cut

    def _shape_parts(
        self, request: ToolRequest, tool: Tool, parts: tuple[ContentPart, ...]
    ) -> tuple[ContentPart, ...]:
        check_images(parts, image_limits(self.model))
        limit = self._result_limit(tool)
        if limit is None:
            return parts
        images = sum(1 for p in parts if isinstance(p, Image))
        budget = max(limit - images * IMAGE_TOKENS, limit // 4)  # some text always stays
        text = parts_text(parts)
        if len(text) * MAX_TOKENS_PER_CHAR <= budget:
            return parts
        cut = self._keep_cut(
            request, text, lambda handle: truncate_parts(parts, budget, handle, self.count)
        )
        return parts if cut is None else cut

    def _keep_cut(
        self, request: ToolRequest, full: str, cut: Callable[[str], _Cut | None]
    ) -> _Cut | None:
        """``cut`` under the call's handle; when it cut, the full text kept in the store."""
        handle = result_handle(self._round, request.index)
        done = cut(handle)
        if done is not None:
            self.store.put(handle, full, request.id)
        return done

    def _result_limit(self, tool: Tool) -> int | None:
        """The token cap of ``tool``'s results (``None``: never cut)."""
        return result_limit(tool, self.policy.max_result_tokens)

    def full_result(self, call_id: str) -> str | None:
        """The full text of a truncated result of this run (``None``: never truncated).

        Args:
            call_id: The handle in the cut marker (``read_result(call_id="r2c0", ...)``),
                or the provider's call id when it is unique in the run.

        Raises:
            CallerError: ``call_id`` is a provider id that several cut results share
                (the message lists their handles).
        """
        return self.store.get(call_id)

    def report(self) -> list[dict[str, Any]]:
        """Per request: tokens by part and the provider's usage (JSON-ready)."""
        return [r.as_dict() for r in self.requests]


def routing_query(messages: Sequence[Message]) -> str:
    """The text routing ranks tools by: the user's and the model's own words.

    Tool results never enter it (a result that says "call delete_all" must not put
    ``delete_all`` on offer). The first user message and the newest user and assistant
    messages are read.
    """
    texts: list[str] = []
    first = next(filter(_IS_USER, messages), None)
    # Tool results are most of a long history: passed over in C, not tested here.
    for message in filterfalse(_IS_RESULT, reversed(messages)):
        if len(texts) >= _QUERY_MESSAGES:
            break
        if isinstance(message, UserMessage) and message is not first:
            texts.append(message.content)
        elif isinstance(message, AssistantMessage):
            texts.append(message.text)
    if first is not None:
        texts.append(first.content)
    return "\n".join(reversed(texts))


def _message_tokens(
    counted: _Counted, count: Callable[[str], int], message: Message
) -> tuple[int, int, int]:
    found = counted.get(id(message))
    if found is None or found[0] is not message:
        counts = message_tokens(message, count)
        found = counted[id(message)] = (message, *counts)
    return found[1], found[2], found[3]


def _request_tokens(
    counted: _Counted,
    count: Callable[[str], int],
    sent: Sequence[Message],
    names: Sequence[str],
    tool_tokens: dict[str, int],
) -> RequestTokens:
    """One request's tokens by part, from each message's count (taken once per run)."""
    calls = results = 0
    other = PER_REQUEST
    for message in sent:
        c, r, o = _message_tokens(counted, count, message)
        calls += c
        results += r
        other += o
    tools = sum(tool_tokens[n] for n in names)
    return RequestTokens(tools, calls, results, other, exact=bool(count.exact))  # type: ignore[attr-defined]
