"""A process that has imported the test tool server once and forks a fresh one per start.

Each start of ``tool_server.py`` spent 1.7-2 s of CPU importing the mcp SDK, and the MCP
tests start it about 30 times per run of the suite (the agent starts a server per run).
This process imports it once; ``launcher.py``, the command the tests give
``MCPToolset.stdio``, hands it its stdin, stdout and stderr, and it forks a child that
runs the real server on them: a separate process, started fresh, with the launcher's
environment, working directory and arguments. The forked child never sees the
zygote's state: the zygote imports the module but never runs a tool.

Run: ``python zygote.py SOCKET``. It prints ``ready`` once it listens on the Unix socket
SOCKET, and exits when its stdin closes (the test process that started it has ended).

The protocol, per connection: the launcher sends one JSON message (``args``, ``env``,
``cwd``) with its three standard file descriptors attached; the zygote answers with the
child's pid (a line), then, when the child has ended, its exit status (a line).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import tool_server  # the import this process exists to do, once

# What the streamable-HTTP transport imports when it starts (uvicorn and its app),
# imported here too so that the HTTP server's start is as cheap as the stdio one's.
try:
    import uvicorn  # noqa: F401
    from mcp.server import streamable_http  # noqa: F401
except ImportError:  # pragma: no cover - the SDK's HTTP extras are optional
    pass


def serve(conn: socket.socket, inherited: list[int]) -> int:
    """Receive one start request and fork its server; the child's pid.

    ``inherited``: this process's own descriptors, which the child closes.
    """
    message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    request = json.loads(message)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd in [*inherited, conn.fileno()]:
            os.close(fd)
        _become_server(request, fds)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    return pid


def _become_server(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: take the launcher's stdio, environment and arguments; run."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])  # type: ignore[call-overload]
    os.chdir(str(request["cwd"]))
    sys.argv = [tool_server.__file__, *request["args"]]  # type: ignore[misc]
    status = 0
    try:
        tool_server.main()
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(status)


def main() -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sys.argv[1])
    listener.listen(64)
    # SIGCHLD wakes the loop below through this pipe, so a child is reaped (and its
    # launcher told) as soon as it ends.
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        readable, _, _ = select.select([listener, wake_read, sys.stdin.fileno()], [], [])
        if sys.stdin.fileno() in readable and not os.read(sys.stdin.fileno(), 1024):
            return  # the test process has ended
        if wake_read in readable:
            os.read(wake_read, 1024)
        if listener in readable:
            conn, _ = listener.accept()
            own = [
                listener.fileno(),
                wake_read,
                wake_write,
                *(c.fileno() for c in waiting.values()),
            ]
            waiting[serve(conn, own)] = conn
        _reap(waiting)


def _reap(waiting: dict[int, socket.socket]) -> None:
    """Tell each ended child's launcher its exit status."""
    while waiting:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            with conn:
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass  # the launcher was killed first


if __name__ == "__main__":
    main()
