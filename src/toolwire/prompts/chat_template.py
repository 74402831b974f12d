"""A Jinja chat template (a model's own, or one toolwire ships) as a prompt template.

A model follows the prompt layout it was trained on best, so toolwire renders the
template the model was published with, the way Hugging Face's ``apply_chat_template``
does: OpenAI Chat messages (call arguments as objects, :mod:`.chat`), the tools as
OpenAI function tools, ``add_generation_prompt=True``, ``bos_token``/``eos_token``,
``raise_exception`` and ``strftime_now``. It runs in Jinja's immutable sandbox (a
template from a model file is untrusted text), and ``tojson`` writes JSON as
``json.dumps`` does (no HTML escaping), as Hugging Face's does.

jinja2 is an optional dependency (``toolwire[prompts]``; the ``local`` extra brings it
too): it is imported when a template is first compiled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from ..errors import CallerError, ProviderError
from ..messages import Message
from .chat import template_messages
from .prompt import Prompt

__all__ = ["ChatTemplate"]


class ChatTemplate:
    """Render a history with a Jinja chat template (a ``PromptTemplate``).

    Args:
        source: The template text (a GGUF's ``tokenizer.chat_template``, a
            ``chat_template.jinja``...).
        stop: Strings that end the model's output.
        bos_token: The text of the model's BOS token, for templates that write it.
            Empty by default: a completions server adds the BOS token itself when it
            tokenizes the prompt, and writing it again would double it.
        eos_token: The text of the model's EOS token (ends an assistant turn in some
            templates).
        family: The tool-call format family whose history conventions apply (call id
            shapes, one call per message; see :mod:`.chat`).
        variant: The family's variant, where the conventions differ by variant.
        variables: More template variables (``enable_thinking``, ``reasoning_effort``,
            ``date_string``...).
        clock: What ``strftime_now`` reads (``datetime.now`` by default).

    Raises:
        ProviderError: The template is not valid Jinja (the model file's fault).
        CallerError: jinja2 is not installed.
    """

    def __init__(
        self,
        source: str,
        *,
        stop: Sequence[str] = (),
        bos_token: str = "",
        eos_token: str = "",
        family: str | None = None,
        variant: str | None = None,
        variables: Mapping[str, Any] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self._template = _compile(source)
        self.source = source
        self.stop = tuple(stop)
        self.bos_token, self.eos_token = bos_token, eos_token
        self.family, self.variant = family, variant
        self.variables = dict(variables or {})
        self._clock = clock or datetime.now

    def __call__(
        self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]], tool_choice: str
    ) -> Prompt:
        """Render ``messages`` with ``tools`` (none under ``tool_choice="none"``)."""
        offered = [] if tool_choice == "none" else [dict(tool) for tool in tools]
        chat = template_messages(messages, self.family, self.variant)
        if offered and tool_choice != "auto":
            # Templates have no notion of tool_choice: a given system prompt gets the rule
            # (a grammar, where the server takes one, enforces it either way).
            chat = _with_system_rule(chat, _rule(tool_choice))
        without = self.render(chat, offered, generation=False)
        text = self.render(chat, offered, generation=True)
        opening = text[len(without) :] if text.startswith(without) else ""
        return Prompt(text, self.stop, opening)

    def render(
        self, chat: list[dict[str, Any]], tools: list[dict[str, Any]], *, generation: bool
    ) -> str:
        """Render template messages (:func:`.chat.template_messages`) as they are.

        Raises:
            ProviderError: The template failed or refused the conversation.
        """
        from jinja2 import TemplateError

        clock = self._clock
        try:
            return str(
                self._template.render(
                    **self.variables,
                    messages=chat,
                    tools=tools or None,
                    add_generation_prompt=generation,
                    bos_token=self.bos_token,
                    eos_token=self.eos_token,
                    strftime_now=lambda fmt: clock().strftime(fmt),
                )
            )
        except TemplateError as exc:
            raise ProviderError(f"the chat template failed to render: {exc}") from None
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            # Templates index and concatenate freely; a shape they do not expect is a
            # mismatch between the template and the conversation, not a toolwire bug.
            raise ProviderError(
                f"the chat template cannot render this conversation: {type(exc).__name__}: {exc}"
            ) from None


@lru_cache(maxsize=32)
def _compile(source: str) -> Any:
    try:
        from jinja2 import TemplateError
        from jinja2.sandbox import ImmutableSandboxedEnvironment
    except ModuleNotFoundError:
        raise CallerError(
            "rendering a chat template needs jinja2",
            hint="pip install 'toolwire[prompts]'",
        ) from None
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
    )
    env.filters["tojson"] = _tojson
    env.filters["fromjson"] = json.loads
    env.globals["raise_exception"] = _raise
    try:
        return env.from_string(source)
    except TemplateError as exc:
        raise ProviderError(f"the chat template is not valid Jinja: {exc}") from None


def _with_system_rule(chat: list[dict[str, Any]], rule: str) -> list[dict[str, Any]]:
    if chat and chat[0].get("role") == "system":
        first = dict(chat[0])
        first["content"] = f"{first['content']}\n\n{rule}"
        return [first, *chat[1:]]
    return chat  # the template's own default system prompt stays


def _tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # transformers' tojson, argument for argument (Kimi K3's template passes ensure_ascii).
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _raise(message: str) -> None:
    raise ProviderError(f"the chat template refused the conversation: {message}")


def _rule(tool_choice: str) -> str:
    if tool_choice == "required":
        return "You must call at least one tool."
    return f"You must call the tool {tool_choice}."
