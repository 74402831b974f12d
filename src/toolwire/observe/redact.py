"""Secrets out of the audit log: every text is redacted before it is written.

Three rules, applied together in one pass of one regular expression:

* well-known credential shapes (OpenAI/Anthropic ``sk-`` keys, ``Bearer`` tokens, AWS
  access key ids, GitHub tokens (``ghp_``, ``github_pat_``), Slack and Google API
  tokens, JWTs, PEM private keys, the password in a URL's user-info
  ``scheme://user:PASSWORD@host``);
* patterns the user adds (``Redactor(patterns=[...])``);
* the values of arguments, fields and settings whose name says they are secret
  (``api_key``, ``password``, ``token``, ... plus ``Redactor(names=[...])``), found in
  the text itself, so that it works on arguments that are not valid JSON too: JSON
  and Python-repr keys (``"password": …``, ``'password': …``), ``NAME=value`` and
  ``NAME: value`` (environment files, query strings, YAML, HTTP headers, with an
  ``Authorization`` scheme such as ``Basic`` taken with the value), the value quoted or
  not, of any type (``"pin": 482913``). A name matches as the last word of a longer
  identifier too: ``HF_TOKEN``, ``DB_PASSWORD``, ``AWS_SECRET_ACCESS_KEY``, ``x-api-key``.

Structured values (a request's messages and tool calls, a run's settings and tools)
are redacted before they are encoded (:meth:`Redactor.structure`): inside a JSON string
that holds JSON, a field's quotes are escaped and no text rule would see them.

Most text holds no secret, and a regular expression of many alternatives costs about
0.1 µs per character. So a text is first checked for the literal each built-in
shape or name must contain (``sk-``, ``bearer``, ``password``, ``://``, ...:
``str.__contains__``, in C), and only a text that contains one goes through the
expression. User patterns have no known literal: with any, every text is matched.
A long text is checked and redacted in pieces cut at line ends (:data:`CHUNK_CHARS`):
only the pieces that hold a literal go through the expression, and the writer thread
gives the GIL back to the run's event loop between pieces (a 30 MB tool result with one
``token`` in it costs one piece, not 30 MB of matching).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import CallerError

__all__ = ["CHUNK_CHARS", "DEFAULT_NAMES", "DEFAULT_PATTERNS", "REDACTED", "Redactor"]

REDACTED = "[REDACTED]"

CHUNK_CHARS = 1 << 16
"""A text longer than this is redacted in pieces of about this size, cut at line ends."""

_PEM_LINE = r"(?:[A-Za-z0-9+/=:,. \t]|-(?!----))*"  # a PEM line: base64, headers
_PEM_BREAK = r"(?:\r?\n|(?:\\r)?\\n)"  # a line break, real or escaped in a string

DEFAULT_PATTERNS: tuple[str, ...] = (
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",  # OpenAI and Anthropic keys
    r"(?i:\bbearer)[ \t]+[A-Za-z0-9._~+/\-]{8,}=*",  # Authorization: Bearer ...
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
    r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack tokens
    r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API keys
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWTs
    # PEM private keys, header to footer (a cut one to where its body ends): the body
    # is lines of base64 and headers, broken by real line breaks or by escaped ones
    # (the key in a JSON or Python string); a line with anything else is not the key's
    # (a name=value after a cut key keeps its own match). A line never holds five
    # dashes, so a scan cannot run into the next key.
    rf"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----{_PEM_LINE}"
    rf"(?:{_PEM_BREAK}{_PEM_LINE}(?={_PEM_BREAK}|-----|[\"']|$))*"
    rf"(?:{_PEM_BREAK}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----)?",
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
    "github_pat_",
    "xox",
    "aiza",
    "eyj",
    "private key-----",
    "://",
)
"""Lower-cased literals, one of which every match of DEFAULT_PATTERNS (and of the URL
user-info rule) contains."""

# scheme://user:PASSWORD@host: the scheme must start where a word starts (a scan from
# inside a long word would be quadratic), the password is what the ``pw`` group holds.
_USERINFO = (
    r"(?P<ui>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@'\"<>]*:)"
    r"[^\s/@'\"<>]+(?=@)"
)

DEFAULT_NAMES: tuple[str, ...] = (
    "api_key",
    "apikey",
    "api-key",
    "access_token",
    "refresh_token",
    "token",
    "secret",
    "client_secret",
    "secret_key",
    "access_key",
    "private_key",
    "password",
    "passwd",
    "authorization",
    "x-api-key",
)
"""Argument and field names whose values are redacted (also as the last word of a
longer name: ``HF_TOKEN``, ``DB_PASSWORD``)."""

# A secret name, alone or as the last word of an identifier (words joined by _ - .);
# it starts where an identifier starts, so a scan is linear.
_KEY = r"(?<![A-Za-z0-9_\-.])(?:[A-Za-z0-9]+[_\-.])*(?:{names})(?![A-Za-z0-9_\-])"
# A value: double- or single-quoted (the closing quote may be missing: a cut text), or
# bare up to a delimiter, with an HTTP authorization scheme taken along. A quoted value
# ends at its line's end, as a JSON, Python or shell string does: one cut there must not
# take the next line's opening quote as its close and swallow the name after it
# ('"token": "' ending a line, then 'API_KEY="..."': that value reached the log).
_VALUE = (
    r"(?P<dq>\"(?:[^\"\\\n]|\\.)*\"?)|(?P<sq>'(?:[^'\\\n]|\\.)*'?)"
    r"|(?:(?:basic|bearer|digest|token)[ \t]+)?[^\s,;&\"'{}\[\]()]+"
)


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
        if defaults:
            alternatives.append(_USERINFO)
        self._names: re.Pattern[str] | None = None
        if keys:
            names_re = "|".join(re.escape(k) for k in sorted(set(keys), key=len, reverse=True))
            key = _KEY.format(names=names_re)
            # "name": value (JSON, Python repr, possibly broken), name=value (query
            # strings, environment files), name: value (YAML, HTTP headers).
            alternatives.append(
                rf"(?i:(?P<key>(?P<kq>[\"']?){key}(?P=kq)[ \t]*[:=][ \t]*)(?:{_VALUE}))"
            )
            self._names = re.compile(rf"(?i:{key})")
        self._regex = re.compile("|".join(alternatives)) if alternatives else None
        # Without user patterns, a text that contains none of these cannot match.
        self._triggers: tuple[str, ...] | None = None
        if not patterns:
            # A name is the literal of each of its shapes, and a literal that contains
            # another one is implied by it: fewer scans.
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
        if len(text) <= CHUNK_CHARS:
            return self._regex.sub(_replace, text)
        sub = self._regex.sub
        return "".join(
            sub(_replace, piece) if self.may_contain(piece) else piece for piece in _pieces(text)
        )

    def is_secret_name(self, name: str) -> bool:
        """Whether a field called ``name`` holds a secret (``HF_TOKEN``, ``password``)."""
        return self._names is not None and self._names.fullmatch(name) is not None

    def structure(self, value: Any, keep: frozenset[str] = frozenset()) -> Any:
        """A copy of a JSON-like ``value`` with every secret replaced, before encoding.

        Every string is redacted as text; a scalar under a secret name is replaced
        whatever its type (``{"pin": 482913}``); a value under a key in ``keep`` stays
        as it is (signed or encrypted provider data, which must go back unchanged).
        Containers are copied, so the value may be encoded later in another thread.
        """
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self._field(k, v, keep) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.structure(item, keep) for item in value]
        return value

    def _field(self, name: Any, value: Any, keep: frozenset[str]) -> Any:
        if name in keep:
            return value
        if (
            isinstance(name, str)
            and value is not None
            and not isinstance(value, (dict, list, tuple))
            and self.is_secret_name(name)
        ):
            return REDACTED
        return self.structure(value, keep)


def _pieces(text: str) -> Iterator[str]:
    """``text`` cut at line ends into pieces of about :data:`CHUNK_CHARS`; a PEM block
    is never cut (a piece that opens one runs to its footer)."""
    start = 0
    while start < len(text):
        cut = text.find("\n", start + CHUNK_CHARS)
        cut = len(text) if cut < 0 else cut + 1
        opened = text.rfind("-----BEGIN ", start, cut)
        if opened >= 0 and text.find("-----END ", opened, cut) < 0:
            footer = text.find("-----END ", cut)
            if footer >= 0:
                end = text.find("\n", footer)
                cut = len(text) if end < 0 else end + 1
        yield text[start:cut]
        start = cut


def _replace(match: re.Match[str]) -> str:
    groups = match.groupdict()
    key = groups.get("key")
    if key is not None:
        if groups.get("sq") is not None:
            return f"{key}'{REDACTED}'"
        if groups.get("dq") is not None or groups.get("kq") == '"':
            return f'{key}"{REDACTED}"'
        if groups.get("kq") == "'":
            return f"{key}'{REDACTED}'"
        return f"{key}{REDACTED}"
    if groups.get("ui") is not None:
        return f"{groups['ui']}{REDACTED}"
    return REDACTED
