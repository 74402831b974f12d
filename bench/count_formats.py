"""Instruction counts of one format parse or stream, under ``valgrind --tool=callgrind``.

Timings of the formats benchmark move by ±5-10% on a loaded machine; instruction counts
do not. This runs one sample of ``bench_formats.py`` (a family's repeated recorded
output at ``--size`` characters) parsed whole or streamed at 8 or 1 characters per
delta, in a process under callgrind, and the same process without the measured work;
the difference is the count of the work (start-up, imports and building the sample
cancel out). ``--src`` picks the copy of the package to count, so an old tree counts
side by side with this one::

    python bench/count_formats.py hermes 1 --size 10000
    python bench/count_formats.py deepseek parse --src /tmp/old/src
    python bench/count_formats.py kimi 1 --variant k3   # not the family's first variant
    python bench/count_formats.py mistral 1 --variant v3 --fixture v3_generated_multiple.txt

It needs ``valgrind`` (``apt-get install valgrind``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from callgrind import instructions  # noqa: E402 — bench/ on the path first


def sample(src: str, family: str, size: int, variant: str, fixture: str) -> tuple[Any, str]:
    """The format (the package at ``src``) and ``size`` characters of the family's sample."""
    sys.path[:0] = [str(BENCH), src]
    import bench_formats as bf
    from toolwire import formats

    variants = next(info.variants for info in bf.FAMILIES if info.name == family)
    found = bf.repeatable_unit(family, (variant,) if variant else variants, fixture)
    if found is None:
        raise SystemExit(f"no repeatable sample for {family}")
    fmt, unit, _ = found
    return formats.get(family, fmt.variant), bf.scale(unit, size)  # ``src``'s copy


def sample_arguments(ap: argparse.ArgumentParser) -> None:
    """The arguments that pick one sample and mode (shared with ``count_opcodes.py``)."""
    ap.add_argument("family")
    ap.add_argument("mode", choices=("parse", "8", "1"))
    ap.add_argument("--size", type=int, default=10_000, help="sample size in characters")
    ap.add_argument("--src", default=str(BENCH.parent / "src"), help="the package's src/")
    ap.add_argument("--variant", default="", help="the variant (default: the first that fits)")
    ap.add_argument("--fixture", default="", help="the fixture (default: the first that fits)")


def _inner(
    src: str, family: str, mode: str, size: int, work: bool, variant: str, fixture: str
) -> None:
    """Build the sample with the package at ``src`` and, with ``work``, run it."""
    fmt, text = sample(src, family, size, variant, fixture)
    if work:
        import bench_formats as bf

        bf.run_mode(fmt, text, mode)


def _count(args: argparse.Namespace, work: bool) -> int:
    sample = [args.family, args.mode, "--size", str(args.size), "--src", args.src]
    sample += ["--variant", args.variant] if args.variant else []
    sample += ["--fixture", args.fixture] if args.fixture else []
    return instructions([__file__, *sample, "--inner", "1" if work else "0"])


def main(argv: list[str] | None = None) -> int:
    """Print the instruction count of one sample and mode."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(ap)
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner is not None:
        work = args.inner == "1"
        _inner(args.src, args.family, args.mode, args.size, work, args.variant, args.fixture)
        return 0
    warm = [sys.executable, __file__, args.family, args.mode, "--src", args.src]
    warm += ["--variant", args.variant] if args.variant else []
    warm += ["--fixture", args.fixture] if args.fixture else []
    subprocess.run([*warm, "--size", "100", "--inner", "0"], check=True)  # .pyc
    count = _count(args, True) - _count(args, False)
    name = f"{args.family}/{args.variant}" if args.variant else args.family
    name += f" ({args.fixture})" if args.fixture else ""
    print(f"{name} {args.mode} {args.size} chars: {count / 1e6:.1f} M instructions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
