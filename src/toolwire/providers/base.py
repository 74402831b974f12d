"""Renamed :mod:`toolwire.providers.hosted` (the base of the hosted, HTTP providers only);
this name keeps existing imports working."""

from __future__ import annotations

from .hosted import MODES, NEUTRAL_SETTINGS, HTTPModel, chat_tool_choice, finish_body

__all__ = ["MODES", "NEUTRAL_SETTINGS", "HTTPModel", "chat_tool_choice", "finish_body"]
