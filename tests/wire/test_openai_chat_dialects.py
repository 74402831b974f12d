"""Dialects of OpenAI-compatible servers: what real traffic sends that OpenAI does not."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import ProtocolError, ProviderStreamError
from toolwire.wire import OpenAIChatStream, decode_openai_chat_response


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_done_without_finish_reason_infers_tool_calls() -> None:
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get", "arguments": '{"q": 1}'},
    }
    for as_bytes in (False, True):
        stream = OpenAIChatStream()
        if as_bytes:
            stream.feed_bytes(
                b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1",'
                b'"type":"function","function":{"name":"get","arguments":"{\\"q\\": 1}"}}]}}]}\n\n'
                b"data: [DONE]\n\n"
            )
        else:
            stream.feed(_chunk({"tool_calls": [call]}))
            stream.feed("[DONE]")
        turn = stream.close()
        assert turn.finish_reason == "tool_calls"
        assert turn.requests[0].input == {"q": 1}
        assert [n.kind for n in turn.notices] == ["finish_reason_inferred"]


def test_sdk_style_nulls_are_absent() -> None:
    """SDK objects dump missing optional fields as None (Mistral omits a call's type)."""
    stream = OpenAIChatStream()
    stream.feed(
        {
            "id": "x",
            "usage": None,
            "error": None,
            "choices": [
                {
                    "index": 0,
                    "logprobs": None,
                    "finish_reason": None,
                    "delta": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "function_call": None,
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "type": None,
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ],
                    },
                }
            ],
        }
    )
    stream.feed(_chunk({"content": None}, "tool_calls"))
    turn = stream.close()
    assert [c.name for c in turn.tool_calls] == ["f"]
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": None,
                    "tool_calls": [
                        {"id": "c1", "type": None, "function": {"name": "f", "arguments": "{}"}}
                    ],
                },
            }
        ],
        "usage": None,
    }
    assert decode_openai_chat_response(body).message == turn.message


def test_a_null_required_field_is_still_an_error() -> None:
    with pytest.raises(ProtocolError, match=r"delta.content\[\].text must be a string, got null"):
        OpenAIChatStream().feed(_chunk({"content": [{"type": "text", "text": None}]}))


def test_empty_function_call_placeholder_is_ignored_with_a_notice() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "function_call": {"name": "", "arguments": ""},
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"a": 2}'},
                        }
                    ],
                },
            }
        ],
    }
    turn = decode_openai_chat_response(body)
    assert [(c.id, c.name) for c in turn.tool_calls] == [("call_9", "lookup")]
    assert [n.kind for n in turn.notices] == ["placeholder_ignored"]
    real = dict(body["choices"][0]["message"], function_call={"name": "f", "arguments": "{}"})
    with pytest.raises(ProtocolError, match="legacy 'function_call'"):
        decode_openai_chat_response({"choices": [{"message": real}]})


def test_mid_stream_error_with_choices_is_a_provider_error_with_the_partial_turn() -> None:
    stream = OpenAIChatStream()
    stream.feed(_chunk({"content": "Half an ans"}))
    with pytest.raises(ProviderStreamError, match="upstream timed out") as info:
        stream.feed(
            {
                "error": {"message": "upstream timed out", "code": 502},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }
        )
    assert info.value.partial.text == "Half an ans"
    assert info.value.fault == "provider" and info.value.error_type == "502"
    with pytest.raises(ProviderStreamError):
        stream.close()  # the decoder stays failed


def test_content_as_a_list_of_text_chunks() -> None:
    stream = OpenAIChatStream()
    stream.feed(
        _chunk({"content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]})
    )
    stream.feed(_chunk({}, "stop"))
    assert stream.close().text == "Hello"


def test_content_list_with_other_chunks_names_the_dialect() -> None:
    stream = OpenAIChatStream()
    with pytest.raises(ProtocolError, match="list of typed chunks"):
        stream.feed(_chunk({"content": [{"type": "image_url", "image_url": "x"}]}))
