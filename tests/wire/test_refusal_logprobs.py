"""Refusals are parts of their own with a flag on the turn; logprobs are kept on request.

Shapes from the API references: Chat ``delta.refusal`` / ``message.refusal`` and
``choices[].logprobs.{content,refusal}`` (https://platform.openai.com/docs/api-reference/chat/object),
Responses ``response.refusal.delta`` with ``item_id`` and ``logprobs`` on
``response.output_text.delta`` / an ``output_text`` part
(https://platform.openai.com/docs/api-reference/responses-streaming).
"""

from __future__ import annotations

from typing import Any

from toolwire import Agent
from toolwire.history.anthropic import to_anthropic
from toolwire.history.openai_chat import to_openai_chat
from toolwire.history.openai_responses import to_responses_input
from toolwire.messages import AssistantMessage, RefusalPart, TextPart, UserMessage
from toolwire.providers.openai_chat import OpenAIChatModel
from toolwire.providers.openai_responses import OpenAIResponsesModel
from toolwire.run.model import ModelRequest
from toolwire.testing import ScriptedModel
from toolwire.wire import decode_openai_chat_response, decode_responses_response
from toolwire.wire.events import RefusalDelta, TextDelta
from toolwire.wire.openai_chat import OpenAIChatStream
from toolwire.wire.openai_responses import OpenAIResponsesStream

TOKEN = {"token": "No", "logprob": -0.01, "bytes": [78, 111], "top_logprobs": []}
TOKEN2 = {"token": ".", "logprob": -0.2, "bytes": [46], "top_logprobs": []}


def _chunk(delta: dict[str, Any], finish: str | None = None, logprobs: Any = None) -> dict:
    choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": logprobs}
    return {"id": "c", "object": "chat.completion.chunk", "choices": [choice]}


REFUSAL_CHUNKS = [
    _chunk({"role": "assistant", "content": None, "refusal": ""}),
    _chunk({"refusal": "I can't help"}, logprobs={"content": None, "refusal": [TOKEN]}),
    _chunk({"refusal": " with that."}, logprobs={"content": None, "refusal": [TOKEN2]}),
    _chunk({}, "stop"),
]
REFUSAL_BODY = {
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": None, "refusal": "I can't help with that."},
            "finish_reason": "stop",
            "logprobs": {"content": None, "refusal": [TOKEN, TOKEN2]},
        }
    ]
}


def _chat(chunks: list[dict], **options: Any) -> tuple[list[Any], Any]:
    stream = OpenAIChatStream(**options)
    events = [e for c in chunks for e in stream.feed(c)]
    return events, stream.close()


def test_chat_refusal_is_a_part_with_a_flag_in_stream_and_body() -> None:
    events, streamed = _chat(REFUSAL_CHUNKS)
    body = decode_openai_chat_response(REFUSAL_BODY)
    for turn in (streamed, body):
        assert turn.message.parts == [RefusalPart("I can't help with that.")]
        assert turn.refused and turn.text == "" and turn.refusal == "I can't help with that."
    assert streamed.message == body.message
    assert [e for e in events if isinstance(e, (RefusalDelta, TextDelta))] == [
        RefusalDelta("I can't help"),
        RefusalDelta(" with that."),
    ]


def test_a_plain_answer_is_not_refused() -> None:
    _, turn = _chat([_chunk({"content": "hi"}), _chunk({}, "stop")])
    assert not turn.refused and turn.logprobs is None


def test_chat_logprobs_only_when_asked_and_alike_in_stream_and_body() -> None:
    assert _chat(REFUSAL_CHUNKS)[1].logprobs is None
    assert decode_openai_chat_response(REFUSAL_BODY).logprobs is None
    streamed = _chat(REFUSAL_CHUNKS, keep_logprobs=True)[1]
    body = decode_openai_chat_response(REFUSAL_BODY, keep_logprobs=True)
    assert streamed.logprobs == body.logprobs == {"refusal": [TOKEN, TOKEN2]}


def test_chat_content_logprobs_are_kept_in_order() -> None:
    chunks = [
        _chunk({"content": "No"}, logprobs={"content": [TOKEN]}),
        _chunk({"content": "."}, logprobs={"content": [TOKEN2]}),
        _chunk({}, "stop", logprobs=None),
    ]
    turn = _chat(chunks, keep_logprobs=True)[1]
    assert turn.text == "No." and turn.logprobs == {"content": [TOKEN, TOKEN2]}


def test_chat_refusal_goes_back_in_its_field_and_as_text_to_anthropic() -> None:
    message = decode_openai_chat_response(REFUSAL_BODY).message
    history = [UserMessage("hack it"), message]
    assert to_openai_chat(history)[1] == {
        "role": "assistant",
        "content": "",
        "refusal": "I can't help with that.",
    }
    _, turns = to_anthropic(history)
    assert turns[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "I can't help with that."}],
    }


# -- Responses ------------------------------------------------------------------------------


def _responses_events(logprobs: list[Any] | None) -> list[dict[str, Any]]:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress"}
    done = {
        **item,
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    }
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "content": []}},
        {
            "type": "response.refusal.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "I can't.",
        },
        {"type": "response.output_item.done", "output_index": 0, "item": done},
        {
            "type": "response.output_item.added",
            "output_index": 1,
            "item": {"type": "message", "id": "msg_2", "role": "assistant", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "item_id": "msg_2",
            "output_index": 1,
            "content_index": 0,
            "delta": "Sorry.",
            "logprobs": logprobs,
        },
        {"type": "response.completed", "response": {"status": "completed"}},
    ]


RESPONSES_BODY = {
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "refusal", "refusal": "I can't."}],
        },
        {
            "type": "message",
            "id": "msg_2",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Sorry.", "annotations": [], "logprobs": [TOKEN]}
            ],
        },
    ],
}


def test_responses_refusal_is_a_part_in_stream_and_body_and_goes_back_as_refusal() -> None:
    stream = OpenAIResponsesStream(keep_logprobs=True)
    for event in _responses_events([TOKEN]):
        stream.feed(event)
    streamed = stream.close()
    body = decode_responses_response(RESPONSES_BODY, keep_logprobs=True)
    assert streamed.message == body.message
    assert streamed.message.parts == [RefusalPart("I can't.", "msg_1"), TextPart("Sorry.")]
    assert streamed.refused and body.refused
    assert streamed.logprobs == body.logprobs == {"content": [TOKEN]}
    _, items = to_responses_input([UserMessage("q"), streamed.message])
    # The output message it came in, as the API reference's input item shape requires
    # (id, role, status, content of refusal parts).
    assert items[1] == {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "refusal", "refusal": "I can't."}],
    }
    # Without logprobs asked for, none are kept.
    plain = OpenAIResponsesStream()
    for event in _responses_events([TOKEN]):
        plain.feed(event)
    assert plain.close().logprobs is None
    assert decode_responses_response(RESPONSES_BODY).logprobs is None


def test_another_providers_refusal_goes_to_responses_as_text() -> None:
    _, items = to_responses_input([UserMessage("q"), AssistantMessage([RefusalPart("No.")])])
    assert items[1] == {"type": "message", "role": "assistant", "content": "No."}


# -- providers: the option follows the request's settings -----------------------------------


def _keeps(model: Any, settings: dict[str, Any], chunk: dict[str, Any]) -> Any:
    decoder = model.wire_for(ModelRequest([UserMessage("q")], settings=settings)).stream()
    decoder.feed(chunk)
    return decoder


def test_chat_provider_keeps_logprobs_when_the_request_asks() -> None:
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")
    chunk = _chunk({"content": "No"}, "stop", logprobs={"content": [TOKEN]})
    assert _keeps(model, {"logprobs": True}, chunk).close().logprobs == {"content": [TOKEN]}
    assert _keeps(model, {}, chunk).close().logprobs is None
    body = {"choices": [{"message": {"content": "No"}, "logprobs": {"content": [TOKEN]}}]}
    wire = model.wire_for(ModelRequest([UserMessage("q")], settings={"logprobs": True}))
    assert wire.decode_json(body).logprobs == {"content": [TOKEN]}


def test_responses_provider_keeps_logprobs_when_include_asks() -> None:
    model = OpenAIResponsesModel("m", base_url="http://127.0.0.1:9/v1")
    asked = {"include": ["message.output_text.logprobs"], "top_logprobs": 2}
    wire = model.wire_for(ModelRequest([UserMessage("q")], settings=asked))
    assert wire.decode_json(RESPONSES_BODY).logprobs == {"content": [TOKEN]}
    plain = model.wire_for(ModelRequest([UserMessage("q")]))
    assert plain.decode_json(RESPONSES_BODY).logprobs is None
    assert model.build_request(ModelRequest([UserMessage("q")], settings=asked)).body[
        "include"
    ] == ["message.output_text.logprobs"]


# -- the agent: a refusal ends the run ------------------------------------------------------


def test_a_refused_turn_ends_the_run() -> None:
    model = ScriptedModel([REFUSAL_CHUNKS, [_chunk({"content": "never asked"}, "stop")]])
    result = Agent(model, []).run_sync("hack it")
    assert result.refused and result.refusal == "I can't help with that."
    assert result.output == "" and result.requests == 1 and model.remaining == 1
    assert result.messages[-1] == AssistantMessage([RefusalPart("I can't help with that.")])


def test_the_cli_view_shows_a_refusal_as_one() -> None:
    from toolwire.cli.run_state import RunState
    from toolwire.run.events import RunFinished

    result = Agent(ScriptedModel([REFUSAL_CHUNKS]), []).run_sync("hack it")
    state = RunState()
    state.apply(RunFinished(result), 0.0)
    assert state.answer == "(refused) I can't help with that."


def test_the_audit_logs_message_json_keeps_refusals_callers_and_provider_parts() -> None:
    from toolwire.messages import ProviderPart, ToolCall
    from toolwire.observe.record import message_json
    from toolwire.observe.replay import messages_from_json

    caller = {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}
    message = AssistantMessage(
        [
            RefusalPart("No.", "msg_1"),
            ProviderPart("anthropic", "server_tool_use", {"type": "server_tool_use", "id": "s"}),
            ToolCall("toolu_1", "f", "{}", caller=caller),
        ]
    )
    history = [UserMessage("q"), message]
    assert messages_from_json(message_json(history)) == history
