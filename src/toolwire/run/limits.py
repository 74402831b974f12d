"""Moved to :mod:`toolwire.policies.limits`; this name keeps existing imports working."""

from __future__ import annotations

from ..errors import UsageLimitExceededError
from ..policies.limits import UsageLimitExceeded, UsageLimits

__all__ = ["UsageLimitExceededError", "UsageLimitExceeded", "UsageLimits"]
