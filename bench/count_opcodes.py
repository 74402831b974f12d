"""Bytecodes executed by one format parse or stream: a quick, deterministic count.

``count_formats.py`` counts machine instructions under callgrind, which takes minutes a
sample on a loaded machine. This counts the Python bytecodes the same sample executes
(``sys.settrace`` with opcode events, only while the measured work runs), per function,
in seconds: a proxy that moves with the Python work a change adds or removes (not with
what a C function does inside one bytecode). Use it to see where a change costs, then
confirm with ``count_formats.py``::

    python bench/count_opcodes.py hermes 1 --size 10000 --src /tmp/old/src
    python bench/count_opcodes.py mistral parse --variant v3 --fixture v3_generated_multiple.txt
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path
from types import FrameType
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from count_formats import sample, sample_arguments  # noqa: E402 — bench/ on the path first


def count(src: str, family: str, mode: str, size: int, variant: str, fixture: str) -> Any:
    """Run one sample with the package at ``src``; return the opcode counts by function."""
    fmt, text = sample(src, family, size, variant, fixture)
    import bench_formats as bf

    counts: collections.Counter[tuple[str, str]] = collections.Counter()

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            counts[(Path(frame.f_code.co_filename).name, frame.f_code.co_name)] += 1
        return tracer

    sys.settrace(tracer)
    try:
        bf.run_mode(fmt, text, mode)
    finally:
        sys.settrace(None)
    return counts


def main(argv: list[str] | None = None) -> int:
    """Print the opcode count of one sample and mode, and its costliest functions."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(ap)
    ap.add_argument("--top", type=int, default=0, help="also list the N costliest functions")
    args = ap.parse_args(argv)
    counts = count(args.src, args.family, args.mode, args.size, args.variant, args.fixture)
    name = f"{args.family}/{args.variant}" if args.variant else args.family
    name += f" ({args.fixture})" if args.fixture else ""
    print(f"{name} {args.mode} {args.size} chars: {sum(counts.values()):,} opcodes")
    for (file, function), n in counts.most_common(args.top):
        print(f"  {n:>10,}  {file} {function}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
