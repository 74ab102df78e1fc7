"""Provider schema dialects: OpenAI strict mode and Gemini's OpenAPI subset."""

from __future__ import annotations

import copy
from typing import Any

from openprogram.providers._schema import gemini_schema, openai_strict, strip_strict_nulls

NESTED: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Item": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "qty": {"type": "integer", "default": 1}},
            "required": ["name"],
        }
    },
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "owner": {"$ref": "#/$defs/Item", "description": "Who."},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        "mode": {"const": "fast"},
    },
    "required": ["items"],
}


def test_strict_requires_everything_and_makes_optional_fields_nullable() -> None:
    original = copy.deepcopy(NESTED)
    strict = openai_strict(NESTED)
    assert original == NESTED  # the input is never modified
    assert strict is not None
    assert strict["required"] == ["items", "owner", "tags", "mode"]
    assert strict["additionalProperties"] is False
    assert strict["properties"]["owner"] == {
        "anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}],
        "description": "Who.",
    }
    assert strict["properties"]["tags"]["type"] == ["array", "null"]
    assert strict["properties"]["mode"] == {"anyOf": [{"const": "fast"}, {"type": "null"}]}
    item = strict["$defs"]["Item"]
    assert item["required"] == ["name", "qty"]
    assert item["additionalProperties"] is False
    assert item["properties"]["qty"] == {"type": ["integer", "null"]}


def test_strict_is_refused_for_open_mappings_and_non_objects() -> None:
    assert openai_strict({"type": "object", "additionalProperties": True}) is None
    assert openai_strict({"type": "object", "properties": {"x": {"type": "object"}}}) is None
    assert openai_strict({"type": "array", "items": {"type": "string"}}) is None
    assert openai_strict({"type": "object"}) == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_gemini_inlines_refs_and_keeps_only_its_keywords() -> None:
    out = gemini_schema(NESTED)
    item = {
        "type": "OBJECT",
        "properties": {"name": {"type": "STRING"}, "qty": {"type": "INTEGER"}},
        "required": ["name"],
    }
    assert out == {
        "type": "OBJECT",
        "properties": {
            "items": {"type": "ARRAY", "items": item},
            "owner": {**item, "description": "Who."},
            "tags": {"type": "ARRAY", "nullable": True, "items": {"type": "STRING"}},
            "mode": {"type": "STRING", "enum": ["fast"]},
        },
        "required": ["items"],
    }


def test_gemini_stops_at_recursion_and_handles_unions() -> None:
    tree = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "properties": {
            "root": {"$ref": "#/$defs/Node"},
            "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            "flag": {"type": "boolean", "exclusiveMinimum": 0, "title": "Flag"},
        },
    }
    out = gemini_schema(tree)
    children = out["properties"]["root"]["properties"]["children"]
    assert children["items"] == {"type": "OBJECT", "description": "(recursive Node)"}
    assert out["properties"]["either"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}
    assert out["properties"]["flag"] == {"type": "BOOLEAN"}


def test_strip_strict_nulls_is_the_inverse_on_values() -> None:
    value = {"items": [{"name": "a", "qty": None}], "owner": None, "tags": None, "mode": None}
    assert strip_strict_nulls(value, NESTED) == {"items": [{"name": "a"}], "tags": None}
    required_null = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    assert strip_strict_nulls({"x": None}, required_null) == {"x": None}  # a real error: kept
