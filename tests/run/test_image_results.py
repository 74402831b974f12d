"""A tool's return value with images becomes content parts; bad images become the
call's error result; exactly one result per call either way."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from toolwire import Agent, Image, tool
from toolwire.context.images import ImageLimits, image_limits
from toolwire.messages import TextPart, ToolResult, ToolStatus
from toolwire.providers.completions import CompletionsModel
from toolwire.providers.local import LocalModel
from toolwire.run.results import content_parts, render_content
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_a_list_is_content_parts_only_when_it_holds_an_image() -> None:
    assert content_parts(["a", "b"]) is None and render_content(["a", "b"]) == '["a", "b"]'
    assert content_parts([]) is None and content_parts("text") is None
    assert content_parts(Image(PNG)) == (Image(PNG),)
    assert content_parts(("see", Image(PNG), {"w": 1}, TextPart("x"))) == (
        TextPart("see"),
        Image(PNG),
        TextPart('{"w": 1}'),
        TextPart("x"),
    )


@tool(concurrency_safe=True)
def good() -> list[Any]:
    """An image and its caption."""
    return [Image(PNG), "a red dot"]


@tool(concurrency_safe=True)
def mislabelled() -> Image:
    """PNG bytes labelled as JPEG."""
    return Image(PNG, media_type="image/jpeg")


@tool(concurrency_safe=True)
def unrenderable() -> list[Any]:
    """An image next to a value with no text."""
    return [Image(PNG), object()]


def _results(model: Any = None) -> dict[str, ToolResult]:
    calls = [("good", {}, "c-good"), ("mislabelled", {}, "c-bad"), ("unrenderable", {}, "c-obj")]
    model = model or ScriptedModel([tool_call_turn(*calls), text_turn("done")])
    result = Agent(model, [good, mislabelled, unrenderable]).run_sync("go")
    found = [m for m in result.messages if isinstance(m, ToolResult)]
    assert len(found) == 3  # exactly one result per call
    return {r.call_id: r for r in found}


def test_each_call_gets_one_result_good_images_kept_bad_ones_explained() -> None:
    results = _results()
    assert results["c-good"].status is ToolStatus.OK
    assert results["c-good"].parts == (Image(PNG), TextPart("a red dot"))
    bad = results["c-bad"]
    assert bad.status is ToolStatus.ERROR and not bad.parts
    assert "ImageError" in bad.content and "not image/jpeg data" in bad.content
    obj = results["c-obj"]
    assert obj.status is ToolStatus.ERROR and "builtins.object" in obj.content


class _TextOnly(ScriptedModel):
    image_limits = ImageLimits.none("this text-only model")


def test_a_model_that_takes_no_images_gets_an_error_result_saying_so() -> None:
    calls = [("good", {}, "c-good"), ("mislabelled", {}, "c-bad"), ("unrenderable", {}, "c-obj")]
    results = _results(_TextOnly([tool_call_turn(*calls), text_turn("done")]))
    refused = results["c-good"]
    assert refused.status is ToolStatus.ERROR and not refused.parts
    assert "this text-only model takes no images" in refused.content


@pytest.mark.parametrize("model_class", [LocalModel, CompletionsModel])
def test_the_embedded_and_raw_completions_models_take_no_images(model_class: type) -> None:
    limits = image_limits(model_class)
    assert limits is not None and not limits.accepts
    assert limits.problem(Image(PNG)) is not None


def test_a_model_without_limits_is_assumed_to_take_images() -> None:
    assert image_limits(ScriptedModel([])) is None


def test_an_earlier_reading_note_reaches_a_result_with_images_too() -> None:
    from toolwire.tools.outcomes import with_earlier_run

    noted = with_earlier_run(ToolResult.from_parts("c", "t", [Image(PNG)]), "t", "replaced")
    assert isinstance(noted.parts[-1], TextPart) and "replaced" in noted.parts[-1].text
    assert noted.content == noted.parts[-1].text  # the text of the parts, as always
