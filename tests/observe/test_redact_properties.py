"""Redaction properties: the literal pre-check never skips a text the expression matches;
named secrets and credential shapes never survive, in any text around them."""

from __future__ import annotations

import json

from hypothesis import example, given, settings
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
        "HF_", "DB_", "github_pat_", "://", "user:", "@", "-----BEGIN ", "PRIVATE KEY-----",
        "-----END ", "x-api-key", "Basic ", "'", "{", "}",
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


# -- named secrets in common shapes, credential shapes (issue 24, items 2 and 3) ----------

SECRET_BODY = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=12, max_size=30)  # fmt: skip
SHAPES = [
    "HF_TOKEN={s}",
    "AWS_SECRET_ACCESS_KEY={s}",
    "export DB_PASSWORD={s}",
    'API_KEY="{s}"',
    "api_key='{s}'",
    "password: {s}",
    "Password: {s}",
    "{{'password': '{s}'}}",
    '{{"client_secret": "{s}"}}',
    '{{"config": {{"DB_PASSWORD": "{s}"}}}}',
    "postgres://user:{s}@db.example:5432/app",
    "https://ann:{s}@example.com/x",
    "Authorization: Basic {s}==",
    "authorization: Token {s}",
    "x-api-key: {s}",
    "X-Api-Key:{s}",
    "github_pat_11{s}_{s}",
    "-----BEGIN PRIVATE KEY-----\nMII{s}\n{s}==\n-----END PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl{s}\n-----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY-----\nMII{s}",  # cut off before its footer
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SHAPES), SECRET_BODY, TEXTS, TEXTS)
# A quoted value cut at its line's end ends there: it takes no quote of the next line as
# its close, and the name after it still has its value redacted.
@example('{{"client_secret": "{s}"}}', "000000000000", '"token": "', "")
@example('API_KEY="{s}"', "000000000000", '"token": "', "")
@example("HF_TOKEN={s}", "000000000000", "-----BEGIN PRIVATE KEY-----", "")
def test_named_and_shaped_secrets_never_survive(
    shape: str, body: str, before: str, after: str
) -> None:
    text = f"{before}\n{shape.format(s=body)}\n{after}"
    out = REDACT(text)
    assert body not in out and REDACTED in out


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=10**5), st.sampled_from(["pin", "PIN", "password", "token"]))
def test_non_string_values_of_named_fields_are_redacted(value: int, name: str) -> None:
    for text in (json.dumps({name: value, "n": 1}), repr({name: value})):
        assert str(value) not in REDACT(text)
    structured = REDACT.structure({"outer": [{name: value, "note": "fine"}]})
    assert structured == {"outer": [{name: REDACTED, "note": "fine"}]}


def test_near_misses_are_left_alone() -> None:
    for text in (
        '{"max_tokens": 512, "input_tokens": 3, "token_count": 7}',
        "http://[::1]:8080/v1 and https://example.com:443/a@b",
        '{"properties": {"password": {"type": "string"}}}',  # a schema, not a secret
        "a basic question about tokens",
    ):
        assert REDACT(text) == text, text


def test_signed_fields_are_kept_in_structures() -> None:
    jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ0aGlua2luZyJ9.c2lnbmF0dXJl"
    value = {"signature": jwt, "text": jwt}
    assert REDACT.structure(value, frozenset({"signature"})) == {"signature": jwt, "text": REDACTED}


@settings(max_examples=50, deadline=None)
@given(SECRET_BODY, st.integers(min_value=0, max_value=40))
def test_a_long_text_is_redacted_in_pieces_like_a_short_one(body: str, lines: int) -> None:
    from toolwire.observe import redact as module

    filler = ("x" * 900 + "\n") * (module.CHUNK_CHARS // 900)
    pem = f"-----BEGIN PRIVATE KEY-----\n{body}\n{body}\n-----END PRIVATE KEY-----\n"
    text = filler[: lines * 901] + f"token={body}\n" + filler + pem + filler
    assert len(text) > module.CHUNK_CHARS
    out = REDACT(text)
    assert body not in out
    assert out == REDACT._regex.sub(module._replace, text)  # type: ignore[union-attr]


def test_a_private_key_in_a_json_string_is_redacted_with_its_body() -> None:
    # In a JSON or Python string the key's line breaks are escaped ("\n", "\r\n"): its
    # body is still the key's, whole or cut off inside the string.
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
    for brk in ("\\n", "\\r\\n"):
        whole = f"-----BEGIN PRIVATE KEY-----{brk}{body}{brk}{body}{brk}-----END PRIVATE KEY-----"
        for text in (json.dumps({"k": whole.replace(brk, "\n")}), f'{{"k": "{whole[:60]}"}}'):
            out = REDACT(text)
            assert body[:20] not in out and REDACTED in out, out


def test_a_name_after_a_cut_private_key_keeps_its_own_redaction() -> None:
    # A line with anything but base64 and headers is not the key's: a cut key's match
    # ends before it, and a name=value there is found as itself.
    out = REDACT("-----BEGIN PRIVATE KEY-----\nHF_TOKEN=000000000000\n")
    assert out == f"{REDACTED}\nHF_TOKEN={REDACTED}\n"
    key = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\nMIIEvQIB\n"
    assert REDACT(key + "-----END RSA PRIVATE KEY-----\r\nafter") == f"{REDACTED}\r\nafter"
