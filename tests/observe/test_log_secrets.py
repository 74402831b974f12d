"""No secret reaches any row of the audit log, in any shape it is stored in.

Arguments and results are stored as text in ``calls`` and again JSON-encoded inside
``requests.tool_calls`` and ``requests.messages``; settings and tools are JSON too. A
secret must be redacted in every one of them, and the readers (``inspect --json``,
the trace page, ``assert_replays``) then never show it. Signed provider data stays as
it is; ``redact=False`` keeps everything.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from toolwire import Agent, AuditLog, tool
from toolwire.cli import main
from toolwire.messages import AssistantMessage, ReasoningPart, TextPart, UserMessage
from toolwire.observe import Redactor
from toolwire.observe.replay import assert_replays
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

PASSWORD = "hunter2-correct-horse"
PIN = 482913
KEY = "sk-ant-api03-SECRETSECRETSECRETSECRET"
# A thinking signature that happens to look like a JWT: signed data, never rewritten.
SIGNATURE = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ0aGlua2luZyJ9.c2lnbmF0dXJlLWJ5dGVz"


@tool
def login(user: str, password: str, pin: int) -> str:
    """Log in (echoes a config line that holds the secret back, as tools do)."""
    return json.dumps({"user": user, "config": f"DB_PASSWORD={password}", "pin": pin})


def _run(path: Path, **log_options: object) -> str:
    model = ScriptedModel(
        [
            tool_call_turn(("login", {"user": "ann", "password": PASSWORD, "pin": PIN})),
            text_turn("logged in"),
        ]
    )
    log_options.setdefault("redact", Redactor(names=["pin"]))  # the README's example
    log = AuditLog(path, **log_options)  # type: ignore[arg-type]
    history = [
        UserMessage("earlier"),
        AssistantMessage([ReasoningPart("thinking", signature=SIGNATURE), TextPart("ok")]),
        UserMessage("log in as ann"),
    ]
    agent = Agent(
        model,
        [login],
        log=log,
        settings={"api_key": KEY, "extra_headers": {"x-api-key": "hdr-secret-value"}},
    )
    result = agent.run_sync(history=history)
    log.close()
    return result.run_id


def _file_bytes(directory: Path) -> bytes:
    return b"".join(p.read_bytes() for p in directory.iterdir() if p.is_file())


def _all_text(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        texts = []
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in conn.execute(f"SELECT * FROM {table}"):
                texts += [str(v) for v in row]
        return "\n".join(texts)
    finally:
        conn.close()


def test_no_row_holds_a_secret_in_any_encoding(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _run(path)
    text = _all_text(path)
    stored = _file_bytes(tmp_path)
    for secret in (PASSWORD, str(PIN), KEY, "hdr-secret-value"):
        assert secret not in text, secret
        assert secret.encode() not in stored, secret
    # JSON-escaped inside requests.tool_calls / requests.messages: redacted before encoding.
    conn = sqlite3.connect(path)
    [(calls_json, messages_json)] = conn.execute(
        "SELECT tool_calls, messages FROM requests WHERE seq = 1"
    ).fetchall()
    [(settings,)] = conn.execute("SELECT settings FROM runs").fetchall()
    conn.close()
    arguments = json.loads(json.loads(calls_json)[0]["arguments"])
    assert arguments == {"user": "ann", "password": "[REDACTED]", "pin": "[REDACTED]"}
    assert json.loads(settings)["provider"]["api_key"] == "[REDACTED]"
    # The signed thinking part is kept byte for byte (changing it breaks the turn).
    reasoning = [
        part
        for message in json.loads(messages_json)
        if message.get("role") == "assistant"
        for part in message["parts"]
        if part["kind"] == "reasoning"
    ]
    assert reasoning[0]["signature"] == SIGNATURE


def test_readers_show_no_secret_and_the_replay_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    _run(path)
    assert main(["inspect", "last", "--db", str(path), "--json"]) == 0
    assert main(["trace", "last", "--db", str(path), "--html", str(tmp_path / "t.html")]) == 0
    shown = capsys.readouterr().out + (tmp_path / "t.html").read_text()
    assert PASSWORD not in shown and KEY not in shown
    # The log is self-consistent: a replay from it makes the same (redacted) calls.
    try:
        assert_replays(path)
    except AssertionError as exc:  # whatever differs, the message holds no secret
        assert PASSWORD not in str(exc) and str(PIN) not in str(exc)


def test_redact_false_keeps_everything_verbatim(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _run(path, redact=False)
    text = _all_text(path)
    assert PASSWORD in text and KEY in text and "[REDACTED]" not in text
    assert_replays(path)  # exact: the replayed calls are the logged ones


def test_a_custom_redactor_applies_to_structured_values(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    _run(path, redact=Redactor(names=["user", "pin"]))
    text = _all_text(path)
    assert '"ann"' not in text and '\\"ann\\"' not in text


def test_redact_must_be_a_redactor_or_a_bool() -> None:
    from toolwire.errors import CallerError

    with pytest.raises(CallerError, match="redact"):
        AuditLog(":memory:", redact="yes")  # type: ignore[arg-type]


class _Client:
    """A setting JSON has no form for: logged as its repr."""

    def __repr__(self) -> str:
        return f"Client(api_key='{KEY}')"


def test_a_setting_logged_as_its_repr_is_redacted(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    model = ScriptedModel([text_turn("hi")])
    with AuditLog(path) as log:
        Agent(model, [], log=log, settings={"client": _Client()}).run_sync("go")
    with closing(sqlite3.connect(path)) as conn:
        [(settings,)] = conn.execute("SELECT settings FROM runs").fetchall()
    assert KEY not in settings and "Client(api_key=" in settings
