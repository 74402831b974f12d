"""The assembler owns its event list: ``take_events`` hands each event out exactly once."""

from __future__ import annotations

from toolwire.wire import AnthropicStream, Assembler, ToolCallDelta, ToolCallReady, ToolCallStarted


def test_take_events_hands_out_each_event_once_and_starts_a_new_list() -> None:
    asm = Assembler()
    asm.tool_fragment(0, "call_1", "lookup", '{"q": ')
    first = asm.take_events()
    assert [type(e) for e in first] == [ToolCallStarted, ToolCallDelta]
    asm.arguments(0, '"x"}')
    second = asm.take_events()
    assert [type(e) for e in second] == [ToolCallDelta, ToolCallReady]
    assert asm.take_events() == []
    assert [type(e) for e in first] == [ToolCallStarted, ToolCallDelta]  # not reused


def test_events_nobody_took_come_out_with_the_next_take() -> None:
    asm = Assembler()
    asm.text("a")
    asm.text("b")
    assert [e.text for e in asm.take_events()] == ["a", "b"]  # type: ignore[attr-defined]


def test_events_made_through_the_decoders_assembler_come_out_of_the_next_feed() -> None:
    stream = AnthropicStream()
    stream.feed({"type": "message_start", "message": {"usage": {"input_tokens": 3}}})
    stream.assembler.notice("mine", "a caller's own notice")
    events = stream.feed({"type": "ping"})
    assert [getattr(e, "kind", None) for e in events] == ["mine"]
    assert stream.feed({"type": "ping"}) == []
