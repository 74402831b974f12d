"""A deterministic corpus of malformed tool arguments, each built from a known-good object.

Every case is ``(kind, good, text)``: ``good`` is the object a model meant to send and
``text`` is what it wrote, damaged in one way (or, for ``mixed``, two). The damage
patterns are the ones seen from real models and listed in issue 4: trailing commas,
cut-off endings, single quotes, unquoted keys and values, Python literals and reprs,
comments, Markdown fences, prose or tags around the JSON, raw newlines in strings,
missing commas, unescaped inner quotes, double encoding, Windows paths with single
backslashes, typographic quotes and stray closing brackets.

Only cases with one sensible reading are generated: a bare (unquoted) value is a
single word, an unescaped inner quote is followed by a word (so it cannot be read as
the end of the string), a truncation removes closing brackets or the final quote but
never content. Recovery is "exact" when the repaired value serialises to the same
canonical JSON as ``good`` (so ``1`` is not ``true`` and ``1.0`` is not ``1``).

``python bench/repair_corpus.py`` prints a few cases of each kind.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "Case", "build_corpus", "canonical", "exact"]

SEED = 20240604
PER_KIND = 12

_WORDS = [
    "alpha",
    "report",
    "invoice",
    "weather",
    "deploy",
    "staging",
    "summary",
    "metrics",
    "orders",
    "python",
    "search",
    "backup",
    "celsius",
    "draft",
    "urgent",
    "archive",
]
_CITIES = ["Paris", "São Paulo", "Zürich", "New York", "Kraków", "Tokyo", "Oslo"]
_PATH_PARTS = [
    "Users",
    "bob",
    "Documents",
    "new_folder",
    "temp",
    "reports",
    "notes",
    "bin",
    "Projects",
    "files",
    "rust",
    "users",
    "Downloads",
    "App Data",
]
_SENTENCES = [
    "Find the latest quarterly report",
    "Summarise the meeting notes for Tuesday",
    "List open pull requests",
    "What is the weather in Lisbon tomorrow",
    "Draft a reply to the customer",
    "Don't forget the client's invoice",
]
_CODE = [
    "def add(a, b):\n    return a + b\n",
    "for i in range(3):\n\tprint(i)\n",
    "SELECT id, name\nFROM users\nWHERE active = 1;",
    "line one\nline two\n\nline four",
]
_QUOTED = [
    ("The sign said ", "Keep out", " in red"),
    ("Rename it to ", "final", " before Friday"),
    ("She wrote ", "see you soon", " at the end"),
    ("Search for ", "error 500", " in the logs"),
    ("She signed it ", "Bob", ""),
    ("", "Hello", " was the greeting"),
]


@dataclass(frozen=True, slots=True)
class Case:
    """One malformed input and the value it should recover to."""

    kind: str
    good: Any
    text: str


def canonical(value: Any) -> str:
    """Canonical JSON: the basis of the exact-recovery comparison."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


def exact(value: Any, good: Any) -> bool:
    """Whether ``value`` is exactly ``good`` (types included)."""
    try:
        return canonical(value) == canonical(good)
    except (TypeError, ValueError):
        return False


# --- known-good objects -----------------------------------------------------------------


def _word(rng: random.Random) -> str:
    return rng.choice(_WORDS)


def _obj_search(rng: random.Random) -> dict[str, Any]:
    return {
        "query": rng.choice(_SENTENCES),
        "limit": rng.randint(1, 50),
        "include_archived": rng.choice([True, False]),
        "sort": _word(rng),
    }


def _obj_weather(rng: random.Random) -> dict[str, Any]:
    return {
        "city": rng.choice(_CITIES),
        "units": rng.choice(["metric", "imperial"]),
        "days": rng.randint(1, 7),
        "lat": round(rng.uniform(-80, 80), 4),
    }


def _obj_file(rng: random.Random) -> dict[str, Any]:
    return {
        "path": f"src/{_word(rng)}/{_word(rng)}.py",
        "content": rng.choice(_CODE),
        "overwrite": rng.choice([True, False]),
    }


def _obj_nested(rng: random.Random) -> dict[str, Any]:
    return {
        "items": [
            {"id": rng.randint(1, 999), "name": _word(rng), "tags": [_word(rng), _word(rng)]}
            for _ in range(rng.randint(1, 3))
        ],
        "dry_run": rng.choice([True, False]),
        "note": None,
        "options": {"retries": rng.randint(0, 5), "mode": _word(rng)},
    }


def _obj_command(rng: random.Random) -> dict[str, Any]:
    return {
        "command": f"ls -la /tmp/{_word(rng)}",
        "timeout": rng.choice([10, 30.5, 60]),
        "env": {"DEBUG": str(rng.randint(0, 1)), "STAGE": _word(rng)},
        "cwd": None,
    }


_MAKERS: list[Callable[[random.Random], dict[str, Any]]] = [
    _obj_search,
    _obj_weather,
    _obj_file,
    _obj_nested,
    _obj_command,
]


def _good(rng: random.Random) -> dict[str, Any]:
    return rng.choice(_MAKERS)(rng)


def _plain_good(rng: random.Random) -> dict[str, Any]:
    """An object whose strings hold no quotes, backslashes or newlines."""
    return rng.choice([_obj_search, _obj_weather, _obj_nested, _obj_command])(rng)


# --- a serialiser with knobs for each defect ---------------------------------------------


@dataclass(frozen=True, slots=True)
class Style:
    """How to write JSON-like text."""

    quote: str = '"'
    bare_keys: bool = False
    literals: tuple[str, str, str] = ("true", "false", "null")
    trailing: bool = False
    comma: str = ","
    indent: int | None = None
    raw_strings: bool = False


def dump(value: Any, style: Style, level: int = 0) -> str:
    """Write ``value`` in ``style``."""
    if isinstance(value, dict):
        items = [f"{_key(k, style)}: {dump(v, style, level + 1)}" for k, v in value.items()]
        return _container("{", "}", items, style, level)
    if isinstance(value, list):
        return _container("[", "]", [dump(v, style, level + 1) for v in value], style, level)
    if value is True:
        return style.literals[0]
    if value is False:
        return style.literals[1]
    if value is None:
        return style.literals[2]
    if isinstance(value, str):
        return _string(value, style)
    return json.dumps(value)


def _key(key: str, style: Style) -> str:
    return key if style.bare_keys else _string(key, style)


def _string(text: str, style: Style) -> str:
    body = text if style.raw_strings else json.dumps(text, ensure_ascii=False)[1:-1]
    return f"{style.quote}{body}{style.quote}"


def _container(open_: str, close: str, items: list[str], style: Style, level: int) -> str:
    if not items:
        return open_ + close
    tail = style.comma if style.trailing else ""
    if style.indent is None:
        return open_ + f"{style.comma} ".join(items) + tail + close
    pad = " " * (style.indent * (level + 1))
    inner = f"{style.comma}\n".join(pad + item for item in items)
    return f"{open_}\n{inner}{tail}\n{' ' * (style.indent * level)}{close}"


def _layout(rng: random.Random) -> int | None:
    return rng.choice([None, 2, 4])


# --- defect generators: (rng) -> (good, text) ---------------------------------------------


def d_trailing_comma(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    return good, dump(good, Style(trailing=True, indent=_layout(rng)))


def d_missing_closing(rng: random.Random) -> tuple[Any, str]:
    good = rng.choice([_obj_nested, _obj_command, _obj_search])(rng)
    text = json.dumps(good, ensure_ascii=False, indent=_layout(rng))
    stripped = text.rstrip("}] \n")
    removed = text[len(stripped) :].count("}") + text[len(stripped) :].count("]")
    keep = rng.randint(0, max(0, removed - 1))
    tail = "".join(ch for ch in text[len(stripped) :] if ch in "}]")[:keep]
    return good, stripped + tail


def d_unterminated_string(rng: random.Random) -> tuple[Any, str]:
    good = {"query": rng.choice(_SENTENCES), "limit": rng.randint(1, 9), "title": _word(rng)}
    good["message"] = f"{rng.choice(_SENTENCES)} and {_word(rng)}"
    text = json.dumps(good, ensure_ascii=False)
    return good, text[: -len('"}')]


def d_single_quotes(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    return good, dump(good, Style(quote="'", indent=_layout(rng)))


def d_unquoted_keys(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    return good, dump(good, Style(bare_keys=True, indent=_layout(rng)))


def d_unquoted_values(rng: random.Random) -> tuple[Any, str]:
    good = {"action": _word(rng), "target": _word(rng), "count": rng.randint(1, 9)}
    text = json.dumps(good)
    for key in rng.sample(["action", "target"], rng.randint(1, 2)):
        text = text.replace(f'"{key}": "{good[key]}"', f'"{key}": {good[key]}')
    return good, text


def d_python_literals(rng: random.Random) -> tuple[Any, str]:
    good = rng.choice([_obj_nested, _obj_command, _obj_search])(rng)
    return good, dump(good, Style(literals=("True", "False", "None"), indent=_layout(rng)))


def d_python_repr(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    return good, repr(good)


def d_comments(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    lines = json.dumps(good, indent=2, ensure_ascii=False).splitlines()
    marker = rng.choice(["//", "#", "/*"])
    at = rng.randint(1, len(lines) - 1)
    note = f"{marker} the user's {_word(rng)} value" + (" */" if marker == "/*" else "")
    if rng.random() < 0.5:
        lines.insert(at, "  " + note)
    else:
        lines[at - 1] = lines[at - 1] + "  " + note
    return good, "\n".join(lines)


def d_code_fence(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    body = json.dumps(good, indent=_layout(rng), ensure_ascii=False)
    lang = rng.choice(["json", "JSON", ""])
    return good, f"```{lang}\n{body}\n```"


def d_text_around(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    body = json.dumps(good, ensure_ascii=False)
    before = rng.choice(["Sure! Here are the arguments:\n", "I'll call the tool with ", ""])
    after = rng.choice(["\nLet me know if you need anything else.", " (done)", ""])
    return good, (before + body + after) if before or after else f"Arguments: {body}"


def d_tag_wrapped(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    body = json.dumps(good, ensure_ascii=False)
    open_, close = rng.choice(
        [
            ("<tool_call>", "</tool_call>"),
            ("<arguments>", "</arguments>"),
            ("<|python_tag|>", "<|eom_id|>"),
        ]
    )
    return good, f"{open_}\n{body}\n{close}"


def d_raw_newlines(rng: random.Random) -> tuple[Any, str]:
    good = _obj_file(rng)
    return good, dump(good, Style(raw_strings=True, indent=_layout(rng)))


def d_missing_commas(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    return good, dump(good, Style(comma="", indent=rng.choice([2, 4])))


def d_unescaped_inner_quotes(rng: random.Random) -> tuple[Any, str]:
    head, quoted, tail = rng.choice(_QUOTED)
    good = {"text": f'{head}"{quoted}"{tail}', "priority": rng.randint(1, 5)}
    text = '{"text": "' + f'{head}"{quoted}"{tail}' + f'", "priority": {good["priority"]}' + "}"
    return good, text


def d_double_encoded(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    inner = json.dumps(good, ensure_ascii=False)
    if rng.random() < 0.3:
        inner = json.dumps(inner)  # encoded twice over
    return good, json.dumps(inner, ensure_ascii=False)


def d_invalid_escapes(rng: random.Random) -> tuple[Any, str]:
    parts = ["C:", *rng.sample(_PATH_PARTS, rng.randint(2, 4)), f"{_word(rng)}.txt"]
    path = "\\".join(parts)
    good = {"path": path, "recursive": rng.choice([True, False])}
    return good, '{"path": "' + path + '", "recursive": ' + json.dumps(good["recursive"]) + "}"


def d_typographic_quotes(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    text = json.dumps(good, ensure_ascii=False, indent=_layout(rng))
    out, opening = [], True
    for ch in text:
        if ch == '"':
            out.append("\u201c" if opening else "\u201d")
            opening = not opening
        else:
            out.append(ch)
    return good, "".join(out)


def d_extra_closing(rng: random.Random) -> tuple[Any, str]:
    good = _good(rng)
    return good, json.dumps(good, ensure_ascii=False) + rng.choice(["}", "}}", "]", "\n}"])


def d_mixed(rng: random.Random) -> tuple[Any, str]:
    good = _plain_good(rng)
    style = Style(
        quote=rng.choice(['"', "'"]),
        bare_keys=rng.random() < 0.5,
        literals=rng.choice([("true", "false", "null"), ("True", "False", "None")]),
        trailing=rng.random() < 0.6,
        indent=_layout(rng),
    )
    text = dump(good, style)
    wrap = rng.choice(["fence", "prose", "none"])
    if wrap == "fence":
        text = f"```json\n{text}\n```"
    elif wrap == "prose":
        text = f"Calling the tool now: {text}"
    return good, text


KINDS: dict[str, Callable[[random.Random], tuple[Any, str]]] = {
    "trailing_comma": d_trailing_comma,
    "missing_closing": d_missing_closing,
    "unterminated_string": d_unterminated_string,
    "single_quotes": d_single_quotes,
    "unquoted_keys": d_unquoted_keys,
    "unquoted_values": d_unquoted_values,
    "python_literals": d_python_literals,
    "python_repr": d_python_repr,
    "comments": d_comments,
    "code_fence": d_code_fence,
    "text_around": d_text_around,
    "tag_wrapped": d_tag_wrapped,
    "raw_newlines": d_raw_newlines,
    "missing_commas": d_missing_commas,
    "unescaped_inner_quotes": d_unescaped_inner_quotes,
    "double_encoded": d_double_encoded,
    "invalid_escapes": d_invalid_escapes,
    "typographic_quotes": d_typographic_quotes,
    "extra_closing": d_extra_closing,
    "mixed": d_mixed,
}


def build_corpus(per_kind: int = PER_KIND, seed: int = SEED) -> list[Case]:
    """The corpus: ``per_kind`` cases of every kind, the same on every run.

    Cases whose text happens to be valid JSON with the right value are skipped (they
    test nothing); each kind still gets ``per_kind`` cases.
    """
    rng = random.Random(seed)
    cases: list[Case] = []
    for kind, make in KINDS.items():
        made = 0
        while made < per_kind:
            good, text = make(rng)
            if _already_valid(text, good):
                continue
            cases.append(Case(kind, good, text))
            made += 1
    return cases


def good_texts(seed: int = SEED, count: int = 200) -> list[str]:
    """Valid JSON arguments, for the speed comparison on well-formed input."""
    rng = random.Random(seed)
    return [json.dumps(_good(rng), ensure_ascii=False) for _ in range(count)]


def _already_valid(text: str, good: Any) -> bool:
    try:
        return exact(json.loads(text), good)
    except json.JSONDecodeError:
        return False


if __name__ == "__main__":
    corpus = build_corpus()
    print(f"{len(corpus)} cases, {len(KINDS)} kinds")
    for kind in KINDS:
        sample = next(c for c in corpus if c.kind == kind)
        print(f"--- {kind}\n{sample.text}")
