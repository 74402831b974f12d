"""Tests of ``value_end``: a closing tag inside a raw value counts only when the grammar goes on."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.formats.markers import MarkerSet
from toolwire.formats.values import value_end

CLOSE = "</v>"
ENDS = MarkerSet([CLOSE])
GRAMMAR = ("<k>", "</call>")


def test_a_closing_tag_followed_by_the_grammar_ends_the_value() -> None:
    text = "abc</v> <k>x"
    assert value_end(text, 0, ENDS, GRAMMAR, False) == (3, 7)


def test_a_closing_tag_followed_by_other_text_is_part_of_the_value() -> None:
    text = "a</v>b</v></call>"
    assert value_end(text, 0, ENDS, GRAMMAR, False) == (6, 10)


def test_a_closing_tag_at_the_end_of_the_buffer_waits_unless_final() -> None:
    assert value_end("ab</v>", 0, ENDS, GRAMMAR, False) == (2, -1)
    assert value_end("ab</v>", 0, ENDS, GRAMMAR, True) == (2, 6)  # end of output
    assert value_end("ab</v> <", 0, ENDS, GRAMMAR, False) == (2, -1)  # maybe <k>
    assert value_end("ab</v> <", 0, ENDS, GRAMMAR, True) == (8, -1)  # not a close


def test_only_a_possible_closing_tag_prefix_is_held_back() -> None:
    assert value_end("abc</", 1, ENDS, GRAMMAR, False) == (3, -1)
    assert value_end("abc</", 1, ENDS, GRAMMAR, True) == (5, -1)
    assert value_end("abc", 1, ENDS, GRAMMAR, False) == (3, -1)


def _read(pieces: list[str]) -> tuple[str, str]:
    """Read one value from ``pieces`` the way a family's value state does."""
    buf, pos, value = "", 0, []
    for index, piece in enumerate([*pieces, ""]):
        buf = buf[pos:] + piece
        pos = 0
        final = index == len(pieces)
        stop, resume = value_end(buf, pos, ENDS, GRAMMAR, final)
        value.append(buf[pos:stop])
        if resume >= 0:
            return "".join(value), buf[resume:] + "".join(pieces[index + 1 :])
        pos = stop
    return "".join(value), buf[pos:]


_PARTS = ["a", " ", "<", "/", "v", ">", "</v>", "<k>", "</call>"]
_VALUE_TEXT = st.lists(st.sampled_from(_PARTS), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_VALUE_TEXT, st.sampled_from(["<k>b", " </call>", ""]), st.data())
def test_any_split_reads_the_same_value(value: str, after: str, data: st.DataObject) -> None:
    text = f"{value}{CLOSE}{after}"
    whole = _read([text])
    cuts = sorted(data.draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=8)))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert _read([p for p in pieces if p]) == whole
    # The value ends at the first closing tag the grammar continues after.
    assert whole[1] == text[len(whole[0]) + len(CLOSE) :]
