"""Secrets out of the audit log: every text is redacted before it is written.

Three rules, applied together in one pass of one regular expression:

* well-known credential shapes (OpenAI/Anthropic ``sk-`` keys, ``Bearer`` tokens, AWS
  access key ids, GitHub, Slack and Google API tokens, JWTs);
* patterns the user adds (``Redactor(patterns=[...])``);
* the values of arguments and JSON fields whose name says they are secret
  (``api_key``, ``password``, ``token``, ... plus ``Redactor(names=[...])``), found in
  the text itself, so that it works on arguments that are not valid JSON too.

Most text holds no secret, and a regular expression of many alternatives costs about
0.1 µs per character. So a text is first checked for the literal each built-in
shape or name must contain (``sk-``, ``bearer``, ``"password"``, ``token=``, ...:
``str.__contains__``, in C), and only a text that contains one goes through the
expression. User patterns have no known literal: with any, every text is matched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..errors import CallerError

__all__ = ["DEFAULT_NAMES", "DEFAULT_PATTERNS", "REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

DEFAULT_PATTERNS: tuple[str, ...] = (
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",  # OpenAI and Anthropic keys
    r"(?i:\bbearer)\s+[A-Za-z0-9._~+/\-]{8,}=*",  # Authorization: Bearer ...
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
)
"""Credential shapes redacted wherever they appear."""

_PATTERN_TRIGGERS = (
    "sk-",
    "bearer",
    "akia",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "xox",
    "aiza",
    "eyj",
)
"""Lower-cased literals, one of which every match of DEFAULT_PATTERNS contains."""

DEFAULT_NAMES: tuple[str, ...] = (
    "api_key",
    "apikey",
    "api-key",
    "access_token",
    "refresh_token",
    "token",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "authorization",
    "x-api-key",
)
"""Argument and field names whose (string) values are redacted."""


class Redactor:
    """Replaces secrets in text with ``[REDACTED]``.

    Args:
        patterns: Extra regular expressions whose matches are secrets.
        names: Extra argument/field names whose values are secrets (case-insensitive).
        defaults: Include :data:`DEFAULT_PATTERNS` and :data:`DEFAULT_NAMES`.

    Raises:
        CallerError: A pattern is not a valid regular expression.
    """

    def __init__(
        self,
        patterns: Iterable[str] = (),
        names: Iterable[str] = (),
        *,
        defaults: bool = True,
    ) -> None:
        patterns = list(patterns)
        shapes = [*(DEFAULT_PATTERNS if defaults else ()), *patterns]
        keys = [*(DEFAULT_NAMES if defaults else ()), *names]
        for pattern in shapes:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise CallerError(
                    f"redaction pattern {pattern!r} is not a valid regular expression: {exc}"
                ) from None
        alternatives = [f"(?:{p})" for p in shapes]
        if keys:
            names_re = "|".join(re.escape(k) for k in sorted(set(keys), key=len, reverse=True))
            # "name": "value" (JSON, possibly broken) and name=value (query strings, env).
            alternatives.append(
                rf'(?i:(?P<jk>"(?:{names_re})"\s*:\s*)"(?:[^"\\]|\\.)*")'
                rf"|(?i:(?P<kv>\b(?:{names_re})=)[^\s&\"',;]+)"
            )
        self._regex = re.compile("|".join(alternatives)) if alternatives else None
        # Without user patterns, a text that contains none of these cannot match.
        self._triggers: tuple[str, ...] | None = None
        if not patterns:
            # A name alone is the literal of both its shapes ("name": and name=), and a
            # literal that contains another one is implied by it: fewer scans.
            found = {*(_PATTERN_TRIGGERS if defaults else ()), *(k.casefold() for k in keys)}
            self._triggers = tuple(
                sorted(t for t in found if not any(u != t and u in t for u in found))
            )

    def may_contain(self, text: str) -> bool:
        """Whether ``text`` may hold a secret (``False``: it certainly holds none)."""
        if self._regex is None or not text:
            return False
        if self._triggers is None:
            return True
        lowered = text.casefold()
        return any(trigger in lowered for trigger in self._triggers)

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced."""
        if not self.may_contain(text):
            return text
        assert self._regex is not None
        return self._regex.sub(_replace, text)


def _replace(match: re.Match[str]) -> str:
    groups = match.groupdict()
    if groups.get("jk") is not None:
        return f'{groups["jk"]}"{REDACTED}"'
    if groups.get("kv") is not None:
        return f"{groups['kv']}{REDACTED}"
    return REDACTED
