"""The later stages' test subsets (tests/subsets.py) follow what the files import."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.subsets import TESTS, compiled_modules, in_subset, is_a_test_of_compiled_code

ROOT = TESTS.parent


def test_the_compiled_modules_are_the_build_configs() -> None:
    wire = {p.stem for p in (ROOT / "src" / "toolwire" / "wire").glob("*.py")} - {"__init__"}
    # and turn.py, whose per-call and per-turn classes the wire layer builds
    assert compiled_modules() == {f"toolwire.wire.{name}" for name in wire} | {"toolwire.turn"}


@pytest.mark.parametrize(
    ("path", "compiled", "versions"),
    [
        # builds and feeds the compiled parsers; pure data handling
        ("wire/test_jsonscan.py", True, False),
        # names the wire layer's events itself; pure data handling
        ("formats/test_hermes.py", True, False),
        # names the wire layer itself (and its helper does); asyncio
        ("run/test_agent.py", True, True),
        # only through the helper tests/observe/helpers.py; SQLite
        ("observe/test_log_writer.py", False, True),
        # SQLite through the audit log module it names; no wire object of its own
        ("observe/test_log_secrets.py", False, True),
        # signatures read at run time; no wire object
        ("tools/test_schema.py", False, True),
        ("test_imports.py", False, True),
        # the error classes: data, found with importlib (not a version difference)
        ("test_errors.py", False, False),
        # threads and subprocesses of its own
        ("cli/test_conventions.py", False, True),
        # asyncio and subprocesses, but the benchmark harness runs on the main Python only
        ("bench/test_bench_smoke.py", False, False),
    ],
)
def test_a_file_is_placed_by_its_imports(path: str, compiled: bool, versions: bool) -> None:
    assert in_subset("compiled", TESTS / path) is compiled
    assert in_subset("versions", TESTS / path) is versions


@pytest.mark.parametrize(
    ("path", "own"),
    [
        ("wire/test_jsonscan.py", True),  # the folder of toolwire.wire, compiled
        ("test_turn_classes.py", True),  # named for toolwire.turn, compiled
        # in the compiled subset (they name the wire layer), testing code that is not
        ("formats/test_hermes.py", False),
        ("history/test_anthropic.py", False),
        ("providers/test_http.py", False),
        # named for toolwire.testing, not compiled
        ("test_testing.py", False),
    ],
)
def test_a_file_is_a_test_of_compiled_code_by_where_it_is_and_its_name(
    path: str, own: bool
) -> None:
    assert is_a_test_of_compiled_code(TESTS / path) is own


def test_a_file_outside_the_suite_keeps_its_counts() -> None:
    assert is_a_test_of_compiled_code(ROOT / "src" / "toolwire" / "checks.py") is True


def test_neither_subset_is_the_whole_suite() -> None:
    # The root conftest.py counts for every test: an import of the wire layer or of a
    # version-sensitive module there would put every file in a subset.
    files = sorted(TESTS.rglob("test_*.py"))
    for subset in ("compiled", "versions"):
        chosen = [f for f in files if in_subset(subset, f)]
        assert 0 < len(chosen) < len(files), subset


@pytest.mark.parametrize(
    ("path", "ray"),
    [
        ("integrations/test_ray.py", True),  # pytestmark = [pytest.mark.ray, ...]
        ("docs/test_snippets.py", True),  # docs/ray.md: <!-- snippet: mark ray slow -->
        # imports toolwire's Ray modules, but its tests run without Ray's instance
        ("integrations/test_ray_relay.py", False),
        ("integrations/test_mcp.py", False),
    ],
)
def test_the_ray_subset_is_the_files_that_mark_ray(path: str, ray: bool) -> None:
    assert in_subset("ray", TESTS / path) is ray


def test_an_unknown_subset_is_refused() -> None:
    with pytest.raises(ValueError, match="compiled, versions, ray"):
        in_subset("quick", TESTS / Path("test_imports.py"))


def _property() -> Any:
    """A property asking for more examples than the fast profile's count."""

    @settings(max_examples=500)
    @given(st.integers())
    def prop(x: int) -> None:
        assert isinstance(x, int)

    return prop


@pytest.mark.parametrize(
    ("options", "capped_files"),
    [
        # scripts/test's pure stage: the compiled stage runs the compiled code's own
        # properties at full counts, so this run caps them, and only them
        ({"compiled_stage_follows": True, "subset": None}, {"wire/test_jsonscan.py"}),
        # the compiled stage: the properties of the files whose subject is not compiled
        ({"compiled_stage_follows": False, "subset": "compiled"}, {"formats/test_hermes.py"}),
        # a whole run on its own: every property at its own count
        ({"compiled_stage_follows": False, "subset": None}, set()),
    ],
)
def test_the_ci_profile_caps_the_properties_another_stage_runs_at_full_counts(
    options: dict[str, Any], capped_files: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import conftest

    monkeypatch.setattr(conftest, "_CAPPED", set())  # this run's own caps left as they are
    fast = conftest.FAST_EXAMPLES

    paths = ["wire/test_jsonscan.py", "formats/test_hermes.py"]
    items = [
        SimpleNamespace(path=TESTS / p, obj=_property(), name="prop", nodeid=f"{p}::prop")
        for p in paths
    ]
    config = SimpleNamespace(getoption=options.__getitem__)
    before = settings.get_current_profile_name()
    settings.load_profile("ci")
    try:
        conftest.pytest_collection_modifyitems(config, items)  # type: ignore[arg-type]
    finally:
        settings.load_profile(before)
    counts = {
        path: item.obj._hypothesis_internal_use_settings.max_examples
        for path, item in zip(paths, items, strict=True)
    }
    assert counts == {p: fast if p in capped_files else 500 for p in paths}
    # and a property built while the test runs (a helper's own @given) is capped alike
    for path in paths:
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{path}::prop (call)")
        assert conftest.capped_examples(50) == (fast if path in capped_files else 50)
