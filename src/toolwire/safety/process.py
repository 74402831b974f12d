"""Run one command line to completion under a wall clock and an output cap.

The I/O edge of the sandbox: a child in a session of its own, its stdout and stderr
read as they come (a selector over both pipes and the child's pidfd), each kept up to
``max_output`` bytes. Going past the cap or the wall clock kills the child's whole
process group; with bubblewrap the child is bwrap itself, whose death kills the
sandbox's PID 1 and so everything inside.

bubblewrap gets its arguments through ``--args FD`` (a sealed-off memory file), not
its command line: the sandbox's PID 1 is bubblewrap, whose ``/proc/1/cmdline`` any
command inside can read, and the arguments name the host's workspace path and every
``--setenv`` value. Its seccomp program (:mod:`.seccomp`) comes the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Outcome", "Running"]

_READ = 65536
_DRAIN_SECONDS = 2.0  # after a kill, how long to wait for the pipes to close


@dataclass
class Outcome:
    """What a finished child left.

    Attributes:
        status: The ``wait`` status (``os.waitstatus_to_exitcode`` gives -N for signal N).
        stdout: Up to the cap.
        stderr: Up to the cap.
        cut: The streams that went past the cap (``"stdout"``, ``"stderr"``).
        timed_out: The wall clock ran out first.
        seconds: Wall time.
    """

    status: int = 0
    stdout: bytes = b""
    stderr: bytes = b""
    cut: list[str] = field(default_factory=list)
    timed_out: bool = False
    seconds: float = 0.0


class Running:
    """One started child; :meth:`wait` collects it, :meth:`kill` stops it from any thread.

    Args:
        argv: The command line.
        env: Its complete environment.
        cwd: Its working directory.
        stdin: Text to send to its standard input (``None``: an empty input).
        wall_seconds: Kill it after this long.
        max_output: Bytes kept per stream; more kills it.
        user: Start it as this uid (and ``group``), with no supplementary groups.
        group: The gid for ``user``.
        bwrap: bubblewrap and its options (``None``: no sandbox): ``argv`` then runs in
            it, the options go through ``--args``, and ``wait`` also waits until the
            sandbox's PID namespace is empty.
        seccomp: With ``bwrap``, the seccomp program bubblewrap loads (``--seccomp``).
        reaper: ``argv`` starts with :mod:`.reaper`: stopping the child sends it
            ``SIGTERM``, so that it kills every descendant (also those in sessions of
            their own) before it dies; the process group is killed only once it is
            gone, or when it does not end within the drain time.
    """

    def __init__(  # noqa: PLR0913 — keyword-only settings of one run, each documented
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        stdin: str | None,
        wall_seconds: float,
        max_output: int,
        user: int | None = None,
        group: int | None = None,
        bwrap: Sequence[str] | None = None,
        seccomp: bytes | None = None,
        reaper: bool = False,
    ) -> None:
        self._wall = wall_seconds
        self._reaper = reaper
        self._exited = False
        self._info: int | None = None
        pass_fds: tuple[int, ...] = ()
        if bwrap is not None:
            argv, pass_fds = self._bwrap_fds(bwrap, argv, seccomp)
        self._max = max_output
        self._started = time.monotonic()
        self._killed = threading.Event()
        try:
            self._proc = self._popen(argv, env, cwd, stdin, user, group, pass_fds)
        finally:
            for fd in pass_fds:
                os.close(fd)  # the child holds it now (or failed to start)
        self._pidfd = os.pidfd_open(self._proc.pid)
        if stdin is not None:
            threading.Thread(
                target=_feed, args=(self._proc.stdin, stdin.encode()), daemon=True
            ).start()

    def _bwrap_fds(
        self, bwrap: Sequence[str], argv: Sequence[str], seccomp: bytes | None
    ) -> tuple[list[str], tuple[int, ...]]:
        """``bwrap --args FD -- ARGV``, and the fds to pass it.

        The options go in FD; the command stays on the command line (bubblewrap reads
        only options from ``--args``), where the sandbox may see it: it is its own.
        """
        # bubblewrap exits as soon as the command does, while the kernel may still be
        # killing what the command left in the sandbox's PID namespace. ``--info-fd``
        # names the namespace's PID 1, whose exit ends only once the namespace is empty:
        # wait() waits for it, so nothing outlives the run.
        self._info, info_w = os.pipe()
        fds = [info_w]
        settings = ["--info-fd", str(info_w)]
        if seccomp is not None:
            fds.append(_memory_file("toolwire-seccomp", seccomp))
            settings += ["--seccomp", str(fds[-1])]
        arguments = b"".join(os.fsencode(a) + b"\0" for a in [*settings, *bwrap[1:]])
        fds.append(_memory_file("toolwire-bwrap-args", arguments))
        return [bwrap[0], "--args", str(fds[-1]), "--", *argv], tuple(fds)

    @staticmethod
    def _popen(
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: str,
        stdin: str | None,
        user: int | None,
        group: int | None,
        pass_fds: tuple[int, ...],
    ) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,  # its own process group: one killpg stops the tree
            close_fds=True,
            user=user,
            group=group,
            extra_groups=[] if user is not None else None,
            pass_fds=pass_fds,
        )

    def kill(self) -> None:
        """Kill the child's process group, or ask the reaper to kill everything
        (idempotent, thread-safe)."""
        self._killed.set()
        if self._reaper and not self._exited:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self._proc.pid, signal.SIGTERM)
            return
        self._kill_group()

    def _kill_group(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    def wait(self) -> Outcome:
        """Read the output until the child ends (or is killed), then reap it."""
        outcome = Outcome()
        buffers = {"stdout": bytearray(), "stderr": bytearray()}
        selector = selectors.DefaultSelector()
        assert self._proc.stdout is not None and self._proc.stderr is not None
        selector.register(self._proc.stdout, selectors.EVENT_READ, "stdout")
        selector.register(self._proc.stderr, selectors.EVENT_READ, "stderr")
        selector.register(self._pidfd, selectors.EVENT_READ, "exit")
        deadline = self._started + self._wall
        exited = False
        try:
            while len(selector.get_map()) > (0 if exited else 1) or not exited:
                timeout = deadline - time.monotonic()
                if timeout <= 0:
                    if exited or self._killed.is_set():
                        if not exited:
                            self._kill_group()  # a reaper that did not end: no more asking
                        break  # pipes held open past the end (or the kill): stop reading
                    outcome.timed_out = True
                    self.kill()
                    deadline = time.monotonic() + _DRAIN_SECONDS
                    continue
                for key, _ in selector.select(timeout):
                    name = key.data
                    if name == "exit":
                        selector.unregister(key.fileobj)
                        exited = self._exited = True
                        # Anything the command left in its group is stopped now; with
                        # bwrap the namespace is already gone.
                        self.kill()
                        deadline = min(deadline, time.monotonic() + _DRAIN_SECONDS)
                        continue
                    data = os.read(key.fd, _READ)
                    if not data:
                        selector.unregister(key.fileobj)
                        continue
                    buffer = buffers[name]
                    room = self._max - len(buffer)
                    buffer += data[:room]
                    if len(data) > room and name not in outcome.cut:
                        outcome.cut.append(name)
                        self.kill()
                        deadline = min(deadline, time.monotonic() + _DRAIN_SECONDS)
        finally:
            selector.close()
            self._close()
        outcome.stdout, outcome.stderr = bytes(buffers["stdout"]), bytes(buffers["stderr"])
        _, status = os.waitpid(self._proc.pid, 0)
        self._proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        outcome.status = status
        self._wait_namespace()
        outcome.seconds = time.monotonic() - self._started
        return outcome

    def _wait_namespace(self) -> None:
        """Wait (at most the drain time) for the sandbox's PID 1 to exit: the kernel
        ends it only after every process left in its namespace is gone."""
        if self._info is None:
            return
        try:
            os.set_blocking(self._info, False)
            try:
                info = json.loads(os.read(self._info, 4096) or b"{}")
            except (BlockingIOError, ValueError):
                return  # bubblewrap failed before it started a namespace
            pid = info.get("child-pid") if isinstance(info, dict) else None
            if not isinstance(pid, int):
                return
            try:
                pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                return  # gone already
            try:
                with selectors.DefaultSelector() as selector:
                    selector.register(pidfd, selectors.EVENT_READ)
                    selector.select(_DRAIN_SECONDS)
            finally:
                os.close(pidfd)
        finally:
            os.close(self._info)
            self._info = None

    def _close(self) -> None:
        for stream in (self._proc.stdout, self._proc.stderr, self._proc.stdin):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        os.close(self._pidfd)


def _memory_file(name: str, data: bytes) -> int:
    """An anonymous file holding ``data``, read from its start (closed on exec unless
    passed on)."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


def _feed(pipe: object, data: bytes) -> None:
    """Write the command's standard input, then close it; a command that stops
    reading early is not an error."""
    with contextlib.suppress(OSError, ValueError):
        pipe.write(data)  # type: ignore[attr-defined]
    with contextlib.suppress(OSError, ValueError):
        pipe.close()  # type: ignore[attr-defined]
