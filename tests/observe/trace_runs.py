"""Logged runs for the trace page's tests: several rounds with tokens, an approval asked
during the run, a run paused for approval and resumed, and hostile text everywhere the
model and the tools write."""

from __future__ import annotations

from pathlib import Path

from toolwire import Agent, AuditLog, ExecutionOptions, Permissions, tool
from toolwire.cli import main
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn
from toolwire.turn import ToolRequest

from .helpers import search, write

HOSTILE = '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> & "q"'
ANSWER = f"The answer is 42. {HOSTILE}"
USAGE = ({"prompt_tokens": 812, "completion_tokens": 45}, {"prompt_tokens": 930, "completion_tokens": 17},
         {"prompt_tokens": 1004, "completion_tokens": 9})  # fmt: skip


@tool
def delete(path: str) -> str:
    """Delete a file (a side effect: asked about)."""
    return f"deleted {path} {HOSTILE}"


@tool(side_effects=False)
def read(path: str) -> str:
    """Read a file."""
    return f"text of {path}"


ASKED: list[str] = []


def approve(request: ToolRequest) -> bool:
    """Approves at once (what a person at the terminal does, slower)."""
    ASKED.append(request.id)
    return True


def three_rounds(db: Path) -> None:
    """Round 1: a parallel batch and a failing write; round 2: delete, approved during
    the run; round 3: the answer. Each request reports its tokens."""
    model = ScriptedModel(
        [
            tool_call_turn(("search", {"q": "a"}, "c-a"), ("search", {"q": HOSTILE}, "c-b"),
                           ("write", {"path": "p"}, "c-w"), fragment=3, usage=USAGE[0]),
            tool_call_turn(("delete", {"path": "x"}, "c-d"), usage=USAGE[1]),
            text_turn(ANSWER, usage=USAGE[2]),
        ],
        chunk_delay=0.002,
    )  # fmt: skip
    agent = Agent(model, [search, write, delete], log=str(db),
                  permissions=Permissions(ask=["delete"]), approve=approve)  # fmt: skip
    agent.run_sync(f"go {HOSTILE}")


def paused_and_resumed(db: Path, answer: bool | str = True) -> str:
    """A run paused on delete(b) (c2), answered ``answer`` by alice, resumed."""
    tools = [read, delete]
    ask = Permissions(ask=["delete"])
    first = ScriptedModel(
        [tool_call_turn(("read", {"path": "a"}, "c1"), ("delete", {"path": "b"}, "c2"))]
    )
    run_id = (
        Agent(first, tools, permissions=ask, approve="pause", log=AuditLog(db))
        .run_sync("tidy up")
        .run_id
    )
    second = Agent(ScriptedModel([text_turn("tidied")]), tools, permissions=ask,
                   approve="pause", log=AuditLog(db))  # fmt: skip
    second.resume_sync(run_id, approvals={"c2": answer}, by="alice")
    return run_id


FLAKY: list[int] = []


@tool(idempotent=True, retries=3)
async def flaky(q: str) -> str:
    """Fails twice, then answers."""
    FLAKY.append(1)
    if len(FLAKY) <= 2:
        raise ConnectionError("try again")
    return f"found {q}"


def retried(db: Path) -> None:
    """A call whose tool failed twice and was retried (a short backoff)."""
    FLAKY.clear()
    model = ScriptedModel([tool_call_turn(("flaky", {"q": "a"}, "c-f")), text_turn("found")])
    options = ExecutionOptions(backoff_base=0.01, backoff_max=0.02)
    Agent(model, [flaky], log=str(db), execution=options).run_sync("find a")
    assert len(FLAKY) == 3


def page_of(db: Path, out: Path, run: str = "last") -> Path:
    """``toolwire trace RUN --db DB --html OUT``."""
    assert main(["trace", run, "--db", str(db), "--html", str(out)]) == 0
    return out
