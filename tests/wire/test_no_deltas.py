"""``deltas=False``: a decoder reports no ``ToolCallDelta``, and nothing else changes.

For consumers that want whole calls (``ToolCallReady``) and the turn, not the argument
text as it grows: the per-fragment event is most of what a fragment costs the pure build.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.wire import (
    AnthropicStream,
    Assembler,
    OpenAIChatStream,
    OpenAIResponsesStream,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
)
from toolwire.wire.events import Event
from toolwire.wire.stream import StreamDecoder

from .test_properties import PROVIDERS, Call, Chooser, Spec, specs, to_sse

DECODERS: dict[str, type[StreamDecoder]] = {
    "openai": OpenAIChatStream,
    "anthropic": AnthropicStream,
    "responses": OpenAIResponsesStream,
}


def _run(stream: StreamDecoder, items: list[dict[str, Any]]) -> tuple[list[Event], Any]:
    events: list[Event] = []
    for item in items:
        events += stream.feed(item)
    return events, stream.close()


@settings(max_examples=300, deadline=None)
@given(st.data(), st.sampled_from(sorted(DECODERS)))
def test_without_deltas_the_turn_and_other_events_are_the_same(
    data: st.DataObject, provider: str
) -> None:
    cls = DECODERS[provider]
    render = PROVIDERS[provider][1]
    items = render(Chooser(data.draw), data.draw(specs()))
    with_deltas, turn = _run(cls(), items)
    without, turn_without = _run(cls(deltas=False), items)
    assert turn_without == turn
    assert without == [e for e in with_deltas if type(e) is not ToolCallDelta]
    # The same from SSE bytes cut anywhere.
    raw = to_sse(items)
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(raw)), max_size=8))))
    stream = cls(deltas=False)
    events: list[Event] = []
    for start, end in zip([0, *cuts], [*cuts, len(raw)], strict=True):
        events += stream.feed_bytes(raw[start:end])
    assert stream.close() == turn
    assert events == without


@pytest.mark.parametrize("provider", sorted(DECODERS))
def test_deltas_are_reported_by_default(provider: str) -> None:
    render = PROVIDERS[provider][1]
    spec = Spec(
        "", "", [Call("call_1", "lookup", '{"q": "x", "n": [1, 2]}', {"q": "x", "n": [1, 2]})]
    )
    items = render(Chooser(), spec)
    events, _ = _run(DECODERS[provider](), items)
    assert any(type(e) is ToolCallDelta for e in events)
    events, _ = _run(DECODERS[provider](deltas=False), items)
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
    expected, turn = _run(DECODERS[provider](deltas=False), items)
    stream = DECODERS[provider]()
    stream.drop_deltas()  # the agent's way: after the provider made the decoder
    assert _run(stream, items) == (expected, turn)
