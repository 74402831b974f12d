"""Raw completions for each family: a loopback server receives the family's own prompt
and stop strings, and the family's output it streams back becomes the call.

The server is a real HTTP server on a loopback port (``faultserver``); each model id is
resolved as ``toolwire.formats.resolve_model`` resolves it, and the output each family
streams is what that family's model writes after its generation prompt (the markup as
its published chat template and parser tests show it).
"""

from __future__ import annotations

import json
import re

import pytest

from toolwire.formats.registry import resolve_model
from toolwire.prompts import render_prompt, stop_strings
from toolwire.providers.completions import CompletionsModel

from .conftest import demo_request, run
from .faultserver import FaultServer, sse

pytest.importorskip("jinja2")

CASES = {
    "hermes": (
        "Qwen/Qwen3-8B",
        '<tool_call>\n{"name": "explore_code", "arguments": {"query": "login"}}\n</tool_call>',
        "<tools>",
    ),
    "qwen3_coder": (
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        "<tool_call>\n<function=explore_code>\n<parameter=query>\nlogin\n</parameter>\n"
        "</function>\n</tool_call>",
        "<function>\n<name>explore_code</name>",
    ),
    "llama": (
        "meta-llama/Llama-3.1-8B-Instruct",
        '{"name": "explore_code", "parameters": {"query": "login"}}',
        "Environment: ipython",
    ),
    "mistral": (
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
        '[TOOL_CALLS]explore_code[ARGS]{"query": "login"}',
        "[AVAILABLE_TOOLS]",
    ),
    "deepseek": (
        "deepseek-ai/DeepSeek-V3.1",
        "<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>explore_code"
        '<\uff5ctool\u2581sep\uff5c>{"query": "login"}<\uff5ctool\u2581call\u2581end\uff5c>'
        "<\uff5ctool\u2581calls\u2581end\uff5c>",
        "## Tools\nYou have access to the following tools:",
    ),
    "glm": (
        "zai-org/GLM-4.5",
        "\n<think></think>\n<tool_call>explore_code\n<arg_key>query</arg_key>\n"
        "<arg_value>login</arg_value>\n</tool_call>",
        "<arg_key>{arg-key-1}</arg_key>",
    ),
    "kimi": (
        "moonshotai/Kimi-K2-Thinking",
        "<think></think><|tool_calls_section_begin|><|tool_call_begin|>functions.explore_code:0"
        '<|tool_call_argument_begin|>{"query": "login"}<|tool_call_end|>'
        "<|tool_calls_section_end|>",
        "<|im_system|>tool_declare<|im_middle|>",
    ),
    "harmony": (
        "openai/gpt-oss-20b",
        '<|channel|>commentary to=functions.explore_code <|constrain|>json<|message|>{"query": "login"}',
        "<|start|>developer<|message|># Instructions\n\nBe brief.",
    ),
    "gemma": (
        "google/gemma-4-31b-it",
        '<|tool_call>call:explore_code{query:<|"|>login<|"|>}<tool_call|>',
        "<|tool>declaration:explore_code{",
    ),
}

DATES = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]{2} \d{4}")


def stream(text: str) -> bytes:
    """The output as a ``/completions`` SSE stream, a few characters per event."""
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    events = [{"choices": [{"index": 0, "text": piece}]} for piece in pieces]
    events.append({"choices": [{"index": 0, "text": "", "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events)
    return (body + "data: [DONE]\n\n").encode()


@pytest.mark.parametrize("family", sorted(CASES))
def test_each_family_is_sent_its_own_prompt_and_its_output_is_read(
    family: str, no_keys: None
) -> None:
    model_id, output, marker = CASES[family]
    resolved, variant = resolve_model(model_id)
    assert resolved == family
    request = demo_request()
    with FaultServer(sse(stream(output))) as server:
        _, turn = run(CompletionsModel(model_id, base_url=f"{server.url}/v1"), request)
        seen = server.requests[0].body
    expected = render_prompt(family, request.messages, request.tools, variant=variant)
    # The templates that print today's date read the clock: compare without it.
    assert DATES.sub("DATE", seen["prompt"]) == DATES.sub("DATE", expected.text)
    assert marker in seen["prompt"]
    assert "<|im_start|>" not in seen["prompt"] or family in ("hermes", "qwen3_coder")
    assert seen["stop"] == list(stop_strings(family, variant))
    assert [(r.name, r.input) for r in turn.requests] == [("explore_code", {"query": "login"})]
    assert not turn.notices


def test_an_explicit_format_picks_the_family_template(no_keys: None) -> None:
    model = CompletionsModel("my-finetune", base_url="http://h/v1", format="mistral")
    body = model.build_request(demo_request()).body
    assert "[AVAILABLE_TOOLS]" in body["prompt"] and body["stop"] == ["</s>"]


def test_the_models_own_template_by_path(no_keys: None, tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "chat_template.jinja").write_text(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>",
        encoding="utf-8",
    )
    model = CompletionsModel("Qwen/Qwen3-8B", base_url="http://h/v1", template=folder)
    body = model.build_request(demo_request()).body
    assert body["prompt"].endswith("<assistant>") and body["prompt"].startswith("<system>")


def test_an_unknown_model_keeps_chatml_with_hermes_calls(no_keys: None) -> None:
    model = CompletionsModel("mystery-model", base_url="http://h/v1")
    assert model.build_request(demo_request()).body["prompt"].endswith("<|im_start|>assistant\n")


def test_a_variant_with_no_shipped_template_fails_at_construction(no_keys: None) -> None:
    from toolwire.errors import CallerError

    with pytest.raises(CallerError, match="ships no chat template"):
        CompletionsModel("zai-org/GLM-4.7", base_url="http://h/v1")


def test_the_hermes_grammar_is_refused_for_another_family(no_keys: None) -> None:
    from toolwire.errors import CallerError

    with pytest.raises(CallerError, match="writes mistral calls"):
        CompletionsModel(
            "mistralai/Mistral-Small-3.2-24B-Instruct-2506", base_url="http://h/v1", grammar=True
        )
