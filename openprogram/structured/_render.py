"""Compact, unambiguous text for JSON Schemas, as a model reads them in a decision menu.

``{"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}``
renders as ``n: integer (>= 1)``: shorter than the schema, no less precise for
the shapes tool signatures use. Whatever has no compact form (a recursive
reference past a few levels, unknown keywords) falls back to compact JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["render_params", "render_type"]

_MAX_DEPTH = 4
_PRIMITIVES = ("string", "integer", "number", "boolean", "null")
_CONSTRAINTS = (
    ("minimum", ">="),
    ("maximum", "<="),
    ("exclusiveMinimum", ">"),
    ("exclusiveMaximum", "<"),
    ("multipleOf", "multiple of"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("pattern", "pattern"),
    ("format", "format"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
)


def render_params(schema: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Render an object schema's properties as a signature and per-argument notes.

    Returns:
        ``("amount: integer, note?: string", ["amount: Amount in cents."])`` — the
        signature (``?`` marks optional arguments) and one note per described argument.
    """
    defs = _defs(schema)
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts, notes = [], []
    for name, prop in props.items():
        mark = "" if name in required else "?"
        parts.append(f"{_key(name)}{mark}: {render_type(prop, defs)}")
        described = _description(prop, defs)
        if described:
            notes.append(f"{_key(name)}: {described}")
    return ", ".join(parts), notes


def render_type(schema: Any, defs: Mapping[str, Any] | None = None, depth: int = 0) -> str:
    """The compact type of one schema, e.g. ``"celsius" | "fahrenheit"`` or ``integer[]``."""
    defs = defs if defs is not None else _defs(schema)
    if not isinstance(schema, Mapping):
        return "any" if schema is True else "never"
    if depth > _MAX_DEPTH:
        return json.dumps(schema, separators=(",", ":"))
    if "$ref" in schema:
        return _ref(str(schema["$ref"]), defs, depth)
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return " | ".join(json.dumps(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(render_type(s, defs, depth + 1) for s in schema[key])
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return render_type(schema["allOf"][0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(render_type({**schema, "type": k}, defs, depth) for k in kind)
    if kind == "array":
        return _array(schema, defs, depth)
    if kind == "object" or "properties" in schema:
        return _object(schema, defs, depth)
    if kind in _PRIMITIVES:
        return str(kind) + _constraints(schema)
    return "any"


def _array(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> str:
    items = schema.get("items")
    if isinstance(schema.get("prefixItems"), list):
        inner = ", ".join(render_type(s, defs, depth + 1) for s in schema["prefixItems"])
        return f"[{inner}]{_constraints(schema)}"
    item = render_type(items, defs, depth + 1) if items is not None else "any"
    if " " in item and not item.startswith("{"):
        item = f"({item})"
    unique = " (unique)" if schema.get("uniqueItems") else ""
    return f"{item}[]{unique}{_constraints(schema)}"


def _object(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> str:
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if props:
        required = set(schema.get("required") or ())
        fields = ", ".join(
            f"{_key(k)}{'' if k in required else '?'}: {render_type(v, defs, depth + 1)}"
            for k, v in props.items()
        )
        return f"{{{fields}}}"
    if isinstance(extra, Mapping):
        return f"{{[key: string]: {render_type(extra, defs, depth + 1)}}}"
    return "object"


def _ref(ref: str, defs: Mapping[str, Any], depth: int) -> str:
    name = ref.rsplit("/", 1)[-1]
    target = defs.get(name)
    if target is None or depth >= _MAX_DEPTH - 1:
        return name  # unknown or deeply recursive: the definition's name is the best short form
    return render_type(target, defs, depth + 1)


def _constraints(schema: Mapping[str, Any]) -> str:
    found = [f"{label} {json.dumps(schema[key])}" for key, label in _CONSTRAINTS if key in schema]
    return f" ({', '.join(found)})" if found else ""


def _description(prop: Any, defs: Mapping[str, Any]) -> str:
    if not isinstance(prop, Mapping):
        return ""
    text = prop.get("description")
    if not text and "$ref" in prop:
        target = defs.get(str(prop["$ref"]).rsplit("/", 1)[-1])
        text = target.get("description") if isinstance(target, Mapping) else None
    return " ".join(str(text).split()) if text else ""


def _key(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name)


def _defs(schema: Any) -> Mapping[str, Any]:
    if not isinstance(schema, Mapping):
        return {}
    found = schema.get("$defs") or schema.get("definitions") or {}
    return found if isinstance(found, Mapping) else {}
