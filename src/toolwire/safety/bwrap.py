"""The command line of a sandboxed run: bubblewrap's arguments and the limits prefix.

Pure functions of a :class:`Plan` (what to isolate, what to grant); the only I/O here
is :func:`host_layout` and :func:`find_tool`, which look at the host once.

The sandbox, built with bubblewrap (https://github.com/containers/bubblewrap):

* new PID, IPC, UTS, network (unless ``network=True``) and, where possible, cgroup
  namespaces; ``--die-with-parent`` so killing bwrap kills the sandbox's PID 1, whose
  exit makes the kernel kill every process left in the namespace;
* a fresh root: the system directories (``/usr`` and the ``/bin``, ``/lib``... entries,
  as links where the host has links) and a few ``/etc`` files read-only, a new
  ``/proc`` and ``/dev``, a private size-capped ``/tmp``, the workspace read-write at
  ``/workspace``, granted paths read-only at their own path — nothing else of the host;
* a cleared environment with only the variables given.

Process limits go through ``prlimit`` (util-linux) inside the sandbox. ``RLIMIT_NPROC``
is counted per real user and does not bind root, so when toolwire runs as root,
bubblewrap runs privileged (it can mount any path) and ``setpriv`` then drops the
command to an unprivileged uid with no capabilities and ``no_new_privs``. Unprivileged,
bubblewrap creates a user namespace and the command keeps the caller's uid.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "SANDBOX_GID",
    "SANDBOX_UID",
    "WORKSPACE",
    "Limits",
    "Plan",
    "bwrap_argv",
    "find_tool",
    "host_layout",
    "limits_argv",
]

WORKSPACE = "/workspace"
"""Where the workspace appears inside the sandbox (the host path stays hidden)."""

SANDBOX_UID = 65534
SANDBOX_GID = 65534
"""The unprivileged ids (``nobody``/``nogroup``) a root caller's commands run as."""

# Top-level system entries shown read-only (as links where the host has links: a
# merged-/usr system has /bin -> usr/bin).
SYSTEM_ENTRIES = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
# /etc files a program commonly needs and that hold no secrets.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "nsswitch.conf",
)
# ... and those a program with network access needs on top.
ETC_NETWORK = ("resolv.conf", "hosts", "gai.conf", "ssl", "ca-certificates")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one command (see ``toolwire.Sandbox``)."""

    cpu_seconds: int
    memory_bytes: int
    file_bytes: int
    open_files: int
    processes: int


@dataclass(frozen=True)
class Plan:
    """Everything the sandbox's command line depends on.

    Attributes:
        workspace: The host directory mounted read-write at :data:`WORKSPACE`.
        read_only: Host paths mounted read-only at their own path.
        network: Share the host's network namespace.
        env: The complete environment of the command.
        tmp_bytes: Size of the private ``/tmp``.
        as_root: toolwire runs as root (bwrap privileged, the command dropped to
            :data:`SANDBOX_UID`).
        layout: ``(entry, link target or None)`` for each system entry present.
    """

    workspace: str
    read_only: tuple[str, ...]
    network: bool
    env: Mapping[str, str]
    tmp_bytes: int
    as_root: bool
    layout: tuple[tuple[str, str | None], ...]


def host_layout() -> tuple[tuple[str, str | None], ...]:
    """Which system entries exist on the host, and which are links (and to what)."""
    found: list[tuple[str, str | None]] = []
    for name in SYSTEM_ENTRIES:
        path = f"/{name}"
        if os.path.islink(path):
            found.append((name, os.readlink(path)))
        elif os.path.isdir(path):
            found.append((name, None))
    return tuple(found)


def find_tool(name: str) -> str | None:
    """The absolute path of a system program (``/usr/bin`` first, then ``PATH``)."""
    for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def bwrap_argv(bwrap: str, plan: Plan) -> list[str]:
    """bubblewrap and its options (the ``--`` and the command come after)."""
    argv = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try"]
    if not plan.network:
        argv.append("--unshare-net")
    if not plan.as_root:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--die-with-parent", "--new-session"]
    for name, target in plan.layout:
        if target is None:
            argv += ["--ro-bind", f"/{name}", f"/{name}"]
        else:
            argv += ["--symlink", target, f"/{name}"]
    etc = ETC_FILES + (ETC_NETWORK if plan.network else ())
    argv += ["--perms", "0755", "--dir", "/etc"]  # created 0700 otherwise when privileged
    for name in etc:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(plan.tmp_bytes), "--tmpfs", "/tmp"]
    made: set[str] = set()
    for path in plan.read_only:
        # Parents bwrap would create 0700 (privileged) must be searchable by the command.
        for parent in _ancestors(path):
            if parent not in made:
                made.add(parent)
                argv += ["--perms", "0755", "--dir", parent]
        argv += ["--ro-bind", path, path]
    argv += ["--bind", plan.workspace, WORKSPACE, "--chdir", WORKSPACE]
    argv.append("--clearenv")
    for key, value in sorted(plan.env.items()):
        argv += ["--setenv", key, value]
    if plan.as_root:  # setpriv needs these to drop to the unprivileged uid; it drops them
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        argv += ["--cap-add", "CAP_SETPCAP"]
    return argv


def _ancestors(path: str) -> list[str]:
    """``/a/b/c`` -> ``["/a", "/a/b"]``."""
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[:n]) for n in range(1, len(parts))]


def limits_argv(prlimit: str, limits: Limits) -> list[str]:
    """``prlimit`` with the command's limits, up to (not including) the command.

    The CPU hard limit is a second above the soft one: the soft limit sends
    ``SIGXCPU``, the hard one ``SIGKILL`` to a program that ignores it.
    """
    return [
        prlimit,
        f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}",
        f"--as={limits.memory_bytes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        f"--nproc={limits.processes}",
        "--core=0",
        "--",
    ]


def drop_privileges_argv(setpriv: str) -> list[str]:
    """``setpriv`` to :data:`SANDBOX_UID` with no capabilities, up to the command."""
    return [
        setpriv,
        f"--reuid={SANDBOX_UID}",
        f"--regid={SANDBOX_GID}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
    ]


def count_processes(uid: int, proc: str = "/proc") -> int:
    """About how many processes ``uid`` runs now (``RLIMIT_NPROC`` counts them).

    The owner of ``/proc/PID`` is the process's effective uid, the kernel counts real
    uids; they differ only for set-uid programs, which this then leaves out, making the
    allowance smaller, not larger. A ``stat`` per process costs a quarter of reading
    each ``status`` file.
    """
    count = 0
    try:
        entries = os.listdir(proc)
    except OSError:
        return 0
    for entry in entries:
        if entry.isdigit():
            try:
                count += os.stat(f"{proc}/{entry}").st_uid == uid
            except OSError:
                continue  # the process ended meanwhile
    return count


def command_argv(
    prefix: Sequence[str], limits: Sequence[str], drop: Sequence[str], argv: Sequence[str]
) -> list[str]:
    """The command line inside the sandbox: a prefix (the unisolated run's reaper),
    limits, privilege drop, the command."""
    return [*prefix, *limits, *drop, *argv]
