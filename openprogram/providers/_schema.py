"""Provider dialects of JSON Schema: OpenAI strict mode and Gemini's OpenAPI subset.

The schema generator emits plain JSON Schema; these transforms adapt a copy
for one wire format and never touch the original.

- OpenAI strict (Structured Outputs guide, "Supported schemas"): every object
  has ``additionalProperties: false`` and lists *all* its properties as
  required; a property that was optional becomes nullable instead. An open
  mapping (``dict[str, T]``) cannot be strict: ``openai_strict`` returns
  ``None`` and the caller sends the schema non-strict.
- Gemini (API reference, ``Schema`` object): an OpenAPI 3.0 subset with no
  ``$ref``/``$defs`` (inlined here), no ``additionalProperties``, ``nullable``
  instead of ``"null"`` types, ``enum`` only on strings, string ``format``
  only ``enum``/``date-time``, upper-case type names.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["gemini_schema", "openai_strict", "strip_strict_nulls"]

JSON = dict[str, Any]

_GEMINI_KEYS = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "items",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "minProperties",
        "maxProperties",
        "anyOf",
        "propertyOrdering",
    }
)
_GEMINI_NUMBER_FORMATS = frozenset({"int32", "int64", "float", "double"})
_MAX_INLINE_DEPTH = 32


# -- OpenAI strict -----------------------------------------------------------------------


class _NotStrict(Exception):
    """The schema has a construct strict mode cannot express."""


def openai_strict(schema: Mapping[str, Any]) -> JSON | None:
    """A strict-mode copy of an object schema, or ``None`` if it cannot be strict."""
    out = copy.deepcopy(dict(schema))
    if out.get("type") != "object":
        return None
    out.setdefault("properties", {})  # a tool without parameters is an empty, closed object
    try:
        _strict(out)
    except _NotStrict:
        return None
    return out


def _strict(node: Any) -> None:
    if isinstance(node, list):
        for item in node:
            _strict(item)
        return
    if not isinstance(node, dict):
        return
    node.pop("default", None)  # strict mode rejects "default"
    if "patternProperties" in node:
        raise _NotStrict
    if node.get("type") == "object" or "properties" in node:
        _strict_object(node)
    for key in ("items", "anyOf", "allOf", "prefixItems"):
        if key in node:
            _strict(node[key])
    for key in ("$defs", "definitions"):
        for sub in (node.get(key) or {}).values():
            _strict(sub)


def _strict_object(node: JSON) -> None:
    if node.get("additionalProperties", False) is not False or "properties" not in node:
        raise _NotStrict  # an open mapping: its keys are not known in advance
    props: dict[str, Any] = node["properties"]
    required = set(node.get("required") or ())
    for name, prop in props.items():
        _strict(prop)
        if name not in required:
            props[name] = _nullable(prop)
    node["required"] = list(props)
    node["additionalProperties"] = False


def _nullable(prop: Any) -> Any:
    if not isinstance(prop, dict):
        return prop
    kind = prop.get("type")
    if isinstance(kind, str) and "$ref" not in prop:
        if kind != "null":
            prop["type"] = [kind, "null"]
        _enum_allows_null(prop)
        return prop
    if isinstance(kind, list):
        if "null" not in kind:
            prop["type"] = [*kind, "null"]
        _enum_allows_null(prop)
        return prop
    if isinstance(prop.get("anyOf"), list):
        if not any(isinstance(b, dict) and b.get("type") == "null" for b in prop["anyOf"]):
            prop["anyOf"].append({"type": "null"})
        return prop
    description = prop.pop("description", None)
    wrapped: JSON = {"anyOf": [prop, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


def _enum_allows_null(prop: JSON) -> None:
    if isinstance(prop.get("enum"), list) and None not in prop["enum"]:
        prop["enum"].append(None)


def strip_strict_nulls(value: Any, schema: Mapping[str, Any]) -> Any:
    """Undo ``openai_strict`` on a value: drop the nulls strict mode forced on optional fields.

    Strict mode makes an optional property required-but-nullable, so the model
    writes ``"units": null`` where it means "not given". Against the original
    schema that null is invalid; removing it lets the default apply. A null the
    original schema allows is kept.
    """
    defs: dict[str, Any] = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _strip(value, schema, defs, 0)


def _strip(value: Any, node: Any, defs: Mapping[str, Any], depth: int) -> Any:
    node = _deref(node, defs)
    if not isinstance(node, Mapping) or depth > _MAX_INLINE_DEPTH:
        return value
    if isinstance(value, dict):
        props = node.get("properties")
        if not isinstance(props, Mapping):
            branch = _object_branch(node, defs)
            return value if branch is None else _strip(value, branch, defs, depth + 1)
        required = set(node.get("required") or ())
        return {
            key: _strip(item, props.get(key), defs, depth + 1)
            for key, item in value.items()
            if not (
                item is None
                and key not in required
                and key in props
                and not _allows_null(props[key], defs)
            )
        }
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [_strip(item, node["items"], defs, depth + 1) for item in value]
    return value


def _deref(node: Any, defs: Mapping[str, Any]) -> Any:
    seen = 0
    while isinstance(node, Mapping) and "$ref" in node and seen <= _MAX_INLINE_DEPTH:
        try:
            node = _resolve_ref(node["$ref"], defs)
        except ValueError:
            return None  # a reference we cannot follow: leave the value as it is
        seen += 1
    return node


def _object_branch(node: Mapping[str, Any], defs: Mapping[str, Any]) -> Any:
    objects = [
        b
        for b in (_deref(b, defs) for b in node.get("anyOf") or node.get("oneOf") or [])
        if isinstance(b, Mapping) and isinstance(b.get("properties"), Mapping)
    ]
    return objects[0] if len(objects) == 1 else None


def _allows_null(node: Any, defs: Mapping[str, Any]) -> bool:
    node = _deref(node, defs)
    if not isinstance(node, Mapping) or not node:
        return True  # no schema, or {}: anything goes
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in (node.get("enum") or ()) or ("const" in node and node["const"] is None):
        return True
    branches = node.get("anyOf") or node.get("oneOf") or ()
    return any(_allows_null(b, defs) for b in branches)


# -- Gemini ------------------------------------------------------------------------------


def gemini_schema(schema: Mapping[str, Any]) -> JSON:
    """Gemini's OpenAPI-subset copy of a JSON Schema (``$ref``s inlined)."""
    root = dict(schema)
    defs: dict[str, Any] = {**(root.get("definitions") or {}), **(root.get("$defs") or {})}
    return _gemini(root, defs, ())


def _resolve_ref(ref: str, defs: Mapping[str, Any]) -> Any:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and ref[len(prefix) :] in defs:
            return defs[ref[len(prefix) :]]
    raise ValueError(f"cannot inline $ref {ref!r}: only local #/$defs/... references are supported")


def _gemini(node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...]) -> JSON:
    if "$ref" in node:
        ref = node["$ref"]
        if ref in seen or len(seen) > _MAX_INLINE_DEPTH:
            # A recursive type cannot be inlined: stop at an untyped object.
            return {"type": "OBJECT", "description": f"(recursive {ref.rsplit('/', 1)[-1]})"}
        merged = {**_resolve_ref(ref, defs), **{k: v for k, v in node.items() if k != "$ref"}}
        return _gemini(merged, defs, (*seen, ref))
    node = _merge_all_of(node)
    out: JSON = {}
    notes: list[str] = []
    _gemini_type(node, out, defs, seen)
    if "const" in node:
        node = {**node, "enum": [node["const"]]}
    enum = node.get("enum")
    if isinstance(enum, list):
        values = [v for v in enum if v is not None]
        if None in enum:
            out["nullable"] = True
        if values and all(isinstance(v, str) for v in values):
            out["enum"], out["type"] = values, "STRING"
        elif values:
            notes.append("one of: " + ", ".join(json.dumps(v) for v in values))
    for key, value in node.items():
        copied = key in _GEMINI_KEYS and key not in ("anyOf", "type", "enum", "nullable")
        if copied and (key not in out or key == "description"):  # the node's words beat a branch's
            out[key] = value
    if node.get("nullable") is True:
        out["nullable"] = True
    _gemini_children(out, defs, seen)
    _gemini_format(out)
    if notes:
        out["description"] = " ".join(filter(None, [out.get("description"), *notes]))
    return out


def _merge_all_of(node: Mapping[str, Any]) -> Mapping[str, Any]:
    parts = node.get("allOf")
    if not isinstance(parts, list):
        return node
    merged: JSON = {k: v for k, v in node.items() if k != "allOf"}
    for part in parts:
        if isinstance(part, dict):
            for key, value in part.items():
                merged.setdefault(key, value)
    return merged


def _gemini_type(
    node: Mapping[str, Any], out: JSON, defs: Mapping[str, Any], seen: tuple[str, ...]
) -> None:
    kind = node.get("type")
    branches = node.get("anyOf") or node.get("oneOf")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            out["nullable"] = True
        if len(kinds) == 1:
            kind = kinds[0]
        else:
            branches, kind = [{**node, "type": k} for k in kinds], None
    if isinstance(branches, list):
        real = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        if len(real) < len(branches):
            out["nullable"] = True
        if len(real) == 1 and isinstance(real[0], dict):
            out.update({k: v for k, v in _gemini(real[0], defs, seen).items() if k not in out})
        elif real:
            out["anyOf"] = [_gemini(b, defs, seen) for b in real if isinstance(b, dict)]
    if isinstance(kind, str) and kind != "null":
        out["type"] = kind.upper()
    elif kind is None and "properties" in node and "type" not in out:
        out["type"] = "OBJECT"


def _gemini_children(out: JSON, defs: Mapping[str, Any], seen: tuple[str, ...]) -> None:
    if isinstance(out.get("items"), dict):
        out["items"] = _gemini(out["items"], defs, seen)
    elif "items" in out:
        del out["items"]  # tuple-style items have no Gemini form
    if isinstance(out.get("properties"), dict):
        out["properties"] = {
            name: _gemini(sub, defs, seen) if isinstance(sub, dict) else {}
            for name, sub in out["properties"].items()
        }
        if "required" in out:
            out["required"] = [r for r in out["required"] if r in out["properties"]]


def _gemini_format(out: JSON) -> None:
    fmt = out.get("format")
    if fmt is None:
        return
    kind = out.get("type")
    if kind == "STRING" and fmt in ("date-time", "enum"):
        return
    if kind in ("NUMBER", "INTEGER") and fmt in _GEMINI_NUMBER_FORMATS:
        return
    del out["format"]
    out["description"] = " ".join(filter(None, [out.get("description"), f"(format: {fmt})"]))
