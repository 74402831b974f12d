"""Throughput of the tool-call format parsers, against a ``str.find`` floor.

For every family that imports, a sample output is built by repeating one recorded
turn (a fixture from ``tests/formats/fixtures/<family>/`` that holds at least one call
and still parses as N times the calls when repeated) up to 10 KB and 1 MB. Each
sample is parsed whole (``fmt.parse``) and streamed at 8 and at 1 characters per
delta; the floor is plain ``str.find`` scanning for the family's markers, the least
any marker-based parser must do. Two extra rows per F1 family put one huge
argument value (1 MB) in a single call, which is where a quadratic buffer would show.

Linear cost shows as the same MB/s at 10 KB and at 1 MB (the ``1 MB / 10 KB`` column
is the ratio of the two ``parse`` throughputs; near 1.0 is linear). Times are CPU
time of the benchmark process, best of several runs, so other load on the machine
does not skew the ratio.

A second table gives each variant's cost of a stream's start (``fmt.stream()`` and
``close()`` of an empty output) and of a format's construction (``get``), µs of CPU:
the property tests open thousands of streams of short outputs, where the start, not
the throughput, is what they pay.

Run: ``.venv/bin/python bench/bench_formats.py [--quick]`` (``--quick``: 10 KB and
100 KB, for a smoke run). Prints a Markdown table.

``--against SRC/toolwire`` compares this code with another copy of the package (for
example ``git worktree add /tmp/old <commit>`` and ``--against /tmp/old/src/toolwire``)
in one process: the other copy is loaded under the name ``toolwire_old`` (its imports
are relative), and each sample and mode runs the two alternately; the table gives
min CPU time of ``--rounds`` alternations, as MB/s before / now (now ÷ before).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolwire.errors import ToolwireError
from toolwire.formats import Format, get
from toolwire.formats.registry import FAMILIES

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "formats" / "fixtures"
KB = 1024


def load_fixture(path: Path) -> str:
    """A fixture's model output (the part after the ``---`` header line)."""
    raw = path.read_text(encoding="utf-8")
    head, sep, body = raw.partition("\n---\n")
    return body if sep and all(line.startswith("#") for line in head.splitlines()) else raw


def repeatable_unit(
    family: str, variants: tuple[str, ...], fixture: str = ""
) -> tuple[Format, str, str] | None:
    """Find (format, unit text, fixture name) whose repetition parses as repeated calls.

    ``fixture``: only that fixture (by file name); by default the first that fits.
    """
    for path in sorted((FIXTURES / family).glob("*")):
        if not path.is_file() or path.suffix not in (".txt", "") or fixture not in ("", path.name):
            continue
        unit = load_fixture(path)
        for variant in variants:
            fmt = get(family, variant)
            try:
                once = fmt.parse(unit)
                thrice = fmt.parse(unit * 3)
            except ToolwireError:
                continue
            if once.tool_calls and len(thrice.tool_calls) == 3 * len(once.tool_calls):
                return fmt, unit, path.name
    return None


def scale(unit: str, size: int) -> str:
    """Repeat ``unit`` to about ``size`` characters (at least once)."""
    return unit * max(1, size // len(unit))


def huge_value_samples(size: int) -> list[tuple[str, Format, str]]:
    """One call whose single string argument is ``size`` characters long."""
    value = ('lorem ipsum <tag> {brace} "quote" \\ ' * (size // 36 + 1))[:size]
    as_json = json.dumps({"text": value})
    py_value = repr(value)
    return [
        (
            "hermes/qwen3 (1 huge arg)",
            get("hermes", "qwen3"),
            f'<tool_call>\n{{"name": "save", "arguments": {as_json}}}\n</tool_call>',
        ),
        (
            "qwen3_coder (1 huge arg)",
            get("qwen3_coder", "qwen3-coder"),
            f"<tool_call>\n<function=save>\n<parameter=text>\n{value}\n</parameter>\n"
            "</function>\n</tool_call>",
        ),
        (
            "llama3-json (1 huge arg)",
            get("llama", "llama3-json"),
            f'{{"name": "save", "parameters": {as_json}}}',
        ),
        ("pythonic (1 huge arg)", get("llama", "pythonic"), f"[save(text={py_value})]"),
    ]


def floor(fmt: Format, text: str) -> int:
    """Find every marker occurrence with ``str.find`` (the scanning floor)."""
    found = 0
    for marker in fmt.markers:
        pos = text.find(marker)
        while pos >= 0:
            found += 1
            pos = text.find(marker, pos + len(marker))
    return found


def stream_by(fmt: Format, text: str, step: int) -> None:
    """Stream ``text`` in ``step``-character deltas."""
    stream = fmt.stream()
    feed = stream.feed
    for start in range(0, len(text), step):
        feed(text[start : start + step])
    stream.close()


def start_us(fmt: Format, starts: int = 2000) -> float:
    """CPU µs per stream start (``fmt.stream()``, then ``close()`` with no input)."""
    open_stream = fmt.stream
    begin = time.process_time()
    for _ in range(starts):
        open_stream().close()
    return (time.process_time() - begin) / starts * 1e6


def format_us(get_format: Callable[..., Format], fmt: Format, builds: int = 500) -> float:
    """CPU µs per ``get(family, variant)``: a format's construction."""
    family, variant = fmt.family, fmt.variant
    begin = time.process_time()
    for _ in range(builds):
        get_format(family, variant)
    return (time.process_time() - begin) / builds * 1e6


def variant_formats() -> list[tuple[str, Format]]:
    """Every variant of every family that imports, as ``family/variant``."""
    out: list[tuple[str, Format]] = []
    for info in FAMILIES:
        for variant in info.variants:
            try:
                out.append((f"{info.name}/{variant}", get(info.name, variant)))
            except ToolwireError:  # a family module that is not available
                break
    return out


def cell(rounds: int, now: Callable[[], float], before: Callable[[], float] | None) -> str:
    """Best of ``rounds`` of ``now`` (and of ``before``, alternating): one table cell."""
    best_before = best_now = float("inf")
    for _ in range(rounds):
        if before is not None:
            best_before = min(best_before, before())
        best_now = min(best_now, now())
    if before is None:
        return f"{best_now:.1f}"
    return f"{best_before:.1f} / {best_now:.1f} ({best_now / best_before:.2f})"


def print_starts(rounds: int, get_other: Callable[..., Format] | None = None) -> None:
    """The start table, each cell alternating with ``get_other``'s when it is given."""
    then = "" if get_other is None else ": before / now"
    print(f"\n| format | µs per stream start{then} | µs per format (`get`){then} |")
    print("|---|---:|---:|")
    for label, fmt in variant_formats():
        start_before: Callable[[], float] | None = None
        build_before: Callable[[], float] | None = None
        if get_other is not None:
            other, get_old = get_other(fmt.family, fmt.variant), get_other
            start_before = lambda: start_us(other)  # noqa: E731
            build_before = lambda: format_us(get_old, fmt)  # noqa: E731
        starts = cell(rounds, lambda: start_us(fmt), start_before)
        builds = cell(rounds, lambda: format_us(get, fmt), build_before)
        print(f"| {label} | {starts} | {builds} |")
        sys.stdout.flush()


def mb_per_s(run: Callable[[], object], size: int, repeats: int) -> float:
    """Best-of-``repeats`` throughput of ``run`` over ``size`` characters.

    Timed in CPU time of this process (``time.process_time``): on a shared machine,
    wall time would count whatever else runs, which made the 10 KB / 1 MB ratio noisy.
    """
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return size / max(best, 1e-9) / 1e6


def measure(fmt: Format, text: str) -> dict[str, float]:
    """All four throughputs for one sample."""
    n = len(text.encode("utf-8"))
    repeats = 5 if n <= 20 * KB else (3 if n <= 200 * KB else 1)
    return {
        "parse": mb_per_s(lambda: fmt.parse(text), n, repeats),
        "stream8": mb_per_s(lambda: stream_by(fmt, text, 8), n, repeats),
        "stream1": mb_per_s(lambda: stream_by(fmt, text, 1), n, repeats),
        "floor": mb_per_s(lambda: floor(fmt, text), n, repeats),
    }


def row(label: str, size_label: str, m: dict[str, float], ratio: str) -> str:
    """One Markdown table row."""
    cells = [label, size_label] + [f"{m[k]:.1f}" for k in ("parse", "stream8", "stream1", "floor")]
    return "| " + " | ".join([*cells, ratio]) + " |"


def load_other(package: Path) -> Callable[..., Format]:
    """``formats.get`` of another copy of the package, imported as ``toolwire_old``."""
    root = Path(tempfile.mkdtemp(prefix="toolwire-old-"))
    atexit.register(shutil.rmtree, root, True)
    shutil.copytree(package, root / "toolwire_old")
    sys.path.insert(0, str(root))
    get_other: Callable[..., Format] = importlib.import_module("toolwire_old.formats").get
    return get_other


def run_mode(fmt: Format, text: str, mode: str) -> None:
    """One parse (``mode == "parse"``) or one stream in ``int(mode)``-character deltas."""
    if mode == "parse":
        fmt.parse(text)
    else:
        stream_by(fmt, text, int(mode))


def compare(other: Path, size: int, rounds: int) -> None:
    """Print before / now MB/s for every sample, the two runs alternating."""
    get_other = load_other(other)
    print(f"| format (sample), {size // KB} KB | parse | stream 8 ch | stream 1 ch |")
    print("|---|---:|---:|---:|")
    for label, fmt, text in samples_at(size):
        before_fmt = get_other(fmt.family, fmt.variant)
        n = len(text.encode("utf-8"))
        cells = []
        for mode in ("parse", "8", "1"):
            best_before = best_now = float("inf")
            for _ in range(rounds):
                start = time.process_time()
                run_mode(before_fmt, text, mode)
                best_before = min(best_before, time.process_time() - start)
                start = time.process_time()
                run_mode(fmt, text, mode)
                best_now = min(best_now, time.process_time() - start)
            before, now = n / best_before / 1e6, n / best_now / 1e6
            cells.append(f"{before:.2f} / {now:.2f} ({now / before:.2f})")
        print(f"| {label} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


def samples_at(size: int) -> list[tuple[str, Format, str]]:
    """Every family's repeatable sample and the one-huge-argument rows, at ``size``."""
    out: list[tuple[str, Format, str]] = []
    for info in FAMILIES:
        try:
            found = repeatable_unit(info.name, info.variants)
        except ToolwireError:
            continue
        if found is not None:
            fmt, unit, _ = found
            out.append((f"{info.name}/{fmt.variant}", fmt, scale(unit, size)))
    return out + huge_value_samples(size)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 KB and 100 KB only")
    parser.add_argument(
        "--against", type=Path, help="another copy of the toolwire package to compare with"
    )
    parser.add_argument("--rounds", type=int, default=5, help="alternations (--against)")
    parser.add_argument(
        "--starts-only", action="store_true", help="only the stream-start table (with --against)"
    )
    args = parser.parse_args(argv)
    if args.against is not None:
        if not args.starts_only:
            compare(args.against, 100 * KB, args.rounds)
        print_starts(args.rounds, load_other(args.against))
        return 0
    if args.starts_only:
        print_starts(args.rounds)
        return 0
    small, large = 10 * KB, (100 * KB if args.quick else 1024 * KB)
    large_label = "100 KB" if args.quick else "1 MB"
    print(f"Python {sys.version.split()[0]}; throughput in MB/s (UTF-8 bytes of output)\n")
    print(
        "| format (sample) | size | parse | stream 8 ch | stream 1 ch | str.find floor"
        f" | {large_label} / 10 KB |"
    )
    print("|---|---|---|---|---|---|---|")
    samples: list[tuple[str, Format, Callable[[int], str]]] = []
    for info in FAMILIES:
        try:
            found = repeatable_unit(info.name, info.variants)
        except ToolwireError as error:  # a family module that is not available
            print(f"| {info.name} | skipped: {error.message} | | | | | |")
            continue
        if found is None:
            print(f"| {info.name} | skipped: no repeatable fixture | | | | | |")
            continue
        fmt, unit, name = found
        samples.append((f"{info.name}/{fmt.variant} ({name})", fmt, lambda n, u=unit: scale(u, n)))
    for label, fmt, text in huge_value_samples(small):
        samples.append(
            (
                label,
                fmt,
                lambda n, lb=label: next(t for lab, _, t in huge_value_samples(n) if lab == lb),
            )
        )
    for label, fmt, make_text in samples:
        small_m = measure(fmt, make_text(small))
        large_m = measure(fmt, make_text(large))
        print(row(label, "10 KB", small_m, ""))
        print(row(label, large_label, large_m, f"{large_m['parse'] / small_m['parse']:.2f}"))
        sys.stdout.flush()
    print_starts(args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
