"""RayBackend and run_many against a local Ray instance that the tests start and stop.

One Ray head at a time: the instance is session-scoped and taken under a file lock,
and ``scripts/test`` runs the ``ray`` tests in their own non-parallel pytest. The fast
loop (``-m "not slow"``) skips them. Cross-process synchronisation is by marker files
(a barrier for "these calls overlap", an exclusive file for "these never do").
"""

from __future__ import annotations

import asyncio
import fcntl
import importlib.util
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, ExecutionOptions, RayBackend, ToolContext, iter_run_many, run_many, tool
from toolwire.errors import BackendError, ToolExecutionError
from toolwire.messages import ToolResult, ToolStatus, UserMessage
from toolwire.run.model import ModelEvent, ModelRequest
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .conftest import wait_for

# Ray 2.60 wants token authentication on every node, and reads the mode when it is
# imported: set it first. The token is this test session's own (nothing in ~/.ray).
os.environ.setdefault("RAY_AUTH_MODE", "token")
os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

# Whether Ray is installed, not an import of it (~0.6 s of CPU): every stage but the Ray
# one collects this file and deselects all of its tests; local_ray imports it.
pytestmark = [
    pytest.mark.ray,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed"),
]

OK, ERROR, TIMEOUT = ToolStatus.OK, ToolStatus.ERROR, ToolStatus.TIMEOUT


@pytest.fixture(scope="session")
def local_ray() -> Iterator[Any]:
    """A local Ray instance: 2 CPUs, no dashboard, token auth; stopped after the session."""
    ray = pytest.importorskip("ray")
    lock_path = Path(tempfile.gettempdir()) / "toolwire-ray-tests.lock"
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # never two heads from parallel test processes
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            # The tools and models below live in this test module: ship them by value.
            ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
            yield ray
        finally:
            ray.shutdown()


@pytest.fixture
def backend(local_ray: Any) -> RayBackend:
    return RayBackend(cancel_grace=2.0)


def results(messages: list[Any]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


def run_on_ray(
    backend: RayBackend, tools: list[Any], *turns: list[dict[str, Any]]
) -> tuple[ScriptedModel, Any]:
    model = ScriptedModel([*turns, text_turn("done")])
    agent = Agent(model, tools, execution=ExecutionOptions(backend=backend, backoff_base=0.0))
    return model, asyncio.run(agent.run("go"))


# -- tools (run in Ray workers) -------------------------------------------------------------


@tool(concurrency_safe=True)
def where(x: int) -> str:
    """Which process ran the call."""
    return f"{x}@{os.getpid()}"


@tool(concurrency_safe=True)
def meet(folder: str, name: str, n: int) -> str:
    """A barrier across processes: wait until n calls have arrived."""
    Path(folder, f"arrived-{name}").touch()
    deadline = time.monotonic() + 30
    while len(list(Path(folder).glob("arrived-*"))) < n:
        if time.monotonic() > deadline:
            return "alone"
        time.sleep(0.01)
    return "met"


@tool
def exclusive(folder: str, name: str) -> str:
    """An unsafe tool that notices if another call of it runs at the same time."""
    flag = Path(folder, "running")
    try:
        flag.touch(exist_ok=False)
    except FileExistsError:
        return f"{name}: overlap"
    try:
        for _ in range(20):
            time.sleep(0.005)
        return f"{name}: alone"
    finally:
        flag.unlink()


@tool(concurrency_safe=True, timeout=2.0)
def stuck(folder: str) -> str:
    """Never returns; leaves a marker when Ray cancels it."""
    Path(folder, "started").touch()
    try:
        while True:
            time.sleep(0.02)
    except KeyboardInterrupt:  # what ray.cancel raises in the task
        Path(folder, "cancelled").touch()
        raise


@tool(concurrency_safe=True)
def die() -> str:
    """Kills its worker process."""
    os._exit(7)


@tool
def boom(reason: str) -> str:
    """Raises."""
    raise ValueError(reason)


# -- tool calls as Ray tasks ------------------------------------------------------------------------


def test_calls_run_in_workers_and_results_come_back_in_call_order(backend: RayBackend) -> None:
    calls = [("where", {"x": i}) for i in range(5)]
    _, result = run_on_ray(backend, [where], tool_call_turn(*calls))
    answers = results(result.messages)
    assert [a.status for a in answers] == [OK] * 5
    assert [a.content.split("@")[0] for a in answers] == ["0", "1", "2", "3", "4"]
    assert all(int(a.content.split("@")[1]) != os.getpid() for a in answers)


def test_safe_calls_overlap_across_workers(backend: RayBackend, tmp_path: Path) -> None:
    calls = [("meet", {"folder": str(tmp_path), "name": str(i), "n": 2}) for i in range(2)]
    _, result = run_on_ray(backend, [meet], tool_call_turn(*calls))
    assert [a.content for a in results(result.messages)] == ["met", "met"]


def test_unsafe_calls_never_overlap(backend: RayBackend, tmp_path: Path) -> None:
    calls = [("exclusive", {"folder": str(tmp_path), "name": f"c{i}"}) for i in range(4)]
    _, result = run_on_ray(backend, [exclusive], tool_call_turn(*calls))
    assert [a.content for a in results(result.messages)] == [f"c{i}: alone" for i in range(4)]


def test_a_timeout_cancels_the_remote_task(backend: RayBackend, tmp_path: Path) -> None:
    _, result = run_on_ray(backend, [stuck], tool_call_turn(("stuck", {"folder": str(tmp_path)})))
    (answer,) = results(result.messages)
    assert answer.status is TIMEOUT
    wait_for(tmp_path / "cancelled")  # ray.cancel reached the task


def test_a_worker_that_dies_is_that_calls_error_and_the_run_goes_on(backend: RayBackend) -> None:
    first = tool_call_turn(("die", {}), ("where", {"x": 1}))
    second = tool_call_turn(("where", {"x": 2}))
    _, result = run_on_ray(backend, [die, where], first, second)
    died, fine, later = results(result.messages)
    assert died.status is ERROR
    assert "the Ray worker running `die` failed during the call" in died.content
    assert "WorkerCrashedError" in died.content
    assert (fine.status, later.status) == (OK, OK)
    assert result.output == "done"


def test_a_tool_error_comes_back_as_it_would_locally(backend: RayBackend) -> None:
    _, result = run_on_ray(backend, [boom], tool_call_turn(("boom", {"reason": "no disk"})))
    (answer,) = results(result.messages)
    assert answer.status is ERROR
    assert "ValueError: no disk" in answer.content


def test_a_tool_that_cannot_be_pickled_fails_before_the_first_request(
    backend: RayBackend,
) -> None:
    lock = threading.Lock()

    @tool
    def locked() -> str:
        """Holds a lock."""
        with lock:
            return "x"

    model = ScriptedModel([text_turn("unused")])
    agent = Agent(model, [locked], execution=ExecutionOptions(backend=backend))
    with pytest.raises(BackendError, match="tool 'locked' cannot be pickled for Ray"):
        asyncio.run(agent.run("go"))
    assert model.requests == []


# -- whole runs on Ray -------------------------------------------------------------------------------


class EchoModel:
    """A stateless model: calls `where` with the prompt's length, then answers with the result."""

    name = "echo"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        if isinstance(last, UserMessage):
            turn = tool_call_turn(("where", {"x": len(last.content)}))
        else:
            turn = text_turn(f"{request.messages[0].content}={last.content}")
        return ScriptedModel([turn]).stream(request)


def test_run_many_returns_results_in_prompt_order(backend: RayBackend) -> None:
    agent = Agent(EchoModel(), [where])
    prompts = ["a", "bb", "ccc", "dddd"]
    outputs = [r.output for r in run_many(agent, prompts, backend=backend)]
    assert [o.split("@")[0] for o in outputs] == ["a=1", "bb=2", "ccc=3", "dddd=4"]
    assert all(int(o.split("@")[1]) != os.getpid() for o in outputs)


def test_iter_run_many_yields_every_run_once(backend: RayBackend) -> None:
    agent = Agent(EchoModel(), [where])
    seen = dict(iter_run_many(agent, ["a", "bb", "ccc"], backend=backend))
    assert sorted(seen) == [0, 1, 2]
    assert seen[2].output.startswith("ccc=3@")


def test_run_many_reports_a_failed_run_in_its_place(backend: RayBackend) -> None:
    agent = Agent(EchoModel(), [where], max_rounds=0, on_max_rounds="raise")
    outcomes = run_many(agent, ["a", "bb"], backend=backend, return_exceptions=True)
    assert [type(o).__name__ for o in outcomes] == ["MaxRoundsExceededError"] * 2
    with pytest.raises(Exception, match="max_rounds=0"):
        run_many(agent, ["a"], backend=backend)


def test_arun_many_inside_an_event_loop(backend: RayBackend) -> None:
    from toolwire.integrations import arun_many

    agent = Agent(EchoModel(), [where])

    async def main() -> list[Any]:
        on_ray = await arun_many(agent, ["a", "bb"], backend=backend)
        local = await arun_many(agent, ["ccc"])
        return [r.output.split("@")[0] for r in [*on_ray, *local]]

    assert asyncio.run(main()) == ["a=1", "bb=2", "ccc=3"]


def test_run_many_without_a_backend_runs_locally() -> None:
    agent = Agent(EchoModel(), [where])
    outputs = [r.output for r in run_many(agent, ["a", "bb"])]
    assert outputs == [f"a=1@{os.getpid()}", f"bb=2@{os.getpid()}"]


def test_an_agent_that_cannot_be_pickled_is_named(backend: RayBackend) -> None:
    agent = Agent(EchoModel(), [where])
    agent.settings["client"] = threading.Lock()
    with pytest.raises(BackendError, match="its 'settings' cannot be pickled"):
        run_many(agent, ["a"], backend=backend)


# -- never starting Ray --------------------------------------------------------------------------------


def _in_fresh_process(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("", "Ray is not initialised in this process and RAY_ADDRESS is not set"),
        ("'local'", "address='local' would start a new Ray cluster"),
        ("'127.0.0.1:9'", "no Ray cluster answers at '127.0.0.1:9'"),
    ],
)
def test_ray_backend_never_starts_ray(args: str, expected: str) -> None:
    code = (
        "import toolwire\n"
        "try:\n"
        f"    toolwire.RayBackend({args})\n"
        "except toolwire.BackendError as e:\n"
        "    print('BackendError:', e)\n"
        "import ray; print('initialised:', ray.is_initialized())\n"
    )
    out = _in_fresh_process(code)
    assert f"BackendError: {expected}" in out
    assert "initialised: False" in out


def test_mcp_tools_stay_in_the_driver(backend: RayBackend) -> None:
    pytest.importorskip("mcp")
    from toolwire import MCPToolset

    from .conftest import TOOL_SERVER

    source = MCPToolset.stdio(sys.executable, [TOOL_SERVER, "stdio"])
    calls = tool_call_turn(("pid", {}), ("where", {"x": 1}))
    _, result = run_on_ray(backend, [source, where], calls)
    server_pid, remote = results(result.messages)
    assert (server_pid.status, remote.status) == (OK, OK)
    assert int(remote.content.split("@")[1]) != os.getpid()  # `where` ran on Ray


class PidModel:
    """Calls the MCP server's `pid` tool, then answers with its result."""

    name = "pid"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        last = request.messages[-1]
        turn = (
            tool_call_turn(("pid", {}))
            if isinstance(last, UserMessage)
            else text_turn(last.content)
        )
        return ScriptedModel([turn]).stream(request)


def test_run_many_ships_mcp_configuration_and_each_run_starts_its_own_server(
    backend: RayBackend,
) -> None:
    pytest.importorskip("mcp")
    from toolwire import MCPToolset

    from .conftest import TOOL_SERVER

    agent = Agent(PidModel(), [MCPToolset.stdio(sys.executable, [TOOL_SERVER, "stdio"])])
    outputs = [r.output for r in run_many(agent, ["a", "b"], backend=backend)]
    assert all(o.isdigit() for o in outputs)
    assert outputs[0] != outputs[1]  # one server per run, started in the worker


# -- observers and approvals stay in the driver ------------------------------------------------------


def test_run_many_logs_every_run_in_the_drivers_audit_log(
    backend: RayBackend, tmp_path: Path
) -> None:
    from toolwire import AuditLog

    db = tmp_path / "runs.db"
    agent = Agent(EchoModel(), [where], log=db)
    prompts = ["a", "bb", "ccc"]
    outcomes = run_many(agent, prompts, backend=backend)
    log = AuditLog(db)
    for prompt, result in zip(prompts, outcomes, strict=True):
        run = log.inspect(result.run_id)
        assert run["run_id"] == result.run_id
        assert run["outcome"] == "ok"
        assert run["prompt"] == prompt
        assert run["output"] == result.output
        calls = run["calls"]
        assert [c["tool"] for c in calls] == ["where"]
        assert calls[0]["status"] == "ok"
        assert json.loads(calls[0]["arguments"]) == {"x": len(prompt)}
        assert len(run["requests"]) == 2
        # The call ran in a worker; its result is in the driver's log.
        worker_pid = int(result.output.split("@")[1])
        assert worker_pid != os.getpid()
        assert str(worker_pid) in calls[0]["result_preview"]
    assert len(log.runs()) == len(prompts)
    # The CLI reads the same file (as a user would after the fan-out).
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolwire",
            "inspect",
            outcomes[1].run_id,
            "--db",
            str(db),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert json.loads(shown.stdout)["calls"][0]["tool"] == "where"


def test_approvals_are_asked_in_the_driver(backend: RayBackend) -> None:
    from toolwire import Permissions

    asked: list[tuple[int, int]] = []

    def approve(request: Any) -> bool | str:
        asked.append((os.getpid(), request.input["x"]))
        return True if request.input["x"] != 2 else "not two"

    agent = Agent(EchoModel(), [where], permissions=Permissions(ask=["where"]), approve=approve)
    outcomes = run_many(agent, ["a", "bb"], backend=backend)
    assert sorted(asked) == [(os.getpid(), 1), (os.getpid(), 2)]
    first, second = (results(o.messages)[0] for o in outcomes)
    assert first.status == OK and first.content.startswith("1@")
    assert second.status == ToolStatus.DENIED
    assert "not two" in second.content


def test_an_approver_that_raises_denies_the_call(backend: RayBackend) -> None:
    from toolwire import Permissions

    def approve(request: Any) -> bool:
        raise RuntimeError("the terminal went away")

    agent = Agent(EchoModel(), [where], permissions=Permissions(ask=["where"]), approve=approve)
    (outcome,) = run_many(agent, ["a"], backend=backend)
    (result,) = results(outcome.messages)
    assert result.status == ToolStatus.DENIED
    assert "approval of `where` failed (RuntimeError)" in result.content


def test_arun_many_serves_the_log_and_approvals_in_the_driver(
    backend: RayBackend, tmp_path: Path
) -> None:
    from toolwire import AuditLog, Permissions
    from toolwire.integrations import arun_many

    pids: list[int] = []

    async def approve(request: Any) -> bool:
        pids.append(os.getpid())
        return True

    db = tmp_path / "runs.db"
    agent = Agent(EchoModel(), [where], permissions=Permissions(ask=["*"]), approve=approve, log=db)
    outcomes = asyncio.run(arun_many(agent, ["a", "bb"], backend=backend))
    assert pids == [os.getpid()] * 2
    assert [AuditLog(db).inspect(o.run_id)["outcome"] for o in outcomes] == ["ok", "ok"]


def test_ray_tool_execution_is_logged_by_the_driver(backend: RayBackend, tmp_path: Path) -> None:
    from toolwire import AuditLog

    db = tmp_path / "runs.db"
    model = ScriptedModel(
        [tool_call_turn(("where", {"x": 7}), ("where", {"x": 8})), text_turn("ok")]
    )
    agent = Agent(model, [where], execution=ExecutionOptions(backend=backend), log=db)
    result = asyncio.run(agent.run("go"))
    run = AuditLog(db).inspect(result.run_id)
    calls = run["calls"]
    assert [json.loads(c["arguments"]) for c in calls] == [{"x": 7}, {"x": 8}]
    assert all(c["status"] == "ok" for c in calls)
    pids = {int(c["result_preview"].split("@")[1]) for c in calls}
    assert os.getpid() not in pids


def test_a_run_whose_worker_dies_ends_as_an_error_in_the_drivers_log(
    backend: RayBackend, tmp_path: Path
) -> None:
    from toolwire import AuditLog

    db = tmp_path / "runs.db"
    agent = Agent(ScriptedModel([tool_call_turn(("die", {})), text_turn("never")]), [die], log=db)
    (outcome,) = run_many(agent, ["go"], backend=backend, return_exceptions=True)
    assert isinstance(outcome, ToolExecutionError)
    (row,) = AuditLog(db).runs()
    run = AuditLog(db).inspect(row["run_id"])
    assert run["outcome"] == "error"
    assert run["error_type"] == "ToolExecutionError"
    assert "prompt #0" in run["error"]


def test_run_many_emits_opentelemetry_spans_in_the_driver(backend: RayBackend) -> None:
    sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = trace.get_tracer_provider()
    if not isinstance(provider, sdk_trace.TracerProvider):  # set once per process
        provider = sdk_trace.TracerProvider()
        trace.set_tracer_provider(provider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    agent = Agent(EchoModel(), [where], instrument=True)
    outcomes = run_many(agent, ["a", "bb"], backend=backend)
    spans = exporter.get_finished_spans()
    runs = [s for s in spans if s.name == "invoke_agent toolwire"]
    assert sorted(s.attributes["toolwire.run_id"] for s in runs) == sorted(
        o.run_id for o in outcomes
    )
    assert len([s for s in spans if s.name == "execute_tool where"]) == 2
    exporter.clear()


RECORDED = Path(__file__).parents[1] / "wire" / "fixtures" / "recorded"


class MCPApprovalModel:
    """Replays a recorded Responses turn holding an MCP approval request; once the
    history carries the answer, says what it was."""

    name = "mcp-approval"

    def stream(self, request: ModelRequest) -> Any:
        from toolwire.messages import AssistantMessage, ProviderPart
        from toolwire.testing import ScriptedModel
        from toolwire.wire import OpenAIResponsesStream

        answers = [
            part.data
            for message in request.messages
            if isinstance(message, AssistantMessage)
            for part in message.parts
            if isinstance(part, ProviderPart) and part.type == "mcp_approval_response"
        ]
        if answers:
            (answer,) = answers
            said = f"approve={answer['approve']} reason={answer.get('reason')}"
            return ScriptedModel([text_turn(said)]).stream(request)
        lines = (RECORDED / "responses-mcp-tool-approval.1.chunks.txt").read_text().splitlines()
        stream = OpenAIResponsesStream()
        created = 0
        for line in filter(None, lines):
            event = json.loads(line)
            created += event["type"] == "response.created"
            if created > 1:  # the recording's second stream
                break
            stream.feed(event)
        return _done(stream.close())


async def _done(turn: Any) -> AsyncIterator[ModelEvent]:
    from toolwire.run.model import TurnDone

    yield TurnDone(turn)


def test_mcp_approvals_are_asked_in_the_driver(backend: RayBackend) -> None:
    asked: list[tuple[int, str]] = []

    def approve_mcp(request: Any) -> bool | str:
        asked.append((os.getpid(), request.server_label))
        return True if len(asked) == 1 else "only once"

    agent = Agent(MCPApprovalModel(), approve_mcp=approve_mcp)
    first, second = run_many(agent, ["a", "b"], backend=backend)
    assert asked == [(os.getpid(), "zip1")] * 2
    assert sorted([first.output, second.output]) == [
        "approve=False reason=only once",
        "approve=True reason=None",
    ]


def test_without_approve_mcp_a_ray_run_denies(backend: RayBackend) -> None:
    (outcome,) = run_many(Agent(MCPApprovalModel()), ["a"], backend=backend)
    assert outcome.output.startswith("approve=False reason=no approver is configured")


# -- ToolContext and progress from workers ---------------------------------------------------------


@tool
def stages(n: int) -> Iterator[str]:
    """A generator tool: each stage but the last is progress."""
    for i in range(1, n + 1):
        yield f"stage {i}@{os.getpid()}"


@tool
async def book(room: str, ctx: ToolContext) -> str:
    """Reports through its context; answers with its key and deps."""
    ctx.progress(f"booking {room}")
    return json.dumps({"key": ctx.idempotency_key, "deps": ctx.deps, "pid": os.getpid()})


def test_context_and_progress_travel_between_ray_workers_and_the_driver(
    backend: RayBackend,
) -> None:
    from toolwire import ToolProgress
    from toolwire.run import ToolResultReady
    from toolwire.tools import idempotency_key

    model = ScriptedModel(
        [tool_call_turn(("stages", {"n": 3}), ("book", {"room": "A"})), text_turn("done")]
    )
    agent = Agent(
        model,
        [stages, book],
        deps={"region": "eu"},
        execution=ExecutionOptions(backend=backend),
    )

    async def main() -> tuple[list[Any], Any]:
        events = []
        async with agent.run_stream("go") as stream:
            async for event in stream:
                if isinstance(event, (ToolProgress, ToolResultReady)):
                    events.append(event)
        return events, stream.result

    events, result = asyncio.run(main())
    staged, booked = results(result.messages)
    assert (
        staged.content.startswith("stage 3@") and int(staged.content.split("@")[1]) != os.getpid()
    )
    seen = json.loads(booked.content)
    assert seen["key"] == idempotency_key(result.run_id, 1, 1)
    assert seen["deps"] == {"region": "eu"} and seen["pid"] != os.getpid()
    # Each call's progress arrived in the driver, in order, before its result.
    for answer, expected in ((staged, ["stage 1@", "stage 2@"]), (booked, ["booking A"])):
        mine = [e for e in events if getattr(e, "call_id", None) == answer.call_id
                or (isinstance(e, ToolResultReady) and e.result.call_id == answer.call_id)]  # fmt: skip
        assert isinstance(mine[-1], ToolResultReady)
        assert [
            str(e.value)[: len(x)] for e, x in zip(mine[:-1], expected, strict=True)
        ] == expected


def test_deps_that_do_not_pickle_are_a_clear_error_on_ray(backend: RayBackend) -> None:
    lock = threading.Lock()
    agent = Agent(EchoModel(), [where], deps=lock)
    with pytest.raises(BackendError, match=r"Agent\(deps=\.\.\.\) cannot be pickled"):
        run_many(agent, ["a"], backend=backend)
    model = ScriptedModel([tool_call_turn(("book", {"room": "B"})), text_turn("done")])
    ray_agent = Agent(model, [book], deps=lock, execution=ExecutionOptions(backend=backend))
    [answer] = results(asyncio.run(ray_agent.run("go")).messages)
    assert answer.status is ERROR and "Agent(deps=...) cannot be pickled" in answer.content


def test_run_many_logs_the_workers_progress_in_the_drivers_log(
    backend: RayBackend, tmp_path: Path
) -> None:
    from toolwire.observe.store import connect

    class StagesModel:
        name = "stages"

        def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
            last = request.messages[-1]
            if isinstance(last, UserMessage):
                turn = tool_call_turn(("stages", {"n": len(last.content)}))
            else:
                turn = text_turn(last.content)
            return ScriptedModel([turn]).stream(request)

    db = tmp_path / "runs.db"
    outcomes = run_many(Agent(StagesModel(), [stages], log=db), ["aa", "bbb"], backend=backend)
    conn = connect(str(db), readonly=True)
    try:
        for result, count in zip(outcomes, (2, 3), strict=True):
            values = [v for (v,) in conn.execute(
                "SELECT value FROM progress WHERE run_id = ? ORDER BY seq", (result.run_id,))]  # fmt: skip
            assert [v.split("@")[0] for v in values] == [f"stage {i}" for i in range(1, count)]
    finally:
        conn.close()
