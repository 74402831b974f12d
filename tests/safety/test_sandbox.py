"""The Sandbox API: settings, bad input, the async path, and the unisolated fallback."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from toolwire import CallerError, Sandbox, SandboxUnavailableError
from toolwire.safety import SandboxWarning
from toolwire.safety.bwrap import Limits, Plan, bwrap_argv, limits_argv

from .conftest import MakeSandbox, processes_with, unique_marker


@pytest.mark.parametrize(
    "kwargs",
    [
        {"cpu_seconds": 0},
        {"memory_mb": -1},
        {"wall_seconds": "30"},
        {"max_output_bytes": 1.5},
        {"max_output_bytes": True},
        {"cpu_seconds": float("nan")},
        {"wall_seconds": float("inf")},
        {"processes": 0},
        {"env": {"A": 1}},
        {"env": ["A=1"]},
        {"network": "no"},
        {"read_only_paths": "/usr"},
        {"read_only_paths": ["relative/path"]},
        {"read_only_paths": ["/does/not/exist"]},
    ],
)
def test_bad_settings_are_caller_errors(workspace: Path, kwargs: dict[str, Any]) -> None:
    with pytest.raises(CallerError):
        Sandbox(workspace, **kwargs)


def test_a_workspace_that_does_not_exist(tmp_path: Path) -> None:
    with pytest.raises(CallerError, match="not an existing directory") as caught:
        Sandbox(tmp_path / "missing")
    assert caught.value.fault == "caller"
    (tmp_path / "file").write_text("")
    with pytest.raises(CallerError):
        Sandbox(tmp_path / "file")


@pytest.mark.parametrize("argv", [[], "ls -la", ["ls", 3], ["a\0b"], None])
def test_bad_commands(make_sandbox: MakeSandbox, argv: Any) -> None:
    with pytest.raises(CallerError):
        make_sandbox().run_sync(argv)


def test_stdin_reaches_the_command(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox().run_sync(["sh", "-c", "tr a-z A-Z"], stdin="hello")
    assert (result.returncode, result.stdout, result.stderr) == (0, "HELLO", "")
    with pytest.raises(CallerError):
        make_sandbox().run_sync(["cat"], stdin=b"bytes")  # type: ignore[arg-type]


def test_exit_status_and_streams(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox().run_sync(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (result.returncode, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and result.killed is None and result.isolated
    assert "exit status 3" in result.render()


def test_async_run_and_cancellation_kills_the_command(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(wall_seconds=60)
    marker = f"76543{os.getpid() % 1000}"

    async def main() -> None:
        result = await sandbox.run(["sh", "-c", "echo async"])
        assert result.stdout == "async\n"
        task = asyncio.ensure_future(sandbox.run(["sh", "-c", f"echo up; sleep {marker}"]))
        while not _running(marker):  # the command started
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not _running(marker)

    asyncio.run(asyncio.wait_for(main(), 30))


def _running(marker: str) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if f"sleep\0{marker}".encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def test_missing_bubblewrap_says_what_to_install(workspace: Path, no_bwrap: None) -> None:
    with pytest.raises(SandboxUnavailableError) as caught:
        Sandbox(workspace)
    error = caught.value
    assert error.fault == "caller"
    assert "bubblewrap" in str(error) and "apt-get install bubblewrap" in str(error)
    assert "allow_unisolated=True" in str(error)


def test_the_unisolated_fallback_warns_and_keeps_the_limits(
    workspace: Path, no_bwrap: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_TEST_SECRET", "s3cr3t-value")
    sandbox = Sandbox(workspace, allow_unisolated=True, cpu_seconds=1, wall_seconds=20)
    assert not sandbox.isolated and "NOT isolated" in repr(sandbox)
    with pytest.warns(SandboxWarning, match="WITHOUT ISOLATION"):
        result = sandbox.run_sync(["sh", "-c", "env; pwd"])
    assert not result.isolated and "[not isolated]" in result.render()
    assert "s3cr3t-value" not in result.stdout
    assert result.stdout.splitlines()[-1] == str(workspace)
    looping = sandbox.run_sync(["python3", "-c", "while True: pass"])  # warned once only
    assert looping.killed == "cpu"


def test_the_command_line_is_built_as_documented() -> None:
    plan = Plan(
        workspace="/host/ws",
        read_only=("/data/set",),
        network=False,
        env={"PATH": "/usr/bin"},
        tmp_bytes=1024,
        as_root=True,
        layout=(("usr", None), ("bin", "usr/bin")),
    )
    argv = bwrap_argv("/usr/bin/bwrap", plan)
    assert argv[0] == "/usr/bin/bwrap" and "--" not in argv  # options only
    assert "--unshare-net" in argv and "--unshare-pid" in argv and "--die-with-parent" in argv
    assert "--unshare-user" not in argv  # privileged: setpriv drops to uid 65534 instead
    joined = " ".join(argv)
    assert "--ro-bind /usr /usr" in joined and "--symlink usr/bin /bin" in joined
    assert "--bind /host/ws /workspace" in joined and "--ro-bind /data/set /data/set" in joined
    assert "--clearenv" in argv and "/home" not in joined and "/root" not in joined
    networked = bwrap_argv("bwrap", Plan(**{**plan.__dict__, "network": True, "as_root": False}))
    assert "--unshare-net" not in networked and "--unshare-user" in networked
    limits = limits_argv("prlimit", Limits(10, 2**29, 2**20, 256, 64))
    assert limits == [
        "prlimit",
        "--cpu=10:11",
        "--as=536870912",
        "--fsize=1048576",
        "--nofile=256",
        "--nproc=64",
        "--core=0",
        "--",
    ]


def test_network_true_shares_the_host_network(make_sandbox: MakeSandbox) -> None:
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        result = make_sandbox(network=True).run_sync(
            [
                "python3",
                "-c",
                f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('ok')",
            ]
        )
        assert result.stdout == "ok\n", result
        server.settimeout(5)
        connection, _ = server.accept()
        connection.close()


def test_a_root_caller_runs_commands_unprivileged(make_sandbox: MakeSandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("checks the root path (CI runs as root)")
    result = make_sandbox().run_sync(
        ["sh", "-c", "id -u; grep -E '^(CapEff|NoNewPrivs)' /proc/self/status"]
    )
    lines = result.stdout.split("\n")
    assert lines[0] == "65534"
    assert "CapEff:\t0000000000000000" in lines and "NoNewPrivs:\t1" in lines


def test_sandbox_warning_is_a_user_warning() -> None:
    assert issubclass(SandboxWarning, UserWarning)


_ESCAPE = (
    "import subprocess, sys; "
    "subprocess.Popen(['sleep', sys.argv[1]], start_new_session=True); "
    "print('escaped', flush=True); "
    "sys.exit(0) if sys.argv[2] == 'exit' else __import__('time').sleep(600)"
)


@pytest.mark.parametrize("how", ["exit", "wall"])
def test_unisolated_a_child_in_its_own_session_dies_with_the_command(
    workspace: Path, no_bwrap: None, how: str
) -> None:
    """Without namespaces, setsid() leaves the process group; the reaper still kills it."""
    marker = unique_marker("4")
    sandbox = Sandbox(workspace, allow_unisolated=True, wall_seconds=3)
    with pytest.warns(SandboxWarning) as warned:
        result = sandbox.run_sync(["python3", "-c", _ESCAPE, marker, how])
    left = processes_with(f"sleep\0{marker}")
    for pid in left:  # a failing run must not leave them behind
        os.kill(int(pid), 9)
    assert left == []
    assert result.stdout == "escaped\n", result
    assert result.timed_out is (how == "wall")
    if how == "wall":
        assert result.killed == "wall" and result.returncode == 128 + 9
    assert "descendants are killed" in str(warned[0].message)


def test_as_root_a_planted_link_cannot_hand_a_root_directory_to_the_sandbox(
    make_sandbox: MakeSandbox, workspace: Path, tmp_path: Path
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the workspace is handed over only when toolwire runs as root")
    private = tmp_path / "root-only"
    private.mkdir(mode=0o700)
    planted = make_sandbox().run_sync(
        ["sh", "-c", f"ln -s {private} link && mkdir real && echo planted"]
    )
    assert planted.stdout == "planted\n", planted
    for inner in ("link", "real", "real/../link", "link/.."):
        with pytest.raises(CallerError, match="not safe to hand to the sandbox uid"):
            Sandbox(workspace / inner)
    assert private.stat().st_uid == 0 and (workspace / "real").stat().st_uid == 65534
    beside = tmp_path / "beside"
    beside.mkdir()
    os.symlink(beside, tmp_path / "beside-link")
    with pytest.raises(CallerError, match="symbolic link"):
        Sandbox(tmp_path / "beside-link")
    assert beside.stat().st_uid == 0
    make_sandbox(workspace=beside)  # the same directory by its own path is fine
    assert beside.stat().st_uid == 65534


def test_without_a_keyring_filter_for_the_machine_the_sandbox_refuses(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolwire.safety import sandbox as module

    monkeypatch.setattr(module, "_keyring_filter", lambda: None)
    module._isolation.cache_clear()
    try:
        with pytest.raises(SandboxUnavailableError, match="no seccomp filter"):
            Sandbox(workspace)
    finally:
        module._isolation.cache_clear()
