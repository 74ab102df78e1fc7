"""Law: for every type the schema layer accepts, values generated from its schema validate.

``example_value`` (seeded, what ``SchemaProvider`` sends) and
``from_json_schema`` (Hypothesis) build values from a JSON Schema alone; a
model reading the schema has nothing else either. So the schema of each type
must admit only values its validator accepts: decimals in decimal notation
within their digits, naive datetimes without an offset, dates relative to
now, bytes counted as bytes, regexes that compile, UUID versions, network
types, JSON strings, patterns read the same by Python's and Rust's regex
engines. Each type is checked as a tool parameter (also inside a list and an
optional) and as a ``response_format``.

``GAPS`` lists what no JSON Schema keyword can say, and why.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import ipaddress
import json
import pathlib
import re
import uuid
from typing import Annotated, Any, Literal

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import Field
from typing_extensions import TypedDict

from openprogram.schema import ArgumentsError, derive_schema
from openprogram.structured import output_schema
from openprogram.testing import example_value
from openprogram.testing.strategies import from_json_schema


class Shade(enum.Enum):
    LIGHT = "light"
    DARK = "dark"


@dataclasses.dataclass
class Payment:
    amount: pydantic.condecimal(max_digits=7, decimal_places=2)  # type: ignore[valid-type]
    due: pydantic.FutureDate
    reference: Annotated[str, Field(pattern=r"^\w+-\d{2,4}$")]


class Booking(TypedDict):
    at: pydantic.NaiveDatetime
    seats: pydantic.conint(ge=1, le=9)  # type: ignore[valid-type]


TYPES: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "Literal": Literal["a", 1, None],
    "Enum": Shade,
    "Decimal": decimal.Decimal,
    "condecimal(max_digits, decimal_places)": pydantic.condecimal(max_digits=5, decimal_places=2),
    "condecimal(max_digits)": pydantic.condecimal(max_digits=4),
    "condecimal(decimal_places)": pydantic.condecimal(decimal_places=1),
    "condecimal(ge, le)": pydantic.condecimal(ge=0, le=10),
    "Decimal multiple_of": Annotated[decimal.Decimal, Field(multiple_of=decimal.Decimal("0.5"))],
    "float multiple_of": Annotated[float, Field(multiple_of=0.1)],
    "conint": pydantic.conint(gt=3, lt=99, multiple_of=3),
    "confloat": pydantic.confloat(gt=0, lt=1),
    "bytes": bytes,
    "conbytes": pydantic.conbytes(min_length=2, max_length=4),
    "constr pattern": pydantic.constr(min_length=2, max_length=6, pattern=r"^[a-z]+$"),
    "constr strip": pydantic.constr(strip_whitespace=True, min_length=2),
    "word pattern": Annotated[str, Field(pattern=r"^\w+$")],
    "complex": complex,
    "datetime": datetime.datetime,
    "date": datetime.date,
    "time": datetime.time,
    "timedelta": datetime.timedelta,
    "NaiveDatetime": pydantic.NaiveDatetime,
    "AwareDatetime": pydantic.AwareDatetime,
    "FutureDate": pydantic.FutureDate,
    "PastDate": pydantic.PastDate,
    "FutureDatetime": pydantic.FutureDatetime,
    "PastDatetime": pydantic.PastDatetime,
    "re.Pattern": re.Pattern,
    "UUID": uuid.UUID,
    "UUID1": pydantic.UUID1,
    "UUID4": pydantic.UUID4,
    "Path": pathlib.Path,
    "IPv4Address": ipaddress.IPv4Address,
    "IPv6Address": ipaddress.IPv6Address,
    "IPvAnyAddress": pydantic.IPvAnyAddress,
    "IPv4Network": ipaddress.IPv4Network,
    "IPv6Interface": ipaddress.IPv6Interface,
    "IPvAnyNetwork": pydantic.IPvAnyNetwork,
    "AnyUrl": pydantic.AnyUrl,
    "HttpUrl": pydantic.HttpUrl,
    "SecretStr": pydantic.SecretStr,
    "Json": pydantic.Json[list[int]],
    "Base64Bytes": pydantic.Base64Bytes,
    "Base64Str": pydantic.Base64Str,
    "set": set[int],
    "tuple": tuple[int, str],
    "dict": dict[str, float],
    "dataclass": Payment,
    "TypedDict": Booking,
}

GAPS = {
    "ByteSize": "pydantic's own schema takes any word as the unit (`\\w+`); only some are units",
    "condate, condatetime": "JSON Schema has no bound on a date (`gt=` a date is not shown)",
    "FilePath, DirectoryPath, NewPath": "valid values depend on the files of the machine",
    "PostgresDsn and the other DSNs": "the scheme each accepts is not in its schema",
    "EmailStr": "needs the email-validator package, which is not a dependency",
}
"""Types the schema layer accepts whose generated values may still be refused."""

SEEDS = range(12)
EXAMPLES = settings(
    max_examples=15,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _tool(tp: Any) -> Any:
    namespace: dict[str, Any] = {"T": tp}
    exec("def tool(value: T, values: list[T], maybe: T | None = None):\n    'Tool.'\n", namespace)
    return derive_schema(namespace["tool"])


def _accepts(schema: Any, arguments: Any) -> None:
    try:
        schema.validate(arguments)
    except ArgumentsError as exc:
        raise AssertionError(f"{json.dumps(arguments)} was refused: {exc.violations}") from None


@pytest.mark.parametrize("tp", TYPES.values(), ids=TYPES.keys())
def test_example_values_of_every_parameter_type_validate(tp: Any) -> None:
    schema = _tool(tp)
    for seed in SEEDS:
        _accepts(schema, example_value(schema.parameters, seed=seed))


@pytest.mark.parametrize("tp", TYPES.values(), ids=TYPES.keys())
def test_drawn_values_of_every_parameter_type_validate(tp: Any) -> None:
    schema = _tool(tp)

    @EXAMPLES
    @given(from_json_schema(schema.parameters))
    def check(arguments: dict[str, Any]) -> None:
        _accepts(schema, arguments)

    check()


@pytest.mark.parametrize("tp", TYPES.values(), ids=TYPES.keys())
def test_generated_answers_of_every_response_type_validate(tp: Any) -> None:
    out = output_schema(tp)
    for seed in SEEDS:
        out.validate(out.unwrap(example_value(out.wire_schema, seed=seed)))

    @EXAMPLES
    @given(from_json_schema(out.wire_schema))
    def check(answer: Any) -> None:
        out.validate(out.unwrap(answer))

    check()


DECIMAL_STRINGS = [
    "0", "7", "-12.5", "+0.50", "001.20", ".5", "5.", "1e3", "1E-7", "0E1000000000000000000",
    "12345", "1234.5", "123.45", "99.999", "0.001", "1.2.3", "", "-", ".", "NaN", "1_000",
]  # fmt: skip


@pytest.mark.parametrize(
    ("digits", "places"), [(None, None), (5, 2), (4, None), (None, 1), (3, 0), (2, 2)]
)
def test_every_decimal_string_the_schema_admits_is_a_valid_decimal(
    digits: int | None, places: int | None
) -> None:
    tp = pydantic.condecimal(max_digits=digits, decimal_places=places)
    [number, string] = _tool(tp).parameters["properties"]["value"]["anyOf"]
    assert number["type"] == "number"
    admitted = [s for s in DECIMAL_STRINGS if re.search(string["pattern"], s)]
    assert "0" in admitted or digits == places
    validator = pydantic.TypeAdapter(tp)
    for text in admitted:
        validator.validate_json(json.dumps(text), strict=True)
