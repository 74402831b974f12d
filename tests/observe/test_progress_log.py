"""Progress in the audit log: one row per ``ToolProgress``, its text made as a result's
is, redacted like every text of the log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from toolwire import Agent, AuditLog, ToolContext, tool
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import rows

KEY = "sk-ant-api03-SECRETSECRETSECRETSECRET"


@tool
def deploy(service: str) -> Iterator[object]:
    """Deploys, reporting each stage (one of them leaks a key, as tools do)."""
    yield {"stage": "build", "service": service}
    yield f"pushing with ANTHROPIC_API_KEY={KEY}"
    yield "deployed"


@tool
async def notify(ctx: ToolContext) -> str:
    """Reports through its context."""
    ctx.progress(["queued", 1])
    return "sent"


def test_progress_is_logged_in_order_as_text_and_redacted(tmp_path: Path) -> None:
    path = str(tmp_path / "runs.db")
    model = ScriptedModel(
        [tool_call_turn(("deploy", {"service": "api"}), ("notify", {})), text_turn("done")]
    )
    with AuditLog(path) as log:
        result = Agent(model, [deploy, notify], log=log).run_sync("ship it")
    logged = rows(
        path, "SELECT seq, round, idx, tool, value FROM progress WHERE run_id = ? ORDER BY seq",
        result.run_id,
    )  # fmt: skip
    by_tool = {
        tool: [(r, i, v) for _, r, i, t, v in logged if t == tool] for tool in ("deploy", "notify")
    }
    assert by_tool["deploy"][0] == (1, 0, '{"stage": "build", "service": "api"}')
    assert by_tool["deploy"][1][2].startswith("pushing with ANTHROPIC_API_KEY=")
    assert KEY not in by_tool["deploy"][1][2]  # redacted, as a result would be
    assert len(by_tool["deploy"]) == 2  # the last value is the result, not progress
    assert by_tool["notify"] == [(1, 1, '["queued", 1]')]
    [(status, content)] = rows(
        path, "SELECT status, result FROM calls WHERE run_id = ? AND tool = 'deploy'", result.run_id
    )
    assert (status, content) == ("ok", "deployed")
