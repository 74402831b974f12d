"""``deltas=False``: a decoder reports no ``ToolCallDelta``, and the turn is the same.

For consumers that want whole calls (``ToolCallReady``) and the turn, not the argument
text as it grows: the per-fragment event is most of what a fragment costs the pure build.
A call whole in the item that opens it (as many servers send a small call) is announced
by its ``ToolCallReady`` alone: its ``ToolCallStarted`` would say nothing the Ready does
not, and an agent run nobody listens to would pay an event and a step of the model's
stream for it. A call whose arguments come in later items keeps its Started.
The property (any turn, chunked and cut any way, gives the same turn and the same events
less the deltas and the Starteds of the calls whole in their items) is checked on the
chunking property's examples, which draw the same turns: ``check_without_deltas`` in
tests/wire/test_properties.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.wire import (
    AnthropicStream,
    Assembler,
    OpenAIChatStream,
    OpenAIResponsesStream,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
)
from toolwire.wire.stream import StreamDecoder

from .test_properties import PROVIDERS, Call, Chooser, Spec, run_items

DECODERS: dict[str, type[StreamDecoder]] = {
    "openai": OpenAIChatStream,
    "anthropic": AnthropicStream,
    "responses": OpenAIResponsesStream,
}


@pytest.mark.parametrize("provider", sorted(DECODERS))
def test_deltas_are_reported_by_default(provider: str) -> None:
    render = PROVIDERS[provider][1]
    spec = Spec(
        "", "", [Call("call_1", "lookup", '{"q": "x", "n": [1, 2]}', {"q": "x", "n": [1, 2]})]
    )
    items = render(Chooser(), spec)
    events, _ = run_items(DECODERS[provider](), items)
    assert any(type(e) is ToolCallDelta for e in events)
    events, _ = run_items(DECODERS[provider](deltas=False), items)
    assert not any(type(e) is ToolCallDelta for e in events)
    # The canonical rendering sends Chat's call whole in one chunk; Anthropic's and
    # Responses' open a call in one item and send its arguments in the next.
    calls = [type(e) for e in events if type(e) in (ToolCallStarted, ToolCallReady)]
    assert calls == ([ToolCallReady] if provider == "openai" else [ToolCallStarted, ToolCallReady])


def test_the_assembler_without_deltas() -> None:
    asm = Assembler(deltas=False)
    asm.tool_fragment(0, "call_1", "lookup", '{"q": ')
    assert [type(e) for e in asm.take_events()] == [ToolCallStarted]
    asm.arguments(0, '"x"}')
    assert [type(e) for e in asm.take_events()] == [ToolCallReady]
    asm.custom_call(1, "call_2", "shell", "ls")
    asm.custom_input(1, " -l")
    assert [type(e) for e in asm.take_events()] == [ToolCallStarted]
    asm.finish("tool_calls")
    assert [r.raw_arguments for r in asm.close().requests] == ['{"q": "x"}', "ls -l"]


@pytest.mark.parametrize(
    "whole",
    [
        lambda asm: asm.start_call(0, "call_1", "lookup", '{"q": "x"}'),  # the straight path
        lambda asm: asm.tool_fragment(0, "call_1", "lookup", '{"q": "x"}'),
        lambda asm: asm.tool_fragment(0, "call_1", "lookup", '{"q": "\u00e9"}'),  # _emit_ready
        lambda asm: (
            asm.tool_fragment(0, "call_1", None, '{"q": "x"}'),
            asm.tool_fragment(0, None, "lookup", None),
        ),
    ],
)
def test_a_call_whole_before_the_events_are_taken_is_its_ready_alone(whole: Any) -> None:
    # Every way a call can open and close between two takes (a decoder takes at each
    # item): the Ready in the Started's place, with the call's final id and name.
    asm = Assembler(deltas=False)
    asm.text("hi")
    whole(asm)
    events = asm.take_events()
    assert [type(e) for e in events] == [TextDelta, ToolCallReady]
    ready = events[1]
    assert isinstance(ready, ToolCallReady)
    assert (ready.index, ready.request.id, ready.request.name) == (0, "call_1", "lookup")
    asm.finish("tool_calls")
    assert asm.close().requests == [ready.request]


def test_only_the_calls_own_start_gives_way_to_its_ready() -> None:
    # Call 1 opens after call 0 and before call 0 closes: call 0's Ready is no one's
    # replacement (the last event is call 1's Started), and call 1 keeps its Started.
    asm = Assembler(deltas=False)
    asm.tool_fragment(0, "call_0", "f", '{"a": ')
    asm.tool_fragment(1, "call_1", "g", '{"b": ')
    asm.arguments(0, "1}")
    asm.arguments(1, "2}")
    events = asm.take_events()
    assert [(type(e).__name__, e.index) for e in events] == [  # type: ignore[attr-defined]
        ("ToolCallStarted", 0),
        ("ToolCallStarted", 1),
        ("ToolCallReady", 0),
        ("ToolCallReady", 1),
    ]


def test_with_deltas_every_call_has_its_start() -> None:
    asm = Assembler()
    asm.start_call(0, "call_1", "lookup", '{"q": "x"}')
    asm.tool_fragment(1, "call_2", "lookup", '{"q": "\u00e9"}')
    assert [type(e) for e in asm.take_events()] == [
        ToolCallStarted,
        ToolCallDelta,
        ToolCallReady,
        ToolCallStarted,
        ToolCallDelta,
        ToolCallReady,
    ]


@pytest.mark.parametrize("provider", sorted(DECODERS))
def test_drop_deltas_is_deltas_false_from_then_on(provider: str) -> None:
    render = PROVIDERS[provider][1]
    spec = Spec(
        "", "", [Call("call_1", "lookup", '{"q": "x", "n": [1, 2]}', {"q": "x", "n": [1, 2]})]
    )
    items = render(Chooser(), spec)
    expected, turn = run_items(DECODERS[provider](deltas=False), items)
    stream = DECODERS[provider]()
    stream.drop_deltas()  # the agent's way: after the provider made the decoder
    assert run_items(stream, items) == (expected, turn)
