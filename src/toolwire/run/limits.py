"""Moved to :mod:`toolwire.policies.limits`; this name keeps existing imports working."""

from __future__ import annotations

from ..policies.limits import UsageLimitExceeded, UsageLimits

__all__ = ["UsageLimitExceeded", "UsageLimits"]
