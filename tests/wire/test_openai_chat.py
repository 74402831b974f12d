from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import DecoderStateError, ProtocolError, ProviderAPIError, TurnError
from toolwire.messages import TextPart, ToolCall, Usage
from toolwire.wire import OpenAIChatStream, ToolCallReady

from .conftest import fixture_bytes, fixture_items


def chunk(
    tool_calls: list[dict[str, Any]] | None = None, finish: str | None = None, **delta: Any
) -> dict[str, Any]:
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def tc(
    index: int | None, id: str | None = None, name: str | None = None, args: str | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {} if index is None else {"index": index}
    if id:
        out["id"] = id
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if fn:
        out["function"] = fn
    return out


def run(*chunks: dict[str, Any]) -> Any:
    stream = OpenAIChatStream()
    for c in chunks:
        stream.feed(c)
    return stream.close()


def test_recorded_stream_as_dicts_and_as_bytes() -> None:
    stream = OpenAIChatStream()
    events = [e for item in fixture_items("openai_chat_parallel.sse") for e in stream.feed(item)]
    turn = stream.close()
    raw = OpenAIChatStream()
    raw.feed_bytes(fixture_bytes("openai_chat_parallel.sse"))
    assert raw.close() == turn
    assert turn.text == "Let me search both keywords."
    assert turn.tool_calls == [
        ToolCall("call_a", "explore_code", '{"query":"login"}'),
        ToolCall("call_b", "explore_code", '{"query":"session","path":"src/\\u00e9"}'),
    ]
    assert [r.input for r in turn.requests] == [
        {"query": "login"},
        {"query": "session", "path": "src/é"},
    ]
    assert turn.finish_reason == "tool_calls"
    assert turn.usage == Usage(input_tokens=182, output_tokens=41, cache_read_tokens=128)
    assert isinstance(turn.message.parts[0], TextPart)
    # Each call is reported complete as soon as its JSON closes, before the stream ends.
    ready = [i for i, e in enumerate(events) if isinstance(e, ToolCallReady)]
    assert len(ready) == 2 and ready[-1] < len(events) - 2


def test_id_after_first_fragment_and_split_name() -> None:
    turn = run(
        chunk([tc(0, name="explore_")]),
        chunk([tc(0, name="code", args='{"q"')]),
        chunk([tc(0, id="call_1", args=": 1}")]),
        chunk(finish="tool_calls"),
    )
    assert turn.tool_calls == [ToolCall("call_1", "explore_code", '{"q": 1}')]


def test_ready_at_the_closing_brace_whatever_came_before() -> None:
    stream = OpenAIChatStream()
    stream.feed(chunk([tc(0, id="call_1", name="f", args=' {"a": "}"')]))
    fragments = [', "b": [1, {"c": 2}]', "}", "\n"]
    ready = [
        [e for e in stream.feed(chunk([tc(0, args=f)])) if isinstance(e, ToolCallReady)]
        for f in fragments
    ]
    assert [len(r) for r in ready] == [0, 1, 0]
    assert ready[1][0].request.input == {"a": "}", "b": [1, {"c": 2}]}
    stream.feed(chunk(finish="tool_calls"))
    request = stream.close().requests[0]
    assert request.raw_arguments.endswith("}\n")  # verbatim, with what came after
    assert request.input == ready[1][0].request.input


def test_arguments_that_are_not_an_object_are_reported_at_the_end() -> None:
    stream = OpenAIChatStream()
    events = stream.feed(chunk([tc(0, id="call_1", name="f", args="[1, ")]))
    events += stream.feed(chunk([tc(0, args="{}]")]))
    events += stream.feed(chunk(finish="tool_calls"))
    assert not [e for e in events if isinstance(e, ToolCallReady)]
    assert stream.close().requests[0].input == [1, {}]


def test_ready_waits_for_a_late_id() -> None:
    stream = OpenAIChatStream()
    assert not any(
        isinstance(e, ToolCallReady) for e in stream.feed(chunk([tc(0, name="f", args="{}")]))
    )
    events = stream.feed(chunk([tc(0, id="call_9")]))
    assert [e.call.id for e in events if isinstance(e, ToolCallReady)] == ["call_9"]


def test_whole_call_in_one_delta_and_several_calls_in_one_chunk() -> None:
    turn = run(
        chunk([tc(0, "a", "f", '{"x": 1}'), tc(1, "b", "g", '{"y": [2]}')]),
        chunk(finish="tool_calls"),
    )
    assert [(r.id, r.name, r.input) for r in turn.requests] == [
        ("a", "f", {"x": 1}),
        ("b", "g", {"y": [2]}),
    ]


def test_empty_arguments_mean_empty_object() -> None:
    turn = run(chunk([tc(0, "a", "now", "")]), chunk(finish="tool_calls"))
    assert turn.requests[0].input == {}
    assert turn.requests[0].error is None
    assert turn.tool_calls[0].arguments == "{}"


def test_missing_index_with_one_open_call_is_merged_and_reported() -> None:
    turn = run(
        chunk([tc(0, "a", "f", '{"x": ')]), chunk([tc(None, args="1}")]), chunk(finish="tool_calls")
    )
    assert turn.requests[0].input == {"x": 1}
    assert [n.kind for n in turn.notices] == ["missing_index"]


def test_missing_index_calls_arriving_whole_get_their_own_slots() -> None:
    turn = run(
        chunk([tc(None, "a", "f", "{}")]),
        chunk([tc(None, "b", "g", "{}")]),
        chunk(finish="tool_calls"),
    )
    assert [c.id for c in turn.tool_calls] == ["a", "b"]


def test_missing_index_with_two_open_calls_is_a_turn_error() -> None:
    stream = OpenAIChatStream()
    stream.feed(chunk([tc(0, "a", "f", "{"), tc(1, "b", "g", "{")]))
    with pytest.raises(TurnError) as info:
        stream.feed(chunk([tc(None, args="}")]))
    assert info.value.problem == "missing_index"
    with pytest.raises(TurnError):  # a failed decoder stays failed
        stream.feed(chunk(finish="stop"))


@pytest.mark.parametrize(
    ("calls", "problem", "index"),
    [
        ([tc(0, name="f", args="{}")], "missing_id", 0),
        ([tc(0, "a", "f", "{}"), tc(1, "b", None, "{}")], "missing_name", 1),
        ([tc(0, "a", "f", "{}"), tc(1, "a", "g", "{}")], "duplicate_id", 1),
    ],
)
def test_turn_rules(calls: list[dict[str, Any]], problem: str, index: int) -> None:
    with pytest.raises(TurnError) as info:
        run(chunk(calls), chunk(finish="tool_calls"))
    assert info.value.problem == problem
    assert info.value.index == index
    assert f"index {index}" in str(info.value)


def test_invalid_json_is_recorded_on_that_call_only() -> None:
    turn = run(
        chunk([tc(0, "a", "f", '{"x": 1,'), tc(1, "b", "g", '{"y": 2}')]),
        chunk(finish="tool_calls"),
    )
    bad, good = turn.requests
    assert (
        bad.input is None
        and bad.error is not None
        and "Invalid JSON arguments for tool f" in bad.error
    )
    assert good.input == {"y": 2} and good.error is None
    assert turn.tool_calls[0].arguments == '{"x": 1,'  # history keeps the verbatim text


def test_empty_call_and_finish_reason_mismatch_are_reported() -> None:
    assert [n.kind for n in run(chunk(content="hi"), chunk(finish="tool_calls")).notices] == [
        "empty_call"
    ]
    turn = run(chunk([tc(0, "a", "f", "{}")]), chunk(finish="stop"))
    assert [n.kind for n in turn.notices] == ["finish_reason_mismatch"]


def test_reasoning_content_and_refusal() -> None:
    turn = run(
        chunk(reasoning_content="think "),
        chunk(reasoning="more"),
        chunk(refusal="no"),
        chunk(finish="stop"),
    )
    # A refusal is its own part, not answer text, and the turn says so.
    assert (turn.reasoning, turn.text, turn.refusal) == ("think more", "", "no")
    assert turn.refused


@pytest.mark.parametrize(
    "delta",
    [
        {"reasoning_content": "r"},
        {"role": "assistant", "reasoning": "r"},
        {"role": "assistant", "content": "a", "reasoning_content": "r"},
        {"content": None, "refusal": "no"},
        {"role": "assistant", "refusal": "no"},
        {"role": "assistant", "content": "a", "refusal": "no", "tool_calls": None},
        {"content": "a", "annotations": [{"type": "url_citation", "url_citation": {"url": "u"}}]},
    ],
)
def test_a_delta_beside_its_content_and_role_is_read_whatever_it_holds(
    delta: dict[str, Any],
) -> None:
    # A delta of content and role alone skips the other keys' lookups: any other key,
    # alone or beside either, is still read.
    turn = run({"choices": [{"index": 0, "delta": delta}]}, chunk(finish="stop"))
    assert turn.text == (delta.get("content") or "")
    assert turn.reasoning == delta.get("reasoning_content", delta.get("reasoning", ""))
    assert turn.refusal == delta.get("refusal", "")
    citations = [
        c for p in turn.message.parts if isinstance(p, TextPart) for c in p.citations or []
    ]
    assert citations == delta.get("annotations", [])


def test_arguments_sent_as_an_object_are_kept_and_reported() -> None:
    turn = run(
        chunk([{"index": 0, "id": "a", "function": {"name": "f", "arguments": {"x": 1}}}]),
        chunk(finish="tool_calls"),
    )
    assert turn.requests[0].input == {"x": 1}
    assert [n.kind for n in turn.notices] == ["arguments_not_string"]


def test_truncated_stream_is_an_error_that_keeps_the_partial_turn() -> None:
    stream = OpenAIChatStream()
    stream.feed(chunk(content="partial answer"))
    with pytest.raises(ProtocolError, match="ended before the turn finished") as info:
        stream.close()
    assert info.value.partial.text == "partial answer"


def test_done_marker_without_finish_reason_ends_the_turn_with_a_notice() -> None:
    stream = OpenAIChatStream()
    stream.feed_bytes(
        b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\ndata: [DONE]\n\n'
    )
    turn = stream.close()
    assert (turn.text, turn.finish_reason) == ("x", "stop")
    assert [n.kind for n in turn.notices] == ["finish_reason_inferred"]


def test_no_done_marker_and_no_finish_reason_is_still_truncated() -> None:
    stream = OpenAIChatStream()
    stream.feed_bytes(b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n')
    with pytest.raises(ProtocolError, match="ended before the turn finished"):
        stream.close()


def test_error_payload_and_wrong_types() -> None:
    with pytest.raises(ProviderAPIError, match="overloaded"):
        OpenAIChatStream().feed({"error": {"message": "overloaded", "type": "server_error"}})
    with pytest.raises(ProtocolError, match="item 1"):
        OpenAIChatStream().feed({"choices": [{"index": 0, "delta": {"content": 5}}]})
    with pytest.raises(ProtocolError):
        OpenAIChatStream().feed({"choices": "nope"})
    with pytest.raises(ProtocolError, match="not JSON"):
        OpenAIChatStream().feed_bytes(b"data: {oops\n\n")
    with pytest.raises(ProtocolError, match="dict or an SDK object"):
        OpenAIChatStream().feed(42)


def test_closed_decoder_refuses_more_input() -> None:
    stream = OpenAIChatStream()
    stream.feed(chunk(finish="stop"))
    stream.close()
    with pytest.raises(DecoderStateError):
        stream.feed(chunk(content="late"))


def test_a_closed_or_failed_decoder_refuses_to_close_again() -> None:
    stream = OpenAIChatStream()
    stream.feed(chunk(finish="stop"))
    stream.close()
    with pytest.raises(DecoderStateError):
        stream.close()
    failed = OpenAIChatStream()
    with pytest.raises(ProtocolError) as first:
        failed.feed({"choices": "nope"})
    with pytest.raises(ProtocolError) as again:
        failed.close()
    assert again.value is first.value  # the same error, raised again


def test_other_choices_are_ignored_with_a_notice() -> None:
    stream = OpenAIChatStream()
    stream.feed(
        {
            "choices": [
                {"index": 1, "delta": {"content": "other"}},
                {"index": 0, "delta": {"content": "mine"}},
            ]
        }
    )
    stream.feed(chunk(finish="stop"))
    turn = stream.close()
    assert turn.text == "mine"
    assert [n.kind for n in turn.notices] == ["other_choices_ignored"]


def test_sdk_chunk_objects_are_accepted() -> None:
    openai_types = pytest.importorskip("openai.types.chat")
    items = fixture_items("openai_chat_parallel.sse")
    stream = OpenAIChatStream()
    for item in items:
        stream.feed(openai_types.ChatCompletionChunk.model_validate(item))
    expected = OpenAIChatStream()
    for item in items:
        expected.feed(item)
    assert stream.close() == expected.close()
