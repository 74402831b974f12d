"""How many examples a Hypothesis property takes to reach the code it reaches at all.

What the compiled build can change is how a compiled module's code behaves on a path
(a typed local that rejects a value, a native class at its edge), not which data reach
the path: the pure build runs every property at its full count for the data-dependent
bugs. So the compiled stage needs a property's examples only until they have taken every
arc (line-to-line step) of the compiled modules that its full count takes. This script
measures that: it runs a property (generation phase only, no database, a given seed) with
a line tracer on the compiled modules' files, and prints the number of arcs reached and
the example after which no new arc was reached.

Usage (from the repository root, pure build):
    PYTHONPATH=src:. python scripts/property_arcs.py \\
        tests/wire/test_properties.py::test_any_chunking_same_turn_for_every_provider \\
        [--param cls=AnthropicStream] [--examples 1000] [--seeds 1 2 3]
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import Phase, settings
from tests.subsets import SOURCE, compiled_modules

Arc = tuple[str, int, int]


def compiled_files() -> frozenset[str]:
    """The source files of hatch_build.py's compiled modules."""
    return frozenset(str(SOURCE / (name.replace(".", "/") + ".py")) for name in compiled_modules())


class ArcTracer:
    """Records every (file, line, next line) step taken in the given files."""

    def __init__(self, files: frozenset[str]) -> None:
        self.files = files
        self.arcs: set[Arc] = set()

    def __call__(self, frame: FrameType, event: str, arg: Any) -> Any:
        path = frame.f_code.co_filename
        if path not in self.files:
            return None
        last = [-frame.f_code.co_firstlineno]
        arcs = self.arcs

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "line":
                arcs.add((path, last[0], frame.f_lineno))
                last[0] = frame.f_lineno
            elif event == "return":
                arcs.add((path, last[0], -frame.f_code.co_firstlineno))
            return local

        return local


CHECKPOINTS = (50, 100, 200, 300, 500, 750)


def measure(
    test: Any, params: dict[str, Any], examples: int, seed: int
) -> tuple[int, int, dict[int, int]]:
    """(arcs reached, the example that reached the last new one, arcs reached by each
    checkpoint) for one seed."""
    tracer = ArcTracer(compiled_files())
    last_new = [0, 0]  # example number, arcs after it
    count = [0]
    reached: dict[int, int] = {}
    inner = test.hypothesis.inner_test

    def counted(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        before = len(tracer.arcs)
        sys.settrace(tracer)
        try:
            return inner(*args, **kwargs)
        finally:
            sys.settrace(None)
            if len(tracer.arcs) > before:
                last_new[:] = [count[0], len(tracer.arcs)]
            if count[0] in CHECKPOINTS:
                reached[count[0]] = len(tracer.arcs)

    test.hypothesis.inner_test = counted
    test._hypothesis_internal_use_settings = settings(
        test._hypothesis_internal_use_settings,
        max_examples=examples,
        database=None,
        phases=[Phase.generate],
    )
    test._hypothesis_internal_use_seed = seed
    try:
        test(**params)
    finally:
        test.hypothesis.inner_test = inner
    return len(tracer.arcs), last_new[0], reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("test", help="path/to/test_file.py::test_name")
    parser.add_argument("--param", action="append", default=[], help="NAME=ATTRIBUTE of the module")
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    options = parser.parse_args()
    path, name = options.test.split("::")
    module = importlib.import_module(".".join(Path(path).with_suffix("").parts))
    test = getattr(module, name)
    params = {}
    for item in options.param:
        key, attribute = item.split("=")
        params[key] = getattr(module, attribute)
    for seed in options.seeds:
        arcs, last, reached = measure(test, params, options.examples, seed)
        curve = ", ".join(f"{n}: {k}" for n, k in reached.items())
        print(
            f"{options.test} {params or ''} seed {seed}: {arcs} arcs, the last new one at "
            f"example {last}; arcs by example {curve}",
            flush=True,
        )


if __name__ == "__main__":
    main()
