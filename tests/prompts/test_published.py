"""A history rendered by ``toolwire.prompts`` is what the published template renders for
the same conversation, given as Hugging Face gives it.

The reference renders each shipped template file directly, the way transformers'
``apply_chat_template`` compiles it (``trim_blocks``, ``lstrip_blocks``, loop controls,
``tojson`` without HTML escaping, ``raise_exception``, ``strftime_now``), from OpenAI
Chat messages written by hand here with arguments as objects; the expected prompts are
also kept as fixtures (``fixtures/<family>-<variant>.prompt``) so a review sees them
and a changed template file shows up as a diff. Each family's own markers are checked
by name: Mistral's ``[AVAILABLE_TOOLS]``, Llama 3's ``ipython`` environment, gpt-oss's
developer message, and so on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire.errors import CallerError, ProviderError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    UserMessage,
)
from toolwire.prompts import render_prompt, stop_strings
from toolwire.prompts.shipped import shipped_template, template_text

from .helpers import SHIPPED, TOOLS, clock, template

jinja2 = pytest.importorskip("jinja2")
from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"

# Ids each family's templates accept as they are (Mistral: nine letters and digits;
# Kimi: functions.NAME:INDEX); other families take any.
IDS = {
    "mistral": ("abcDEF123", "xyzUVW789"),
    "kimi": ("functions.get_weather:0", "functions.search_files:1"),
}
ONE_CALL = {("harmony", "gpt-oss"), ("llama", "llama3-json")}

# What says "this is the family's own prompt", per family.
MARKERS = {
    "hermes": ["<tools>", "<tool_call>", "<tool_response>", "<|im_start|>assistant\n"],
    "qwen3_coder": ["<function=get_weather>", "<parameter=city>", "<tool_response>"],
    "llama": ["Environment: ipython", "<|start_header_id|>ipython<|end_header_id|>"],
    "mistral": ["[AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[TOOL_RESULTS]"],
    "deepseek": [
        "<\uff5ctool\u2581calls\u2581begin\uff5c>",
        "<\uff5ctool\u2581output\u2581begin\uff5c>",
    ],
    "glm": ["<|observation|>", "<arg_key>city</arg_key>"],
    "kimi": ["<|im_system|>tool_declare<|im_middle|>", "<|tool_calls_section_begin|>"],
    "harmony": ["<|start|>developer<|message|>", "namespace functions", "to=functions.get_weather"],
    "gemma": ["call:get_weather{"],
}


def history(family: str, variant: str) -> list[Message]:
    first, second = IDS.get(family, ("call_1", "call_2"))
    weather = ToolCall(first, "get_weather", '{"city": "Paris", "days": 2}')
    search = ToolCall(second, "search_files", '{"query": "login", "exact": true}')
    calls: list[Message] = (
        [AssistantMessage([weather]), AssistantMessage([search])]
        if (family, variant) in ONE_CALL
        else [AssistantMessage([TextPart("Checking both."), weather, search])]
    )
    return [
        SystemMessage("Answer briefly."),
        UserMessage("Weather in Paris, and where is login handled?"),
        *calls,
        ToolResult(first, "get_weather", "sunny, 21 C"),
        ToolResult(second, "search_files", "auth/login.py"),
    ]


def openai_messages(family: str, variant: str) -> list[dict[str, Any]]:
    """The same conversation as Hugging Face users write it (arguments as objects)."""
    first, second = IDS.get(family, ("call_1", "call_2"))
    weather = {
        "id": first,
        "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 2}},
    }
    search = {
        "id": second,
        "type": "function",
        "function": {"name": "search_files", "arguments": {"query": "login", "exact": True}},
    }
    calls = (
        [
            {"role": "assistant", "content": "", "tool_calls": [weather]},
            {"role": "assistant", "content": "", "tool_calls": [search]},
        ]
        if (family, variant) in ONE_CALL
        else [{"role": "assistant", "content": "Checking both.", "tool_calls": [weather, search]}]
    )
    return [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "Weather in Paris, and where is login handled?"},
        *calls,
        {"role": "tool", "tool_call_id": first, "content": "sunny, 21 C"},
        {"role": "tool", "tool_call_id": second, "content": "auth/login.py"},
    ]


def published(family: str, variant: str) -> str:
    """The shipped file rendered as transformers' ``apply_chat_template`` renders it."""
    row = shipped_template(family, variant)
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )

    def tojson(
        x: Any,
        ensure_ascii: bool = False,
        indent: Any = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:
        return json.dumps(
            x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
        )

    def raise_exception(message: str) -> None:
        raise AssertionError(message)

    env.filters["tojson"] = tojson
    env.filters["fromjson"] = json.loads
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: clock().strftime(fmt)
    return env.from_string(template_text(row.file)).render(
        messages=openai_messages(family, variant),
        tools=TOOLS,
        add_generation_prompt=True,
        bos_token="",
        eos_token=row.eos_token,
    )


# One (family, variant) per shipped file.
PUBLISHED = [pair for pair in SHIPPED if pair != ("hermes", "qwen2.5")]


@pytest.mark.parametrize(("family", "variant"), PUBLISHED, ids=str)
def test_the_prompt_is_what_the_published_template_renders(family: str, variant: str) -> None:
    prompt = template(family, variant)(history(family, variant), TOOLS, "auto")
    expected = published(family, variant)
    assert prompt.text == expected
    fixture = FIXTURES / f"{family}-{variant}.prompt"
    assert fixture.read_text(encoding="utf-8") == expected
    for marker in MARKERS[family]:
        assert marker in prompt.text, marker
    assert prompt.stop == stop_strings(family, variant)
    assert prompt.text.endswith(prompt.generation_prompt)


def test_render_prompt_takes_tool_defs_and_the_default_variant() -> None:
    from toolwire.tooldef import ToolDef

    defs = [
        ToolDef(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
        for t in TOOLS
    ]
    as_defs = render_prompt("harmony", history("harmony", "gpt-oss"), defs).text
    as_dicts = render_prompt("harmony", history("harmony", "gpt-oss"), TOOLS).text
    cut = as_defs.index("Current date")  # the real clock's date line differs
    assert as_defs[:cut] == as_dicts[:cut] and "type get_weather" in as_defs


def test_several_calls_in_one_message_render_as_one_call_per_message() -> None:
    one_per = history("harmony", "gpt-oss")
    together = [
        *one_per[:2],
        AssistantMessage([*one_per[2].parts, *one_per[3].parts]),  # type: ignore[union-attr]
        *one_per[4:],
    ]
    tpl = template("harmony", "gpt-oss")
    assert tpl(together, TOOLS, "auto").text == tpl(one_per, TOOLS, "auto").text


def test_ids_a_family_refuses_are_mapped_the_same_way_in_calls_and_results() -> None:
    history = [
        UserMessage("go"),
        AssistantMessage([ToolCall("call_abc", "get_weather", '{"city": "Oslo"}')]),
        ToolResult("call_abc", "get_weather", "snow"),
    ]
    mistral = render_prompt("mistral", history, TOOLS).text
    nine = mistral.split("[CALL_ID]")[1][:9]
    assert nine.isalnum() and f"[TOOL_RESULTS]{nine}[TOOL_CONTENT]snow" in mistral
    kimi = render_prompt("kimi", history, TOOLS).text
    assert "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" in kimi
    assert "## Return of functions.get_weather:0\nsnow" in kimi


def test_tool_choice_none_offers_no_tools_and_a_forced_choice_is_a_system_rule() -> None:
    history = [SystemMessage("Be brief."), UserMessage("hi")]
    assert (
        "[AVAILABLE_TOOLS]" not in render_prompt("mistral", history, TOOLS, tool_choice="none").text
    )
    forced = render_prompt("hermes", history, TOOLS, tool_choice="get_weather").text
    assert "Be brief.\n\nYou must call the tool get_weather." in forced


def test_a_variant_without_a_shipped_template_says_to_pass_the_models_own() -> None:
    with pytest.raises(CallerError, match=r"no chat template for glm variant 'glm-4\.7'") as caught:
        render_prompt("glm", [UserMessage("hi")], variant="glm-4.7")
    assert "tokenizer_config.json" in (caught.value.hint or "")
    with pytest.raises(CallerError, match="unknown format family"):
        render_prompt("nope", [UserMessage("hi")])


def test_the_models_own_template_from_a_folder_or_tokenizer_config(tmp_path: Path) -> None:
    source = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{{ eos_token }}{% endfor %}"
    config = {"chat_template": source, "eos_token": {"content": "<END>"}, "bos_token": "<S>"}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    history = [UserMessage("hi")]
    from_folder = render_prompt("hermes", history, template=tmp_path)
    from_config = render_prompt("hermes", history, template=tmp_path / "tokenizer_config.json")
    assert from_folder.text == from_config.text == "<user>hi<END>"
    assert from_folder.stop[-1] == "<END>"  # the model's EOS ends its turn too
    (tmp_path / "chat_template.jinja").write_text("[{{ messages[0].content }}]", encoding="utf-8")
    assert render_prompt("hermes", history, template=tmp_path).text == "[hi]"
    assert render_prompt("hermes", history, template="{{ 'inline' }}").text == "inline"
    ascii_ = "{{ messages[0].content | tojson(ensure_ascii=true) }}"
    assert render_prompt("hermes", [UserMessage("é")], template=ascii_).text == '"\\u00e9"'


def test_a_template_that_is_missing_or_broken_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CallerError, match="does not exist"):
        render_prompt("hermes", [UserMessage("hi")], template=tmp_path / "nope.jinja")
    (tmp_path / "tokenizer_config.json").write_text('{"eos_token": "x"}', encoding="utf-8")
    with pytest.raises(CallerError, match="has no chat_template"):
        render_prompt("hermes", [UserMessage("hi")], template=tmp_path)
    with pytest.raises(ProviderError, match="cannot render this conversation"):
        render_prompt("hermes", [UserMessage("hi")], template="{{ messages[0].content + 1 }}")
