"""Checks for the CLI's numeric options: a bad value is one line naming the option,
never a traceback from deep inside (``--timeout nan`` once became a NaN deadline;
``--limit 99999999999999999999`` overflowed SQLite's 64-bit integer); and the type of
its file arguments, which imports :mod:`pathlib` only for a command that takes one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..checks import check_number
from ..errors import CallerError

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["MAX_COUNT", "check_count", "check_seconds", "file_path"]

MAX_COUNT = 1_000_000_000
"""The largest count an option takes (far beyond any real use, well inside 64 bits)."""


def check_count(option: str, value: int, minimum: int = 1) -> int:
    """``value`` if ``minimum <= value <= MAX_COUNT``.

    Raises:
        CallerError: It is not.
    """
    if not minimum <= value <= MAX_COUNT:
        raise CallerError(f"{option} must be from {minimum} to {MAX_COUNT}, got {value}")
    return value


def file_path(text: str) -> Path:
    """A file argument as a :class:`~pathlib.Path` (argparse's ``type=``): called only
    when the command line has the argument, so ``toolwire --help`` and every other
    command skip the import."""
    from pathlib import Path

    return Path(text)


def check_seconds(option: str, value: float) -> float:
    """``value`` if it is a finite number of seconds > 0.

    Raises:
        CallerError: It is not (zero, negative, ``nan``, ``inf``).
    """
    return float(check_number(option, value, finite=True))
