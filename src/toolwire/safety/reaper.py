"""Run one command as a child subreaper, and leave no descendant of it behind.

``python reaper.py COMMAND...`` (a script run with ``-I -S``: it imports only the
standard library). Used by the sandbox where it has no PID namespace
(``allow_unisolated=True``): there a process group is not enough, since a child that
calls ``setsid()`` leaves the group, and killing the group would let it outlive the
wall clock and the run.

With ``PR_SET_CHILD_SUBREAPER`` set, every orphaned descendant of the command is
re-parented to this process instead of to init, so this process can find them all
(its children, in ``/proc``) and kill them: when the command exits, and when this
process gets ``SIGTERM`` (the sandbox's wall clock or output cap). It then ends as
the command did — the same exit status, or the same signal — or, after ``SIGTERM``,
by ``SIGKILL``, as a killed command would.

A command running as the caller's own uid could still kill this process first; the
unisolated sandbox says so in its warning.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys

# Only what a run must import: it starts before every unisolated command.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

_PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    """Run ``argv`` and return its exit status (a signal death is re-raised)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("toolwire reaper: PR_SET_CHILD_SUBREAPER failed", file=sys.stderr)
        return 126
    signal.signal(signal.SIGTERM, _on_term)
    pid = os.fork()
    if pid == 0:  # the command
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            print(f"toolwire reaper: {argv[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    return _end_like(status)


def kill_descendants() -> None:
    """Kill every child until none is left (orphans keep arriving as their parents die)."""
    while True:
        for child in _children():
            try:  # noqa: SIM105 — contextlib would cost an import at every start
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass  # reaped meanwhile
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _children() -> list[int]:
    """The processes whose parent is this one: the kernel's list where it keeps one
    (``CONFIG_PROC_CHILDREN``), else field 4 of every ``/proc/PID/stat``."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as listed:
            return [int(pid) for pid in listed.read().split()]
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        if int(fields[1]) == me:
            found.append(int(entry))
    return found


def _on_term(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_descendants()
    _die(signal.SIGKILL)


def _end_like(status: int) -> int:
    if os.WIFSIGNALED(status):
        _die(os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


def _die(signum: int) -> NoReturn:
    """End by ``signum``, as the command did (no core file)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if signum not in (signal.SIGKILL, signal.SIGSTOP):  # these cannot be handled
        signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal that does not kill by default


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
