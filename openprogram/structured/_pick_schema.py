"""The JSON Schema of a decision's pick (``DecisionMenu.pick_schema``).

A pick written as the whole reply is one object per option: ``{"call": name}``
plus ``"args"`` when the option takes arguments. An option's arguments schema
may define types in ``$defs`` (a pydantic model with a nested model, say), and
a local ``$ref`` like ``#/$defs/Item`` resolves against the document root, so
nested under ``anyOf`` it would point nowhere. Every option's definitions move
to the root, renamed when two options define the same name differently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from openprogram.structured._choices import Choice

__all__ = ["pick_schema"]

_DATA_KEYS = frozenset({"default", "enum", "const", "examples"})
"""Keys whose values are data, never schemas: a ``$ref`` inside them is not a reference."""


def pick_schema(choices: Iterable[Choice]) -> dict[str, Any]:
    """JSON Schema of a pick written as the whole reply: one object per option."""
    picks = []
    defs: dict[str, Any] = {}
    for choice in choices:
        params = _hoisted(choice.parameters, defs)
        pick: dict[str, Any] = {
            "type": "object",
            "properties": {"call": {"const": choice.name}},
            "description": choice.description,
            "required": ["call"],
            "additionalProperties": False,
        }
        if params.get("properties"):
            pick["properties"]["args"] = params
            if params.get("required"):
                pick["required"].append("args")
        picks.append(pick)
    return {"anyOf": picks, "$defs": defs} if defs else {"anyOf": picks}


def _hoisted(params: Mapping[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``params`` without its definitions, which go to ``defs`` (references rewritten)."""
    own = {**params.get("definitions", {}), **params.get("$defs", {})}
    rest = {k: v for k, v in params.items() if k not in ("$defs", "definitions")}
    if not own:
        return rest
    names: dict[str, str] = {}
    for name in own:
        new, n = name, 2
        while new in defs or new in names.values():
            new, n = f"{name}_{n}", n + 1
        names[name] = new
    for name, body in own.items():
        defs[names[name]] = _renamed(body, names)
    renamed: dict[str, Any] = _renamed(rest, names)
    return renamed


def _renamed(node: Any, names: Mapping[str, str]) -> Any:
    """``node`` with its local references to ``names`` pointing at their new names."""
    if isinstance(node, list):
        return [_renamed(x, names) for x in node]
    if not isinstance(node, Mapping):
        return node
    out = {k: (v if k in _DATA_KEYS else _renamed(v, names)) for k, v in node.items()}
    ref = node.get("$ref")
    if isinstance(ref, str):
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix) and ref[len(prefix) :] in names:
                out["$ref"] = f"#/$defs/{names[ref[len(prefix) :]]}"
    return out
