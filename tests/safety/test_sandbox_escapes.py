"""Escape tests: each attempt fails safely, with a clear result, and the host is untouched.

These run real bubblewrap sandboxes (skipped, saying why, where namespaces are not
available). CI runs them as root, where the commands run as uid 65534.
"""

from __future__ import annotations

import os
import secrets
import socket
from pathlib import Path

import pytest

from .conftest import MakeSandbox, processes_with, unique_marker

pytestmark = pytest.mark.usefixtures("isolated")


def py(code: str) -> list[str]:
    return ["python3", "-c", code]


def test_python_is_visible_and_the_workspace_writable(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    result = make_sandbox().run_sync(
        py("import os, sys; open('out.txt', 'w').write('hi'); print(sys.executable, os.getcwd())")
    )
    assert result.ok, result
    assert result.stdout.split() == ["/usr/bin/python3", "/workspace"]
    assert (workspace / "out.txt").read_text() == "hi"


def test_network_to_a_host_loopback_listener_is_unreachable(make_sandbox: MakeSandbox) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        result = make_sandbox().run_sync(
            py(f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)")
        )
        assert result.returncode != 0
        assert "ConnectionRefusedError" in result.stderr  # its own loopback, nobody listening
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing ever reached the host's listener


def test_writing_outside_the_workspace_fails(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    script = f"for p in {str(target)!r} /etc/escaped /usr/escaped /escaped /workspace/../escaped; do echo x > $p; done"
    result = make_sandbox().run_sync(["sh", "-c", script])
    assert result.returncode != 0
    assert result.stderr.count("cannot create") == 5
    assert not target.exists()
    assert not Path("/etc/escaped").exists() and not Path("/usr/escaped").exists()
    assert not (tmp_path / "escaped").exists()


def test_host_files_outside_the_grants_are_invisible(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    secret = Path("/tmp") / f"toolwire-escape-{os.getpid()}.txt"
    secret.write_text("the host's secret")
    home = os.path.expanduser("~")
    try:
        result = make_sandbox().run_sync(
            [
                "sh",
                "-c",
                f"cat {secret}; ls -a {home}; ls /root /home; cat /etc/shadow; cat {tmp_path}/*",
            ]
        )
    finally:
        secret.unlink()
    assert result.returncode != 0
    assert "the host's secret" not in result.stdout
    assert result.stdout == ""  # not one name of the host's directories
    assert "No such file" in result.stderr


def test_a_granted_path_is_readable_but_not_writable(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    granted = tmp_path / "data"
    granted.mkdir()
    (granted / "input.txt").write_text("granted data")
    sandbox = make_sandbox(read_only_paths=[granted])
    result = sandbox.run_sync(["sh", "-c", f"cat {granted}/input.txt; echo x > {granted}/new"])
    assert result.stdout == "granted data"
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
    assert not (granted / "new").exists()


def test_the_parents_environment_is_not_inherited(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_TEST_SECRET", "s3cr3t-value")
    result = make_sandbox(env={"GREETING": "hello"}).run_sync(
        ["sh", "-c", "env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'"]
    )
    assert "s3cr3t-value" not in result.stdout
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines() if "=" in line}
    assert {"PATH", "HOME", "LANG", "GREETING"} <= names
    assert "TOOLWIRE_TEST_SECRET" not in names and "VIRTUAL_ENV" not in names


def test_a_fork_bomb_hits_the_process_limit(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox(processes=16, wall_seconds=20).run_sync(
        py(
            "import os, time\n"
            "n = 0\n"
            "try:\n"
            "    while True:\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(60); os._exit(0)\n"
            "        n += 1\n"
            "except OSError as e:\n"
            "    print('refused after', n, e.errno)\n"
        )
    )
    assert result.stdout.startswith("refused after")
    # The allowance is 16 plus the processes uid 65534 ran when the command started
    # (other tests' sandboxes, under xdist), so a little more than 16 may fit.
    assert int(result.stdout.split()[2]) < 16 + 24
    assert result.stdout.split()[3] == "11"  # EAGAIN: RLIMIT_NPROC, even when we are root
    assert processes_with("time.sleep(60)") == []  # the children died with the sandbox


def test_a_shell_fork_bomb_is_contained(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox(processes=16, wall_seconds=20).run_sync(
        ["sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 1; echo still-here"]
    )
    assert "Cannot fork" in result.stderr
    assert not result.timed_out


def test_an_infinite_loop_is_stopped_by_the_cpu_limit(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox(cpu_seconds=1, wall_seconds=20).run_sync(py("while True: pass"))
    assert result.killed == "cpu"
    assert not result.timed_out
    assert result.returncode == 128 + 24  # SIGXCPU


def test_a_4_gb_allocation_fails(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox(memory_mb=256).run_sync(py("block = bytearray(4 * 2**30)"))
    assert result.returncode != 0
    assert result.killed == "memory"
    assert "MemoryError" in result.stderr


def test_a_1_gb_file_is_stopped_at_the_file_size_limit(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    sandbox = make_sandbox(file_size_mb=8)
    python = sandbox.run_sync(
        py("f = open('big', 'wb')\nfor _ in range(1024): f.write(bytes(2**20))")
    )
    assert python.returncode != 0 and "File too large" in python.stderr
    assert python.killed == "file_size"
    shell = sandbox.run_sync(["sh", "-c", "dd if=/dev/zero of=big2 bs=1M count=1024"])
    assert shell.killed == "file_size"
    tmp = sandbox.run_sync(["sh", "-c", "dd if=/dev/zero of=/tmp/big bs=1M count=1024"])
    assert tmp.returncode != 0
    for name in ("big", "big2"):
        assert (workspace / name).stat().st_size <= 8 * 2**20


def test_100_mb_of_output_is_cut_and_stopped(make_sandbox: MakeSandbox) -> None:
    result = make_sandbox(max_output_bytes=64_000).run_sync(
        py("import sys\nfor _ in range(100): sys.stdout.write('x' * 2**20)")
    )
    assert result.killed == "output"
    assert result.stdout.startswith("x" * 64_000)
    assert result.stdout.endswith("the sandbox stopped the command]")
    assert len(result.stdout.encode()) < 64_000 + 200


def test_a_background_child_does_not_outlive_the_command(make_sandbox: MakeSandbox) -> None:
    marker = unique_marker("98765")
    result = make_sandbox(wall_seconds=20).run_sync(
        ["sh", "-c", f"(sleep {marker} &); nohup sleep {marker} >/dev/null 2>&1 & echo started"]
    )
    assert result.stdout == "started\n"
    assert not result.timed_out and result.killed is None
    assert processes_with(f"sleep\0{marker}") == []


def test_the_wall_clock_kills_the_whole_tree(make_sandbox: MakeSandbox) -> None:
    marker = unique_marker("87654")
    result = make_sandbox(wall_seconds=1).run_sync(["sh", "-c", f"sleep {marker} & sleep {marker}"])
    assert result.timed_out and result.killed == "wall"
    assert result.returncode == 128 + 9
    assert processes_with(f"sleep\0{marker}") == []


# The keyring system calls by machine: add_key, request_key, keyctl.
_KEYRING_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
_KEY_SPEC_USER_KEYRING = -4
_KEYCTL_SEARCH, _KEYCTL_READ = 10, 11


def keyring(code: str) -> list[str]:
    """Python in the sandbox with ``add_key``, ``keyctl`` and ``show`` (result, errno)."""
    calls = _KEYRING_CALLS.get(os.uname().machine)
    if calls is None:
        pytest.skip(f"no keyring call numbers for {os.uname().machine} in this test")
    add, _, keyctl = calls
    prelude = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def show(what, result):
    print(what, result, os.strerror(ctypes.get_errno()) if result == -1 else "ok")
def add_key(name, secret):
    return libc.syscall({add}, b"user", name, secret, len(secret), ctypes.c_int({_KEY_SPEC_USER_KEYRING}))
def search(name):
    return libc.syscall({keyctl}, {_KEYCTL_SEARCH}, ctypes.c_int({_KEY_SPEC_USER_KEYRING}), b"user", name, 0)
def read(key):
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall({keyctl}, {_KEYCTL_READ}, key, buffer, 256)
    return buffer.raw[:size] if size > 0 else size
"""
    return py(prelude + code)


def test_sandboxes_share_no_kernel_keyring(make_sandbox: MakeSandbox) -> None:
    """One sandbox stores a key; a later one (same uid) finds nothing, and keyctl fails."""
    name, secret = unique_marker("toolwire-key-").encode(), secrets.token_hex(8).encode()
    first = make_sandbox().run_sync(keyring(f"show('add_key', add_key({name!r}, {secret!r}))"))
    assert first.stdout.startswith("add_key -1 Operation not permitted"), first
    later = make_sandbox().run_sync(
        keyring(f"key = search({name!r}); show('search', key); print(read(key))")
    )
    assert later.stdout.startswith("search -1 Operation not permitted"), later
    assert secret.decode() not in later.stdout


def test_the_sandboxs_pid_1_shows_no_host_path_or_environment(
    make_sandbox: MakeSandbox, workspace: Path
) -> None:
    value = unique_marker("secret-value-")
    sandbox = make_sandbox(env={"TOOLWIRE_TEST_TOKEN": value})
    result = sandbox.run_sync(py("print(open('/proc/1/cmdline', 'rb').read())"))
    assert result.ok, result
    assert "bwrap" in result.stdout and "--args" in result.stdout
    assert str(workspace) not in result.stdout and value not in result.stdout
    assert "--setenv" not in result.stdout
