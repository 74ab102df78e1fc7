"""The lazy half of schema derivation: a pydantic validator and the JSON Schema.

Built on first use, once per function. The arguments become a ``TypedDict``
validated by one ``TypeAdapter`` (``FunctionSchema.validate`` rejects unknown
keys): a TypedDict, unlike a model, accepts any parameter name (``json``,
``_private``, ``model_x``) and validates straight into the ``dict`` of keyword
arguments the function is called with, leaving omitted optional arguments to
the function's own defaults. The JSON Schema comes from the same adapter,
tidied for models: no auto-generated titles, non-recursive ``$defs`` inlined,
defaults added, and narrowed where pydantic's own schema admits values its
validator refuses (``_generator``). Simple signatures skip pydantic for the
JSON Schema (``_fast``).
"""

from __future__ import annotations

import copy
import typing
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Required

from pydantic import AfterValidator, Field, TypeAdapter
from pydantic_core import to_jsonable_python
from typing_extensions import TypedDict

from openprogram.schema._fast import FieldSpec, finish
from openprogram.schema._generator import JsonSchemaGenerator

__all__ = ["build_adapter", "build_json_schema"]


class _NoFieldTitles(JsonSchemaGenerator):
    # "City" as the title of "city" is noise a model pays tokens for.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def build_adapter(title: str, fields: Sequence[FieldSpec]) -> TypeAdapter[dict[str, Any]]:
    """One ``TypeAdapter`` validating the whole arguments object.

    Args:
        title: Name of the generated ``TypedDict`` (the tool name).
        fields: The visible parameters, in signature order.
    """
    annotations: dict[str, Any] = {}
    for spec in fields:
        annotated = _annotated(spec)
        annotations[spec.name] = Required[annotated] if spec.required else NotRequired[annotated]
    # A TypedDict built at run time is opaque to type checkers: call its factory as Any.
    make_typed_dict: Any = TypedDict
    adapter: TypeAdapter[dict[str, Any]] = TypeAdapter(
        make_typed_dict(f"{title}_arguments", annotations, total=False)
    )
    return adapter


def build_json_schema(adapter: TypeAdapter[Any], fields: Sequence[FieldSpec]) -> dict[str, Any]:
    """The model-facing JSON Schema of the arguments object."""
    schema = adapter.json_schema(schema_generator=_NoFieldTitles)
    schema.pop("title", None)
    return finish(_inline_defs(schema), fields)


def _annotated(spec: FieldSpec) -> Any:
    # Metadata order decides who wins: later FieldInfo descriptions override earlier ones.
    tp, meta = spec.annotation, []
    if spec.doc:
        meta.append(Field(description=spec.doc))
    if typing.get_origin(tp) is typing.Annotated:
        tp, *inner = typing.get_args(tp)
        meta.extend(inner)
    if spec.override:
        meta.append(Field(description=spec.override))
    if spec.options is not None:
        # After, not before: a before-validator would hand pydantic a Python value, which
        # strict mode checks Python-side (a date written as a string would then fail).
        meta.append(AfterValidator(_one_of(spec.options)))
        meta.append(Field(json_schema_extra={"enum": list(spec.options)}))
    if not meta:
        return tp
    return typing.Annotated[(tp, *meta)]


def _one_of(options: tuple[Any, ...]) -> Any:
    def check(value: Any) -> Any:
        written = to_jsonable_python(value)  # compared as the model wrote it: Shade.DARK -> "dark"
        for option in options:
            # bool is an int in Python; keep True from matching 1.
            if written == option and isinstance(written, bool) == isinstance(option, bool):
                return value
        shown = ", ".join(repr(o) for o in options)
        raise ValueError(f"expected one of {shown}")

    return check


_DATA_KEYS = frozenset({"default", "enum", "const", "examples"})


def _inline_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """Replace ``$ref``s to non-recursive ``$defs`` by their content (recursive ones stay)."""
    defs: dict[str, Any] = schema.pop("$defs", {})
    if not defs:
        return schema
    recursive = {name for name in defs if _reaches(name, name, defs, set())}

    def sub(node: Any) -> Any:
        if isinstance(node, list):
            return [sub(x) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] not in recursive:
            target = _untitled(ref[8:], defs[ref[8:]])
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            return sub({**target, **siblings})
        return {k: (v if k in _DATA_KEYS else sub(v)) for k, v in node.items()}

    out: dict[str, Any] = sub(schema)
    if recursive:
        out["$defs"] = {
            name: sub(_untitled(name, defs[name])) for name in defs if name in recursive
        }
    return out


def _untitled(name: str, node: dict[str, Any]) -> dict[str, Any]:
    # pydantic titles each definition with its class name: noise once inlined.
    node = copy.copy(node)
    if node.get("title") == name:
        del node["title"]
    return node


def _reaches(start: str, goal: str, defs: Mapping[str, Any], seen: set[str]) -> bool:
    for ref in _refs(defs[start]):
        if ref == goal:
            return True
        if ref in defs and ref not in seen:
            seen.add(ref)
            if _reaches(ref, goal, defs, seen):
                return True
    return False


def _refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [r for x in node for r in _refs(x)]
    if not isinstance(node, dict):
        return []
    found = []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found.append(ref[8:])
    for k, v in node.items():
        if k not in _DATA_KEYS:
            found.extend(_refs(v))
    return found
