"""Moved to :mod:`toolwire.policies.loops`; this name keeps existing imports working."""

from __future__ import annotations

from ..errors import LoopDetectedError
from ..policies.loops import (
    LoopDetected,
    LoopDetector,
    LoopKind,
    LoopPolicy,
    LoopVerdict,
    LoopWarningNote,
    call_signature,
    request_signature,
)

__all__ = [
    "LoopDetectedError",
    "LoopDetected",
    "LoopDetector",
    "LoopKind",
    "LoopPolicy",
    "LoopVerdict",
    "LoopWarningNote",
    "call_signature",
    "request_signature",
]
