"""Output cut off by the token limit, in every family.

The rule: complete calls stay calls; a call cut off by the end of the output is dropped
with a ``truncated_call`` notice and its text is not content (an opening marker at the
very end is not content either; text before it is); stream and parse alike.

Checked on every fixture of every family, parsed by every variant of the family, cut
after every character: no marker leaks into content or reasoning (unless the markup
is malformed, which passes through as content by design), and the calls of a cut
output are the whole output's first calls.
"""

from __future__ import annotations

import json

import pytest

from toolwire.formats import Format, get
from toolwire.formats.registry import FAMILIES

from .conftest import FIXTURES, ID_PREFIX, assert_split_invariant, fixture_tools, load_fixture

VARIANTS = {info.name: info.variants for info in FAMILIES}
CASES = sorted(
    (path.parent.name, path.name, variant)
    for path in FIXTURES.glob("*/*.txt")
    if path.parent.name in VARIANTS
    for variant in VARIANTS[path.parent.name]
)


def _leaks(fmt: Format, text: str | None) -> list[str]:
    return [m for m in fmt.markers if text and m in text]


@pytest.mark.parametrize(("family", "name", "variant"), CASES)
def test_a_cut_output_keeps_its_complete_calls_and_leaks_no_marker(
    family: str, name: str, variant: str
) -> None:
    fmt = get(family, variant, tools=fixture_tools(family, name))
    text = load_fixture(family, name)
    whole = fmt.parse(text, id_prefix=ID_PREFIX)
    if any(n.kind == "malformed_call" for n in whole.notices):
        pytest.skip("the whole output is malformed for this variant")
    # A fixture whose content or reasoning holds marker text on purpose (a mention in
    # reasoning, a variant this one reads as text) is checked for calls only.
    marked = bool(_leaks(fmt, whole.content) or _leaks(fmt, whole.reasoning))
    full = [(c.name, c.arguments) for c in whole.tool_calls]
    for cut in range(len(text)):
        result = fmt.parse(text[:cut], id_prefix=ID_PREFIX)
        if any(n.kind == "malformed_call" for n in result.notices):
            continue  # (a cut can make markup malformed: then it is content by design)
        calls = [(c.name, c.arguments) for c in result.tool_calls]
        if calls:  # the last may be a call read whole before its closing marker came
            assert len(calls) <= len(full), (cut, text[:cut])
            assert calls[:-1] == full[: len(calls) - 1], (cut, text[:cut])
            assert calls[-1][0] == full[len(calls) - 1][0], (cut, text[:cut])
        if not marked:
            assert not _leaks(fmt, result.content), (cut, text[:cut], result.content)
            assert not _leaks(fmt, result.reasoning), (cut, text[:cut], result.reasoning)


# One fixture per family, cut inside its last call: the calls before it stay, the cut
# call is dropped with a notice, and its text is not content.
LAST_CALL_CUTS = [
    ("hermes", "qwen3", "vllm_back_to_back.txt", '{"q": "do'),
    ("qwen3_coder", "qwen3-coder", "vllm_parallel.txt", "<parameter=city>\nOrl"),
    ("llama", "llama3-json", "json_multiple_semicolons.txt", '"query": "te'),
    ("llama", "pythonic", "pythonic_python_start_parallel.txt", "do_something_cool(st"),
    ("mistral", "v13", "v13_rendered_content_and_calls.txt", "[TOOL_CALLS]F2[ARGS]"),
    ("mistral", "v3", "v3_generated_multiple.txt", '"city": "San'),
    ("deepseek", "v4", "v4_rendered.txt", '<｜DSML｜parameter name="shape"'),
    ("glm", "glm-4.7", "glm47_sglang_two_calls.txt", "<arg_value>"),
    ("kimi", "k2", "k2_vllm_multiline.txt", '{"city": "To'),
    ("harmony", "gpt-oss", "several_calls.txt", "functions.no_args<|channel|>comm"),
    ("gemma", "gemma4", "gemma4_multiple_calls.txt", 'call:get_time{location:<|"|>Lon'),
]


@pytest.mark.parametrize(("family", "variant", "name", "inside"), LAST_CALL_CUTS)
def test_a_cut_second_call_is_dropped_and_the_first_stays(
    family: str, variant: str, name: str, inside: str
) -> None:
    fmt = get(family, variant)
    text = load_fixture(family, name)
    whole = fmt.parse(text, id_prefix=ID_PREFIX)
    if len(whole.tool_calls) < 2:
        pytest.skip("needs two calls")
    cut = text.rindex(inside) + len(inside)  # inside the last call
    result = assert_split_invariant(fmt, text[:cut], max_examples=40)
    assert [(c.name, c.arguments) for c in result.tool_calls] == [
        (c.name, c.arguments) for c in whole.tool_calls[:-1]
    ]
    assert [n.kind for n in result.notices] == ["truncated_call"]
    assert result.content == whole.content or result.content is None


def _object_ends(text: str) -> list[int]:
    """Where each object of the ``[TOOL_CALLS] [...]`` list ends (just past its ``}``)."""
    decoder = json.JSONDecoder()
    pos = text.index("[", text.index("[TOOL_CALLS]") + len("[TOOL_CALLS]")) + 1
    ends: list[int] = []
    while True:
        while text[pos].isspace():
            pos += 1
        _, pos = decoder.raw_decode(text, pos)
        ends.append(pos)
        while text[pos].isspace():
            pos += 1
        if text[pos] != ",":
            return ends
        pos += 1


MISTRAL_LISTS = sorted(
    path.name
    for path in (FIXTURES / "mistral").glob("*.txt")
    if "[TOOL_CALLS] [" in load_fixture("mistral", path.name)
)


@pytest.mark.parametrize("variant", VARIANTS["mistral"])
@pytest.mark.parametrize("name", MISTRAL_LISTS)
def test_a_cut_mistral_list_keeps_every_object_already_closed(variant: str, name: str) -> None:
    # The v3 JSON form is one list of calls: cut anywhere in it, each object that closed
    # before the cut is a call (no fewer), and only a list left open gives a notice.
    fmt = get("mistral", variant)
    text = load_fixture("mistral", name)
    full = fmt.parse(text, id_prefix=ID_PREFIX).tool_calls
    ends = _object_ends(text)
    assert len(ends) == len(full)
    opened = text.index("[TOOL_CALLS]") + len("[TOOL_CALLS]")
    closed = text.index("]", ends[-1]) + 1
    for cut in range(opened, closed):
        result = fmt.parse(text[:cut], id_prefix=ID_PREFIX)
        whole = sum(end <= cut for end in ends)
        assert result.tool_calls == full[:whole], (cut, text[:cut])
        assert [n.kind for n in result.notices] == ["truncated_call"], (cut, text[:cut])
        assert not _leaks(fmt, result.content), (cut, text[:cut], result.content)
    assert MISTRAL_LISTS  # (the fixtures hold lists)
