"""The client's chunks: a text delta's JSON made without an encoder is json.dumps' own."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.serve.encode import delta_json

TEXT_KEYS = st.sampled_from(["content", "reasoning_content", "refusal"])


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(TEXT_KEYS, st.text())
def test_a_text_delta_is_what_json_dumps_makes_of_it(key: str, text: str) -> None:
    assert delta_json({key: text}) == json.dumps({key: text}, ensure_ascii=False)


@settings(deadline=None)
@given(
    st.one_of(
        st.fixed_dictionaries(
            {"tool_calls": st.lists(st.dictionaries(st.text(max_size=8), st.text()), max_size=3)}
        ),
        st.fixed_dictionaries({"role": st.just("assistant"), "content": st.text()}),
        st.dictionaries(TEXT_KEYS, st.none() | st.integers(), min_size=1),
    )
)
def test_any_other_delta_is_json_dumps(delta: dict[str, Any]) -> None:
    assert delta_json(delta) == json.dumps(delta, ensure_ascii=False)
