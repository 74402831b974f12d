"""Executor benchmarks: per-call overhead against peers, parallel sleeps, early execution.

Run: ``.venv/bin/python bench/bench_executor.py`` (prints Markdown tables; add
``--quick`` for a smoke run, ``--only agent|overhead|sleep|early`` for one part,
``--between shuffle|flush|alone|fixed`` for what precedes each run of the agent table,
``--calibrate`` for older trees of toolwire beside it).
Offline throughout: every model is scripted.

0. **The default agent against a floor.** One turn of a scripted model calls N
   distinct no-op tools (N registered, each called once), a second turn answers. The
   floor is hand-written: ``asyncio.gather`` of the calls, each call's arguments
   validated by a pydantic ``TypeAdapter``, messages as dicts. Rows: the default
   ``Agent`` (no options), the agent with every context policy off
   (:data:`CONTEXT_OFF`), pydantic-ai, the OpenAI Agents SDK and a LangGraph
   model-node + ``ToolNode`` graph, all in one process, timed interleaved (one run of
   each contestant per repetition, so load on the machine hits them alike), medians
   of CPU time (see :func:`interleaved`). ``--between`` says what precedes each timed
   run (:data:`BETWEEN`): the default ``shuffle`` puts the contestants in a new
   random order each repetition, so that none always follows the same neighbour (in a
   fixed order the first toolwire row paid, after the floor, the cold caches the
   second then found warm); ``flush`` precedes every run with the same 64 MiB copy
   (every contestant cold, none warmed by another); ``alone`` times each
   contestant's runs back to back (warm); ``fixed`` is the one order of the table.
   Columns: the run's time at N, the cost per extra call ``(t(N) - t(10)) / (N - 10)``
   and the ratio to the floor at N=100. Then 16 calls to 100 ms tools: wall time.

   ``--calibrate [REV[=µs] ...]`` adds older trees of toolwire as rows after this
   one's: each revision's ``src/toolwire`` exported from git into a temporary
   directory, the package renamed ``toolwire_<commit>`` (absolute imports rewritten;
   pure Python), timed in the same process and order as the rest
   (:func:`export_tree`). A revision given with its cost per extra call measured on
   another machine (µs) scales this toolwire's rows to that machine's units, as does
   the pydantic-ai row against :data:`ISSUE_PEER`; the flag alone adds
   :data:`ISSUE_TREES`, the two trees issue 30 timed (its target: ≤ 20 µs per extra
   call on its machine).

1. **Overhead per call.** One turn with N calls (1, 10, 100) to an async no-op tool.
   Two measurements, because the peers expose different layers:

   * *execution step* — the tool-execution layer alone, given the assembled calls:
     toolwire's ``Executor.execute`` (validate, plan, run, render, in order) and
     LangGraph's ``ToolNode.ainvoke`` on an ``AIMessage`` carrying the calls;
   * *whole loop* — a full agent run whose first model turn makes N calls and whose
     second answers, minus the same run with no calls, divided by N: toolwire's
     ``Agent`` + ``ScriptedModel``, pydantic-ai's ``Agent`` + ``FunctionModel``, the
     OpenAI Agents SDK's ``Runner`` + a scripted ``Model``. (This isolates what a call
     costs inside each loop; the scripted models themselves cost next to nothing.)

2. **Parallel sleeps.** N concurrency-safe tools each sleeping 50 ms (async
   ``asyncio.sleep`` and sync ``time.sleep`` in worker threads): wall time minus the
   longest sleep is the executor's overhead (target: ≤ 1 ms).

3. **Early execution.** A model stream paced at 50 chunks/s (about 50 tokens/s, one
   token per chunk) with four calls to 200 ms concurrency-safe tools. The round's wall
   time with early execution against stream-then-execute. The best any executor can do
   is ``max(end of stream, last call's arguments closed + 200 ms)``; the overlappable
   time is stream-then-execute minus that floor, and the target is ≥ 80 % of it saved.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import io
import itertools
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path, PurePosixPath
from typing import Any

from toolwire import ContextPolicy
from toolwire.run import Agent, ExecutionOptions, Executor, RoundEnd, ToolResultReady
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.tools import tool
from toolwire.turn import ToolRequest
from toolwire.wire.events import ToolCallReady

warnings.simplefilter("ignore")

SIZES = (1, 10, 100)


def available(module: str) -> bool:
    """Whether a peer is installed."""
    return importlib.util.find_spec(module) is not None


def timed(make: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """Median seconds of ``repeat`` runs of ``make()`` (all in one event loop)."""

    async def main() -> list[float]:
        await make()  # warm up
        samples = []
        for _ in range(repeat):
            start = time.perf_counter()
            await make()
            samples.append(time.perf_counter() - start)
        return samples

    return statistics.median(asyncio.run(main()))


# -- 0. the default agent against a hand-written floor ------------------------------------

AGENT_SIZES = (1, 10, 100)
AGENT_REPEATS = {1: 200, 10: 100, 100: 40}
CONTEXT_OFF = ContextPolicy(max_result_tokens=None, route_threshold=10**9, prompt_cache=False)
"""Every context policy off: no cut, no routing, no cache key (counting stays)."""
SLOW = 0.1  # the 16-parallel row's tool time
Body = Callable[[int], Awaitable[str]]
Factory = Callable[[int, Body], Callable[[], Awaitable[Any]]]


async def noop_body(i: int) -> str:
    return "ok"


async def slow_body(i: int) -> str:
    await asyncio.sleep(SLOW)
    return "ok"


def named(body: Body, k: int) -> Callable[..., Awaitable[str]]:
    """A distinct coroutine function ``noop_<k>(i: int) -> str`` running ``body``."""

    async def fn(i: int) -> str:
        return await body(i)

    fn.__name__ = fn.__qualname__ = f"noop_{k}"
    fn.__doc__ = f"Does nothing (tool {k})."
    return fn


def floor_run(n: int, body: Body) -> Callable[[], Awaitable[Any]]:
    """The hand-written floor: gather the calls, validate with pydantic, dict messages."""
    from pydantic import TypeAdapter
    from typing_extensions import TypedDict

    class Args(TypedDict):
        i: int

    adapter = TypeAdapter(Args)
    fns = {f"noop_{k}": named(body, k) for k in range(n)}
    calls = [
        {
            "id": f"c{k}",
            "type": "function",
            "function": {"name": f"noop_{k}", "arguments": f'{{"i": {k}}}'},
        }
        for k in range(n)
    ]

    async def run() -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        if calls:
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            args = [adapter.validate_json(c["function"]["arguments"]) for c in calls]
            outs = await asyncio.gather(
                *[fns[c["function"]["name"]](**a) for c, a in zip(calls, args, strict=True)]
            )
            messages += [
                {"role": "tool", "tool_call_id": c["id"], "content": out}
                for c, out in zip(calls, outs, strict=True)
            ]
        messages.append({"role": "assistant", "content": "done"})
        return messages

    return run


def toolwire_agent(policy: ContextPolicy | None, package: str = "toolwire") -> Factory:
    """The ``Agent`` of ``package`` with ``policy`` as its context policy (``None``: its
    default). ``package`` is this toolwire or an older tree that :func:`export_tree`
    renamed; a tree older than ``ContextPolicy`` takes no ``context`` (pass ``None``)."""
    run, testing, tools = (
        importlib.import_module(f"{package}.{name}") for name in ("run", "testing", "tools")
    )
    options = {} if policy is None else {"context": policy}
    scripted = testing.ScriptedModel

    def factory(n: int, body: Body) -> Callable[[], Awaitable[Any]]:
        made = [
            tools.tool(named(body, k), concurrency_safe=True, side_effects=False) for k in range(n)
        ]
        calls = [(f"noop_{k}", {"i": k}, f"c{k}") for k in range(n)]
        script = [*([testing.tool_call_turn(*calls)] if n else []), testing.text_turn("done")]
        agent = run.Agent(scripted([]), made, **options)

        def make() -> Awaitable[Any]:
            agent.model = scripted(script)
            return agent.run("go")

        return make

    return factory


def pydantic_ai_agent(n: int, body: Body) -> Callable[[], Awaitable[Any]]:
    from pydantic_ai import Agent as PAgent
    from pydantic_ai import Tool as PTool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        answered = any(
            isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", [])
        )
        if n and not answered:
            return ModelResponse(
                parts=[ToolCallPart(f"noop_{k}", {"i": k}, f"c{k}") for k in range(n)]
            )
        return ModelResponse(parts=[TextPart("done")])

    tools = [PTool(named(body, k), takes_ctx=False) for k in range(n)]
    agent = PAgent(FunctionModel(respond), tools=tools)
    return lambda: agent.run("go")


def openai_agents_scripted(n: int, name: Callable[[int], str]) -> Any:
    """An OpenAI Agents SDK ``Model`` whose first turn calls ``name(k)`` for k < n."""
    from agents import set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)

    class Scripted(Model):
        async def get_response(
            self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
        ) -> ModelResponse:
            answered = isinstance(input, list) and any(
                isinstance(item, dict) and item.get("type") == "function_call_output"
                for item in input
            )
            output: list[Any]
            if n and not answered:
                output = [
                    ResponseFunctionToolCall(
                        arguments=f'{{"i": {k}}}',
                        call_id=f"c{k}",
                        name=name(k),
                        type="function_call",
                        id=f"fc{k}",
                    )
                    for k in range(n)
                ]
            else:
                text = ResponseOutputText(annotations=[], text="done", type="output_text")
                output = [
                    ResponseOutputMessage(
                        id="m", content=[text], role="assistant", status="completed", type="message"
                    )
                ]
            return ModelResponse(output=output, usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    return Scripted()


def openai_agents_agent(n: int, body: Body) -> Callable[[], Awaitable[Any]]:
    from agents import Agent as OAgent
    from agents import Runner, function_tool

    tools = [function_tool(named(body, k)) for k in range(n)]
    model = openai_agents_scripted(n, lambda k: f"noop_{k}")
    agent = OAgent(name="bench", model=model, tools=tools)
    return lambda: Runner.run(agent, "go", max_turns=4)


def langgraph_agent(n: int, body: Body) -> Callable[[], Awaitable[Any]]:
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import StructuredTool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    tools = [StructuredTool.from_function(coroutine=named(body, k)) for k in range(n)]
    calls = [
        {"name": f"noop_{k}", "args": {"i": k}, "id": f"c{k}", "type": "tool_call"}
        for k in range(n)
    ]

    def model(state: MessagesState) -> dict[str, Any]:
        answered = any(isinstance(m, ToolMessage) for m in state["messages"])
        if n and not answered:
            return {"messages": [AIMessage(content="", tool_calls=calls)]}
        return {"messages": [AIMessage(content="done")]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", model)
    graph.add_edge(START, "model")
    if n:
        graph.add_node("tools", ToolNode(tools))
        graph.add_conditional_edges("model", tools_condition)
        graph.add_edge("tools", "model")
    else:
        graph.add_edge("model", END)
    app = graph.compile()
    return lambda: app.ainvoke({"messages": [("user", "go")]})


AGENTS: list[tuple[str, str | None, Factory]] = [
    ("floor: `asyncio.gather` + pydantic `TypeAdapter` + dict messages", "pydantic", floor_run),
    ("toolwire `Agent()` (default context policy)", None, toolwire_agent(None)),
    ("toolwire `Agent(context=CONTEXT_OFF)`", None, toolwire_agent(CONTEXT_OFF)),
    ("pydantic-ai `Agent` + `FunctionModel`", "pydantic_ai", pydantic_ai_agent),
    ("OpenAI Agents SDK `Runner`", "agents", openai_agents_agent),
    ("LangGraph model node + `ToolNode`", "langgraph", langgraph_agent),
]


# -- 0b. older trees of toolwire in the same process: another machine's units -------------

REPO = Path(__file__).resolve().parents[1]
ISSUE_TREES: dict[str, float] = {"cc122c2^": 18e-6, "fed50f2": 44e-6}
"""The trees issue 30 timed on its own machine, and the default agent's cost per extra
call there (seconds): before the context work, and the issue's own tree."""
ISSUE_PEER = ("pydantic-ai `Agent` + `FunctionModel`", 20.5e-3)
"""The peer row issue 30 timed on its machine, and its run at N=100 there (seconds)."""
SCALED = (AGENTS[1][0], AGENTS[2][0])  # the rows read in another machine's units
# ``from toolwire ...`` / ``import toolwire...`` (the package's own modules import each
# other relatively; the few absolute imports and their docstrings' examples follow).
ABSOLUTE_IMPORT = re.compile(rb"\b(from|import)(\s+)toolwire\b")


class TreeUnavailable(RuntimeError):
    """git cannot give the tree asked for: no git, a shallow clone, an unknown revision."""


def _git(repo: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    except FileNotFoundError as error:
        raise TreeUnavailable(f"git {args[0]}: git is not installed ({error})") from error
    if done.returncode:
        raise TreeUnavailable(f"git {args[0]}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def export_tree(rev: str, into: Path, repo: Path = REPO) -> str:
    """Write ``rev``'s ``src/toolwire`` (pure Python) into ``into`` as the package
    ``toolwire_<commit>``, its absolute imports of ``toolwire`` renamed; return the
    package's name (import it with ``into`` on ``sys.path``).

    Renamed, an old tree imports beside this toolwire in one process, so the two are
    timed interleaved, under the same load (:func:`interleaved`).

    Raises:
        TreeUnavailable: git cannot resolve or archive ``rev`` here.
    """
    commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}").decode().strip()
    package = f"toolwire_{commit[:7]}"
    archive = _git(repo, "archive", "--format=tar", commit, "src/toolwire")
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            source = tar.extractfile(member) if member.isfile() else None
            if source is None:
                continue
            data = source.read()
            relative = PurePosixPath(member.name).relative_to("src/toolwire")
            if relative.suffix == ".py":
                data = ABSOLUTE_IMPORT.sub(rb"\1\2" + package.encode(), data)
            target = into / package / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return package


def old_agents(trees: dict[str, float | None], into: Path) -> list[tuple[str, str | None, Factory]]:
    """The default agent of each tree in ``trees`` (revisions; see :func:`export_tree`)
    as a row of :data:`AGENTS`, the trees exported into ``into`` and put on ``sys.path``."""
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    rows: list[tuple[str, str | None, Factory]] = []
    for rev in trees:
        package = export_tree(rev, into)
        rows.append(
            (f"toolwire at `{rev}` (`{package}`, pure)", None, toolwire_agent(None, package))
        )
    return rows


def per_extra_call(by_n: dict[int, float]) -> float:
    """Seconds per extra call: ``(t(100) - t(10)) / 90``."""
    return (by_n[100] - by_n[10]) / 90


def in_units(
    times: dict[str, dict[int, float]], references: list[tuple[str, str, float]]
) -> list[tuple[str, str, float, float, dict[str, float]]]:
    """The :data:`SCALED` rows' cost per extra call in another machine's units.

    Each reference is ``(row, measure, value there)``: ``measure`` is ``"per extra
    call"`` or ``"N=100"``; the scale is the value there over the row's value here, in
    ``times`` (:func:`agent_times`). A reference whose row is absent from ``times`` is
    left out. Returns ``(row, measure, there, here, {scaled row: seconds there})``.
    """
    scaled = []
    for row, measure, there in references:
        if row not in times:
            continue
        here = per_extra_call(times[row]) if measure == "per extra call" else times[row][100]
        costs = {label: per_extra_call(times[label]) * there / here for label in SCALED}
        scaled.append((row, measure, there, here, costs))
    return scaled


def calibrate_args(argv: list[str]) -> dict[str, float | None] | None:
    """``--calibrate [REV[=µs] ...]``: the trees to add as rows, each with its cost per
    extra call measured elsewhere (µs) where given; the flag alone: :data:`ISSUE_TREES`.
    ``None`` without the flag."""
    if "--calibrate" not in argv:
        return None
    after = argv[argv.index("--calibrate") + 1 :]
    values = list(itertools.takewhile(lambda arg: not arg.startswith("--"), after))
    if not values:
        return dict(ISSUE_TREES)
    trees: dict[str, float | None] = {}
    for value in values:
        rev, _, micros = value.partition("=")
        trees[rev] = float(micros) * 1e-6 if micros else None
    return trees


BETWEEN = ("shuffle", "flush", "alone", "fixed")
"""What precedes each timed run of the agent table (``--between``; the module's docstring)."""
FLUSH_BYTES = 64 << 20  # past this machine's 32 MB L3: a copy of it evicts every cache


def interleaved(
    makes: dict[str, Callable[[], Awaitable[Any]]],
    repeat: int,
    clock: Callable[[], float] = time.process_time,
    between: str = "fixed",
) -> dict[str, float]:
    """Median seconds per contestant, one run of each per repetition (one event loop).

    The default clock is the process's CPU time: on a shared machine a run is
    descheduled for a share of its wall time that grows with its length (at a load of
    10 on 2 cores a 10 ms run took 40 ms of wall time), which says nothing about the
    code. The sleeping rows need wall time and pass ``time.perf_counter``.

    ``between`` (one of :data:`BETWEEN`) says what runs before each timed run: the
    contestant before it in this repetition's order (``fixed``: the order of
    ``makes``; ``shuffle``: a new seeded random order each repetition), an untimed
    copy of :data:`FLUSH_BYTES` (``flush``, in the order of ``makes``), or the same
    contestant (``alone``: its ``repeat`` runs back to back). What ran just before a run
    decides what it finds in the caches: a run after another framework's reads its code
    and data from memory, one after itself from the cache.
    """
    if between not in BETWEEN:
        raise ValueError(f"between={between!r}: choose one of {', '.join(BETWEEN)}")
    labels = list(makes)
    shuffler = random.Random(30)  # seeded: the same orders on every run of the script
    source, target = (
        (bytearray(FLUSH_BYTES), bytearray(FLUSH_BYTES))
        if between == "flush"
        else (b"", bytearray())
    )

    def orders() -> list[list[str]]:
        if between == "alone":
            return [[label] * repeat for label in labels]
        rounds = []
        for _ in range(repeat):
            order = labels.copy()
            if between == "shuffle":
                shuffler.shuffle(order)
            rounds.append(order)
        return rounds

    async def main() -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {label: [] for label in makes}
        for make in makes.values():
            await make()  # warm up
        for order in orders():
            for label in order:
                if source:
                    target[:] = source
                make = makes[label]
                start = clock()
                await make()
                samples[label].append(clock() - start)
        return samples

    return {label: statistics.median(s) for label, s in asyncio.run(main()).items()}


def present(agents: list[tuple[str, str | None, Factory]]) -> list[tuple[str, Factory]]:
    """The rows of ``agents`` whose library is installed."""
    return [(label, f) for label, module, f in agents if not module or available(module)]


def agent_times(
    quick: bool, between: str = "shuffle", agents: list[tuple[str, str | None, Factory]] = AGENTS
) -> dict[str, dict[int, float]]:
    """``{contestant: {N: median seconds}}`` of the no-op workload (``between``: see
    :func:`interleaved`)."""
    rows = present(agents)
    times: dict[str, dict[int, float]] = {label: {} for label, _ in rows}
    for n in AGENT_SIZES:
        repeat = 3 if quick else AGENT_REPEATS[n]
        makes = {label: f(n, noop_body) for label, f in rows}
        medians = interleaved(makes, repeat, between=between)
        for label, t in medians.items():
            times[label][n] = t
    return times


def agent_table(quick: bool) -> None:
    between = sys.argv[sys.argv.index("--between") + 1] if "--between" in sys.argv else "shuffle"
    trees = calibrate_args(sys.argv)
    with tempfile.TemporaryDirectory(prefix="toolwire-trees-") as into:
        # The old trees' rows run right after this toolwire's, under the same load.
        old = old_agents(trees or {}, Path(into))
        agents = [*AGENTS[:3], *old, *AGENTS[3:]]
        times = agent_times(quick, between, agents)
        floor = times[AGENTS[0][0]]
        print(
            "\n### N distinct no-op tools called in one turn: the run's CPU time (median), "
            f"between runs: {between}\n"
        )
        print(
            "| contestant | "
            + " | ".join(f"N={n}" for n in AGENT_SIZES)
            + " | per extra call | × floor at N=100 |"
        )
        print("|---|" + "---:|" * (len(AGENT_SIZES) + 2))
        for label, by_n in times.items():
            extra = per_extra_call(by_n) * 1e6
            cells = " | ".join(f"{by_n[n] * 1e3:.2f} ms" for n in AGENT_SIZES)
            print(f"| {label} | {cells} | {extra:.1f} µs | {by_n[100] / floor[100]:.2f}x |")
        for label, module, _ in agents:
            if module and not available(module):
                print(f"| {label} | not installed |")
        if trees is not None:
            references = [
                (label, "per extra call", there)
                for (label, _, _), there in zip(old, trees.values(), strict=True)
                if there is not None
            ]
            units_table(times, [*references, (ISSUE_PEER[0], "N=100", ISSUE_PEER[1])])
        slow_table(quick, agents)


def units_table(
    times: dict[str, dict[int, float]], references: list[tuple[str, str, float]]
) -> None:
    """This toolwire's cost per extra call in the units of the machine where each
    reference was measured (:func:`in_units`)."""
    print("\n### Cost per extra call in the reference machine's units\n")
    print("| scaled by | there | here | " + " | ".join(f"{row} there" for row in SCALED) + " |")
    print("|---|---:|---:|" + "---:|" * len(SCALED))
    for row, measure, there, here, costs in in_units(times, references):
        unit, factor = ("µs", 1e6) if measure == "per extra call" else ("ms", 1e3)
        cells = " | ".join(f"{costs[label] * 1e6:.1f} µs" for label in SCALED)
        print(
            f"| {row}, {measure} | {there * factor:.1f} {unit} | {here * factor:.1f} {unit} "
            f"| {cells} |"
        )


def slow_table(quick: bool, agents: list[tuple[str, str | None, Factory]] = AGENTS) -> None:
    makes = {label: f(16, slow_body) for label, f in present(agents)}
    medians = interleaved(makes, 3 if quick else 15, time.perf_counter)
    print(f"\n### 16 parallel calls to {SLOW * 1000:.0f} ms tools: the run's wall time (median)\n")
    print("| contestant | wall time |")
    print("|---|---:|")
    for label, t in medians.items():
        print(f"| {label} | {t * 1e3:.1f} ms |")


# -- 1a. execution step ------------------------------------------------------------------


@tool(concurrency_safe=True, side_effects=False)
async def noop(i: int) -> str:
    """Does nothing."""
    return "ok"


def toolwire_step(n: int) -> Callable[[], Awaitable[Any]]:
    executor = Executor([noop])
    requests = [ToolRequest(f"c{i}", "noop", f'{{"i": {i}}}', {"i": i}, None, i) for i in range(n)]
    return lambda: executor.execute(requests)


def langgraph_step(n: int) -> Callable[[], Awaitable[Any]]:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool as lc_tool
    from langgraph.prebuilt import ToolNode

    @lc_tool
    async def lc_noop(i: int) -> str:
        """Does nothing."""
        return "ok"

    from langgraph.graph import END, START, MessagesState, StateGraph

    # ToolNode needs the runtime a graph provides, so it runs as a one-node graph.
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode([lc_noop]))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()
    calls = [
        {"name": "lc_noop", "args": {"i": i}, "id": f"c{i}", "type": "tool_call"} for i in range(n)
    ]
    state = {"messages": [AIMessage(content="", tool_calls=calls)]}
    return lambda: app.ainvoke(state)


# -- 1b. whole loop -------------------------------------------------------------------------


def toolwire_loop(n: int) -> Callable[[], Awaitable[Any]]:
    # The chunks are built once, outside the timed region (ids fixed: one run per model).
    turns = [tool_call_turn(*[("noop", {"i": i}, f"c{i}") for i in range(n)])] if n else []
    script = [*turns, text_turn("done")]
    agent = Agent(ScriptedModel([]), [noop])

    def make() -> Awaitable[Any]:
        agent.model = ScriptedModel(script)
        return agent.run("go")

    return make


def pydantic_ai_loop(n: int) -> Callable[[], Awaitable[Any]]:
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        answered = any(
            isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", [])
        )
        if n and not answered:
            return ModelResponse(
                parts=[ToolCallPart("pa_noop", {"i": i}, f"c{i}") for i in range(n)]
            )
        return ModelResponse(parts=[TextPart("done")])

    agent = PAgent(FunctionModel(respond))

    @agent.tool_plain
    async def pa_noop(i: int) -> str:
        """Does nothing."""
        return "ok"

    return lambda: agent.run("go")


def openai_agents_loop(n: int) -> Callable[[], Awaitable[Any]]:
    from agents import Agent as OAgent
    from agents import Runner, function_tool

    @function_tool
    async def oa_noop(i: int) -> str:
        """Does nothing."""
        return "ok"

    model = openai_agents_scripted(n, lambda k: "oa_noop")
    agent = OAgent(name="bench", model=model, tools=[oa_noop])
    return lambda: Runner.run(agent, "go", max_turns=4)


LOOPS: list[tuple[str, str | None, Callable[[int], Callable[[], Awaitable[Any]]]]] = [
    ("toolwire Agent", None, toolwire_loop),
    ("pydantic-ai Agent", "pydantic_ai", pydantic_ai_loop),
    ("OpenAI Agents SDK Runner", "agents", openai_agents_loop),
]
STEPS: list[tuple[str, str | None, Callable[[int], Callable[[], Awaitable[Any]]]]] = [
    ("toolwire Executor.execute", None, toolwire_step),
    ("LangGraph ToolNode (one-node graph)", "langgraph", langgraph_step),
]


def repeats(n: int, quick: bool) -> int:
    return 3 if quick else max(20, 2000 // max(n, 1))


def overhead_tables(quick: bool) -> None:
    print("\n### Execution step: µs per call (median)\n")
    print("| executor | " + " | ".join(f"N={n}" for n in SIZES) + " |")
    print("|---|" + "---|" * len(SIZES))
    for label, module, factory in STEPS:
        if module and not available(module):
            print(f"| {label} | not installed |")
            continue
        cells = [timed(factory(n), repeats(n, quick)) / n * 1e6 for n in SIZES]
        print(f"| {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")

    print("\n### Whole loop: µs per call ((run with N calls − run with none) / N, median)\n")
    print("| loop | no-call run (µs) | " + " | ".join(f"N={n}" for n in SIZES) + " |")
    print("|---|---|" + "---|" * len(SIZES))
    for label, module, factory in LOOPS:
        if module and not available(module):
            print(f"| {label} | not installed |")
            continue
        base = timed(factory(0), repeats(1, quick))
        cells = [(timed(factory(n), repeats(n, quick)) - base) / n * 1e6 for n in SIZES]
        print(f"| {label} | {base * 1e6:.0f} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")


# -- 2. parallel sleeps ----------------------------------------------------------------------

SLEEP = 0.05


@tool(concurrency_safe=True)
async def nap(i: int) -> str:
    """Sleeps 50 ms."""
    await asyncio.sleep(SLEEP)
    return "ok"


@tool(concurrency_safe=True)
def sync_nap(i: int) -> str:
    """Sleeps 50 ms in its thread."""
    time.sleep(SLEEP)
    return "ok"


def sleep_table(quick: bool) -> None:
    print(
        f"\n### Parallel sleeping tools ({SLEEP * 1000:.0f} ms each): wall time − {SLEEP * 1000:.0f} ms\n"
    )
    print("| tools | N=10 | N=100 |")
    print("|---|---|---|")
    floor = []
    for n in (10, 100):

        async def gather(n: int = n) -> None:
            await asyncio.gather(*[asyncio.sleep(SLEEP) for _ in range(n)])

        floor.append(f"{(timed(gather, 3 if quick else 20) - SLEEP) * 1000:.2f} ms")
    print("| floor: bare `asyncio.gather` of the sleeps | " + " | ".join(floor) + " |")
    for label, fn in (
        ("async (asyncio.sleep)", nap),
        ("sync (time.sleep, worker threads)", sync_nap),
    ):
        cells = []
        for n in (10, 100):
            executor = Executor([fn], ExecutionOptions(max_threads=n))
            requests = [ToolRequest(f"c{i}", fn.name, "{}", {"i": i}, None, i) for i in range(n)]
            wall = timed(
                lambda executor=executor, requests=requests: executor.execute(requests),
                3 if quick else 20,
            )
            cells.append(f"{(wall - SLEEP) * 1000:.2f} ms")
        print(f"| {label} | " + " | ".join(cells) + " |")


# -- 3. early execution ------------------------------------------------------------------------

CHUNK_DELAY = 0.02  # 50 chunks per second
TOOL_TIME = 0.2


@tool(concurrency_safe=True, side_effects=False)
async def lookup(city: str) -> str:
    """A 200 ms read."""
    await asyncio.sleep(TOOL_TIME)
    return f"weather in {city}"


def _early_turns() -> list[list[dict[str, Any]]]:
    calls = [("lookup", {"city": c}) for c in ("Paris", "Lagos", "Lima", "Osaka")]
    return [tool_call_turn(*calls, fragment=3), text_turn("done")]


async def _round_time(early: bool) -> tuple[float, float, float]:
    """(round wall time, last call ready, stream end) in seconds from the request."""
    agent = Agent(
        ScriptedModel(_early_turns(), chunk_delay=CHUNK_DELAY), [lookup], early_execution=early
    )
    start = time.perf_counter()
    last_ready = stream_end = 0.0
    async with agent.run_stream("go") as stream:
        async for event in stream:
            now = time.perf_counter() - start
            if isinstance(event, ToolCallReady):
                last_ready = now
            elif isinstance(event, ToolResultReady) and not stream_end and not early:
                stream_end = now  # without early execution, results start after the stream
            elif isinstance(event, RoundEnd):
                return now, last_ready, stream_end
    raise RuntimeError("no round ended")


def early_table(quick: bool) -> None:
    runs = 2 if quick else 7
    on = [asyncio.run(_round_time(True)) for _ in range(runs)]
    off = [asyncio.run(_round_time(False)) for _ in range(runs)]
    t_on = statistics.median(r[0] for r in on)
    t_off = statistics.median(r[0] for r in off)
    last_ready = statistics.median(r[1] for r in on)
    stream_end = statistics.median(r[0] - TOOL_TIME for r in off)
    floor = max(stream_end, last_ready + TOOL_TIME)
    overlappable = t_off - floor
    saved = (t_off - t_on) / overlappable if overlappable > 0 else float("nan")
    print(
        f"\n### Early execution: 4 calls to {TOOL_TIME * 1000:.0f} ms tools, stream at 50 chunks/s\n"
    )
    print("| measure | ms |")
    print("|---|---|")
    print(f"| stream-then-execute round | {t_off * 1000:.1f} |")
    print(f"| early-execution round | {t_on * 1000:.1f} |")
    print(f"| last call's arguments closed | {last_ready * 1000:.1f} |")
    print(
        f"| floor: max(stream end, last ready + {TOOL_TIME * 1000:.0f} ms) | {floor * 1000:.1f} |"
    )
    print(f"| overlappable (stream-then-execute − floor) | {overlappable * 1000:.1f} |")
    print(f"| saved | {(t_off - t_on) * 1000:.1f} ({saved:.0%} of overlappable) |")


def main() -> None:
    quick = "--quick" in sys.argv
    print(
        f"Python {sys.version.split()[0]}; peers: "
        + ", ".join(
            f"{m} {'yes' if available(m) else 'no'}" for m in ("pydantic_ai", "agents", "langgraph")
        )
    )
    parts = {
        "agent": agent_table,
        "overhead": overhead_tables,
        "sleep": sleep_table,
        "early": early_table,
    }
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    for name, part in parts.items():
        if only in (None, name):
            part(quick)


if __name__ == "__main__":
    main()
