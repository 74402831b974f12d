"""The composition root: the Agent's strings and flags made into objects of the upper layers.

``run/`` sits below the providers and the observers and imports neither; what it needs
from them it states as protocols (:class:`~toolwire.run.model.Model`,
:class:`~toolwire.run.observers.RunHook`). Three conveniences of ``Agent`` still need
the real thing: a model spec string (``"openai:gpt-4.1-mini"``), a log path
(``Agent(log="runs.db")``) and ``instrument=True``. This module, above everything
else, makes them; ``run/`` reaches it through one lazy import
(``run/_upward.py``), only when such an argument is given.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .run.model import Model
    from .run.observers import RunHook

__all__ = ["audit_log", "instrumentation", "model"]


def model(spec: str) -> Model:
    """The model of a spec string (``toolwire.providers.resolve``).

    Raises:
        CallerError: An unknown or malformed spec.
    """
    from .providers import resolve

    return resolve(spec)


def audit_log(path: str | os.PathLike[str]) -> RunHook:
    """The audit log at ``path`` (``toolwire.AuditLog``)."""
    from .observe import AuditLog

    return AuditLog(path)


def instrumentation() -> RunHook:
    """The OpenTelemetry hook (needs ``toolwire[otel]``).

    Raises:
        CallerError: The ``opentelemetry-api`` package is missing.
    """
    from .observe.otel import Instrumentation

    return Instrumentation()
