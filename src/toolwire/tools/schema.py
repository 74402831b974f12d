"""Function signature → pydantic model → JSON Schema, built once per tool.

Strategy: every parameter becomes a field of a pydantic model created with
``create_model`` at definition time, so validation later is one ``model_validate``
call on a prebuilt validator. Fields get internal names (``p0``, ``p1``, ...) and the
parameter's name as their alias: a parameter called ``json``, ``schema`` or
``_private`` would otherwise clash with ``BaseModel``'s own attributes. A call's
arguments are then validated, when the model is of the plain shape, by
:func:`kwargs_validator`'s typed-dict validator over the same field validators, whose
output is the keyword arguments themselves (no model instance to turn back into them).

A parameter whose annotation pydantic cannot validate or describe fails here, at
definition time, with a :class:`ToolDefinitionError` naming the function and the
parameter — not on the first call in production.

:func:`strict_schema` rewrites a schema for OpenAI's strict mode (every object closed
with ``additionalProperties: false``, every property required, optional ones
nullable, no ``default`` and no ``$ref`` with siblings).
"""

from __future__ import annotations

import copy
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import SchemaValidator, core_schema

from ..errors import ToolDefinitionError
from .context import ToolContext

__all__ = [
    "ParamSpec",
    "SignatureModel",
    "KwargsValidator",
    "admits_null",
    "build_signature_model",
    "kwargs_validator",
    "strict_schema",
]

_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class _NoFieldTitles(GenerateJsonSchema):
    """Drop the auto-generated ``title`` of each property: noise in the model's prompt."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One parameter of a typed tool.

    Attributes:
        name: The parameter's name (the JSON key the model sends).
        field: The internal field name in the pydantic model.
        required: Whether the function has no default for it.
        accepts_none: Whether ``None`` is a valid value (used by strict mode, where the
            model sends ``null`` for an omitted optional parameter).
    """

    name: str
    field: str
    required: bool
    accepts_none: bool


@dataclass(frozen=True, slots=True)
class SignatureModel:
    """The prebuilt validator and schema of a typed tool.

    Attributes:
        model: The pydantic model whose fields are the function's parameters.
        params: The parameters in signature order.
        schema: The JSON Schema of the arguments object.
        context_param: The parameter annotated ``ToolContext`` (filled in by the
            executor, not in the schema), or ``None``.
    """

    model: type[pydantic.BaseModel]
    params: tuple[ParamSpec, ...]
    schema: dict[str, Any]
    context_param: str | None = None

    def kwargs(self, instance: pydantic.BaseModel) -> dict[str, Any]:
        """Turn a validated model instance back into keyword arguments.

        Parameters the model did not send are left out, so the function's own default
        applies (a mutable default is never shared through the model).
        """
        sent = instance.__pydantic_fields_set__  # what model_fields_set returns, no property
        values = instance.__dict__  # where pydantic keeps the fields' values
        # A loop, not a comprehension: once per call, and a comprehension is a frame.
        kwargs: dict[str, Any] = {}
        for param in self.params:
            if param.field in sent:
                kwargs[param.name] = values[param.field]
        return kwargs


KwargsValidator = Callable[[dict[str, Any]], dict[str, Any]]
"""Validates a call's arguments object straight into the keyword arguments."""

_DEFAULT_KEYS = frozenset({"type", "schema", "default"})  # a default wrapper of Field(x)


def kwargs_validator(signature: SignatureModel) -> KwargsValidator | None:
    """A validator that returns what ``signature.kwargs(model validation)`` returns, or
    ``None`` when the model's schema is not of the plain shape this handles.

    The arguments model is made so that its parameters can be named like ``BaseModel``'s
    own attributes, and its instance then turned back into a dict (a model instance, its
    fields set, a Python loop: about two thirds of a valid call's validation). This one
    is pydantic-core's ``typed-dict`` validator over the model's own field validators
    (the same schemas, so the same coercions), each parameter with a default optional
    and left out when not sent, extra keys forbidden as in the model: its output is
    the keyword-arguments dict itself. Only the model's plain shape is taken (a model of
    fields whose defaults are plain values, no validators or computed fields around
    them); anything else keeps the model. A call that fails it is validated by the model
    again, which words the error (tests/tools/test_sent_validation.py compares the two
    on generated arguments).
    """
    schema = signature.model.__pydantic_core_schema__
    definitions = None
    if schema.get("type") == "definitions":
        definitions = schema.get("definitions")
        schema = schema.get("schema", {})
    if not _plain_model(schema):
        return None
    model_fields = schema["schema"]["fields"]
    if list(model_fields) != [p.field for p in signature.params]:
        return None
    fields: dict[str, core_schema.TypedDictField] = {}
    for param in signature.params:
        field = _typed_dict_field(model_fields[param.field], param)
        if field is None:
            return None
        fields[param.name] = field
    config = schema.get("config")
    plain: core_schema.CoreSchema = core_schema.typed_dict_schema(
        fields, extra_behavior="forbid", config=config
    )
    if definitions is not None:
        plain = core_schema.definitions_schema(plain, definitions)
    return SchemaValidator(plain, config).validate_python


def _plain_model(schema: Any) -> bool:
    """Whether ``schema`` is a model of fields with nothing around them."""
    if schema.get("type") != "model" or schema.get("custom_init") or schema.get("root_model"):
        return False
    if schema.get("post_init") or schema.get("config", {}).get("extra_fields_behavior") != (
        "forbid"
    ):
        return False
    inner = schema.get("schema", {})
    return bool(
        inner.get("type") == "model-fields"
        and not inner.get("computed_fields")
        and inner.get("extras_schema") is None
        and inner.get("extras_keys_schema") is None
        and inner.get("extra_behavior") in (None, "forbid")
    )


def _typed_dict_field(field: Any, param: ParamSpec) -> core_schema.TypedDictField | None:
    """The model field of ``param`` as an optional-when-defaulted typed-dict field."""
    if field.get("type") != "model-field" or field.get("validation_alias") != param.name:
        return None
    inner = field["schema"]
    required = inner.get("type") != "default"
    if not required:
        if not _DEFAULT_KEYS.issuperset(inner):  # a factory, validate_default, on_error
            return None
        inner = inner["schema"]
    if required != param.required or _reads_info(inner):
        return None
    return core_schema.typed_dict_field(inner, required=required)


def _reads_info(node: Any) -> bool:
    """Whether a validator in ``node`` takes pydantic's ``ValidationInfo``: its
    ``field_name`` and ``data`` name the model's fields (``p0``), not the parameters."""
    if isinstance(node, dict):
        function = node.get("function")
        if isinstance(function, dict) and function.get("type") == "with-info":
            return True
        return any(_reads_info(value) for value in node.values())
    if isinstance(node, list | tuple):
        return any(_reads_info(value) for value in node)
    return False


def build_signature_model(fn: Any, qualname: str, descriptions: dict[str, str]) -> SignatureModel:
    """Build the validator and JSON Schema for ``fn``'s parameters.

    Args:
        fn: The tool function.
        qualname: The function's name for error messages.
        descriptions: Parameter name → description (from the docstring).

    Returns:
        The model, the parameter table and the schema.

    Raises:
        ToolDefinitionError: A parameter is variadic, positional-only, or has an
            annotation pydantic cannot validate or describe as JSON Schema.
    """
    hints = _type_hints(fn, qualname)
    fields: dict[str, Any] = {}
    params: list[ParamSpec] = []
    context_param: str | None = None
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        _check_kind(param, qualname)
        if hints.get(param.name) is ToolContext:  # toolwire's to fill in, not the model's
            context_param = _context_param(context_param, param.name, qualname)
            continue
        if ToolContext in typing.get_args(hints.get(param.name)):
            raise ToolDefinitionError(
                "a ToolContext parameter must be annotated exactly ToolContext",
                function=qualname,
                parameter=param.name,
                hint="write ctx: ToolContext (toolwire always passes one; never None)",
            )
        if param.name not in hints:
            # Without a hint the schema would say nothing and the model would guess (an
            # object for a number...): refuse, and say how to mean "any JSON value".
            raise ToolDefinitionError(
                "has no type annotation",
                function=qualname,
                parameter=param.name,
                hint=f"annotate it, e.g. {param.name}: str; write {param.name}: typing.Any "
                "to accept any JSON value",
            )
        annotation = hints[param.name]
        internal = f"p{index}"
        fields[internal] = (annotation, _field(param, descriptions.get(param.name)))
        required = param.default is inspect.Parameter.empty
        accepts_none = _accepts_none(annotation, qualname, param.name)
        params.append(ParamSpec(param.name, internal, required, accepts_none))
    described = {k: v for k, v in hints.items() if k != context_param}
    model = _create_model(qualname, fields, described)
    schema = _json_schema(model, qualname, described)
    return SignatureModel(model, tuple(params), schema, context_param)


def _context_param(earlier: str | None, name: str, qualname: str) -> str:
    """The one parameter annotated ``ToolContext``."""
    if earlier is not None:
        raise ToolDefinitionError(
            f"two parameters are annotated ToolContext ({earlier!r} and {name!r})",
            function=qualname,
            parameter=name,
            hint="keep one: every ToolContext of a call is the same object",
        )
    return name


def _type_hints(fn: Any, qualname: str) -> dict[str, Any]:
    """Resolve annotations (strings included); an unresolvable one is a definition error."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception as exc:  # NameError, TypeError: whatever evaluating an annotation raised
        name = _unresolvable(target)
        raise ToolDefinitionError(
            f"cannot resolve the type hint ({exc})",
            function=qualname,
            parameter=name,
            hint="define the annotation's type at module level, or import it there",
        ) from exc


def _unresolvable(target: Any) -> str | None:
    """The first parameter whose string annotation does not evaluate in the module."""
    namespace = getattr(target, "__globals__", {})
    for name, annotation in getattr(target, "__annotations__", {}).items():
        if not isinstance(annotation, str):
            continue
        try:
            eval(annotation, namespace)  # the same evaluation get_type_hints performs
        except Exception:
            return str(name)
    return None


def _check_kind(param: inspect.Parameter, qualname: str) -> None:
    """Tools are called with keyword arguments from a JSON object."""
    if param.kind in _SKIPPED_KINDS:
        raise ToolDefinitionError(
            "*args and **kwargs cannot be described as JSON Schema",
            function=qualname,
            parameter=param.name,
            hint="declare each argument explicitly",
        )
    if param.kind is inspect.Parameter.POSITIONAL_ONLY:
        raise ToolDefinitionError(
            "positional-only parameters cannot be passed from a JSON object",
            function=qualname,
            parameter=param.name,
            hint="remove the '/' from the signature",
        )


def _field(param: inspect.Parameter, description: str | None) -> Any:
    """A pydantic ``Field`` aliased to the parameter name, with default and description."""
    default = ... if param.default is inspect.Parameter.empty else param.default
    return pydantic.Field(default, alias=param.name, description=description or None)


def _accepts_none(annotation: Any, qualname: str, name: str) -> bool:
    """Whether ``None`` validates against the annotation; unsupported types fail here."""
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(annotation)
    except Exception as exc:  # PydanticSchemaGenerationError, PydanticUserError, TypeError
        raise _unsupported(exc, qualname, name) from exc
    try:
        adapter.validate_python(None)
    except pydantic.ValidationError:
        return False
    return True


def _create_model(
    qualname: str, fields: dict[str, Any], hints: dict[str, Any]
) -> type[pydantic.BaseModel]:
    """Create the arguments model: extra keys forbidden (hallucinated parameters)."""
    config = pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False)
    try:
        return pydantic.create_model(_model_name(qualname), __config__=config, **fields)
    except Exception as exc:
        raise _locate(exc, qualname, hints) from exc


def _json_schema(
    model: type[pydantic.BaseModel], qualname: str, hints: dict[str, Any]
) -> dict[str, Any]:
    """The arguments schema, without the model's auto-generated titles."""
    try:
        schema = model.model_json_schema(by_alias=True, schema_generator=_NoFieldTitles)
    except Exception as exc:  # PydanticInvalidForJsonSchema: e.g. a Callable annotation
        raise _locate(exc, qualname, hints) from exc
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def _locate(exc: Exception, qualname: str, hints: dict[str, Any]) -> ToolDefinitionError:
    """Find which parameter's annotation is at fault by describing each one alone."""
    for name, annotation in hints.items():
        if name == "return":
            continue
        try:
            pydantic.TypeAdapter(annotation).json_schema()
        except Exception:
            return _unsupported(exc, qualname, name)
    return ToolDefinitionError(f"cannot build a schema ({exc})", function=qualname)


def _unsupported(exc: Exception, qualname: str, name: str) -> ToolDefinitionError:
    """The error for one parameter whose annotation cannot become a schema."""
    first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ToolDefinitionError(
        f"unsupported annotation ({first_line})", function=qualname, parameter=name
    )


def _model_name(qualname: str) -> str:
    """A valid class name for the arguments model."""
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in qualname)
    return f"{cleaned}_arguments"


# --- OpenAI strict mode -------------------------------------------------------------


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite a JSON Schema for OpenAI strict mode (structured outputs for tools).

    Strict mode requires every object to list all its properties as required and to
    set ``additionalProperties: false``; a property the function treats as optional
    therefore becomes nullable, and the validator drops the ``null`` again so the
    function's default applies. ``default`` is removed (strict mode rejects it) and a
    ``$ref`` with sibling keywords is wrapped in ``allOf``.

    Args:
        schema: A schema (not modified).

    Returns:
        A new, strict schema.
    """
    result = copy.deepcopy(schema)
    _strict_node(result)
    return result


_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_VALUES = ("items", "not", "additionalProperties", "contains")
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")


def _strict_node(node: Any) -> None:
    """Apply the strict rules to one schema node and recurse into its subschemas.

    Only keywords that hold schemas are visited: ``enum``, ``const`` and ``examples``
    hold data, which must not be rewritten.
    """
    if not isinstance(node, dict):
        return
    node.pop("default", None)
    if "$ref" in node and len(node) > 1:
        node["allOf"] = [{"$ref": node.pop("$ref")}]
    if node.get("type") == "object" or "properties" in node:
        _close_object(node)
    for key in _SCHEMA_LISTS:
        for sub in node.get(key, ()):
            _strict_node(sub)
    for key in _SCHEMA_VALUES:
        _strict_node(node.get(key))
    for key in _SCHEMA_MAPS:
        for sub in (node.get(key) or {}).values():
            _strict_node(sub)


def _close_object(node: dict[str, Any]) -> None:
    """All properties required; the formerly optional ones may be ``null``."""
    properties: dict[str, Any] = node.setdefault("properties", {})
    required = set(node.get("required", []))
    for name, sub in properties.items():
        if name not in required and not admits_null(sub):
            properties[name] = _make_nullable(sub)
    node["required"] = list(properties)
    node["additionalProperties"] = False


def _make_nullable(node: Any) -> dict[str, Any]:
    """``anyOf [node, null]``, keeping the description where the model reads it first."""
    inner = dict(node) if isinstance(node, dict) else {}
    wrapped: dict[str, Any] = {"anyOf": [inner, {"type": "null"}]}
    if "description" in inner:
        wrapped = {"description": inner.pop("description"), **wrapped}
    return wrapped


def admits_null(node: Any) -> bool:
    """Whether a schema already admits ``null`` (its type, or an ``anyOf`` option)."""
    if not isinstance(node, dict):
        return False
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(admits_null(option) for option in node.get("anyOf", []))
