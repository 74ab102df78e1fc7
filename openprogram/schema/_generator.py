"""pydantic's JSON Schema generator, saying what its validators check where JSON Schema can.

In a few places pydantic's schema admits values its own validator refuses, so
a model reading the schema (or ``openprogram.testing.example_value``) writes
arguments the tool then rejects. :class:`JsonSchemaGenerator` narrows those
schemas, so every value they admit is one the validator accepts:

- ``Decimal``: the string form only in decimal notation; ``max_digits`` and
  ``decimal_places`` as a pattern, and on the number form as bounds and
  ``multipleOf``; no string form where bounds or ``multiple_of`` apply (a
  string cannot carry them).
- ``NaiveDatetime``: a pattern refusing an offset at the end (an RFC 3339
  ``date-time`` has one).
- ``FutureDate``, ``PastDate``, ``FutureDatetime``, ``PastDatetime``: the
  formats ``future-date``, ``past-date``, ``future-date-time`` and
  ``past-date-time`` (JSON Schema has no keyword relative to now; like
  pydantic's own ``uuid4`` or ``ipvanyaddress``, the format names it).
- ``complex``: a pattern of Python's complex notation.
- A ``str`` that strips whitespace and has a ``min_length``: a pattern with no
  whitespace at either end, where the length counts as the validator counts it.
"""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

__all__ = ["JsonSchemaGenerator", "decimal_pattern"]

# An exponent of up to six digits: the validator refuses one past the Decimal range.
_NUMBER = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,6})?"
_COMPLEX = rf"^[+-]?(?:{_NUMBER}(?:[+-](?:{_NUMBER})?j)?|(?:{_NUMBER})?j)$"
_NAIVE_TIME_END = r"[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?$"
_NO_SURROUNDING_SPACE = r"^\S(?:[\s\S]*\S)?$"
_NOW_FORMATS = {
    ("date", "future"): "future-date",
    ("date", "past"): "past-date",
    ("date-time", "future"): "future-date-time",
    ("date-time", "past"): "past-date-time",
}
_BOUNDS = ("gt", "ge", "lt", "le", "multiple_of")


def decimal_pattern(max_digits: int | None, decimal_places: int | None) -> str:
    """The decimal strings ``Decimal`` validation with these limits accepts (a subset).

    Without limits, any decimal or exponent notation; with them, no exponent
    (its digits cannot be counted by a pattern), at most ``max_digits`` digits
    in all and ``decimal_places`` after the point, leading and trailing zeros
    not counted (as the validator does not count them).
    """
    if max_digits is None and decimal_places is None:
        return rf"^[+-]?{_NUMBER}$"
    if max_digits is None:
        assert decimal_places is not None
        if decimal_places == 0:
            return r"^[+-]?[0-9]+(?:\.0*)?$"
        places = decimal_places
        return rf"^[+-]?(?:[0-9]+(?:\.[0-9]{{0,{places}}}0*)?|\.[0-9]{{1,{places}}}0*)$"
    whole = max_digits - (decimal_places or 0)
    forms = [rf"0*[0-9]{{1,{whole}}}(?:\.0*)?"] if whole > 0 else []
    if decimal_places is not None:
        if decimal_places > 0:
            forms.append(rf"0*[0-9]{{0,{whole}}}\.[0-9]{{1,{decimal_places}}}0*")
    else:  # every split of the digits between the two sides of the point
        forms += [
            rf"0*[0-9]{{0,{max_digits - places}}}\.[0-9]{{1,{places}}}0*"
            for places in range(1, max_digits + 1)
        ]
    return rf"^[+-]?(?:{'|'.join(forms)})$"


class JsonSchemaGenerator(GenerateJsonSchema):
    """pydantic's generator, with the narrower schemas the module docstring lists."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        if self.mode != "validation":
            return super().decimal_schema(schema)
        digits, places = schema.get("max_digits"), schema.get("decimal_places")
        number = self._decimal_number(schema, digits, places)
        if any(schema.get(key) is not None for key in _BOUNDS):
            return number  # a string cannot carry bounds
        string = {"type": "string", "pattern": decimal_pattern(digits, places)}
        return {"anyOf": [number, string]}

    def _decimal_number(
        self, schema: core_schema.DecimalSchema, digits: int | None, places: int | None
    ) -> JsonSchemaValue:
        def bound(key: str) -> float | None:
            value: Any = schema.get(key)
            return None if value is None else float(value)

        multiple = bound("multiple_of")
        if multiple is None and (places is not None or digits is not None):
            # max_digits alone cannot bound the places: the number form holds whole numbers.
            multiple = 10.0 ** -(places or 0)
        number = self.float_schema(
            core_schema.float_schema(
                multiple_of=multiple,
                gt=bound("gt"),
                ge=bound("ge"),
                lt=bound("lt"),
                le=bound("le"),
            )
        )
        if digits is not None:
            limit = 10.0 ** (digits - (places or 0))
            number["exclusiveMaximum"] = min(number.get("exclusiveMaximum", limit), limit)
            number["exclusiveMinimum"] = max(number.get("exclusiveMinimum", -limit), -limit)
        return number

    def datetime_schema(self, schema: core_schema.DatetimeSchema) -> JsonSchemaValue:
        out = self._now_relative(super().datetime_schema(schema), schema)
        if schema.get("tz_constraint") == "naive" and out.get("format") == "date-time":
            out["pattern"] = _NAIVE_TIME_END
        return out

    def date_schema(self, schema: core_schema.DateSchema) -> JsonSchemaValue:
        return self._now_relative(super().date_schema(schema), schema)

    def _now_relative(self, out: JsonSchemaValue, schema: Any) -> JsonSchemaValue:
        named = _NOW_FORMATS.get((str(out.get("format")), str(schema.get("now_op"))))
        if named is not None:
            out["format"] = named
        return out

    def complex_schema(self, schema: core_schema.ComplexSchema) -> JsonSchemaValue:
        return {"type": "string", "pattern": _COMPLEX}

    def str_schema(self, schema: core_schema.StringSchema) -> JsonSchemaValue:
        out = super().str_schema(schema)
        if schema.get("strip_whitespace") and out.get("minLength") and "pattern" not in out:
            out["pattern"] = _NO_SURROUNDING_SPACE
        return out
