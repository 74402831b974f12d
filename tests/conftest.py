"""Suite-wide pytest hooks, and the Hypothesis profiles.

Two Hypothesis profiles: ``fast``, the default, for the inner loop (each property runs
at most ``FAST_EXAMPLES`` examples), and ``ci``, every property at the example count its
test asks for. ``bash scripts/test`` runs ``ci``; choose it anywhere with
``HYPOTHESIS_PROFILE=ci`` or ``pytest --hypothesis-profile=ci``.
"""

from __future__ import annotations

import os
import resource
import time
import warnings
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisSideeffectWarning

import toolwire.wire
from tests.subsets import SUBSETS, in_subset, is_a_test_of_compiled_code

pytest_plugins = ("tests.helpers.sdk",)
"""Fixtures every area's tests take: the official SDKs' types, imported on first use."""

FAST_EXAMPLES = 20
"""The most examples a property runs under the ``fast`` profile."""

_CAPPED: set[str] = set()
"""The node ids of the tests whose properties this run caps (pytest_collection_modifyitems)."""


def capped_examples(asked: int) -> int:
    """``asked``, or ``FAST_EXAMPLES`` if fewer and this run caps the running test's properties.

    For a property that a test builds while it runs (a helper's own ``@given``, such as
    tests/formats/conftest.py's split check), which the cap applied at collection cannot
    reach: it reads the running test from ``PYTEST_CURRENT_TEST``.
    """
    current = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0]
    return min(asked, FAST_EXAMPLES) if current in _CAPPED else asked


FULL_WHEN_COMPILED = frozenset({"test_fuzzed_data_raises_only_toolwire_errors"})
"""Properties kept at their full counts in the compiled stage though their files test code
that is not compiled: the history codecs' fuzz, whose malformed provider data alone take
paths of the compiled modules no other test of that stage takes (an error that is not an
object, or one without a message, in wire/fields.py; an output item of an unknown type in
wire/openai_responses_body.py; traced, docs/contributing.md)."""

settings.register_profile("ci", print_blob=True)
settings.register_profile("fast", max_examples=FAST_EXAMPLES)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


def pytest_configure(config: pytest.Config) -> None:
    """Have Hypothesis's Unicode tables on disk before any xdist worker starts.

    ``st.text()`` needs the table of the characters UTF-8 encodes (and the Unicode
    categories'): Hypothesis computes it, ~2-3.5 s of CPU, in a process whose storage
    directory (``.hypothesis/unicode_data/<Unicode version>/``) lacks it, and writes it
    there atomically (a rename); later processes read it. A clean checkout has none, so
    each worker of the first parallel run computed it at once. Drawn here, in the process
    that starts the workers (or runs the tests itself), it is computed once per checkout
    and per Unicode version (each Python's venv has its own) and read everywhere else.
    Hypothesis warns of a strategy used while pytest starts (slow work in a plugin, for
    every run): here that work is the point, and done once.
    """
    if hasattr(config, "workerinput"):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisSideeffectWarning)
        _draw_a_text()


@settings(max_examples=1, database=None, phases=[Phase.generate], deadline=None)
@given(st.text(min_size=1))
def _draw_a_text(text: str) -> None:
    """One text drawn: what makes Hypothesis read its tables, or compute and store them."""


def pytest_report_header() -> str:
    """Say which build of the wire layer the run tests (scripts/test runs both)."""
    build = "compiled (mypyc)" if toolwire.wire.COMPILED else "pure Python"
    return f"toolwire wire layer: {build}, from {toolwire.wire.__file__}"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--subset``: run only the tests a later stage of scripts/test can change."""
    parser.addoption(
        "--subset",
        choices=SUBSETS,
        default=None,
        help="compiled: the tests that reach the mypyc-compiled modules' edges; versions: "
        "the tests of what differs between Python versions; ray: the files of the tests "
        "marked ray (tests/subsets.py says how each is chosen)",
    )
    parser.addoption(
        "--compiled-stage-follows",
        action="store_true",
        help="scripts/test's pure stage: the compiled stage that follows runs the properties "
        "of the compiled code's own tests (tests/wire/, tests/test_turn_classes.py) at full "
        "counts, so this run caps them at the fast profile's count",
    )
    parser.addoption(
        "--timings",
        metavar="PATH",
        default=None,
        help="write each test's wall and CPU seconds (its own process's and its waited-for "
        "subprocesses', setup + call + teardown), its xdist worker and when it ended to PATH "
        "as tab-separated lines, slowest CPU first: what scripts/test uses to size the slow "
        "tests and see each worker's end by measurement",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    """Under ``--timings``, measure a test's wall and CPU seconds around its whole run.

    CPU is what a loaded machine does not inflate: the process's own CPU time (every
    thread: llama.cpp's too) and that of the subprocesses it waited for. The figures ride
    on the teardown report's ``user_properties``, which xdist sends to the controller.
    """
    if item.config.getoption("timings") is None:
        yield
        return
    wall, cpu = time.perf_counter(), time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    item.user_properties.append(("timing_start", (wall, cpu, _child_cpu(children), time.time())))
    yield


def _child_cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, None, None]:
    """Close the ``--timings`` measurement on the teardown report.

    Besides the seconds, the xdist worker that ran the test and when it started (the
    clock every process shares): the file then says when each worker ended its last test,
    so a stage's idle core at its end is measured, not estimated.
    """
    outcome = yield
    report = outcome.get_result()
    start = dict(item.user_properties).get("timing_start")
    if report.when != "teardown" or start is None:
        return
    wall, cpu, children, started = start
    now = _child_cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
    # xdist's name for this process from its own config, not PYTEST_XDIST_WORKER: a
    # pytest run started by a test inherits that variable from the worker running it.
    worker = getattr(item.config, "workerinput", {}).get("workerid", "-")
    seconds = (time.perf_counter() - wall, time.process_time() - cpu, now - children)
    report.user_properties.append(("timing", (*seconds, worker, started)))


_TIMINGS: dict[str, tuple[float, float, float, str, float]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the ``--timings`` figures (in the controller, under xdist too)."""
    for name, value in report.user_properties:
        if name == "timing":
            _TIMINGS[report.nodeid] = value


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write the ``--timings`` file, slowest CPU (own + subprocesses) first.

    ``end`` is when the test ended, in seconds after the first test of the run started;
    ``worker`` is xdist's name for its process (``-`` without xdist).
    """
    path = session.config.getoption("timings")
    if path is None or hasattr(session.config, "workerinput"):
        return
    rows = sorted(_TIMINGS.items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
    first = min((started for *_, started in _TIMINGS.values()), default=0.0)
    with open(path, "w", encoding="utf-8") as file:
        file.write("cpu\twall\tcpu_own\tcpu_children\ttest\tworker\tend\n")
        for nodeid, (wall, cpu, children, worker, started) in rows:
            file.write(
                f"{cpu + children:.3f}\t{wall:.3f}\t{cpu:.3f}\t{children:.3f}\t{nodeid}"
                f"\t{worker}\t{started - first + wall:.3f}\n"
            )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``--subset``, skip the test files outside it (not even imported)."""
    subset = config.getoption("subset")
    if subset is None or not collection_path.name.startswith("test_"):
        return None
    if collection_path.suffix != ".py":
        return None
    return True if not in_subset(subset, collection_path) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Cap the properties whose ``@settings`` ask for more than ``FAST_EXAMPLES`` examples.

    Under ``fast``, every property. Under ``ci`` with ``--compiled-stage-follows``
    (scripts/test's pure stage), the properties of the files that test the compiled code
    itself (``is_a_test_of_compiled_code``): the compiled stage that follows runs them at
    full counts on the same source, where what mypyc changes is the data handling their
    examples vary; the pure build has no behaviour of its own to add examples for, and
    its 20 examples still run every property on it. Under ``ci`` with
    ``--subset=compiled``, the properties of the files whose subject is not compiled (``is_a_test_of_compiled_code``,
    tests/subsets.py) but those of ``FULL_WHEN_COMPILED``: the pure stage ran them at
    full counts on the same source, and the compiled paths their full counts take, the
    stage's other tests take too (traced: docs/contributing.md, "The compiled stage's
    other properties"). A test's own ``max_examples`` overrides any profile, so the cap
    is applied to each collected property's settings here (the settings Hypothesis reads
    when the test runs); ``ci`` leaves the others as written.
    """
    if settings.get_current_profile_name() == "fast":
        capped = items
    elif config.getoption("compiled_stage_follows"):
        capped = [item for item in items if is_a_test_of_compiled_code(item.path)]
    elif config.getoption("subset") == "compiled":
        capped = [
            item
            for item in items
            if not is_a_test_of_compiled_code(item.path)
            and getattr(item, "originalname", item.name) not in FULL_WHEN_COMPILED
        ]
    else:
        return
    _CAPPED.update(item.nodeid for item in capped)
    for item in capped:
        test = getattr(item, "obj", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is not None and own.max_examples > FAST_EXAMPLES:
            test._hypothesis_internal_use_settings = settings(own, max_examples=FAST_EXAMPLES)


@pytest.fixture(autouse=True)
def _audit_log_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI logs runs by default: never into the user's data directory from a test."""
    monkeypatch.setenv("TOOLWIRE_LOG", str(tmp_path_factory.mktemp("log") / "runs.db"))
