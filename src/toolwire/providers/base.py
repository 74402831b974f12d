"""Renamed :mod:`toolwire.providers.hosted` (the base of the hosted, HTTP providers only);
this name keeps existing imports working."""

from __future__ import annotations

from .hosted import NEUTRAL_SETTINGS, HTTPModel, finish_body

__all__ = ["NEUTRAL_SETTINGS", "HTTPModel", "finish_body"]
