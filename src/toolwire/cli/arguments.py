"""Checks for the CLI's numeric options: a bad value is one line naming the option,
never a traceback from deep inside (``--timeout nan`` once became a NaN deadline;
``--limit 99999999999999999999`` overflowed SQLite's 64-bit integer)."""

from __future__ import annotations

from ..checks import check_number
from ..errors import CallerError

__all__ = ["MAX_COUNT", "check_count", "check_seconds"]

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


def check_seconds(option: str, value: float) -> float:
    """``value`` if it is a finite number of seconds > 0.

    Raises:
        CallerError: It is not (zero, negative, ``nan``, ``inf``).
    """
    return float(check_number(option, value, finite=True))
