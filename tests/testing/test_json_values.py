"""Valid JSON values for JSON Schemas: ``example_value`` (seeded) and ``from_json_schema``.

Every keyword the generator claims to cover is exercised by a schema below;
each value is checked with ``jsonschema`` (and, for pydantic-made schemas, by
pydantic itself, which also checks ``format``).
"""

from __future__ import annotations

import datetime
import json
import uuid
from typing import Annotated, Any, Literal

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings

from openprogram.testing import UnsupportedSchemaError, example_value
from openprogram.testing.strategies import from_json_schema

SCHEMAS: dict[str, dict[str, Any]] = {
    "pattern": {"type": "string", "pattern": r"^[A-Z]{2}-\d{3,4}(x|yz)?$"},
    "pattern_and_length": {"type": "string", "pattern": r"[a-c]+", "minLength": 5, "maxLength": 9},
    "negated_class": {"type": "string", "pattern": r"^[^aeiou\s]{3}$"},
    "exclusive_bounds": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "integer_bounds": {"type": "integer", "exclusiveMinimum": 3, "maximum": 5},
    "float_multiple": {"type": "number", "multipleOf": 0.25, "minimum": -2, "maximum": 2},
    "integer_multiple": {"type": "integer", "multipleOf": 7, "minimum": 10, "maximum": 40},
    "type_list": {"type": ["string", "null"], "maxLength": 3},
    "const": {"const": {"a": [1, 2]}},
    "enum_filtered_by_type": {"type": "string", "enum": ["a", 1, None, "b"]},
    "unique_items": {
        "type": "array",
        "items": {"enum": ["x", "y", "z"]},
        "uniqueItems": True,
        "minItems": 2,
    },
    "prefix_items": {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": False,
        "minItems": 2,
    },
    "map_with_names": {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "propertyNames": {"pattern": "^k[0-9]$"},
        "minProperties": 1,
        "maxProperties": 3,
    },
    "all_of": {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
            {"properties": {"a": {"minimum": 10}, "b": {"type": "string"}}, "required": ["b"]},
        ]
    },
    "ref_with_siblings": {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P", "description": "a P"}},
        "required": ["p"],
        "additionalProperties": False,
        "$defs": {"P": {"type": "integer", "minimum": 100}},
    },
    "recursive": {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]},
                },
                "required": ["name", "children", "next"],
            }
        },
    },
    "any_value": {},
    "one_of_overlapping": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
}


class Cat(pydantic.BaseModel):
    kind: Literal["cat"]
    lives: Annotated[int, pydantic.Field(ge=1, le=9)]


class Dog(pydantic.BaseModel):
    kind: Literal["dog"]
    good: bool


class Visit(pydantic.BaseModel):
    pet: Annotated[Cat | Dog, pydantic.Field(discriminator="kind")]
    at: datetime.datetime
    day: datetime.date
    ticket: uuid.UUID
    site: pydantic.AnyUrl
    notes: dict[str, list[float]] = {}
    code: Annotated[str, pydantic.Field(pattern=r"^V\d{4}$")] = "V0000"


PYDANTIC = pydantic.TypeAdapter(Visit)
SCHEMAS["pydantic_formats_and_discriminator"] = PYDANTIC.json_schema()


def _check(name: str, value: Any) -> None:
    jsonschema.validate(value, SCHEMAS[name], cls=jsonschema.Draft202012Validator)
    if name == "pydantic_formats_and_discriminator":
        PYDANTIC.validate_python(value)  # pydantic checks the formats jsonschema skips
    if name == "one_of_overlapping":
        assert isinstance(value, float) or value < 0  # an int >= 0 would match both branches


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_example_values_are_valid_for_many_seeds(name: str) -> None:
    for seed in range(40):
        _check(name, example_value(SCHEMAS[name], seed=seed))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_example_value_is_deterministic(name: str) -> None:
    assert example_value(SCHEMAS[name], seed=7) == example_value(SCHEMAS[name], seed=7)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_strategy_values_are_valid(name: str) -> None:
    @settings(
        max_examples=40,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    @given(from_json_schema(SCHEMAS[name]))
    def check(value: Any) -> None:
        _check(name, value)

    check()


def test_recursion_ends_and_still_nests_a_little() -> None:
    depths = set()
    for seed in range(20):
        value = example_value(SCHEMAS["recursive"], seed=seed)
        depth = 0
        while value["next"] is not None:
            value, depth = value["next"], depth + 1
        depths.add(depth)
    assert max(depths) >= 1


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"not": {"type": "string"}}, "'not' is not supported"),
        ({"type": "object", "patternProperties": {"^a": {}}}, "'patternProperties'"),
        ({"$ref": "https://example.com/s.json"}, "only local $ref"),
        ({"$ref": "#/$defs/Missing"}, "points nowhere"),
        (False, "admits no value"),
        ({"type": "string", "minLength": 5, "maxLength": 2}, "minLength > maxLength"),
        ({"type": "string", "pattern": "(?=a)b"}, "not supported by the sampler"),
    ],
)
def test_what_cannot_be_generated_is_said_clearly(schema: Any, message: str) -> None:
    with pytest.raises(UnsupportedSchemaError) as err:
        example_value(schema)
    assert message in str(err.value)


def test_multiples_are_written_as_validators_read_them() -> None:
    """Rounded to the step's places and near enough to zero for pydantic's float check."""
    schema = {"type": "number", "multipleOf": 0.1}
    tenths = pydantic.TypeAdapter(Annotated[float, pydantic.Field(multiple_of=0.1)])

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(from_json_schema(schema))
    def check(value: float) -> None:
        assert abs(value) <= 10**6
        assert value == round(value, 1)
        jsonschema.validate(value, schema)
        tenths.validate_json(json.dumps(value), strict=True)

    check()
