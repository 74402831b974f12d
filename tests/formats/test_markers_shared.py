"""Marker sets are shared: a format's construction and a stream's start build none.

A :class:`MarkerSet` compiles an alternation and a prefix set; building them again at
every stream's start was about a fifth of the format tests' CPU. These tests count the
real constructor's calls (it still runs) while a second format of each variant is made
and streams a whole output.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolwire.errors import ToolwireError
from toolwire.formats import get
from toolwire.formats.markers import MarkerSet, marker_set
from toolwire.formats.registry import FAMILIES

VARIANTS = [(info.name, variant) for info in FAMILIES for variant in info.variants]
# An output that reaches most families' call and value states (the markers differ, but
# every family reads "<" and "[" and "{" openers as candidates).
OUTPUT = 'A <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> [f(x=1)] B'


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, ...]]]:
    """The markers of every MarkerSet built while the test runs (the real constructor)."""
    built: list[tuple[str, ...]] = []
    real_init = MarkerSet.__init__

    def counting_init(self: MarkerSet, markers: tuple[str, ...]) -> None:
        real_init(self, markers)
        built.append(self.markers)

    monkeypatch.setattr(MarkerSet, "__init__", counting_init)
    yield built


@pytest.mark.parametrize(("family", "variant"), VARIANTS)
def test_a_stream_start_builds_no_marker_set(
    family: str, variant: str, builds: list[tuple[str, ...]]
) -> None:
    get(family, variant).stream().close()  # the first may build the variant's sets
    builds.clear()
    stream = get(family, variant).stream()
    for start in range(0, len(OUTPUT), 3):
        try:
            stream.feed(OUTPUT[start : start + 3])
        except ToolwireError:  # a family that rejects this output: its start still counts
            break
    assert builds == []


def test_marker_set_is_built_once_per_markers() -> None:
    first = marker_set("</parameter>", "<x>")
    assert marker_set("</parameter>", "<x>") is first
    assert first.markers == ("</parameter>", "<x>")
    assert marker_set("<x>") is not first
