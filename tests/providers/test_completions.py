"""Raw-completion mode: a plain text stream parsed on the client with toolwire.formats."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from toolwire.errors import CallerError, FormatError, ProtocolError, StreamInterruptedError
from toolwire.messages import UserMessage
from toolwire.prompts import Prompt
from toolwire.providers.completions import CompletionsModel, CompletionsStream, decode_completion
from toolwire.run.model import ModelRequest
from toolwire.wire.events import ToolCallReady

from .conftest import demo_request, run
from .faultserver import FaultServer, json_reply, sse

STREAM = (Path(__file__).parent / "fixtures" / "completions_hermes.sse").read_bytes()
QWEN = "Qwen/Qwen2.5-7B-Instruct"


def model(url: str, **kwargs: object) -> CompletionsModel:
    return CompletionsModel(QWEN, base_url=f"{url}/v1", **kwargs)  # type: ignore[arg-type]


def test_text_stream_becomes_calls(no_keys: None) -> None:
    with FaultServer(sse(STREAM, chunks=[11])) as server:
        events, turn = run(model(server.url), demo_request())
        seen = server.requests[0]
    assert seen.path == "/v1/completions"
    assert seen.body["prompt"].endswith("<|im_start|>assistant\n")
    assert '"name": "explore_code"' in seen.body["prompt"]
    assert seen.body["stop"][0] == "<|im_end|>"
    assert turn.text.strip() == "I will search both."  # the newlines around blocks stay text
    assert [r.input for r in turn.requests] == [
        {"query": "login"},
        {"query": "session", "path": "auth"},
    ]
    assert turn.finish_reason == "tool_calls"
    assert turn.usage.input_tokens == 311
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [e.index for e in ready] == [0, 1]
    assert len({c.id for c in turn.tool_calls}) == 2


def test_cut_after_calls_started_is_not_retried(no_keys: None) -> None:
    cut = STREAM.index(b"sessi")
    with FaultServer(sse(STREAM, drop_after=cut), sse(STREAM)) as server:
        with pytest.raises(StreamInterruptedError):
            run(model(server.url), demo_request())
        assert len(server.requests) == 1


def test_grammar_is_sent_when_asked(no_keys: None) -> None:
    if importlib.util.find_spec("llama_cpp") is None:  # not imported: its import leaks files
        pytest.skip("llama-cpp-python is not installed")
    request = model("http://h", grammar=True).build_request(demo_request())
    assert "explore_code" in request.body["grammar"] and "root ::=" in request.body["grammar"]


def test_no_grammar_without_tools_or_with_choice_none(no_keys: None) -> None:
    request = model("http://h", grammar=True).build_request(ModelRequest([UserMessage("hi")]))
    assert "grammar" not in request.body
    request = model("http://h", grammar=True).build_request(demo_request(tool_choice="none"))
    assert "grammar" not in request.body and "<tools>" not in request.body["prompt"]


def test_non_streaming_response(no_keys: None) -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "text": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>',
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    with FaultServer(json_reply(body)) as server:
        _, turn = run(model(server.url), demo_request(settings={"stream": False}))
    assert turn.requests[0].input == {"city": "Beijing"}
    assert turn.finish_reason == "tool_calls"


def test_length_cut_inside_a_call_is_the_models_fault(no_keys: None) -> None:
    from toolwire import formats

    fmt = formats.get("hermes", "qwen2.5")
    body = {
        "choices": [
            {
                "index": 0,
                "text": '<tool_call>\n{"name": "get_weather", "argu',
                "finish_reason": "length",
            }
        ]
    }
    # The cut-off call is dropped: no call, its text is not content, a notice says why.
    turn = decode_completion(fmt, body)
    assert turn.tool_calls == []
    assert turn.text == ""
    assert turn.finish_reason == "length"
    assert [n.kind for n in turn.notices] == ["truncated_call"]
    with pytest.raises(FormatError):
        decode_completion(formats.get("hermes", "qwen2.5"), body, strict=True)


def test_stream_without_a_finish_reason_keeps_the_partial_turn() -> None:
    from toolwire import formats

    decoder = CompletionsStream(formats.get("hermes", "qwen2.5"))
    decoder.feed_bytes(b'data: {"choices":[{"index":0,"text":"Hello"}]}\n\n')
    with pytest.raises(ProtocolError) as info:
        decoder.close()
    assert info.value.partial is not None and info.value.partial.text == "Hello"


def test_garbage_chunk_is_a_protocol_error() -> None:
    from toolwire import formats

    decoder = CompletionsStream(formats.get("hermes", "qwen2.5"))
    with pytest.raises(ProtocolError, match="not JSON"):
        decoder.feed_bytes(b"data: nope\n\n")


def test_a_custom_template_and_family(no_keys: None) -> None:
    def template(messages: object, tools: object, choice: str) -> Prompt:
        return Prompt("PROMPT", ("</s>",), "")

    completions = CompletionsModel(
        "my-llama", base_url="http://h/v1", template=template, format="llama"
    )
    body = completions.build_request(demo_request()).body
    assert body["prompt"] == "PROMPT" and body["stop"] == ["</s>"]


def test_an_unknown_family_needs_a_format_with_a_custom_template(no_keys: None) -> None:
    def template(messages: object, tools: object, choice: str) -> Prompt:
        return Prompt("P", (), "")

    with pytest.raises(CallerError, match="no tool-call format known"):
        CompletionsModel("mystery-model", base_url="http://h/v1", template=template)


def test_choice_none_keeps_the_call_markup_as_text(no_keys: None) -> None:
    """tool_choice="none": what the model wrote is the answer, markup included (as an
    OpenAI server answers), with a calls_in_content notice; no call is read."""
    with FaultServer(sse(STREAM, chunks=[11])) as server:
        _, turn = run(model(server.url), demo_request(tool_choice="none"))
    assert turn.tool_calls == [] and turn.finish_reason == "stop"
    assert "<tool_call>" in turn.text and '"explore_code"' in turn.text
    assert [n.kind for n in turn.notices] == ["calls_in_content"]
