"""Instruction counts of stream assembly on the short turns, under ``valgrind --tool=callgrind``.

Timed runs on a shared machine move by ±20% on a turn that takes 30 µs; instruction
counts do not move. For each short workload (1 or 4 calls of ~100 B or ~2 KB, the common
case) and each provider, this runs the floor and toolwire ``--repeats`` times in a
process under callgrind, and once more with no repeat; the difference divided by the
repeats is the count of one turn (start-up and imports cancel out)::

    python bench/count_assembly.py                     # the build on the path
    PYTHONPATH=build/compiled python bench/count_assembly.py
    python bench/count_assembly.py --no-deltas         # decoders with deltas=False
    python bench/count_assembly.py --bodies            # the non-streaming body decoders
    python bench/count_assembly.py --turns             # issue 30's per-turn table

``--turns`` counts the turns of ``bench_assembly.py --only turns`` (each provider's own
chunking, ``deltas=False``): the instruction twin of that wall-clock table.

It needs ``valgrind`` (``apt-get install valgrind``) and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from callgrind import instructions

WORKLOADS = [(1, 100), (1, 2000), (4, 100), (4, 2000)]
PROVIDERS = ("openai", "anthropic")
BODIES = {"openai": "OpenAI Chat", "anthropic": "Anthropic", "responses": "OpenAI Responses"}


def _body_run(provider: str, who: str, calls: int, size: int) -> Callable[[], object]:
    """One body decode (``decode_*_response``) or its floor, for ``--bodies``."""
    from toolwire import wire
    from workloads import body_floor, build_tool_workload, response_bodies

    name = BODIES[provider]
    body = response_bodies(build_tool_workload(calls, size))[name]
    if who == "floor":
        return lambda: body_floor(name, body)
    decode = {
        "openai": wire.decode_openai_chat_response,
        "anthropic": wire.decode_anthropic_response,
        "responses": wire.decode_responses_response,
    }[provider]
    return lambda: decode(body)


def _inner(provider: str, who: str, calls: int, size: int, repeats: int) -> None:
    """Run one contestant ``repeats`` times (the process callgrind counts)."""
    if who.endswith("_turn"):
        from bench_assembly import provider_turn, turn_floor, turn_toolwire

        items = provider_turn(provider, calls, size)
        make = turn_floor if who == "floor_turn" else turn_toolwire
        turn_run = make(provider, items)
        turn_run()  # warm, as below
        for _ in range(repeats):
            turn_run()
        return
    if who.endswith("_body"):
        body_run = _body_run(provider, who.removesuffix("_body"), calls, size)
        body_run()  # warm, as below
        for _ in range(repeats):
            body_run()
        return
    import peers
    from workloads import build_tool_workload

    w = build_tool_workload(calls, size)
    factory = getattr(peers, f"{who}_{provider}")
    run = factory(w)
    run(0)  # warm: first-call caches, lazily built workload data
    for _ in range(repeats):
        run(0)


def _count(provider: str, who: str, calls: int, size: int, repeats: int) -> int:
    return instructions([__file__, "--inner", provider, who, str(calls), str(size), str(repeats)])


def per_turn(provider: str, who: str, calls: int, size: int, repeats: int) -> float:
    """Instructions of one turn: (count with ``repeats`` runs - count with none) / repeats."""
    return (
        _count(provider, who, calls, size, repeats) - _count(provider, who, calls, size, 0)
    ) / repeats


def main(argv: list[str] | None = None) -> int:
    """Print the table of instruction counts, floor and toolwire, per provider and workload."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=20, help="turns per counted process")
    ap.add_argument("--providers", nargs="+", choices=PROVIDERS, default=list(PROVIDERS))
    ap.add_argument(
        "--no-deltas",
        action="store_true",
        help="toolwire's decoders with deltas=False (no ToolCallDelta per fragment)",
    )
    ap.add_argument(
        "--bodies",
        action="store_true",
        help="the non-streaming body decoders (decode_*_response), one row per provider",
    )
    ap.add_argument(
        "--turns",
        action="store_true",
        help="the per-turn table (bench_assembly.py --only turns): providers' chunking, deltas=False",
    )
    ap.add_argument("--inner", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.inner:
        provider, who, calls, size, repeats = args.inner
        _inner(provider, who, int(calls), int(size), int(repeats))
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 1
    import toolwire.wire

    build = "compiled" if toolwire.wire.COMPILED else "pure"
    who = "toolwire_nodeltas" if args.no_deltas else "toolwire"
    mode = ", deltas=False" if args.no_deltas else ""
    floor_who, providers = "floor", list(args.providers)
    if args.bodies:
        who, floor_who, providers, mode = "toolwire_body", "floor_body", list(BODIES), ", bodies"
    elif args.turns:
        who, floor_who, mode = "toolwire_turn", "floor_turn", ", deltas=False, providers' chunking"
    print(f"toolwire {build} build{mode}, Python {sys.version.split()[0]}, instructions per turn\n")
    print("| provider | workload | floor | toolwire | ratio |")
    print("|---|---|---:|---:|---:|")
    for provider in providers:
        for calls, size in WORKLOADS:
            floor = per_turn(provider, floor_who, calls, size, args.repeats)
            tw = per_turn(provider, who, calls, size, args.repeats)
            label = f"{calls} × {size // 1000}KB" if size >= 1000 else f"{calls} × {size}B"
            print(
                f"| {provider} | {label} | {floor / 1e6:.3f} M | {tw / 1e6:.3f} M "
                f"| {tw / floor:.2f}x |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
