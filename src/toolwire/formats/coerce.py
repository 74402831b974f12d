"""Schema typing of argument values that a format carries as text.

:func:`coerce_value` types an argument value that a format carries as text (XML-like
formats) by the tool's JSON Schema: ``"3"`` becomes ``3`` only if the schema says
integer or number.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring
from typing import Any

from ..errors import CallerError
from ..tooldef import ToolDef

__all__ = ["ToolIndex", "coerce_value", "json_string", "json_text", "schema_types", "value_to_json"]

# ``json.dumps(value, ensure_ascii=False)`` without the encoder json.dumps builds for
# every call that passes an option (on a short string, ten times the cost of the
# encoding itself; the readers encode every streamed piece of a value).
json_text: Callable[[Any], str] = json.JSONEncoder(ensure_ascii=False).encode
# The same for a ``str``: the C function that encoder calls for one.
json_string: Callable[[str], str] = encode_basestring


class ToolIndex:
    """Tool name → parameters JSON Schema, from tool definitions.

    Accepts :class:`~toolwire.tooldef.ToolDef` objects,
    ``{"type": "function", "function": {"name", "parameters"}}``, the bare
    ``{"name", "parameters"}`` shape and Anthropic's ``input_schema``.
    """

    __slots__ = ("_schemas",)

    def __init__(self, tools: Sequence[Mapping[str, Any] | ToolDef] | None = None) -> None:
        self._schemas: dict[str, dict[str, Any]] = {}
        if tools is None:
            return
        if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Sequence):
            raise CallerError(
                f"tools must be a list of tool definitions, got {type(tools).__name__}"
            )
        for position, tool in enumerate(tools):
            name, schema = _read_tool(tool, position)
            self._schemas[name] = schema

    def __contains__(self, name: object) -> bool:
        return name in self._schemas

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in definition order."""
        return tuple(self._schemas)

    def parameters(self, name: str) -> dict[str, Any] | None:
        """Return the parameters schema of tool ``name`` (``None`` if unknown)."""
        return self._schemas.get(name)

    def property_schema(self, name: str, key: str) -> dict[str, Any] | None:
        """Return the schema of argument ``key`` of tool ``name`` (``None`` if unknown)."""
        params = self._schemas.get(name)
        props = params.get("properties") if params else None
        prop = props.get(key) if isinstance(props, Mapping) else None
        return prop if isinstance(prop, dict) else None


def _read_tool(tool: Any, position: int) -> tuple[str, dict[str, Any]]:
    if isinstance(tool, ToolDef):
        return tool.name, tool.parameters or {}
    if not isinstance(tool, Mapping):
        raise CallerError(f"tools[{position}] must be a dict, got {type(tool).__name__}")
    spec = tool.get("function", tool)
    if not isinstance(spec, Mapping):
        raise CallerError(f"tools[{position}].function must be a dict")
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise CallerError(f"tools[{position}] has no function name")
    schema = spec.get("parameters", spec.get("input_schema"))
    if schema is None:
        schema = {}
    if not isinstance(schema, dict):
        raise CallerError(f"tools[{position}] ({name}): parameters must be a JSON Schema object")
    return name, schema


_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
# Non-string types are tried in this order; a string type always comes last, so a
# union like ["integer", "string"] types "3" as 3 and "three" as "three".
_TYPE_ORDER = ("null", "boolean", "integer", "number", "object", "array")
# Python-ish type names some tool definitions use (seen in vLLM's Qwen3-Coder tests).
_TYPE_ALIASES = {
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "str": "string",
}


def schema_types(schema: Mapping[str, Any] | None) -> set[str]:
    """Return the JSON types a schema allows (empty: unknown)."""
    if not isinstance(schema, Mapping):
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types = {_TYPE_ALIASES.get(declared, declared)}
    elif isinstance(declared, list):
        types = {_TYPE_ALIASES.get(t, t) for t in declared if isinstance(t, str)}
    else:
        types = set()
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key) or ():
            types |= schema_types(sub)
    if not types and "properties" in schema:
        types.add("object")
    if not types and "items" in schema:
        types.add("array")
    if not types and isinstance(schema.get("enum"), list):
        types |= {_json_type(v) for v in schema["enum"]}
    return types


def _json_type(value: Any) -> str:  # noqa: PLR0911 — one return per JSON type
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"


def coerce_value(text: str, schema: Mapping[str, Any] | None) -> Any:
    """Type an argument value carried as text, by its JSON Schema.

    ``"3"`` becomes ``3`` only when the schema allows integer (or number); ``"true"``
    becomes ``True`` only when it allows boolean; objects and arrays are parsed (JSON,
    or a Python literal as models sometimes write) only when the schema allows them.
    Anything else, including a value that does not fit its declared type, stays the
    exact text, whitespace included: the schema validator then reports the mismatch
    to the model instead of toolwire guessing.

    Args:
        text: The value as the model wrote it.
        schema: The argument's JSON Schema, or ``None`` when unknown.

    Returns:
        A JSON-ready Python value.
    """
    types = schema_types(schema)
    for kind in _TYPE_ORDER:
        if kind in types:
            ok, value = _COERCERS[kind](text.strip())
            if ok:
                return value
    return text


def value_to_json(text: str, schema: Mapping[str, Any] | None) -> str:
    """Return :func:`coerce_value`'s result as JSON text."""
    return json_text(coerce_value(text, schema))


def _as_null(text: str) -> tuple[bool, Any]:
    return (text in ("null", "None"), None)


def _as_bool(text: str) -> tuple[bool, Any]:
    lowered = text.lower()
    return (lowered in ("true", "false"), lowered == "true")


def _as_int(text: str) -> tuple[bool, Any]:
    if _INTEGER.fullmatch(text):
        return _read_int(text)
    ok, number = _as_number(text)
    if ok and isinstance(number, float) and number.is_integer():
        return True, int(number)
    return False, None


def _as_number(text: str) -> tuple[bool, Any]:
    if _INTEGER.fullmatch(text):
        return _read_int(text)
    if not _NUMBER.fullmatch(text):
        return False, None
    number = float(text)
    return (math.isfinite(number), number)


def _read_int(text: str) -> tuple[bool, Any]:
    """An integer, unless it has more digits than Python reads: then it stays text, and
    the tool's validation tells the model (never a bare ``ValueError`` from ``int``)."""
    try:
        return True, int(text)
    except ValueError:
        return False, None


def _as_container(kind: type) -> Any:
    def coerce(text: str) -> tuple[bool, Any]:
        value = _load_literal(text)
        return (isinstance(value, kind), value)

    return coerce


_NOT_JSON = object()


def _load_literal(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_JSON
    return value if _is_json_ready(value) else _NOT_JSON


def _is_json_ready(value: Any, depth: int = 0) -> bool:
    if depth > 200:
        return False
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_ready(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_ready(v, depth + 1) for k, v in value.items())
    return False


_COERCERS = {
    "null": _as_null,
    "boolean": _as_bool,
    "integer": _as_int,
    "number": _as_number,
    "object": _as_container(dict),
    "array": _as_container(list),
}
