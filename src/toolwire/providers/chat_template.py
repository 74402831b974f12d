"""A model's own chat template (the Jinja text a GGUF file carries) as a prompt template.

A model follows the prompt layout it was trained on best: Qwen2.5's template, for
example, introduces its tools with its own words and a default system prompt. When a
GGUF file carries a template that knows about tools and writes ChatML with Hermes-style
``<tool_call>`` blocks (what the local provider's grammar and parser expect), the local
provider renders that template instead of toolwire's generic :func:`.prompt.chatml_hermes`.

The template sees what Hugging Face's ``apply_chat_template`` would give it: OpenAI Chat
messages (tool call arguments as objects), the tools as OpenAI function tools, and
``add_generation_prompt=True``. It runs in Jinja's immutable sandbox, and ``tojson``
writes JSON as ``json.dumps`` does (no HTML escaping), as Hugging Face's does.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import ProviderError
from ..history import to_openai_chat
from ..messages import Message
from .prompt import CHATML_STOP, Prompt

__all__ = ["ChatTemplate", "fits_hermes"]


def fits_hermes(source: str) -> bool:
    """Whether a template offers tools and writes ChatML turns and ``<tool_call>`` blocks."""
    return "tools" in source and "<|im_start|>" in source and "<tool_call>" in source


class ChatTemplate:
    """Render a history with a Jinja chat template (a ``PromptTemplate``).

    Args:
        source: The template text (a GGUF's ``tokenizer.chat_template``).
        stop: Strings that end the model's output (ChatML's by default).
        bos_token: The text of the model's BOS token, for templates that write it.
        eos_token: The text of the model's EOS token.

    Raises:
        ProviderError: The template is not valid Jinja (the model file's fault).
    """

    def __init__(
        self,
        source: str,
        *,
        stop: Sequence[str] = CHATML_STOP,
        bos_token: str = "",
        eos_token: str = "",
    ) -> None:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        try:
            self._template = env.from_string(source)
        except TemplateError as exc:
            raise ProviderError(f"the model's chat template is not valid Jinja: {exc}") from None
        self.stop = tuple(stop)
        self.bos_token, self.eos_token = bos_token, eos_token

    def __call__(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]], tool_choice: str
    ) -> Prompt:
        """Render ``messages`` with ``tools`` (none under ``tool_choice="none"``)."""
        offered = [] if tool_choice == "none" else [dict(tool) for tool in tools]
        chat = [_for_template(message) for message in to_openai_chat(messages)]
        if offered and tool_choice != "auto":
            # Templates have no notion of tool_choice: a given system prompt gets the rule
            # (the grammar enforces it either way).
            chat = _with_system_rule(chat, _rule(tool_choice))
        without = self._render(chat, offered, generation=False)
        text = self._render(chat, offered, generation=True)
        opening = text[len(without) :] if text.startswith(without) else ""
        return Prompt(text, self.stop, opening)

    def _render(
        self, chat: list[dict[str, Any]], tools: list[dict[str, Any]], *, generation: bool
    ) -> str:
        from jinja2 import TemplateError

        try:
            return str(
                self._template.render(
                    messages=chat,
                    tools=tools or None,
                    add_generation_prompt=generation,
                    bos_token=self.bos_token,
                    eos_token=self.eos_token,
                )
            )
        except TemplateError as exc:
            raise ProviderError(f"the model's chat template failed to render: {exc}") from None


def _for_template(message: dict[str, Any]) -> dict[str, Any]:
    """One OpenAI Chat message as chat templates expect it: arguments as objects."""
    out = dict(message)
    if out.get("content") is None:
        out["content"] = ""
    calls = out.get("tool_calls")
    if calls:
        out["tool_calls"] = [
            {**call, "function": {**call["function"], "arguments": _arguments(call)}}
            for call in calls
        ]
    return out


def _arguments(call: Mapping[str, Any]) -> Any:
    text = call["function"].get("arguments") or "{}"
    try:
        return json.loads(text)
    except ValueError:
        return text  # kept verbatim: the model sees what it wrote


def _with_system_rule(chat: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    if chat and chat[0].get("role") == "system":
        first = dict(chat[0])
        first["content"] = f"{first['content']}\n\n{rule}"
        return [first, *chat[1:]]
    return chat  # the template's own default system prompt stays; the grammar enforces


def _tojson(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise(message: str) -> None:
    raise ProviderError(f"the model's chat template refused the conversation: {message}")


def _rule(tool_choice: str) -> str:
    if tool_choice == "required":
        return "You must call at least one tool."
    return f"You must call the tool {tool_choice}."
