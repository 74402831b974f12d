"""The one seam where the proxy picks how a raw completions upstream's prompt is rendered.

Today every family gets toolwire's ChatML prompt with Hermes-style ``<tools>``
(:func:`toolwire.providers.prompt.chatml_hermes`), as the completions provider sends it.
Prompts in each family's own format (the formats' own renderers, issue 26) replace it
here and nowhere else: :func:`prompt_template` is the only caller to switch.
"""

from __future__ import annotations

from ..providers.prompt import PromptTemplate, chatml_hermes

__all__ = ["prompt_template"]


def prompt_template(family: tuple[str, str | None] | None) -> PromptTemplate:
    """The prompt renderer for a model of ``family`` (``None``: no family known)."""
    del family  # every family is rendered as ChatML/Hermes until the per-family renderers land
    return chatml_hermes
