"""Calls left in content, Chat citations, xAI's server calls: the wire level (issue 25 c, e, f).

Every fixture (``fixtures/servers``, sources in its README) fed every way
(``servers_feed.every_feed``); the same quirk through the public models is in
``tests/providers/test_servers_as_they_are.py``.
"""

from __future__ import annotations

import json
import random

import pytest

from toolwire import formats
from toolwire.messages import ProviderPart, TextPart
from toolwire.turn import Turn
from toolwire.wire import decode_openai_chat_response, decode_responses_response
from toolwire.wire.content_calls import ContentCalls
from toolwire.wire.openai_responses import OpenAIResponsesStream

from .servers_feed import body, every_feed, from_dicts, items, sse

HERMES = formats.get("hermes", "qwen3")


def test_hermes_markup_in_content_is_read_as_calls_however_it_is_fed() -> None:
    turn = every_feed("chat-vllm-hermes-in-content.chunks.txt", text_format=HERMES)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in turn.tool_calls] == [
        ("call_0", "get_weather", {"city": "Paris"}),
        ("call_1", "get_weather", {"city": "Rome"}),
    ]
    assert turn.text.strip() == "I will check both."
    assert turn.finish_reason == "tool_calls"
    assert [n.kind for n in turn.notices] == ["calls_from_content"]
    decoded = decode_openai_chat_response(
        body("chat-vllm-hermes-in-content.json"),
        content_calls=ContentCalls(HERMES, id_prefix="call_"),
    )
    assert decoded.message == turn.message and decoded.requests == turn.requests


def test_without_apply_the_content_is_untouched_and_a_notice_says_why() -> None:
    turn = every_feed("chat-vllm-hermes-in-content.chunks.txt", text_format=HERMES, apply=False)
    chunks = items("chat-vllm-hermes-in-content.chunks.txt")
    sent = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert turn.text == sent and turn.tool_calls == [] and turn.finish_reason == "stop"
    assert [n.kind for n in turn.notices] == ["calls_in_content"]


def test_content_without_markup_is_untouched() -> None:
    plain = every_feed("chat-openai-search-annotations.chunks.txt", text_format=HERMES)
    assert plain == every_feed("chat-openai-search-annotations.chunks.txt")


def test_a_native_call_after_content_calls_keeps_its_own_arguments() -> None:
    chunks = items("chat-vllm-hermes-in-content.chunks.txt")
    native = {"index": 0, "id": "call_n", "type": "function"}
    native["function"] = {"name": "get_time", "arguments": "{}"}
    chunks.insert(-2, {"choices": [{"index": 0, "delta": {"tool_calls": [native]}}]})
    _, turn = from_dicts(chunks, text_format=HERMES)
    assert [(c.name, c.arguments) for c in turn.tool_calls][2] == ("get_time", "{}")
    assert sorted(r.index for r in turn.requests) == [0, 1, 2]


# -- (f) annotations ---------------------------------------------------------------------


def _citations(turn: Turn) -> list[dict[str, object]]:
    return [c for p in turn.message.parts if isinstance(p, TextPart) for c in p.citations or []]


def test_chat_annotations_are_text_citations_stream_and_body() -> None:
    turn = every_feed("chat-openai-search-annotations.chunks.txt")
    decoded = decode_openai_chat_response(body("chat-openai-search-annotations.json"))
    assert (
        _citations(turn)
        == _citations(decoded)
        == [
            {
                "type": "url_citation",
                "url_citation": {
                    "start_index": 26,
                    "end_index": 71,
                    "title": "Paris weather",
                    "url": "https://example.com/paris?utm_source=openai",
                },
            }
        ]
    )
    assert turn.message == decoded.message


# -- (e) xAI's server-side calls -----------------------------------------------------------


def _responses(offered: frozenset[str] | None, data: bytes, cuts: list[int]) -> Turn:
    stream = OpenAIResponsesStream(offered_tools=offered)
    start = 0
    for cut in [*cuts, len(data)]:
        stream.feed_bytes(data[start:cut])
        start = cut
    return stream.close()


def test_xai_server_calls_are_provider_parts_however_split() -> None:
    chunks = items("responses-xai-server-calls.chunks.txt")
    data = sse(chunks, done=False)
    offered = frozenset({"get_weather"})
    stream = OpenAIResponsesStream(offered_tools=offered)
    for chunk in chunks:
        stream.feed(chunk)
    expected = stream.close()
    assert expected.requests == []
    assert [p.data["name"] for p in expected.message.parts if isinstance(p, ProviderPart)] == [
        "x_keyword_search"
    ]
    rng = random.Random(7)
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(data)), 40))
        assert _responses(offered, data, cuts) == expected
    assert _responses(offered, data, list(range(1, len(data)))) == expected
    decoded = decode_responses_response(
        body("responses-xai-server-calls.json"), offered_tools=offered
    )
    assert decoded.message == expected.message


@pytest.mark.parametrize("offered", [None, frozenset({"x_keyword_search"})])
def test_an_offered_or_unknown_tool_set_keeps_the_call_the_clients(
    offered: frozenset[str] | None,
) -> None:
    turn = _responses(offered, sse(items("responses-xai-server-calls.chunks.txt"), done=False), [])
    assert [r.name for r in turn.requests] == ["x_keyword_search"]
