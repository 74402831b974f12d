"""Observing runs: the audit log, the inspector, record and replay, tracing.

Everything here listens to the agent's run events (:mod:`toolwire.run.observers`); the
agent loop depends on none of it.

* :class:`AuditLog` — every run, model request and tool call in a SQLite file
  (``Agent(..., log=AuditLog(path))``), secrets redacted (:class:`Redactor`);
* :func:`~toolwire.observe.inspect.inspect_run` — the inspector's analysis
  (``toolwire log``, ``toolwire inspect``);
* :class:`~toolwire.observe.replay.ReplayModel` — a logged run played back offline
  (also ``toolwire.testing.ReplayModel``);
* :mod:`toolwire.observe.otel` — OpenTelemetry GenAI spans (``Agent(instrument=True)``);
* :mod:`toolwire.observe.trace` — the self-contained HTML trace viewer
  (``toolwire trace``).
"""

from __future__ import annotations

from .paths import default_log_path
from .redact import Redactor
from .store import AuditLog, AuditLogWarning

__all__ = ["AuditLog", "AuditLogWarning", "Redactor", "default_log_path"]
