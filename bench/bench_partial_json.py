"""Benchmark: reading partial JSON after every delta, toolwire against jiter and partial-json-parser.

Run it with::

    .venv/bin/python bench/bench_partial_json.py            # about two minutes on 2 cores
    .venv/bin/python bench/bench_partial_json.py --quick
    .venv/bin/python bench/bench_partial_json.py --json bench/results/partial_json.json
    PYTHONPATH=build/compiled .venv/bin/python bench/bench_partial_json.py   # compiled build

A streaming UI shows a tool call's arguments while they arrive: after each delta it
wants the current best-effort value. Documents of about 1, 10 and 100 KB (realistic
tool arguments, see ``workloads.py``) arrive in 4-character deltas, and the value is
read after every delta:

* toolwire ``PartialJSON``: ``feed(delta)`` then ``.value``, incremental;
* jiter: ``from_json(buffer, partial_mode="trailing-strings")`` on the growing buffer;
* partial-json-parser: ``loads(buffer)`` on the growing buffer;
* the unit: one ``json.loads`` of the final text.

Re-parsing the buffer makes the peers quadratic, so at the larger sizes they are timed
on every k-th delta only and the total is extrapolated as k times the sampled sum (the
table says which k); toolwire always runs in full. Reported per size: total time for
the whole document and its ratio to one ``json.loads``, and the growth exponent (the
log-log slope of total time from 1 KB to 100 KB; 1 is linear, 2 quadratic). Targets
(issue 2): toolwire's exponent <= 1.3 and <= 30x one ``json.loads`` at every size.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from workloads import (
    PARTIAL_SIZES,
    Measurement,
    build_name,
    deltas,
    format_ratio,
    growth_exponent,
    json_document,
    measure,
)

TARGET_RATIO = 30.0
TARGET_EXPONENT = 1.3
COLUMNS = ("toolwire", "jiter", "partial-json-parser")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="fewer repeats and fewer sampled peer parses"
    )
    ap.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    ap.add_argument(
        "--sizes", type=int, nargs="+", default=list(PARTIAL_SIZES), help="document sizes in bytes"
    )
    ap.add_argument("--width", type=int, default=4, help="characters per delta")
    ap.add_argument("--repeats", type=int, help="samples per contestant (default 5, quick 3)")
    ap.add_argument(
        "--jiter-samples",
        type=int,
        help="most jiter parses timed per document (default 5000, quick 1000)",
    )
    ap.add_argument(
        "--pjp-samples",
        type=int,
        help="most partial-json-parser parses timed per document (default 300, quick 60)",
    )
    ap.add_argument(
        "--profile",
        type=int,
        metavar="SIZE",
        help="cProfile toolwire on one document size and exit",
    )
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 5)
    args.jiter_samples = args.jiter_samples or (1000 if args.quick else 5000)
    args.pjp_samples = args.pjp_samples or (60 if args.quick else 300)
    args.min_sample_ns = 10_000_000 if args.quick else 30_000_000
    return args


def stride_for(n_deltas: int, max_samples: int) -> int:
    """Time every k-th delta so at most ``max_samples`` parses are timed."""
    return max(1, math.ceil(n_deltas / max_samples))


def run_size(size: int, args: argparse.Namespace) -> dict[str, Any]:
    """All contestants on one document, interleaved; checks that they agree at the end."""
    text = json_document(size)
    pieces = deltas(text, args.width)
    strides = {"toolwire": 1, "jiter": 1, "partial-json-parser": 1}
    contestants = {
        "json.loads": peers.json_loads_unit(text),
        "toolwire": peers.toolwire_partial(pieces),
    }
    if peers.available("jiter"):
        strides["jiter"] = stride_for(len(pieces), args.jiter_samples)
        contestants["jiter"] = peers.jiter_partial(pieces, strides["jiter"])
    if peers.available("partial_json_parser"):
        strides["partial-json-parser"] = stride_for(len(pieces), args.pjp_samples)
        contestants["partial-json-parser"] = peers.partial_json_parser_partial(
            pieces, strides["partial-json-parser"]
        )
    results = measure(
        contestants, repeats=args.repeats, min_sample_ns=args.min_sample_ns, cap_ns=10**12
    )
    expected = json.loads(text)
    for m in results.values():
        if m.output != expected:
            m.note = "WRONG FINAL VALUE"
        m.output = None
    return {
        "size": size,
        "bytes": len(text.encode()),
        "deltas": len(pieces),
        "strides": strides,
        "results": results,
    }


def report(rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    """Print the Markdown tables; return the summary."""
    print("# toolwire partial-JSON benchmark\n")
    print(
        f"Python {platform.python_version()}, toolwire wire layer {build_name()}; {args.width}-character deltas, value read after every delta; "
        f"repeats={args.repeats}. Cells: total time for the document (ratio to one json.loads of the final text).\n"
    )
    cols = [c for c in COLUMNS if c in rows[0]["results"]]
    print("| document | deltas | json.loads | " + " | ".join(cols) + " |")
    print("|---|---:|---:|" + "---:|" * len(cols))
    for row in rows:
        res: dict[str, Measurement] = row["results"]
        unit = res["json.loads"].ns
        cells = []
        for c in cols:
            cell = res[c].cell(unit)
            if row["strides"][c] > 1:
                cell += f" [1 in {row['strides'][c]} deltas]"
            cells.append(cell)
        print(
            f"| {row['bytes'] / 1000:.1f} KB | {row['deltas']:,} | {res['json.loads'].cell()} | "
            + " | ".join(cells)
            + " |"
        )
    summary: dict[str, Any] = {}
    sizes = [row["bytes"] for row in rows]
    print("\n| contestant | growth exponent | max ratio to json.loads |")
    print("|---|---:|---:|")
    for c in cols:
        times = [row["results"][c].ns for row in rows]
        ratios = [row["results"][c].ns / row["results"]["json.loads"].ns for row in rows]
        exponent = growth_exponent(sizes, times) if len(rows) > 1 else float("nan")
        summary[c] = {"exponent": exponent, "ratios": ratios, "max_ratio": max(ratios)}
        print(f"| {c} | {exponent:.2f} | {format_ratio(max(ratios))} |")
    tw = summary["toolwire"]
    ok = tw["exponent"] <= TARGET_EXPONENT and tw["max_ratio"] <= TARGET_RATIO
    print(
        f"\nTarget (toolwire exponent <= {TARGET_EXPONENT:g}, <= {TARGET_RATIO:g}x json.loads at every size): "
        f"{'MET' if ok else 'MISSED'} (exponent {tw['exponent']:.2f}, max {format_ratio(tw['max_ratio'])})"
    )
    print(
        "\nPeers marked [1 in k deltas] were timed on every k-th buffer only; their total is k times "
        "the sampled sum (an estimate of the full run). The exponent is taken between the smallest and "
        "largest document."
    )
    notes = [
        f"- {row['bytes']} B / {c}: {m.note}"
        for row in rows
        for c, m in row["results"].items()
        if m.note and m.note != "single run"
    ]
    if notes:
        print("\nNotes:\n" + "\n".join(notes))
    return summary


def to_json(
    rows: list[dict[str, Any]], summary: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """Everything measured, as plain data."""
    out_rows = []
    for row in rows:
        unit = row["results"]["json.loads"].ns
        out_rows.append(
            {
                "size": row["size"],
                "bytes": row["bytes"],
                "deltas": row["deltas"],
                "strides": row["strides"],
                "results": {
                    k: {"ns": m.ns, "ratio": m.ns / unit, "samples": m.samples, "note": m.note}
                    for k, m in row["results"].items()
                },
            }
        )
    return {
        "benchmark": "partial_json",
        "python": platform.python_version(),
        "toolwire_build": build_name(),
        "settings": {"width": args.width, "repeats": args.repeats, "quick": args.quick},
        "documents": out_rows,
        "summary": summary,
    }


def profile(size: int, width: int) -> None:
    """cProfile toolwire's ``PartialJSON`` on one document."""
    import cProfile
    import io
    import pstats

    pieces = deltas(json_document(size), width)
    run = peers.toolwire_partial(pieces)
    prof = cProfile.Profile()
    prof.enable()
    run(0)
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
    print(
        f"## PartialJSON on {size} B in {width}-character deltas (by own time)\n```\n{out.getvalue().strip()}\n```"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print Markdown; optionally write JSON."""
    args = parse_args(argv)
    if args.profile:
        profile(args.profile, args.width)
        return 0
    started = time.monotonic()
    gc.freeze()  # import-time objects: later collections need not scan them
    rows = []
    for size in args.sizes:
        rows.append(run_size(size, args))
        print(f"[{time.monotonic() - started:6.1f} s] {size} B done", file=sys.stderr, flush=True)
    summary = report(rows, args)
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(to_json(rows, summary, args), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
