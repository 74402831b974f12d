"""One family's prompt: its template (the model's own, or the shipped one) and its stops.

:func:`render_prompt` is what a raw-completions client or a proxy calls: the family
(and variant) say how the model writes calls, and so which template renders the
history and which strings end its turn; :func:`prompt_template` is the same as a
reusable ``PromptTemplate`` (what :class:`~toolwire.providers.completions.CompletionsModel`
holds).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..formats.registry import family_info
from ..history.tool_defs import ToolDefs, to_openai_chat_tools
from ..messages import Message
from .chat_template import ChatTemplate
from .prompt import Prompt
from .shipped import SHIPPED, shipped_template, template_text
from .source import read_template

__all__ = ["TemplateArg", "prompt_template", "render_prompt", "stop_strings"]

TemplateArg = ChatTemplate | str | os.PathLike[str] | None
"""A template as callers give it: a :class:`ChatTemplate`, Jinja text, a path to a
``chat_template.jinja`` / ``tokenizer_config.json`` / model folder, or ``None`` (the
template toolwire ships for the family)."""


def prompt_template(
    family: str,
    variant: str | None = None,
    *,
    template: TemplateArg = None,
    variables: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] | None = None,
) -> ChatTemplate:
    """The prompt template of ``family`` / ``variant`` (the family's default variant if
    ``None``): ``template`` when given, else the one toolwire ships.

    Args:
        family: A ``toolwire.formats`` family name.
        variant: Its variant.
        template: The model's own template (see :data:`TemplateArg`); a
            :class:`ChatTemplate` is returned as it is.
        variables: More template variables (``enable_thinking``...).
        clock: What the template's ``strftime_now`` reads.

    Raises:
        CallerError: Unknown family or variant; no shipped template for the variant and
            none given; a template path that holds none; jinja2 not installed.
        ProviderError: The template is not valid Jinja.
    """
    if isinstance(template, ChatTemplate):
        return template
    info = family_info(family)
    chosen = info.default_variant if variant is None else variant
    info.check_variant(chosen)
    if template is None:
        row = shipped_template(info.name, chosen)
        source, eos = template_text(row.file), row.eos_token
    else:
        read = read_template(template)
        source, eos = read.text, read.eos_token or ""
    return ChatTemplate(
        source,
        stop=stop_strings(info.name, chosen, eos),
        eos_token=eos,
        family=info.name,
        variant=chosen,
        variables=variables,
        clock=clock,
    )


def render_prompt(
    family: str,
    messages: Sequence[Message],
    tools: ToolDefs = (),
    *,
    variant: str | None = None,
    tool_choice: str = "auto",
    template: TemplateArg = None,
) -> Prompt:
    """Render a history as ``family``'s model reads it, ready for a ``/completions`` call.

    Args:
        family: The tool-call format family (``toolwire.formats.for_model`` resolves
            one from a model id: ``resolve_model(model)`` gives family and variant).
        messages: The history, oldest first.
        tools: The tools offered: ``ToolDef`` objects or OpenAI function tools.
        variant: The family's variant (its default if ``None``).
        tool_choice: ``"auto"``, ``"required"``, ``"none"`` or a tool name; templates
            know only offered or not, so a forced choice is written as a system rule.
        template: The model's own template, else the shipped one (see
            :data:`TemplateArg`).

    Returns:
        The prompt text (ending with the assistant turn's opening), the family's stop
        strings (``Prompt.stop``: send them as the request's ``stop``) and the
        generation prompt (give it to ``toolwire.formats.get(...,
        generation_prompt=...)`` to parse the output).

    Raises:
        CallerError: As for :func:`prompt_template`.
        ProviderError: The template is not valid Jinja, or refuses the conversation.
    """
    chat_tools = to_openai_chat_tools(tools)
    return prompt_template(family, variant, template=template)(messages, chat_tools, tool_choice)


def stop_strings(family: str, variant: str | None = None, eos_token: str = "") -> tuple[str, ...]:
    """The strings that end ``family``'s turn (its shipped template's, else the family's
    first shipped row's), plus ``eos_token`` when it is not among them."""
    info = family_info(family)
    chosen = info.default_variant if variant is None else variant
    rows = [row for row in SHIPPED if row.family == info.name]
    row = next((r for r in rows if chosen in r.variants), rows[0] if rows else None)
    stop = row.stop if row else ()
    return stop if not eos_token or eos_token in stop else (*stop, eos_token)
