"""A turn's calls come in index order, whatever order they were opened in."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.turn import Turn
from toolwire.wire import Assembler


def _turn(indexes: list[int]) -> Turn:
    asm = Assembler()
    for index in indexes:
        asm.tool_fragment(index, f"call_{index}", "f", f'{{"i": {index}}}')
    asm.finish("tool_calls")
    return asm.close()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=6, unique=True))
def test_calls_opened_in_any_order_come_out_in_index_order(indexes: list[int]) -> None:
    turn = _turn(indexes)
    assert [r.index for r in turn.requests] == sorted(indexes)
    assert turn == _turn(sorted(indexes))
