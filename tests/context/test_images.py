"""What images each model takes: sizes read from headers, limits that name the provider.

The JPEG and WebP fixtures were drawn for these tests on a 300 x 200 canvas in headless
Chromium (``canvas.toDataURL``); the PNGs are built here with zlib.
"""

from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import pytest

from toolwire import CallerError, Image
from toolwire.context.images import (
    ANTHROPIC_IMAGES,
    OPENAI_IMAGES,
    ImageLimits,
    pixel_size,
    reject_images,
)
from toolwire.messages import ToolResult, UserMessage

FIXTURES = Path(__file__).parent / "fixtures"


def _png(width: int, height: int) -> bytes:
    """A real grey PNG of that size (rows of zeros compress to almost nothing)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\0" * ((width + 1) * height))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def test_sizes_come_from_each_format_header() -> None:
    assert pixel_size(Image(_png(640, 480))) == (640, 480)
    assert pixel_size(Image((FIXTURES / "canvas-300x200.jpg").read_bytes(), "image/jpeg")) == (
        300,
        200,
    )
    assert pixel_size(Image((FIXTURES / "canvas-300x200.webp").read_bytes(), "image/webp")) == (
        300,
        200,
    )
    gif = b"GIF89a" + struct.pack("<HH", 321, 123) + b"\0" * 8
    assert pixel_size(Image(gif, "image/gif")) == (321, 123)
    vp8 = b"RIFF\0\0\0\0WEBPVP8 " + b"\0" * 10 + struct.pack("<HH", 77, 55)
    assert pixel_size(Image(vp8, "image/webp")) == (77, 55)
    bits = (99 - 1) | ((44 - 1) << 14)
    vp8l = b"RIFF\0\0\0\0WEBPVP8L" + b"\0" * 5 + struct.pack("<I", bits)
    assert pixel_size(Image(vp8l, "image/webp")) == (99, 44)


def test_a_header_that_says_nothing_gives_no_size() -> None:
    assert pixel_size(Image(b"\xff\xd8\xff\xe0", "image/jpeg")) is None
    assert pixel_size(Image(b"\x89PNG\r\n\x1a\n", "image/png")) is None
    # Random bytes after a valid signature: a size or None, never an exception.
    rng = random.Random(29)
    for signature, media_type in [
        (b"\xff\xd8\xff", "image/jpeg"),
        (b"RIFF\0\0\0\0WEBP", "image/webp"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"GIF87a", "image/gif"),
    ]:
        for length in range(0, 64, 3):
            size = pixel_size(Image(signature + rng.randbytes(length), media_type))
            assert size is None or (len(size) == 2 and min(size) >= 0)
    # A long chain of empty segments is walked in linear time and ends without a size.
    chain = b"\xff\xd8" + b"\xff\xe1\x00\x02" * 200_000
    assert pixel_size(Image(chain, "image/jpeg")) is None


def test_anthropic_refuses_a_side_over_8000_pixels_openai_does_not_check_sides() -> None:
    assert ANTHROPIC_IMAGES.problem(Image(_png(8000, 1))) is None
    problem = ANTHROPIC_IMAGES.problem(Image(_png(8001, 1)))
    assert problem is not None and "8001 x 1 pixel" in problem and "Anthropic" in problem
    assert OPENAI_IMAGES.problem(Image(_png(8001, 1))) is None


def test_a_text_only_model_refuses_a_history_holding_images() -> None:
    limits = ImageLimits.none("the embedded local model")
    reject_images([UserMessage("hi"), ToolResult("c", "t", "text")], limits)
    with pytest.raises(CallerError, match="message 1 \\(tool\\) holds an image"):
        reject_images(
            [UserMessage("hi"), ToolResult.from_parts("c", "t", [Image(_png(1, 1))])], limits
        )
    reject_images([UserMessage.from_parts([Image(_png(1, 1))])], ANTHROPIC_IMAGES)  # takes them


def test_a_fallback_chain_takes_the_strictest_limits_of_its_models() -> None:
    from toolwire.providers.anthropic import AnthropicModel
    from toolwire.providers.completions import CompletionsModel
    from toolwire.providers.fallback import FallbackModel
    from toolwire.providers.openai_chat import OpenAIChatModel
    from toolwire.testing import ScriptedModel

    hosted = FallbackModel(OpenAIChatModel("m", api_key="k"), AnthropicModel("m", api_key="k"))
    limits = hosted.image_limits
    assert limits is not None and limits.accepts
    assert (limits.max_base64_bytes, limits.max_side) == (5 * 1024 * 1024, 8000)
    text = FallbackModel(AnthropicModel("m", api_key="k"), CompletionsModel("m", api_key="k"))
    assert text.image_limits is not None and not text.image_limits.accepts
    assert FallbackModel(ScriptedModel([]), ScriptedModel([])).image_limits is None
