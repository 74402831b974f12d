"""The client's chunks: made of templates, the same bytes json.dumps makes of the dicts,
and chunks the openai SDK reads."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.messages import Usage
from toolwire.serve.encode import DONE, ChunkWriter, delta_json, usage_json, usage_text
from toolwire.serve.relay import Relay
from toolwire.serve.request import ProxyCall, read_call

TEXT_KEYS = st.sampled_from(["content", "reasoning_content", "refusal"])


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(TEXT_KEYS, st.text())
def test_a_text_delta_is_what_json_dumps_makes_of_it(key: str, text: str) -> None:
    assert delta_json({key: text}) == json.dumps({key: text}, ensure_ascii=False)


@settings(deadline=None)
@given(
    st.one_of(
        st.fixed_dictionaries(
            {"tool_calls": st.lists(st.dictionaries(st.text(max_size=8), st.text()), max_size=3)}
        ),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.text()}),
        st.dictionaries(TEXT_KEYS, st.none() | st.integers(), min_size=1),
    )
)
def test_any_other_delta_is_json_dumps(delta: dict[str, Any]) -> None:
    assert delta_json(delta) == json.dumps(delta, ensure_ascii=False)


# -- the templates: the same bytes json.dumps of the chunk's dict makes -------------------


def _reference_chunk(call: ProxyCall, fields: dict[str, Any]) -> bytes:
    """A chunk as a dict through json.dumps: what the templates must make."""
    chunk = {"id": call.response_id, "object": "chat.completion.chunk", "created": call.created,
             "model": call.model}  # fmt: skip
    head = json.dumps(chunk, ensure_ascii=False)[:-1]
    return f"data: {head},{json.dumps(fields, ensure_ascii=False)[1:]}\n\n".encode()


def _reference_last(call: ProxyCall, relay: Relay) -> bytes:
    end = {"index": 0, "delta": {}, "logprobs": None, "finish_reason": relay.finish_reason}
    chunks: list[dict[str, Any]] = [{"choices": [end]}]
    if call.include_usage:
        chunks.append({"choices": [], "usage": usage_json(relay.usage)})
    if relay.notices:
        chunks[-1]["toolwire_notices"] = relay.notices
    return b"".join(_reference_chunk(call, c) for c in chunks) + DONE


def _call(model: str, include_usage: bool) -> ProxyCall:
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": include_usage}}  # fmt: skip
    return read_call(body, None)


def _events(raw: bytes, sdk: bool = True) -> list[dict[str, Any]]:
    """The SSE events' JSON, as a client reads them (the SDK's own model checks them,
    with ``sdk``: its finish reasons are a closed set, the proxy passes the upstream's)."""
    from openai.types.chat import ChatCompletionChunk

    assert raw.endswith(b"\n\n")
    out = []
    for event in raw.decode().split("\n\n")[:-1]:
        assert event.startswith("data: ")
        if event != "data: [DONE]":
            data = json.loads(event.removeprefix("data: "))
            if sdk:
                ChatCompletionChunk.model_validate(data)
            out.append(data)
    return out


ODD_REASON = 'é"\\\n'  # an upstream's own finish reason, passed on, escaped
TOKENS = st.integers(min_value=0, max_value=10**9)
NOTICE = st.fixed_dictionaries(
    {"kind": st.text(max_size=12), "message": st.text()}, optional={"index": st.integers(0, 9)}
)


@settings(deadline=None)
@given(
    model=st.text(min_size=1).filter(str.strip),
    include_usage=st.booleans(),
    finish=st.sampled_from([None, "stop", "length", "tool_calls", "content_filter", ODD_REASON]),
    sent=st.integers(0, 2),
    usage=st.none() | st.builds(Usage, TOKENS, TOKENS, TOKENS, TOKENS, TOKENS),
    notices=st.lists(NOTICE, max_size=3),
)
def test_the_last_chunks_are_what_json_dumps_makes_of_them(
    model: str,
    include_usage: bool,
    finish: str | None,
    sent: int,
    usage: Usage | None,
    notices: list[dict[str, Any]],
) -> None:
    call = _call(model, include_usage)
    relay = Relay(call)
    relay.upstream_finish, relay.sent, relay.usage, relay.notices = finish, sent, usage, notices
    made = ChunkWriter(call).last(relay)
    assert made == _reference_last(call, relay)
    events = _events(made.removesuffix(DONE), sdk=finish != ODD_REASON)
    assert events[0]["choices"][0]["finish_reason"] == relay.finish_reason
    if include_usage:
        assert events[-1]["usage"] == usage_json(usage)
    assert events[-1].get("toolwire_notices", []) == notices
    assert json.loads(usage_text(usage)) == usage_json(usage)


@settings(deadline=None)
@given(model=st.text(min_size=1).filter(str.strip), text=st.text())
def test_the_first_and_text_chunks_are_what_json_dumps_makes_of_them(model: str, text: str) -> None:
    call = _call(model, False)
    writer = ChunkWriter(call)
    first = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                          "logprobs": None, "finish_reason": None}]}  # fmt: skip
    made = writer.first()
    assert json.loads(made.removeprefix(b"data: ")) == json.loads(_reference_chunk(call, first)[6:])
    delta = writer.delta({"content": text})
    [event] = _events(delta)
    assert event["model"] == model and event["id"] == call.response_id
    assert event["choices"][0]["delta"] == {"content": text}
