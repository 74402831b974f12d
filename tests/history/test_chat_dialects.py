"""Chat dialects: which assistant messages send their reasoning back.

Recorded DeepSeek turns (``deepseek-reasoner`` in thinking mode: a tool call and a
plain answer; tests/wire/fixtures/recorded, sources and licences in its README) are
sent back as DeepSeek documents: https://api-docs.deepseek.com/guides/thinking_mode
("Tool Calls": between two user messages where the model called a tool, each assistant
message's ``reasoning_content`` goes back in every later request, and a missing one is
a 400; elsewhere the API ignores it) and, for the original R1,
https://api-docs.deepseek.com/guides/reasoning_model (``reasoning_content`` in the
input is a 400).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings

from toolwire.errors import CallerError
from toolwire.history import CHAT_DIALECTS, ChatDialect, chat_dialect, to_openai_chat
from toolwire.messages import AssistantMessage, Message, ToolResult, UserMessage
from toolwire.wire import decode_openai_chat_response

from .strategies import LIGHT, histories

RECORDED = Path(__file__).parent.parent / "wire" / "fixtures" / "recorded"


def _recorded(name: str) -> tuple[AssistantMessage, str]:
    """A recorded DeepSeek body's message, and its reasoning as recorded."""
    body = json.loads((RECORDED / f"chat-deepseek-{name}.json").read_text(encoding="utf-8"))
    message = decode_openai_chat_response(body).message
    return message, body["choices"][0]["message"]["reasoning_content"]


def _conversation() -> list[Message]:
    """Two user turns: the first called a tool, the second did not."""
    call, _ = _recorded("tool-call")
    answer, _ = _recorded("reasoning")
    results = [ToolResult(c.id, c.name, "Sunny.") for c in call.tool_calls]
    return [
        UserMessage("What is the weather in San Francisco?"),
        call,
        *results,
        answer,
        UserMessage("How many r's in strawberry?"),
        answer,
        UserMessage("And in raspberry?"),
    ]


def _reasoning_fields(messages: list[dict[str, Any]]) -> list[str | None]:
    return [m.get("reasoning_content") for m in messages if m["role"] == "assistant"]


def test_deepseek_keeps_the_tool_call_turn_and_drops_the_plain_one() -> None:
    _, called = _recorded("tool-call")
    _, answered = _recorded("reasoning")
    sent = to_openai_chat(_conversation(), dialect="deepseek")
    assert _reasoning_fields(sent) == [called, answered, None]


def test_r1_sends_no_reasoning_and_the_default_sends_all() -> None:
    _, called = _recorded("tool-call")
    _, answered = _recorded("reasoning")
    assert _reasoning_fields(to_openai_chat(_conversation(), dialect="deepseek-r1")) == [None] * 3
    assert _reasoning_fields(to_openai_chat(_conversation())) == [called, answered, answered]
    assert to_openai_chat(_conversation()) == to_openai_chat(_conversation(), dialect="openai")


def test_a_tool_call_turn_without_reasoning_sends_the_field_empty() -> None:
    call, _ = _recorded("tool-call")
    bare = AssistantMessage(list(call.tool_calls))
    results = [ToolResult(c.id, c.name, "Sunny.") for c in call.tool_calls]
    history: list[Message] = [UserMessage("q"), bare, *results, AssistantMessage()]
    assert _reasoning_fields(to_openai_chat(history, dialect="deepseek")) == ["", ""]


def test_unknown_dialects_are_a_caller_error() -> None:
    with pytest.raises(CallerError, match="unknown Chat dialect 'vllm'"):
        to_openai_chat([], dialect="vllm")
    odd = ChatDialect("odd", reasoning_echo="sometimes")  # type: ignore[arg-type]
    with pytest.raises(CallerError, match="reasoning_echo 'sometimes'"):
        chat_dialect(odd)
    assert chat_dialect("deepseek") is CHAT_DIALECTS["deepseek"]


def _turns(history: list[Message]) -> list[list[tuple[int, Message]]]:
    """The history cut before each user message (written apart from the encoder's own)."""
    turns: list[list[tuple[int, Message]]] = [[]]
    for position, message in enumerate(history):
        if isinstance(message, UserMessage):
            turns.append([])
        turns[-1].append((position, message))
    return turns


@settings(max_examples=60, deadline=None)
@given(histories(LIGHT))
def test_deepseek_rule_on_any_history(history: list[Message]) -> None:
    sent = to_openai_chat(history, dialect="deepseek")
    plain = to_openai_chat(history, dialect="deepseek-r1")
    for turn in _turns(history):
        called = any(isinstance(m, AssistantMessage) and m.tool_calls for _, m in turn)
        for position, message in turn:
            # Apart from reasoning, every dialect sends the same message.
            rest = {k: v for k, v in sent[position].items() if k != "reasoning_content"}
            assert rest == plain[position]
            if isinstance(message, AssistantMessage) and called:
                assert sent[position]["reasoning_content"] == message.reasoning
            else:
                assert "reasoning_content" not in sent[position]


@settings(max_examples=60, deadline=None)
@given(histories(LIGHT))
def test_the_default_rule_on_any_history(history: list[Message]) -> None:
    """OpenAI's dialect: each assistant message sends its own reasoning, when it has any
    (read where the message is encoded, not by a pass over the history)."""
    sent = to_openai_chat(history)
    plain = to_openai_chat(history, dialect="deepseek-r1")
    for position, message in enumerate(history):
        rest = {k: v for k, v in sent[position].items() if k != "reasoning_content"}
        assert rest == plain[position]
        if isinstance(message, AssistantMessage) and message.reasoning:
            assert sent[position]["reasoning_content"] == message.reasoning
        else:
            assert "reasoning_content" not in sent[position]
