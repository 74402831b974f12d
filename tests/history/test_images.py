"""Tool results and user messages with images, as each provider documents them.

Checked field by field against the documented shapes, and validated against the
official SDKs' request types (generated from the providers' OpenAPI specs):

- Anthropic: ``tool_result.content`` may be a list of ``text`` and ``image`` blocks, an
  image as ``{"type": "image", "source": {"type": "base64", "media_type", "data"}}``
  (anthropic ``ToolResultBlockParam``, ``Base64ImageSourceParam``).
- OpenAI Responses: ``function_call_output.output`` is a string or a list of
  ``input_text`` / ``input_image`` items (``ResponseFunctionCallOutputItemListParam``;
  ``image_url``: "a fully qualified URL or base64 encoded image in a data URL").
- OpenAI Chat: a tool message's content is text only (``ChatCompletionToolMessageParam``:
  ``str`` or text parts), so the image goes in a user message after the turn's tool
  messages, as ``{"type": "image_url", "image_url": {"url"}}``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from toolwire import Image
from toolwire.errors import ImageError
from toolwire.history import to_anthropic, to_openai_chat, to_responses_input
from toolwire.messages import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolResult,
    ToolStatus,
    UserMessage,
)

from ..helpers.sdk import conforms

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
JPEG = b"\xff\xd8\xff\xe0" + b"\0" * 16
B64 = base64.b64encode(PNG).decode()
URL = f"data:image/png;base64,{B64}"
JPEG_URL = f"data:image/jpeg;base64,{base64.b64encode(JPEG).decode()}"


def _history() -> list[Message]:
    """Two parallel calls, both answered with images, then a plain user message."""
    return [
        UserMessage.from_parts(["Compare with", Image(JPEG, "image/jpeg")]),
        AssistantMessage([ToolCall("c1", "shot", "{}"), ToolCall("c2", "shot", "{}")]),
        ToolResult.from_parts("c1", "shot", ["first", Image(PNG)]),
        ToolResult.from_parts("c2", "shot", [Image(PNG), "", "second"], ToolStatus.ERROR),
        UserMessage("thanks"),
    ]


def test_anthropic_image_blocks_inside_tool_results(anthropic_types: Any) -> None:
    _, turns = to_anthropic(_history())
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}
    assert turns[0] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Compare with"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                         "data": base64.b64encode(JPEG).decode()}},
        ],
    }  # fmt: skip
    assert turns[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1",
         "content": [{"type": "text", "text": "first"}, image]},
        {"type": "tool_result", "tool_use_id": "c2", "is_error": True,
         "content": [image, {"type": "text", "text": "second"}]},  # the empty text left out
        {"type": "text", "text": "thanks"},
    ]  # fmt: skip
    conforms(list[anthropic_types.MessageParam], turns)


def test_responses_input_image_in_the_call_output(responses_types: Any) -> None:
    _, items = to_responses_input(_history())
    assert items[0] == {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "Compare with"},
            {"type": "input_image", "image_url": JPEG_URL, "detail": "auto"},
        ],
    }
    assert items[3] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [
            {"type": "input_text", "text": "first"},
            {"type": "input_image", "image_url": URL, "detail": "auto"},
        ],
    }
    assert items[4]["output"][0] == {"type": "input_image", "image_url": URL, "detail": "auto"}
    conforms(list[responses_types.ResponseInputItemParam], items)


def test_chat_tool_messages_then_one_user_message_with_the_images(chat_types: Any) -> None:
    messages = to_openai_chat(_history())
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "Compare with"},
        {"type": "image_url", "image_url": {"url": JPEG_URL}},
    ]
    first, second = messages[2], messages[3]
    assert first["tool_call_id"] == "c1" and second["tool_call_id"] == "c2"
    assert first["content"].startswith("first\n") and "1 image(s)" in first["content"]
    # No user message between the tool messages: Chat wants them right after the calls.
    assert messages[4] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images returned by call c1 (shot):"},
            {"type": "image_url", "image_url": {"url": URL}},
            {"type": "text", "text": "Images returned by call c2 (shot):"},
            {"type": "image_url", "image_url": {"url": URL}},
        ],
    }
    assert messages[5] == {"role": "user", "content": "thanks"}
    conforms(list[chat_types.ChatCompletionMessageParam], messages)


def test_images_at_the_end_of_the_history_still_follow_their_results() -> None:
    history = _history()[1:4]
    messages = to_openai_chat(history)
    assert [m["role"] for m in messages] == ["assistant", "tool", "tool", "user"]


def test_a_text_only_history_is_encoded_as_before() -> None:
    history: list[Message] = [
        UserMessage("hi"),
        AssistantMessage([ToolCall("c1", "t", "{}")]),
        ToolResult("c1", "t", "ok"),
    ]
    assert to_openai_chat(history)[-1] == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    assert to_responses_input(history)[1][-1]["output"] == "ok"
    assert to_anthropic(history)[1][-1]["content"][0]["content"] == "ok"


@pytest.mark.parametrize(
    ("data", "media_type", "says"),
    [
        (b"", "image/png", "not image/png data"),
        (b"GIF89a...", "image/png", "not image/png data"),
        (b"RIFF\0\0\0\0WAVE", "image/webp", "not image/webp data"),
        (PNG, "image/bmp", "is not one of"),
        ("text", "image/png", "must be bytes"),
    ],
)
def test_a_bad_image_is_an_image_error(data: Any, media_type: str, says: str) -> None:
    with pytest.raises(ImageError, match=says) as caught:
        Image(data, media_type)
    assert caught.value.fault == "tool"


def test_an_image_part_list_takes_only_text_and_images() -> None:
    assert ToolResult.from_parts("c", "t", ["a", TextPart("b"), Image(PNG)]).content == "ab"
    plain = ToolResult.from_parts("c", "t", ["only ", "text"])
    assert plain.parts == () and plain.content == "only text"  # no image: plain text
    with pytest.raises(ImageError, match="only text"):
        ToolResult.from_parts("c", "t", ["a", 3])  # type: ignore[list-item]


def test_an_image_repr_holds_no_bytes() -> None:
    text = repr(Image(PNG))
    assert "image/png" in text and f"{len(PNG)} bytes" in text and B64 not in text
    assert Image(bytearray(PNG)) == Image(PNG)


def test_the_history_check_refuses_a_result_part_that_is_not_text_or_image() -> None:
    from toolwire.errors import HistoryError
    from toolwire.history import check_history

    bad = ToolResult("c1", "shot", "x", parts=("x",))  # type: ignore[arg-type]
    with pytest.raises(HistoryError, match="neither a TextPart nor an Image"):
        check_history([AssistantMessage([ToolCall("c1", "shot", "{}")]), bad])
    check_history([AssistantMessage([ToolCall("c1", "shot", "{}")]), _history()[2]])
