"""Keeping toolwire's own secrets out of everything it prints or raises.

An API key travels in a request header (``Authorization``, ``x-api-key``, ``api-key``)
and sometimes in a base URL's user-info (``https://user:key@proxy``). Reprs show
headers and URLs with those parts replaced by ``***``, and error text — which may
quote a URL or a proxy's echo of the request headers — has every secret value
replaced before it is raised.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

__all__ = ["SENSITIVE_HEADERS", "redact_headers", "redact_url", "scrub", "secrets_in"]

SENSITIVE_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "x-goog-api-key"}
)
"""Header names whose values are credentials (compared lower-case)."""

_MASK = "***"
_MIN_SECRET = 4  # shorter values would mask ordinary words


def redact_url(url: str) -> str:
    """``url`` with the password of its user-info (or the whole user-info) masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url if "@" not in url else _MASK
    if "@" not in parts.netloc:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    masked = f"{user}:{_MASK}" if colon else _MASK
    return urlunsplit(parts._replace(netloc=f"{masked}@{host}"))


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``headers`` with credential values masked (an auth scheme kept)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        if name.lower() in SENSITIVE_HEADERS:
            scheme, space, _ = value.partition(" ")
            out[name] = f"{scheme} {_MASK}" if space else _MASK
        else:
            out[name] = value
    return out


def secrets_in(url: str, headers: Mapping[str, str]) -> list[str]:
    """The secret values a request carries: credential headers (and their token part
    after an auth scheme) and the URL's user-info password."""
    found: list[str] = []
    for name, value in headers.items():
        if name.lower() in SENSITIVE_HEADERS and value:
            found.append(value)
            _, space, token = value.partition(" ")
            if space:
                found.append(token.strip())
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        found.append(password)
    return [s for s in found if len(s) >= _MIN_SECRET]


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``."""
    for secret in sorted(set(secrets), key=len, reverse=True):  # longest first
        if secret in text:
            text = text.replace(secret, _MASK)
    return text
