"""Start the test tool server as a fork of servers/zygote.py, on this process's stdio.

Run: ``python -I -S launcher.py SOCKET ARGS...`` where ``tool_server.py ARGS...`` would
have been run (``stdio``, or ``http PORT``). Standard library only, so that this
process starts in milliseconds: it hands its stdin, stdout and stderr, environment,
working directory and ARGS to the zygote listening on SOCKET, which forks the server on
them, then lives as long as the server does and exits with its status, so that to the
MCP client it is the server process: closing its stdin ends the server, a signal to it
reaches the server, and the server's crash is its exit.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def main() -> int:
    path, *args = sys.argv[1:]
    # A signal to this process is meant for the server: forwarded, once its pid is known.
    server = {"pid": 0, "pending": 0}

    def forward(signum: int, _frame: object) -> None:
        if not server["pid"]:
            server["pending"] = signum
            return
        try:
            os.kill(server["pid"], signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    # The server holds the pipes now: only its end of them counts (EOF, exit).
    for fd in (0, 1):
        os.close(fd)
    replies = conn.makefile("r", encoding="ascii")
    server["pid"] = int(replies.readline())
    if server["pending"]:
        forward(server["pending"], None)
    status = int(replies.readline() or "1")
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
