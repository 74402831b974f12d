"""Checks that every package writes the same way: one rule, one wording, one place.

* :func:`check_int`: a count or size setting (an ``int``, never a ``bool``, at least a
  minimum: 0 for "int >= 0", 1 for "positive int");
* :func:`check_number`: a duration or size that may be fractional (an ``int`` or
  ``float``, never a ``bool`` or NaN, above zero or at least zero);
* :func:`reject_json_constant`: the ``parse_constant`` hook that makes ``json.loads``
  refuse ``NaN`` and ``Infinity``, which Python's parser accepts and JSON does not.

A bad setting is the caller's: the checks raise :class:`~toolwire.errors.CallerError`
(or the CallerError-family class a caller passes as ``error``), naming the parameter and
the value it got. This module sits in the core beside ``errors.py`` and imports only it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NoReturn

from .errors import CallerError, ToolwireError

__all__ = ["check_int", "check_number", "reject_json_constant"]

ErrorFactory = Callable[[str], ToolwireError]
"""Builds the error from its message (a class, or a partial of one with more fields)."""


def check_int(
    name: str, value: object, *, minimum: int = 0, error: ErrorFactory = CallerError
) -> int:
    """Return ``value`` if it is an ``int`` (not a ``bool``) of at least ``minimum``.

    Args:
        name: The parameter as the caller knows it (``"LoopPolicy.repeat_stop"``).
        value: What the caller gave.
        minimum: The smallest value allowed (0: "an int >= 0", 1: "a positive int").
        error: The error to raise, built from the message (default ``CallerError``).

    Raises:
        CallerError: (or ``error``'s class) ``value`` is not such an int.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return value
    wanted = "a positive int" if minimum == 1 else f"an int >= {minimum}"
    raise error(f"{name} must be {wanted}, got {value!r}")


def check_number(
    name: str,
    value: object,
    *,
    positive: bool = True,
    finite: bool = False,
    error: ErrorFactory = CallerError,
) -> float:
    """Return ``value`` if it is an ``int`` or ``float`` (not a ``bool``, not NaN).

    Args:
        name: The parameter as the caller knows it (``"ExecutionOptions.timeout"``).
        value: What the caller gave.
        positive: Require ``> 0``; ``False`` allows zero (``>= 0``).
        finite: Refuse infinity too (where an infinite value would overflow a limit).
        error: The error to raise, built from the message (default ``CallerError``).

    Raises:
        CallerError: (or ``error``'s class) ``value`` is not such a number.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # NaN fails both comparisons, so it is refused without a special case; an int is
        # compared as it is (float() of a huge int would overflow).
        in_range = value > 0 if positive else value >= 0
        if in_range and not (finite and isinstance(value, float) and math.isinf(value)):
            return value
    wanted = "a number > 0" if positive else "a number >= 0"
    if finite:
        wanted = f"a finite {wanted.removeprefix('a ')}"
    raise error(f"{name} must be {wanted}, got {value!r}")


def reject_json_constant(name: str) -> NoReturn:
    """``json.loads(..., parse_constant=reject_json_constant)``: refuse NaN and Infinity.

    Raises:
        ValueError: Always (``json.loads`` callers already catch it as bad JSON).
    """
    raise ValueError(f"{name} is not valid JSON")
