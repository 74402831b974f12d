"""MCPToolset against real MCP servers that the tests start (stdio and streamable HTTP)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, ExecutionOptions, MCPToolset, Permissions
from toolwire.errors import CallerError, MCPServerError
from toolwire.messages import ToolResult, ToolStatus
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .conftest import RAW_SERVER, tool_server_command, wait_for

# Whether the SDK is installed, not an import of it: the tests import it where they run
# (MCPToolset, the servers), and a process that runs none of them does not pay for it.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed"
)

OK, ERROR, TIMEOUT, CANCELLED = (
    ToolStatus.OK,
    ToolStatus.ERROR,
    ToolStatus.TIMEOUT,
    ToolStatus.CANCELLED,
)


def stdio(**options: Any) -> MCPToolset:
    """The test tool server, whose annotations the tests trust unless they say not to."""
    # The SDK starts servers with a minimal environment: pass the marker folder on.
    marks = os.environ.get("TOOL_SERVER_MARKS")
    env = {"TOOL_SERVER_MARKS": marks} if marks else None
    options.setdefault("trust_annotations", True)
    command, *args = tool_server_command("stdio")
    return MCPToolset.stdio(command, args, env=env, **options)


def raw(mode: str, **options: Any) -> MCPToolset:
    """A misbehaving server (servers/raw_server.py)."""
    return MCPToolset.stdio(sys.executable, [RAW_SERVER, mode], **options)


def results(messages: list[Any]) -> list[ToolResult]:
    return [m for m in messages if isinstance(m, ToolResult)]


def run_agent(source: Any, *turns: list[dict[str, Any]], **agent_options: Any) -> Any:
    model = ScriptedModel([*turns, text_turn("done")])
    agent = Agent(model, [source], **agent_options)
    result = asyncio.run(agent.run("go"))
    return model, result


@pytest.fixture(params=["stdio", pytest.param("http", marks=pytest.mark.slow)])
def server(request: pytest.FixtureRequest) -> Any:
    """The test tool server over each transport (a factory taking MCPToolset options)."""
    if request.param == "stdio":
        return stdio
    url = request.getfixturevalue("http_server")
    return lambda **options: MCPToolset.http(url, **{"trust_annotations": True, **options})


# -- tools from the server ---------------------------------------------------------------------


def test_the_servers_tools_become_toolwire_tools_with_policy_from_annotations() -> None:
    async def main() -> None:
        async with stdio() as tools:
            meet, write, flaky, fail = tools["meet"], tools["write"], tools["flaky"], tools["fail"]
            assert (meet.concurrency_safe, meet.side_effects, meet.idempotent) == (
                True,
                False,
                True,
            )
            assert (write.concurrency_safe, write.side_effects) == (False, True)
            assert (flaky.idempotent, flaky.side_effects, flaky.retries) == (True, True, 2)
            # no annotations: MCP's cautious defaults (side effects, run alone, no retry)
            assert (fail.concurrency_safe, fail.side_effects, fail.idempotent) == (
                False,
                True,
                False,
            )
            assert fail.retries == 0
            assert meet.parameters["required"] == ["key", "n"]
            assert "files_read_v2" in tools and "files.read/v2" not in tools
            # the schema validates a call before anything is sent
            assert not meet.validate('{"key": "a"}').ok

    asyncio.run(main())


def test_a_sanitised_name_still_calls_the_original_tool(server: Any) -> None:
    model, result = run_agent(server(), tool_call_turn(("files_read_v2", {"path": "a.txt"})))
    (answer,) = results(result.messages)
    assert (answer.status, answer.content) == (OK, "read a.txt")
    assert "files_read_v2" in [t["function"]["name"] for t in model.requests[0]["tools"]]


def test_parallel_read_only_calls_overlap_on_the_server(server: Any) -> None:
    calls = [("meet", {"key": "k", "n": 3}) for _ in range(3)]
    _, result = run_agent(server(), tool_call_turn(*calls))
    assert [(r.status, r.content) for r in results(result.messages)] == [(OK, "met")] * 3


def test_destructive_calls_never_overlap(server: Any) -> None:
    calls = [("write", {"key": f"w{i}"}) for i in range(4)]
    _, result = run_agent(server(), tool_call_turn(*calls))
    # each call saw itself alone (1 running); results in call order
    assert [r.content for r in results(result.messages)] == [f"w{i}:1" for i in range(4)]


def test_is_error_becomes_an_error_result(server: Any) -> None:
    _, result = run_agent(server(), tool_call_turn(("fail", {"reason": "disk on fire"})))
    (answer,) = results(result.messages)
    assert answer.status is ERROR
    assert "disk on fire" in answer.content


def test_images_become_a_placeholder_and_structured_content_json() -> None:
    _, result = run_agent(stdio(), tool_call_turn(("picture", {}), ("numbers", {})))
    picture, numbers = results(result.messages)
    assert picture.content.startswith("a red dot:\n[image (image/png, 8 bytes)")
    assert '"one": 1' in numbers.content


def test_an_idempotent_tool_is_retried() -> None:
    agent_options = {"execution": ExecutionOptions(backoff_base=0.0)}
    _, result = run_agent(stdio(), tool_call_turn(("flaky", {"key": "x"})), **agent_options)
    (answer,) = results(result.messages)
    assert (answer.status, answer.content) == (OK, "attempt 2")


def test_invalid_arguments_are_rejected_before_the_server_sees_them() -> None:
    _, result = run_agent(stdio(), tool_call_turn(("meet", {"key": 5})))
    (answer,) = results(result.messages)
    assert answer.status is ERROR
    assert "n" in answer.content and "required" in answer.content.lower()


# -- lifecycle -------------------------------------------------------------------------------------


def test_the_agent_opens_and_closes_the_server_around_each_run() -> None:
    model = ScriptedModel(
        [
            tool_call_turn(("pid", {})),
            text_turn("one"),
            tool_call_turn(("pid", {})),
            text_turn("two"),
        ]
    )
    agent = Agent(model, [stdio()])
    first = asyncio.run(agent.run("go"))
    second = asyncio.run(agent.run("again"))
    pids = [int(results(r.messages)[0].content) for r in (first, second)]
    assert pids[0] != pids[1]  # one server per run
    for pid in pids:  # and each was stopped (and reaped) when its run ended
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_timeout_cancels_the_call_on_the_server(server: Any, marks: Path) -> None:
    # One attempt: hang is read-only, so idempotent, and with the default two retries the
    # test waited for three timeouts (9 s of its 10; test_an_idempotent_tool_is_retried
    # tests the retries). A second is ample for the call to reach the server's handler.
    source = server(timeout=1.0, retries=0)
    _, result = run_agent(source, tool_call_turn(("hang", {"tag": "t"})))
    (answer,) = results(result.messages)
    assert answer.status is TIMEOUT
    wait_for(marks / "cancelled-t")  # notifications/cancelled reached the server


def test_cancelling_the_run_cancels_the_call_on_the_server(marks: Path) -> None:
    async def main() -> list[ToolResult]:
        model = ScriptedModel([tool_call_turn(("hang", {"tag": "c"})), text_turn("never")])
        stream = Agent(model, [stdio()]).run_stream("go")

        async def consume() -> None:
            async for _ in stream:
                pass

        task = asyncio.get_running_loop().create_task(consume())
        await asyncio.to_thread(wait_for, marks / "started-c")  # the server runs the call
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return results(stream.messages)

    (answer,) = asyncio.run(main())
    assert answer.status is CANCELLED
    wait_for(marks / "cancelled-c")


def test_a_crash_turns_in_flight_calls_into_errors_and_later_calls_say_so(marks: Path) -> None:
    first = tool_call_turn(("hang", {"tag": "h"}), ("crash", {}))
    second = tool_call_turn(("meet", {"key": "after", "n": 1}))
    _, result = run_agent(stdio(), first, second)
    hang, crash, later = results(result.messages)
    assert hang.status is ERROR and crash.status is ERROR
    for answer in (hang, crash):
        assert "crashed or closed the connection" in answer.content
    assert later.status is ERROR
    assert "is not running any more" in later.content
    assert "crash requested by the test" in later.content  # the server's last stderr line


def test_list_changed_refreshes_the_tools_between_rounds(server: Any) -> None:
    model, result = run_agent(server(), tool_call_turn(("grow", {})), tool_call_turn(("extra", {})))
    grown, extra = results(result.messages)
    assert (grown.content, extra.status, extra.content) == ("grown", OK, "extra here")
    offered = [[t["function"]["name"] for t in r["tools"]] for r in model.requests]
    assert "extra" not in offered[0] and "extra" in offered[1]


def test_two_servers_with_the_same_tools_clash_unless_prefixed() -> None:
    model = ScriptedModel([text_turn("unused")])
    with pytest.raises(CallerError, match="two tools are named 'meet'"):
        asyncio.run(Agent(model, [stdio(), stdio()]).run("go"))
    assert model.requests == []  # raised before the first request
    calls = tool_call_turn(("a_meet", {"key": "p", "n": 1}), ("b_meet", {"key": "q", "n": 1}))
    _, result = run_agent_many([stdio(prefix="a"), stdio(prefix="b")], calls)
    assert [r.content for r in results(result.messages)] == ["met", "met"]


def run_agent_many(sources: list[Any], *turns: list[dict[str, Any]]) -> Any:
    model = ScriptedModel([*turns, text_turn("done")])
    return model, asyncio.run(Agent(model, sources).run("go"))


def test_an_opened_toolset_can_be_given_to_the_agent() -> None:
    async def main() -> list[ToolResult]:
        async with stdio() as tools:
            model = ScriptedModel(
                [tool_call_turn(("grow", {})), tool_call_turn(("extra", {})), text_turn("ok")]
            )
            result = await Agent(model, tools).run("go")
            return results(result.messages)

    grown, extra = asyncio.run(main())
    assert (grown.status, extra.status) == (OK, OK)


# -- bad input ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["-c", "import sys; sys.stderr.write('bad config\\n'); sys.exit(2)"],
            "exited .* bad config",
        ),
        (
            ["-c", "print('hello', flush=True); import sys; sys.stdin.read()"],
            "does not speak MCP.*'hello'",
        ),
        ([RAW_SERVER], "'broken'.* not valid JSON Schema"),
    ],
    ids=["exits-at-once", "not-mcp", "invalid-schema"],
)
def test_a_bad_server_fails_before_the_first_request(args: list[str], expected: str) -> None:
    model = ScriptedModel([text_turn("unused")])
    agent = Agent(model, [MCPToolset.stdio(sys.executable, args)])
    with pytest.raises(MCPServerError, match=expected) as caught:
        asyncio.run(agent.run("go"))
    assert model.requests == []
    assert caught.value.fault == "tool"
    assert "\n" not in str(caught.value)


def test_a_missing_command_is_named() -> None:
    async def main() -> None:
        async with MCPToolset.stdio("toolwire-no-such-server", ["--x"]):
            pass

    with pytest.raises(MCPServerError, match=r"'toolwire-no-such-server --x'.*command not found"):
        asyncio.run(main())


def test_an_http_server_that_does_not_answer() -> None:
    async def main() -> None:
        async with MCPToolset.http("http://127.0.0.1:9/mcp", startup_timeout=20):
            pass

    with pytest.raises(
        MCPServerError, match=re.escape("'http://127.0.0.1:9/mcp' could not be opened")
    ):
        asyncio.run(main())


@pytest.mark.slow
def test_headers_reach_the_http_server(http_server: str) -> None:
    source = MCPToolset.http(http_server, headers={"X-Toolwire-Test": "present"})
    _, result = run_agent(source, tool_call_turn(("header", {"name": "x-toolwire-test"})))
    assert results(result.messages)[0].content == "present"


def test_a_server_that_never_answers_initialize() -> None:
    async def main() -> None:
        args = ["-c", "import sys; sys.stdin.read()"]
        async with MCPToolset.stdio(sys.executable, args, startup_timeout=1.0):
            pass

    with pytest.raises(MCPServerError, match="did not answer initialize within 1 s"):
        asyncio.run(main())


def test_headers_and_credentials_never_show() -> None:
    source = MCPToolset.http(
        "https://user:secret@example.com/mcp?token=abc", headers={"Authorization": "Bearer xyz"}
    )
    assert repr(source) == "MCPToolset.http('https://example.com/mcp')"
    assert "secret" not in repr(vars(source)["label"]) and "xyz" not in repr(source)


@pytest.mark.parametrize(
    "make",
    [
        lambda: MCPToolset.stdio(""),
        lambda: MCPToolset.stdio("python", "server.py"),
        lambda: MCPToolset.stdio("python", env={"A": 1}),
        lambda: MCPToolset.http("ftp://example.com"),
        lambda: MCPToolset.stdio("python", prefix=""),
        lambda: MCPToolset.stdio("python", timeout=0),
    ],
)
def test_bad_arguments_are_caller_errors(make: Any) -> None:
    with pytest.raises(CallerError):
        make()


# -- what is trusted from a server ------------------------------------------------------------


def test_annotations_are_not_trusted_by_default() -> None:
    async def main() -> None:
        async with stdio(trust_annotations=False) as tools:
            for name in ("meet", "write", "flaky", "fail"):
                tool = tools[name]
                assert (tool.side_effects, tool.concurrency_safe, tool.idempotent) == (
                    True,
                    False,
                    False,
                ), name
                assert tool.retries == 0

    asyncio.run(main())
    assert stdio(trust_annotations=False).trust_annotations is False
    assert MCPToolset.stdio("python").trust_annotations is False
    assert MCPToolset.http("http://127.0.0.1:9/mcp").trust_annotations is False


def test_a_tool_that_claims_to_be_read_only_still_needs_approval() -> None:
    """``meet`` says readOnlyHint: without trust, side_effects="ask" still asks."""
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.name)
        return False

    call = tool_call_turn(("meet", {"key": "k", "n": 1}))
    options = {"permissions": Permissions(side_effects="ask"), "approve": approve}
    _, result = run_agent(stdio(trust_annotations=False), call, **options)
    (answer,) = results(result.messages)
    assert answer.status is ToolStatus.DENIED and asked == ["meet"]
    _, trusted = run_agent(stdio(trust_annotations=True), call, **options)
    assert results(trusted.messages)[0].content == "met"  # the mapping, when trusted


def test_tool_policy_overrides_per_tool(server: Any) -> None:
    policy = {"meet": {"side_effects": False, "concurrency_safe": True, "idempotent": True}}
    calls = [("meet", {"key": "p", "n": 3}) for _ in range(3)]
    _, result = run_agent(
        server(trust_annotations=False, tool_policy=policy), tool_call_turn(*calls)
    )
    assert [r.content for r in results(result.messages)] == ["met"] * 3  # they overlapped

    async def main() -> None:
        written = {"write": {"side_effects": True}}
        async with stdio(trust_annotations=True, tool_policy=written) as tools:
            assert tools["meet"].side_effects is False  # trusted mapping
            assert tools["write"].side_effects is True

    asyncio.run(main())


@pytest.mark.parametrize(
    "policy",
    [
        {"meet": {"side_effect": False}},
        {"meet": {"side_effects": "no"}},
        {"meet": ["side_effects"]},
        {3: {"side_effects": False}},
        ["meet"],
    ],
)
def test_a_bad_tool_policy_is_a_caller_error(policy: Any) -> None:
    with pytest.raises(CallerError, match="tool_policy"):
        MCPToolset.stdio("python", tool_policy=policy)
    with pytest.raises(CallerError, match="trust_annotations"):
        MCPToolset.http("http://127.0.0.1:9/mcp", trust_annotations=1)  # type: ignore[arg-type]


# -- servers that never finish opening or reloading -------------------------------------------------


def open_and_close(source: MCPToolset) -> None:
    async def main() -> None:
        async with source:
            pass

    asyncio.run(main())


def test_a_server_that_never_answers_tools_list() -> None:
    with pytest.raises(MCPServerError, match="did not list its tools within 1 s"):
        open_and_close(raw("silent-list", startup_timeout=1.0))


def test_a_server_that_pages_forever_is_stopped_at_the_page_cap() -> None:
    with pytest.raises(MCPServerError, match=r"more than \d+ pages of tools") as caught:
        open_and_close(raw("endless-pages"))
    assert caught.value.fault == "tool"


def test_a_server_with_too_many_tools_is_refused() -> None:
    with pytest.raises(MCPServerError, match=r"more than \d+ tools"):
        open_and_close(raw("many-tools"))


def test_a_reload_that_is_never_answered_ends_the_run_with_an_error() -> None:
    source = raw("silent-reload", startup_timeout=1.0)
    model = ScriptedModel([tool_call_turn(("grow", {})), text_turn("unused")])
    with pytest.raises(MCPServerError, match="did not list its tools within 1 s"):
        asyncio.run(Agent(model, [source]).run("go"))
    assert len(model.requests) == 1  # the reload came between the rounds


# -- schemas from a server ---------------------------------------------------------------------


_REDOS_RUN = """
import asyncio, json, sys
from toolwire import Agent, MCPToolset
from toolwire.messages import ToolResult
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

calls = tool_call_turn(("match", {"text": "a" * 36 + "!"}), ("match", {"text": "aaaa"}))
model = ScriptedModel([calls, text_turn("done")])
source = MCPToolset.stdio(sys.executable, [sys.argv[1], "redos"])
result = asyncio.run(Agent(model, [source]).run("go"))
answers = [m for m in result.messages if isinstance(m, ToolResult)]
print(json.dumps([[a.status.value, a.content] for a in answers]))
"""


def test_a_catastrophic_pattern_is_checked_in_linear_time() -> None:
    """``^(a+)+$`` against 36 a's and a ``!`` backtracks for hours in Python's ``re``,
    which holds the GIL: the run goes in a child process, which a bound can stop."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _REDOS_RUN, RAW_SERVER],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("checking the pattern did not finish: it backtracks")
    refused, accepted = json.loads(done.stdout)
    assert refused[0] == "error" and "does not match" in refused[1]
    assert accepted == ["ok", "match done"]
