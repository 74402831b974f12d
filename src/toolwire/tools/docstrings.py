"""A small docstring reader: the summary and the per-parameter descriptions.

Tools take their description and their parameters' descriptions from the function's
docstring, so the model reads what the author wrote for humans. Three styles are
recognised, detected in this order:

* Sphinx / reST: ``:param name: text`` (optionally ``:param type name: text``).
* NumPy: a ``Parameters`` header underlined with dashes, then ``name : type`` lines
  followed by indented text.
* Google: an ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Params:``) header, then
  ``name (type): text`` lines, continuation lines indented deeper.

The description is the text before the first section. Anything unrecognised stays in
the description rather than being lost; a docstring with no sections is all
description.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["DocInfo", "parse_docstring"]

_SPHINX_FIELD = re.compile(r"^:(\w+)(?:\s+([^:]*?))?:\s*(.*)$")
_NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_HEADER = re.compile(r"^([A-Z][A-Za-z ]*):\s*$")
_GOOGLE_PARAM_HEADERS = frozenset(
    {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
)
_SPHINX_PARAM_ROLES = frozenset({"param", "parameter", "arg", "argument", "key", "keyword"})
_NUMPY_PARAM_HEADERS = frozenset({"parameters", "other parameters", "keyword arguments"})
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")


@dataclass(slots=True)
class DocInfo:
    """What a docstring says about a function.

    Attributes:
        description: The text before the first section, paragraphs kept.
        params: Parameter name → its description (continuation lines joined).
    """

    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> DocInfo:
    """Read a docstring in Google, NumPy or Sphinx style.

    Args:
        doc: The raw docstring (``fn.__doc__``); ``None`` gives an empty result.

    Returns:
        The description and the per-parameter descriptions.
    """
    if not doc or not doc.strip():
        return DocInfo()
    lines = inspect.cleandoc(doc).splitlines()
    if any(_SPHINX_FIELD.match(line.strip()) for line in lines):
        return _parse_sphinx(lines)
    if any(_NUMPY_UNDERLINE.match(line) for line in lines[1:]):
        return _parse_numpy(lines)
    return _parse_google(lines)


def _join(parts: list[str]) -> str:
    """Join continuation lines into one line of text."""
    return " ".join(p.strip() for p in parts if p.strip())


def _description(lines: list[str]) -> str:
    """The leading text, with blank-line paragraph breaks kept."""
    return "\n".join(lines).strip()


def _parse_sphinx(lines: list[str]) -> DocInfo:
    """Sphinx fields: ``:param [type] name: text`` with indented continuations."""
    info = DocInfo()
    first_field = next(i for i, line in enumerate(lines) if _SPHINX_FIELD.match(line.strip()))
    info.description = _description(lines[:first_field])
    name: str | None = None
    parts: list[str] = []
    for line in lines[first_field:]:
        match = _SPHINX_FIELD.match(line.strip())
        if match:
            role, arg, text = match.groups()
            is_param = role in _SPHINX_PARAM_ROLES and bool(arg)
            # ":param int count:" names the last word.
            name, parts = (arg.split()[-1], [text]) if is_param else (None, [])
        elif name is not None:
            parts.append(line)
        if name is not None:
            info.params[name] = _join(parts)
    return info


def _parse_numpy(lines: list[str]) -> DocInfo:
    """NumPy sections: a header line, a dashed underline, then the section body."""
    info = DocInfo()
    headers = [i - 1 for i, line in enumerate(lines) if i > 0 and _NUMPY_UNDERLINE.match(line)]
    info.description = _description(lines[: headers[0]])
    for n, start in enumerate(headers):
        end = headers[n + 1] if n + 1 < len(headers) else len(lines)
        if lines[start].strip().lower() in _NUMPY_PARAM_HEADERS:
            _numpy_entries(lines[start + 2 : end], info)
    return info


def _numpy_entries(body: list[str], info: DocInfo) -> None:
    """``name : type`` at the body's base indent; deeper lines describe it."""
    base = min((_indent(line) for line in body if line.strip()), default=0)
    names: list[str] = []
    parts: list[str] = []
    for line in body:
        if not line.strip():
            continue
        if _indent(line) == base:
            # "x, y : int" documents two parameters with one text.
            head = line.split(":")[0]
            names = [n.strip().lstrip("*") for n in head.split(",") if n.strip()]
            names = [n for n in names if n.isidentifier()]
            parts = []
        else:
            parts.append(line)
        for name in names:
            info.params[name] = _join(parts)


def _indent(line: str) -> int:
    """Number of leading spaces."""
    return len(line) - len(line.lstrip())


def _parse_google(lines: list[str]) -> DocInfo:
    """Google sections: ``Header:`` lines; parameters under Args/Arguments/Parameters."""
    info = DocInfo()
    sections = [
        i for i, line in enumerate(lines) if _indent(line) == 0 and _GOOGLE_HEADER.match(line)
    ]
    if not sections:
        info.description = _description(lines)
        return info
    info.description = _description(lines[: sections[0]])
    for n, start in enumerate(sections):
        end = sections[n + 1] if n + 1 < len(sections) else len(lines)
        if lines[start].strip().rstrip(":").lower() in _GOOGLE_PARAM_HEADERS:
            _google_entries(lines[start + 1 : end], info)
    return info


def _google_entries(body: list[str], info: DocInfo) -> None:
    """``name (type): text`` at the body's base indent; deeper lines continue it."""
    base = min((_indent(line) for line in body if line.strip()), default=0)
    name: str | None = None
    parts: list[str] = []
    for line in body:
        if not line.strip():
            continue
        match = _GOOGLE_ENTRY.match(line.strip()) if _indent(line) == base else None
        if match:
            name, parts = match.group(1), [match.group(3)]
        elif name is not None:
            parts.append(line)
        if name is not None:
            info.params[name] = _join(parts)
