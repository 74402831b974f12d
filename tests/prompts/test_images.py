"""A text prompt cannot carry images: parts are flattened to text with a placeholder."""

from __future__ import annotations

import base64

from toolwire import Image
from toolwire.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from toolwire.prompts.chat import template_messages

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def test_image_parts_become_a_placeholder_line_and_no_extra_message() -> None:
    history = [
        UserMessage.from_parts(["What is on", Image(PNG)]),
        AssistantMessage([ToolCall("c1", "shot", "{}")]),
        ToolResult.from_parts("c1", "shot", ["the page", Image(PNG)]),
    ]
    chat = template_messages(history)
    assert [m["role"] for m in chat] == ["user", "assistant", "tool"]  # no image message
    placeholder = f"[image: image/png, {len(PNG)} bytes; not shown in a text prompt]"
    assert chat[0]["content"] == f"What is on\n{placeholder}\n"
    assert chat[2]["content"] == f"the page\n{placeholder}\n"
    assert all(isinstance(m["content"], str) for m in chat)
