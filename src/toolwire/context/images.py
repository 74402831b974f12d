"""Images in requests: what each model accepts, and what an image costs in tokens.

A model says what images it takes with an ``image_limits`` attribute (an
:class:`ImageLimits`); a model without one (a scripted model, a user's own) is assumed
to take any image, and the provider's own 400 is then the check. The executor checks
every image a tool returns against the running model's limits when the result is made
(:meth:`toolwire.context.RunContext.shape_result`), so a result the provider would
refuse becomes that call's error result instead of a failed request.

The limits are the providers' documented ones:

- Anthropic (https://platform.claude.com/docs/en/build-with-claude/vision): at most
  5 MB per image, as the API measures it (the base64 text: its 400 reads "image
  exceeds 5 MB maximum: N bytes > 5242880 bytes"), and 8000 pixels a side.
- OpenAI Chat and Responses
  (https://developers.openai.com/api/docs/guides/images-vision): at most 50 MB of
  payload per request, so no single image may be larger.
- The embedded local model and raw-completions models: no images at all (their
  prompts are text).

Pixel sizes are read from the image's header (:func:`pixel_size`: PNG, GIF, JPEG and
WebP, a few bytes each, never a decode). Per-request rules (Anthropic's 2000-pixel
side when a request holds more than 20 images, image counts, total payload) are left
to the provider: they depend on the whole request, not on one result. The provider's
400 about an image then becomes the error result of the calls that returned the images
(:mod:`toolwire.run.refused_images`), and the request is sent again once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CallerError, ImageError
from ..messages import ContentPart, Image, Message, ToolResult, UserMessage

__all__ = [
    "ANTHROPIC_IMAGES",
    "IMAGE_TOKENS",
    "OPENAI_IMAGES",
    "ImageLimits",
    "check_images",
    "image_limits",
    "pixel_size",
    "reject_images",
    "strictest",
]

IMAGE_TOKENS = 1600
"""The tokens one image is counted as (its pixels are not decoded to count exactly).

About what Anthropic charges for the largest image it keeps unscaled (its vision guide:
tokens = width x height / 750, about 1600 at 1.15 megapixels); OpenAI's high-detail
1024 x 1024 image is 765. An estimate on the high side keeps a budget honest."""

_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What images a model accepts in a request.

    Args:
        provider: Who the limits are for, as the error result names it.
        accepts: ``False``: the model takes no images at all.
        max_base64_bytes: The largest image, as base64 text (``None``: no limit known).
        max_side: The most pixels an image's width or height may have (``None``: any).
    """

    provider: str
    accepts: bool = True
    max_base64_bytes: int | None = None
    max_side: int | None = None

    @classmethod
    def none(cls, provider: str) -> ImageLimits:
        """The limits of a model that takes no images."""
        return cls(provider, accepts=False)

    def problem(self, image: Image) -> str | None:
        """Why ``image`` cannot be sent to this model, or ``None``."""
        if not self.accepts:
            return (
                f"the tool returned an image, and {self.provider} takes no images (its "
                "prompt is text only); return text, or use a model that reads images"
            )
        encoded = (len(image.data) + 2) // 3 * 4
        if self.max_base64_bytes is not None and encoded > self.max_base64_bytes:
            return (
                f"the tool returned a {image.media_type} image of {len(image.data)} bytes "
                f"({encoded} as base64), over {self.provider}'s limit of "
                f"{self.max_base64_bytes} bytes per image; return a smaller image"
            )
        size = pixel_size(image) if self.max_side is not None else None
        if size is not None and self.max_side is not None and max(size) > self.max_side:
            return (
                f"the tool returned a {size[0]} x {size[1]} pixel image, over "
                f"{self.provider}'s limit of {self.max_side} pixels a side; scale it down"
            )
        return None


ANTHROPIC_IMAGES = ImageLimits("Anthropic", max_base64_bytes=5 * _MB, max_side=8000)
"""Anthropic Messages: 5 MB per image (measured as base64 text), 8000 pixels a side."""

OPENAI_IMAGES = ImageLimits("OpenAI", max_base64_bytes=50 * _MB)
"""OpenAI Chat and Responses: 50 MB of payload per request bounds each image."""


def strictest(models: Sequence[object]) -> ImageLimits | None:
    """The limits an image must meet to go to any of ``models`` (a fallback chain, where
    whichever answers reads it): none declared by any of them gives ``None``."""
    declared = [limits for m in models if (limits := image_limits(m)) is not None]
    if not declared:
        return None
    who = " / ".join(limits.provider for limits in declared)
    refusing = [limits for limits in declared if not limits.accepts]
    if refusing:
        return ImageLimits.none(refusing[0].provider)
    sizes = [x.max_base64_bytes for x in declared if x.max_base64_bytes is not None]
    sides = [x.max_side for x in declared if x.max_side is not None]
    return ImageLimits(who, True, min(sizes, default=None), min(sides, default=None))


def image_limits(model: object) -> ImageLimits | None:
    """The model's image limits (``None``: none declared, any image assumed accepted)."""
    limits = getattr(model, "image_limits", None)
    return limits if isinstance(limits, ImageLimits) else None


def check_images(parts: tuple[ContentPart, ...], limits: ImageLimits | None) -> None:
    """Raise if an image in ``parts`` cannot be sent under ``limits``.

    Raises:
        ImageError: The first image the model cannot take, and why.
    """
    if limits is None:
        return
    for part in parts:
        if isinstance(part, Image):
            problem = limits.problem(part)
            if problem is not None:
                raise ImageError(problem)


def reject_images(messages: Sequence[Message], limits: ImageLimits) -> None:
    """Refuse a history with images for a model that takes none (its prompt is text:
    the images would vanish without a word).

    Raises:
        CallerError: A user message or tool result in ``messages`` holds an image.
    """
    if limits.accepts:
        return
    for position, message in enumerate(messages):
        if isinstance(message, (UserMessage, ToolResult)) and message.images:
            raise CallerError(
                f"message {position} ({message.role}) holds an image, and {limits.provider} "
                "takes no images (its prompt is text only)",
                hint="send text only to this model, or use a hosted model that reads images",
            )


# -- pixel sizes from headers ----------------------------------------------------------

# JPEG start-of-frame markers (they hold the size); C4, C8 and CC are other segments.
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def pixel_size(image: Image) -> tuple[int, int] | None:
    """``(width, height)`` read from the image's header; ``None`` when it says none."""
    data = image.data
    if image.media_type == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if image.media_type == "image/gif" and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if image.media_type == "image/jpeg":
        return _jpeg_size(data)
    if image.media_type == "image/webp":
        return _webp_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the segments to the first frame header (each step moves forward: linear)."""
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_FRAMES:
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        if marker == 0xD8 or 0xD0 <= marker <= 0xD7:  # no length field
            at += 2
            continue
        at += 2 + int.from_bytes(data[at + 2 : at + 4], "big")
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = 1 + int.from_bytes(data[24:27], "little")
        return width, 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 " and len(data) >= 30:
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        return width, int.from_bytes(data[28:30], "little") & 0x3FFF
    return None
