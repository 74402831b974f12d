"""What every request asks of its whole history and tools, read in C: the same answers
as reading each message and each definition in Python."""

from __future__ import annotations

from toolwire.history.chat_dialects import echoed_reasoning
from toolwire.history.openai_chat import to_openai_chat
from toolwire.history.owed import owed_answers
from toolwire.history.responses_mcp import REQUEST
from toolwire.history.tool_defs import tool_defs
from toolwire.messages import (
    AssistantMessage,
    Message,
    ProviderPart,
    ReasoningPart,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from toolwire.tooldef import ToolDef
from toolwire.wire.openai_responses import PROVIDER


def _history() -> list[Message]:
    calls = [ToolCall(f"c{k}", f"t{k}", "{}") for k in range(3)]
    return [
        UserMessage("go"),
        AssistantMessage([ReasoningPart("first"), *calls]),
        *[ToolResult(c.id, c.name, "ok") for c in calls],
        AssistantMessage([TextPart("no reasoning")]),
        UserMessage("again"),
        AssistantMessage([ReasoningPart(""), TextPart("empty reasoning")]),
        AssistantMessage([ReasoningPart("last"), ToolCall("c9", "t9", "{}", freeform=True)]),
    ]


def test_always_echoed_reasoning_is_each_assistant_message_with_reasoning_by_position() -> None:
    history = _history()
    expected = {
        i: m.reasoning
        for i, m in enumerate(history)
        if isinstance(m, AssistantMessage) and m.reasoning
    }
    assert expected == {1: "first", 8: "last"}
    assert echoed_reasoning(history, "always") == expected
    chat = to_openai_chat(history)
    assert [m.get("reasoning_content") for m in chat] == [expected.get(i) for i in range(9)]
    assert chat[8]["tool_calls"] == [
        {"id": "c9", "type": "custom", "custom": {"name": "t9", "input": "{}"}}
    ]
    assert chat[1]["tool_calls"][2] == {
        "id": "c2",
        "type": "function",
        "function": {"name": "t2", "arguments": "{}"},
    }


def test_a_turn_of_calls_owes_nothing_and_a_provider_item_still_owes_its_answer() -> None:
    calls = [ToolCall(f"c{k}", f"t{k}", "{}") for k in range(3)]
    assert owed_answers(AssistantMessage(calls)) == []
    request = ProviderPart(
        PROVIDER, REQUEST, {"type": REQUEST, "id": "a1", "server_label": "s", "name": "n"}
    )
    owed = owed_answers(AssistantMessage([*calls, request]))
    assert [(o.kind, o.subject.id) for o in owed] == [("mcp_approval", "a1")]


def test_tool_defs_of_definitions_is_a_new_list_of_the_same_objects() -> None:
    defs = [ToolDef("a"), ToolDef("b", "B.")]
    read = tool_defs(defs)
    assert (
        read == defs and read is not defs and all(x is y for x, y in zip(read, defs, strict=True))
    )
    mixed = tool_defs([defs[0], {"type": "function", "function": {"name": "c"}}])
    assert mixed == [defs[0], ToolDef("c")]
    assert tool_defs(d for d in defs) == defs  # any iterable, as before
