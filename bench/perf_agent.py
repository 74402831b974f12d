"""Where the default agent's CPU time goes that instruction counts miss, against the floor's.

Four measurements of the same workload, ``bench_executor.py --only agent``'s (one
turn of a scripted model calls N distinct no-op tools, a second turn answers), for
each contestant (``--who floor,default``; also ``context_off``, ``sdk``,
``pydantic_ai``, ``langgraph``, and ``one_tool``: the default agent's N calls to one
tool), N (``--sizes 10,100``) and *between* (``--between none,sdk``), one process
each, ``--runs K`` measured runs after a warm-up, each measured run preceded by:

* ``none``: nothing (the contestant alone: warm caches, a small heap);
* ``sdk``: one OpenAI Agents SDK run of the same N, as ``bench_executor`` interleaves
  them (cold caches, the SDK's garbage, a bigger heap for the collector);
* ``all``: one run of each other contestant of the timed table that is installed;
* ``flush``: a copy of 64 MiB (cold caches, nothing else: no other heap, no garbage).

``python bench/perf_agent.py`` (Python 3.12+, ``perf``; ``perf_event_paranoid`` 2 is
enough): samples of ``perf record -e cpu-clock:u --call-graph dwarf`` with ``-X perf``
(the interpreter's perf map names each Python function's frame; dwarf, because these
CPython builds keep no frame pointers), ``--freq`` Hz (default 4000), taken only around
the measured runs (perf's control FIFO) and kept only inside them (``CLOCK_MONOTONIC``
windows, perf's ``-k`` clock). A sample is charged to a *C area* (the collector if
``gc_collect_main`` is on its stack, else by its leaf function: refcounts, malloc/free,
dealloc, dict, the eval loop, asyncio's C module, pydantic-core, ...), to its *owner*
(the innermost Python function, grouped by module), to that function and to its leaf.
The tables give CPU µs per run and per extra call, ``(t(100) - t(10)) / 90``.
``--keep DIR`` keeps the ``perf.data`` files; ``--keep DIR --reuse`` classifies them
again without recording.

``--footprint``: what one warm run touches, which a cold cache charges for once each
(``sys.monitoring``, 3.12+): its distinct Python functions, their bytecode, the other
callables it calls, by module.

``--clock``: the median CPU time of a run with no profiler attached (``--gc-off``: with
the collector disabled in the whole process).

``--callgrind``: per run, by the same C areas, instructions and *simulated* cache
misses (``valgrind --tool=callgrind --cache-sim=yes``: L1 misses, and last-level ones
of a 512 KB L2 as ``--LL``), counted only inside the measured runs (the collector's
share by its own functions').
This is the other half where the machine has no PMU (a VM's ``perf stat -e cycles``
says *not supported*): an area whose share of the samples is larger than its share of
the instructions, and large in misses, is where the clock goes that counts miss.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import gc
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

Make = Callable[[], Awaitable[Any]]

# --- the workload (runs inside the recorded process) -----------------------------------


FLUSH_BYTES = 64 << 20  # more than this machine's last-level cache


def _flusher(n: int) -> Make:
    """Not a contestant: a pass over 64 MiB, which evicts the caches and leaves the
    heap alone (``--between flush``: cold caches without another framework's garbage)."""
    source, target = bytearray(FLUSH_BYTES), bytearray(FLUSH_BYTES)

    async def flush() -> None:
        target[:] = source

    return flush


def _one_tool(n: int) -> Make:
    """The default agent's run of N calls to *one* tool (the workload calls N distinct
    tools): what of the cost is per tool, not per call."""
    import bench_executor as bench
    from toolwire.run import Agent
    from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
    from toolwire.tools import tool

    tools = [tool(concurrency_safe=True, side_effects=False)(bench.named(bench.noop_body, 0))]
    calls = [("noop_0", {"i": k}, f"c{k}") for k in range(n)]
    script = [tool_call_turn(*calls), text_turn("done")]
    agent = Agent(ScriptedModel([]), tools)

    def make() -> Awaitable[Any]:
        agent.model = ScriptedModel(script)
        return agent.run("go")

    return make


def _factory(who: str) -> Callable[[int], Make]:
    import bench_executor as bench

    if who == "flush":
        return _flusher
    if who == "one_tool":
        return _one_tool
    if who == "floor":
        return lambda n: bench.floor_run(n, bench.noop_body)
    if who == "default":
        return lambda n: bench.toolwire_agent(None)(n, bench.noop_body)
    if who == "context_off":
        return lambda n: bench.toolwire_agent(bench.CONTEXT_OFF)(n, bench.noop_body)
    if who == "sdk":
        return lambda n: bench.openai_agents_agent(n, bench.noop_body)
    if who == "pydantic_ai":
        return lambda n: bench.pydantic_ai_agent(n, bench.noop_body)
    if who == "langgraph":
        return lambda n: bench.langgraph_agent(n, bench.noop_body)
    raise SystemExit(f"unknown contestant {who!r}")


OTHERS = ("floor", "default", "context_off", "pydantic_ai", "sdk", "langgraph")
MODULES = {"sdk": "agents", "pydantic_ai": "pydantic_ai", "langgraph": "langgraph"}


def _between(who: str, between: str) -> list[str]:
    """The contestants run before each measured run."""
    if between == "none":
        return []
    if between in ("sdk", "flush"):
        return [between]
    import bench_executor as bench

    return [
        other
        for other in OTHERS
        if other != who and (other not in MODULES or bench.available(MODULES[other]))
    ]


def record(who: str, n: int, between: str, runs: int, out: str) -> None:
    """The recorded process: warm up, then ``runs`` measured runs, windows to ``out``."""
    make = _factory(who)(n)
    others = [_factory(other)(n) for other in _between(who, between)]
    windows: list[tuple[int, int]] = []
    cpu_ns: list[int] = []
    control = _Control()

    async def main() -> None:
        for f in [make, *others, make]:  # warm: first-run caches
            await f()
        for _ in range(runs):
            for other in others:
                await other()
            control.send("enable")
            start, cpu = time.monotonic_ns(), time.thread_time_ns()
            await make()
            cpu_ns.append(time.thread_time_ns() - cpu)
            windows.append((start, time.monotonic_ns()))
            control.send("disable")

    asyncio.run(main())
    meta = {"pid": os.getpid(), "windows": windows, "cpu_ns": cpu_ns}
    Path(out).write_text(json.dumps(meta))


class _Control:
    """perf's control FIFOs (``PERF_CTL``/``PERF_ACK``): sampling only around the measured
    runs keeps the data small; each command waits for perf's acknowledgement."""

    def __init__(self) -> None:
        ctl, ack = os.environ.get("PERF_CTL"), os.environ.get("PERF_ACK")
        self._ctl = open(ctl, "w", buffering=1) if ctl else None  # noqa: SIM115
        self._ack = open(ack) if ack else None  # noqa: SIM115

    def send(self, command: str) -> None:
        if self._ctl and self._ack:
            self._ctl.write(command + "\n")
            self._ack.readline()


# --- classifying a sample ---------------------------------------------------------------

GC = ("gc_collect_main", "_PyGC_Collect", "gc_collect_with_callback")
AREAS: list[tuple[str, re.Pattern[str]]] = [
    (
        "refcounts (Py_INCREF/DECREF: first touch of an object)",
        re.compile(r"^(Py_X?INCREF|Py_X?DECREF|_Py_IsImmortal|_Py_X?DECREF\w*|Py_TYPE|Py_SIZE)$"),
    ),
    (
        "malloc/free",
        re.compile(
            r"^(_?PyObject_(Malloc|Calloc|Free|Realloc)|pymalloc_\w+|_PyMem_\w+|PyMem_\w+|"
            r"_int_(malloc|free|realloc)|malloc\w*|free|cfree|realloc|calloc|"
            r"_PyObject_GC_(New|NewVar|Link|Del)|gc_alloc|_PyType_AllocNoTrack|"
            r"PyType_GenericAlloc|_PyObject_GC_TRACK|_Py_NewReference|arena_\w+)$"
        ),
    ),
    (
        "dealloc",
        re.compile(r"(dealloc|_Py_Dealloc|clear_slots|_PyFrame_ClearExceptCode|frame_clear)"),
    ),
    ("dict", re.compile(r"(dict|unicodekeys_lookup|lookdict|insertdict|_Py_dict_lookup)")),
    ("eval loop", re.compile(r"^(_PyEval_EvalFrameDefault|_PyEval_\w+|_PyFrame_\w+)$")),
    (
        "calls, attributes, types",
        re.compile(
            r"(vectorcall|_PyObject_Call|PyObject_Call|slot_tp|_PyType_Lookup|"
            r"PyObject_GenericGetAttr|_PyObject_GenericGetAttrWithDict|PyObject_GetAttr|"
            r"PyObject_SetAttr|_PyObject_GenericSetAttrWithDict|type_call|tp_new|"
            r"object_new|method_vectorcall|PyObject_IsInstance|recursive_isinstance|"
            r"PyType_IsSubtype|_Py_Check|super_)"
        ),
    ),
    ("strings", re.compile(r"(unicode|Unicode|_PyUnicode|str_|format)")),
    ("tuples, lists", re.compile(r"(tuple|Tuple|list_|List)")),
    ("generators, coroutines", re.compile(r"(gen_|_PyGen|coro|Coro|async_gen|_PyAsyncGen)")),
    ("contextvars", re.compile(r"(context|Context|hamt)")),
    ("thread-local state (__tls_get_addr)", re.compile(r"^__tls_get_addr$")),
]
DSO_AREAS = (
    ("_asyncio", "asyncio C module"),
    ("_pydantic_core", "pydantic-core"),
    ("_json", "json C"),
    ("libc", "libc other"),
    ("perf-", "Python trampolines"),
)


def area(frames: list[tuple[str, str]]) -> str:
    """The C area of a sample: the collector anywhere on its stack, else by its leaf."""
    if any(sym in GC for sym, _ in frames):
        return "GC (collection)"
    sym, dso = frames[0]
    for name, pattern in AREAS:
        if pattern.search(sym):
            return name
    if len(frames) > 1 and frames[0][1] == frames[1][1] and _INLINE_ONLY.match(sym):
        return area(frames[1:])  # a small inlined function counts as its caller's
    for key, name in DSO_AREAS:
        if key in dso:
            return name
    return "libpython other" if "libpython" in dso else f"other ({Path(dso).name})"


_INLINE_ONLY = re.compile(r"^(_Py\w*|Py\w*)$")
PY_FRAME = re.compile(r"^py::(?P<func>[^:]*):(?P<file>.*)$")


def owner(frames: list[tuple[str, str]]) -> tuple[str, str]:
    """The innermost Python function on the stack: (module group, ``file:function``)."""
    for sym, _ in frames:
        match = PY_FRAME.match(sym)
        if match:
            path = match["file"]
            return _group(path), f"{_short(path)}:{match['func']}"
    return "(no Python frame)", "(no Python frame)"


def _short(path: str) -> str:
    for key in ("/toolwire/", "/site-packages/", "/lib/python3"):
        if key in path:
            return path.split(key, 1)[1]
    return Path(path).name


def _group(path: str) -> str:
    if "/toolwire/" in path:
        rest = path.split("/toolwire/", 1)[1]
        return "toolwire/" + (rest.split("/", 1)[0] + "/" if "/" in rest else rest)
    if "/site-packages/" in path:
        return path.split("/site-packages/", 1)[1].split("/", 1)[0]
    if "/asyncio/" in path:
        return "asyncio"
    if "bench" in path:
        return "bench (workload)"
    return "stdlib " + Path(path).stem


# --- reading perf script --------------------------------------------------------------


@dataclass
class Profile:
    """The samples of one contestant, N and *between*, inside the measured windows."""

    runs: int
    period_ns: float = 0.0
    samples: int = 0
    by_area: Counter[str] = field(default_factory=Counter)
    by_owner: Counter[str] = field(default_factory=Counter)
    by_function: Counter[str] = field(default_factory=Counter)
    by_leaf: Counter[str] = field(default_factory=Counter)
    by_pair: Counter[tuple[str, str]] = field(default_factory=Counter)

    def us(self, count: float) -> float:
        """CPU µs per run for ``count`` samples."""
        return count * self.period_ns / self.runs / 1e3


def _samples(text: Iterable[str]) -> Iterator[tuple[int, float, int, list[tuple[str, str]]]]:
    """``(tid, time ns, period, frames)`` per sample of ``perf script`` output."""
    head = re.compile(r"^\s*\S+\s+(?:\d+/)?(\d+)\s+(\d+)\.(\d+):\s+(\d+)\s")
    frame = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)$")
    current: tuple[int, float, int] | None = None
    frames: list[tuple[str, str]] = []
    for line in text:
        match = head.match(line)
        if match:
            if current and frames:
                yield (*current, frames)
            nanos = int(match[2]) * 10**9 + int(match[3].ljust(9, "0"))
            current, frames = (int(match[1]), nanos, int(match[4])), []
            continue
        match = frame.match(line)
        if match and current:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", match[1])
            frames.append((sym, match[2]))
    if current and frames:
        yield (*current, frames)


def _leaf(frames: list[tuple[str, str]]) -> str:
    """The leaf function, with the function it is inlined into (``Py_INCREF`` alone says
    little) and, for an unknown one, its object file."""
    sym, dso = frames[0]
    if sym == "[unknown]":
        return f"[unknown] in {Path(dso).name}"
    if dso != "inlined":
        return sym
    outer = next((s for s, d in frames if d != "inlined"), "?")
    return f"{sym} (in {outer})"


def _uninline(frames: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """An inlined frame takes the object file of the frame it was inlined into."""
    out: list[tuple[str, str]] = []
    pending: list[str] = []
    for sym, dso in frames:
        if dso == "inlined":
            pending.append(sym)
            continue
        out += [(s, dso) for s in pending]
        pending = []
        out.append((sym, dso))
    return out + [(s, "") for s in pending]


def profile(data: Path, meta: dict[str, Any], runs: int) -> Profile:
    """Classify the samples of ``data`` that fall in ``meta``'s windows."""
    windows = sorted(meta["windows"])
    starts = [w[0] for w in windows]
    out = Profile(runs=runs)
    periods: list[int] = []
    cmd = ["perf", "script", "-i", str(data), "-F", "comm,tid,time,period,ip,sym,dso"]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as p:
        assert p.stdout is not None
        for tid, nanos, period, frames in _samples(p.stdout):
            if tid != meta["pid"] or not _inside(starts, windows, nanos):
                continue
            leaf = _leaf(frames)
            frames = _uninline(frames)
            where, (group, func) = area(frames), owner(frames)
            out.samples += 1
            periods.append(period)
            out.by_area[where] += 1
            out.by_owner[group] += 1
            out.by_function[func] += 1
            out.by_leaf[leaf] += 1
            out.by_pair[(group, where)] += 1
    out.period_ns = sum(periods) / len(periods) if periods else 0.0
    return out


def _inside(starts: list[int], windows: list[tuple[int, int]], nanos: float) -> bool:
    i = bisect.bisect_right(starts, nanos) - 1
    return i >= 0 and windows[i][0] <= nanos <= windows[i][1]


def perf_run(
    who: str, n: int, between: str, args: argparse.Namespace, folder: Path
) -> tuple[Path, dict[str, Any]]:
    """Record one process of ``who`` at size ``n``; the data file and its windows."""
    data, meta = folder / f"{who}-{n}-{between}.data", folder / f"{who}-{n}-{between}.json"
    inner = [sys.executable, "-X", "perf", __file__, "--record", who, str(n), between]
    inner += ["--runs", str(args.runs), "--out", str(meta)]
    if args.src:
        inner += ["--src", args.src]
    ctl, ack = folder / "ctl.fifo", folder / "ack.fifo"
    for fifo in (ctl, ack):
        if not fifo.exists():
            os.mkfifo(fifo)
    cmd = ["perf", "record", "-k", "CLOCK_MONOTONIC", "-e", "cpu-clock:u", "-F", str(args.freq)]
    cmd += ["--call-graph", "dwarf,16384", "-q", "-D", "-1", f"--control=fifo:{ctl},{ack}"]
    cmd += ["-o", str(data), "--", *inner]
    env = {**os.environ, "PYTHONHASHSEED": "0", "PERF_CTL": str(ctl), "PERF_ACK": str(ack)}
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return data, json.loads(meta.read_text())


# --- tables -----------------------------------------------------------------------------


def _table(title: str, rows: dict[str, Profile], key: str, top: int) -> None:
    """Per-run µs by ``key`` for each profile, and per extra call where N=10 and 100 are."""
    labels = list(rows)
    counters = {label: getattr(rows[label], key) for label in labels}
    total: Counter[Any] = Counter()
    for label in labels:
        total.update({k: rows[label].us(v) for k, v in counters[label].items()})
    print(f"\n#### {title}\n")
    extra = _extra_pairs(labels)
    head = [*labels, *(f"{a} → {b}: per extra call" for a, b in extra)]
    print("| " + key.removeprefix("by_") + " | " + " | ".join(head) + " |")
    print("|---|" + "---:|" * len(head))
    for name, _ in total.most_common(top):
        cells = [f"{rows[label].us(counters[label][name]):,.1f}" for label in labels]
        cells += [
            f"{(rows[b].us(counters[b][name]) - rows[a].us(counters[a][name])) / 90:,.2f}"
            for a, b in extra
        ]
        shown = " / ".join(name) if isinstance(name, tuple) else name
        print(f"| {shown} | " + " | ".join(cells) + " |")
    sums = [f"{rows[label].us(rows[label].samples):,.1f}" for label in labels]
    sums += [
        f"{(rows[b].us(rows[b].samples) - rows[a].us(rows[a].samples)) / 90:,.2f}" for a, b in extra
    ]
    print("| **all (µs per run)** | " + " | ".join(sums) + " |")


def _extra_pairs(labels: list[str]) -> list[tuple[str, str]]:
    """(N=10 label, N=100 label) pairs with the same contestant and *between*."""
    pairs = []
    for label in labels:
        if " N=100 " in label + " ":
            low = label.replace("N=100", "N=10")
            if low in labels:
                pairs.append((low, label))
    return pairs


# --- callgrind's instructions and simulated cache misses by the same areas ----------

EVENTS = ("Ir", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
# The simulated last level: this Zen 3's 512 KB L2 a core (valgrind's default takes the
# L3 it finds, here 256 MB direct-mapped, which never misses).
LAST_LEVEL = "--LL=524288,8,64"


def callgrind_areas(who: str, n: int, between: str, runs: int, src: str) -> dict[str, Counter[str]]:
    """Per run, by C area: instructions and simulated cache misses (callgrind's
    ``--cache-sim``), collected only inside the measured runs. The collector's share is
    its own functions' (:data:`GC_FUNCTIONS`): callgrind's self costs have no stacks,
    and a nested ``--toggle-collect=gc_collect_main`` would flip counting *on* for a
    collection outside the measured runs."""
    if not shutil.which("valgrind"):
        raise SystemExit("--callgrind needs valgrind")
    rows = _callgrind(who, n, between, runs, src)
    out: dict[str, Counter[str]] = {}
    for event in EVENTS:
        areas: Counter[str] = Counter()
        for func, dso, cost in rows:
            where = "GC (collection)" if GC_FUNCTIONS.match(func) else area([(func, dso)])
            areas[where] += cost[event]
        out[event] = Counter({k: v / runs for k, v in areas.items()})
    return out


# The collector's own functions in CPython 3.12's gc module, and the tp_traverse
# functions it calls (nothing else on a run's path traverses).
GC_FUNCTIONS = re.compile(
    r"^(gc_\w+|_PyGC_\w+|_Py_RunGC|visit_\w+|subtract_refs|update_refs|move_\w+|"
    r"deduce_unreachable|untrack_\w+|handle_\w+|finalize_garbage|delete_garbage|"
    r"validate_list|invoke_gc_callback|\w+_traverse)$"
)


def _callgrind(
    who: str, n: int, between: str, runs: int, src: str
) -> list[tuple[str, str, dict[str, int]]]:
    """``(function, object file, {event: self cost})`` of one callgrind process."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        inner = [sys.executable, __file__, "--callgrind-inner", who, str(n), between]
        inner += ["--runs", str(runs)] + (["--src", src] if src else [])
        cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", LAST_LEVEL]
        cmd += ["--toggle-collect=starmap_next", f"--callgrind-out-file={out}", *inner]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, check=True, env=env, capture_output=True)
        text = subprocess.run(
            ["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return _annotated(text)


def _annotated(text: str) -> list[tuple[str, str, dict[str, int]]]:
    """The per-function rows of ``callgrind_annotate``'s output."""
    events: list[str] = []
    rows = []
    for raw in text.splitlines():
        if raw.startswith("Events shown:"):
            events = raw.split(":", 1)[1].split()
            continue
        parts = re.sub(r"\(\s*[\d.]+%\)", "", raw).split()
        if not events or len(parts) <= len(events) or not parts[0][0].isdigit():
            continue
        if "PROGRAM TOTALS" in raw:
            continue
        try:
            values = [int(v.replace(",", "")) if v != "." else 0 for v in parts[: len(events)]]
        except ValueError:
            continue
        rest = " ".join(parts[len(events) :])
        where, _, dso = rest.partition(" [")
        source, _, func = where.rpartition(":")
        func = re.sub(r"'\d+$", "", func)
        if source.endswith("Include/object.h"):  # callgrind sees no inlining: the
            func = "Py_INCREF"  # refcount functions are charged to this header's lines
        rows.append((func, dso.rstrip("]") or "libpython", dict(zip(events, values, strict=True))))
    return rows


def callgrind_inner(who: str, n: int, between: str, runs: int) -> None:
    """``runs`` measured runs, each inside ``itertools.starmap``'s C function (callgrind
    collects there), each after the *between* contestants (outside it)."""
    make = _factory(who)(n)
    others = [_factory(other)(n) for other in _between(who, between)]
    loop = asyncio.new_event_loop()
    for f in [make, *others, make]:
        loop.run_until_complete(f())
    for _ in range(runs):
        for other in others:
            loop.run_until_complete(other())
        list(itertools.starmap(lambda: loop.run_until_complete(make()), [()]))
    loop.close()


def _clock_table(args: argparse.Namespace) -> int:
    """Each configuration's median CPU time per run, no profiler attached (one process
    each, as recorded, with ``gc.disable()`` too where ``--gc-off``)."""
    import statistics

    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for between, who, n in itertools.product(
            args.between.split(","), args.who.split(","), [int(s) for s in args.sizes.split(",")]
        ):
            meta = Path(tmp) / "meta.json"
            cmd = [sys.executable, __file__, "--record", who, str(n), between]
            cmd += ["--runs", str(args.runs), "--out", str(meta)]
            cmd += (["--src", args.src] if args.src else []) + (["--gc-off"] if args.gc_off else [])
            subprocess.run(cmd, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
            cpu = json.loads(meta.read_text())["cpu_ns"]
            rows[f"{who} N={n} after {between}"] = statistics.median(cpu) / 1e3
    print("\n| run | median CPU µs per run |\n|---|---:|")
    for label, us in rows.items():
        print(f"| {label} | {us:,.1f} |")
    for low, high in _extra_pairs(list(rows)):
        print(f"| {high}: per extra call | {(rows[high] - rows[low]) / 90:,.2f} |")
    return 0


def footprint(who: str, n: int) -> tuple[set[Any], set[int]]:
    """The distinct Python code objects one warm run starts, and the ids of the other
    callables it calls (C functions, types, builtins), by ``sys.monitoring`` (3.12+)."""
    mon = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
    tool = mon.PROFILER_ID
    make = _factory(who)(n)
    codes: set[Any] = set()
    others: set[int] = set()

    def started(code: Any, offset: int) -> None:
        codes.add(code)

    def called(code: Any, offset: int, func: object, arg0: object) -> None:
        if not hasattr(func, "__code__"):
            others.add(id(func))

    async def main() -> None:
        for _ in range(3):  # warm
            await make()
        mon.use_tool_id(tool, "perf_agent")
        mon.register_callback(tool, mon.events.PY_START, started)
        mon.register_callback(tool, mon.events.CALL, called)
        mon.set_events(tool, mon.events.PY_START | mon.events.CALL)
        try:
            await make()
        finally:
            mon.set_events(tool, 0)
            mon.free_tool_id(tool)

    asyncio.run(main())
    return codes, others


def _footprint_table(args: argparse.Namespace) -> int:
    """What one run touches, which a cold cache charges for once each: distinct Python
    functions (and their bytecode), other callables, by module."""
    print("\n| run | Python functions | their bytecode | other callables | by module |")
    print("|---|---:|---:|---:|---|")
    for who, n in itertools.product(args.who.split(","), [int(s) for s in args.sizes.split(",")]):
        codes, others = footprint(who, n)
        modules = Counter(_group(code.co_filename) for code in codes)
        top = ", ".join(f"{m} {k}" for m, k in modules.most_common(8))
        size = sum(len(code.co_code) for code in codes)
        print(f"| {who} N={n} | {len(codes)} | {size / 1024:.1f} KB | {len(others)} | {top} |")
        generated = sorted(
            _generated_name(code) for code in codes if code.co_filename == "<string>"
        )
        if generated:
            print(f"|  generated (dataclass) methods: {', '.join(generated)} |||||")
    return 0


def _generated_name(code: Any) -> str:
    """A ``<string>`` code object's function's qualified name (``dataclasses`` names the
    function ``Class.__init__``; the code object keeps ``__create_fn__``'s)."""
    functions = [f for f in gc.get_referrers(code) if isinstance(f, types.FunctionType)]
    return str(functions[0].__qualname__) if functions else str(code.co_qualname)


def _callgrind_tables(args: argparse.Namespace) -> int:
    """One table per event: per run by C area, for each contestant, N and *between*."""
    results: dict[str, dict[str, Counter[str]]] = {}
    for between, who, n in itertools.product(
        args.between.split(","), args.who.split(","), [int(s) for s in args.sizes.split(",")]
    ):
        label = f"{who} N={n} after {between}"
        results[label] = callgrind_areas(who, n, between, args.runs, args.src)
        print(f"counted {label}", file=sys.stderr, flush=True)
    labels = list(results)
    for event in EVENTS:
        total: Counter[str] = Counter()
        for label in labels:
            total.update(results[label][event])
        print(f"\n#### callgrind {event} per run by C area\n")
        print("| area | " + " | ".join(labels) + " |")
        print("|---|" + "---:|" * len(labels))
        for name, _ in total.most_common(args.top):
            cells = [f"{results[label][event][name]:,.0f}" for label in labels]
            print(f"| {name} | " + " | ".join(cells) + " |")
        sums = [f"{sum(results[label][event].values()):,.0f}" for label in labels]
        print("| **all** | " + " | ".join(sums) + " |")
    return 0


# --- main -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--sizes", default="10,100")
    ap.add_argument("--who", default="floor,default")
    ap.add_argument("--between", default="none,sdk")
    ap.add_argument("--freq", type=int, default=4000)
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--src", default="", help="the package to measure (default: on the path)")
    ap.add_argument("--keep", default="", help="keep the perf data in this folder")
    ap.add_argument(
        "--callgrind", action="store_true", help="instructions and cache misses by area"
    )
    ap.add_argument("--reuse", action="store_true", help="with --keep: classify its data again")
    ap.add_argument("--footprint", action="store_true", help="what one run touches (3.12+)")
    ap.add_argument("--clock", action="store_true", help="CPU time per run, no profiler")
    ap.add_argument("--gc-off", action="store_true", help="with --clock: gc.disable()")
    ap.add_argument("--record", nargs=3, metavar=("WHO", "N", "BETWEEN"), help=argparse.SUPPRESS)
    ap.add_argument("--out", default="", help=argparse.SUPPRESS)
    ap.add_argument("--callgrind-inner", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.src:
        sys.path.insert(0, args.src)
    if args.record:
        who, n, between = args.record
        if args.gc_off:
            gc.disable()
        record(who, int(n), between, args.runs, args.out)
        return 0
    if args.callgrind_inner:
        who, n, between = args.callgrind_inner
        callgrind_inner(who, int(n), between, args.runs)
        return 0
    if args.callgrind:
        return _callgrind_tables(args)
    if args.clock:
        return _clock_table(args)
    if args.footprint:
        return _footprint_table(args)
    if sys.version_info < (3, 12):
        raise SystemExit("perf_agent.py needs Python 3.12+ (-X perf)")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="perf_agent."))
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, Profile] = {}
    for between, who, n in itertools.product(
        args.between.split(","), args.who.split(","), [int(s) for s in args.sizes.split(",")]
    ):
        if args.reuse:  # the kept data of an earlier --keep run: classify again
            stem = folder / f"{who}-{n}-{between}"
            data, meta = (
                stem.with_suffix(".data"),
                json.loads(stem.with_suffix(".json").read_text()),
            )
        else:
            data, meta = perf_run(who, n, between, args, folder)
        rows[f"{who} N={n} after {between}"] = profile(data, meta, args.runs)
        print(f"recorded {who} N={n} after {between}", file=sys.stderr, flush=True)
    _table("CPU µs per run by C area (the collector inclusive)", rows, "by_area", args.top)
    _table("CPU µs per run by owner (innermost Python frame's module)", rows, "by_owner", args.top)
    _table("CPU µs per run by Python function (innermost)", rows, "by_function", args.top * 2)
    _table("CPU µs per run by leaf C function", rows, "by_leaf", args.top * 2)
    _table("CPU µs per run by owner and C area", rows, "by_pair", args.top * 2)
    if not args.keep:
        shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
