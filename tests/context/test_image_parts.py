"""Results with images: only text is cut, images keep their places, an image counts
as a fixed token estimate."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Agent, ContextPolicy, Image, count_tokens, tool
from toolwire.context.images import IMAGE_TOKENS
from toolwire.context.tokens import estimate_text_tokens
from toolwire.context.truncate import truncate_middle, truncate_parts
from toolwire.messages import ContentPart, TextPart, ToolResult, parts_text
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
LOG = "".join(f"line {i:05d}: status ok, nothing to report\n" for i in range(3000))


@st.composite
def _split(draw: st.DrawFn) -> tuple[ContentPart, ...]:
    """LOG in text parts split anywhere, with images between and around them."""
    cuts = sorted(draw(st.lists(st.integers(0, len(LOG)), max_size=6)))
    pieces = [LOG[a:b] for a, b in zip([0, *cuts], [*cuts, len(LOG)], strict=True)]
    parts: list[ContentPart] = []
    for piece in pieces:
        if draw(st.booleans()):
            parts.append(Image(PNG))
        parts.append(TextPart(piece))
    return tuple(parts)


@settings(max_examples=60, deadline=None)
@given(_split())
def test_cutting_parts_cuts_their_text_as_one_and_keeps_every_image(
    parts: tuple[ContentPart, ...],
) -> None:
    cut = truncate_parts(parts, 400, "r1c0", estimate_text_tokens)
    assert cut is not None
    assert parts_text(cut) == truncate_middle(LOG, 400, "r1c0", estimate_text_tokens)
    assert [p for p in cut if isinstance(p, Image)] == [p for p in parts if isinstance(p, Image)]
    assert sum("cut from the middle" in p.text for p in cut if isinstance(p, TextPart)) == 1
    assert all(p.text for p in cut if isinstance(p, TextPart))  # no empty text part left


def test_short_parts_are_not_cut() -> None:
    assert truncate_parts((TextPart("hi"), Image(PNG)), 100, "h", estimate_text_tokens) is None


@tool
def shot() -> list[Any]:
    """A screenshot with its long log."""
    return [Image(PNG), LOG]


def test_an_agent_cuts_the_text_of_a_result_with_an_image_and_keeps_it_whole() -> None:
    model = ScriptedModel([tool_call_turn(("shot", {}, "c1")), text_turn("ok")])
    agent = Agent(model, [shot], context=ContextPolicy(max_result_tokens=IMAGE_TOKENS + 400))
    result = agent.run_sync("go")
    (answer,) = [m for m in result.messages if isinstance(m, ToolResult)]
    assert answer.parts[0] == Image(PNG) and answer.images == [Image(PNG)]
    assert "cut from the middle" in answer.content and answer.content == parts_text(answer.parts)
    # The image took IMAGE_TOKENS of the cap: about 400 tokens of text are left (not
    # the whole cap's 2000).
    assert 300 <= estimate_text_tokens(answer.content) <= 700
    assert result.context is not None and result.context.full_result("c1") == LOG


def test_an_image_counts_a_fixed_estimate() -> None:
    text = ToolResult("c1", "shot", "the page")
    with_image = ToolResult.from_parts("c1", "shot", ["the page", Image(PNG)])
    assert count_tokens([with_image]) - count_tokens([text]) == IMAGE_TOKENS
