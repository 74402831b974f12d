"""Redaction properties: the literal pre-check never skips a text the expression matches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire.observe import Redactor
from toolwire.observe.redact import REDACTED

REDACT = Redactor(names=["pin"])
# Pieces that build secrets, near misses and noise.
PIECES = st.sampled_from(
    [
        "sk-", "SK-", "ant-", "proj-", "Bearer ", "bearer\t", "AKIA", "ghp_", "xoxb-", "AIza",
        "eyJ", ".", '"api_key"', '"API_KEY"', '"token": ', ": ", '"', "pin=", "PIN=", "password",
        "=", "&", " ", "\n", "abcdefghij", "ABCDEFGHIJKLMNOP", "0123456789", "_-", "é", "ß", "paſſword", "toKen",
    ]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_precheck_is_sound(text: str) -> None:
    regex = REDACT._regex
    assert regex is not None
    if regex.search(text):
        assert REDACT.may_contain(text)


@settings(max_examples=200, deadline=None)
@given(
    TEXTS,
    TEXTS,
    st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        min_size=20,
        max_size=40,
    ),
)
def test_an_api_key_never_survives(before: str, after: str, body: str) -> None:
    secret = f"sk-{body}"
    out = REDACT(f"{before} {secret} {after}")
    assert secret not in out and REDACTED in out


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdfhilmnoqruvwz .,;:!?0123456789\n", max_size=200))
def test_text_without_secrets_is_unchanged(text: str) -> None:
    assert REDACT(text) == text
