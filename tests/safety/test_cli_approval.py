"""``toolwire run`` asks before side effects; ``--yes`` allows; no terminal refuses."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from toolwire.cli import main
from toolwire.cli.approve import TerminalApprover, cli_permissions
from toolwire.testing import text_turn, tool_call_turn

from ..providers.faultserver import FaultServer, sse
from . import cli_tools
from .helpers_sse import as_sse

TOOLS = "tests.safety.cli_tools:TOOLS"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cli_tools.WRITES.clear()
    turn = tool_call_turn(("write_note", {"text": "hello"}), ("read_notes", {}))
    with FaultServer(sse(as_sse(turn)), sse(as_sse(text_turn("done")))) as s:
        yield s


def run(server: FaultServer, *extra: str) -> int:
    return main(
        [
            "run",
            "note it",
            "--model",
            "openai:demo",
            "--base-url",
            f"{server.url}/v1",
            "--tools",
            TOOLS,
            *extra,
        ]
    )


def test_yes_allows_every_call(server: FaultServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(server, "--yes") == 0
    assert cli_tools.WRITES == ["hello"]


def test_without_a_terminal_side_effects_are_refused(
    server: FaultServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert run(server) == 0
    out = capsys.readouterr().out
    assert cli_tools.WRITES == []
    assert "denied" in out  # the run's failure report names the denied call
    sent = server.requests[1].body
    sent = json.loads(sent) if isinstance(sent, (str, bytes)) else sent
    contents = [m.get("content", "") for m in sent["messages"] if m["role"] == "tool"]
    assert any("--yes" in c for c in contents)


def test_deny_pattern_wins_over_yes(server: FaultServer) -> None:
    assert run(server, "--yes", "--deny", "write_*") == 0
    assert cli_tools.WRITES == []


class Request:
    def __init__(self, name: str, arguments: object, *, repaired: bool = False) -> None:
        self.name, self.input, self.repaired = name, arguments, repaired


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("y\n", True),
        ("YES\n", True),
        ("\n", False),
        ("n\n", False),
        ("too risky\n", "the user refused: too risky"),
        ("", None),
    ],
)
def test_the_terminal_approver_reads_an_answer(typed: str, answer: object) -> None:
    out = io.StringIO()
    approver = TerminalApprover(io.StringIO(typed), out, interactive=True)
    got = approver(Request("write_note", {"text": "x" * 1000}))
    if answer is None:
        assert isinstance(got, str) and "end of input" in got
    else:
        assert got == answer
    question = out.getvalue()
    assert "allow write_note" in question and len(question) < 600


def test_the_cli_policy() -> None:
    asking = cli_permissions(yes=False, deny=None, ask=["read_*"])
    assert asking.decide("write_note", side_effects=True) == "ask"
    assert asking.decide("read_notes", side_effects=False) == "ask"
    assert asking.decide("look", side_effects=False) == "allow"
    assert cli_permissions(yes=True, deny=["rm"], ask=None).decide("rm") == "deny"
    assert cli_permissions(yes=True, deny=None, ask=None).decide("anything") == "allow"


def test_the_prompt_shows_the_repaired_input_and_says_it_was_repaired(
    server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's arguments are malformed: the question shows what will really run."""
    turn = tool_call_turn(("find_notes", '{"query": "from repair",'))
    out = io.StringIO()
    approver = TerminalApprover(io.StringIO("n\n"), out, interactive=True)
    monkeypatch.setattr("toolwire.cli.approve.TerminalApprover", lambda: approver)
    with FaultServer(sse(as_sse(turn)), sse(as_sse(text_turn("done")))) as fresh:
        assert run(fresh, "--ask", "find_*") == 0
    question = out.getvalue()
    assert 'allow find_notes {"query": "from repair"} (repaired' in question
    assert cli_tools.WRITES == []
