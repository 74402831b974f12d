"""Which model family's call markup a hosted model's answer text is read with.

A served open-weight model whose server did not parse its tool calls returns its own
call markup as answer text (:mod:`toolwire.wire.content_calls`). The Chat and Responses
models take ``text_calls``: ``"auto"`` (the family :func:`toolwire.formats.for_model`
finds for the model name; none found: off), a family name optionally with its variant
(``"hermes"``, ``"llama:llama3-json"``), or ``False``.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import CallerError
from ..run.model import ModelRequest
from ..wire.content_calls import ContentCalls

__all__ = ["content_calls", "text_family"]


def text_family(model: str, text_calls: str | bool) -> tuple[str, str | None] | None:
    """The (family, variant) whose call markup is read from content, or None (off).

    Raises:
        CallerError: ``text_calls`` is not ``"auto"``, ``False`` or a known family.
    """
    from ..formats.registry import family_info, resolve_model  # the parsers load on use

    if text_calls is False:
        return None
    if text_calls == "auto":
        try:
            return resolve_model(model)
        except CallerError:
            return None  # a model no format family knows: nothing to read
    if not isinstance(text_calls, str) or not text_calls:
        raise CallerError(
            f"text_calls must be 'auto', False or a format family name, got {text_calls!r}",
            hint="e.g. text_calls='hermes' or 'llama:llama3-json'; toolwire formats lists them",
        )
    family, _, variant = text_calls.partition(":")
    info = family_info(family)  # CallerError naming the known families
    if variant and variant not in info.variants:
        raise CallerError(
            f"text_calls: {family} has no variant {variant!r}; it has {', '.join(info.variants)}"
        )
    return info.name, variant or None


def content_calls(
    family: tuple[str, str | None], request: ModelRequest
) -> Callable[[], ContentCalls]:
    """A factory of one turn's :class:`ContentCalls` for ``request``: its calls become
    tool calls when tools were offered and ``tool_choice`` is not ``none``; otherwise
    the text stays text and a notice says when it held markup."""
    from .. import formats

    fmt = formats.get(*family, tools=request.tools)
    apply = request.may_call
    return lambda: ContentCalls(fmt, apply=apply)
