"""Which arcs of the compiled modules' source each test takes: a pytest plugin.

What the compiled build can change for a test is the compiled code it runs, so a
property is worth its examples in the compiled stage while they reach compiled code the
stage's other tests do not (docs/contributing.md, "The compiled stage's other
properties"). This plugin traces, in the pure build, the arcs (line-to-line steps, a
function's entry as its negated first line) of hatch_build.py's compiled modules that
each test's call takes, and writes them as JSON, one file per process; ``python -m
tests.compiled_reach WANTED.json... -- HAVE.json...`` prints what the first files reach
that the others do not.

Usage (from the repository root, pure build):
    PYTHONPATH=src:. pytest -p tests.compiled_reach --reach=build/reach-a \\
        --subset=compiled -m "not slow and not local" [-n 2]
    PYTHONPATH=src python -m tests.compiled_reach build/reach-a.* -- build/reach-b.*
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from tests.subsets import compiled_modules, module_path

Arc = tuple[str, int, int]
"""A step from one line of a file to the next (from a function's entry: its negated first line)."""

_REACHED: dict[str, list[Arc]] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--reach=PATH``: where to write what each test reached (PATH.<worker>)."""
    parser.addoption("--reach", metavar="PATH", default=None, help="write compiled reach")


def _compiled_files() -> frozenset[str]:
    return frozenset(str(path) for m in compiled_modules() if (path := module_path(m)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Trace the compiled modules' arcs while the test's call runs."""
    if item.config.getoption("reach") is None:
        yield
        return
    files = _compiled_files()
    reached: set[Arc] = set()

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        # Called for every new frame; only the compiled modules' frames are traced on,
        # each by its own tracer, which keeps the line it was last on.
        code = frame.f_code
        if code.co_filename not in files:
            return None
        name, last = Path(code.co_filename).name, -code.co_firstlineno

        def in_compiled(frame: FrameType, event: str, arg: Any) -> Any:
            nonlocal last
            if event == "line":
                reached.add((name, last, frame.f_lineno))
                last = frame.f_lineno
            return in_compiled

        return in_compiled

    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(None)
        _REACHED[item.nodeid] = sorted(reached)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Write this process's tests' reach (xdist: one file per worker)."""
    path = session.config.getoption("reach")
    if path is not None and _REACHED:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(f"{path}.{worker}").write_text(json.dumps(_REACHED), encoding="utf-8")


def _union(paths: list[str]) -> set[Arc]:
    found: set[Arc] = set()
    for path in paths:
        for arcs in json.loads(Path(path).read_text(encoding="utf-8")).values():
            found.update((name, start, end) for name, start, end in arcs)
    return found


def main(argv: list[str]) -> None:
    """Print how much the files before ``--`` reach, and what of it those after do not."""
    split = argv.index("--")
    wanted, have = _union(argv[:split]), _union(argv[split + 1 :])
    missing = sorted(wanted - have)
    print(f"arcs reached: {len(wanted)}; not reached by the others: {len(missing)}")
    for name, start, end in missing:
        print(f"  {name} {'entry of ' if start < 0 else ''}{abs(start)} -> {end}")


if __name__ == "__main__":
    main(sys.argv[1:])
