"""Moved to :mod:`toolwire.policies.diagnostics`; this name keeps existing imports working."""

from __future__ import annotations

from ..policies.diagnostics import (
    FAILURE_KINDS,
    FAILURE_LABELS,
    Failure,
    FailureKind,
    RunDiagnostics,
    classify,
)

__all__ = [
    "FAILURE_KINDS",
    "FAILURE_LABELS",
    "Failure",
    "FailureKind",
    "RunDiagnostics",
    "classify",
]
