"""JSON Schema keyword rules the value walker relies on: merging, bounds, equality.

Kept apart from the walker (``_json_values``) so each stays small; nothing
here makes a choice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "FORMATS",
    "FORMAT_VARIANTS",
    "TYPES",
    "UnsupportedSchemaError",
    "bounds",
    "canonical",
    "flat",
    "inferred_types",
    "merge",
    "recursive",
    "within",
]

TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
"""Every JSON Schema type."""


class UnsupportedSchemaError(ValueError):
    """The schema uses a keyword the value generator does not cover (named in the message)."""


FORMATS: dict[str, tuple[str, ...]] = {
    "date-time": ("2024-05-17T09:30:00Z", "1999-12-31T23:59:59+01:00"),
    "date": ("2024-05-17", "1999-12-31"),
    "time": ("09:30:00", "23:59:59"),
    "email": ("user@example.com", "a.b@example.org"),
    "uri": ("https://example.com/", "https://example.org/a/b?c=1"),
    "uri-reference": ("https://example.com/", "/a/b"),
    "hostname": ("example.com", "api.example.org"),
    "ipv4": ("192.0.2.1", "198.51.100.7"),
    "ipv6": ("2001:db8::1", "::1"),
    "duration": ("P1D", "PT1H30M"),
    "regex": ("^[a-z]+$", r"\d{3}-\d{4}"),
    "ipvanyaddress": ("192.0.2.1", "2001:db8::1"),
    "ipvanyinterface": ("192.0.2.1/24", "2001:db8::1/64"),
    "ipvanynetwork": ("192.0.2.0/24", "2001:db8::/32"),
    "ipv4network": ("192.0.2.0/24", "10.0.0.0/8"),
    "ipv6network": ("2001:db8::/32", "fd00::/8"),
    "ipv4interface": ("192.0.2.1/24", "10.1.2.3/8"),
    "ipv6interface": ("2001:db8::1/64", "fd00::1/8"),
    "base64": ("aGVsbG8=", "b3BlbnByb2dyYW0="),
    "base64url": ("aGVsbG8=", "b3BlbnByb2dyYW0="),
    # openprogram's names for dates relative to now (schema/_generator.py)
    "future-date": ("2999-12-31", "2500-06-15"),
    "past-date": ("1999-12-31", "1970-01-01"),
    "future-date-time": ("2999-12-31T23:59:59Z", "2500-06-15T09:30:00+02:00"),
    "past-date-time": ("1999-12-31T23:59:59Z", "2001-02-03T04:05:06+01:00"),
}
"""Formats pydantic and openprogram emit (and validate), each with valid sample values.

``uuid`` and its versions are generated (``_json_scalars``); ``binary`` is
ASCII text; a format not listed gets plain text.
"""

FORMAT_VARIANTS: dict[str, tuple[str, ...]] = {
    "date-time": ("2024-05-17T09:30:00", "1999-12-31 23:59:59.5"),
}
"""Other forms validators accept for a format, offered only where a ``pattern`` picks them
(a naive date-time has no offset, which the RFC 3339 ``date-time`` requires)."""


def within(value: float, low: float | None, high: float | None, ol: bool, oh: bool) -> bool:
    if low is not None and (value < low or (ol and value == low)):
        return False
    return high is None or not (value > high or (oh and value == high))


def canonical(value: Any) -> str:
    """Equality as JSON Schema sees it (``1 == 1.0``, ``true != 1``) for ``uniqueItems``."""

    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None:
            return [type(v).__name__, v]
        if isinstance(v, int | float):
            return ["n", float(v)]
        if isinstance(v, list):
            return ["a", [norm(x) for x in v]]
        if isinstance(v, dict):
            return ["o", sorted((k, norm(x)) for k, x in v.items())]
        return ["s", v]

    return json.dumps(norm(value))


def bounds(node: Mapping[str, Any]) -> tuple[tuple[float, bool] | None, tuple[float, bool] | None]:
    """``((low, exclusive), (high, exclusive))``, the tighter of plain and exclusive forms."""
    low: tuple[float, bool] | None = None
    high: tuple[float, bool] | None = None
    if "minimum" in node:
        low = (node["minimum"], False)
    if "exclusiveMinimum" in node and not isinstance(node["exclusiveMinimum"], bool):
        bound = node["exclusiveMinimum"]
        if low is None or bound >= low[0]:
            low = (bound, True)
    if "maximum" in node:
        high = (node["maximum"], False)
    if "exclusiveMaximum" in node and not isinstance(node["exclusiveMaximum"], bool):
        bound = node["exclusiveMaximum"]
        if high is None or bound <= high[0]:
            high = (bound, True)
    return low, high


def flat(
    low: tuple[float, bool] | None, high: tuple[float, bool] | None
) -> tuple[float | None, float | None, bool, bool]:
    return (
        None if low is None else low[0],
        None if high is None else high[0],
        bool(low and low[1]),
        bool(high and high[1]),
    )


def inferred_types(node: Mapping[str, Any]) -> list[str]:
    """The types a schema without ``type`` constrains, else every type."""
    hints = (
        ("object", ("properties", "required", "additionalProperties", "propertyNames")),
        ("array", ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")),
        ("string", ("minLength", "maxLength", "pattern", "format")),
        ("number", ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")),
    )
    found = [kind for kind, keys in hints if any(k in node for k in keys)]
    return found or list(TYPES)


def recursive(node: Any) -> bool:
    """Whether a schema mentions ``$ref`` anywhere (may recurse): avoided past ``max_depth``."""
    if isinstance(node, Mapping):
        return "$ref" in node or any(recursive(v) for v in node.values())
    if isinstance(node, list):
        return any(recursive(v) for v in node)
    return False


_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly",
     "$comment", "$schema", "$id", "$defs", "definitions", "discriminator"}
)  # fmt: skip


_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")


_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")


def merge(a: Mapping[str, Any], b: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Both schemas at once (``allOf``, ``$ref`` with siblings, a branch with its parent)."""
    out = dict(a)
    for key, value in b.items():
        if key in _ANNOTATIONS or key not in out:
            out.setdefault(key, value)
        elif key in _LOWER_BOUNDS:
            out[key] = max(out[key], value)
        elif key in _UPPER_BOUNDS:
            out[key] = min(out[key], value)
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "properties":
            merged = dict(out[key])
            for name, sub in value.items():
                merged[name] = {"allOf": [merged[name], sub]} if name in merged else sub
            out[key] = merged
        elif key == "type":
            out[key] = _common_types(out[key], value, where)
        elif key == "enum":
            out[key] = [v for v in out[key] if v in value]
        elif key == "allOf":
            out[key] = [*out[key], *value]
        elif out[key] != value:
            raise UnsupportedSchemaError(f"{where}: cannot merge two different {key!r} values")
    return out


def _common_types(a: Any, b: Any, where: str) -> list[str]:
    left = [a] if isinstance(a, str) else list(a)
    right = [b] if isinstance(b, str) else list(b)
    common = [t for t in left if t in right or (t == "integer" and "number" in right)]
    common += [t for t in right if t == "integer" and "number" in left and t not in common]
    if not common:
        raise UnsupportedSchemaError(f"{where}: the merged schemas share no type")
    return common
