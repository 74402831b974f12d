"""JSON Schema regular expressions checked in linear time, for schemas from elsewhere.

A raw schema (an MCP server's, say) can carry a ``pattern`` such as ``^(a+)+$`` that
makes a backtracking engine — Python's ``re``, which ``jsonschema`` uses — run for
hours on a 36-character argument, on the event loop, where no timeout can fire. The
validators built here check ``pattern``, ``patternProperties`` and, where it depends
on them, ``additionalProperties`` with pydantic-core's regex engine (Rust's ``regex``
crate, already a dependency through pydantic), whose running time is linear in the
text. It has no lookaround and no backreferences (nor does ECMA-262 need them often):
a schema with such a pattern is refused when the tool is built, as is
``unevaluatedProperties`` next to ``patternProperties`` (``jsonschema`` would match
those with ``re``).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic_core import SchemaError, SchemaValidator, core_schema

__all__ = ["check_patterns", "linear_validator", "search"]

_CACHED = 1024  # compiled patterns kept


@functools.lru_cache(maxsize=_CACHED)
def _compiled(pattern: str) -> SchemaValidator:
    return SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))


def search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's semantics)."""
    return _compiled(pattern).isinstance_python(text)


def check_patterns(schema: object) -> str | None:
    """Why the linear engine cannot check ``schema``'s patterns, or ``None``."""
    patterns = list(_patterns(schema))
    for pattern in patterns:
        try:
            _compiled(pattern)
        except SchemaError as exc:
            reason = str(exc).split("error:", 1)[-1].strip().splitlines()[0]
            return f"the pattern {pattern!r:.80} cannot be checked in linear time ({reason})"
    if _has_key(schema, "unevaluatedProperties") and _has_key(schema, "patternProperties"):
        return "unevaluatedProperties next to patternProperties is not supported"
    return None


def _patterns(node: object) -> Iterator[str]:
    """Every ``pattern`` value and ``patternProperties`` key in a schema."""
    if isinstance(node, Mapping):
        value = node.get("pattern")
        if isinstance(value, str):
            yield value
        keyed = node.get("patternProperties")
        if isinstance(keyed, Mapping):
            yield from (key for key in keyed if isinstance(key, str))
        for child in node.values():
            yield from _patterns(child)
    elif isinstance(node, list):
        for child in node:
            yield from _patterns(child)


def _has_key(node: object, key: str) -> bool:
    if isinstance(node, Mapping):
        return key in node or any(_has_key(child, key) for child in node.values())
    if isinstance(node, list):
        return any(_has_key(child, key) for child in node)
    return False


@functools.cache
def linear_validator(cls: Any) -> Any:
    """``cls`` (a ``jsonschema`` validator class) with the keywords that match
    regular expressions checked by the linear engine."""
    # The optional toolwire[schema] extra (untyped), already imported by the caller.
    jsonschema: Any = importlib.import_module("jsonschema")
    original = cls.VALIDATORS.get("additionalProperties")

    def pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and not search(patrn, instance):
            yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(
        validator: Any, keyed: Mapping[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for regex, subschema in keyed.items():
            for key, value in instance.items():
                if search(regex, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=regex)

    def additional_properties(validator: Any, ap: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if "patternProperties" not in schema:  # no regex involved: jsonschema's own
            if original is not None:
                yield from original(validator, ap, instance, schema)
            return
        if not validator.is_type(instance, "object"):
            return
        extras = sorted(_extras(instance, schema), key=str)
        if validator.is_type(ap, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], ap, path=extra)
        elif not ap and extras:
            joined = ", ".join(repr(each) for each in extras)
            regexes = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            verb = "does" if len(extras) == 1 else "do"
            yield jsonschema.ValidationError(
                f"{joined} {verb} not match any of the regexes: {regexes}"
            )

    keywords = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    return jsonschema.validators.extend(cls, keywords)


def _extras(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[str]:
    """The properties neither ``properties`` nor ``patternProperties`` cover."""
    properties = schema.get("properties", {})
    regexes = list(schema.get("patternProperties", {}))
    for key in instance:
        if key not in properties and not any(search(regex, key) for regex in regexes):
            yield key
