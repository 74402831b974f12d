"""``deltas=False``: a decoder reports no ``ToolCallDelta``, and nothing else changes.

For consumers that want whole calls (``ToolCallReady``) and the turn, not the argument
text as it grows: the per-fragment event is most of what a fragment costs the pure build.
The property (any turn, chunked and cut any way, gives the same turn and the same events
less the deltas) is checked on the chunking property's examples, which draw the same
turns: ``check_without_deltas`` in tests/wire/test_properties.py.
"""

from __future__ import annotations

import pytest

from toolwire.wire import (
    AnthropicStream,
    Assembler,
    OpenAIChatStream,
    OpenAIResponsesStream,
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
    assert [type(e) for e in events if type(e) in (ToolCallStarted, ToolCallReady)] == [
        ToolCallStarted,
        ToolCallReady,
    ]


def test_the_assembler_without_deltas() -> None:
    asm = Assembler(deltas=False)
    asm.tool_fragment(0, "call_1", "lookup", '{"q": ')
    asm.arguments(0, '"x"}')
    assert [type(e) for e in asm.take_events()] == [ToolCallStarted, ToolCallReady]
    asm.custom_call(1, "call_2", "shell", "ls")
    asm.custom_input(1, " -l")
    assert [type(e) for e in asm.take_events()] == [ToolCallStarted]
    asm.finish("tool_calls")
    assert [r.raw_arguments for r in asm.close().requests] == ['{"q": "x"}', "ls -l"]


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
