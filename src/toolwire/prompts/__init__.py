"""Prompts in each model family's own format, for models driven as plain text.

A model served as raw completions (``completions:`` models, ``toolwire serve
--upstream completions:URL``) gets one text prompt, so toolwire renders the chat
itself, the way the family's published chat template does: tools where the family
declares them, assistant calls in the family's own markup, tool results in its own
role or tags, and the generation prompt::

    from toolwire import prompts

    prompt = prompts.render_prompt("mistral", history, tools)   # or template="path/"
    body = {"prompt": prompt.text, "stop": list(prompt.stop)}
    fmt = toolwire.formats.get("mistral", generation_prompt=prompt.generation_prompt)

The template is the model's own when the caller has it (a ``tokenizer_config.json``,
a ``chat_template.jinja``, a GGUF's metadata) and otherwise the published one toolwire
ships for the family (``templates/``, sources and licences in its README). Rendering
needs jinja2 (``toolwire[prompts]``).

Modules: ``prompt`` (the :class:`Prompt` type), ``chat`` (the history as templates
read it), ``chat_template`` (:class:`ChatTemplate`, the sandboxed renderer), ``source``
(reading a model's template), ``shipped`` (the table of shipped templates), ``render``
(:func:`render_prompt`).
"""

from __future__ import annotations

from .chat_template import ChatTemplate
from .prompt import Prompt, PromptTemplate
from .render import TemplateArg, prompt_template, render_prompt, stop_strings
from .shipped import SHIPPED, ShippedTemplate

__all__ = [
    "SHIPPED",
    "ChatTemplate",
    "Prompt",
    "PromptTemplate",
    "ShippedTemplate",
    "TemplateArg",
    "prompt_template",
    "render_prompt",
    "stop_strings",
]
