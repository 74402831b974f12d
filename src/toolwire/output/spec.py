"""An output type as a JSON Schema and a validator: what ``Agent(output_type=T)`` asks for.

``T`` is a pydantic model, a dataclass, a TypedDict or a plain type (``int``,
``list[str]``, a union...). pydantic gives its JSON Schema and validates values
(``TypeAdapter``). The schema becomes the parameters of the ``final_result`` tool, which
every provider requires to be an object with properties: a type whose schema is such an
object (a model, a dataclass, a TypedDict) is used as it is; any other type is *wrapped*
as ``{"result": <schema>}`` and unwrapped again, so ``output_type=int`` asks for
``{"result": 3}`` and ``RunResult.output`` is ``3``.

Also here: the constructs a schema uses that a provider's native mode refuses
(:func:`constructs`), checked when the agent is built.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pydantic

from ..errors import CallerError
from ..tools.schema import admits_null, strict_schema

__all__ = ["FINAL_RESULT", "WRAP_KEY", "OutputSpec", "constructs"]

FINAL_RESULT = "final_result"
"""The output tool's name (fixed: tests and prompts name it)."""

WRAP_KEY = "result"
"""The one property a wrapped plain type's value sits under."""

_DESCRIPTION = (
    "Give your final answer by calling this tool; its arguments are the answer. "
    "Call it once, when you are done."
)


@dataclass(frozen=True)
class OutputSpec:
    """An output type, its parameters schema and its validator.

    Attributes:
        type: The output type as the caller gave it.
        schema: The JSON Schema of the ``final_result`` arguments (an object).
        wrapped: Whether the type's own schema sits under ``"result"``.
        description: The output tool's description (the type's docstring, if any,
            after the instruction to call it).
    """

    type: Any
    schema: dict[str, Any]
    wrapped: bool
    description: str
    adapter: pydantic.TypeAdapter[Any]  # validates the arguments (the wrapper, if wrapped)

    @classmethod
    def of(cls, output_type: Any) -> OutputSpec:
        """The spec of ``output_type``.

        Raises:
            CallerError: pydantic can neither validate nor describe the type.
        """
        try:
            adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output_type)
            schema = adapter.json_schema()
        except (
            pydantic.PydanticUserError,
            pydantic.PydanticSchemaGenerationError,
            TypeError,
        ) as exc:
            raise CallerError(
                f"output_type={output_type!r} has no JSON Schema ({_first_line(exc)})",
                hint="use a pydantic model, a dataclass, a TypedDict or a JSON type "
                "such as int or list[str]",
            ) from None
        wrapped = not _is_object(schema)
        if wrapped:
            defs = schema.pop("$defs", None)
            schema = {"type": "object", "properties": {WRAP_KEY: schema}, "required": [WRAP_KEY]}
            if defs:
                schema["$defs"] = defs
            fields: Any = {WRAP_KEY: (output_type, ...)}
            adapter = pydantic.TypeAdapter(pydantic.create_model("final_result", **fields))
        doc = _own_doc(output_type)
        description = f"{_DESCRIPTION} {doc}" if doc else _DESCRIPTION
        return cls(output_type, schema, wrapped, description, adapter)

    def validate(self, arguments: Any) -> Any:
        """The output value of ``final_result``'s arguments (or a native JSON answer).

        Raises:
            pydantic.ValidationError: The arguments do not fit the type; its locations
                are those of the arguments (``result.…`` for a wrapped type).
        """
        value = self.adapter.validate_python(arguments)
        return getattr(value, WRAP_KEY) if self.wrapped else value

    def drop_strict_nulls(self, arguments: Any) -> Any:
        """Arguments written to the strict schema, with the ``null`` of each optional
        top-level property whose own schema admits none removed, so that its default
        applies (strict mode makes every property required, optional ones nullable)."""
        if not isinstance(arguments, dict):
            return arguments
        properties = self.schema.get("properties", {})
        required = set(self.schema.get("required", ()))
        return {
            key: value
            for key, value in arguments.items()
            if value is not None
            or key in required
            or key not in properties
            or admits_null(properties[key])
        }

    def partial(self, arguments: Any) -> Any:
        """What a partial arguments object shows of the output (unwrapped)."""
        if self.wrapped:
            return arguments.get(WRAP_KEY) if isinstance(arguments, dict) else None
        return arguments

    def strict_schema(self) -> dict[str, Any]:
        """The schema in the strict form OpenAI's native mode requires (every property
        required, optional ones nullable, no other properties)."""
        return strict_schema(copy.deepcopy(self.schema))


def constructs(schema: dict[str, Any]) -> set[str]:
    """The constructs in ``schema`` that some provider refuses.

    ``recursive`` (a ``$ref`` that reaches itself), ``oneOf`` (pydantic writes it for a
    discriminated union), ``allOf``.
    """
    found: set[str] = {key for node in _nodes(schema) for key in ("oneOf", "allOf") if key in node}
    if _recursive(schema):
        found.add("recursive")
    return found


def _recursive(schema: dict[str, Any]) -> bool:
    defs = schema.get("$defs") or {}
    edges = {name: set(_refs(node)) for name, node in defs.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for name in edges.get(start, ()):
            if name == target:
                return True
            if name not in seen:
                seen.add(name)
                if reaches(name, target, seen):
                    return True
        return False

    return any(reaches(name, name, set()) for name in edges)


def _refs(node: Any) -> Iterator[str]:
    for item in _nodes(node):
        ref = item.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref.removeprefix("#/$defs/")


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    """Every object in a JSON value, depth first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" and isinstance(schema.get("properties"), dict)


def _own_doc(output_type: Any) -> str:
    """A class's own docstring (not one inherited from ``BaseModel`` or ``dict``)."""
    doc = getattr(output_type, "__dict__", {}).get("__doc__")
    if not isinstance(doc, str) or doc.startswith(f"{getattr(output_type, '__name__', '')}("):
        return ""  # a dataclass's generated signature is no description
    return " ".join(doc.split())


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
