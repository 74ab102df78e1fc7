"""JSON Schemas of simple signatures, without pydantic; the shared parameter record.

Most tools take a few strings, numbers and flags. For those, writing the JSON
Schema directly costs microseconds where a pydantic ``TypeAdapter`` costs about
a millisecond, which adds up when a menu of hundreds of tools is first sent.
:func:`fast_json_schema` handles exactly that subset and returns ``None`` for
anything else; its output is byte-for-byte what the pydantic path produces
(a property test checks this). Validation always goes through pydantic.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["NO_DEFAULT", "FieldSpec", "fast_json_schema", "finish"]

NO_DEFAULT: Any = object()
"""``FieldSpec.default`` of a required parameter."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldSpec:
    """One model-facing parameter."""

    name: str
    """Parameter name."""
    annotation: Any
    """Resolved annotation (``Any`` when the parameter has none)."""
    default: Any = NO_DEFAULT
    """Default value; absent for required parameters."""
    doc: str | None = None
    """Description from the docstring (an ``Annotated`` ``Field`` description wins)."""
    override: str | None = None
    """Description from ``input=`` (wins over everything)."""
    options: tuple[Any, ...] | None = None
    """Allowed values from ``input=`` (an ``enum``, enforced)."""

    @property
    def required(self) -> bool:
        """Whether the model must supply it."""
        return self.default is NO_DEFAULT


_NO_JSON: Any = object()
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    types.NoneType: {"type": "null"},
    Any: {},
}
_LITERAL_TYPES = {str: "string", int: "integer", bool: "boolean"}


def fast_json_schema(fields: Sequence[FieldSpec]) -> dict[str, Any] | None:
    """The arguments' JSON Schema when every parameter is simple, else ``None``."""
    props: dict[str, Any] = {}
    for spec in fields:
        if spec.options is not None:
            return None
        prop = _simple(spec.annotation)
        if prop is None:
            return None
        description = spec.override or spec.doc
        if description:
            prop["description"] = description
        props[spec.name] = dict(sorted(prop.items()))  # pydantic sorts keywords too
    required = [spec.name for spec in fields if spec.required]
    schema: dict[str, Any] = {"properties": props, "type": "object"}
    if required:
        schema["required"] = required
    return finish(schema, fields)


def _simple(tp: Any) -> dict[str, Any] | None:
    scalar = _SCALARS.get(tp)
    if scalar is not None:
        return dict(scalar)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is list and len(args) == 1:
        items = _simple(args[0])
        return None if items is None else {"items": dict(sorted(items.items())), "type": "array"}
    if origin is typing.Literal:
        kinds = {type(a) for a in args}
        if len(kinds) == 1 and (kind := kinds.pop()) in _LITERAL_TYPES:
            if len(args) == 1:  # pydantic writes a one-value Literal as a const
                return {"const": args[0], "type": _LITERAL_TYPES[kind]}
            return {"enum": list(args), "type": _LITERAL_TYPES[kind]}
        return None
    optional = (origin is typing.Union or origin is types.UnionType) and len(args) == 2
    if optional and args[1] is types.NoneType and args[0] is not types.NoneType:
        inner = _simple(args[0])
        if inner:  # Any | None is not "simple": pydantic renders it differently
            return {"anyOf": [dict(sorted(inner.items())), {"type": "null"}]}
    return None


def finish(schema: dict[str, Any], fields: Sequence[FieldSpec]) -> dict[str, Any]:
    """Add defaults and put the keywords in model-facing order."""
    props = schema.setdefault("properties", {})
    for spec in fields:
        if not spec.required and spec.name in props:
            jsonable = _jsonable(spec.default)
            if jsonable is not _NO_JSON:
                props[spec.name]["default"] = jsonable
    # Model-facing order: what it is, its properties, which are required, then the rest.
    ordered: dict[str, Any] = {"type": "object", "properties": props}
    if schema.get("required"):
        ordered["required"] = schema["required"]
    ordered["additionalProperties"] = False
    for key, value in schema.items():
        ordered.setdefault(key, value)
    return ordered


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data, or ``_NO_JSON`` when it has none (no default is shown then)."""
    # pydantic_core loads with the first default shown, not at ``import openprogram``
    import pydantic_core  # noqa: PLC0415 - deferred for import cost

    try:
        out = pydantic_core.to_jsonable_python(value)
    except (TypeError, ValueError, pydantic_core.PydanticSerializationError):
        return _NO_JSON
    if isinstance(out, float) and not math.isfinite(out):
        return _NO_JSON
    return out
