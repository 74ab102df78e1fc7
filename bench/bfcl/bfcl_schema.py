"""BFCL function docs → JSON Schema tool specs, and model calls → BFCL's answer format.

BFCL writes parameter types in its own vocabulary ("dict", "float", "tuple",
"any", ...). Tools offered to a model need JSON Schema, so every type is
mapped the way BFCL's own OpenAI-style handlers map it (facts read from
``bfcl_eval/constants/type_mappings.py`` and ``model_handler/utils.py``):
"dict" → object, "float" → number, "tuple" → array, unknown or missing →
string. One deliberate difference: "any" has no ``type`` here (any JSON
value), where BFCL's handlers say string.

Function names with dots (``math.factorial``) are not valid tool names
(``^[a-zA-Z0-9_-]{1,64}$``), so dots become underscores, as BFCL's handlers
do; the checker is told so (``underscore_to_dot``) and compares accordingly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["TYPE_MAP", "bfcl_answer", "json_schema", "tool_name", "tool_spec"]

TYPE_MAP: dict[str, str | None] = {
    "string": "string",
    "str": "string",
    "char": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "byte": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "dict": "object",
    "object": "object",
    "any": None,  # no constraint: any JSON value
}

# BFCL's own keys that are not JSON Schema keywords (``optional`` lists parameters).
_NOT_SCHEMA = frozenset({"optional"})


def tool_name(name: str) -> str:
    """A BFCL function name as a valid tool name (dots → underscores)."""
    return re.sub(r"\.", "_", name)


def json_schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL parameter (or parameters object) as valid JSON Schema, recursively."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _NOT_SCHEMA:
            continue
        if key == "type":
            mapped = _map_type(value)
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, Mapping):
            out["properties"] = {k: json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, Mapping):
            out[key] = json_schema(value)
        else:
            out[key] = value
    if "type" not in node:
        out["type"] = "string"  # as BFCL's handlers: an untyped parameter is a string
    if node.get("type") == "float" and isinstance(node.get("description"), str):
        out["description"] = f"{node['description']} This is a float type value."
    return out


def _map_type(value: Any) -> str | None:
    if isinstance(value, str):
        return TYPE_MAP.get(value, "string")
    return "string"  # BFCL never writes a list of types; anything odd falls back like theirs


def tool_spec(function: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL function doc as a provider-neutral tool spec (name, description, parameters)."""
    params = json_schema(function.get("parameters") or {"type": "dict", "properties": {}})
    params["type"] = "object"
    params.setdefault("properties", {})
    return {
        "name": tool_name(str(function["name"])),
        "description": str(function.get("description") or function["name"]),
        "parameters": params,
    }


def bfcl_answer(calls: Sequence[tuple[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    """Model calls as BFCL's decoded format: ``[{name: {param: value}}, ...]``.

    Arguments given as a JSON string are parsed; arguments that are not a
    JSON object become ``{}`` (the checker then reports the missing params).
    """
    answer: list[dict[str, dict[str, Any]]] = []
    for name, arguments in calls:
        args = arguments
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except json.JSONDecodeError:
                args = {}
        answer.append({name: dict(args) if isinstance(args, Mapping) else {}})
    return answer
