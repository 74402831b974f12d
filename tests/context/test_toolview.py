"""A tool set's view made once: what a request offers is what it was before (the same
definitions, in order, a new list each time), and a grown tool set gets a new view."""

from __future__ import annotations

import pickle
import threading

import pytest

from toolwire import ContextPolicy, Tool
from toolwire.context import RunContext, read_result_tool
from toolwire.context.events import ToolsRouted
from toolwire.context.toolview import context_base, tool_view, toolset_view
from toolwire.errors import CallerError
from toolwire.messages import AssistantMessage, ToolCall, Usage, UserMessage
from toolwire.tools.tool import Toolset


def _tool(name: str, words: int = 1) -> Tool:
    return Tool.from_schema(
        name,
        f"Look up the {name}." + " More notes." * words,
        {"type": "object", "properties": {"q": {"type": "string"}}},
        lambda args: "ok",
    )


def _toolset(count: int, reader: bool, words: int = 1) -> Toolset:
    tools = Toolset([_tool(f"tool_{k}", words) for k in range(count)])
    if reader:
        tools.add(read_result_tool())
    return tools


def _expected(context: RunContext, names: list[str]) -> list[object]:
    """The definitions the request should offer: each name's, looked up one by one."""
    definitions = context._view.definitions
    return [definitions[n] for n in names]


@pytest.mark.parametrize("reader", [False, True])
@pytest.mark.parametrize("choice", ["auto", "required", "tool_1"])
def test_an_unrouted_request_offers_each_definition_in_order_in_a_new_list(
    reader: bool, choice: str
) -> None:
    context = RunContext(ContextPolicy(), _toolset(5, reader))
    first = context.prepare([UserMessage("hi")], choice, 1)
    second = context.prepare([UserMessage("hi")], choice, 2)
    names = [f"tool_{k}" for k in range(5)]
    if reader and choice == "auto":
        names.append("read_result")
    assert [t.name for t in first.tools] == names
    assert first.tools == second.tools == _expected(context, names)
    assert all(a is b for a, b in zip(first.tools, second.tools, strict=True))
    assert first.tools is not second.tools
    first.tools.append(first.tools[0])  # a caller's edit changes no later request
    assert len(context.prepare([UserMessage("hi")], choice, 3).tools) == len(names)


def test_a_routed_request_offers_the_chosen_definitions_in_registration_order() -> None:
    context = RunContext(ContextPolicy(route_threshold=3, route_top_k=2), _toolset(8, True))
    assert context.router is not None
    prepared = context.prepare([UserMessage("look up tool_6 and tool_2")], "auto", 1)
    names = [t.name for t in prepared.tools]
    assert names[-1] == "read_result" and len(names) == 3
    assert names[:-1] == sorted(names[:-1], key=lambda n: int(n.split("_")[1]))
    assert prepared.tools == _expected(context, names)
    call = ToolCall("c1", "tool_7", "{}")
    context.observe(AssistantMessage([call]), Usage())
    again = context.prepare([UserMessage("look up tool_6 and tool_2")], "auto", 2)
    assert "tool_7" in [t.name for t in again.tools]
    assert again.tools == _expected(context, [t.name for t in again.tools])


def test_a_toolset_keeps_its_view_until_it_grows() -> None:
    tools = _toolset(4, False)
    view = toolset_view(tools)
    assert toolset_view(tools) is view
    assert view is tool_view(list(tools))  # the same view as its tools' own
    tools.add(_tool("late"))
    grown = toolset_view(tools)
    assert grown is not view and grown.names[-1] == "late"
    context = RunContext(ContextPolicy(), tools)
    assert [t.name for t in context.prepare([UserMessage("hi")], "auto", 1).tools][-1] == "late"


def test_the_tool_sets_total_tokens_are_the_routable_definitions_counts_summed() -> None:
    view = toolset_view(_toolset(6, True, words=40))
    count = RunContext(ContextPolicy(), _toolset(1, False)).count
    tokens = view.tokens(count)
    assert view.total_tokens(count) == sum(tokens[n] for n in view.names)
    assert "read_result" in tokens and "read_result" not in view.names


class _Provider:
    """A model of a provider with a tool limit (OpenAI's 128), as the policy sees it."""

    provider = "OpenAI Chat Completions"
    name = "limited"

    def stream(self, request: object) -> object:
        raise AssertionError("never asked")


class _Tokenizer(_Provider):
    """A model with a tokenizer of its own: exact counts, per model."""

    def count_text_tokens(self, text: str) -> int:
        return len(text.split())


def test_equal_policies_share_what_they_make_of_a_tool_set_and_others_do_not() -> None:
    """Counts, caps and routing are worked out once per policy and tool limit: every run
    of equal policies (each Agent() has its own default one) reads the same objects."""
    tools = _toolset(130, True)
    cheap = {"route_min_tokens": 10**6}  # routed by the provider's limit only
    first, second = (
        RunContext(ContextPolicy(**cheap), tools),
        RunContext(ContextPolicy(**cheap), tools),
    )
    view = first._view
    assert view.under(first.policy, first.count, None) is view.under(
        second.policy, second.count, None
    )
    assert first._tool_tokens is second._tool_tokens and first.router is second.router is None
    capped = RunContext(ContextPolicy(max_result_tokens=10, **cheap), tools)
    tool = next(iter(tools))
    assert capped.uncut_lengths[tool] < first.uncut_lengths[tool]
    routed = RunContext(ContextPolicy(route_threshold=100, **cheap), tools)
    assert routed.router is not None
    # The provider's tool limit is part of the key: 130 tools are routed for OpenAI only.
    assert RunContext(ContextPolicy(**cheap), tools, _Provider()).router is not None
    assert RunContext(ContextPolicy(**cheap), tools).router is None
    # A model's own tokenizer counts the definitions itself, run by run.
    exact = RunContext(ContextPolicy(**cheap), tools, _Tokenizer())
    assert view.under(exact.policy, exact.count, exact.model) is not view.under(
        exact.policy, exact.count, exact.model
    )
    assert exact._tool_tokens["tool_0"] != first._tool_tokens["tool_0"]


@pytest.mark.parametrize("reader", [False, True])
@pytest.mark.parametrize("always", [(), ("tool_5",), ("tool_1", "tool_7")])
@pytest.mark.parametrize("used", [(), ("tool_7",), ("tool_0", "tool_3", "tool_7")])
@pytest.mark.parametrize("choice", ["auto", "required", "tool_4", "read_result"])
def test_a_request_nobody_listens_to_offers_the_same_tools_without_the_events(
    reader: bool, always: tuple[str, ...], used: tuple[str, ...], choice: str
) -> None:
    """``listened=False`` (a run nobody streams or observes) skips ToolsRouted and
    TokensCounted, never what is offered; the listened request's reasons say why each
    tool routing did not rank is there."""
    policy = ContextPolicy(route_threshold=3, route_top_k=2, always_include=always)
    if choice == "read_result" and not reader:
        choice = "none"
    contexts = [RunContext(policy, _toolset(8, reader)) for _ in range(2)]
    message = AssistantMessage([ToolCall(f"c{k}", name, "{}") for k, name in enumerate(used)])
    history = [UserMessage("look up tool_6 and tool_2"), message]
    prepared = []
    for context, listened in zip(contexts, (True, False), strict=True):
        context.observe(message, Usage())
        prepared.append(context.prepare(history, choice, 2, listened=listened))
    heard, unheard = prepared
    assert [t.name for t in heard.tools] == [t.name for t in unheard.tools]
    assert unheard.events == [] and contexts[1].requests[0].tokens == contexts[0].requests[0].tokens
    [routed] = [e for e in heard.events if isinstance(e, ToolsRouted)]
    assert routed.offered == [t.name for t in heard.tools]
    assert all(n in routed.scores or n in routed.reasons for n in routed.offered)
    assert {*always, *used} <= set(routed.offered)


@pytest.mark.parametrize("reader", [False, True])
@pytest.mark.parametrize("listened", [False, True])
def test_a_routed_request_that_chose_every_tool_offers_each_in_order(
    reader: bool, listened: bool
) -> None:
    """A run that used every tool is offered each of them (the view's own tuple then,
    not a lookup per name): the same definitions, in registration order."""
    context = RunContext(ContextPolicy(route_threshold=3, route_top_k=2), _toolset(8, reader))
    used = AssistantMessage(
        [ToolCall(f"c{k}", f"tool_{k}", "{}") for k in (7, 0, 3, 1, 6, 2, 5, 4)]
    )
    context.observe(used, Usage())
    prepared = context.prepare([UserMessage("hi"), used], "auto", 2, listened=listened)
    names = [f"tool_{k}" for k in range(8)] + (["read_result"] if reader else [])
    assert [t.name for t in prepared.tools] == names
    assert prepared.tools == _expected(context, names)
    routed = [e for e in prepared.events if isinstance(e, ToolsRouted)]
    assert [e.offered for e in routed] == ([names] if listened else [])
    again = context.prepare([UserMessage("hi"), used], "required", 3, listened=listened)
    assert [t.name for t in again.tools] == names[:8]  # no read_result while a call is forced


class _Labelled(_Provider):
    """A model whose provider is its own (an instance's, not its class's)."""

    def __init__(self, provider: str) -> None:
        self.provider = provider


def test_runs_of_the_same_tools_and_policy_start_from_one_base_until_something_changes() -> None:
    """Each run of an agent makes a RunContext, often with a new model object (a scripted
    one is used up): what belongs to the tool set, the policy and the kind of model is
    made once; a grown tool set, another policy object or another provider gets its own."""
    tools, policy = _toolset(130, True), ContextPolicy(route_min_tokens=10**6)
    base = context_base(tools, policy, _Provider())
    assert context_base(tools, policy, _Provider()) is base  # a new model, the same kind
    first, second = RunContext(policy, tools, _Provider()), RunContext(policy, tools, _Provider())
    assert first._view is second._view is base.view and first.router is second.router
    assert first.router is not None  # 130 tools: over OpenAI's limit
    assert first.count is not second.count  # each run's memo is its own
    # The provider is read per run: the same class labelled otherwise is not routed.
    assert RunContext(policy, tools, _Labelled("Anthropic Messages")).router is None
    assert RunContext(policy, tools, _Labelled("OpenAI Responses")).router is not None
    assert context_base(tools, ContextPolicy(route_min_tokens=10**6), _Provider()) is not base
    tools.add(_tool("late"))
    grown = RunContext(policy, tools, _Provider())
    assert grown._view is not base.view and grown._view.names[-1] == "late"
    # A model's own tokenizer counts for itself: no base is shared.
    tokenizer = _Tokenizer()
    assert context_base(tools, policy, tokenizer) is not context_base(tools, policy, tokenizer)


def test_a_shared_base_still_refuses_a_wrong_model_and_an_unknown_always_include() -> None:
    """What a base checks is checked for every run: neither error is cached away."""
    tools = _toolset(3, False)
    policy = ContextPolicy(always_include=("tool_1",))
    RunContext(policy, tools)  # a base for this tool set and policy
    for _ in range(2):
        with pytest.raises(CallerError, match="neither a model spec string nor a Model"):
            RunContext(policy, tools, 42)
    wrong = ContextPolicy(always_include=("tool_9",))
    for _ in range(2):
        with pytest.raises(CallerError, match="unknown tools: tool_9"):
            RunContext(wrong, tools)
    tools.add(_tool("tool_9"))  # once registered, the same policy is fine
    assert "tool_9" in RunContext(wrong, tools)._definitions


class _Locked(_Tokenizer):
    """A model with a tokenizer that cannot cross a process boundary."""

    def __init__(self) -> None:
        self.lock = threading.Lock()


def test_a_context_counted_by_a_models_tokenizer_pickles_without_the_model() -> None:
    """The base's counter is the model's own bound method: it stays behind, as the model."""
    context = RunContext(ContextPolicy(), _toolset(2, False), _Locked())
    context.prepare([UserMessage("hi there")], "auto", 1)
    copy = pickle.loads(pickle.dumps(context))
    assert copy.report() == context.report() and copy.report()[0]["counted_by"] == "tokenizer"
