"""Where a model's own chat template comes from: Jinja text, a file, or a model folder.

Hugging Face model repositories keep the template either in ``chat_template.jinja``
(newer repositories) or as ``chat_template`` in ``tokenizer_config.json`` (a string, or
a list of named templates, of which ``tool_use`` is the one that renders tools), next to
the EOS token text (a string or an ``AddedToken`` object with ``content``). The BOS
token is not read: a completions server adds it when it tokenizes the prompt.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CallerError

__all__ = ["TemplateSource", "read_template"]


@dataclass(frozen=True, slots=True)
class TemplateSource:
    """A chat template's text and the EOS token text its model declares.

    Attributes:
        text: The Jinja source.
        eos_token: The EOS token text (``None``: not declared).
    """

    text: str
    eos_token: str | None = None


def read_template(template: str | os.PathLike[str]) -> TemplateSource:
    """Read a template given as Jinja text, a ``.jinja`` file, a ``tokenizer_config.json``
    or a model folder holding either.

    Raises:
        CallerError: The path does not exist, or holds no chat template.
    """
    if isinstance(template, str) and ("{%" in template or "{{" in template):
        return TemplateSource(template)
    path = Path(template)
    if path.is_dir():
        for name in ("chat_template.jinja", "tokenizer_config.json"):
            if (path / name).is_file():
                return _read_file(path / name, path)
        raise CallerError(f"{path} holds neither chat_template.jinja nor tokenizer_config.json")
    if not path.is_file():
        raise CallerError(f"chat template file {path} does not exist")
    return _read_file(path, path.parent)


def _read_file(path: Path, folder: Path) -> TemplateSource:
    if path.suffix != ".json":
        config = folder / "tokenizer_config.json"
        tokens = _load_json(config) if config.is_file() else {}
        return TemplateSource(_text(path), _token(tokens, "eos_token"))
    settings = _load_json(path)
    return TemplateSource(_config_template(settings, path), _token(settings, "eos_token"))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CallerError(f"cannot read chat template {path}: {exc}") from None


def _load_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(_text(path))
    except ValueError as exc:
        raise CallerError(f"{path} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CallerError(f"{path} is not a JSON object")
    return value


def _config_template(config: dict[str, Any], path: Path) -> str:
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: the tool-use one renders tools
        named = {t.get("name"): t.get("template") for t in template if isinstance(t, dict)}
        template = named.get("tool_use") or named.get("default")
    if not isinstance(template, str) or not template:
        raise CallerError(
            f"{path} has no chat_template",
            hint="point to the model folder's chat_template.jinja instead",
        )
    return template


def _token(config: dict[str, Any], key: str) -> str | None:
    token = config.get(key)
    if isinstance(token, dict):
        token = token.get("content")
    return token if isinstance(token, str) else None
