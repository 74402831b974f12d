"""The audit-log options shared by ``toolwire run``, ``log``, ``inspect`` and ``trace``.

``--db PATH`` and ``--log PATH`` name the same file; ``TOOLWIRE_LOG`` is its default,
and without it the file is ``runs.db`` in the user's data directory
(:func:`toolwire.observe.default_log_path`). Nothing heavy is imported here.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_db_option", "add_log_options", "db_path", "log_target"]


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """``--db PATH`` (alias ``--log PATH``): the audit log to read."""
    parser.add_argument(
        "--db",
        "--log",
        dest="db",
        metavar="PATH",
        help="the audit log (default: $TOOLWIRE_LOG, else runs.db in the user data directory)",
    )


def add_log_options(parser: argparse.ArgumentParser) -> None:
    """``--log PATH`` / ``--no-log``: where ``toolwire run`` records its runs;
    ``--strict-log``: a log that cannot be written fails the run."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--log",
        "--db",
        dest="db",
        metavar="PATH",
        help="record the run in this audit log (default: $TOOLWIRE_LOG, else runs.db "
        "in the user data directory)",
    )
    group.add_argument("--no-log", action="store_true", help="do not record the run")
    parser.add_argument(
        "--strict-log",
        action="store_true",
        help="fail the run when the log cannot be written (default: a warning, the run goes on)",
    )


def db_path(args: argparse.Namespace) -> str:
    """The audit log the arguments name."""
    from ..observe.paths import default_log_path

    explicit = getattr(args, "db", None)
    if explicit:
        return str(explicit)
    path = default_log_path()
    _private_dir(path.parent)
    return str(path)


def _private_dir(directory: Any) -> None:
    """toolwire's own data directory, readable by the user alone (0700): the log in
    it holds every prompt and result. One an older toolwire made 0755 is tightened."""
    import contextlib
    import os

    with contextlib.suppress(OSError):  # not there yet (the log creates it 0700), or not ours
        if directory.name == "toolwire" and directory.stat().st_mode & 0o077:
            os.chmod(directory, 0o700)


def log_target(args: argparse.Namespace) -> Any:
    """The ``log=`` argument for the agent: an ``AuditLog``, or ``None`` with --no-log."""
    if getattr(args, "no_log", False):
        return None
    from ..observe import AuditLog

    return AuditLog(db_path(args), strict=getattr(args, "strict_log", False))
