"""A provider's 400 about an image a tool returned: that call's error result, not a failed run.

The images a tool returns are checked against the model's documented limits before
they are sent (:mod:`toolwire.context.images`), but some rules depend on the whole
request (Anthropic's 2000-pixel side past 20 images, image counts) or on the image's
content (bytes the provider cannot decode), so a hosted provider can still answer
400. When it does, the loop answers the calls whose results carried the images with an
error result that says which image and what the provider said, and sends the request
again — once: a request that fails again is the run's error.

The test is careful, so that an unrelated 400 is never swallowed. All of these hold:

* the error is a :class:`~toolwire.errors.ProviderAPIError` with HTTP status 400;
* the provider's message or error code speaks of an image or a media type
  (``image`` as a word — ``input_image`` in a message about a wrong item type is
  not — ``images``, ``media type``/``media_type``, ``mime``, or an error code with
  ``image`` in it such as ``invalid_image_format``);
* the request carried images in the tool results of its latest round (the results
  after its last assistant turn): an image in an older round or in a user message is
  not a call's, and is left to fail the request.

Which call: when the provider's error points into one tool result (Anthropic's field
path ``messages.N.content.M...`` reaches a ``tool_result``, OpenAI Responses' ``param``
an ``input[N]`` that is a ``function_call_output``), the HTTP layer names its call
(``ProviderAPIError.call_id``, :func:`toolwire.providers.http.pointed_call`), and only
that call is answered. Otherwise (OpenAI Chat carries a result's images in a user
message that names no call in a field; a count over the whole request) every result of
the round that held an image is answered, each naming its own images. Results without
images keep theirs either way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..errors import ProviderAPIError
from ..messages import AssistantMessage, Message, ToolResult
from ..tools import outcomes

__all__ = ["about_image", "answer_refused_images", "latest_image_results"]

_ABOUT_IMAGE = re.compile(r"\bimages?\b|\bmedia[ _]type\b|\bmime\b", re.IGNORECASE)
_MESSAGE_CHARS = 500  # of the provider's message, in the result the model reads


def about_image(error: BaseException) -> bool:
    """Whether ``error`` is a provider's 400 whose message or code is about an image."""
    if not isinstance(error, ProviderAPIError) or error.status != 400:
        return False
    code = " ".join(_codes(error)).lower()
    return "image" in code or bool(_ABOUT_IMAGE.search(error.message))


def _codes(error: ProviderAPIError) -> list[str]:
    """The error's type and code, as the provider sent them (OpenAI: ``code``)."""
    codes = [error.error_type or ""]
    body: Any = error.body
    inner = body.get("error") if isinstance(body, dict) else None
    if isinstance(inner, dict):
        codes += [v for k in ("code", "type") if isinstance(v := inner.get(k), str)]
    return codes


def latest_image_results(messages: Sequence[Message]) -> list[int]:
    """Positions in ``messages`` of the latest round's tool results that hold an image
    (the results after the last assistant message)."""
    positions = []
    for position in range(len(messages) - 1, -1, -1):
        message = messages[position]
        if isinstance(message, AssistantMessage):
            break
        if isinstance(message, ToolResult) and message.parts and message.images:
            positions.append(position)
    return positions[::-1]


def answer_refused_images(
    messages: list[Message], error: ProviderAPIError, sent: Sequence[Message]
) -> list[tuple[ToolResult, ToolResult]]:
    """Answer with an error result each call of the latest round whose result held an
    image, when ``error`` is a 400 about an image and the request ``sent`` carried
    images in that round's results; ``messages`` (the run's history) gets them in
    place of the results.

    Returns:
        Each answered call's ``(old result, new error result)`` (empty: the error is not
        about those images; nothing changed).
    """
    if not about_image(error) or not latest_image_results(sent):
        return []
    positions = latest_image_results(messages)
    pointed = [p for p in positions if _call_id(messages[p]) == error.call_id]
    replaced = []
    for position in pointed or positions:
        old = messages[position]
        assert isinstance(old, ToolResult)
        new = outcomes.refused_image_result(old, _said(error))
        messages[position] = new
        replaced.append((old, new))
    return replaced


def _call_id(message: Message) -> str | None:
    return message.call_id if isinstance(message, ToolResult) else None


def _said(error: ProviderAPIError) -> str:
    """The provider's own message (no request data, no key), cut to a readable length."""
    said = error.message
    return said if len(said) <= _MESSAGE_CHARS else said[:_MESSAGE_CHARS] + "…"
