"""Keeping a test's subprocesses and clients off the network."""

from __future__ import annotations

PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)
"""The proxy settings httpx and urllib read: pointed at a closed port, nothing leaves."""
