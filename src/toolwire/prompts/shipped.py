"""The chat templates toolwire ships, one per format family variant, as a table.

When toolwire does not have a model's own template, it renders the one the family was
published with: the files in ``templates/`` are copies of published chat templates
(Hugging Face model repositories, llama.cpp's ``models/templates``, vLLM's
``examples/tool_chat_template_*.jinja``), kept byte for byte; ``templates/README.md``
names each file's source, commit and licence. This table says which file renders which
variant, and what ends the model's turn (the stop strings and the EOS token text).

A variant with no published template that renders its calls (DeepSeek V3.2/V4's DSML,
GLM-4.7, Kimi K3) has no row, nor one whose only published template breaks its calls' arguments (vLLM's
Gemma 3 ``pythonic`` example writes no comma between arguments, a ``set`` inside a Jinja
loop not outliving the iteration; its Llama 4 ``pythonic`` one writes every value as a
string in unescaped double quotes, so ``days=2`` comes back ``"2"`` and a quote in a
value breaks the call): rendering it another variant's way would be a prompt in a
format the model was not trained on, so asking for it is an error that says to pass the
model's own template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..errors import CallerError

__all__ = ["SHIPPED", "ShippedTemplate", "shipped_template", "template_text"]

_CHATML = ("<|im_end|>", "<|endoftext|>", "<|im_start|>")
_DEEPSEEK_EOS = "<\uff5cend\u2581of\u2581sentence\uff5c>"  # full-width bars, U+2581 spaces


@dataclass(frozen=True, slots=True)
class ShippedTemplate:
    """A published chat template toolwire ships for some variants of one family.

    Attributes:
        family: The format family (``toolwire.formats`` name).
        variants: The variants it renders.
        file: Its file name under ``toolwire/prompts/templates/``.
        stop: Strings that end the model's turn (a completions request's ``stop``).
        eos_token: The text of the model's EOS token, for templates that write it.
        source: Where the file was published (``templates/README.md`` has more).
    """

    family: str
    variants: tuple[str, ...]
    file: str
    stop: tuple[str, ...]
    eos_token: str
    source: str


SHIPPED: tuple[ShippedTemplate, ...] = (
    ShippedTemplate(
        "hermes",
        ("qwen3", "qwen3-thinking", "qwq", "qwen2.5", "hermes"),
        "qwen3.jinja",
        _CHATML,
        "<|im_end|>",
        "Qwen/Qwen3-0.6B",
    ),
    ShippedTemplate(
        "qwen3_coder",
        ("qwen3-coder", "qwen3.5"),
        "qwen3_coder.jinja",
        _CHATML,
        "<|im_end|>",
        "vLLM examples/tool_chat_template_qwen3coder.jinja",
    ),
    ShippedTemplate(
        "llama",
        ("llama3-json",),
        "llama3_json.jinja",
        ("<|eot_id|>", "<|eom_id|>"),
        "<|eot_id|>",
        "vLLM examples/tool_chat_template_llama3.1_json.jinja",
    ),
    ShippedTemplate(
        "mistral",
        ("v11", "v13"),
        "mistral_v11.jinja",
        ("</s>",),
        "</s>",
        "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
    ),
    ShippedTemplate(
        "mistral",
        ("v3",),
        "mistral_v3.jinja",
        ("</s>",),
        "</s>",
        "vLLM examples/tool_chat_template_mistral.jinja",
    ),
    ShippedTemplate(
        "deepseek",
        ("v3.1",),
        "deepseek_v3.1.jinja",
        (_DEEPSEEK_EOS,),
        _DEEPSEEK_EOS,
        "vLLM examples/tool_chat_template_deepseekv31.jinja",
    ),
    ShippedTemplate(
        "deepseek",
        ("v3",),
        "deepseek_v3.jinja",
        (_DEEPSEEK_EOS,),
        _DEEPSEEK_EOS,
        "vLLM examples/tool_chat_template_deepseekv3.jinja",
    ),
    ShippedTemplate(
        "deepseek",
        ("r1",),
        "deepseek_r1.jinja",
        (_DEEPSEEK_EOS,),
        _DEEPSEEK_EOS,
        "vLLM examples/tool_chat_template_deepseekr1.jinja",
    ),
    ShippedTemplate(
        "glm",
        ("glm-4.5",),
        "glm_4.5.jinja",
        ("<|user|>", "<|observation|>", "<|endoftext|>"),
        "<|endoftext|>",
        "llama.cpp models/templates/glm_4_5.jinja (zai-org/GLM-4.5)",
    ),
    ShippedTemplate(
        "kimi",
        ("k2",),
        "kimi_k2.jinja",
        ("<|im_end|>",),
        "<|im_end|>",
        "llama.cpp models/templates/moonshotai-Kimi-K2-Thinking.jinja",
    ),
    ShippedTemplate(
        "harmony",
        ("gpt-oss",),
        "gpt_oss.jinja",
        ("<|return|>", "<|call|>"),
        "<|return|>",
        "openai/gpt-oss-120b",
    ),
    ShippedTemplate(
        "gemma",
        ("gemma4",),
        "gemma4.jinja",
        ("<turn|>", "<|tool_response>"),
        "<turn|>",
        "google Gemma 4 chat_template.jinja",
    ),
    ShippedTemplate(
        "gemma",
        ("functiongemma",),
        "functiongemma.jinja",
        ("<end_of_turn>",),
        "<end_of_turn>",
        "vLLM examples/tool_chat_template_functiongemma.jinja",
    ),
)

_BY_VARIANT = {(row.family, variant): row for row in SHIPPED for variant in row.variants}


def shipped_template(family: str, variant: str) -> ShippedTemplate:
    """The shipped template of ``family``'s ``variant``.

    Raises:
        CallerError: toolwire ships none for it (the message lists what it ships).
    """
    row = _BY_VARIANT.get((family, variant))
    if row is None:
        have = ", ".join(f"{f}/{v}" for f, v in _BY_VARIANT if f == family) or "none"
        raise CallerError(
            f"toolwire ships no chat template for {family} variant {variant!r} (it ships: {have})",
            hint="pass the model's own template: template='path/to/tokenizer_config.json' "
            "or a chat_template.jinja",
        )
    return row


@cache
def template_text(file: str) -> str:
    """The text of a shipped template file."""
    return (
        resources.files(__package__)
        .joinpath("templates")
        .joinpath(file)
        .read_text(encoding="utf-8")
    )
