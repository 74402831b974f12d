"""An unusable log file: a clear error naming it; the run goes on unless logging is strict."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolwire import Agent, AuditLog, AuditLogError
from toolwire.cli import main
from toolwire.observe import AuditLogWarning
from toolwire.observe.schema import SCHEMA_VERSION
from toolwire.testing import ScriptedModel, text_turn, tool_call_turn

from .helpers import search


def _run(log: AuditLog) -> tuple[ScriptedModel, str]:
    model = ScriptedModel([tool_call_turn(("search", {"q": "a"})), text_turn("fine")])
    return model, Agent(model, [search], log=log).run_sync("go").output


def _newer(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()


def _corrupt(path: Path) -> None:
    path.write_bytes(b"this is not an SQLite database, just some bytes" * 100)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A log whose write lock another connection holds."""
    path = tmp_path / "locked.db"
    AuditLog(path).open().close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    yield path
    holder.execute("ROLLBACK")
    holder.close()


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A log file that cannot be written (immutable for root, mode 0444 otherwise)."""
    path = tmp_path / "ro.db"
    AuditLog(path).open().close()
    for extra in tmp_path.glob("ro.db-*"):
        extra.unlink()
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "+i", str(path)], check=False).returncode != 0:
            pytest.skip("running as root, and chattr +i is not available to make a file read-only")
        yield path
        subprocess.run([chattr, "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        yield path


CASES = {
    "newer": ("written by a newer toolwire", _newer),
    "corrupt": ("not a usable SQLite database", _corrupt),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_warns_and_the_run_goes_on(tmp_path: Path, case: str) -> None:
    expected, spoil = CASES[case]
    path = tmp_path / f"{case}.db"
    AuditLog(path).open().close()
    spoil(path)
    with pytest.warns(AuditLogWarning, match=expected) as caught:
        _, output = _run(AuditLog(path))
    assert output == "fine"
    assert str(path) in str(caught[0].message)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_fails_a_strict_run_before_the_first_request(tmp_path: Path, case: str) -> None:
    expected, spoil = CASES[case]
    path = tmp_path / f"{case}.db"
    AuditLog(path).open().close()
    spoil(path)
    model = ScriptedModel([text_turn("never")])
    with pytest.raises(AuditLogError, match=expected) as caught:
        Agent(model, [], log=AuditLog(path, strict=True)).run_sync("go")
    assert caught.value.path == str(path) and str(path) in str(caught.value)
    assert model.requests == []


def test_locked_file(locked: Path) -> None:
    with pytest.warns(AuditLogWarning, match="locked"):
        assert _run(AuditLog(locked, timeout=0.05))[1] == "fine"
    model = ScriptedModel([text_turn("never")])
    with pytest.raises(AuditLogError, match=f"{locked}.*locked"):
        Agent(model, [], log=AuditLog(locked, strict=True, timeout=0.05)).run_sync("go")
    assert model.requests == []


def test_read_only_file(read_only: Path) -> None:
    with pytest.warns(AuditLogWarning, match=f"{read_only}.*cannot be written"):
        assert _run(AuditLog(read_only))[1] == "fine"
    with pytest.raises(AuditLogError, match="cannot be written"):
        Agent(ScriptedModel([text_turn("x")]), [], log=AuditLog(read_only, strict=True)).run_sync(
            "go"
        )


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_names_the_file(tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    expected, spoil = CASES[case]
    path = tmp_path / f"{case}.db"
    AuditLog(path).open().close()
    spoil(path)
    for command in (["log"], ["inspect", "last"]):
        assert main([*command, "--db", str(path), "--json"]) == 2
        err = capsys.readouterr().err
        assert str(path) in err and expected in err and err.count("\n") == 1


def test_cli_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.db"
    assert main(["log", "--db", str(path)]) == 2
    assert f"audit log {path}: no such file" in capsys.readouterr().err
    assert not path.exists()  # reading never creates a log


def test_lock_taken_after_the_log_opened(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    log = AuditLog(path, timeout=0.05)
    assert _run(log)[1] == "fine"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.warns(AuditLogWarning, match=f"{path}.*locked.*rows of the run were lost"):
            assert _run(log)[1] == "fine"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _run(log)[1] == "fine"  # the lock is gone: logging goes on
    assert len(log.runs()) == 2
    log.close()
